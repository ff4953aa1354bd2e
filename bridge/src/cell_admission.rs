//! The host-wide cap on active cells (spec §7: 128 per host process, across sessions).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::BridgeError;

/// Default number of cells a host runs at once.
pub const DEFAULT_MAX_ACTIVE_CELLS: usize = 128;

/// Counts active cells across every session that shares it. A cell holds its permit until it
/// closes: its final result was observed, it was terminated, or its session shut down; an
/// uncollected result keeps its permit.
#[derive(Clone, Debug)]
pub struct CellAdmission {
    permits: Arc<Semaphore>,
}

impl CellAdmission {
    /// A cap of `max_active_cells` (at least 1).
    pub fn new(max_active_cells: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(max_active_cells.max(1))),
        }
    }

    /// Cells that may still start now.
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }

    pub(crate) fn try_admit(&self) -> Result<OwnedSemaphorePermit, BridgeError> {
        Arc::clone(&self.permits)
            .try_acquire_owned()
            .map_err(|_| BridgeError::TooManyCells)
    }
}

impl Default for CellAdmission {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ACTIVE_CELLS)
    }
}
