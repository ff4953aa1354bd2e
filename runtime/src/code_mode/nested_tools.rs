//! The nested-tool catalog of code mode: which registry tools become `tools.*` functions, under
//! which JS names, with which augmented descriptions (spec code-mode §5.1, §5.4).

use std::collections::BTreeMap;
use std::sync::Arc;

use codemode_bridge::{ToolDefinition, ToolKind};

use super::description::NamespaceDescription;
use super::naming::{JsNameAllocator, is_code_mode_tool};
use super::options::CodeModeOptions;
use crate::declarations::augment_tool_definition;
use crate::tool::{ToolExecutor, ToolExposure, ToolSpec};

/// Every nested tool of a step, ready for a cell and for the exec description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NestedToolCatalog {
    /// All nested tools in registry order, augmented: what a cell gets (`tools`, `ALL_TOOLS`).
    pub tools: Vec<ToolDefinition>,
    /// Parallel to `tools`: whether each one is Deferred (reachable through `ALL_TOOLS` only).
    deferred: Vec<bool>,
    /// Namespace headings from namespace specs, keyed by registry namespace.
    pub namespaces: BTreeMap<String, NamespaceDescription>,
}

impl NestedToolCatalog {
    /// Builds the catalog from executors in registry order: only Direct and Deferred tools;
    /// never `exec`/`wait`; excluded and direct-only namespaces left out; the first tool to
    /// claim a JS name wins.
    pub fn build<'a>(
        executors: impl IntoIterator<Item = &'a Arc<dyn ToolExecutor>>,
        options: &CodeModeOptions,
    ) -> Self {
        let mut catalog = Self::default();
        let mut names = JsNameAllocator::default();
        for executor in executors {
            let exposure = executor.exposure();
            if !exposure.is_available_in_code_mode() {
                continue;
            }
            let tool_name = executor.tool_name();
            if is_code_mode_tool(&tool_name) {
                continue;
            }
            if let Some(namespace) = tool_name.namespace.as_deref()
                && (options.excluded_tool_namespaces.contains(namespace)
                    || options.direct_only_tool_namespaces.contains(namespace))
            {
                continue;
            }
            let spec = executor.spec();
            if let (Some(namespace), ToolSpec::Namespace { description, .. }) =
                (tool_name.namespace.as_deref(), &spec)
            {
                catalog
                    .namespaces
                    .entry(namespace.to_owned())
                    .or_insert_with(|| NamespaceDescription {
                        name: namespace_heading(namespace),
                        description: description.clone(),
                    });
            }
            let Some((kind, description, input_schema, output_schema)) = describe(spec) else {
                continue;
            };
            let Some(name) = names.claim(&tool_name) else {
                continue;
            };
            catalog.tools.push(augment_tool_definition(ToolDefinition {
                name,
                tool_name,
                description,
                kind,
                input_schema,
                output_schema,
            }));
            catalog.deferred.push(exposure == ToolExposure::Deferred);
        }
        catalog
    }

    /// The Direct tools (described in code-mode-only mode).
    pub fn direct_tools(&self) -> Vec<ToolDefinition> {
        self.select(false)
    }

    /// The Deferred tools (callable and in `ALL_TOOLS`, not described).
    pub fn deferred_tools(&self) -> Vec<ToolDefinition> {
        self.select(true)
    }

    /// The kind of the nested tool named `js_name`, if any.
    pub fn kind_of(&self, js_name: &str) -> Option<ToolKind> {
        self.tools
            .iter()
            .find(|tool| tool.name == js_name)
            .map(|tool| tool.kind)
    }

    fn select(&self, deferred: bool) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .zip(&self.deferred)
            .filter(|(_, d)| **d == deferred)
            .map(|(t, _)| t.clone())
            .collect()
    }
}

type Described = (
    ToolKind,
    String,
    Option<serde_json::Value>,
    Option<serde_json::Value>,
);

/// Kind, description and schemas of a nested tool's spec; `None` for specs that cannot be
/// called with one argument (tool search, empty namespaces).
fn describe(spec: ToolSpec) -> Option<Described> {
    match spec {
        ToolSpec::Function {
            description,
            parameters,
            output_schema,
            ..
        } => Some((
            ToolKind::Function,
            description,
            Some(parameters),
            output_schema,
        )),
        ToolSpec::Freeform { description, .. } => {
            Some((ToolKind::Freeform, description, None, None))
        }
        ToolSpec::Namespace { tools, .. } => tools.into_iter().next().and_then(describe),
        _ => None,
    }
}

/// `mcp__sample__` → `mcp__sample`: namespaces carry their own trailing delimiter.
fn namespace_heading(namespace: &str) -> String {
    match namespace.trim_end_matches('_') {
        "" => namespace.to_owned(),
        trimmed => trimmed.to_owned(),
    }
}

#[cfg(test)]
mod tests;
