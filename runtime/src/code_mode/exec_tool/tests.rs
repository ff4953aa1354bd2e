use std::sync::Mutex;

use codemode_bridge::{CellId, ContentItem, RuntimeResponse, WaitOutcome};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::code_mode::broker::{ExecNotification, NotificationSink};
use crate::code_mode::store::SessionStore;
use crate::tool::{ToolCallSource, ToolContext};

/// Records the execute request and answers with a fixed yielded response (no V8 here; the
/// real session is exercised end to end by the lead's suite).
#[derive(Default)]
struct RecordingSession(Mutex<Vec<ExecuteRequest>>);

impl CodeModeSession for RecordingSession {
    fn execute(&self, req: ExecuteRequest) -> BoxFuture<'_, Result<RuntimeResponse, BridgeError>> {
        let too_many = req.start.source.contains("too_many");
        self.0.lock().unwrap().push(req);
        Box::pin(async move {
            if too_many {
                return Err(BridgeError::TooManyCells);
            }
            Ok(RuntimeResponse::Yielded {
                cell_id: CellId::from_raw("c1"),
                content_items: vec![ContentItem::text("phase 1")],
            })
        })
    }
    fn wait(&self, cell_id: CellId, _: u64) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        Box::pin(async move { Ok(WaitOutcome::Missing(cell_id)) })
    }
    fn terminate(&self, cell_id: CellId) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        Box::pin(async move { Ok(WaitOutcome::Missing(cell_id)) })
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

struct NoSink;
impl NotificationSink for NoSink {
    fn deliver(&self, _: ExecNotification) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

fn invocation(payload: ToolPayload) -> ToolInvocation {
    ToolInvocation {
        call_id: "call-1".to_owned(),
        tool_name: ToolName::plain("exec"),
        payload,
        source: ToolCallSource::Direct,
        cancellation: CancellationToken::new(),
        context: Arc::new(ToolContext::new(std::env::temp_dir())),
    }
}

fn exec_tool() -> (ExecTool, Arc<RecordingSession>, Arc<CodeModeBroker>) {
    let session = Arc::new(RecordingSession::default());
    let store = Arc::new(SessionStore::new());
    store.commit([("saved".to_owned(), json!(1))].into());
    let broker = Arc::new(CodeModeBroker::new(store, Arc::new(NoSink)));
    let tool = ExecTool::new(
        session.clone(),
        Arc::clone(&broker),
        CodeModeOptions::default(),
    );
    (tool, session, broker)
}

#[tokio::test]
async fn exec_starts_a_cell_with_pragma_limits_and_the_store_snapshot() {
    let (tool, session, _) = exec_tool();
    let input = "// @exec: {\"yield_time_ms\": 250, \"max_output_tokens\": 3}\ntext('phase 1')";
    let output = tool
        .handle(invocation(ToolPayload::Custom {
            input: input.to_owned(),
        }))
        .await
        .unwrap();
    let request = session.0.lock().unwrap().pop().unwrap();
    assert_eq!(request.exec_call_id, "call-1");
    assert_eq!(request.start.source, "text('phase 1')");
    assert_eq!(request.yield_time_ms, 250);
    assert_eq!(request.max_concurrent_tool_calls, 64);
    assert_eq!(request.start.stored_values.get("saved"), Some(&json!(1)));
    let item = serde_json::to_value(output.to_response_item(
        "call-1",
        &ToolPayload::Custom {
            input: String::new(),
        },
    ))
    .unwrap();
    assert_eq!(item["type"], "custom_tool_call_output");
    let header = item["output"][0]["text"].as_str().unwrap();
    assert!(
        header.starts_with("Script running with cell ID c1\nWall time "),
        "{header}"
    );
    assert_eq!(item["output"][1]["text"], "phase 1");
}

#[tokio::test]
async fn exec_defaults_and_refusals() {
    let (tool, session, _) = exec_tool();
    tool.handle(invocation(ToolPayload::Custom {
        input: "text(1)".to_owned(),
    }))
    .await
    .unwrap();
    assert_eq!(session.0.lock().unwrap()[0].yield_time_ms, 10_000);
    let refused = |payload| async {
        tool.handle(invocation(payload))
            .await
            .map(|_| ())
            .unwrap_err()
    };
    assert_eq!(
        refused(ToolPayload::Function {
            arguments: "{}".to_owned()
        })
        .await,
        FunctionCallError::RespondToModel("exec expects raw JavaScript source text".to_owned())
    );
    assert_eq!(
        refused(ToolPayload::Custom {
            input: "// @exec: {\"x\": 1}\ntext(1)".to_owned()
        })
        .await,
        FunctionCallError::RespondToModel(
            "exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `x`".to_owned()
        )
    );
    assert_eq!(
        refused(ToolPayload::Custom {
            input: "too_many()".to_owned()
        })
        .await,
        FunctionCallError::RespondToModel("code-mode host has too many active cells".to_owned())
    );
    assert!(tool.matches_kind(&ToolPayload::Function {
        arguments: String::new()
    }));
    assert!(tool.supports_parallel_tool_calls());
}
