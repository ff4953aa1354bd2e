//! `CodeModeOptions`: every knob of the `exec`/`wait` tools, with the reference defaults.

use std::collections::BTreeSet;

/// Reference default: how long an exec waits before yielding (spec code-mode §1.4).
pub const DEFAULT_EXEC_YIELD_TIME_MS: u64 = 10_000;
/// Reference default: how long a wait waits before yielding.
pub const DEFAULT_WAIT_YIELD_TIME_MS: u64 = 10_000;
/// Reference default: token budget of one exec or wait result.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;

/// Configuration of code mode for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeModeOptions {
    /// Yield time of an exec whose pragma gives none.
    pub default_exec_yield_time_ms: u64,
    /// Output budget of an exec whose pragma gives none (a wait uses `max_tokens` or this).
    pub max_output_tokens: u64,
    /// V8 heap limit per cell; reaching it fails the cell, not the process.
    pub heap_limit_mib: u64,
    /// Cap on concurrently running nested calls of one cell; further calls queue.
    pub max_concurrent_tool_calls: usize,
    /// Namespaces whose tools are never nested (`features.code_mode.excluded_tool_namespaces`).
    pub excluded_tool_namespaces: BTreeSet<String>,
    /// Namespaces whose tools stay direct-only (DirectModelOnly): callable by the model, never
    /// nested (`features.code_mode.direct_only_tool_namespaces`).
    pub direct_only_tool_namespaces: BTreeSet<String>,
    /// Whether `exec`/`wait` replace every nested tool in the model's tool list; the exec
    /// description then documents each nested tool.
    pub code_mode_only: bool,
}

impl Default for CodeModeOptions {
    fn default() -> Self {
        Self {
            default_exec_yield_time_ms: DEFAULT_EXEC_YIELD_TIME_MS,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            heap_limit_mib: 256,
            max_concurrent_tool_calls: 64,
            excluded_tool_namespaces: BTreeSet::new(),
            direct_only_tool_namespaces: BTreeSet::new(),
            code_mode_only: false,
        }
    }
}
