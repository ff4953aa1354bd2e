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
            Self::Function { name, .. }
            | Self::Namespace { name, .. }
            | Self::Freeform { name, .. } => name,
            Self::ToolSearch { .. } => "tool_search",
        }
    }
}

/// Default description of a namespace entry (spec runtime §1.1).
pub(crate) fn default_namespace_description(namespace: &str) -> String {
    format!("Tools in the {namespace} namespace.")
}

impl ToolSpec {
    /// A non-strict function tool.
    pub fn function(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self::Function {
            name: name.into(),
            description: description.into(),
            strict: false,
            defer_loading: None,
            parameters,
            output_schema: None,
        }
    }

    /// A freeform tool whose input follows a `lark` (or `regex`) grammar.
    pub fn freeform(
        name: impl Into<String>,
        description: impl Into<String>,
        syntax: impl Into<String>,
        definition: impl Into<String>,
    ) -> Self {
        Self::Freeform {
            name: name.into(),
            description: description.into(),
            format: FreeformFormat {
                kind: "grammar".to_owned(),
                syntax: syntax.into(),
                definition: definition.into(),
            },
        }
    }

    /// A namespace of function tools with the default description.
    pub fn namespace(name: impl Into<String>, tools: Vec<ToolSpec>) -> Self {
        let name = name.into();
        Self::Namespace {
            description: default_namespace_description(&name),
            name,
            tools,
        }
    }

    /// A client-executed `tool_search` tool.
    pub fn tool_search(description: impl Into<String>, parameters: serde_json::Value) -> Self {
        Self::ToolSearch {
            execution: "client".to_owned(),
            description: description.into(),
            parameters,
        }
    }

    /// The same spec marked `defer_loading: true` (functions and namespace members only).
    pub fn deferred(self) -> Self {
        match self {
            Self::Function {
                name,
                description,
                strict,
                parameters,
                output_schema,
                ..
            } => Self::Function {
                name,
                description,
                strict,
                defer_loading: Some(true),
                parameters,
                output_schema,
            },
            Self::Namespace {
                name,
                description,
                tools,
            } => Self::Namespace {
                name,
                description,
                tools: tools.into_iter().map(Self::deferred).collect(),
            },
            other => other,
        }
    }
}

/// The `tools` array of a Responses API request: each spec serialized in order.
pub fn tools_json(specs: &[ToolSpec]) -> Vec<serde_json::Value> {
    specs
        .iter()
        .map(|spec| serde_json::to_value(spec).expect("a ToolSpec always serializes to JSON"))
        .collect()
}
