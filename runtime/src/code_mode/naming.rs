//! How a registry tool name becomes a `tools.<name>` identifier (spec code-mode §5.1).

use std::collections::HashSet;

use codemode_bridge::ToolName;

/// The name of the code-mode tool itself (never a nested tool).
pub const EXEC_TOOL_NAME: &str = "exec";
/// The name of the companion wait tool (never a nested tool).
pub const WAIT_TOOL_NAME: &str = "wait";

/// The flattened code-mode name of a tool: the plain name for the default namespace,
/// otherwise `namespace + "__" + name`, joined directly when the namespace already ends with
/// `_` or the name starts with `_` (`mcp__rmcp__` + `echo` → `mcp__rmcp__echo`).
pub fn code_mode_name(tool_name: &ToolName) -> String {
    match tool_name.namespace.as_deref() {
        None | Some("") | Some("functions") => tool_name.name.clone(),
        Some(namespace) if namespace.ends_with('_') || tool_name.name.starts_with('_') => {
            format!("{namespace}{}", tool_name.name)
        }
        Some(namespace) => format!("{namespace}__{}", tool_name.name),
    }
}

/// A JavaScript identifier for `name`: every character outside `[A-Za-z0-9_$]` becomes `_`,
/// a leading digit becomes `_`, and an empty name becomes `_`.
pub fn normalize_code_mode_identifier(name: &str) -> String {
    let identifier: String = name
        .chars()
        .enumerate()
        .map(|(index, ch)| {
            let valid = ch == '_'
                || ch == '$'
                || ch.is_ascii_alphabetic()
                || (index > 0 && ch.is_ascii_digit());
            if valid { ch } else { '_' }
        })
        .collect();
    if identifier.is_empty() {
        "_".to_owned()
    } else {
        identifier
    }
}

/// The JS identifier of a registry tool.
pub fn js_name(tool_name: &ToolName) -> String {
    normalize_code_mode_identifier(&code_mode_name(tool_name))
}

/// Whether a registry tool is the un-namespaced `exec` or `wait` (never nested, and refused by
/// the nested-call recursion guard).
pub fn is_code_mode_tool(tool_name: &ToolName) -> bool {
    matches!(
        tool_name.namespace.as_deref(),
        None | Some("") | Some("functions")
    ) && (tool_name.name == EXEC_TOOL_NAME || tool_name.name == WAIT_TOOL_NAME)
}

/// Hands out JS identifiers in catalog order: the first tool to claim an identifier wins,
/// later ones are refused (and logged) so `tools[name]` is never ambiguous.
#[derive(Debug, Default)]
pub struct JsNameAllocator {
    taken: HashSet<String>,
}

impl JsNameAllocator {
    /// The identifier for `tool_name`, or `None` when an earlier tool already has it.
    pub fn claim(&mut self, tool_name: &ToolName) -> Option<String> {
        let name = js_name(tool_name);
        if self.taken.insert(name.clone()) {
            Some(name)
        } else {
            tracing::warn!(tool = %tool_name, js_name = %name, "skipping tool with a duplicate normalized code-mode name");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_identifier_rewrites_invalid_characters() {
        assert_eq!(
            normalize_code_mode_identifier("mcp__ologs__get_profile"),
            "mcp__ologs__get_profile"
        );
        assert_eq!(
            normalize_code_mode_identifier("hidden-dynamic-tool"),
            "hidden_dynamic_tool"
        );
        assert_eq!(
            normalize_code_mode_identifier("mcp__rmcp__echo-tool"),
            "mcp__rmcp__echo_tool"
        );
        assert_eq!(normalize_code_mode_identifier("9lives"), "_lives");
        assert_eq!(normalize_code_mode_identifier("$ok.é"), "$ok__");
        assert_eq!(normalize_code_mode_identifier(""), "_");
    }

    #[test]
    fn flattened_names() {
        assert_eq!(
            code_mode_name(&ToolName::plain("exec_command")),
            "exec_command"
        );
        assert_eq!(
            code_mode_name(&ToolName::namespaced("functions", "update_plan")),
            "update_plan"
        );
        assert_eq!(
            code_mode_name(&ToolName::namespaced("mcp__rmcp__", "echo")),
            "mcp__rmcp__echo"
        );
        assert_eq!(
            code_mode_name(&ToolName::namespaced("codex_app", "_hidden")),
            "codex_app_hidden"
        );
        assert_eq!(
            code_mode_name(&ToolName::namespaced("codex_app", "hidden_dynamic_tool")),
            "codex_app__hidden_dynamic_tool"
        );
        assert_eq!(
            js_name(&ToolName::namespaced("mcp__rmcp__", "echo-tool")),
            "mcp__rmcp__echo_tool"
        );
    }

    #[test]
    fn exec_and_wait_are_recognised_only_unnamespaced() {
        assert!(is_code_mode_tool(&ToolName::plain("exec")));
        assert!(is_code_mode_tool(&ToolName::namespaced(
            "functions",
            "wait"
        )));
        assert!(!is_code_mode_tool(&ToolName::namespaced(
            "mcp__x__", "exec"
        )));
        assert!(!is_code_mode_tool(&ToolName::plain("exec_command")));
    }

    #[test]
    fn first_tool_wins_a_normalized_name_collision() {
        let mut names = JsNameAllocator::default();
        assert_eq!(
            names
                .claim(&ToolName::namespaced("mcp__a__", "echo-tool"))
                .as_deref(),
            Some("mcp__a__echo_tool")
        );
        assert_eq!(
            names.claim(&ToolName::namespaced("mcp__a__", "echo_tool")),
            None
        );
        assert_eq!(
            names.claim(&ToolName::plain("other")).as_deref(),
            Some("other")
        );
    }
}
