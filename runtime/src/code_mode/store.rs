//! `SessionStore`: the values `store()`/`load()` share between the cells of one session
//! (spec code-mode §6). It lives in the runtime, not in the host, so a host crash loses running
//! cells but never committed values (DESIGN.md "Where we go beyond the reference").
//!
//! # States
//! One map from key to JSON value per session, initially empty. It only grows or changes by
//! whole write sets; there is no delete (the JS side has none either).
//!
//! # Guarantees
//! - A starting cell gets a [`snapshot`](SessionStore::snapshot): a copy, so later commits
//!   never change what a running cell loads.
//! - A write set is [`commit`](SessionStore::commit)ted atomically: a concurrent snapshot sees
//!   all of it or none of it. Commits merge per key, the last committed cell wins.
//! - Which write sets get committed is the caller's promise, not this type's: the cell actor
//!   commits a cell's writes only together with its natural completion, never after a
//!   terminate.
//!
//! # Termination
//! Dropping the store drops the values; nothing is persisted.

use std::sync::Mutex;

use codemode_bridge::StoredValues;

/// The stored values of one code-mode session.
#[derive(Debug, Default)]
pub struct SessionStore {
    values: Mutex<StoredValues>,
}

impl SessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every stored value, for a cell that is starting.
    pub fn snapshot(&self) -> StoredValues {
        self.lock().clone()
    }

    /// Merges a completed cell's writes, all at once.
    pub fn commit(&self, writes: StoredValues) {
        if writes.is_empty() {
            return;
        }
        self.lock().extend(writes);
    }

    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<serde_json::Value> {
        self.lock().get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StoredValues> {
        // A panic while holding this lock cannot leave the map half-updated (`extend` and
        // `clone` either finish or unwind before touching it), so a poisoned map is still valid.
        self.values
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn writes(pairs: &[(&str, serde_json::Value)]) -> StoredValues {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn snapshot_is_isolated_from_later_commits() {
        let store = SessionStore::new();
        store.commit(writes(&[("a", json!(1))]));
        let snapshot = store.snapshot();
        store.commit(writes(&[("a", json!(2)), ("b", json!({"x": [1, 2]}))]));
        assert_eq!(snapshot, writes(&[("a", json!(1))]));
        assert_eq!(store.get("a"), Some(json!(2)));
        assert_eq!(store.get("b"), Some(json!({"x": [1, 2]})));
        assert_eq!(store.get("missing"), None);
    }

    #[test]
    fn last_committed_cell_wins_per_key_and_other_keys_survive() {
        let store = SessionStore::new();
        store.commit(writes(&[
            ("shared", json!("first")),
            ("only_first", json!(true)),
        ]));
        store.commit(writes(&[("shared", json!("second"))]));
        store.commit(StoredValues::new());
        assert_eq!(
            store.snapshot(),
            writes(&[("only_first", json!(true)), ("shared", json!("second"))])
        );
    }

    #[test]
    fn concurrent_snapshots_see_whole_write_sets() {
        let store = Arc::new(SessionStore::new());
        let writer = {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                for round in 0..500 {
                    store.commit(writes(&[("x", json!(round)), ("y", json!(round))]));
                }
            })
        };
        for _ in 0..500 {
            let snapshot = store.snapshot();
            assert_eq!(
                snapshot.get("x"),
                snapshot.get("y"),
                "a snapshot saw half a write set"
            );
        }
        writer.join().unwrap();
    }
}
