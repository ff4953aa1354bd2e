//! Every JavaScript property name the host looks up, in one table.

/// The bootstrap the prelude leaves on `globalThis`.
pub(crate) const BOOTSTRAP: &str = codemode_js_prelude::BOOTSTRAP_GLOBAL;
/// An error's stack text.
pub(crate) const STACK: &str = "stack";
/// The module's resource name; stacks read `at exec_main.mjs:L:C`.
pub(crate) const MODULE_NAME: &str = "exec_main.mjs";
