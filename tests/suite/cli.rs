//! The `codemode` binary end to end: exec (text, `--json`, exit codes, yield/wait, Ctrl-C,
//! notify), config errors, `tools`, the examples, and `serve` driven by a real MCP client.
//!
//! The binaries of other packages are not built for tests, so the first test of the process
//! runs `cargo build -p codemode -p codemode-host --bin codemode --bin code-mode-host` into
//! this test binary's own target folder (a no-op when they are fresh). That works under both
//! `cargo test` and `cargo nextest`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The repository root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/<profile>`: the test executable lives in `target/<profile>/deps`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable in target/<profile>/deps")
        .to_path_buf()
}

/// The `codemode` binary, built (once per process) together with `code-mode-host`.
fn codemode() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let profile_dir = profile_dir();
        let target_dir = profile_dir.parent().expect("target folder");
        let profile = profile_dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("debug");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(repo_root())
            .args(["build", "--quiet", "-p", "codemode", "-p", "codemode-host"])
            .args(["--bin", "codemode", "--bin", "code-mode-host"])
            .arg("--target-dir")
            .arg(target_dir)
            .args([
                "--profile",
                if profile == "debug" { "dev" } else { profile },
            ])
            .status()
            .expect("run cargo build for the codemode binaries");
        assert!(
            status.success(),
            "building codemode and code-mode-host failed"
        );
        let binary = profile_dir.join("codemode");
        assert!(
            binary.is_file(),
            "{} missing after the build",
            binary.display()
        );
        binary
    })
}

/// A `codemode` command with an empty home (no user config) in `cwd`.
fn command(cwd: &Path, home: &Path) -> Command {
    let mut command = Command::new(codemode());
    command
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("CODEMODE_HOST_PATH")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    command
}

/// A scratch working directory and home.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        Self { dir }
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn run(&self, args: &[&str]) -> Output {
        command(&self.work(), &self.home())
            .args(args)
            .output()
            .unwrap()
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    )
}

fn json_lines(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn exec_eval_prints_header_and_output() {
    let scratch = Scratch::new();
    let output = scratch.run(&["exec", "-e", "text(\"hi\")"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    assert!(out.starts_with("Script completed\nWall time "), "{out}");
    assert!(out.ends_with(" seconds\nOutput:\nhi\n"), "{out}");
}

#[test]
fn exec_json_prints_one_object_per_observation() {
    let scratch = Scratch::new();
    let output = scratch.run(&["exec", "--json", "-e", "text('a'); text('b')"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 1, "{}", describe(&output));
    let line = &lines[0];
    assert_eq!(line["status"], "completed");
    assert_eq!(line["cell_id"], Value::Null);
    assert!(line["wall_time_seconds"].is_f64(), "{line}");
    assert_eq!(
        line["items"],
        serde_json::json!([
            {"type": "input_text", "text": "a"},
            {"type": "input_text", "text": "b"}
        ])
    );
    assert_eq!(line["error"], Value::Null);
}

#[test]
fn failing_script_exits_1_with_script_error() {
    let scratch = Scratch::new();
    let output = scratch.run(&["exec", "-e", "text('x'); throw new Error('boom')"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let out = stdout(&output);
    assert!(out.starts_with("Script failed\n"), "{out}");
    assert!(out.contains("Script error:\nError: boom"), "{out}");

    let output = scratch.run(&["exec", "--json", "-e", "throw new Error('boom')"]);
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let line = &json_lines(&output)[0];
    assert_eq!(line["status"], "failed");
    assert!(
        line["error"].as_str().unwrap().starts_with("Error: boom"),
        "{line}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let scratch = Scratch::new();
    for args in [
        vec!["exec"],
        vec!["exec", "--bogus", "-e", "1"],
        vec!["exec", "-e", "1", "script.js"],
        vec!["exec", "missing-script.js"],
        vec!["exec", "--yield-ms", "soon", "-e", "1"],
        vec!["exec", "--cwd", "no-such-dir", "-e", "1"],
        vec!["nonsense"],
    ] {
        let output = scratch.run(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}\n{}",
            describe(&output)
        );
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
}

#[test]
fn help_and_version() {
    let scratch = Scratch::new();
    for args in [
        vec!["--help"],
        vec!["exec", "--help"],
        vec!["serve", "--help"],
        vec!["tools", "--help"],
    ] {
        let output = scratch.run(&args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}\n{}",
            describe(&output)
        );
        assert!(
            stdout(&output).contains("Usage: codemode"),
            "{}",
            describe(&output)
        );
    }
    let output = scratch.run(&["--version"]);
    assert_eq!(
        stdout(&output).trim(),
        format!("codemode {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_config_key_exits_2_naming_key_and_file() {
    let scratch = Scratch::new();
    let config = scratch.work().join("codemode.toml");
    std::fs::write(&config, "[code_mode]\nyield_time = 5\n").unwrap();
    // Found in the working directory without --config.
    let output = scratch.run(&["exec", "-e", "text(1)"]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let err = stderr(&output);
    assert!(err.contains("yield_time"), "{err}");
    assert!(err.contains(&config.display().to_string()), "{err}");

    let other = scratch.dir.path().join("other.toml");
    std::fs::write(&other, "approval_policy = \"sometimes\"\n").unwrap();
    let output = scratch.run(&["tools", "--config", other.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    let err = stderr(&output);
    assert!(
        err.contains("approval_policy") && err.contains("other.toml"),
        "{err}"
    );

    let output = scratch.run(&["exec", "--config", "/no/such/config.toml", "-e", "1"]);
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(
        stderr(&output).contains("/no/such/config.toml"),
        "{}",
        describe(&output)
    );
}

#[test]
fn no_wait_prints_the_running_cell_and_exits() {
    let scratch = Scratch::new();
    let started = Instant::now();
    let output = scratch.run(&[
        "exec",
        "--no-wait",
        "--yield-ms",
        "50",
        "-e",
        "await new Promise(r => setTimeout(r, 5000))",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).starts_with("Script running with cell ID "),
        "{}",
        describe(&output)
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn yield_and_wait_loop_completes_the_script() {
    let scratch = Scratch::new();
    let script = "text('start'); await new Promise(r => setTimeout(r, 300)); text('end')";
    let output = scratch.run(&["exec", "--yield-ms", "50", "-e", script]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    let running = out.find("Script running with cell ID ").expect("a yield");
    let completed = out.find("Script completed\n").expect("completion");
    assert!(running < completed, "{out}");
    assert!(
        out[..completed].contains("start") && out[completed..].contains("end"),
        "{out}"
    );

    let output = scratch.run(&["exec", "--json", "--yield-ms", "50", "-e", script]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let lines = json_lines(&output);
    assert!(lines.len() >= 2, "{}", describe(&output));
    let cell = lines[0]["cell_id"].as_str().expect("cell id").to_owned();
    for line in &lines[..lines.len() - 1] {
        assert_eq!(line["status"], "running", "{line}");
    }
    let last = lines.last().unwrap();
    assert_eq!(last["status"], "completed");
    assert_eq!(last["cell_id"], cell.as_str());
    assert_eq!(
        last["items"],
        serde_json::json!([{"type": "input_text", "text": "end"}])
    );
}

#[test]
fn notify_messages_are_printed() {
    let scratch = Scratch::new();
    let output = scratch.run(&["exec", "-e", "notify('halfway'); text('done')"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).contains("[notify] halfway\n"),
        "{}",
        describe(&output)
    );
}

#[test]
fn ctrl_c_terminates_the_cell_and_exits_1() {
    let scratch = Scratch::new();
    let mut child = command(&scratch.work(), &scratch.home())
        .args([
            "exec",
            "--yield-ms",
            "50",
            "-e",
            "await new Promise(r => setTimeout(r, 60000))",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("Script running with cell ID") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "stdout closed: {seen}"
        );
        seen.push_str(&line);
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{seen}{rest}");
    assert!(rest.contains("Script terminated"), "{rest}");
}

#[test]
fn builtin_exec_command_runs_sandboxed_in_the_cwd() {
    let scratch = Scratch::new();
    let script = "const r = await tools.exec_command({cmd: 'echo written > f.txt && cat f.txt && pwd'}); text(r.output)";
    let output = scratch.run(&["exec", "-e", script]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    assert!(out.contains("written"), "{out}");
    assert!(scratch.work().join("f.txt").is_file());

    // Outside the workspace (and not a temp folder) the sandbox refuses the write.
    let outside_dir = codemode_tests::outside_workspace_dir();
    let outside = outside_dir.path().join("cli-test-outside.txt");
    let script = format!(
        "const r = await tools.exec_command({{cmd: 'echo x > {}'}}); text(String(r.exit_code))",
        outside.display()
    );
    let output = scratch.run(&["exec", "-e", &script]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        !outside.exists(),
        "the sandbox let a write outside the workspace through"
    );
    assert!(!stdout(&output).ends_with("\n0\n"), "{}", describe(&output));
}

#[test]
fn in_process_host_runs_cells() {
    let scratch = Scratch::new();
    let config = scratch.dir.path().join("in-process.toml");
    std::fs::write(&config, "[code_mode]\nhost = \"in-process\"\n").unwrap();
    let output = scratch.run(&[
        "exec",
        "--config",
        config.to_str().unwrap(),
        "-e",
        "text(1 + 1)",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).ends_with("Output:\n2\n"),
        "{}",
        describe(&output)
    );
    assert!(
        !stderr(&output).contains("warning"),
        "{}",
        describe(&output)
    );

    // A missing host binary falls back to in-process cells with a warning.
    std::fs::write(&config, "[code_mode]\nhost_path = \"/no/code-mode-host\"\n").unwrap();
    let output = scratch.run(&[
        "exec",
        "--config",
        config.to_str().unwrap(),
        "-e",
        "text(3)",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).ends_with("Output:\n3\n"),
        "{}",
        describe(&output)
    );
    assert!(
        stderr(&output).contains("/no/code-mode-host"),
        "{}",
        describe(&output)
    );
}

#[test]
fn tools_lists_the_builtin_nested_tools() {
    let scratch = Scratch::new();
    let output = scratch.run(&["tools", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let tools: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for expected in [
        "exec_command",
        "write_stdin",
        "apply_patch",
        "view_image",
        "update_plan",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(
        !names.contains(&"exec") && !names.contains(&"wait"),
        "{names:?}"
    );
    let exec_command = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "exec_command")
        .unwrap();
    assert!(
        exec_command["description"]
            .as_str()
            .unwrap()
            .contains("declare const tools")
    );

    let output = scratch.run(&["tools"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).contains("tools.exec_command\n"),
        "{}",
        describe(&output)
    );
}

fn mcp_servers_installed() -> bool {
    let bin = repo_root().join("tests/mcp-servers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci --prefix tests/mcp-servers` from the repository root",
        bin.display()
    );
    true
}

#[test]
fn example_fanout_runs() {
    let scratch = Scratch::new();
    let output = command(&repo_root(), &scratch.home())
        .args(["exec", "examples/fanout.js"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    assert!(out.starts_with("Script completed\n"), "{out}");
    assert!(out.contains("runtime ") && out.contains("cli "), "{out}");
    assert!(out.contains("lines in "), "{out}");
}

#[test]
fn example_mcp_fanout_runs() {
    assert!(mcp_servers_installed());
    let scratch = Scratch::new();
    // From another working directory: the config's relative paths follow the config file.
    let config = repo_root().join("examples/codemode.toml");
    let script = repo_root().join("examples/mcp-fanout.js");
    let output = scratch.run(&[
        "exec",
        "--config",
        config.to_str().unwrap(),
        script.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    assert!(out.contains("20 echoes in "), "{out}");
    assert!(out.contains("last: Echo: message 19"), "{out}");
    assert!(
        out.contains("get_sum: The sum of 20 and 22 is 42."),
        "{out}"
    );

    let output = scratch.run(&["tools", "--json", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).contains("\"mcp__everything__echo\""),
        "{}",
        describe(&output)
    );
}

#[test]
fn serve_answers_a_real_mcp_client() {
    assert!(mcp_servers_installed());
    let client = repo_root().join("tests/suite/serve_client.py");
    let config = repo_root().join("examples/codemode.toml");
    let output = Command::new("python3")
        .arg(&client)
        .arg(codemode())
        .arg(&config)
        .current_dir(Scratch::new().work())
        .output()
        .expect("run python3");
    if output.status.code() == Some(77) {
        println!("skipping: {}", stdout(&output).trim());
        return;
    }
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(stdout(&output).contains("ALL OK"), "{}", describe(&output));
}

#[test]
fn config_hooks_apply_to_nested_calls() {
    let scratch = Scratch::new();
    let config = scratch.dir.path().join("hooks.toml");
    std::fs::write(
        &config,
        r#"[[hooks.PreToolUse]]
matcher = "update_plan"
command = ["sh", "-c", "echo '{\"decision\":\"block\",\"reason\":\"plans are frozen\"}'"]
"#,
    )
    .unwrap();
    let script = "try { await tools.update_plan({plan: [{step: 'a', status: 'pending'}]}); text('ran'); } catch (e) { text('blocked: ' + String(e.message ?? e)); }";
    let output = scratch.run(&["exec", "--config", config.to_str().unwrap(), "-e", script]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let out = stdout(&output);
    assert!(
        out.contains("plans are frozen") && !out.contains("\nran\n"),
        "{out}"
    );
}

#[test]
fn exec_reads_the_script_from_stdin_and_files() {
    let scratch = Scratch::new();
    let mut child = command(&scratch.work(), &scratch.home())
        .args(["exec", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"text(6 * 7)").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).ends_with("Output:\n42\n"),
        "{}",
        describe(&output)
    );

    // A script's own pragma line is overridden by the flags (it becomes a comment).
    std::fs::write(
        scratch.work().join("slow.js"),
        "// @exec: {\"yield_time_ms\": 60000}\nawait new Promise(r => setTimeout(r, 3000)); text('late')",
    )
    .unwrap();
    let output = scratch.run(&["exec", "--no-wait", "--yield-ms", "50", "slow.js"]);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    assert!(
        stdout(&output).starts_with("Script running with cell ID "),
        "{}",
        describe(&output)
    );
}
