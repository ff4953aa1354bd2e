use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::scripted_engine::{
    RecordingDelegate, ScriptedEngine, Step, execute_request, finish, started, text, yield_control,
};
use crate::{CellCommand, ContentItem};

/// Cells run the script named by their source.
fn engine() -> ScriptedEngine {
    ScriptedEngine::new(|start| match start.source.as_str() {
        "yield" => vec![
            started(),
            text("before"),
            yield_control(),
            text("after"),
            finish(None, &[("k", json!(1))]),
        ],
        "hang" => vec![started(), Step::Hang],
        "done" => vec![started(), text("done"), finish(None, &[])],
        other => panic!("no script {other}"),
    })
}

fn session_with(
    options: LocalSessionOptions,
) -> (LocalSession, Arc<ScriptedEngine>, Arc<RecordingDelegate>) {
    let engine = Arc::new(engine());
    let delegate = Arc::new(RecordingDelegate::replying());
    let session = LocalSession::new(
        Arc::clone(&engine) as Arc<dyn CellEngine>,
        Arc::clone(&delegate) as Arc<dyn SessionDelegate>,
        options,
    );
    (session, engine, delegate)
}

fn session() -> (LocalSession, Arc<ScriptedEngine>, Arc<RecordingDelegate>) {
    session_with(LocalSessionOptions::default())
}

fn items(texts: &[&str]) -> Vec<ContentItem> {
    texts.iter().map(|t| ContentItem::text(*t)).collect()
}

#[tokio::test]
async fn execute_yields_wait_completes_and_later_waits_see_a_closed_cell() {
    let (session, _, delegate) = session();
    let first = session
        .execute(execute_request("yield", 10_000))
        .await
        .unwrap();
    let cell_id = first.cell_id().clone();
    assert_eq!(
        first,
        RuntimeResponse::Yielded {
            cell_id: cell_id.clone(),
            content_items: items(&["before"])
        }
    );
    let second = session.wait(cell_id.clone(), 10_000).await.unwrap();
    assert_eq!(
        second,
        WaitOutcome::Live(RuntimeResponse::Result {
            cell_id: cell_id.clone(),
            content_items: items(&["after"]),
            error_text: None,
            abandoned_tool_calls: 0,
        })
    );
    assert_eq!(delegate.log(), vec!["commit {\"k\":1}", "closed"]);
    assert_eq!(
        session.wait(cell_id.clone(), 10).await.unwrap(),
        WaitOutcome::AlreadyClosed(cell_id.clone())
    );
    assert_eq!(
        session.terminate(cell_id.clone()).await.unwrap(),
        WaitOutcome::AlreadyClosed(cell_id)
    );
    assert_eq!(session.active_cells(), 0);
}

#[tokio::test]
async fn unknown_cells_are_missing() {
    let (session, _, _) = session();
    let id = CellId::from_raw("nope");
    assert_eq!(
        session.wait(id.clone(), 10).await.unwrap(),
        WaitOutcome::Missing(id.clone())
    );
    assert_eq!(
        session.terminate(id.clone()).await.unwrap(),
        WaitOutcome::Missing(id)
    );
}

#[tokio::test]
async fn tombstones_expire() {
    let (session, _, _) = session_with(LocalSessionOptions {
        tombstone_ttl: Duration::from_millis(30),
        ..Default::default()
    });
    let done = session
        .execute(execute_request("done", 10_000))
        .await
        .unwrap();
    let id = done.cell_id().clone();
    assert_eq!(
        session.wait(id.clone(), 10).await.unwrap(),
        WaitOutcome::AlreadyClosed(id.clone())
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        session.wait(id.clone(), 10).await.unwrap(),
        WaitOutcome::Missing(id)
    );
}

#[tokio::test]
async fn the_active_cell_cap_is_shared_and_released_on_close() {
    let admission = CellAdmission::new(1);
    let options = LocalSessionOptions {
        admission: admission.clone(),
        ..Default::default()
    };
    let (a, _, _) = session_with(options.clone());
    let (b, _, _) = session_with(options);
    let running = a.execute(execute_request("hang", 10)).await.unwrap();
    let err = b.execute(execute_request("done", 10)).await.unwrap_err();
    assert!(matches!(err, BridgeError::TooManyCells), "{err}");
    assert_eq!(err.to_string(), "code-mode host has too many active cells");
    a.terminate(running.cell_id().clone()).await.unwrap();
    assert_eq!(admission.available(), 1);
    assert!(matches!(
        b.execute(execute_request("done", 10)).await.unwrap(),
        RuntimeResponse::Result { .. }
    ));
}

#[tokio::test]
async fn an_uncollected_result_keeps_its_permit() {
    let admission = CellAdmission::new(1);
    let (session, _, _) = session_with(LocalSessionOptions {
        admission: admission.clone(),
        ..Default::default()
    });
    let launched = session.launch(execute_request("done", 10)).unwrap();
    drop(launched.initial_response);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(admission.available(), 0);
    let outcome = session.wait(launched.cell_id.clone(), 10).await.unwrap();
    assert!(
        matches!(outcome, WaitOutcome::Live(RuntimeResponse::Result { .. })),
        "{outcome:?}"
    );
    assert_eq!(admission.available(), 1);
}

#[tokio::test]
async fn shutdown_terminates_cells_and_rejects_new_ones() {
    let (session, engine, delegate) = session();
    let running = session.execute(execute_request("hang", 10)).await.unwrap();
    let id = running.cell_id().clone();
    let session = Arc::new(session);
    let observer_session = Arc::clone(&session);
    let observer = tokio::spawn(async move { observer_session.wait(id, 60_000).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    tokio::time::timeout(Duration::from_secs(2), session.shutdown())
        .await
        .expect("shutdown finishes");
    assert_eq!(session.active_cells(), 0);
    assert!(matches!(
        observer.await.unwrap().unwrap(),
        WaitOutcome::Live(RuntimeResponse::Terminated { .. })
    ));
    assert_eq!(engine.commands(), vec![CellCommand::Terminate]);
    assert_eq!(
        delegate.log(),
        vec!["closed"],
        "terminated writes are never committed"
    );
    let err = session
        .execute(execute_request("done", 10))
        .await
        .unwrap_err();
    assert!(matches!(err, BridgeError::ShuttingDown));
    assert_eq!(err.to_string(), "code mode session is shutting down");
}

#[tokio::test]
async fn dropping_the_session_terminates_its_cells() {
    let (session, engine, delegate) = session();
    session.execute(execute_request("hang", 10)).await.unwrap();
    drop(session);
    let closed = delegate.closed.notified();
    tokio::time::timeout(Duration::from_secs(1), closed)
        .await
        .expect("cell closes after drop");
    assert_eq!(engine.commands(), vec![CellCommand::Terminate]);
}
