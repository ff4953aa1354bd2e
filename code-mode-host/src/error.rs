//! The host crate's boundary error.

/// What can fail while setting up V8 or a cell.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Building the startup snapshot failed (the prelude threw or V8 refused the blob).
    #[error("failed to build the code-mode startup snapshot: {0}")]
    Snapshot(String),
    /// The OS refused to start a cell thread.
    #[error("failed to spawn a code-mode cell thread: {0}")]
    SpawnThread(#[source] std::io::Error),
}
