//! `V8Engine`: starts each cell on its own thread with a fresh isolate, taken from a small
//! warm pool when one is ready.

use std::sync::Arc;

use codemode_bridge::{BridgeError, CellChannels, CellEngine, CellId, CellLimits, CellStart};

use crate::HostError;
use crate::cell_thread::CellThread;
use crate::v8::{init_platform, startup_snapshot};
use crate::warm_pool::WarmPool;

/// How many isolates [`V8EngineOptions::default`] keeps ready.
pub const DEFAULT_WARM_ISOLATES: usize = 2;

/// How the engine creates isolates.
#[derive(Debug, Clone)]
pub struct V8EngineOptions {
    /// Create isolates from the startup snapshot (prelude pre-compiled). Off only to measure
    /// what the snapshot saves.
    pub use_snapshot: bool,
    /// How many never-used isolates (with the default heap limit) to keep ready, each on
    /// its own idle thread; 0 creates every isolate when its cell starts.
    pub warm_isolates: usize,
}

impl Default for V8EngineOptions {
    fn default() -> Self {
        Self {
            use_snapshot: true,
            warm_isolates: DEFAULT_WARM_ISOLATES,
        }
    }
}

/// The V8 implementation of `CellEngine`. Clones share one warm pool.
#[derive(Debug, Clone)]
pub struct V8Engine {
    snapshot: Option<&'static [u8]>,
    pool: Option<Arc<WarmPool>>,
}

impl V8Engine {
    /// Initialises V8 (once per process), builds the snapshot (once per process) and starts
    /// filling the warm pool.
    pub fn new(options: V8EngineOptions) -> Result<Self, HostError> {
        init_platform();
        let snapshot = if options.use_snapshot {
            Some(startup_snapshot()?)
        } else {
            None
        };
        let pool = (options.warm_isolates > 0).then(|| {
            Arc::new(WarmPool::new(
                snapshot,
                CellLimits::default().heap_limit_mib,
                options.warm_isolates,
            ))
        });
        Ok(Self { snapshot, pool })
    }

    /// How many warm isolates are ready right now (0 without a pool).
    pub fn warm_isolates_ready(&self) -> usize {
        self.pool.as_ref().map_or(0, |pool| pool.ready())
    }
}

impl V8Engine {
    fn spawn_fresh(&self, cell_id: &CellId, start: CellStart) -> Result<CellChannels, BridgeError> {
        CellThread::spawn_for(format!("cell-{cell_id}"), self.snapshot, start)
            .map_err(|error| BridgeError::CellStartFailed(error.to_string()))
    }
}

impl CellEngine for V8Engine {
    fn start_cell(&self, cell_id: CellId, start: CellStart) -> Result<CellChannels, BridgeError> {
        let heap_limit_mib = start.limits.heap_limit_mib;
        let Some(pool) = &self.pool else {
            return self.spawn_fresh(&cell_id, start);
        };
        match pool.take(heap_limit_mib) {
            Some(thread) => {
                tracing::debug!(%cell_id, "cell starts on a warm isolate");
                let (channels, finished) = thread.assign(start);
                // After the cell is on its way: making the replacement must not delay it.
                pool.refill(Some(finished));
                Ok(channels)
            }
            None => {
                tracing::debug!(%cell_id, heap_limit_mib, pool_limit = pool.heap_limit_mib(), "no warm isolate fits");
                pool.refill(None);
                self.spawn_fresh(&cell_id, start)
            }
        }
    }
}
