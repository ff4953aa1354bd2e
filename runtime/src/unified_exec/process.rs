//! One running command: its output collector, exit status, stdin (pty only) and the process
//! group it leads.
//!
//! # States
//! Running → Exited (exit status recorded by the waiter task) → streams closed.
//!
//! # Guarantees
//! - Output is kept in a 1 MiB head/tail buffer and handed out once: each `collect` returns
//!   only what arrived since the previous one.
//! - Dropping a `ManagedProcess` kills its whole process group (SIGKILL).
//!
//! # Termination
//! The process ends by itself, by `terminate()`, or when the handle is dropped.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::head_tail::HeadTailBuffer;
use crate::sandbox::{
    ChildStdio, PreparedCommand, SandboxType, kill_process_group, open_pty, spawn_prepared,
};

/// Bytes of unread output kept per process.
pub(crate) const OUTPUT_MAX_BYTES: usize = 1024 * 1024;
/// How long to wait for output streams to close after the process exited.
const STREAM_CLOSE_GRACE: Duration = Duration::from_millis(50);

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExitInfo {
    /// The exit code (`-1` style codes are reported for signals: 128 + signal).
    pub(crate) code: i32,
    /// The signal that killed it, if any.
    pub(crate) signal: Option<i32>,
}

#[derive(Debug)]
struct SharedState {
    buffer: HeadTailBuffer,
    open_streams: usize,
    exit: Option<ExitInfo>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<SharedState>,
    changed: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn push(&self, bytes: &[u8]) {
        self.lock().buffer.push(bytes);
        self.changed.notify_waiters();
    }

    fn close_stream(&self) {
        let mut state = self.lock();
        state.open_streams = state.open_streams.saturating_sub(1);
        drop(state);
        self.changed.notify_waiters();
    }
}

/// A spawned command and everything needed to talk to it.
#[derive(Debug)]
pub(crate) struct ManagedProcess {
    pgid: u32,
    tty: bool,
    sandbox: SandboxType,
    shared: Arc<Shared>,
    pty_writer: Option<std::fs::File>,
    /// Serializes write_stdin interactions on this process.
    pub(crate) interaction: tokio::sync::Mutex<()>,
}

impl ManagedProcess {
    /// Spawns `prepared` with pipes (stdin closed) or a pty.
    pub(crate) fn spawn(
        prepared: &PreparedCommand,
        cwd: &Path,
        env: &[(String, String)],
        tty: bool,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(SharedState {
                buffer: HeadTailBuffer::new(OUTPUT_MAX_BYTES),
                open_streams: 0,
                exit: None,
            }),
            changed: Notify::new(),
        });
        let (mut child, pty_writer) = if tty {
            let (master, slave) = open_pty()?;
            let child = spawn_prepared(prepared, cwd, env, ChildStdio::Pty(&slave))?;
            drop(slave);
            let writer = std::fs::File::from(master.try_clone()?);
            shared.lock().open_streams = 1;
            spawn_pty_reader(master, Arc::clone(&shared))?;
            (child, Some(writer))
        } else {
            let mut child = spawn_prepared(prepared, cwd, env, ChildStdio::Pipes)?;
            shared.lock().open_streams = 2;
            if let Some(stdout) = child.stdout.take() {
                spawn_pipe_reader(stdout, Arc::clone(&shared));
            }
            if let Some(stderr) = child.stderr.take() {
                spawn_pipe_reader(stderr, Arc::clone(&shared));
            }
            (child, None)
        };
        let pgid = child.id().unwrap_or(0);
        let waiter_shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let exit = match child.wait().await {
                Ok(status) => ExitInfo {
                    code: status
                        .code()
                        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
                    signal: status.signal(),
                },
                Err(error) => {
                    tracing::warn!(%error, "waiting for exec process failed");
                    ExitInfo {
                        code: -1,
                        signal: None,
                    }
                }
            };
            waiter_shared.lock().exit = Some(exit);
            waiter_shared.changed.notify_waiters();
        });
        Ok(Self {
            pgid,
            tty,
            sandbox: prepared.sandbox,
            shared,
            pty_writer,
            interaction: tokio::sync::Mutex::new(()),
        })
    }

    /// Whether stdin is writable (pty sessions only).
    pub(crate) fn is_tty(&self) -> bool {
        self.tty
    }

    /// The sandbox the process runs in.
    pub(crate) fn sandbox(&self) -> SandboxType {
        self.sandbox
    }

    /// The exit status, once the process has ended.
    pub(crate) fn exit(&self) -> Option<ExitInfo> {
        self.shared.lock().exit
    }

    /// Writes to the pty; an error means the process is gone.
    pub(crate) async fn write_stdin(&self, data: &[u8]) -> std::io::Result<()> {
        let Some(writer) = &self.pty_writer else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin is closed",
            ));
        };
        let mut file = writer.try_clone()?;
        let data = data.to_vec();
        // A full pty buffer blocks the write; keep that off the async threads.
        tokio::task::spawn_blocking(move || file.write_all(&data))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Waits until `deadline`, or until the process has exited and its output is drained,
    /// or until `cancel` fires; returns the output that arrived since the last call.
    pub(crate) async fn collect(&self, deadline: Instant, cancel: &CancellationToken) -> String {
        let mut exited_at: Option<Instant> = None;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wake_at = {
                let state = self.shared.lock();
                if state.exit.is_some() {
                    if state.open_streams == 0 {
                        break;
                    }
                    let at = *exited_at.get_or_insert_with(Instant::now);
                    (at + STREAM_CLOSE_GRACE).min(deadline)
                } else {
                    deadline
                }
            };
            if Instant::now() >= wake_at {
                break;
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(wake_at) => {}
                () = cancel.cancelled() => break,
            }
        }
        self.shared.lock().buffer.drain()
    }

    /// Kills the whole process group.
    pub(crate) fn terminate(&self) {
        kill_process_group(self.pgid, libc::SIGKILL);
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        if self.exit().is_none() {
            self.terminate();
        }
    }
}

fn spawn_pipe_reader<R>(mut reader: R, shared: Arc<Shared>)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => shared.push(&buf[..n]),
            }
        }
        shared.close_stream();
    });
}

fn spawn_pty_reader(master: OwnedFd, shared: Arc<Shared>) -> std::io::Result<()> {
    let mut file = std::fs::File::from(master);
    // A plain thread with blocking reads: it ends with EIO once every slave end is closed
    // (the process tree exited or was killed), and never holds up runtime shutdown.
    std::thread::Builder::new()
        .name("exec-pty-reader".to_owned())
        .spawn(move || {
            let mut buf = vec![0u8; 8192];
            loop {
                match file.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => shared.push(&buf[..n]),
                }
            }
            shared.close_stream();
        })?;
    Ok(())
}
