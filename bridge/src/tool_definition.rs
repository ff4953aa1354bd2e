//! How a nested tool is described to a cell.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A tool's registry name: an optional namespace plus a name (spec runtime §1.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolName {
    /// The name within its namespace.
    pub name: String,
    /// The namespace; `None` is the default `functions` namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ToolName {
    /// A tool in the default namespace.
    pub fn plain(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: None,
        }
    }

    /// A tool in `namespace`.
    pub fn namespaced(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: Some(namespace.into()),
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) if !ns.is_empty() => write!(f, "{ns}.{}", self.name),
            _ => f.write_str(&self.name),
        }
    }
}

/// Whether a tool takes JSON arguments or a raw string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// JSON object arguments.
    Function,
    /// Free-form string input (for example `apply_patch`).
    Freeform,
}

/// One nested tool as a cell sees it: `tools[name]` and an `ALL_TOOLS` entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The normalized JavaScript identifier (`tools[name]`).
    pub name: String,
    /// The registry name the runtime dispatches to.
    pub tool_name: ToolName,
    /// The augmented description (with its TypeScript declaration).
    pub description: String,
    /// Function or freeform.
    pub kind: ToolKind,
    /// JSON Schema of the input, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<serde_json::Value>,
    /// JSON Schema of the output, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
}
