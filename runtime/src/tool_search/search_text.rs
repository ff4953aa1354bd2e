//! What `tool_search` indexes for a tool, derived from its spec (spec runtime §10): names
//! (also with `_` as spaces), namespace and its description, descriptions, and the schema's
//! property names and descriptions, recursively.

use serde_json::Value;

use crate::tool::ToolSpec;

/// The searchable text of `spec`.
pub(crate) fn search_text(spec: &ToolSpec) -> String {
    let mut parts = Vec::new();
    push_spec(spec, &mut parts);
    parts.join(" ")
}

fn push_spec(spec: &ToolSpec, parts: &mut Vec<String>) {
    match spec {
        ToolSpec::Namespace {
            name,
            description,
            tools,
        } => {
            parts.push(name.clone());
            parts.push(description.clone());
            for tool in tools {
                push_spec(tool, parts);
            }
        }
        ToolSpec::Function {
            name,
            description,
            parameters,
            ..
        } => {
            parts.push(name.clone());
            parts.push(description.clone());
            push_schema(parameters, parts, 0);
        }
        ToolSpec::Freeform {
            name, description, ..
        } => {
            parts.push(name.clone());
            parts.push(description.clone());
        }
        ToolSpec::ToolSearch { .. } => {}
    }
}

/// Deep enough for real schemas, bounded against pathological ones.
const MAX_SCHEMA_DEPTH: usize = 8;

fn push_schema(schema: &Value, parts: &mut Vec<String>, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    for key in ["title", "description"] {
        if let Some(text) = object.get(key).and_then(Value::as_str) {
            parts.push(text.to_owned());
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        let mut names: Vec<&String> = properties.keys().collect();
        names.sort();
        for name in names {
            parts.push(name.clone());
            push_schema(&properties[name], parts, depth + 1);
        }
    }
    if let Some(items) = object.get("items") {
        push_schema(items, parts, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for variant in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            push_schema(variant, parts, depth + 1);
        }
    }
}
