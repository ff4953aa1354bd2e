//! Whether an MCP tool call needs the user's approval in `auto` mode, from the tool's
//! annotations (spec runtime §9.3, newest rule). The approval flow itself lives with the
//! orchestrator; this is the call site it asks.

use rmcp::model::ToolAnnotations;

/// The `auto`-mode rule: a tool marked destructive always asks; otherwise a read-only tool
/// never asks; otherwise it asks unless it is explicitly neither destructive nor open-world
/// (a missing hint counts as `true`, as the MCP spec defaults them).
pub fn needs_approval(annotations: Option<&ToolAnnotations>) -> bool {
    let hint = |get: fn(&ToolAnnotations) -> Option<bool>| annotations.and_then(get);
    if hint(|a| a.destructive_hint) == Some(true) {
        return true;
    }
    if hint(|a| a.read_only_hint) == Some(true) {
        return false;
    }
    let destructive = hint(|a| a.destructive_hint).unwrap_or(true);
    let open_world = hint(|a| a.open_world_hint).unwrap_or(true);
    destructive || open_world
}
