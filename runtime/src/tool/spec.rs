//! `ToolSpec`: what the model is told about a tool, serialized as a Responses API `tools[]`
//! element.

use serde::{Deserialize, Serialize};

/// The `format` of a freeform (custom) tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreeformFormat {
    /// Always `grammar`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `lark` or `regex`.
    pub syntax: String,
    /// The grammar text.
    pub definition: String,
}

/// A tool as the model sees it; serializes to a valid Responses API tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolSpec {
    /// A JSON-arguments function.
    Function {
        /// Name.
        name: String,
        /// Description.
        description: String,
        /// Strict schema adherence.
        strict: bool,
        /// Deferred tools carry `defer_loading: true`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        defer_loading: Option<bool>,
        /// JSON Schema of the arguments.
        parameters: serde_json::Value,
        /// Output schema: kept in memory for declarations, never serialized.
        #[serde(skip)]
        output_schema: Option<serde_json::Value>,
    },
    /// A namespace of function tools.
    Namespace {
        /// Name.
        name: String,
        /// Description.
        description: String,
        /// Member function specs.
        tools: Vec<ToolSpec>,
    },
    /// Client-executed tool search.
    ToolSearch {
        /// Always `client`.
        execution: String,
        /// Description.
        description: String,
        /// JSON Schema of `{query, limit?}`.
        parameters: serde_json::Value,
    },
    /// A freeform tool.
    #[serde(rename = "custom")]
    Freeform {
        /// Name.
        name: String,
        /// Description.
        description: String,
        /// Grammar.
        format: FreeformFormat,
    },
}

impl ToolSpec {
    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        match self {
            Self::Function { name, .. } | Self::Namespace { name, .. } | Self::Freeform { name, .. } => {
                name
            }
            Self::ToolSearch { .. } => "tool_search",
        }
    }
}
