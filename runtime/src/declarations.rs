//! JSON Schema → TypeScript declarations for nested code-mode tools (spec code-mode §1.2).
//!
//! Every nested tool's description is augmented with a `declare const tools: { … }` block so
//! the model knows the exact argument and result shapes of `tools.<name>(…)`. The same text is
//! what `ALL_TOOLS[i].description` carries. Rendering is total: a schema we cannot express
//! becomes `unknown`, and recursive local `$ref`s are cut off after two expansions per path.

use std::collections::HashMap;

use codemode_bridge::{ToolDefinition, ToolKind};
use serde_json::{Map, Value};

/// How many times one local `$ref` may be expanded along a single path before it renders as
/// `unknown`: enough to show one level of a recursive shape, finite for any schema.
const MAX_REF_EXPANSIONS_PER_PATH: usize = 2;

/// Keywords that make the siblings of a `$ref` worth intersecting with it.
const RENDERABLE_KEYWORDS: [&str; 11] = [
    "const",
    "enum",
    "anyOf",
    "oneOf",
    "allOf",
    "type",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "prefixItems",
];

/// The MCP result types referenced by `CallToolResult<…>` declarations, modeled on the MCP
/// draft schema. Emitted once per exec description, in code-mode-only mode.
pub const SHARED_MCP_TYPES: &str = r#"type Role = "user" | "assistant";
type MetaObject = { [key: string]: unknown };
type Annotations = {
  audience?: Role[];
  priority?: number;
  lastModified?: string;
};
type Icon = {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
};
type TextResourceContents = {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: MetaObject;
};
type BlobResourceContents = {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: MetaObject;
};
type TextContent = {
  type: "text";
  text: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ImageContent = {
  type: "image";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type AudioContent = {
  type: "audio";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ResourceLink = {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  icons?: Icon[];
  annotations?: Annotations;
  _meta?: MetaObject;
};
type EmbeddedResource = {
  type: "resource";
  resource: TextResourceContents | BlobResourceContents;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ContentBlock =
  | TextContent
  | ImageContent
  | AudioContent
  | ResourceLink
  | EmbeddedResource;
type CallToolResult<TStructured = { [key: string]: unknown }> = {
  content: ContentBlock[];
  structuredContent?: TStructured;
  isError?: boolean;
  _meta?: MetaObject;
  [key: string]: unknown;
};"#;

/// Renders a JSON Schema as a TypeScript type (`true` → `unknown`, objects sorted by key,
/// local `$ref`s expanded at most twice per path).
pub fn render_json_schema_to_typescript(schema: &Value) -> String {
    Renderer {
        root: schema,
        expansions: HashMap::new(),
    }
    .render(schema)
}

/// When `output_schema` describes an MCP `CallToolResult` (`content`: array of objects,
/// `isError`: boolean, `_meta`: object), the schema of its `structuredContent` (`true` when
/// it has none).
pub fn mcp_structured_content_schema(output_schema: Option<&Value>) -> Option<&Value> {
    const ANY: &Value = &Value::Bool(true);
    let properties = output_schema?.get("properties")?.as_object()?;
    let type_of = |key: &str| {
        properties
            .get(key)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
    };
    let items_type = properties
        .get("content")
        .and_then(|s| s.get("items"))
        .and_then(|s| s.get("type"));
    let is_mcp = type_of("content") == Some("array")
        && items_type.and_then(Value::as_str) == Some("object")
        && type_of("isError") == Some("boolean")
        && type_of("_meta") == Some("object");
    is_mcp.then(|| properties.get("structuredContent").unwrap_or(ANY))
}

/// Whether a tool's result is declared as `CallToolResult` (and so needs [`SHARED_MCP_TYPES`]).
pub fn has_mcp_output(definition: &ToolDefinition) -> bool {
    mcp_structured_content_schema(definition.output_schema.as_ref()).is_some()
}

/// The TypeScript type a tool's promise resolves with.
pub fn output_type(output_schema: Option<&Value>) -> String {
    if let Some(structured) = mcp_structured_content_schema(output_schema) {
        return match render_json_schema_to_typescript(structured).as_str() {
            "unknown" => "CallToolResult".to_owned(),
            rendered => format!("CallToolResult<{rendered}>"),
        };
    }
    output_schema.map_or_else(|| "unknown".to_owned(), render_json_schema_to_typescript)
}

/// One member of `declare const tools: { … }`: `name(args: In): Promise<Out>;`, or
/// `name(input: string): …` for a freeform tool. `definition.name` is the JS identifier.
pub fn tool_declaration(definition: &ToolDefinition) -> String {
    let (param, input) = match definition.kind {
        ToolKind::Function => (
            "args",
            definition
                .input_schema
                .as_ref()
                .map_or_else(|| "unknown".to_owned(), render_json_schema_to_typescript),
        ),
        ToolKind::Freeform => ("input", "string".to_owned()),
    };
    let output = output_type(definition.output_schema.as_ref());
    format!("{}({param}: {input}): Promise<{output}>;", definition.name)
}

/// `description`, a blank line, then `exec tool declaration:` and a TS fence declaring the
/// tool (spec code-mode §1.2): what `ALL_TOOLS[i].description` holds.
pub fn augmented_description(definition: &ToolDefinition) -> String {
    format!(
        "{}\n\nexec tool declaration:\n```ts\ndeclare const tools: {{ {} }};\n```",
        definition.description,
        tool_declaration(definition)
    )
}

/// The definition with its description replaced by [`augmented_description`].
pub fn augment_tool_definition(mut definition: ToolDefinition) -> ToolDefinition {
    definition.description = augmented_description(&definition);
    definition
}

/// Renders one schema document; tracks how often each local `$ref` is open on the current path.
struct Renderer<'a> {
    root: &'a Value,
    expansions: HashMap<String, usize>,
}

impl Renderer<'_> {
    fn render(&mut self, schema: &Value) -> String {
        match schema {
            Value::Bool(true) => "unknown".to_owned(),
            Value::Bool(false) => "never".to_owned(),
            Value::Object(map) => self.render_map(map),
            _ => "unknown".to_owned(),
        }
    }

    fn render_map(&mut self, map: &Map<String, Value>) -> String {
        if map.contains_key("$ref") {
            return self.render_ref(map);
        }
        if let Some(value) = map.get("const") {
            return literal(value);
        }
        if let Some(values) = non_empty_array(map, "enum") {
            return values.iter().map(literal).collect::<Vec<_>>().join(" | ");
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(variants) = non_empty_array(map, key) {
                return self.render_all(variants).join(" | ");
            }
        }
        if let Some(variants) = non_empty_array(map, "allOf") {
            return self.render_all(variants).join(" & ");
        }
        match map.get("type") {
            Some(Value::String(kind)) => return self.render_type(map, kind),
            Some(Value::Array(kinds)) => {
                let rendered: Vec<String> = kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|kind| self.render_type(map, kind))
                    .collect();
                if !rendered.is_empty() {
                    return rendered.join(" | ");
                }
            }
            _ => {}
        }
        if ["properties", "additionalProperties", "required"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            return self.render_object(map);
        }
        if map.contains_key("items") || map.contains_key("prefixItems") {
            return self.render_array(map);
        }
        "unknown".to_owned()
    }

    fn render_all(&mut self, schemas: &[Value]) -> Vec<String> {
        schemas.iter().map(|schema| self.render(schema)).collect()
    }

    fn render_type(&mut self, map: &Map<String, Value>, kind: &str) -> String {
        match kind {
            "string" => "string".to_owned(),
            "number" | "integer" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => self.render_array(map),
            "object" => self.render_object(map),
            _ => "unknown".to_owned(),
        }
    }

    fn render_ref(&mut self, map: &Map<String, Value>) -> String {
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.expand_local_ref(r));
        let referenced = target.unwrap_or_else(|| "unknown".to_owned());
        let siblings: Map<String, Value> = map
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "$ref" | "$defs" | "definitions"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !RENDERABLE_KEYWORDS
            .iter()
            .any(|k| siblings.contains_key(*k))
        {
            return referenced;
        }
        let sibling_type = self.render_map(&siblings);
        match (referenced.as_str(), sibling_type.as_str()) {
            ("unknown", _) => sibling_type,
            (_, "unknown") => referenced,
            _ => format!("({referenced}) & ({sibling_type})"),
        }
    }

    /// Renders the target of `#/…` (JSON-pointer escapes decoded), or `unknown` once the same
    /// pointer is already open twice on this path. `None` for non-local or dangling refs.
    fn expand_local_ref(&mut self, reference: &str) -> Option<String> {
        let pointer = reference.strip_prefix('#')?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return None;
        }
        let open = self.expansions.get(pointer).copied().unwrap_or(0);
        if open >= MAX_REF_EXPANSIONS_PER_PATH {
            return Some("unknown".to_owned());
        }
        let root = self.root;
        let target = if pointer.is_empty() {
            Some(root)
        } else {
            root.pointer(pointer)
        }?;
        self.expansions.insert(pointer.to_owned(), open + 1);
        let rendered = self.render(target);
        if open == 0 {
            self.expansions.remove(pointer);
        } else {
            self.expansions.insert(pointer.to_owned(), open);
        }
        Some(rendered)
    }

    fn render_array(&mut self, map: &Map<String, Value>) -> String {
        if let Some(items) = map.get("items") {
            return format!("Array<{}>", self.render(items));
        }
        if let Some(items) = non_empty_array(map, "prefixItems") {
            return format!("[{}]", self.render_all(items).join(", "));
        }
        "unknown[]".to_owned()
    }

    fn render_object(&mut self, map: &Map<String, Value>) -> String {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map_or_else(Vec::new, |r| r.iter().filter_map(Value::as_str).collect());
        let empty = Map::new();
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut sorted: Vec<(&String, &Value)> = properties.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let multiline = sorted
            .iter()
            .any(|(_, value)| description_of(value).is_some());

        let mut members = Vec::with_capacity(sorted.len() + 1);
        for (name, value) in sorted {
            if multiline {
                for line in description_of(value).into_iter().flat_map(str::lines) {
                    let line = line.trim();
                    if !line.is_empty() {
                        members.push(format!("// {line}"));
                    }
                }
            }
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            members.push(format!(
                "{}{optional}: {};",
                property_key(name),
                self.render(value)
            ));
        }
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => members.push("[key: string]: unknown;".to_owned()),
            Some(schema) => members.push(format!("[key: string]: {};", self.render(schema))),
            None if properties.is_empty() => members.push("[key: string]: unknown;".to_owned()),
            None => {}
        }

        if multiline {
            let body: Vec<String> = members.iter().map(|m| format!("  {m}")).collect();
            format!("{{\n{}\n}}", body.join("\n"))
        } else if members.is_empty() {
            "{}".to_owned()
        } else {
            format!("{{ {} }}", members.join(" "))
        }
    }
}

fn non_empty_array<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Vec<Value>> {
    map.get(key)
        .and_then(Value::as_array)
        .filter(|values| !values.is_empty())
}

fn description_of(schema: &Value) -> Option<&str> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
}

/// A JSON value as a TypeScript literal type (JSON literals are valid TS types).
fn literal(value: &Value) -> String {
    value.to_string()
}

/// A property key: bare when it is a JS identifier, JSON-quoted otherwise.
fn property_key(name: &str) -> String {
    let mut chars = name.chars();
    let is_identifier = chars
        .next()
        .is_some_and(|c| c == '_' || c == '$' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c == '$' || c.is_ascii_alphanumeric());
    if is_identifier {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests;
