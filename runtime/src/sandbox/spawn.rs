//! Spawning a prepared (possibly sandboxed) command with pipes or a pty, in its own session so
//! the whole process tree can be killed.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;

use super::bwrap::{PreparedCommand, SandboxType};
use super::syscalls::{ChildSetup, configure_child};

/// How the child's standard streams are connected.
#[derive(Debug)]
pub enum ChildStdio<'a> {
    /// stdin closed (`/dev/null`), stdout and stderr piped.
    Pipes,
    /// All three on this pty slave, which becomes the controlling terminal.
    Pty(&'a OwnedFd),
}

/// Spawns `prepared` in `cwd` with `env` added to the inherited environment.
pub fn spawn_prepared(
    prepared: &PreparedCommand,
    cwd: &Path,
    env: &[(String, String)],
    stdio: ChildStdio<'_>,
) -> std::io::Result<tokio::process::Child> {
    let mut command = tokio::process::Command::new(&prepared.program);
    command
        .args(&prepared.args)
        .current_dir(cwd)
        .kill_on_drop(true);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    let tty = matches!(stdio, ChildStdio::Pty(_));
    match stdio {
        ChildStdio::Pipes => {
            command
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
        }
        ChildStdio::Pty(slave) => {
            command
                .stdin(Stdio::from(slave.try_clone()?))
                .stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave.try_clone()?));
        }
    }
    configure_child(
        &mut command,
        ChildSetup {
            inherit_fds: prepared
                .inherit_fds
                .iter()
                .map(AsRawFd::as_raw_fd)
                .collect(),
            new_session: true,
            controlling_tty: tty,
            no_new_privs: prepared.sandbox != SandboxType::None,
        },
    );
    command.spawn()
}
