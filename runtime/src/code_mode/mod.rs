//! Code mode, runtime half: the `exec` and `wait` tools, the exec pragma, the nested-tool
//! catalog a cell sees, the broker that turns a cell's `tools.x()` call into an ordinary tool
//! invocation, and the session store behind `store`/`load`.
//!
//! Not here: V8 and the cell actor (codemode-host / codemode-bridge) or JSON Schema →
//! TypeScript rendering (`crate::declarations`).

mod description;
pub mod messages;
mod naming;
mod options;
mod output;
mod payload;
mod pragma;
mod spec;
mod store;

pub use description::{
    DEFERRED_TOOLS_GUIDANCE, ExecDescription, NamespaceDescription, wait_tool_description,
};
pub use messages::ScriptStatus;
pub use naming::{
    EXEC_TOOL_NAME, JsNameAllocator, WAIT_TOOL_NAME, code_mode_name, is_code_mode_tool, js_name,
    normalize_code_mode_identifier,
};
pub use options::{
    CodeModeOptions, DEFAULT_EXEC_YIELD_TIME_MS, DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_WAIT_YIELD_TIME_MS,
};
pub use output::{CodeModeOutput, Observation};
pub use payload::build_nested_payload;
pub use pragma::{ExecLimits, PRAGMA_PREFIX, PragmaError, parse_exec_source};
pub use spec::{EXEC_GRAMMAR, exec_tool_spec, wait_tool_spec};
pub use store::SessionStore;
