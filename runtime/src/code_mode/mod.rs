//! Code mode, runtime half: the `exec` and `wait` tools, the exec pragma, the nested-tool
//! catalog a cell sees, the broker that turns a cell's `tools.x()` call into an ordinary tool
//! invocation, and the session store behind `store`/`load`.
//!
//! Not here: V8 and the cell actor (codemode-host / codemode-bridge) or JSON Schema →
//! TypeScript rendering (`crate::declarations`).

pub mod messages;
mod pragma;

pub use messages::ScriptStatus;
pub use pragma::{ExecLimits, PRAGMA_PREFIX, PragmaError, parse_exec_source};
