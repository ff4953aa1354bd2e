use std::collections::BTreeSet;

use codemode_bridge::ToolName;
use futures::future::BoxFuture;
use serde_json::json;

use super::*;
use crate::tool::{FunctionCallError, TextToolOutput, ToolInvocation, ToolOutput};

struct FakeTool {
    name: ToolName,
    spec: ToolSpec,
    exposure: ToolExposure,
}

impl ToolExecutor for FakeTool {
    fn tool_name(&self) -> ToolName {
        self.name.clone()
    }
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn exposure(&self) -> ToolExposure {
        self.exposure
    }
    fn handle(
        &self,
        _: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async { Ok(Box::new(TextToolOutput::ok("ok")) as Box<dyn ToolOutput>) })
    }
}

fn function(name: ToolName, exposure: ToolExposure) -> Arc<dyn ToolExecutor> {
    let spec = ToolSpec::Function {
        name: name.name.clone(),
        description: format!("{} tool", name.name),
        strict: false,
        defer_loading: None,
        parameters: json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        output_schema: None,
    };
    Arc::new(FakeTool {
        name,
        spec,
        exposure,
    })
}

fn catalog(tools: &[Arc<dyn ToolExecutor>], options: &CodeModeOptions) -> NestedToolCatalog {
    NestedToolCatalog::build(tools, options)
}

fn names(tools: &[ToolDefinition]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name.as_str()).collect()
}

#[test]
fn only_direct_and_deferred_tools_are_nested_never_exec_or_wait() {
    let tools = vec![
        function(ToolName::plain("exec"), ToolExposure::Direct),
        function(ToolName::plain("wait"), ToolExposure::Direct),
        function(ToolName::plain("exec_command"), ToolExposure::Direct),
        function(ToolName::plain("view_image"), ToolExposure::DirectModelOnly),
        function(ToolName::plain("internal"), ToolExposure::Hidden),
        function(
            ToolName::namespaced("mcp__apps__", "search"),
            ToolExposure::Deferred,
        ),
    ];
    let catalog = catalog(&tools, &CodeModeOptions::default());
    assert_eq!(names(&catalog.tools), ["exec_command", "mcp__apps__search"]);
    assert_eq!(names(&catalog.direct_tools()), ["exec_command"]);
    assert_eq!(names(&catalog.deferred_tools()), ["mcp__apps__search"]);
    assert_eq!(catalog.kind_of("exec_command"), Some(ToolKind::Function));
    assert_eq!(catalog.kind_of("view_image"), None);
}

#[test]
fn excluded_and_direct_only_namespaces_are_left_out() {
    let tools = vec![
        function(
            ToolName::namespaced("mcp__secret__", "read"),
            ToolExposure::Direct,
        ),
        function(
            ToolName::namespaced("mcp__screens__", "shot"),
            ToolExposure::Deferred,
        ),
        function(
            ToolName::namespaced("mcp__ok__", "echo"),
            ToolExposure::Direct,
        ),
    ];
    let options = CodeModeOptions {
        excluded_tool_namespaces: BTreeSet::from(["mcp__secret__".to_owned()]),
        direct_only_tool_namespaces: BTreeSet::from(["mcp__screens__".to_owned()]),
        ..CodeModeOptions::default()
    };
    assert_eq!(names(&catalog(&tools, &options).tools), ["mcp__ok__echo"]);
}

#[test]
fn js_names_are_normalized_and_the_first_of_a_collision_wins() {
    let tools = vec![
        function(
            ToolName::namespaced("mcp__rmcp__", "echo-tool"),
            ToolExposure::Direct,
        ),
        function(
            ToolName::namespaced("mcp__rmcp__", "echo_tool"),
            ToolExposure::Direct,
        ),
    ];
    let catalog = catalog(&tools, &CodeModeOptions::default());
    assert_eq!(names(&catalog.tools), ["mcp__rmcp__echo_tool"]);
    assert_eq!(
        catalog.tools[0].tool_name,
        ToolName::namespaced("mcp__rmcp__", "echo-tool")
    );
}

#[test]
fn descriptions_are_augmented_and_freeform_tools_take_strings() {
    let patch: Arc<dyn ToolExecutor> = Arc::new(FakeTool {
        name: ToolName::plain("apply_patch"),
        spec: ToolSpec::Freeform {
            name: "apply_patch".to_owned(),
            description: "Patch files".to_owned(),
            format: crate::tool::FreeformFormat {
                kind: "grammar".to_owned(),
                syntax: "lark".to_owned(),
                definition: "start: x".to_owned(),
            },
        },
        exposure: ToolExposure::Direct,
    });
    let tools = vec![
        function(ToolName::plain("update_plan"), ToolExposure::Direct),
        patch,
    ];
    let catalog = catalog(&tools, &CodeModeOptions::default());
    assert_eq!(
        catalog.tools[0].description,
        "update_plan tool\n\nexec tool declaration:\n```ts\ndeclare const tools: { update_plan(args: {}): Promise<unknown>; };\n```"
    );
    assert_eq!(catalog.tools[1].kind, ToolKind::Freeform);
    assert!(
        catalog.tools[1]
            .description
            .contains("apply_patch(input: string): Promise<unknown>;")
    );
}

#[test]
fn namespace_specs_provide_headings() {
    let member = ToolSpec::Function {
        name: "alpha".to_owned(),
        description: "First".to_owned(),
        strict: false,
        defer_loading: None,
        parameters: json!({ "type": "object" }),
        output_schema: None,
    };
    let tool: Arc<dyn ToolExecutor> = Arc::new(FakeTool {
        name: ToolName::namespaced("mcp__sample__", "alpha"),
        spec: ToolSpec::Namespace {
            name: "mcp__sample__".to_owned(),
            description: "Sample server.".to_owned(),
            tools: vec![member],
        },
        exposure: ToolExposure::Direct,
    });
    let catalog = catalog(&[tool], &CodeModeOptions::default());
    assert_eq!(names(&catalog.tools), ["mcp__sample__alpha"]);
    assert_eq!(
        catalog.namespaces.get("mcp__sample__"),
        Some(&NamespaceDescription {
            name: "mcp__sample".to_owned(),
            description: "Sample server.".to_owned()
        })
    );
}
