use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::DuplexStream;

use super::*;
use crate::scripted_engine::{
    RecordingDelegate, ScriptedEngine, Step, ToolBehavior, execute_request, finish, notify,
    started, text, tool_call, yield_control,
};
use crate::{CellCommand, CellEngine, ContentItem, RejectReason, StoredValues, ToolCallId, serve};

fn engine() -> Arc<ScriptedEngine> {
    Arc::new(ScriptedEngine::new(|start| match start.source.as_str() {
        "main" => vec![
            started(),
            text("hello"),
            notify("this is important"),
            yield_control(),
            tool_call(1, "echo", json!({ "x": 1 })),
            Step::AwaitCommand,
            text("world"),
            finish(None, &[("k", json!(42))]),
        ],
        "tool-then-hang" => vec![started(), tool_call(1, "slow", json!({})), Step::Hang],
        "hang" => vec![started(), Step::Hang],
        other => panic!("no script {other}"),
    }))
}

/// Runs `serve` on one side of two in-memory pipes; returns the client's ends and the task.
fn start_host(
    engine: Arc<ScriptedEngine>,
) -> (
    DuplexStream,
    DuplexStream,
    tokio::task::JoinHandle<Result<(), BridgeError>>,
) {
    let (client_reader, host_writer) = tokio::io::duplex(1 << 16);
    let (host_reader, client_writer) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(serve(
        engine as Arc<dyn CellEngine>,
        host_reader,
        host_writer,
    ));
    (client_reader, client_writer, task)
}

async fn connected(
    engine: Arc<ScriptedEngine>,
) -> (HostClient, tokio::task::JoinHandle<Result<(), BridgeError>>) {
    let (reader, writer, task) = start_host(engine);
    (HostClient::connect(reader, writer).await.unwrap(), task)
}

fn texts(response: &RuntimeResponse) -> Vec<String> {
    response
        .content_items()
        .iter()
        .map(|item| match item {
            ContentItem::InputText { text } => text.clone(),
            ContentItem::InputImage { image_url, .. } => image_url.clone(),
        })
        .collect()
}

#[tokio::test]
async fn execute_yield_wait_tool_round_trip_store_commit_and_cell_closed() {
    let engine = engine();
    let (client, host) = connected(Arc::clone(&engine)).await;
    let delegate = Arc::new(RecordingDelegate::replying());
    let session = client
        .open_session(SessionId::new("session-1"), Arc::clone(&delegate) as _)
        .await
        .unwrap();

    let first = session
        .execute(execute_request("main", 10_000))
        .await
        .unwrap();
    assert!(
        matches!(first, RuntimeResponse::Yielded { .. }),
        "{first:?}"
    );
    assert_eq!(texts(&first), vec!["hello"]);
    let cell_id = first.cell_id().clone();

    let WaitOutcome::Live(second) = session.wait(cell_id.clone(), 10_000).await.unwrap() else {
        panic!("expected a live cell");
    };
    assert_eq!(
        second,
        RuntimeResponse::Result {
            cell_id: cell_id.clone(),
            content_items: vec![ContentItem::text("world")],
            error_text: None,
            abandoned_tool_calls: 0,
        }
    );
    assert_eq!(
        engine.commands(),
        vec![CellCommand::ToolResponse {
            id: ToolCallId::nth(1),
            value: Some(json!({ "echo": { "x": 1 } }))
        }]
    );
    assert_eq!(
        *delegate.store.lock().unwrap(),
        StoredValues::from([("k".to_owned(), json!(42))])
    );
    // `cell/closed` may arrive just after the wait's response.
    tokio::time::timeout(Duration::from_secs(1), async {
        while !delegate.log().contains(&"closed".to_owned()) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("cell/closed reaches the delegate");
    // The notification and the tool call run concurrently; the commit precedes the close.
    let mut log = delegate.log();
    log[..2].sort();
    assert_eq!(
        log,
        vec![
            "invoke tool-1 echo",
            "notify call-1 this is important",
            "commit {\"k\":42}",
            "closed"
        ]
    );
    assert_eq!(
        session.wait(cell_id.clone(), 10).await.unwrap(),
        WaitOutcome::AlreadyClosed(cell_id)
    );

    session.shutdown().await;
    drop(session);
    drop(client);
    tokio::time::timeout(Duration::from_secs(1), host)
        .await
        .expect("host ends on EOF")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn terminate_cancels_a_pending_tool_call_across_the_wire() {
    let (client, _host) = connected(engine()).await;
    let delegate = Arc::new(RecordingDelegate::new(|_| ToolBehavior::HangUntilCancelled));
    let session = client
        .open_session(SessionId::new("s"), Arc::clone(&delegate) as _)
        .await
        .unwrap();
    let first = session
        .execute(execute_request("tool-then-hang", 50))
        .await
        .unwrap();
    let outcome = session.terminate(first.cell_id().clone()).await.unwrap();
    assert!(
        matches!(
            outcome,
            WaitOutcome::Live(RuntimeResponse::Terminated { .. })
        ),
        "{outcome:?}"
    );
    assert!(
        delegate.log().contains(&"cancelled tool-1".to_owned()),
        "{:?}",
        delegate.log()
    );
}

#[tokio::test]
async fn typed_errors_cross_the_wire() {
    let (client, _host) = connected(engine()).await;
    let session = client
        .open_session(SessionId::new("a"), Arc::new(RecordingDelegate::replying()))
        .await
        .unwrap();
    let err = client
        .open_session(SessionId::new("a"), Arc::new(RecordingDelegate::replying()))
        .await
        .err()
        .unwrap();
    assert_eq!(err.to_string(), "code-mode session ID `a` was reused");
    session.shutdown().await;
    let err = session
        .execute(execute_request("hang", 10))
        .await
        .unwrap_err();
    assert!(matches!(err, BridgeError::UnknownSession(_)), "{err}");
    assert_eq!(err.to_string(), "unknown code-mode session a");
}

async fn raw_host() -> (
    FrameReader<DuplexStream>,
    FrameWriter<DuplexStream>,
    tokio::task::JoinHandle<Result<(), BridgeError>>,
) {
    let (reader, writer, task) = start_host(engine());
    (FrameReader::new(reader), FrameWriter::new(writer), task)
}

fn hello(versions: &[&str]) -> ClientMessage {
    ClientMessage::Hello {
        supported_versions: versions.iter().map(|v| (*v).to_owned()).collect(),
        required_capabilities: vec![],
        optional_capabilities: vec![],
    }
}

#[tokio::test]
async fn the_host_rejects_a_connection_that_does_not_start_with_hello() {
    let (mut reader, mut writer, task) = raw_host().await;
    writer
        .write_message(&ClientMessage::OperationRequest {
            id: RequestId(1),
            request: Operation::Open {
                session_id: SessionId::new("s"),
            },
        })
        .await
        .unwrap();
    let reply: HostMessage = reader.read_message().await.unwrap().unwrap();
    assert_eq!(
        reply,
        HostMessage::Rejected {
            reason: RejectReason::InvalidHello {
                message: "first message must be connection/hello".to_owned()
            }
        }
    );
    assert!(matches!(
        task.await.unwrap(),
        Err(BridgeError::HandshakeFailed(_))
    ));
}

#[tokio::test]
async fn the_host_rejects_unknown_versions_and_capabilities() {
    let (mut reader, mut writer, _task) = raw_host().await;
    writer.write_message(&hello(&["v0"])).await.unwrap();
    let reply: HostMessage = reader.read_message().await.unwrap().unwrap();
    assert_eq!(
        reply,
        HostMessage::Rejected {
            reason: RejectReason::NoCompatibleVersion {
                supported_versions: vec!["v1".to_owned()]
            }
        }
    );

    let (mut reader, mut writer, _task) = raw_host().await;
    writer
        .write_message(&ClientMessage::Hello {
            supported_versions: vec!["v1".to_owned()],
            required_capabilities: vec!["teleport".to_owned()],
            optional_capabilities: vec![],
        })
        .await
        .unwrap();
    let reply: HostMessage = reader.read_message().await.unwrap().unwrap();
    assert_eq!(
        reply,
        HostMessage::Rejected {
            reason: RejectReason::MissingRequiredCapability {
                capability: "teleport".to_owned()
            }
        }
    );
}

#[tokio::test]
async fn the_host_answers_unknown_sessions_and_closes_cleanly_on_eof() {
    let (mut reader, mut writer, task) = raw_host().await;
    writer.write_message(&hello(&["v1"])).await.unwrap();
    let ready: HostMessage = reader.read_message().await.unwrap().unwrap();
    assert!(
        matches!(ready, HostMessage::Ready { ref selected_version, .. } if selected_version == "v1")
    );
    writer
        .write_message(&ClientMessage::OperationRequest {
            id: RequestId(1),
            request: Operation::Wait {
                session_id: SessionId::new("nope"),
                cell_id: CellId::from_raw("c"),
                yield_time_ms: 1,
            },
        })
        .await
        .unwrap();
    let reply: HostMessage = reader.read_message().await.unwrap().unwrap();
    let HostMessage::OperationResponse {
        id,
        result: WireResult::Error { message, .. },
    } = reply
    else {
        panic!("expected an error response, got {reply:?}");
    };
    assert_eq!(
        (id, message.as_str()),
        (RequestId(1), "unknown code-mode session nope")
    );
    writer.shutdown().await.unwrap();
    assert!(task.await.unwrap().is_ok());
    assert_eq!(
        reader.read_frame().await.unwrap(),
        None,
        "the host closes its side too"
    );
}

/// A host that handshakes, starts one cell, answers nothing else and then dies.
async fn dying_host() -> (
    HostClient,
    RemoteSession,
    Arc<RecordingDelegate>,
    CellId,
    tokio::sync::oneshot::Sender<()>,
) {
    let (client_reader, host_writer) = tokio::io::duplex(1 << 16);
    let (host_reader, client_writer) = tokio::io::duplex(1 << 16);
    let (kill, killed) = tokio::sync::oneshot::channel::<()>();
    let cell_id = CellId::from_raw("doomed");
    let announced = cell_id.clone();
    tokio::spawn(async move {
        let mut reader = FrameReader::new(host_reader);
        let mut writer = FrameWriter::new(host_writer);
        let _hello: ClientMessage = reader.read_message().await.unwrap().unwrap();
        writer
            .write_message(&HostMessage::Ready {
                selected_version: "v1".into(),
                capabilities: vec![],
            })
            .await
            .unwrap();
        let mut killed = killed;
        loop {
            let message = tokio::select! {
                message = reader.read_message::<ClientMessage>() => message.unwrap().unwrap(),
                _ = &mut killed => return,
            };
            let ClientMessage::OperationRequest { id, request } = message else {
                continue;
            };
            let value = match request {
                Operation::Open { session_id } => OperationValue::SessionReady { session_id },
                Operation::Execute { .. } => {
                    let started = OperationValue::ExecutionStarted {
                        cell_id: announced.clone(),
                    };
                    writer
                        .write_message(&HostMessage::OperationResponse {
                            id,
                            result: WireResult::Ok { value: started },
                        })
                        .await
                        .unwrap();
                    let result = RuntimeResponse::Yielded {
                        cell_id: announced.clone(),
                        content_items: vec![],
                    };
                    writer
                        .write_message(&HostMessage::ExecuteInitialResponse { id, result })
                        .await
                        .unwrap();
                    continue;
                }
                // Never answered: the host dies with this wait in flight.
                _ => continue,
            };
            writer
                .write_message(&HostMessage::OperationResponse {
                    id,
                    result: WireResult::Ok { value },
                })
                .await
                .unwrap();
        }
    });
    let client = HostClient::connect(client_reader, client_writer)
        .await
        .unwrap();
    let delegate = Arc::new(RecordingDelegate::replying());
    let session = client
        .open_session(SessionId::new("s"), Arc::clone(&delegate) as _)
        .await
        .unwrap();
    let first = session
        .execute(execute_request("anything", 10))
        .await
        .unwrap();
    assert_eq!(first.cell_id(), &cell_id);
    (client, session, delegate, cell_id, kill)
}

#[tokio::test]
async fn host_death_fails_in_flight_operations_and_reports_lost_cells_once() {
    let (client, session, delegate, cell_id, kill) = dying_host().await;
    let in_flight = {
        let session = session.clone();
        let cell_id = cell_id.clone();
        tokio::spawn(async move { session.wait(cell_id, 60_000).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    kill.send(()).unwrap();
    let err = tokio::time::timeout(Duration::from_secs(1), in_flight)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, BridgeError::HostExited), "{err}");
    assert_eq!(err.to_string(), "code-mode host exited unexpectedly");
    assert!(client.has_exited());
    assert_eq!(
        delegate.log(),
        vec!["closed"],
        "the lost cell is reported closed"
    );

    let outcome = session.wait(cell_id.clone(), 10).await.unwrap();
    assert_eq!(
        outcome,
        WaitOutcome::Live(RuntimeResponse::Result {
            cell_id: cell_id.clone(),
            content_items: vec![],
            error_text: Some(HOST_EXITED_CELL_LOST.to_owned()),
            abandoned_tool_calls: 0,
        })
    );
    assert_eq!(
        HOST_EXITED_CELL_LOST,
        "code-mode host exited unexpectedly; the cell was lost (stored values committed earlier are kept)"
    );
    assert_eq!(
        session.terminate(cell_id.clone()).await.unwrap(),
        WaitOutcome::AlreadyClosed(cell_id)
    );
    let other = CellId::from_raw("other");
    assert_eq!(
        session.wait(other.clone(), 10).await.unwrap(),
        WaitOutcome::Missing(other)
    );
    assert!(matches!(
        session.execute(execute_request("x", 1)).await,
        Err(BridgeError::HostExited)
    ));
}

#[tokio::test]
async fn a_host_that_exits_during_the_handshake_is_reported() {
    let err = HostClient::spawn(Path::new("true"), &[])
        .await
        .err()
        .unwrap();
    assert!(matches!(err, BridgeError::HostExited), "{err}");
    let err = HostClient::spawn(Path::new("/nonexistent/code-mode-host"), &[])
        .await
        .err()
        .unwrap();
    assert!(matches!(err, BridgeError::HostSpawnFailed { .. }), "{err}");
}

#[tokio::test]
async fn a_pooled_session_spawns_lazily_and_fails_cleanly_when_the_host_cannot_run() {
    let pool = crate::HostPool::new(crate::HostPoolOptions {
        program: "true".into(),
        args: vec![],
    });
    let session = pool.session(Arc::new(RecordingDelegate::replying()));
    let id = CellId::from_raw("c");
    assert_eq!(
        session.wait(id.clone(), 1).await.unwrap(),
        WaitOutcome::Missing(id),
        "wait never spawns"
    );
    let err = session
        .execute(execute_request("main", 10))
        .await
        .unwrap_err();
    assert!(matches!(err, BridgeError::HostExited), "{err}");
}
