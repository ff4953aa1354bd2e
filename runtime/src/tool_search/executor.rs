//! `ToolSearchExecutor`: the client-executed `tool_search` tool over Deferred tools
//! (spec runtime §10).

use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::bm25::Bm25Index;
use super::output::ToolSearchOutput;
use super::search_text::search_text;
use crate::tool::{
    FunctionCallError, ToolExecutor, ToolExposure, ToolInvocation, ToolName, ToolOutput,
    ToolPayload, ToolSpec,
};

/// Results returned when the call names no `limit`.
pub const TOOL_SEARCH_DEFAULT_LIMIT: usize = 8;
/// The tool's name.
pub const TOOL_SEARCH_TOOL_NAME: &str = "tool_search";

/// One searchable tool: its index text and the spec a hit loads.
#[derive(Debug, Clone, PartialEq)]
struct SearchEntry {
    text: String,
    source: String,
    source_description: String,
    spec: ToolSpec,
}

#[derive(Debug, Default)]
struct SearchIndex {
    entries: Vec<SearchEntry>,
    bm25: Bm25Index,
}

/// Searches the Deferred tools it was built from and returns loadable specs.
#[derive(Debug, Default)]
pub struct ToolSearchExecutor {
    index: RwLock<Arc<SearchIndex>>,
}

impl ToolSearchExecutor {
    /// An index over the Deferred tools among `tools` (others are ignored).
    pub fn new(tools: &[Arc<dyn ToolExecutor>]) -> Self {
        let executor = Self::default();
        executor.rebuild_if_changed(tools);
        executor
    }

    /// Re-indexes when the Deferred tools' specs differ from the indexed ones; returns
    /// whether it rebuilt.
    pub fn rebuild_if_changed(&self, tools: &[Arc<dyn ToolExecutor>]) -> bool {
        let entries: Vec<SearchEntry> = tools
            .iter()
            .filter(|tool| tool.exposure() == ToolExposure::Deferred)
            .map(|tool| entry(tool.spec()))
            .collect();
        let mut index = self
            .index
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if index.entries == entries {
            return false;
        }
        let bm25 = Bm25Index::new(entries.iter().map(|entry| entry.text.as_str()));
        *index = Arc::new(SearchIndex { entries, bm25 });
        true
    }

    /// Number of indexed tools.
    pub fn indexed_count(&self) -> usize {
        self.current().bm25.len()
    }

    fn current(&self) -> Arc<SearchIndex> {
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The top `limit` hits for `query` as loadable specs, same-name namespaces merged in
    /// first-seen order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolSpec> {
        let index = self.current();
        let hits = index.bm25.search(query);
        let mut specs: Vec<ToolSpec> = Vec::new();
        for (position, _score) in hits.into_iter().take(limit) {
            let Some(found) = index.entries.get(position) else {
                continue;
            };
            merge(&mut specs, found.spec.clone());
        }
        specs
    }

    /// The `# Tool discovery` description listing the searchable sources.
    fn description(&self) -> String {
        let index = self.current();
        let mut sources: Vec<String> = Vec::new();
        for entry in &index.entries {
            let line = if entry.source_description.is_empty() {
                format!("- {}", entry.source)
            } else {
                format!("- {}: {}", entry.source, entry.source_description)
            };
            if !sources.contains(&line) {
                sources.push(line);
            }
        }
        let sources = if sources.is_empty() {
            "None currently enabled.".to_owned()
        } else {
            sources.join("\n")
        };
        format!(
            "# Tool discovery\n\n\
             Searches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n\
             Sources:\n{sources}\n\n\
             To discover MCP tools, use `tool_search` rather than `list_mcp_resources`."
        )
    }
}

/// The index entry of one Deferred tool; hits load it with `defer_loading: true`.
fn entry(spec: ToolSpec) -> SearchEntry {
    let (source, source_description) = match &spec {
        ToolSpec::Namespace {
            name, description, ..
        } => (name.clone(), description.clone()),
        other => (other.name().to_owned(), String::new()),
    };
    SearchEntry {
        text: search_text(&spec),
        source,
        source_description,
        spec: loadable(spec),
    }
}

fn loadable(spec: ToolSpec) -> ToolSpec {
    match spec {
        ToolSpec::Function {
            name,
            description,
            strict,
            parameters,
            ..
        } => ToolSpec::Function {
            name,
            description,
            strict,
            defer_loading: Some(true),
            parameters,
            output_schema: None,
        },
        ToolSpec::Namespace {
            name,
            description,
            tools,
        } => ToolSpec::Namespace {
            name,
            description,
            tools: tools.into_iter().map(loadable).collect(),
        },
        other => other,
    }
}

fn merge(specs: &mut Vec<ToolSpec>, spec: ToolSpec) {
    if let ToolSpec::Namespace { name, tools, .. } = &spec {
        let existing = specs.iter_mut().find_map(|candidate| match candidate {
            ToolSpec::Namespace {
                name: existing,
                tools: members,
                ..
            } if existing == name => Some(members),
            _ => None,
        });
        if let Some(members) = existing {
            for tool in tools {
                if !members.contains(tool) {
                    members.push(tool.clone());
                }
            }
            return;
        }
    }
    if !specs.contains(&spec) {
        specs.push(spec);
    }
}

/// `{query, limit?}` validated as spec runtime §10 says.
fn parse_request(arguments: &str) -> Result<(String, usize), FunctionCallError> {
    let respond = |text: String| FunctionCallError::RespondToModel(text);
    let value: Value = serde_json::from_str(arguments)
        .map_err(|error| respond(format!("failed to parse tool_search arguments: {error}")))?;
    let query = match value.get("query") {
        Some(Value::String(query)) => query.trim().to_owned(),
        Some(_) => {
            return Err(respond(
                "failed to parse tool_search arguments: query must be a string".to_owned(),
            ));
        }
        None => {
            return Err(respond(
                "failed to parse tool_search arguments: missing field `query`".to_owned(),
            ));
        }
    };
    if query.is_empty() {
        return Err(respond("query must not be empty".to_owned()));
    }
    let limit = match value.get("limit") {
        None | Some(Value::Null) => TOOL_SEARCH_DEFAULT_LIMIT,
        Some(limit) => match limit.as_f64() {
            Some(number) if number.is_finite() && number >= 1.0 => number as usize,
            Some(_) => return Err(respond("limit must be greater than zero".to_owned())),
            None => {
                return Err(respond(
                    "failed to parse tool_search arguments: limit must be a number".to_owned(),
                ));
            }
        },
    };
    Ok((query, limit))
}

impl ToolExecutor for ToolSearchExecutor {
    fn tool_name(&self) -> ToolName {
        ToolName::plain(TOOL_SEARCH_TOOL_NAME)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::ToolSearch {
            execution: "client".to_owned(),
            description: self.description(),
            parameters: json!({
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "number"}},
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    /// The model's discovery tool; code mode enumerates `ALL_TOOLS` instead.
    fn exposure(&self) -> ToolExposure {
        ToolExposure::DirectModelOnly
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        true
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            let (ToolPayload::ToolSearch { arguments } | ToolPayload::Function { arguments }) =
                &invocation.payload
            else {
                return Err(FunctionCallError::Fatal(
                    "tool_search received a custom tool payload".to_owned(),
                ));
            };
            let (query, limit) = parse_request(arguments)?;
            let tools = self.search(&query, limit);
            tracing::debug!(query, limit, hits = tools.len(), "tool_search");
            Ok(Box::new(ToolSearchOutput::new(&tools)) as Box<dyn ToolOutput>)
        })
    }
}
