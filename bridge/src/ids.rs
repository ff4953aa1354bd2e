//! Identifiers shared by the runtime and the host.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The alphabet of cell ids: 32 symbols, no `i`, `l`, `o` or `u` (spec §3.1).
const CELL_ID_ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// Length of a generated cell id.
const CELL_ID_LEN: usize = 16;

/// Identifies one exec cell. Generated ids are 16 symbols drawn from a 32-symbol alphabet
/// with 80 bits of randomness, so they are unique across sessions, hosts and restarts.
/// Ids arriving from the model are kept verbatim (they may name no cell at all).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CellId(String);

impl CellId {
    /// A fresh random id.
    pub fn generate() -> Self {
        let bytes = *uuid::Uuid::new_v4().as_bytes();
        let mut bits: u128 = u128::from_le_bytes(bytes);
        let mut id = String::with_capacity(CELL_ID_LEN);
        for _ in 0..CELL_ID_LEN {
            id.push(char::from(CELL_ID_ALPHABET[(bits & 31) as usize]));
            bits >>= 5;
        }
        Self(id)
    }

    /// Wraps an id as given (for example a `cell_id` the model passed to `wait`).
    pub fn from_raw(raw: impl Into<String>) -> Self {
        Self(raw.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identifies one nested tool call inside one cell: `tool-1`, `tool-2`, … Unique only within
/// its cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCallId(String);

impl ToolCallId {
    /// The id of the `n`-th nested call of a cell (1-based).
    pub fn nth(n: u64) -> Self {
        Self(format!("tool-{n}"))
    }

    /// Wraps an id as received on the wire.
    pub fn from_raw(raw: impl Into<String>) -> Self {
        Self(raw.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolCallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identifies one logical code-mode session (one agent thread) on a host. Chosen by the
/// client; unique within one host connection and never reused.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    /// Wraps a client-chosen id.
    pub fn new(raw: impl Into<String>) -> Self {
        Self(raw.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_ids_use_the_restricted_alphabet_and_differ() {
        let a = CellId::generate();
        let b = CellId::generate();
        assert_eq!(a.as_str().len(), 16);
        assert!(a.as_str().bytes().all(|c| CELL_ID_ALPHABET.contains(&c)));
        assert_ne!(a, b);
    }

    #[test]
    fn tool_call_ids_count_from_one() {
        assert_eq!(ToolCallId::nth(1).as_str(), "tool-1");
    }
}
