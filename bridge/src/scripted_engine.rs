//! Test support: a [`CellEngine`] whose cells follow a script of events and react to commands,
//! and a [`SessionDelegate`] that records what it was asked. They exercise the pure
//! state-machine logic of the actor, the session and the protocol; real-V8 tests live in the
//! host crate.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{
    BridgeError, CellChannels, CellCommand, CellCommandSink, CellEngine, CellEvent, CellId,
    CellLimits, CellStart, ContentItem, ExecuteRequest, NestedToolCall, SessionDelegate,
    StoredValues, ToolCallId, ToolName,
};

/// One step of a scripted cell.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Emit an event (leading `Emit`s are emitted synchronously inside `start_cell`).
    Emit(CellEvent),
    /// Sleep; a terminate during the sleep stops the cell.
    Sleep(Duration),
    /// Wait for the next non-terminate command (for example a tool response).
    AwaitCommand,
    /// Run until terminated.
    Hang,
    /// Drop the event channel without a result (the runtime was lost).
    Vanish,
}

pub(crate) fn text(t: &str) -> Step {
    Step::Emit(CellEvent::ContentItem {
        item: ContentItem::text(t),
    })
}

pub(crate) fn started() -> Step {
    Step::Emit(CellEvent::Started)
}

pub(crate) fn yield_control() -> Step {
    Step::Emit(CellEvent::YieldRequested)
}

pub(crate) fn notify(t: &str) -> Step {
    Step::Emit(CellEvent::Notify { text: t.to_owned() })
}

pub(crate) fn tool_call(n: u64, name: &str, input: serde_json::Value) -> Step {
    Step::Emit(CellEvent::ToolCall {
        id: ToolCallId::nth(n),
        tool_name: ToolName::plain(name),
        js_name: name.to_owned(),
        input: Some(input),
    })
}

pub(crate) fn finish(error_text: Option<&str>, writes: &[(&str, serde_json::Value)]) -> Step {
    finish_abandoning(error_text, writes, 0)
}

pub(crate) fn finish_abandoning(
    error_text: Option<&str>,
    writes: &[(&str, serde_json::Value)],
    abandoned: u64,
) -> Step {
    Step::Emit(CellEvent::Result {
        error_text: error_text.map(str::to_owned),
        stored_value_writes: writes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        abandoned_tool_calls: (1..=abandoned).map(ToolCallId::nth).collect(),
        terminated: false,
    })
}

type Script = Box<dyn Fn(&CellStart) -> Vec<Step> + Send + Sync>;

/// Starts cells whose behaviour is chosen by a script function of their `CellStart`.
pub(crate) struct ScriptedEngine {
    script: Script,
    /// Every command any cell received, in order.
    pub(crate) commands: Arc<Mutex<Vec<(CellId, CellCommand)>>>,
    /// How long a cell takes to stop after `Terminate`.
    pub(crate) stop_delay: Duration,
}

impl ScriptedEngine {
    pub(crate) fn new(script: impl Fn(&CellStart) -> Vec<Step> + Send + Sync + 'static) -> Self {
        Self {
            script: Box::new(script),
            commands: Arc::default(),
            stop_delay: Duration::ZERO,
        }
    }

    /// Every cell runs `steps`.
    pub(crate) fn fixed(steps: Vec<Step>) -> Self {
        Self::new(move |_| steps.clone())
    }

    pub(crate) fn commands(&self) -> Vec<CellCommand> {
        self.commands
            .lock()
            .unwrap()
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }
}

#[derive(Debug)]
struct ScriptSink {
    cell_id: CellId,
    tx: mpsc::UnboundedSender<CellCommand>,
    log: Arc<Mutex<Vec<(CellId, CellCommand)>>>,
}

impl CellCommandSink for ScriptSink {
    fn send(&self, command: CellCommand) -> bool {
        self.log
            .lock()
            .unwrap()
            .push((self.cell_id.clone(), command.clone()));
        self.tx.send(command).is_ok()
    }
}

impl CellEngine for ScriptedEngine {
    fn start_cell(&self, cell_id: CellId, start: CellStart) -> Result<CellChannels, BridgeError> {
        let mut steps: VecDeque<Step> = (self.script)(&start).into();
        let (events_tx, events) = mpsc::unbounded_channel();
        let (commands_tx, commands_rx) = mpsc::unbounded_channel();
        while let Some(Step::Emit(event)) = steps.front() {
            let _ = events_tx.send(event.clone());
            steps.pop_front();
        }
        tokio::spawn(run_script(steps, events_tx, commands_rx, self.stop_delay));
        let sink = ScriptSink {
            cell_id,
            tx: commands_tx,
            log: Arc::clone(&self.commands),
        };
        Ok(CellChannels {
            events,
            commands: Arc::new(sink),
        })
    }
}

async fn run_script(
    steps: VecDeque<Step>,
    events: mpsc::UnboundedSender<CellEvent>,
    mut commands: mpsc::UnboundedReceiver<CellCommand>,
    stop_delay: Duration,
) {
    let stop = |events: &mpsc::UnboundedSender<CellEvent>| {
        let events = events.clone();
        async move {
            tokio::time::sleep(stop_delay).await;
            let _ = events.send(CellEvent::Result {
                error_text: Some("terminated".to_owned()),
                // A terminated cell reports its writes; the actor must discard them.
                stored_value_writes: BTreeMap::from([(
                    "partial".to_owned(),
                    serde_json::json!(true),
                )]),
                abandoned_tool_calls: Vec::new(),
                terminated: true,
            });
        }
    };
    for step in steps {
        match step {
            Step::Emit(event) => {
                let _ = events.send(event);
            }
            Step::Sleep(duration) => {
                let sleep = tokio::time::sleep(duration);
                tokio::pin!(sleep);
                loop {
                    tokio::select! {
                        () = &mut sleep => break,
                        command = commands.recv() => match command {
                            Some(CellCommand::Terminate) => return stop(&events).await,
                            Some(_) => {}
                            None => return,
                        },
                    }
                }
            }
            Step::AwaitCommand | Step::Hang => loop {
                match commands.recv().await {
                    Some(CellCommand::Terminate) => return stop(&events).await,
                    Some(_) if matches!(step, Step::AwaitCommand) => break,
                    Some(_) => {}
                    None => return,
                }
            },
            Step::Vanish => return,
        }
    }
    // The script ended: the event channel closes (normally right after its result).
    drop(events);
}

/// How the recording delegate answers a nested call.
#[derive(Clone, Debug)]
pub(crate) enum ToolBehavior {
    /// Answer with this value after the delay.
    Reply(serde_json::Value, Duration),
    /// Reject with this text.
    Fail(String),
    /// Never answer; record the cancellation when the token fires.
    HangUntilCancelled,
    /// Never answer and ignore cancellation.
    Ignore,
}

/// Records every delegate call as a line of text.
pub(crate) struct RecordingDelegate {
    pub(crate) log: Arc<Mutex<Vec<String>>>,
    pub(crate) behavior: Box<dyn Fn(&NestedToolCall) -> ToolBehavior + Send + Sync>,
    pub(crate) notify_delay: Duration,
    pub(crate) in_flight: Arc<AtomicUsize>,
    pub(crate) max_in_flight: Arc<AtomicUsize>,
    pub(crate) store: Arc<Mutex<StoredValues>>,
    pub(crate) closed: Arc<tokio::sync::Notify>,
}

impl RecordingDelegate {
    pub(crate) fn new(
        behavior: impl Fn(&NestedToolCall) -> ToolBehavior + Send + Sync + 'static,
    ) -> Self {
        Self {
            log: Arc::default(),
            behavior: Box::new(behavior),
            notify_delay: Duration::ZERO,
            in_flight: Arc::default(),
            max_in_flight: Arc::default(),
            store: Arc::default(),
            closed: Arc::default(),
        }
    }

    pub(crate) fn replying() -> Self {
        Self::new(|call| {
            ToolBehavior::Reply(
                serde_json::json!({ "echo": call.input.clone() }),
                Duration::ZERO,
            )
        })
    }

    pub(crate) fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl SessionDelegate for RecordingDelegate {
    fn invoke_tool(
        &self,
        call: NestedToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Option<serde_json::Value>, String>> {
        let behavior = (self.behavior)(&call);
        let log = Arc::clone(&self.log);
        let in_flight = Arc::clone(&self.in_flight);
        let max_in_flight = Arc::clone(&self.max_in_flight);
        let id = call.runtime_tool_call_id.clone();
        log.lock()
            .unwrap()
            .push(format!("invoke {id} {}", call.tool_name));
        async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            max_in_flight.fetch_max(now, Ordering::SeqCst);
            let result = match behavior {
                ToolBehavior::Reply(value, delay) => {
                    tokio::time::sleep(delay).await;
                    Ok(Some(value))
                }
                ToolBehavior::Fail(text) => Err(text),
                ToolBehavior::HangUntilCancelled => {
                    cancel.cancelled().await;
                    log.lock().unwrap().push(format!("cancelled {id}"));
                    Err("cancelled".to_owned())
                }
                ToolBehavior::Ignore => futures::future::pending().await,
            };
            in_flight.fetch_sub(1, Ordering::SeqCst);
            result
        }
        .boxed()
    }

    fn notify(
        &self,
        cell_id: CellId,
        exec_call_id: String,
        text: String,
    ) -> BoxFuture<'static, ()> {
        let log = Arc::clone(&self.log);
        let delay = self.notify_delay;
        async move {
            tokio::time::sleep(delay).await;
            log.lock()
                .unwrap()
                .push(format!("notify {exec_call_id} {text}"));
            let _ = cell_id;
        }
        .boxed()
    }

    fn commit_store(&self, _cell_id: CellId, writes: StoredValues) -> BoxFuture<'static, ()> {
        let log = Arc::clone(&self.log);
        let store = Arc::clone(&self.store);
        async move {
            log.lock().unwrap().push(format!(
                "commit {}",
                serde_json::to_string(&writes).unwrap()
            ));
            store.lock().unwrap().extend(writes);
        }
        .boxed()
    }

    fn cell_closed(&self, _cell_id: CellId) {
        self.log.lock().unwrap().push("closed".to_owned());
        self.closed.notify_waiters();
    }
}

/// An execute request for `source` with `yield_time_ms`.
pub(crate) fn execute_request(source: &str, yield_time_ms: u64) -> ExecuteRequest {
    ExecuteRequest {
        exec_call_id: "call-1".to_owned(),
        start: CellStart {
            source: source.to_owned(),
            tools: Vec::new(),
            stored_values: StoredValues::new(),
            limits: CellLimits::default(),
        },
        yield_time_ms,
        max_concurrent_tool_calls: crate::DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
    }
}
