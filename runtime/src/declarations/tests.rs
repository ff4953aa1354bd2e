use codemode_bridge::{ToolDefinition, ToolKind, ToolName};
use serde_json::{Value, json};

use super::*;

fn function_tool(name: &str, input: Option<Value>, output: Option<Value>) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        tool_name: ToolName::plain(name),
        description: "Test tool".to_owned(),
        kind: ToolKind::Function,
        input_schema: input,
        output_schema: output,
    }
}

fn mcp_result_schema(structured: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": { "type": "array", "items": { "type": "object" } },
            "structuredContent": structured,
            "isError": { "type": "boolean" },
            "_meta": { "type": "object" }
        },
        "required": ["content"],
        "additionalProperties": false
    })
}

fn ts(schema: Value) -> String {
    render_json_schema_to_typescript(&schema)
}

#[test]
fn augment_tool_definition_appends_typed_declaration() {
    let definition = function_tool(
        "hidden_dynamic_tool",
        Some(json!({
            "type": "object",
            "properties": { "city": { "type": "string" } },
            "required": ["city"],
            "additionalProperties": false
        })),
        Some(
            json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }),
        ),
    );
    let description = augment_tool_definition(definition).description;
    assert_eq!(
        description,
        "Test tool\n\nexec tool declaration:\n```ts\ndeclare const tools: { hidden_dynamic_tool(args: { city: string; }): Promise<{ ok: boolean; }>; };\n```"
    );
}

#[test]
fn augment_tool_definition_includes_property_descriptions_as_comments() {
    let definition = function_tool(
        "weather_tool",
        Some(json!({
            "type": "object",
            "properties": {
                "weather": {
                    "type": "array",
                    "description": "look up weather for a given list of locations",
                    "items": {
                        "type": "object",
                        "properties": { "location": { "type": "string" } },
                        "required": ["location"]
                    }
                }
            },
            "required": ["weather"]
        })),
        Some(json!({
            "type": "object",
            "properties": { "forecast": { "type": "string", "description": "human readable weather forecast" } },
            "required": ["forecast"]
        })),
    );
    let description = augment_tool_definition(definition).description;
    assert!(description.contains(
        "weather_tool(args: {
  // look up weather for a given list of locations
  weather: Array<{ location: string; }>;
}): Promise<{
  // human readable weather forecast
  forecast: string;
}>;"
    ));
}

#[test]
fn renders_local_refs_with_a_cycle_safe_boolean_prefix() {
    let schema = json!({
        "type": "object",
        "properties": {
            "clauses": { "type": "array", "items": { "$ref": "#/$defs/Boolean~1Clause~0v1" } }
        },
        "required": ["clauses"],
        "additionalProperties": false,
        "$defs": {
            "Boolean/Clause~v1": {
                "type": "object",
                "properties": {
                    "occur": { "type": "string", "enum": ["must", "should"] },
                    "query": {
                        "$ref": "#/$defs/Query",
                        "description": "Use a nested group for parenthesized expressions."
                    }
                },
                "required": ["occur", "query"],
                "additionalProperties": false
            },
            "Query": {
                "oneOf": [
                    { "$ref": "#/$defs/Leaf" },
                    {
                        "type": "object",
                        "properties": {
                            "clauses": { "type": "array", "items": { "$ref": "#/$defs/Boolean~1Clause~0v1" } }
                        },
                        "required": ["clauses"],
                        "additionalProperties": false
                    }
                ]
            },
            "Leaf": {
                "type": "object",
                "properties": {
                    "field": { "type": "string", "enum": ["A", "B", "C"] },
                    "value": { "type": "string" }
                },
                "required": ["field", "value"],
                "additionalProperties": false
            }
        }
    });
    assert_eq!(
        ts(schema),
        r#"{ clauses: Array<{
  occur: "must" | "should";
  // Use a nested group for parenthesized expressions.
  query: { field: "A" | "B" | "C"; value: string; } | { clauses: Array<{
  occur: "must" | "should";
  // Use a nested group for parenthesized expressions.
  query: { field: "A" | "B" | "C"; value: string; } | { clauses: Array<unknown>; };
}>; };
}>; }"#
    );
}

#[test]
fn code_mode_types_structured_content_result_refs() {
    let definition = ToolDefinition {
        name: "mcp__sample__search".to_owned(),
        tool_name: ToolName::namespaced("mcp__sample__", "search"),
        description: "Search".to_owned(),
        kind: ToolKind::Function,
        input_schema: Some(
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        ),
        output_schema: Some(mcp_result_schema(json!({
            "type": "object",
            "properties": {
                "results": { "type": "array", "items": { "$ref": "#/definitions/Result~1item~0v1" } }
            },
            "required": ["results"],
            "additionalProperties": false,
            "definitions": {
                "Result/item~v1": {
                    "type": "object",
                    "properties": { "id": { "type": "string" }, "score": { "type": "number" } },
                    "required": ["id", "score"],
                    "additionalProperties": false
                }
            }
        }))),
    };
    assert!(has_mcp_output(&definition));
    assert!(augment_tool_definition(definition).description.contains(
        "mcp__sample__search(args: {}): Promise<CallToolResult<{ results: Array<{ id: string; score: number; }>; }>>;"
    ));
}

#[test]
fn local_ref_sibling_constraints_are_intersected() {
    let schema = json!({ "$ref": "#/$defs/Label", "enum": ["A"], "$defs": { "Label": { "type": "string" } } });
    assert_eq!(ts(schema), r#"(string) & ("A")"#);
}

#[test]
fn ref_siblings_that_render_unknown_or_refs_that_dangle_collapse() {
    assert_eq!(
        ts(json!({ "$ref": "#/$defs/Missing", "type": "string" })),
        "string"
    );
    assert_eq!(
        ts(json!({ "$ref": "https://example.com/x.json" })),
        "unknown"
    );
    assert_eq!(
        ts(
            json!({ "$ref": "#/$defs/A", "description": "x", "$defs": { "A": { "type": "null" } } })
        ),
        "null"
    );
    // `#` alone is the whole document: a self-recursive list.
    assert_eq!(
        ts(json!({ "type": "object", "properties": { "next": { "$ref": "#" } }, "required": [] })),
        "{ next?: { next?: { next?: unknown; }; }; }"
    );
}

#[test]
fn scalar_and_composite_rules() {
    assert_eq!(ts(json!(true)), "unknown");
    assert_eq!(ts(json!(false)), "never");
    assert_eq!(ts(json!({})), "unknown");
    assert_eq!(ts(json!(7)), "unknown");
    assert_eq!(ts(json!({ "const": "x" })), r#""x""#);
    assert_eq!(
        ts(json!({ "enum": ["a", 1, null, true] })),
        r#""a" | 1 | null | true"#
    );
    assert_eq!(
        ts(json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] })),
        "string | null"
    );
    assert_eq!(
        ts(json!({ "oneOf": [{ "type": "integer" }, { "const": 0 }] })),
        "number | 0"
    );
    assert_eq!(
        ts(
            json!({ "allOf": [{ "type": "object", "properties": { "a": { "type": "string" } } }, { "required": ["b"], "properties": { "b": { "type": "number" } } }] })
        ),
        "{ a?: string; } & { b: number; }"
    );
    assert_eq!(ts(json!({ "type": ["string", "null"] })), "string | null");
    assert_eq!(ts(json!({ "type": "integer" })), "number");
    assert_eq!(ts(json!({ "type": "number" })), "number");
    assert_eq!(ts(json!({ "type": "boolean" })), "boolean");
    assert_eq!(ts(json!({ "type": "weird" })), "unknown");
}

#[test]
fn array_rules() {
    assert_eq!(
        ts(json!({ "type": "array", "items": { "type": "string" } })),
        "Array<string>"
    );
    assert_eq!(
        ts(json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "number" }] })),
        "[string, number]"
    );
    assert_eq!(ts(json!({ "type": "array" })), "unknown[]");
    assert_eq!(ts(json!({ "items": true })), "Array<unknown>");
}

#[test]
fn object_rules() {
    assert_eq!(
        ts(json!({ "type": "object" })),
        "{ [key: string]: unknown; }"
    );
    assert_eq!(
        ts(json!({ "type": "object", "additionalProperties": false })),
        "{}"
    );
    assert_eq!(
        ts(json!({ "type": "object", "additionalProperties": { "type": "number" } })),
        "{ [key: string]: number; }"
    );
    assert_eq!(
        ts(
            json!({ "type": "object", "properties": { "b": { "type": "string" }, "a": { "type": "number" } }, "required": ["b"], "additionalProperties": true })
        ),
        "{ a?: number; b: string; [key: string]: unknown; }"
    );
    assert_eq!(
        ts(
            json!({ "properties": { "my-key": { "type": "string" }, "$ok": {}, "9lives": {} }, "required": ["my-key"] })
        ),
        r#"{ $ok?: unknown; "9lives"?: unknown; "my-key": string; }"#
    );
    assert_eq!(
        ts(json!({ "required": ["a"] })),
        "{ [key: string]: unknown; }"
    );
}

#[test]
fn multi_line_descriptions_are_trimmed_and_split() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "string", "description": "  first line \n\n  second line  " },
            "b": { "type": "number" }
        },
        "additionalProperties": { "type": "string" }
    });
    assert_eq!(
        ts(schema),
        "{\n  // first line\n  // second line\n  a?: string;\n  b?: number;\n  [key: string]: string;\n}"
    );
}

#[test]
fn output_types() {
    assert_eq!(output_type(None), "unknown");
    assert_eq!(
        output_type(Some(&mcp_result_schema(json!(true)))),
        "CallToolResult"
    );
    let mut without_structured = mcp_result_schema(json!(true));
    without_structured["properties"]
        .as_object_mut()
        .unwrap()
        .remove("structuredContent");
    assert_eq!(output_type(Some(&without_structured)), "CallToolResult");
    assert_eq!(
        output_type(Some(&mcp_result_schema(
            json!({ "type": "object", "properties": {}, "additionalProperties": false })
        ))),
        "CallToolResult<{}>"
    );
    // Not MCP-shaped (no `_meta`): rendered as a plain object.
    let mut plain = mcp_result_schema(json!(true));
    plain["properties"].as_object_mut().unwrap().remove("_meta");
    assert!(
        output_type(Some(&plain)).starts_with("{ content: Array<{ [key: string]: unknown; }>;")
    );
}

#[test]
fn freeform_tools_take_a_string_input() {
    let definition = ToolDefinition {
        name: "apply_patch".to_owned(),
        tool_name: ToolName::plain("apply_patch"),
        description: "Patch files".to_owned(),
        kind: ToolKind::Freeform,
        input_schema: None,
        output_schema: None,
    };
    assert_eq!(
        tool_declaration(&definition),
        "apply_patch(input: string): Promise<unknown>;"
    );
    assert_eq!(
        tool_declaration(&function_tool("no_schema", None, None)),
        "no_schema(args: unknown): Promise<unknown>;"
    );
}

#[test]
fn shared_types_declare_every_mcp_type() {
    for name in [
        "type Role =",
        "type MetaObject =",
        "type Annotations =",
        "type Icon =",
        "type TextResourceContents =",
        "type BlobResourceContents =",
        "type TextContent =",
        "type ImageContent =",
        "type AudioContent =",
        "type ResourceLink =",
        "type EmbeddedResource =",
        "type ContentBlock =",
        "type CallToolResult<TStructured = { [key: string]: unknown }> =",
    ] {
        assert_eq!(SHARED_MCP_TYPES.matches(name).count(), 1, "{name}");
    }
}

mod typescript;
