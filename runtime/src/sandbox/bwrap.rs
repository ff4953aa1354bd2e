//! Turning a command into a bubblewrap command line for a policy.
//!
//! Checked on this machine (root in a VM, bubblewrap 0.8.0): `--unshare-net`, `--unshare-pid`,
//! `--proc /proc`, `--dev /dev`, `--cap-drop ALL`, `--perms` with `--tmpfs` and
//! `--ro-bind-data` all work. `--cap-drop ALL` matters because we run as root: without it the
//! sandboxed root keeps `CAP_DAC_OVERRIDE` and mode-000 masks would not stop reads.
//! `--argv0` is not used (bubblewrap < 0.9 lacks it).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use super::policy::SandboxPolicy;
use super::seccomp;
use super::syscalls::pipe_with_data;

/// The bubblewrap binary.
pub const BWRAP_PATH: &str = "/usr/bin/bwrap";

/// Which sandbox a command runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxType {
    /// Run the command as is.
    None,
    /// bubblewrap + seccomp (network off) + no_new_privs.
    LinuxBwrap,
}

/// A command ready to spawn: program, arguments, and fds the child must inherit (kept open
/// until the child has been spawned).
#[derive(Debug)]
pub struct PreparedCommand {
    /// The program to exec.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Fds referenced by the arguments.
    pub inherit_fds: Vec<OwnedFd>,
    /// The sandbox the command runs in.
    pub sandbox: SandboxType,
}

/// The sandbox a policy selects when no escalation applies.
pub fn select_sandbox(policy: &SandboxPolicy) -> SandboxType {
    if policy.requires_platform_sandbox() {
        SandboxType::LinuxBwrap
    } else {
        SandboxType::None
    }
}

/// Builds the command line running `argv` in `cwd` under `policy` with `sandbox`.
pub fn prepare_command(
    policy: &SandboxPolicy,
    sandbox: SandboxType,
    cwd: &Path,
    argv: &[String],
    new_session: bool,
) -> std::io::Result<PreparedCommand> {
    let Some((program, rest)) = argv.split_first() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "empty command",
        ));
    };
    if sandbox == SandboxType::None {
        return Ok(PreparedCommand {
            program: PathBuf::from(program),
            args: rest.to_vec(),
            inherit_fds: Vec::new(),
            sandbox,
        });
    }
    let mut args: Vec<String> = Vec::new();
    let mut fds: Vec<OwnedFd> = Vec::new();
    let mut push = |items: &[&str]| args.extend(items.iter().map(|s| (*s).to_owned()));
    if new_session {
        push(&["--new-session"]);
    }
    push(&["--die-with-parent"]);
    if policy.is_fs_restricted() {
        push(&["--ro-bind", "/", "/"]);
    } else {
        push(&["--bind", "/", "/"]);
    }
    push(&["--dev", "/dev"]);
    for root in policy.writable_roots(cwd) {
        let root_str = root.root.to_string_lossy().into_owned();
        args.extend(["--bind".to_owned(), root_str.clone(), root_str]);
        for ro in root.read_only_subpaths {
            let ro = ro.to_string_lossy().into_owned();
            args.extend(["--ro-bind".to_owned(), ro.clone(), ro]);
        }
    }
    for denied in &policy.deny_read {
        let Ok(meta) = denied.metadata() else {
            continue;
        };
        let path = denied.to_string_lossy().into_owned();
        if meta.is_dir() {
            args.extend(["--perms", "000", "--tmpfs"].map(str::to_owned));
            args.push(path.clone());
            args.extend(["--remount-ro".to_owned(), path]);
        } else {
            let fd = pipe_with_data(&[])?;
            args.extend(["--perms", "000", "--ro-bind-data"].map(str::to_owned));
            args.extend([fd.as_raw_fd().to_string(), path]);
            fds.push(fd);
        }
    }
    args.extend(["--unshare-pid".to_owned()]);
    if !policy.network_access {
        args.push("--unshare-net".to_owned());
        let fd = pipe_with_data(&seccomp::to_bytes(&seccomp::network_filter()))?;
        args.extend(["--seccomp".to_owned(), fd.as_raw_fd().to_string()]);
        fds.push(fd);
    }
    args.extend(["--proc", "/proc", "--cap-drop", "ALL", "--chdir"].map(str::to_owned));
    args.push(cwd.to_string_lossy().into_owned());
    args.push("--".to_owned());
    args.extend(argv.iter().cloned());
    Ok(PreparedCommand {
        program: PathBuf::from(BWRAP_PATH),
        args,
        inherit_fds: fds,
        sandbox,
    })
}
