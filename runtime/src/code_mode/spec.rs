//! The `exec` and `wait` tool specs (spec code-mode §1.1, §2.1).

use serde_json::json;

use super::description::{ExecDescription, wait_tool_description};
use super::naming::{EXEC_TOOL_NAME, WAIT_TOOL_NAME};
use crate::tool::{FreeformFormat, ToolSpec};

/// The Lark grammar of `exec` input: an optional `// @exec:` pragma line, then the source.
pub const EXEC_GRAMMAR: &str = r#"
start: pragma_source | plain_source
pragma_source: PRAGMA_LINE NEWLINE SOURCE
plain_source: SOURCE

PRAGMA_LINE: /[ \t]*\/\/ @exec:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
"#;

/// `exec`: a freeform tool whose input is JavaScript, constrained by [`EXEC_GRAMMAR`].
pub fn exec_tool_spec(description: &ExecDescription<'_>) -> ToolSpec {
    ToolSpec::Freeform {
        name: EXEC_TOOL_NAME.to_owned(),
        description: description.render(),
        format: FreeformFormat {
            kind: "grammar".to_owned(),
            syntax: "lark".to_owned(),
            definition: EXEC_GRAMMAR.to_owned(),
        },
    }
}

/// `wait`: a non-strict function tool; only `cell_id` is required.
pub fn wait_tool_spec() -> ToolSpec {
    ToolSpec::Function {
        name: WAIT_TOOL_NAME.to_owned(),
        description: wait_tool_description(),
        strict: false,
        defer_loading: None,
        parameters: json!({
            "type": "object",
            "properties": {
                "cell_id": { "type": "string", "description": "Identifier of the running exec cell." },
                "max_tokens": {
                    "type": "number",
                    "description": "Output token budget for this wait call. Defaults to 10000 tokens."
                },
                "terminate": {
                    "type": "boolean",
                    "description": "True stops the running exec cell; false or omitted waits for output."
                },
                "yield_time_ms": {
                    "type": "number",
                    "description": "Wait before yielding more output. Defaults to 10000 ms."
                }
            },
            "required": ["cell_id"],
            "additionalProperties": false
        }),
        output_schema: None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn create_code_mode_tool_matches_expected_spec() {
        let namespaces = BTreeMap::new();
        let description = ExecDescription {
            enabled_tools: &[],
            deferred_tools: &[],
            namespaces: &namespaces,
            code_mode_only: false,
            default_yield_time_ms: 10_000,
            default_max_output_tokens: 10_000,
        };
        let spec = serde_json::to_value(exec_tool_spec(&description)).unwrap();
        assert_eq!(spec["type"], "custom");
        assert_eq!(spec["name"], "exec");
        assert_eq!(spec["description"], description.render());
        assert_eq!(
            spec["format"],
            json!({
                "type": "grammar",
                "syntax": "lark",
                "definition": "\nstart: pragma_source | plain_source\npragma_source: PRAGMA_LINE NEWLINE SOURCE\nplain_source: SOURCE\n\nPRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/\nNEWLINE: /\\r?\\n/\nSOURCE: /[\\s\\S]+/\n"
            })
        );
    }

    #[test]
    fn create_wait_tool_matches_expected_spec() {
        let spec = serde_json::to_value(wait_tool_spec()).unwrap();
        assert_eq!(
            spec,
            json!({
                "type": "function",
                "name": "wait",
                "description": wait_tool_description(),
                "strict": false,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "cell_id": { "type": "string", "description": "Identifier of the running exec cell." },
                        "yield_time_ms": { "type": "number", "description": "Wait before yielding more output. Defaults to 10000 ms." },
                        "max_tokens": { "type": "number", "description": "Output token budget for this wait call. Defaults to 10000 tokens." },
                        "terminate": { "type": "boolean", "description": "True stops the running exec cell; false or omitted waits for output." }
                    },
                    "required": ["cell_id"],
                    "additionalProperties": false
                }
            })
        );
        assert!(wait_tool_description().starts_with(
            "Waits on a yielded `exec` cell and returns new output or completion.\n- "
        ));
    }
}
