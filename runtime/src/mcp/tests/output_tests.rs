//! Argument parsing and result conversion without a server.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use crate::mcp::McpToolOutput;
use crate::mcp::executor::parse_arguments;
use crate::tool::ToolOutput;

#[test]
fn arguments_parse_like_codex() {
    assert_eq!(parse_arguments(""), Ok(None));
    assert_eq!(parse_arguments("  "), Ok(None));
    assert_eq!(parse_arguments("null"), Ok(None));
    assert_eq!(parse_arguments(r#"{"a":1}"#).unwrap().unwrap()["a"], 1);
    assert_eq!(
        parse_arguments("{"),
        Err("err: EOF while parsing an object at line 1 column 1".to_owned())
    );
    assert_eq!(
        parse_arguments("[1]"),
        Err("err: arguments must be a JSON object, got [1]".to_owned())
    );
}

#[test]
fn code_mode_result_drops_meta_and_result_type() {
    let mut result = CallToolResult::success(vec![ContentBlock::text("hi")]);
    result.meta = Some(serde_json::from_value(json!({"trace": "x"})).unwrap());
    let output = McpToolOutput::from_result(&result);
    assert_eq!(
        output.code_mode_result(),
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
    );
    assert_eq!(output.success(), Some(true));
}

#[test]
fn errors_have_one_text_block() {
    let output = McpToolOutput::error("tool call error: boom");
    assert_eq!(
        output.code_mode_result(),
        json!({"content": [{"type": "text", "text": "tool call error: boom"}], "isError": true})
    );
    assert_eq!(output.success(), Some(false));
    assert_eq!(output.model_text(), "tool call error: boom");
}
