//! What a tool handler may know about the session and step it runs in.

use std::path::PathBuf;

/// Per-session facts handed to every handler: working directory, and (added by the
/// side-effects work) sandbox and approval policy, approver, process store.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The working directory commands and relative paths resolve against.
    pub cwd: PathBuf,
}

impl ToolContext {
    /// A context rooted at `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Self { cwd }
    }
}
