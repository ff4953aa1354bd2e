use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::scripted_engine::{
    RecordingDelegate, ScriptedEngine, Step, ToolBehavior, finish, finish_abandoning, notify,
    started, text, tool_call, yield_control,
};
use crate::{CellEngine, CellLimits, CellStart, RUNTIME_ENDED_UNEXPECTEDLY, ToolCallId};

struct Cell {
    handle: CellHandle,
    closed: Arc<AtomicBool>,
    engine: Arc<ScriptedEngine>,
    delegate: Arc<RecordingDelegate>,
}

fn spawn_with(engine: ScriptedEngine, delegate: RecordingDelegate, max_calls: usize) -> Cell {
    let engine = Arc::new(engine);
    let delegate = Arc::new(delegate);
    let cell_id = CellId::from_raw("cell");
    let start = CellStart {
        source: String::new(),
        tools: Vec::new(),
        stored_values: StoredValues::new(),
        limits: CellLimits::default(),
    };
    let channels = engine.start_cell(cell_id.clone(), start).unwrap();
    let closed = Arc::new(AtomicBool::new(false));
    let closed_flag = Arc::clone(&closed);
    let handle = CellHandle::spawn(CellActorParams {
        cell_id,
        exec_call_id: "call-1".to_owned(),
        channels,
        delegate: Arc::clone(&delegate) as Arc<dyn SessionDelegate>,
        max_concurrent_tool_calls: max_calls,
        cell_token: CancellationToken::new(),
        callback_grace: CALLBACK_CANCELLATION_GRACE,
        on_close: Box::new(move || closed_flag.store(true, Ordering::SeqCst)),
    });
    Cell {
        handle,
        closed,
        engine,
        delegate,
    }
}

fn spawn(steps: Vec<Step>) -> Cell {
    spawn_with(
        ScriptedEngine::fixed(steps),
        RecordingDelegate::replying(),
        64,
    )
}

fn texts(items: &[ContentItem]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            ContentItem::InputText { text } => text.clone(),
            ContentItem::InputImage { image_url, .. } => image_url.clone(),
        })
        .collect()
}

fn in_ms(ms: u64) -> YieldTimer {
    YieldTimer::Until(Instant::now() + Duration::from_millis(ms))
}

const LONG: YieldTimer = YieldTimer::FromStart(Duration::from_secs(30));

/// Unwraps a response into (kind, texts, error_text).
fn unpack(reply: Option<ObserveReply>) -> (&'static str, Vec<String>, Option<String>) {
    match reply {
        Some(ObserveReply::Response(RuntimeResponse::Yielded { content_items, .. })) => {
            ("yielded", texts(&content_items), None)
        }
        Some(ObserveReply::Response(RuntimeResponse::Terminated { content_items, .. })) => {
            ("terminated", texts(&content_items), None)
        }
        Some(ObserveReply::Response(RuntimeResponse::Result {
            content_items,
            error_text,
            ..
        })) => ("result", texts(&content_items), error_text),
        Some(ObserveReply::AlreadyObserved) => ("already_observed", Vec::new(), None),
        Some(ObserveReply::AlreadyTerminating) => ("already_terminating", Vec::new(), None),
        None => ("closed", Vec::new(), None),
    }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(30)).await;
}

#[tokio::test]
async fn yields_and_resumes() {
    let cell = spawn(vec![
        started(),
        text("before"),
        yield_control(),
        text("after"),
        finish(None, &[]),
    ]);
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("yielded", vec!["before".into()], None)
    );
    assert!(!cell.closed.load(Ordering::SeqCst));
    assert_eq!(
        unpack(cell.handle.observe(in_ms(10_000)).await),
        ("result", vec!["after".into()], None)
    );
    assert!(cell.closed.load(Ordering::SeqCst));
}

#[tokio::test]
async fn completion_and_output_are_buffered_until_the_first_observation() {
    let cell = spawn(vec![
        started(),
        text("early"),
        finish(None, &[("k", json!(1))]),
    ]);
    settle().await;
    assert!(
        !cell.closed.load(Ordering::SeqCst),
        "an unobserved completion keeps the cell open"
    );
    assert_eq!(cell.delegate.log(), vec!["commit {\"k\":1}"]);
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("result", vec!["early".into()], None)
    );
    assert!(cell.closed.load(Ordering::SeqCst));
}

#[tokio::test]
async fn first_observation_preserves_a_yield_that_raced_with_creation() {
    let cell = spawn(vec![
        started(),
        text("before"),
        yield_control(),
        text("after"),
        Step::Hang,
    ]);
    settle().await;
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("yielded", vec!["before".into()], None)
    );
    assert_eq!(
        unpack(cell.handle.observe(in_ms(20)).await),
        ("yielded", vec!["after".into()], None)
    );
}

#[tokio::test]
async fn buffered_initial_yield_precedes_buffered_completion_for_yield_observer() {
    let cell = spawn(vec![
        started(),
        text("before"),
        yield_control(),
        text("after"),
        finish(None, &[]),
    ]);
    settle().await;
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("yielded", vec!["before".into()], None)
    );
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("result", vec!["after".into()], None)
    );
}

#[tokio::test]
async fn unattached_yield_after_the_first_observation_is_a_no_op() {
    let cell = spawn(vec![
        started(),
        yield_control(),
        Step::Sleep(Duration::from_millis(20)),
        text("x"),
        yield_control(),
        text("y"),
        Step::Hang,
    ]);
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        ("yielded", vec![], None)
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        unpack(cell.handle.observe(in_ms(30)).await),
        ("yielded", vec!["x".into(), "y".into()], None)
    );
}

#[tokio::test]
async fn yield_timer_preempts_buffered_runtime_output() {
    let cell = spawn(vec![started(), text("a"), text("b"), Step::Hang]);
    let zero = YieldTimer::FromStart(Duration::ZERO);
    assert_eq!(
        unpack(cell.handle.observe(zero).await),
        ("yielded", vec![], None)
    );
    assert_eq!(
        unpack(cell.handle.terminate().await),
        ("terminated", vec!["a".into(), "b".into()], None)
    );
    assert!(cell.closed.load(Ordering::SeqCst));
}

#[tokio::test]
async fn initial_yield_timer_starts_when_the_cell_starts() {
    let cell = spawn(vec![
        Step::Sleep(Duration::from_millis(80)),
        started(),
        Step::Hang,
    ]);
    let begin = Instant::now();
    let reply = cell
        .handle
        .observe(YieldTimer::FromStart(Duration::from_millis(50)))
        .await;
    assert_eq!(unpack(reply).0, "yielded");
    assert!(
        begin.elapsed() >= Duration::from_millis(130),
        "timer must start at Started"
    );
}

#[tokio::test]
async fn unexpected_runtime_loss_completes_with_an_error_and_keeps_output() {
    let cell = spawn(vec![started(), text("partial"), Step::Vanish]);
    assert_eq!(
        unpack(cell.handle.observe(LONG).await),
        (
            "result",
            vec!["partial".into()],
            Some(RUNTIME_ENDED_UNEXPECTEDLY.to_owned())
        )
    );
    assert!(
        cell.delegate.log().iter().all(|l| !l.starts_with("commit")),
        "nothing is committed"
    );
}

#[tokio::test]
async fn observed_natural_completion_wins_over_termination() {
    let cell = spawn(vec![
        started(),
        text("done"),
        finish(None, &[("k", json!("v"))]),
    ]);
    settle().await;
    assert_eq!(
        unpack(cell.handle.terminate().await),
        ("result", vec!["done".into()], None)
    );
    assert_eq!(
        cell.delegate.store.lock().unwrap().get("k"),
        Some(&json!("v"))
    );
    assert!(!cell.engine.commands().contains(&CellCommand::Terminate));
}

#[tokio::test]
async fn queued_termination_preempts_unobserved_runtime_completion_and_discards_writes() {
    let cell = spawn(vec![started(), text("a"), finish(None, &[("k", json!(1))])]);
    // The terminate request is handled before the queued result is read.
    assert_eq!(
        unpack(cell.handle.terminate().await),
        ("terminated", vec!["a".into()], None)
    );
    assert!(cell.delegate.store.lock().unwrap().is_empty());
}

#[tokio::test]
async fn termination_discards_stored_writes() {
    let cell = spawn(vec![started(), Step::Hang]);
    assert_eq!(unpack(cell.handle.observe(in_ms(10)).await).0, "yielded");
    assert_eq!(unpack(cell.handle.terminate().await).0, "terminated");
    assert!(
        cell.delegate.store.lock().unwrap().is_empty(),
        "the engine's writes were discarded"
    );
    assert_eq!(cell.engine.commands(), vec![CellCommand::Terminate]);
}

#[tokio::test]
async fn second_observer_is_rejected_without_displacing_the_first() {
    let cell = spawn(vec![started(), Step::Hang]);
    let first_handle = cell.handle.clone();
    let first = tokio::spawn(async move { first_handle.observe(in_ms(30_000)).await });
    settle().await;
    assert_eq!(
        unpack(cell.handle.observe(in_ms(30_000)).await).0,
        "already_observed"
    );
    assert_eq!(unpack(cell.handle.terminate().await).0, "terminated");
    assert_eq!(
        unpack(first.await.unwrap()).0,
        "terminated",
        "the first observer learns of the termination"
    );
}

#[tokio::test]
async fn dropped_yield_observer_preserves_output_for_the_next_observation() {
    let cell = spawn(vec![started(), text("kept"), Step::Hang]);
    let dropped = tokio::time::timeout(
        Duration::from_millis(20),
        cell.handle.observe(in_ms(30_000)),
    )
    .await;
    assert!(dropped.is_err());
    assert_eq!(
        unpack(cell.handle.observe(in_ms(10)).await),
        ("yielded", vec!["kept".into()], None)
    );
}

#[tokio::test]
async fn repeated_termination_is_rejected_while_cleanup_is_pending() {
    let mut engine = ScriptedEngine::fixed(vec![started(), Step::Hang]);
    engine.stop_delay = Duration::from_millis(150);
    let cell = spawn_with(engine, RecordingDelegate::replying(), 64);
    let handle = cell.handle.clone();
    let first = tokio::spawn(async move { handle.terminate().await });
    settle().await;
    assert_eq!(
        unpack(cell.handle.terminate().await).0,
        "already_terminating"
    );
    assert_eq!(unpack(first.await.unwrap()).0, "terminated");
}

#[tokio::test]
async fn natural_completion_cancels_callbacks_before_responding() {
    let delegate = RecordingDelegate::new(|_| ToolBehavior::HangUntilCancelled);
    let engine = ScriptedEngine::fixed(vec![
        started(),
        tool_call(1, "slow", json!({})),
        Step::Sleep(Duration::from_millis(20)),
        finish_abandoning(None, &[], 1),
    ]);
    let cell = spawn_with(engine, delegate, 64);
    let reply = cell.handle.observe(LONG).await;
    let Some(ObserveReply::Response(RuntimeResponse::Result {
        abandoned_tool_calls,
        ..
    })) = reply
    else {
        panic!("expected a result, got {reply:?}");
    };
    assert_eq!(abandoned_tool_calls, 1);
    assert_eq!(
        cell.delegate.log(),
        vec!["invoke tool-1 slow", "cancelled tool-1"]
    );
    assert!(cell.closed.load(Ordering::SeqCst));
}

#[tokio::test]
async fn callbacks_ignoring_cancellation_are_aborted_after_the_grace() {
    let delegate = RecordingDelegate::new(|_| ToolBehavior::Ignore);
    let engine = ScriptedEngine::fixed(vec![
        started(),
        tool_call(1, "stuck", json!({})),
        finish(None, &[]),
    ]);
    let cell = spawn_with(engine, delegate, 64);
    let reply = tokio::time::timeout(Duration::from_secs(2), cell.handle.observe(LONG)).await;
    assert_eq!(
        unpack(reply.expect("completion must not wait for a stuck callback")).0,
        "result"
    );
}

#[tokio::test]
async fn nested_calls_round_trip_through_the_delegate() {
    let delegate = RecordingDelegate::new(|call| match call.tool_name.name.as_str() {
        "ok" => ToolBehavior::Reply(json!({ "got": call.input.clone() }), Duration::ZERO),
        _ => ToolBehavior::Fail("nope".to_owned()),
    });
    let engine = ScriptedEngine::fixed(vec![
        started(),
        tool_call(1, "ok", json!({ "x": 1 })),
        Step::AwaitCommand,
        tool_call(2, "bad", json!(null)),
        Step::AwaitCommand,
        finish(None, &[]),
    ]);
    let cell = spawn_with(engine, delegate, 64);
    assert_eq!(unpack(cell.handle.observe(LONG).await).0, "result");
    assert_eq!(
        cell.engine.commands(),
        vec![
            CellCommand::ToolResponse {
                id: ToolCallId::nth(1),
                value: Some(json!({ "got": { "x": 1 } }))
            },
            CellCommand::ToolError {
                id: ToolCallId::nth(2),
                text: "nope".to_owned()
            },
        ]
    );
}

#[tokio::test]
async fn concurrent_nested_calls_are_capped_and_the_rest_queue() {
    let delegate =
        RecordingDelegate::new(|_| ToolBehavior::Reply(json!(1), Duration::from_millis(30)));
    let mut steps = vec![started()];
    steps.extend((1..=5).map(|n| tool_call(n, "t", json!(n))));
    steps.extend((1..=5).map(|_| Step::AwaitCommand));
    steps.push(finish(None, &[]));
    let cell = spawn_with(ScriptedEngine::fixed(steps), delegate, 2);
    assert_eq!(unpack(cell.handle.observe(LONG).await).0, "result");
    assert_eq!(cell.delegate.max_in_flight.load(Ordering::SeqCst), 2);
    let responses = cell
        .engine
        .commands()
        .iter()
        .filter(|c| matches!(c, CellCommand::ToolResponse { .. }))
        .count();
    assert_eq!(responses, 5);
}

#[tokio::test]
async fn pending_notifications_are_delivered_before_completion() {
    let mut delegate = RecordingDelegate::replying();
    delegate.notify_delay = Duration::from_millis(30);
    let engine = ScriptedEngine::fixed(vec![
        started(),
        notify("one"),
        notify("two"),
        finish(None, &[]),
    ]);
    let cell = spawn_with(engine, delegate, 64);
    assert_eq!(unpack(cell.handle.observe(LONG).await).0, "result");
    assert_eq!(
        cell.delegate.log(),
        vec!["notify call-1 one", "notify call-1 two"]
    );
}

#[tokio::test]
async fn exit_with_writes_commits_before_the_result_is_published() {
    let cell = spawn(vec![
        started(),
        text("t"),
        finish(Some("Error: boom"), &[("a", json!([1]))]),
    ]);
    let reply = unpack(cell.handle.observe(LONG).await);
    assert_eq!(
        reply,
        ("result", vec!["t".into()], Some("Error: boom".to_owned()))
    );
    assert_eq!(
        cell.delegate.store.lock().unwrap().get("a"),
        Some(&json!([1])),
        "failed cells commit too"
    );
}
