//! The session's "approved for session" memory, keyed by serialized approval keys.
//!
//! # Guarantees
//! - A request whose keys are **all** approved for the session is not asked again.
//! - An empty key list always asks.
//! - An `approved_for_session` answer is stored under each key separately, so a later request
//!   touching any subset of them is approved.
//! - Lives for the session only; never persisted.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::request::ReviewDecision;

/// Approvals remembered for this session.
#[derive(Debug, Default)]
pub struct ApprovalStore {
    decisions: Mutex<HashMap<String, ReviewDecision>>,
}

impl ApprovalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn key_string(key: &serde_json::Value) -> String {
        key.to_string()
    }

    /// Whether every key is approved for the session (false for no keys).
    pub fn all_approved(&self, keys: &[serde_json::Value]) -> bool {
        let decisions = self
            .decisions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        !keys.is_empty()
            && keys.iter().all(|k| {
                decisions.get(&Self::key_string(k)) == Some(&ReviewDecision::ApprovedForSession)
            })
    }

    /// Returns the cached approval if every key is covered, else asks via `ask` (never called on a hit) and remembers
    /// an `approved_for_session` answer under each key.
    pub async fn with_cached_approval<F, Fut>(
        &self,
        keys: &[serde_json::Value],
        ask: F,
    ) -> ReviewDecision
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ReviewDecision>,
    {
        if self.all_approved(keys) {
            return ReviewDecision::ApprovedForSession;
        }
        let decision = ask().await;
        if decision == ReviewDecision::ApprovedForSession {
            let mut decisions = self
                .decisions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for key in keys {
                decisions.insert(Self::key_string(key), ReviewDecision::ApprovedForSession);
            }
        }
        decision
    }
}
