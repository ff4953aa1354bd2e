//! [`WarmPool`]: cell threads whose isolates were made ahead of time, so starting a cell
//! does not wait for `Isolate::new` (the dominant cost of a cell start).
//!
//! # States
//! Each pooled thread is starting (making its isolate) or ready (waiting in the queue).
//! [`WarmPool::take`] removes a ready thread; [`WarmPool::refill`] (called once the taken
//! thread has its cell) spawns threads until ready + starting is back at the target, so
//! isolate creation overlaps with the cell that just started instead of delaying the next.
//!
//! # Guarantees
//! - Every isolate serves one cell; a taken thread never returns to the pool.
//! - Pooled isolates have [`WarmPool::heap_limit_mib`]; a cell asking for another limit
//!   gets no pooled isolate (the caller makes a fresh one).
//! - Dropping the pool (the last engine clone) drops the ready handles; their threads
//!   exit and threads still starting exit as soon as they are ready.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::cell_thread::{CellFinished, CellThread};

/// How long a replacement waits for the cell that took its predecessor before making its
/// isolate anyway: on a busy machine the two would otherwise compete for a core just when
/// the cell starts, while a long-running cell must not keep the pool empty.
const REFILL_WAIT: Duration = Duration::from_millis(5);

/// A small queue of ready cell threads, refilled in the background.
pub(crate) struct WarmPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    snapshot: Option<&'static [u8]>,
    heap_limit_mib: u64,
    target: usize,
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    ready: VecDeque<CellThread>,
    starting: usize,
}

/// Numbers pooled threads process-wide, so each has a distinct name (`cell-warm-<n>`).
static SPAWNED: AtomicU64 = AtomicU64::new(0);

impl std::fmt::Debug for WarmPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmPool")
            .field("target", &self.inner.target)
            .field("heap_limit_mib", &self.inner.heap_limit_mib)
            .field("ready", &self.ready())
            .finish()
    }
}

impl PoolInner {
    fn state(&self) -> MutexGuard<'_, PoolState> {
        // The state is a queue and two counters; a panic elsewhere leaves them usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl WarmPool {
    /// A pool keeping `target` isolates with `heap_limit_mib` ready; starts filling at once.
    pub(crate) fn new(snapshot: Option<&'static [u8]>, heap_limit_mib: u64, target: usize) -> Self {
        let pool = Self {
            inner: Arc::new(PoolInner {
                snapshot,
                heap_limit_mib,
                target,
                state: Mutex::default(),
            }),
        };
        pool.refill(None);
        pool
    }

    /// The heap limit of pooled isolates.
    pub(crate) fn heap_limit_mib(&self) -> u64 {
        self.inner.heap_limit_mib
    }

    /// How many isolates are ready now.
    pub(crate) fn ready(&self) -> usize {
        self.inner.state().ready.len()
    }

    /// A ready thread whose isolate has `heap_limit_mib`, if any. Call [`refill`] after
    /// the taken thread has its cell.
    ///
    /// [`refill`]: WarmPool::refill
    pub(crate) fn take(&self, heap_limit_mib: u64) -> Option<CellThread> {
        if heap_limit_mib != self.inner.heap_limit_mib {
            return None;
        }
        self.inner.state().ready.pop_front()
    }

    /// Spawns threads until ready + starting reaches the target. The first one waits for
    /// `after` (the cell that just took a pooled isolate) up to [`REFILL_WAIT`].
    pub(crate) fn refill(&self, after: Option<CellFinished>) {
        let missing = {
            let mut state = self.inner.state();
            let missing = self
                .inner
                .target
                .saturating_sub(state.ready.len() + state.starting);
            state.starting += missing;
            missing
        };
        let mut after = after.map(|finished| (finished, REFILL_WAIT));
        for _ in 0..missing {
            let name = format!("cell-warm-{}", SPAWNED.fetch_add(1, Ordering::Relaxed) + 1);
            let weak: Weak<PoolInner> = Arc::downgrade(&self.inner);
            let spawned = CellThread::spawn(
                name,
                self.inner.snapshot,
                self.inner.heap_limit_mib,
                after.take(),
                move |thread| {
                    let Some(inner) = weak.upgrade() else {
                        return Some(thread);
                    };
                    let mut state = inner.state();
                    state.starting = state.starting.saturating_sub(1);
                    state.ready.push_back(thread);
                    None
                },
            );
            if let Err(error) = spawned {
                tracing::warn!(%error, "could not pre-start a warm cell isolate");
                let mut state = self.inner.state();
                state.starting = state.starting.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests;
