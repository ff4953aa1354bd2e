//! Tool model tests: names, messages, outputs, and the Responses API shapes of specs and
//! output items (checked against the `openai` package's own types when available).

use std::process::Command;

use serde_json::{Value, json};

use super::*;
use crate::builtins::{UpdatePlanTool, ViewImageTool};

#[test]
fn tool_names_normalize_and_display_per_spec() {
    assert_eq!(
        ToolName::plain("x").with_default_namespace(),
        ToolName::namespaced("functions", "x")
    );
    assert_eq!(
        ToolName::namespaced("", "x").with_default_namespace(),
        ToolName::namespaced("functions", "x")
    );
    assert!(ToolName::namespaced("functions", "x").is_default_namespace());
    assert!(!ToolName::namespaced("mcp__s__", "x").is_default_namespace());
    assert_eq!(ToolName::namespaced("functions", "x").to_string(), "x");
    assert_eq!(
        ToolName::namespaced("mcp__server__", "tool").to_string(),
        "mcp__server__tool"
    );
    assert_eq!(
        ToolName::namespaced("extension/", "tool").to_string(),
        "extension/tool"
    );
    assert_eq!(ToolName::new(None, "x"), ToolName::plain("x"));
}

#[test]
fn model_visible_strings_are_pinned() {
    let name = ToolName::namespaced("mcp__s__", "t");
    assert_eq!(
        messages::unsupported_call(&name),
        "unsupported call: mcp__s__t"
    );
    assert_eq!(
        messages::unsupported_custom_tool_call(&ToolName::plain("p")),
        "unsupported custom tool call: p"
    );
    assert_eq!(
        messages::incompatible_payload(&ToolName::plain("p")),
        "tool p invoked with incompatible payload"
    );
    assert_eq!(
        messages::pre_tool_use_blocked_command("no rm", "rm -rf /"),
        "Command blocked by PreToolUse hook: no rm. Command: rm -rf /"
    );
    assert_eq!(
        messages::pre_tool_use_blocked_tool("nope", "mcp__s__t"),
        "Tool call blocked by PreToolUse hook: nope. Tool: mcp__s__t"
    );
    assert_eq!(
        messages::POST_TOOL_USE_BLOCKED,
        "PostToolUse hook blocked the tool result"
    );
    assert_eq!(messages::aborted_by_user(0.0), "aborted by user after 0.1s");
    assert_eq!(
        messages::aborted_by_user(0.04),
        "aborted by user after 0.1s"
    );
    assert_eq!(
        messages::aborted_by_user(2.345),
        "aborted by user after 2.3s"
    );
    assert_eq!(
        messages::tool_search_parse_failed("bad"),
        "failed to parse tool_search arguments: bad"
    );
    assert_eq!(messages::PLAN_UPDATED, "Plan updated");
}

fn function_payload() -> ToolPayload {
    ToolPayload::Function {
        arguments: "{}".to_owned(),
    }
}

fn custom_payload() -> ToolPayload {
    ToolPayload::Custom {
        input: "x".to_owned(),
    }
}

fn search_payload() -> ToolPayload {
    ToolPayload::ToolSearch {
        arguments: "{\"query\":\"q\"}".to_owned(),
    }
}

#[test]
fn text_outputs_keep_call_id_and_payload_kind() {
    let output = TextToolOutput::ok("hi");
    assert_eq!(
        serde_json::to_value(output.to_response_item("c1", &function_payload())).unwrap(),
        json!({"type": "function_call_output", "call_id": "c1", "output": "hi"})
    );
    assert_eq!(
        serde_json::to_value(output.to_response_item("c2", &custom_payload())).unwrap(),
        json!({"type": "custom_tool_call_output", "call_id": "c2", "output": "hi"})
    );
    assert_eq!(output.code_mode_result(), json!("hi"));
}

#[test]
fn content_items_collapse_one_text_and_join_for_code_mode() {
    let single = ContentItemsToolOutput::ok(vec![FunctionCallOutputContentItem::InputText {
        text: "only".to_owned(),
    }]);
    assert_eq!(
        serde_json::to_value(single.to_response_item("c", &function_payload())).unwrap()["output"],
        json!("only")
    );
    let many = ContentItemsToolOutput::ok(vec![
        FunctionCallOutputContentItem::InputText {
            text: "a".to_owned(),
        },
        FunctionCallOutputContentItem::InputText {
            text: String::new(),
        },
        FunctionCallOutputContentItem::InputImage {
            image_url: "data:image/png;base64,AA".to_owned(),
            detail: None,
        },
        FunctionCallOutputContentItem::InputText {
            text: "b".to_owned(),
        },
    ]);
    let item = serde_json::to_value(many.to_response_item("c", &function_payload())).unwrap();
    assert_eq!(item["output"].as_array().unwrap().len(), 4);
    assert_eq!(
        item["output"][2],
        json!({"type": "input_image", "image_url": "data:image/png;base64,AA"})
    );
    assert_eq!(
        many.code_mode_result(),
        json!("a\ndata:image/png;base64,AA\nb")
    );
}

#[test]
fn failure_response_maps_by_payload_kind() {
    assert_eq!(
        failure_response("c", &function_payload(), "bad"),
        ResponseInputItem::FunctionCallOutput {
            call_id: "c".to_owned(),
            output: json!("bad")
        }
    );
    assert_eq!(
        failure_response("c", &custom_payload(), "bad"),
        ResponseInputItem::CustomToolCallOutput {
            call_id: "c".to_owned(),
            output: json!("bad")
        }
    );
    assert_eq!(
        serde_json::to_value(failure_response("c", &search_payload(), "bad")).unwrap(),
        json!({"type": "tool_search_output", "call_id": "c", "status": "completed", "execution": "client", "tools": []})
    );
}

#[test]
fn aborted_output_shapes() {
    let aborted = AbortedToolOutput::after(0.0);
    assert_eq!(aborted.success(), None);
    assert_eq!(
        aborted.code_mode_result(),
        json!({"status": "aborted", "message": "aborted by user after 0.1s"})
    );
    assert_eq!(
        aborted.to_response_item("c", &function_payload()),
        ResponseInputItem::FunctionCallOutput {
            call_id: "c".to_owned(),
            output: json!("aborted by user after 0.1s")
        }
    );
    assert_eq!(
        aborted.to_response_item("c", &search_payload()),
        ResponseInputItem::tool_search_output("c", vec![])
    );
}

#[test]
fn hook_replaced_output_keeps_code_mode_result_typed() {
    let original = ToolSearchToolOutput {
        tools: vec![json!({"type": "function", "name": "f"})],
    };
    let replaced = HookReplacedToolOutput {
        text: "redacted".to_owned(),
        original: Box::new(original),
    };
    assert_eq!(replaced.success(), None);
    assert_eq!(replaced.model_text(), "redacted");
    assert_eq!(
        replaced.to_response_item("c", &function_payload()),
        ResponseInputItem::for_payload("c", &function_payload(), json!("redacted"))
    );
    assert_eq!(
        replaced.code_mode_result(),
        json!([{"type": "function", "name": "f"}])
    );
}

fn sample_specs() -> Vec<ToolSpec> {
    let params = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false});
    vec![
        ToolSpec::function("lookup", "Look something up.", params.clone()),
        ToolSpec::Function {
            name: "typed".to_owned(),
            description: "Has an output schema.".to_owned(),
            strict: true,
            defer_loading: None,
            parameters: params.clone(),
            output_schema: Some(json!({"type": "string"})),
        },
        ToolSpec::freeform(
            "apply_patch",
            "Patch files. FREEFORM tool.",
            "lark",
            "start: begin_patch hunk+ end_patch",
        ),
        ToolSpec::namespace(
            "mcp__cal__",
            vec![ToolSpec::function("create_event", "Create.", params.clone()).deferred()],
        ),
        ToolSpec::tool_search(
            "# Tool discovery",
            json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "number"}}, "required": ["query"], "additionalProperties": false}),
        ),
        crate::tool::ToolExecutor::spec(&UpdatePlanTool::new()),
        crate::tool::ToolExecutor::spec(&ViewImageTool::new()),
    ]
}

#[test]
fn tool_specs_serialize_to_responses_api_shapes() {
    let json = tools_json(&sample_specs());
    assert_eq!(
        json[0],
        json!({"type": "function", "name": "lookup", "description": "Look something up.", "strict": false,
               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false}})
    );
    assert!(
        json[1].get("output_schema").is_none(),
        "output_schema is never serialized"
    );
    assert_eq!(json[1]["strict"], json!(true));
    assert_eq!(
        json[2],
        json!({"type": "custom", "name": "apply_patch", "description": "Patch files. FREEFORM tool.",
               "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}})
    );
    assert_eq!(json[3]["type"], "namespace");
    assert_eq!(json[3]["description"], "Tools in the mcp__cal__ namespace.");
    assert_eq!(json[3]["tools"][0]["defer_loading"], json!(true));
    assert!(
        json[0].get("defer_loading").is_none(),
        "defer_loading only when set"
    );
    assert_eq!(json[4]["type"], "tool_search");
    assert_eq!(json[4]["execution"], "client");
    assert_eq!(sample_specs()[4].name(), "tool_search");
}

const VALIDATE_PY: &str = r#"
import json, sys
try:
    from typing import List
    from pydantic import ConfigDict, TypeAdapter
    from openai.types.responses import FunctionToolParam, ResponseInputItemParam, ToolParam
except Exception as error:
    print(f"SKIP: {error}")
    sys.exit(3)

strict = ConfigDict(extra="forbid")
tools = TypeAdapter(List[ToolParam], config=strict)
functions = TypeAdapter(List[FunctionToolParam], config=strict)
items = TypeAdapter(List[ResponseInputItemParam], config=strict)
data = json.load(sys.stdin)
tools.validate_python(data["tools"])
for tool in data["tools"]:
    if tool["type"] == "namespace":
        # Namespace members are a union with a lenient member; check them strictly on their own.
        functions.validate_python(tool["tools"])
items.validate_python(data["items"])
print("OK")
"#;

#[test]
fn tool_specs_and_outputs_validate_against_the_openai_python_types() {
    let image = ContentItemsToolOutput::ok(vec![
        FunctionCallOutputContentItem::InputText {
            text: "see".to_owned(),
        },
        FunctionCallOutputContentItem::InputImage {
            image_url: "data:image/png;base64,AA".to_owned(),
            detail: Some("original".to_owned()),
        },
    ]);
    let items = vec![
        TextToolOutput::ok("hi").to_response_item("c1", &function_payload()),
        TextToolOutput::ok("hi").to_response_item("c2", &custom_payload()),
        image.to_response_item("c3", &function_payload()),
        failure_response("c4", &search_payload(), "x"),
        ToolSearchToolOutput {
            tools: tools_json(&sample_specs()[..1]),
        }
        .to_response_item("c5", &search_payload()),
    ];
    let input = json!({"tools": tools_json(&sample_specs()), "items": items});
    let child = Command::new("python3")
        .args(["-c", VALIDATE_PY])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            println!("skipping: python3 is unavailable ({error})");
            return;
        }
    };
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.to_string().as_bytes()).unwrap();
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.code() == Some(3) {
        println!(
            "skipping: the openai Python package is unavailable ({})",
            stdout.trim()
        );
        return;
    }
    assert!(
        output.status.success() && stdout.trim() == "OK",
        "openai types rejected our JSON:\n{stdout}\n{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        serde_json::to_string_pretty(&input).unwrap()
    );
}

#[test]
fn code_mode_value_of_a_tool_search_output_is_its_tools() {
    let item =
        ResponseInputItem::tool_search_output("c", vec![json!({"type": "function", "name": "f"})]);
    assert_eq!(
        item.code_mode_value(),
        Value::Array(vec![json!({"type": "function", "name": "f"})])
    );
    assert_eq!(item.call_id(), "c");
}
