//! Real bubblewrap runs: every test starts actual sandboxed processes.

use std::path::{Path, PathBuf};

use super::*;

struct Run {
    code: Option<i32>,
    output: String,
}

async fn run(policy: &SandboxPolicy, cwd: &Path, script: &str) -> Run {
    let argv = vec!["bash".to_owned(), "-c".to_owned(), script.to_owned()];
    let prepared = prepare_command(policy, select_sandbox(policy), cwd, &argv, true).unwrap();
    let child = spawn_prepared(&prepared, cwd, &[], ChildStdio::Pipes).unwrap();
    drop(prepared);
    let out = child.wait_with_output().await.unwrap();
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Run {
        code: out.status.code(),
        output,
    }
}

fn isolated_workspace_policy(extra_deny: Vec<PathBuf>) -> SandboxPolicy {
    SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite {
            writable_roots: Vec::new(),
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        },
        network_access: false,
        deny_read: extra_deny,
    }
}

#[tokio::test]
async fn workspace_write_allows_inside_and_blocks_outside_and_git() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    let policy = isolated_workspace_policy(Vec::new());

    let inside = run(&policy, ws.path(), "echo hi > inside.txt").await;
    assert_eq!(inside.code, Some(0), "{}", inside.output);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt")).unwrap(),
        "hi\n"
    );

    let target = outside.path().join("x.txt");
    let denied = run(
        &policy,
        ws.path(),
        &format!("echo hi > {}", target.display()),
    )
    .await;
    assert_ne!(denied.code, Some(0));
    assert!(
        denied.output.contains("Read-only file system"),
        "{}",
        denied.output
    );
    assert!(!target.exists());
    assert!(is_likely_sandbox_denied(
        SandboxType::LinuxBwrap,
        denied.code,
        None,
        &denied.output
    ));

    let git = run(&policy, ws.path(), "echo x > .git/config").await;
    assert_ne!(git.code, Some(0), "{}", git.output);
    assert!(!ws.path().join(".git/config").exists());
}

#[tokio::test]
async fn read_only_blocks_all_writes() {
    let ws = tempfile::tempdir().unwrap();
    let result = run(&SandboxPolicy::read_only(), ws.path(), "touch a").await;
    assert_ne!(result.code, Some(0));
    assert!(!ws.path().join("a").exists());
}

#[tokio::test]
async fn network_is_cut_when_off_and_works_when_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = tempfile::tempdir().unwrap();
    let script = format!("echo ping > /dev/tcp/127.0.0.1/{port} && echo connected");

    let off = run(&isolated_workspace_policy(Vec::new()), ws.path(), &script).await;
    assert_ne!(off.code, Some(0), "{}", off.output);
    assert!(!off.output.contains("connected"));

    let mut on_policy = isolated_workspace_policy(Vec::new());
    on_policy.network_access = true;
    let on = run(&on_policy, ws.path(), &script).await;
    assert_eq!(on.code, Some(0), "{}", on.output);
    assert!(on.output.contains("connected"));
}

#[tokio::test]
async fn seccomp_denies_inet_sockets_but_allows_unix_sockets() {
    let ws = tempfile::tempdir().unwrap();
    let policy = isolated_workspace_policy(Vec::new());
    let inet = run(
        &policy,
        ws.path(),
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)'",
    )
    .await;
    assert_ne!(inet.code, Some(0));
    assert!(
        inet.output.contains("Operation not permitted"),
        "{}",
        inet.output
    );
    let unix = run(
        &policy,
        ws.path(),
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'",
    )
    .await;
    assert_eq!(unix.code, Some(0), "{}", unix.output);
    assert!(unix.output.contains("b'x'"));
}

#[tokio::test]
async fn denied_read_paths_are_unreadable() {
    let ws = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let secret_file = secrets.path().join("token.txt");
    std::fs::write(&secret_file, "s3cret").unwrap();
    let secret_dir = secrets.path().join("keys");
    std::fs::create_dir(&secret_dir).unwrap();
    std::fs::write(secret_dir.join("id"), "k3y").unwrap();
    let policy = isolated_workspace_policy(vec![secret_file.clone(), secret_dir.clone()]);

    let file = run(
        &policy,
        ws.path(),
        &format!("cat {}", secret_file.display()),
    )
    .await;
    assert_ne!(file.code, Some(0));
    assert!(!file.output.contains("s3cret"));
    assert!(file.output.contains("Permission denied"), "{}", file.output);
    let dir = run(
        &policy,
        ws.path(),
        &format!(
            "cat {}/id; ls {}",
            secret_dir.display(),
            secret_dir.display()
        ),
    )
    .await;
    assert!(!dir.output.contains("k3y"));
    assert!(dir.output.contains("Permission denied"), "{}", dir.output);
    // The real files are untouched.
    assert_eq!(std::fs::read_to_string(&secret_file).unwrap(), "s3cret");
}

#[tokio::test]
async fn danger_full_access_with_network_is_not_wrapped() {
    let policy = SandboxPolicy::danger_full_access();
    assert_eq!(select_sandbox(&policy), SandboxType::None);
    let ws = tempfile::tempdir().unwrap();
    let argv = vec!["true".to_owned()];
    let prepared =
        prepare_command(&policy, select_sandbox(&policy), ws.path(), &argv, true).unwrap();
    assert_eq!(prepared.program, PathBuf::from("true"));
    let mut no_net = SandboxPolicy::danger_full_access();
    no_net.network_access = false;
    let prepared =
        prepare_command(&no_net, select_sandbox(&no_net), ws.path(), &argv, true).unwrap();
    assert_eq!(prepared.program, PathBuf::from(BWRAP_PATH));
    assert!(prepared.args.windows(3).any(|w| w == ["--bind", "/", "/"]));
    assert!(prepared.args.contains(&"--unshare-net".to_owned()));
}

#[test]
fn denial_heuristic() {
    let bw = SandboxType::LinuxBwrap;
    assert!(!is_likely_sandbox_denied(
        SandboxType::None,
        Some(1),
        None,
        "Permission denied"
    ));
    assert!(!is_likely_sandbox_denied(
        bw,
        Some(0),
        None,
        "permission denied"
    ));
    assert!(is_likely_sandbox_denied(
        bw,
        Some(1),
        None,
        "touch: Read-only file system"
    ));
    assert!(!is_likely_sandbox_denied(
        bw,
        Some(127),
        None,
        "command not found"
    ));
    assert!(!is_likely_sandbox_denied(
        bw,
        Some(1),
        None,
        "assertion failed"
    ));
    assert!(is_likely_sandbox_denied(bw, None, Some(libc::SIGSYS), ""));
}

#[test]
fn can_write_follows_roots_and_protected_paths() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".git")).unwrap();
    let other = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path(), ws.path().join("link")).unwrap();
    let policy = isolated_workspace_policy(Vec::new());
    assert!(policy.can_write(&ws.path().join("a/b.txt"), ws.path()));
    assert!(!policy.can_write(&ws.path().join(".git/HEAD"), ws.path()));
    assert!(!policy.can_write(&other.path().join("x"), ws.path()));
    assert!(
        !policy.can_write(&ws.path().join("link/x"), ws.path()),
        "symlink escapes the root"
    );
    assert!(!SandboxPolicy::read_only().can_write(&ws.path().join("a"), ws.path()));
    assert!(SandboxPolicy::danger_full_access().can_write(&other.path().join("x"), ws.path()));
}
