//! The seam between cell logic and V8: something that can start a cell and hand back its
//! event stream and command channel. `codemode-host` implements it with V8; the cell actor,
//! the session runtime and the host protocol are written against it, so none of them link V8.

use tokio::sync::mpsc;

use crate::{BridgeError, CellCommand, CellEvent, CellId, CellStart};

/// The two ends of one running cell.
#[derive(Debug)]
pub struct CellChannels {
    /// Events out of the cell; closes after `CellEvent::Result` (or if the engine dies).
    pub events: mpsc::UnboundedReceiver<CellEvent>,
    /// Commands into the cell (tool results, terminate).
    pub commands: CellCommandSender,
}

/// Sends commands into a cell. Terminate must work even while JavaScript is busy, so an
/// engine may act on it from the sending thread (for V8: `IsolateHandle::terminate_execution`).
pub trait CellCommandSink: Send + Sync + std::fmt::Debug {
    /// Delivers a command; returns false when the cell has already ended.
    fn send(&self, command: CellCommand) -> bool;
}

/// A shareable command sender.
pub type CellCommandSender = std::sync::Arc<dyn CellCommandSink>;

/// Starts cells. One engine serves many cells concurrently; each cell is independent.
pub trait CellEngine: Send + Sync + 'static {
    /// Starts `start.source` as a new cell. Fails only if the cell could not be created at all
    /// (for example, no thread or isolate); JavaScript errors arrive as `CellEvent::Result`.
    fn start_cell(&self, cell_id: CellId, start: CellStart) -> Result<CellChannels, BridgeError>;
}
