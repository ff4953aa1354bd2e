//! The MCP tool's annotations as the approval check reads them. The rule itself (spec runtime
//! §9.3, newest) lives in one place, `approval::McpToolAnnotations::requires_approval`; this
//! only maps rmcp's type onto it.

use rmcp::model::ToolAnnotations;

use crate::approval::McpToolAnnotations;

/// The behaviour hints of a listed tool; a tool without annotations has no hints (each then
/// counts as `true`, as the MCP spec defaults them).
pub(crate) fn approval_annotations(annotations: Option<&ToolAnnotations>) -> McpToolAnnotations {
    annotations.map_or_else(McpToolAnnotations::default, |a| McpToolAnnotations {
        read_only_hint: a.read_only_hint,
        destructive_hint: a.destructive_hint,
        open_world_hint: a.open_world_hint,
    })
}
