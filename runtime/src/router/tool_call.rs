//! `build_tool_call`: which Responses API output items are tool calls (spec runtime §2.1).

use serde::Deserialize;
use serde_json::Value;

use crate::tool::{FunctionCallError, ToolName, ToolPayload, messages};

/// One call to execute: the registry name, the model's call id and the raw input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool to dispatch to.
    pub tool_name: ToolName,
    /// The id the output must answer.
    pub call_id: String,
    /// The raw input.
    pub payload: ToolPayload,
}

impl ToolCall {
    /// A `function_call` with raw JSON arguments.
    pub fn function(
        tool_name: ToolName,
        call_id: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            tool_name,
            call_id: call_id.into(),
            payload: ToolPayload::Function {
                arguments: arguments.into(),
            },
        }
    }

    /// A `custom_tool_call` with free-form input.
    pub fn custom(
        tool_name: ToolName,
        call_id: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        Self {
            tool_name,
            call_id: call_id.into(),
            payload: ToolPayload::Custom {
                input: input.into(),
            },
        }
    }
}

#[derive(Deserialize)]
struct FunctionCallItem {
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    arguments: String,
    call_id: String,
}

#[derive(Deserialize)]
struct CustomToolCallItem {
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    input: String,
    call_id: String,
}

#[derive(Deserialize)]
struct ToolSearchCallItem {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    execution: Option<String>,
    #[serde(default)]
    arguments: Value,
}

/// What a client tool search accepts; parsed here only to reject bad input early.
#[derive(Deserialize)]
#[allow(dead_code)] // Fields exist to be validated by serde.
struct ToolSearchArguments {
    query: String,
    #[serde(default)]
    limit: Option<f64>,
}

fn malformed(kind: &str, error: serde_json::Error) -> FunctionCallError {
    FunctionCallError::Fatal(format!("malformed {kind} item: {error}"))
}

/// Turns one completed Responses API output item into a call: `function_call`,
/// `custom_tool_call` and client `tool_search_call` (with a call id) are calls; every other
/// item, and server-executed tool search, is `Ok(None)`. Tool-search arguments that are not
/// `{query, limit?}` answer the model `failed to parse tool_search arguments: …`.
pub fn build_tool_call(item: &Value) -> Result<Option<ToolCall>, FunctionCallError> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => {
            let call =
                FunctionCallItem::deserialize(item).map_err(|e| malformed("function_call", e))?;
            Ok(Some(ToolCall {
                tool_name: ToolName::new(call.namespace, call.name),
                call_id: call.call_id,
                payload: ToolPayload::Function {
                    arguments: call.arguments,
                },
            }))
        }
        Some("custom_tool_call") => {
            let call = CustomToolCallItem::deserialize(item)
                .map_err(|e| malformed("custom_tool_call", e))?;
            Ok(Some(ToolCall {
                tool_name: ToolName::new(call.namespace, call.name),
                call_id: call.call_id,
                payload: ToolPayload::Custom { input: call.input },
            }))
        }
        Some("tool_search_call") => {
            let call = ToolSearchCallItem::deserialize(item)
                .map_err(|e| malformed("tool_search_call", e))?;
            let (Some(call_id), Some("client")) = (call.call_id, call.execution.as_deref()) else {
                return Ok(None);
            };
            // The API sends the arguments as an object; older streams sent a JSON string.
            let (arguments, parsed) = match call.arguments {
                Value::String(raw) => {
                    let parsed = serde_json::from_str::<ToolSearchArguments>(&raw);
                    (raw, parsed)
                }
                other => (other.to_string(), ToolSearchArguments::deserialize(other)),
            };
            parsed.map_err(|e| {
                FunctionCallError::RespondToModel(messages::tool_search_parse_failed(
                    &e.to_string(),
                ))
            })?;
            Ok(Some(ToolCall {
                tool_name: ToolName::plain("tool_search"),
                call_id,
                payload: ToolPayload::ToolSearch { arguments },
            }))
        }
        _ => Ok(None),
    }
}
