//! The session's live exec processes, by session id.
//!
//! # States
//! An id is Reserved (allocated, process not yet stored) → Stored → Released (removed after
//! exit, eviction or session end).
//!
//! # Guarantees
//! - At most 64 processes; inserting beyond that evicts one, never among the 8 most recently
//!   used: the least recently used exited process first, else the least recently used one.
//!   Evicted processes are killed.
//! - Dropping the store (session end) kills every process group it holds.
//!
//! # Termination
//! `terminate_all()` or drop.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::process::ManagedProcess;

/// The maximum number of open exec sessions.
pub const MAX_PROCESSES: usize = 64;
/// Open sessions at which the model is warned.
pub const WARNING_PROCESSES: usize = 60;
/// Recently used sessions that are never evicted.
const PROTECTED_RECENT: usize = 8;

#[derive(Debug)]
struct Entry {
    process: Arc<ManagedProcess>,
    last_used: Instant,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<i32, Entry>,
    reserved: HashSet<i32>,
}

/// Live exec processes of one session.
#[derive(Debug, Default)]
pub struct ProcessStore {
    inner: Mutex<Inner>,
    deterministic_ids: bool,
}

impl ProcessStore {
    /// An empty store with random ids in [1000, 100000).
    pub fn new() -> Self {
        Self::default()
    }

    /// A store handing out ids 1000, 1001, ... (tests).
    pub fn with_deterministic_ids() -> Self {
        Self {
            inner: Mutex::default(),
            deterministic_ids: true,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reserves a fresh session id.
    pub(crate) fn allocate_id(&self) -> i32 {
        let mut inner = self.lock();
        let id = if self.deterministic_ids {
            inner.reserved.iter().max().map_or(1000, |max| max + 1)
        } else {
            loop {
                let random = (uuid::Uuid::new_v4().as_u128() % 99_000) as i32 + 1000;
                if !inner.reserved.contains(&random) {
                    break random;
                }
            }
        };
        inner.reserved.insert(id);
        id
    }

    /// Releases an id whose process was never stored (or has been removed).
    pub(crate) fn release_id(&self, id: i32) {
        let mut inner = self.lock();
        if !inner.entries.contains_key(&id) {
            inner.reserved.remove(&id);
        }
    }

    /// Stores a process under a reserved id; returns the number of open processes.
    pub(crate) fn insert(&self, id: i32, process: Arc<ManagedProcess>) -> usize {
        let evicted = {
            let mut inner = self.lock();
            let evicted = if inner.entries.len() >= MAX_PROCESSES {
                prune(&mut inner)
            } else {
                None
            };
            inner.reserved.insert(id);
            inner.entries.insert(
                id,
                Entry {
                    process,
                    last_used: Instant::now(),
                },
            );
            evicted.map(|e| (e, inner.entries.len()))
        };
        match evicted {
            Some((process, count)) => {
                process.terminate();
                count
            }
            None => self.len(),
        }
    }

    /// The process for `id`, marked as just used.
    pub(crate) fn get(&self, id: i32) -> Option<Arc<ManagedProcess>> {
        let mut inner = self.lock();
        let entry = inner.entries.get_mut(&id)?;
        entry.last_used = Instant::now();
        Some(Arc::clone(&entry.process))
    }

    /// Removes `id` and releases it.
    pub(crate) fn remove(&self, id: i32) -> Option<Arc<ManagedProcess>> {
        let mut inner = self.lock();
        inner.reserved.remove(&id);
        inner.entries.remove(&id).map(|e| e.process)
    }

    /// Number of stored processes.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no process is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Kills and forgets every process (session end).
    pub fn terminate_all(&self) {
        let entries: Vec<Entry> = {
            let mut inner = self.lock();
            inner.reserved.clear();
            inner.entries.drain().map(|(_, e)| e).collect()
        };
        for entry in entries {
            entry.process.terminate();
        }
    }
}

impl Drop for ProcessStore {
    fn drop(&mut self) {
        self.terminate_all();
    }
}

/// Picks and removes the entry to evict.
fn prune(inner: &mut Inner) -> Option<Arc<ManagedProcess>> {
    let mut by_recency: Vec<(i32, Instant, bool)> = inner
        .entries
        .iter()
        .map(|(id, e)| (*id, e.last_used, e.process.exit().is_some()))
        .collect();
    by_recency.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    let candidates = by_recency.get(PROTECTED_RECENT..).unwrap_or_default();
    let victim = candidates
        .iter()
        .filter(|(_, _, exited)| *exited)
        .min_by_key(|(_, used, _)| *used)
        .or_else(|| candidates.iter().min_by_key(|(_, used, _)| *used))
        .map(|(id, _, _)| *id)?;
    inner.reserved.remove(&victim);
    inner.entries.remove(&victim).map(|e| e.process)
}
