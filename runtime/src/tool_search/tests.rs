//! tool_search: spec, argument errors, BM25 ranking, coalescing, and a search over real
//! deferred MCP tools.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::bm25::{Bm25Index, tokenize};
use super::{TOOL_SEARCH_DEFAULT_LIMIT, ToolSearchExecutor};
use crate::tool::{
    FunctionCallError, ResponseInputItem, TextToolOutput, ToolCallSource, ToolContext,
    ToolExecutor, ToolExposure, ToolInvocation, ToolName, ToolOutput, ToolPayload, ToolSpec,
};

/// A tool that only has a spec: tool_search reads specs and never calls the tools.
struct SpecOnly {
    spec: ToolSpec,
    exposure: ToolExposure,
}

impl ToolExecutor for SpecOnly {
    fn tool_name(&self) -> ToolName {
        ToolName::plain(self.spec.name())
    }
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn exposure(&self) -> ToolExposure {
        self.exposure
    }
    fn handle(
        &self,
        _invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async { Ok(Box::new(TextToolOutput::ok("unused")) as Box<dyn ToolOutput>) })
    }
}

fn function(name: &str, description: &str) -> ToolSpec {
    ToolSpec::Function {
        name: name.to_owned(),
        description: description.to_owned(),
        strict: false,
        defer_loading: Some(true),
        parameters: json!({"type": "object", "properties": {}}),
        output_schema: None,
    }
}

fn namespaced(namespace: &str, name: &str, description: &str) -> ToolSpec {
    ToolSpec::Namespace {
        name: namespace.to_owned(),
        description: String::new(),
        tools: vec![function(name, description)],
    }
}

fn deferred(spec: ToolSpec) -> Arc<dyn ToolExecutor> {
    Arc::new(SpecOnly {
        spec,
        exposure: ToolExposure::Deferred,
    })
}

fn direct(spec: ToolSpec) -> Arc<dyn ToolExecutor> {
    Arc::new(SpecOnly {
        spec,
        exposure: ToolExposure::Direct,
    })
}

async fn run(search: &ToolSearchExecutor, arguments: &str) -> Result<Vec<Value>, String> {
    let invocation = ToolInvocation {
        call_id: "ts-1".to_owned(),
        tool_name: search.tool_name(),
        payload: ToolPayload::ToolSearch {
            arguments: arguments.to_owned(),
        },
        source: ToolCallSource::Direct,
        cancellation: CancellationToken::new(),
        context: Arc::new(ToolContext::new(std::env::temp_dir())),
    };
    match search.handle(invocation.clone()).await {
        Ok(output) => {
            let ResponseInputItem::ToolSearchOutput {
                call_id,
                status,
                execution,
                tools,
            } = output.to_response_item("ts-1", &invocation.payload)
            else {
                panic!("not a tool_search_output")
            };
            assert_eq!(
                (call_id.as_str(), status.as_str(), execution.as_str()),
                ("ts-1", "completed", "client")
            );
            assert_eq!(output.code_mode_result(), Value::Array(tools.clone()));
            Ok(tools)
        }
        Err(FunctionCallError::RespondToModel(text)) => Err(text),
        Err(other) => panic!("unexpected {other:?}"),
    }
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .flat_map(|tool| match tool["type"].as_str() {
            Some("namespace") => tool["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|member| {
                    format!(
                        "{}{}",
                        tool["name"].as_str().unwrap(),
                        member["name"].as_str().unwrap()
                    )
                })
                .collect::<Vec<_>>(),
            _ => vec![tool["name"].as_str().unwrap().to_owned()],
        })
        .collect()
}

#[test]
fn spec_matches_the_responses_api_shape() {
    let search = ToolSearchExecutor::new(&[
        deferred(namespaced(
            "mcp__calendar__",
            "create_event",
            "Create an event",
        )),
        deferred(namespaced(
            "mcp__calendar__",
            "delete_event",
            "Delete an event",
        )),
    ]);
    assert_eq!(search.tool_name(), ToolName::plain("tool_search"));
    assert!(search.supports_parallel_tool_calls());
    let spec = serde_json::to_value(search.spec()).unwrap();
    assert_eq!(
        spec,
        json!({
            "type": "tool_search",
            "execution": "client",
            "description": "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSources:\n- mcp__calendar__\n\nTo discover MCP tools, use `tool_search` rather than `list_mcp_resources`.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "number"}},
                "required": ["query"],
                "additionalProperties": false
            }
        })
    );
    let empty = ToolSearchExecutor::new(&[]);
    let ToolSpec::ToolSearch { description, .. } = empty.spec() else {
        panic!()
    };
    assert!(
        description.contains("Sources:\nNone currently enabled.\n"),
        "{description}"
    );
}

#[tokio::test]
async fn argument_errors_use_the_exact_texts() {
    let search = ToolSearchExecutor::new(&[deferred(function("alpha", "first"))]);
    assert_eq!(
        run(&search, r#"{"query":"   "}"#).await,
        Err("query must not be empty".to_owned())
    );
    assert_eq!(
        run(&search, r#"{"query":"alpha","limit":0}"#).await,
        Err("limit must be greater than zero".to_owned())
    );
    let error = run(&search, "{").await.unwrap_err();
    assert!(
        error.starts_with("failed to parse tool_search arguments: "),
        "{error}"
    );
    assert_eq!(
        names(&run(&search, r#"{"query":" alpha "}"#).await.unwrap()),
        ["alpha"]
    );
    assert_eq!(run(&search, r#"{"query":"zzz"}"#).await, Ok(vec![]));
}

#[tokio::test]
async fn default_limit_is_eight_and_an_explicit_limit_applies() {
    let tools: Vec<_> = (0..20)
        .map(|i| deferred(function(&format!("report_{i}"), "Build a report")))
        .collect();
    let search = ToolSearchExecutor::new(&tools);
    assert_eq!(TOOL_SEARCH_DEFAULT_LIMIT, 8);
    assert_eq!(
        run(&search, r#"{"query":"report"}"#).await.unwrap().len(),
        8
    );
    assert_eq!(
        run(&search, r#"{"query":"report","limit":3}"#)
            .await
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn only_deferred_tools_are_indexed_and_hits_load_with_defer_loading() {
    let mut plain = function("visible_calendar", "calendar");
    if let ToolSpec::Function {
        defer_loading,
        output_schema,
        ..
    } = &mut plain
    {
        *defer_loading = None;
        *output_schema = Some(json!({"type": "object"}));
    }
    let search = ToolSearchExecutor::new(&[
        direct(function("direct_calendar", "calendar")),
        deferred(ToolSpec::Namespace {
            name: "ns__".into(),
            description: String::new(),
            tools: vec![plain],
        }),
    ]);
    assert_eq!(search.indexed_count(), 1);
    let found = search.search("calendar", 8);
    let [ToolSpec::Namespace { tools, .. }] = found.as_slice() else {
        panic!("{found:?}")
    };
    let [
        ToolSpec::Function {
            defer_loading,
            output_schema,
            ..
        },
    ] = tools.as_slice()
    else {
        panic!()
    };
    assert_eq!(
        (*defer_loading, output_schema.is_none()),
        (Some(true), true)
    );
}

#[test]
fn tokenizer_splits_names_and_folds_plurals() {
    assert_eq!(tokenize("read_text_file"), ["read", "text", "file"]);
    assert_eq!(
        tokenize("get-structured-content"),
        ["get", "structured", "content"]
    );
    assert_eq!(tokenize("entityType"), ["entity", "type"]);
    assert_eq!(
        tokenize("Create the Entities in a graph"),
        ["create", "entity", "graph"]
    );
    assert_eq!(
        tokenize("files address status"),
        ["file", "address", "status"]
    );
}

#[test]
fn bm25_prefers_rare_terms_and_short_documents() {
    let index = Bm25Index::new([
        "create calendar event with attendees and a long description of many words here",
        "create calendar event",
        "delete calendar event",
        "send email message",
    ]);
    let hits = index.search("create event");
    let order: Vec<usize> = hits.iter().map(|(position, _)| *position).collect();
    assert_eq!(
        order,
        [1, 0, 2],
        "short exact match first, then the long one, then the partial"
    );
    let hits = index.search("email calendar");
    assert_eq!(
        hits[0].0, 3,
        "the rare term `email` outweighs the common `calendar`: {hits:?}"
    );
    assert!(index.search("unrelated").is_empty());
}

#[tokio::test]
async fn same_namespace_hits_coalesce_in_first_seen_order() {
    let search = ToolSearchExecutor::new(&[
        deferred(namespaced(
            "mcp__mail__",
            "send_mail",
            "Send a mail message to a contact",
        )),
        deferred(function("contact_lookup", "Find a contact")),
        deferred(namespaced(
            "mcp__mail__",
            "read_mail",
            "Read mail from a contact",
        )),
        deferred(namespaced(
            "mcp__crm__",
            "contact_update",
            "Update a contact",
        )),
    ]);
    let tools = run(&search, r#"{"query":"send mail contact"}"#)
        .await
        .unwrap();
    let kinds: Vec<(&str, &str)> = tools
        .iter()
        .map(|tool| {
            (
                tool["type"].as_str().unwrap(),
                tool["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(kinds[0], ("namespace", "mcp__mail__"));
    assert_eq!(
        kinds
            .iter()
            .filter(|(_, name)| *name == "mcp__mail__")
            .count(),
        1
    );
    let members: Vec<&str> = tools[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["send_mail", "read_mail"]);
    assert_eq!(names(&tools).len(), 4);
}

#[test]
fn rebuilds_only_when_the_deferred_specs_change() {
    let tools = vec![deferred(function("alpha", "first"))];
    let search = ToolSearchExecutor::new(&tools);
    assert!(!search.rebuild_if_changed(&tools));
    let more = vec![
        deferred(function("alpha", "first")),
        deferred(function("beta", "second")),
    ];
    assert!(search.rebuild_if_changed(&more));
    assert_eq!(search.indexed_count(), 2);
}

#[tokio::test]
async fn finds_real_deferred_mcp_tools() {
    use crate::mcp::{McpConnectionManager, McpManagerOptions, McpServerConfig, McpToolDeferral};
    let bin = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/mcp-servers/node_modules/.bin")
            .join(name);
        assert!(
            path.exists(),
            "{} is missing: run `npm ci --prefix tests/mcp-servers`",
            path.display()
        );
        path.to_string_lossy().into_owned()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut memory = McpServerConfig::new(bin("mcp-server-memory"), Vec::<String>::new());
    memory.env.insert(
        "MEMORY_FILE_PATH".into(),
        dir.path().join("m.jsonl").to_string_lossy().into_owned(),
    );
    let options = McpManagerOptions {
        servers: [
            (
                "fs".to_owned(),
                McpServerConfig::new(bin("mcp-server-filesystem"), [dir.path().to_string_lossy()]),
            ),
            ("memory".to_owned(), memory),
        ]
        .into(),
        deferral: McpToolDeferral::Always,
        ..McpManagerOptions::default()
    };
    let manager = McpConnectionManager::start(options).await.unwrap();
    assert!(
        manager.startup_failures().is_empty(),
        "{:?}",
        manager.startup_failures()
    );
    let search = ToolSearchExecutor::new(&manager.executors());
    assert_eq!(search.indexed_count(), 23);

    let tools = run(&search, r#"{"query":"directory tree","limit":1}"#)
        .await
        .unwrap();
    assert_eq!(names(&tools), ["mcp__fs__directory_tree"]);

    let tools = run(
        &search,
        r#"{"query":"knowledge graph entities relations","limit":4}"#,
    )
    .await
    .unwrap();
    assert_eq!(
        tools.len(),
        1,
        "all hits come from the memory server: {tools:?}"
    );
    assert_eq!(tools[0]["name"], "mcp__memory__");
    assert_eq!(tools[0]["tools"].as_array().unwrap().len(), 4);
    assert!(
        tools[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| tool["defer_loading"] == true)
    );
}
