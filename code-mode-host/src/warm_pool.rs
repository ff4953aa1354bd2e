//! [`WarmPool`]: cell threads whose isolates were made ahead of time, so starting a cell
//! does not wait for `Isolate::new` (the dominant cost of a cell start).
//!
//! # States
//! Each pooled thread is starting (making its isolate) or ready (waiting in the queue).
//! [`WarmPool::take`] removes a ready thread and refills: new threads are spawned until
//! ready + starting is back at the target, so isolate creation overlaps with the cell that
//! just started instead of delaying the next one.
//!
//! # Guarantees
//! - Every isolate serves one cell; a taken thread never returns to the pool.
//! - Pooled isolates have [`WarmPool::heap_limit_mib`]; a cell asking for another limit
//!   gets no pooled isolate (the caller makes a fresh one).
//! - Dropping the pool (the last engine clone) drops the ready handles; their threads
//!   exit and threads still starting exit as soon as they are ready.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::cell_thread::CellThread;

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
    spawned: u64,
}

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
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl WarmPool {
    /// A pool keeping `target` isolates with `heap_limit_mib` ready; starts filling at once.
    pub(crate) fn new(snapshot: Option<&'static [u8]>, heap_limit_mib: u64, target: usize) -> Self {
        let pool = Self {
            inner: Arc::new(PoolInner { snapshot, heap_limit_mib, target, state: Mutex::default() }),
        };
        pool.refill();
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

    /// A ready thread whose isolate has `heap_limit_mib`, if any; always triggers a refill.
    pub(crate) fn take(&self, heap_limit_mib: u64) -> Option<CellThread> {
        let taken = if heap_limit_mib == self.inner.heap_limit_mib {
            self.inner.state().ready.pop_front()
        } else {
            None
        };
        self.refill();
        taken
    }

    /// Spawns threads until ready + starting reaches the target.
    fn refill(&self) {
        let names: Vec<String> = {
            let mut state = self.inner.state();
            let missing = self.inner.target.saturating_sub(state.ready.len() + state.starting);
            state.starting += missing;
            (0..missing)
                .map(|_| {
                    state.spawned += 1;
                    format!("cell-warm-{}", state.spawned)
                })
                .collect()
        };
        for name in names {
            let weak: Weak<PoolInner> = Arc::downgrade(&self.inner);
            let spawned = CellThread::spawn(name, self.inner.snapshot, self.inner.heap_limit_mib, move |thread| {
                let Some(inner) = weak.upgrade() else {
                    return Some(thread);
                };
                let mut state = inner.state();
                state.starting = state.starting.saturating_sub(1);
                state.ready.push_back(thread);
                None
            });
            if let Err(error) = spawned {
                tracing::warn!(%error, "could not pre-start a warm cell isolate");
                let mut state = self.inner.state();
                state.starting = state.starting.saturating_sub(1);
            }
        }
    }
}
