use codemode_bridge::{ContentItem, RuntimeResponse};

use super::*;

fn args(json: &str) -> Result<WaitArgs, FunctionCallError> {
    parse_wait_args(&ToolPayload::Function {
        arguments: json.to_owned(),
    })
}

#[test]
fn wait_args_defaults() {
    assert_eq!(
        args(r#"{"cell_id":"abc"}"#).unwrap(),
        WaitArgs {
            cell_id: "abc".to_owned(),
            yield_time_ms: 10_000,
            max_tokens: None,
            terminate: false
        }
    );
    assert_eq!(
        args(r#"{"cell_id":"abc","yield_time_ms":1500.0,"max_tokens":6,"terminate":true}"#)
            .unwrap(),
        WaitArgs {
            cell_id: "abc".to_owned(),
            yield_time_ms: 1500,
            max_tokens: Some(6),
            terminate: true
        }
    );
    assert_eq!(
        args(r#"{"cell_id":"abc","max_tokens":null}"#)
            .unwrap()
            .max_tokens,
        None
    );
}

#[test]
fn wait_rejects_non_function_payloads_and_bad_json() {
    assert_eq!(
        parse_wait_args(&ToolPayload::Custom {
            input: "abc".to_owned()
        }),
        Err(FunctionCallError::RespondToModel(
            "wait expects JSON arguments".to_owned()
        ))
    );
    assert_eq!(
        args("{}"),
        Err(FunctionCallError::RespondToModel(
            "failed to parse function arguments: missing field `cell_id` at line 1 column 2"
                .to_owned()
        ))
    );
    let Err(FunctionCallError::RespondToModel(text)) =
        args(r#"{"cell_id":"a","yield_time_ms":-5}"#)
    else {
        panic!("negative yield accepted")
    };
    assert!(
        text.starts_with(
            "failed to parse function arguments: expected a non-negative number, got -5"
        ),
        "{text}"
    );
}

#[test]
fn refusals_render_as_failed_scripts_naming_the_cell() {
    let id = || CellId::from_raw("k3");
    let cases = [
        (WaitOutcome::Missing(id()), "exec cell k3 not found"),
        (
            WaitOutcome::AlreadyClosed(id()),
            "exec cell k3 already completed; its result was returned earlier. Start a new exec.",
        ),
        (
            WaitOutcome::AlreadyObserved(id()),
            "exec cell k3 already has an active observer",
        ),
        (
            WaitOutcome::AlreadyTerminating(id()),
            "exec cell k3 is already terminating",
        ),
    ];
    for (outcome, text) in cases {
        let observation = wait_observation(outcome);
        assert_eq!(observation.status, ScriptStatus::Failed);
        assert_eq!(observation.error_text.as_deref(), Some(text));
    }
}

#[test]
fn live_responses_keep_their_status_and_output() {
    let observation = wait_observation(WaitOutcome::Live(RuntimeResponse::Result {
        cell_id: CellId::from_raw("k3"),
        content_items: vec![ContentItem::text("phase 3")],
        error_text: None,
        abandoned_tool_calls: 1,
    }));
    assert_eq!(observation.status, ScriptStatus::Completed);
    assert_eq!(
        observation.content_items,
        vec![ContentItem::text("phase 3")]
    );
    assert_eq!(observation.abandoned_tool_calls, 1);
    let yielded = wait_observation(WaitOutcome::Live(RuntimeResponse::Yielded {
        cell_id: CellId::from_raw("k3"),
        content_items: vec![],
    }));
    assert_eq!(
        yielded.status,
        ScriptStatus::Running(CellId::from_raw("k3"))
    );
}
