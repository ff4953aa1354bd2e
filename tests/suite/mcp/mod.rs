//! Real npm MCP servers driven from JavaScript cells through the whole engine: `Session` →
//! `exec` → V8 cell → `tools.mcp__…` → registry → MCP client → server process (issue 6).
//! The servers are pinned in `tests/mcp-servers` (`npm ci --prefix tests/mcp-servers`).

mod faults;
mod results;
mod typescript;

use codemode_tests::{ExecOutput, everything_server, mcp_session};
use serde_json::Value;

/// Runs `source` in one exec and asserts it completed.
async fn exec_completed(session: &codemode_runtime::session::Session, source: &str) -> ExecOutput {
    let output = ExecOutput::of(&session.exec(source).await);
    output.assert_completed();
    output
}

#[tokio::test]
async fn mcp_tools_are_functions_on_the_tools_object() {
    let session = mcp_session(vec![("everything", everything_server())]).await;
    let output = exec_completed(
        &session,
        r#"const keys = Object.keys(tools);
text(keys.includes("mcp__everything__echo"));
text(typeof tools.mcp__everything__echo);
text(typeof tools.mcp__everything__get_structured_content);
text(keys.filter((k) => k.startsWith("mcp__everything__")).every((k) => /^[A-Za-z0-9_$]+$/.test(k)));"#,
    )
    .await;
    assert_eq!(output.texts, ["true", "function", "function", "true"]);
    assert_eq!(output.item_type, "custom_tool_call_output");
}

#[tokio::test]
async fn all_tools_carries_augmented_descriptions_and_normalized_names() {
    let session = mcp_session(vec![("everything", everything_server())]).await;
    let output = exec_completed(
        &session,
        r#"const find = (name) => ALL_TOOLS.find((t) => t.name === name);
text(ALL_TOOLS.some((t) => t.name.includes("-")));
const structured = find("mcp__everything__get_structured_content");
text(structured.description);
text(find("mcp__everything__echo").description);
text(typeof tools[structured.name]);"#,
    )
    .await;
    let [dashed, structured, echo, callable] = output.texts.as_slice() else {
        panic!("{:?}", output.texts)
    };
    assert_eq!(dashed, "false", "no ALL_TOOLS name keeps a `-`");
    assert_eq!(callable, "function");
    assert!(structured.starts_with(
        "Returns structured content along with an output schema for client data validation\n\nexec tool declaration:\n```ts\ndeclare const tools: { mcp__everything__get_structured_content(args: "
    ), "{structured}");
    assert!(
        structured.contains(
            "): Promise<CallToolResult<{\n  // Weather conditions description\n  conditions: string;\n  // Humidity percentage\n  humidity: number;\n  // Temperature in celsius\n  temperature: number;\n}>>; };\n```"
        ),
        "the result type of a tool with an output schema is CallToolResult<structured>: {structured}"
    );
    assert!(
        echo.contains(
            "exec tool declaration:\n```ts\ndeclare const tools: { mcp__everything__echo(args: "
        ),
        "{echo}"
    );
    assert!(
        echo.ends_with("): Promise<CallToolResult>; };\n```"),
        "{echo}"
    );
}

#[tokio::test]
async fn fan_out_of_fifty_echo_calls_reaches_the_model_as_one_aggregate() {
    let session = mcp_session(vec![("everything", everything_server())]).await;
    let output = exec_completed(
        &session,
        r#"const results = await Promise.all(
  Array.from({ length: 50 }, (_, i) => tools.mcp__everything__echo({ message: "m" + i })),
);
const echoed = results.map((r) => r.content[0].text);
const distinct = new Set(echoed);
const expected = Array.from({ length: 50 }, (_, i) => "Echo: m" + i);
text(`${distinct.size} distinct, all present: ${expected.every((e) => distinct.has(e))}, errors: ${results.filter((r) => r.isError).length}`);"#,
    )
    .await;
    assert_eq!(output.texts, ["50 distinct, all present: true, errors: 0"]);
    let visible = output.item.to_string();
    assert!(
        !visible.contains("Echo: m"),
        "only the aggregate is model-visible: {visible}"
    );
}

/// The JSON value of a text the script printed with `text(JSON.stringify(…))`.
fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}
