//! `V8Engine`: starts each cell on its own thread with a fresh isolate.

use std::sync::Arc;

use codemode_bridge::{BridgeError, CellChannels, CellEngine, CellId, CellStart};

use crate::HostError;
use crate::cell::{self, CellSetup, CellShared, CellSink};
use crate::v8::{init_platform, startup_snapshot};

/// Stack size of a cell thread. V8 sets its own JS stack limit well below this, so deep
/// recursion is a `RangeError`, never a native stack overflow.
const CELL_STACK_BYTES: usize = 8 << 20;

/// How the engine creates isolates.
#[derive(Debug, Clone)]
pub struct V8EngineOptions {
    /// Create isolates from the startup snapshot (prelude pre-compiled). Off only to measure
    /// what the snapshot saves.
    pub use_snapshot: bool,
}

impl Default for V8EngineOptions {
    fn default() -> Self {
        Self { use_snapshot: true }
    }
}

/// The V8 implementation of `CellEngine`.
#[derive(Debug, Clone)]
pub struct V8Engine {
    snapshot: Option<&'static [u8]>,
}

impl V8Engine {
    /// Initialises V8 (once per process) and builds the snapshot (once per process).
    pub fn new(options: V8EngineOptions) -> Result<Self, HostError> {
        init_platform();
        let snapshot = if options.use_snapshot { Some(startup_snapshot()?) } else { None };
        Ok(Self { snapshot })
    }
}

impl CellEngine for V8Engine {
    fn start_cell(&self, cell_id: CellId, start: CellStart) -> Result<CellChannels, BridgeError> {
        let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let (commands_tx, commands_rx) = std::sync::mpsc::channel();
        let shared = Arc::new(CellShared::default());
        let setup = CellSetup {
            start,
            events: events_tx,
            commands: commands_rx,
            shared: shared.clone(),
            snapshot: self.snapshot,
        };
        std::thread::Builder::new()
            .name(format!("cell-{cell_id}"))
            .stack_size(CELL_STACK_BYTES)
            .spawn(move || cell::run(setup))
            .map_err(|error| BridgeError::CellStartFailed(HostError::SpawnThread(error).to_string()))?;
        Ok(CellChannels { events: events_rx, commands: Arc::new(CellSink::new(commands_tx, shared)) })
    }
}
