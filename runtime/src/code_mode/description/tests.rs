use std::collections::BTreeMap;

use codemode_bridge::{ToolDefinition, ToolKind, ToolName};
use serde_json::{Value, json};

use super::*;
use crate::declarations::augment_tool_definition;

fn empty_object() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
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

fn mcp_tool(name: &str, description: &str) -> ToolDefinition {
    augment_tool_definition(ToolDefinition {
        name: format!("mcp__sample__{name}"),
        tool_name: ToolName::namespaced("mcp__sample__", name),
        description: description.to_owned(),
        kind: ToolKind::Function,
        input_schema: Some(empty_object()),
        output_schema: Some(mcp_result_schema(empty_object())),
    })
}

fn plain_tool(name: &str, description: &str) -> ToolDefinition {
    augment_tool_definition(ToolDefinition {
        name: name.to_owned(),
        tool_name: ToolName::plain(name),
        description: description.to_owned(),
        kind: ToolKind::Function,
        input_schema: None,
        output_schema: None,
    })
}

fn render(
    enabled: &[ToolDefinition],
    deferred: &[ToolDefinition],
    namespaces: &BTreeMap<String, NamespaceDescription>,
    code_mode_only: bool,
) -> String {
    ExecDescription {
        enabled_tools: enabled,
        deferred_tools: deferred,
        namespaces,
        code_mode_only,
        default_yield_time_ms: 10_000,
        default_max_output_tokens: 10_000,
    }
    .render()
}

fn sample_namespace(description: &str) -> BTreeMap<String, NamespaceDescription> {
    BTreeMap::from([(
        "mcp__sample__".to_owned(),
        NamespaceDescription {
            name: "mcp__sample".to_owned(),
            description: description.to_owned(),
        },
    )])
}

#[test]
fn template_quotes_the_reference_phrases() {
    let description = render(&[], &[], &BTreeMap::new(), false);
    assert!(description.starts_with("Run JavaScript code to orchestrate/compose tool calls\n- "));
    assert!(description.contains(
        "Runs raw JavaScript -- no Node, no file system, no network access, no console."
    ));
    assert!(
        description.contains("`// @exec: {\"yield_time_ms\": 10000, \"max_output_tokens\": 1000}`")
    );
    assert!(description.contains("unawaited promises are silently discarded"));
    for helper in [
        "`exit()`",
        "`text(",
        "`image(",
        "`generatedImage(",
        "`store(",
        "`load(",
        "`notify(",
        "`ALL_TOOLS`",
        "`yield_control()`",
    ] {
        assert!(description.contains(helper), "{helper}");
    }
    assert!(!description.contains("Shared MCP Types:"));
    assert!(!description.contains("deferred nested tools"));
}

#[test]
fn template_shows_the_configured_defaults() {
    let description = ExecDescription {
        enabled_tools: &[],
        deferred_tools: &[],
        namespaces: &BTreeMap::new(),
        code_mode_only: false,
        default_yield_time_ms: 30_000,
        default_max_output_tokens: 2_000,
    }
    .render();
    assert!(description.contains("Defaults to 30000 ms."));
    assert!(description.contains("Defaults to 2000 tokens."));
}

#[test]
fn exec_description_mentions_timeout_helpers() {
    let description = render(&[], &[], &BTreeMap::new(), false);
    assert!(description.contains("`setTimeout(callback: () => void, delayMs?: number)`"));
    assert!(description.contains("`clearTimeout(timeoutId?: number)`"));
}

#[test]
fn code_mode_only_description_includes_nested_tools() {
    let description = render(&[plain_tool("foo", "bar")], &[], &BTreeMap::new(), true);
    assert!(description.contains("### `foo`\nbar"));
    assert!(
        description.contains("declare const tools: { foo(args: unknown): Promise<unknown>; };")
    );
    assert!(!description.contains("do not attempt to use any other tools directly"));
}

#[test]
fn nested_tools_are_described_only_in_code_mode_only_mode() {
    let description = render(&[plain_tool("foo", "bar")], &[], &BTreeMap::new(), false);
    assert!(!description.contains("### `foo`"));
}

#[test]
fn heading_shows_the_raw_name_when_it_was_normalized() {
    let tool = augment_tool_definition(ToolDefinition {
        name: "mcp__rmcp__echo_tool".to_owned(),
        tool_name: ToolName::namespaced("mcp__rmcp__", "echo-tool"),
        description: "Echo".to_owned(),
        kind: ToolKind::Function,
        input_schema: None,
        output_schema: None,
    });
    let description = render(&[tool], &[], &BTreeMap::new(), true);
    assert!(description.contains(
        "### `mcp__rmcp__echo_tool` (`mcp__rmcp__echo-tool`)\nEcho\n\nexec tool declaration:"
    ));
}

#[test]
fn code_mode_only_description_groups_namespace_instructions_once() {
    let namespaces = sample_namespace("Shared namespace guidance.");
    let description = render(
        &[
            mcp_tool("alpha", "First tool"),
            mcp_tool("beta", "Second tool"),
        ],
        &[],
        &namespaces,
        true,
    );
    assert_eq!(description.matches("## mcp__sample").count(), 1);
    assert!(
        description
            .contains("## mcp__sample\nShared namespace guidance.\n\n### `mcp__sample__alpha`")
    );
    assert!(description.contains(
        "declare const tools: { mcp__sample__alpha(args: {}): Promise<CallToolResult<{}>>; };"
    ));
    assert!(description.contains(
        "declare const tools: { mcp__sample__beta(args: {}): Promise<CallToolResult<{}>>; };"
    ));
}

#[test]
fn namespace_heading_repeats_for_each_run() {
    let namespaces = sample_namespace("Guidance.");
    let description = render(
        &[
            mcp_tool("alpha", "A"),
            plain_tool("between", "B"),
            mcp_tool("beta", "C"),
        ],
        &[],
        &namespaces,
        true,
    );
    assert_eq!(description.matches("## mcp__sample\nGuidance.").count(), 2);
}

#[test]
fn code_mode_only_description_omits_empty_namespace_sections() {
    let namespaces = sample_namespace("  ");
    let description = render(&[mcp_tool("alpha", "First tool")], &[], &namespaces, true);
    assert!(!description.contains("## mcp__sample"));
    assert!(description.contains("### `mcp__sample__alpha`"));
}

#[test]
fn code_mode_only_description_renders_shared_mcp_types_once() {
    let description = render(
        &[
            mcp_tool("alpha", "First tool"),
            mcp_tool("beta", "Second tool"),
        ],
        &[],
        &BTreeMap::new(),
        true,
    );
    assert_eq!(
        description
            .matches("type CallToolResult<TStructured = { [key: string]: unknown }>")
            .count(),
        1
    );
    assert_eq!(description.matches("Shared MCP Types:").count(), 1);
    assert!(description.contains("Shared MCP Types:\n```ts\ntype Role = "));
}

#[test]
fn code_mode_only_description_renders_shared_mcp_types_for_deferred_tools() {
    let description = render(
        &[],
        &[mcp_tool("alpha", "Deferred tool")],
        &BTreeMap::new(),
        true,
    );
    assert!(description.contains("Some deferred nested tools may be omitted"));
    assert!(description.contains("Shared MCP Types:"));
    assert!(!description.contains("### `mcp__sample__alpha`"));
}

#[test]
fn exec_description_mentions_deferred_nested_tools_when_available() {
    let description = render(
        &[],
        &[plain_tool("deferred_tool", "Deferred tool")],
        &BTreeMap::new(),
        false,
    );
    assert!(description.contains(
        "\n\nSome deferred nested tools may be omitted from this description. They are still available on the global `tools` object and listed in `ALL_TOOLS`.\nTo find one, filter `ALL_TOOLS` by `name` and `description`."
    ));
    assert!(!description.contains("do not print the full `ALL_TOOLS` array"));
    assert!(!description.contains("deferred_tool"));
}

#[test]
fn wait_description_covers_every_parameter() {
    let description = wait_tool_description();
    for needle in [
        "`cell_id`",
        "`yield_time_ms`",
        "`max_tokens`",
        "`terminate: true`",
        "Script running with cell ID",
    ] {
        assert!(description.contains(needle), "{needle}");
    }
}
