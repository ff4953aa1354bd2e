//! The Linux sandbox: the policy model (file-system mode, network, denied reads), the
//! bubblewrap command line, the seccomp network filter, spawning with `no_new_privs`, and the
//! heuristic that recognises a sandbox denial.

mod bwrap;
mod denial;
mod policy;
mod seccomp;
mod spawn;
mod syscalls;

pub use bwrap::{BWRAP_PATH, PreparedCommand, SandboxType, prepare_command, select_sandbox};
pub use denial::is_likely_sandbox_denied;
pub use policy::{SandboxMode, SandboxPermissions, SandboxPolicy, WritableRoot};
pub use spawn::{ChildStdio, spawn_prepared};

pub(crate) use policy::resolve_existing_prefix;
pub(crate) use syscalls::{kill_process_group, open_pty};

#[cfg(test)]
mod tests;
