use codemode_bridge::{CellId, ImageDetail};
use serde_json::json;

use super::*;

fn text(t: &str) -> ContentItem {
    ContentItem::text(t)
}

fn observation(
    status: ScriptStatus,
    items: Vec<ContentItem>,
    error_text: Option<&str>,
) -> Observation {
    Observation {
        status,
        content_items: items,
        error_text: error_text.map(str::to_owned),
        abandoned_tool_calls: 0,
    }
}

fn texts(output: &CodeModeOutput) -> Vec<String> {
    output
        .items()
        .iter()
        .map(|item| match item {
            FunctionCallOutputContentItem::InputText { text } => text.clone(),
            FunctionCallOutputContentItem::InputImage { image_url, .. } => {
                format!("<image {image_url}>")
            }
        })
        .collect()
}

#[test]
fn failed_script_keeps_earlier_output_and_appends_the_error() {
    let output = CodeModeOutput::render(
        observation(
            ScriptStatus::Failed,
            vec![text("before crash"), text("still before crash")],
            Some("Error: boom\n    at exec_main.mjs:1:60"),
        ),
        Duration::from_millis(120),
        10_000,
    );
    assert_eq!(
        texts(&output),
        [
            "Script failed\nWall time 0.1 seconds\nOutput:\n",
            "before crash",
            "still before crash",
            "Script error:\nError: boom\n    at exec_main.mjs:1:60"
        ]
    );
    assert_eq!(output.success(), Some(false));
}

#[test]
fn yielded_and_terminated_are_successes() {
    let running = CodeModeOutput::render(
        observation(
            ScriptStatus::Running(CellId::from_raw("abc")),
            vec![text("phase 1")],
            None,
        ),
        Duration::from_secs(10),
        10_000,
    );
    assert_eq!(
        texts(&running),
        [
            "Script running with cell ID abc\nWall time 10.0 seconds\nOutput:\n",
            "phase 1"
        ]
    );
    assert_eq!(running.success(), Some(true));
    let terminated = CodeModeOutput::render(
        observation(ScriptStatus::Terminated, vec![], None),
        Duration::ZERO,
        10,
    );
    assert_eq!(
        texts(&terminated),
        ["Script terminated\nWall time 0.0 seconds\nOutput:\n"]
    );
    assert_eq!(terminated.success(), Some(true));
}

#[test]
fn missing_cell_renders_as_a_failed_script() {
    let output = CodeModeOutput::render(
        observation(
            ScriptStatus::Failed,
            vec![],
            Some(&messages::cell_not_found(&CellId::from_raw("999999"))),
        ),
        Duration::ZERO,
        10_000,
    );
    assert_eq!(
        texts(&output)[1],
        "Script error:\nexec cell 999999 not found"
    );
    assert_eq!(output.success(), Some(false));
}

#[test]
fn output_is_truncated_to_the_budget_but_the_header_is_not() {
    let output = CodeModeOutput::render(
        observation(ScriptStatus::Completed, vec![text(&"x".repeat(200))], None),
        Duration::ZERO,
        6,
    );
    let all = texts(&output);
    assert_eq!(all[0], "Script completed\nWall time 0.0 seconds\nOutput:\n");
    assert_eq!(
        all[1],
        format!(
            "Warning: truncated output (original token count: 50)\nTotal output lines: 1\n\n{}…44 tokens truncated…{}",
            "x".repeat(12),
            "x".repeat(12)
        )
    );
    assert_eq!(all.len(), 2);
}

#[test]
fn abandoned_calls_warning_comes_last_and_survives_truncation() {
    let mut obs = observation(ScriptStatus::Completed, vec![text(&"y".repeat(400))], None);
    obs.abandoned_tool_calls = 2;
    let output = CodeModeOutput::render(obs, Duration::ZERO, 5);
    assert_eq!(
        texts(&output).last().unwrap(),
        "Warning: the script finished while 2 tool calls were still pending; they were cancelled. Await every tools.* call (for example with await Promise.all([...]))."
    );
}

#[test]
fn response_items_follow_the_payload_kind_and_images_carry_detail() {
    let output = CodeModeOutput::render(
        observation(
            ScriptStatus::Completed,
            vec![
                ContentItem::InputImage {
                    image_url: "data:image/png;base64,AA".to_owned(),
                    detail: None,
                },
                ContentItem::InputImage {
                    image_url: "data:image/png;base64,BB".to_owned(),
                    detail: Some(ImageDetail::Original),
                },
            ],
            None,
        ),
        Duration::ZERO,
        10_000,
    );
    let exec_item = output.to_response_item(
        "call-1",
        &ToolPayload::Custom {
            input: String::new(),
        },
    );
    assert_eq!(
        serde_json::to_value(&exec_item).unwrap(),
        json!({
            "type": "custom_tool_call_output",
            "call_id": "call-1",
            "output": [
                { "type": "input_text", "text": "Script completed\nWall time 0.0 seconds\nOutput:\n" },
                { "type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "high" },
                { "type": "input_image", "image_url": "data:image/png;base64,BB", "detail": "original" }
            ]
        })
    );
    let wait_item = output.to_response_item(
        "call-2",
        &ToolPayload::Function {
            arguments: "{}".to_owned(),
        },
    );
    assert!(matches!(
        wait_item,
        ResponseInputItem::FunctionCallOutput { .. }
    ));
}
