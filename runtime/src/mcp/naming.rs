//! Model-visible names of MCP tools: `mcp__<server>__<tool>`, sanitized to `^[a-zA-Z0-9_-]+$`
//! and capped at 64 bytes, with a stable hash suffix where truncation or a clash needs one
//! (spec runtime §9.2).

use std::collections::{BTreeMap, HashSet};

/// The longest flattened name (`namespace + tool`) a model may be shown.
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Prefix of every MCP namespace.
pub(crate) const MCP_NAMESPACE_PREFIX: &str = "mcp__";
/// Joins server and tool; the namespace ends with it.
pub(crate) const MCP_DELIMITER: &str = "__";

/// Hex digits of the stable hash appended on truncation or clash.
const HASH_LEN: usize = 10;
/// The namespace is kept short enough to leave room for a useful tool name.
const MAX_NAMESPACE_LEN: usize = 40;

/// FNV-1a, 64 bit: tiny, dependency-free and stable across runs and platforms.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}

/// The first `HASH_LEN` hex digits of the FNV-1a hash of `text`.
pub(crate) fn short_hash(text: &str) -> String {
    let mut hex = format!("{:016x}", fnv1a64(text.as_bytes()));
    hex.truncate(HASH_LEN);
    hex
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`; an empty result becomes `_`.
pub fn sanitize_name(raw: &str) -> String {
    let sanitized: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if sanitized.is_empty() {
        "_".to_owned()
    } else {
        sanitized
    }
}

/// Cuts `text` (ASCII after sanitizing) to `max` bytes and appends `_<hash of identity>`.
fn with_hash_suffix(text: &str, max: usize, identity: &str) -> String {
    let keep = max.saturating_sub(HASH_LEN + 1);
    let mut out: String = text.chars().take(keep).collect();
    out.push('_');
    out.push_str(&short_hash(identity));
    out
}

/// Assigns each server a unique namespace `mcp__<server>__`, in the order given.
#[derive(Debug, Default)]
pub(crate) struct NamespaceAllocator {
    taken: HashSet<String>,
}

impl NamespaceAllocator {
    /// The namespace for `server`; distinct raw server names always get distinct namespaces.
    pub(crate) fn allocate(&mut self, server: &str) -> String {
        let budget = MAX_NAMESPACE_LEN - MCP_NAMESPACE_PREFIX.len() - MCP_DELIMITER.len();
        let sanitized = sanitize_name(server);
        let mut middle = if sanitized.len() > budget {
            with_hash_suffix(&sanitized, budget, server)
        } else {
            sanitized.clone()
        };
        if self.taken.contains(&middle) {
            middle = with_hash_suffix(&sanitized, budget, server);
        }
        self.taken.insert(middle.clone());
        format!("{MCP_NAMESPACE_PREFIX}{middle}{MCP_DELIMITER}")
    }
}

/// Callable names for one server's tools within `namespace`, in listing order.
///
/// Returns `(callable name, raw name)` pairs. An exact duplicate raw name is dropped with a
/// warning; a sanitized clash or an over-long name gets a hash of the raw identity.
pub(crate) fn assign_tool_names<'a>(
    server: &str,
    namespace: &str,
    raw_names: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, &'a str)> {
    let budget = MAX_TOOL_NAME_LEN.saturating_sub(namespace.len());
    let mut seen_raw = HashSet::new();
    let mut taken: BTreeMap<String, &str> = BTreeMap::new();
    let mut out = Vec::new();
    for raw in raw_names {
        if !seen_raw.insert(raw) {
            tracing::warn!(
                server,
                tool = raw,
                "MCP server listed the same tool twice; keeping the first"
            );
            continue;
        }
        let sanitized = sanitize_name(raw);
        let identity = format!("{server}/{raw}");
        let mut callable = if sanitized.len() > budget {
            with_hash_suffix(&sanitized, budget, &identity)
        } else {
            sanitized.clone()
        };
        if taken.contains_key(&callable) {
            callable = with_hash_suffix(&sanitized, budget, &identity);
        }
        if let Some(previous) = taken.get(&callable) {
            tracing::warn!(
                server,
                tool = raw,
                previous,
                "MCP tool name clash survived hashing; skipping"
            );
            continue;
        }
        taken.insert(callable.clone(), raw);
        out.push((callable, raw));
    }
    out
}
