use serde_json::json;

use super::*;
use crate::{ContentItem, ToolCallId, ToolName};

fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + fmt::Debug>(
    value: T,
    expected: serde_json::Value,
) {
    let encoded = serde_json::to_value(&value).unwrap();
    assert_eq!(encoded, expected);
    let decoded: T = serde_json::from_value(encoded).unwrap();
    assert_eq!(decoded, value);
}

#[test]
fn hello_and_ready_match_the_reference_shape() {
    round_trip(
        ClientMessage::Hello {
            supported_versions: vec!["v1".into()],
            required_capabilities: vec![CAPABILITY_STORE_COMMIT.into()],
            optional_capabilities: vec![],
        },
        json!({
            "type": "connection/hello",
            "supportedVersions": ["v1"],
            "requiredCapabilities": ["store/commit"],
            "optionalCapabilities": [],
        }),
    );
    round_trip(
        HostMessage::Ready {
            selected_version: "v1".into(),
            capabilities: vec![],
        },
        json!({ "type": "connection/ready", "selectedVersion": "v1", "capabilities": [] }),
    );
    round_trip(
        HostMessage::Rejected {
            reason: RejectReason::NoCompatibleVersion {
                supported_versions: vec!["v1".into()],
            },
        },
        json!({ "type": "connection/rejected", "reason": { "kind": "noCompatibleVersion", "supportedVersions": ["v1"] } }),
    );
}

#[test]
fn operations_are_tagged_by_method_with_camel_case_fields() {
    round_trip(
        ClientMessage::OperationRequest {
            id: RequestId(7),
            request: Operation::Wait {
                session_id: SessionId::new("session-1"),
                cell_id: CellId::from_raw("abc"),
                yield_time_ms: 250,
            },
        },
        json!({
            "type": "operation/request",
            "id": 7,
            "request": { "method": "session/wait", "sessionId": "session-1", "cellId": "abc", "yieldTimeMs": 250 },
        }),
    );
    round_trip(
        HostMessage::OperationResponse {
            id: RequestId(7),
            result: WireResult::Ok {
                value: OperationValue::WaitCompleted {
                    outcome: WaitOutcome::Live(RuntimeResponse::Yielded {
                        cell_id: CellId::from_raw("abc"),
                        content_items: vec![ContentItem::text("hi")],
                    }),
                },
            },
        },
        json!({
            "type": "operation/response",
            "id": 7,
            "result": { "status": "ok", "value": { "type": "wait/completed", "outcome": {
                "outcome": "live",
                "value": { "type": "yielded", "cell_id": "abc", "content_items": [{ "type": "input_text", "text": "hi" }] },
            } } },
        }),
    );
    round_trip(
        HostMessage::OperationResponse {
            id: RequestId(8),
            result: WireResult::from_error(&BridgeError::SessionReused(SessionId::new("s"))),
        },
        json!({
            "type": "operation/response",
            "id": 8,
            "result": { "status": "error", "message": "code-mode session ID `s` was reused", "code": "sessionReused" },
        }),
    );
}

#[test]
fn delegate_messages_keep_null_apart_from_undefined() {
    let call = NestedToolCall {
        cell_id: CellId::from_raw("c"),
        runtime_tool_call_id: ToolCallId::nth(1),
        tool_name: ToolName::namespaced("mcp__fs", "read"),
        js_name: "mcp__fs__read".into(),
        input: Some(serde_json::Value::Null),
    };
    round_trip(
        HostMessage::DelegateRequest {
            id: RequestId(1),
            session_id: SessionId::new("s"),
            request: DelegateCall::ToolInvoke {
                invocation: call.clone(),
            },
        },
        json!({
            "type": "delegate/request",
            "id": 1,
            "sessionId": "s",
            "request": { "method": "tool/invoke", "invocation": {
                "cell_id": "c",
                "runtime_tool_call_id": "tool-1",
                "tool_name": { "name": "read", "namespace": "mcp__fs" },
                "js_name": "mcp__fs__read",
                "input": null,
            } },
        }),
    );
    round_trip(
        DelegateCall::ToolInvoke {
            invocation: NestedToolCall {
                input: None,
                ..call
            },
        },
        json!({ "method": "tool/invoke", "invocation": {
            "cell_id": "c", "runtime_tool_call_id": "tool-1",
            "tool_name": { "name": "read", "namespace": "mcp__fs" }, "js_name": "mcp__fs__read",
        } }),
    );
    round_trip(
        DelegateReply::ToolResult {
            value: Some(serde_json::Value::Null),
        },
        json!({ "type": "tool/result", "value": null }),
    );
    round_trip(
        DelegateReply::ToolResult { value: None },
        json!({ "type": "tool/result" }),
    );
    round_trip(
        ClientMessage::DelegateResponse {
            id: RequestId(3),
            result: WireResult::Ok {
                value: DelegateReply::StoreCommitted,
            },
        },
        json!({ "type": "delegate/response", "id": 3, "result": { "status": "ok", "value": { "type": "store/committed" } } }),
    );
    round_trip(
        HostMessage::CellClosed {
            session_id: SessionId::new("s"),
            cell_id: CellId::from_raw("c"),
        },
        json!({ "type": "cell/closed", "sessionId": "s", "cellId": "c" }),
    );
}

#[test]
fn unknown_fields_and_types_are_rejected() {
    let extra = json!({ "type": "connection/hello", "supportedVersions": ["v1"], "surprise": 1 });
    assert!(serde_json::from_value::<ClientMessage>(extra).is_err());
    let extra = json!({ "type": "operation/request", "id": 1, "request": { "method": "session/open", "sessionId": "s", "x": 0 } });
    assert!(serde_json::from_value::<ClientMessage>(extra).is_err());
    let unknown = json!({ "type": "connection/goodbye" });
    assert!(serde_json::from_value::<ClientMessage>(unknown).is_err());
}

#[test]
fn typed_errors_survive_the_wire() {
    let session = SessionId::new("s");
    for error in [
        BridgeError::ShuttingDown,
        BridgeError::TooManyCells,
        BridgeError::HostShuttingDown,
        BridgeError::UnknownSession(session.clone()),
        BridgeError::CellStartFailed("no isolate".into()),
    ] {
        let WireResult::<()>::Error { message, code } = WireResult::from_error(&error) else {
            unreachable!()
        };
        let back = ErrorCode::into_error(code, message, &session);
        assert_eq!(back.to_string(), error.to_string());
        assert_eq!(ErrorCode::of(&back), ErrorCode::of(&error));
    }
}
