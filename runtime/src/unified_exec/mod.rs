//! Unified exec: `exec_command` (start a command with pipes or a pty, wait up to a yield time,
//! return output plus exit code or a session id) and `write_stdin` (write to or poll a
//! session), the session's process store, and the bounded output buffer. Model-visible
//! truncation uses the shared `crate::truncate`.

mod args;
mod head_tail;
mod output;
pub(crate) mod process;
mod specs;
mod store;
mod tool;

pub use args::{
    DEFAULT_MAX_OUTPUT_TOKENS, MAX_BACKGROUND_TIMEOUT_MS, MAX_YIELD_TIME_MS,
    MIN_EMPTY_YIELD_TIME_MS, MIN_YIELD_TIME_MS,
};
pub use output::ExecCommandToolOutput;
pub use store::{MAX_PROCESSES, ProcessStore, WARNING_PROCESSES};
pub use tool::{ExecCommandOptions, ExecCommandTool, STDIN_CLOSED, WriteStdinTool};

#[cfg(test)]
pub(crate) mod tests;
