//! The per-cell actor: one task that owns a running cell's output buffer, its observer, its
//! nested tool calls and its lifecycle, driven by the engine's [`CellChannels`].
//!
//! # States
//! - `Running`: the engine runs JavaScript; output accumulates in the buffer.
//! - `Finishing`: the engine reported its result; pending notifications are drained and
//!   outstanding nested calls are cancelled (100 ms grace, then aborted). A terminate or a
//!   shutdown in this state still claims the cell (its writes are discarded).
//! - `Committing`: the store writes are being committed through the delegate; requests that
//!   arrive now wait until the commit is done, so natural completion wins.
//! - `Completed`: the result is published and buffered until an observer takes it.
//! - `Terminating`: a terminate (or shutdown) was claimed; the engine was told to stop and the
//!   actor waits for its event stream to end and for callbacks to finish.
//! - closed: the final response was delivered; the actor ends and the session keeps a tombstone.
//!
//! # Guarantees
//! - Drain on observe: every observation returns only output produced since the previous one;
//!   output is never lost when an observer is dropped (it is put back for the next one).
//! - Single observer: a second concurrent observation gets `AlreadyObserved` and the first
//!   keeps its place (a dropped first observer is replaced).
//! - The yield timer of an observation preempts queued engine output (spec §3.4); the initial
//!   exec timer starts at `CellEvent::Started`, a wait's timer at the wait call.
//! - `yield_control()` ends an attached observation at once; unattached it is a no-op, except
//!   for the first one before the first observer attached (the "initial yield boundary").
//! - Store writes are committed at most once, only on natural completion, and before the
//!   completion is published; never after a termination was claimed.
//! - Requests are handled before queued engine events, so a terminate that arrives before the
//!   actor has read the engine's result wins (spec §10.6).
//!
//! # Termination
//! The actor ends once its final response (`Result` or `Terminated`) was delivered, or when its
//! cell token is cancelled (session shutdown or drop) and the engine and callbacks have
//! stopped. Closing runs the session's close hook (tombstone, permit release, `cell_closed`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use tracing::Instrument;

use crate::code_mode_session::RUNTIME_ENDED_UNEXPECTEDLY;
use crate::{
    CellChannels, CellCommand, CellCommandSender, CellEvent, CellId, ContentItem, NestedToolCall,
    RuntimeResponse, SessionDelegate, StoredValues,
};

/// How long outstanding nested calls get to react to cancellation before they are aborted.
pub(crate) const CALLBACK_CANCELLATION_GRACE: Duration = Duration::from_millis(100);

/// When the yield timer of an observation starts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum YieldTimer {
    /// At `CellEvent::Started` (the initial exec observation).
    FromStart(Duration),
    /// At a fixed instant (a wait: the time of the call plus its yield time).
    Until(Instant),
}

/// What an observation or terminate request receives.
#[derive(Debug)]
pub(crate) enum ObserveReply {
    /// The observation's response.
    Response(RuntimeResponse),
    /// Another observer is attached.
    AlreadyObserved,
    /// A termination is in progress.
    AlreadyTerminating,
}

enum Request {
    Observe {
        timer: YieldTimer,
        reply: oneshot::Sender<ObserveReply>,
    },
    Terminate {
        reply: oneshot::Sender<ObserveReply>,
    },
}

/// Everything the actor needs at spawn.
pub(crate) struct CellActorParams {
    pub(crate) cell_id: CellId,
    pub(crate) exec_call_id: String,
    pub(crate) channels: CellChannels,
    pub(crate) delegate: Arc<dyn SessionDelegate>,
    pub(crate) max_concurrent_tool_calls: usize,
    /// Cancelled by the session on shutdown/drop; the actor cancels it when terminating.
    pub(crate) cell_token: CancellationToken,
    pub(crate) callback_grace: Duration,
    /// Runs once when the cell closes.
    pub(crate) on_close: Box<dyn FnOnce() + Send>,
}

/// A cloneable handle to a running cell actor.
#[derive(Clone, Debug)]
pub(crate) struct CellHandle {
    requests: mpsc::UnboundedSender<Request>,
}

impl CellHandle {
    /// Spawns the actor on the current tokio runtime.
    pub(crate) fn spawn(params: CellActorParams) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let actor = CellActor::new(params, rx);
        let span = tracing::debug_span!("cell", cell_id = %actor.cell_id);
        tokio::spawn(actor.run().instrument(span));
        Self { requests: tx }
    }

    /// Observes the cell; `None` when the cell has already closed.
    pub(crate) async fn observe(&self, timer: YieldTimer) -> Option<ObserveReply> {
        let (reply, rx) = oneshot::channel();
        self.requests.send(Request::Observe { timer, reply }).ok()?;
        rx.await.ok()
    }

    /// Terminates the cell; `None` when the cell has already closed.
    pub(crate) async fn terminate(&self) -> Option<ObserveReply> {
        let (reply, rx) = oneshot::channel();
        self.requests.send(Request::Terminate { reply }).ok()?;
        rx.await.ok()
    }
}

struct Observer {
    reply: oneshot::Sender<ObserveReply>,
    /// `None` while an initial observation waits for `Started`, and during termination.
    deadline: Option<Instant>,
    /// The initial yield time, applied when `Started` arrives.
    from_start: Option<Duration>,
}

/// How a cell ended naturally.
struct Completion {
    error_text: Option<String>,
    abandoned_tool_calls: usize,
}

enum Phase {
    Running,
    Finishing {
        completion: Completion,
        /// `None` when nothing may be committed (engine lost or it reported a termination).
        writes: Option<StoredValues>,
    },
    Committing(Completion),
    Completed(Completion),
    Terminating {
        reply: Option<oneshot::Sender<ObserveReply>>,
        callbacks_stopped: bool,
    },
}

struct CellActor {
    cell_id: CellId,
    exec_call_id: String,
    delegate: Arc<dyn SessionDelegate>,
    requests: mpsc::UnboundedReceiver<Request>,
    requests_open: bool,
    /// `None` once the engine's stream ended.
    events: Option<mpsc::UnboundedReceiver<CellEvent>>,
    commands: CellCommandSender,
    buffer: Vec<ContentItem>,
    /// Buffer length at a yield that raced with creation (before the first observer).
    initial_yield: Option<usize>,
    first_observed: bool,
    started_at: Option<Instant>,
    observer: Option<Observer>,
    phase: Phase,
    /// The current asynchronous step of `Finishing`, `Committing` or `Terminating`.
    step: Option<BoxFuture<'static, ()>>,
    deferred: VecDeque<Request>,
    cell_token: CancellationToken,
    cancel_handled: bool,
    callbacks_token: CancellationToken,
    callback_grace: Duration,
    tool_calls: JoinSet<()>,
    tool_permits: Arc<Semaphore>,
    notify_queue: Option<mpsc::UnboundedSender<String>>,
    notifier: Option<AbortOnDropHandle<()>>,
    on_close: Option<Box<dyn FnOnce() + Send>>,
    closed: bool,
}

impl CellActor {
    fn new(params: CellActorParams, requests: mpsc::UnboundedReceiver<Request>) -> Self {
        let callbacks_token = params.cell_token.child_token();
        Self {
            cell_id: params.cell_id,
            exec_call_id: params.exec_call_id,
            delegate: params.delegate,
            requests,
            requests_open: true,
            events: Some(params.channels.events),
            commands: params.channels.commands,
            buffer: Vec::new(),
            initial_yield: None,
            first_observed: false,
            started_at: None,
            observer: None,
            phase: Phase::Running,
            step: None,
            deferred: VecDeque::new(),
            cell_token: params.cell_token,
            cancel_handled: false,
            callbacks_token,
            callback_grace: params.callback_grace,
            tool_calls: JoinSet::new(),
            tool_permits: Arc::new(Semaphore::new(params.max_concurrent_tool_calls.max(1))),
            notify_queue: None,
            notifier: None,
            on_close: Some(params.on_close),
            closed: false,
        }
    }

    async fn run(mut self) {
        while !self.closed {
            let deadline = self.observer.as_ref().and_then(|o| o.deadline);
            // An expired yield timer wins over everything queued (spec §3.4).
            if deadline.is_some_and(|d| d <= Instant::now()) {
                self.on_yield_timer();
                continue;
            }
            let watch_cancel = !self.cancel_handled
                && matches!(
                    self.phase,
                    Phase::Running | Phase::Finishing { .. } | Phase::Completed(_)
                );
            let read_events = self.events.is_some()
                && matches!(self.phase, Phase::Running | Phase::Terminating { .. });
            tokio::select! {
                biased;
                () = sleep_until_opt(deadline), if deadline.is_some() => self.on_yield_timer(),
                () = self.cell_token.cancelled(), if watch_cancel => self.on_cancelled(),
                request = self.requests.recv(), if self.requests_open => match request {
                    Some(request) => self.on_request(request),
                    None => {
                        // Every handle is gone (the session was dropped): nobody can observe.
                        self.requests_open = false;
                        self.cell_token.cancel();
                    }
                },
                () = run_step(&mut self.step), if self.step.is_some() => {
                    self.step = None;
                    self.on_step_done();
                }
                Some(_) = self.tool_calls.join_next(), if !self.tool_calls.is_empty() => {}
                event = recv_event(&mut self.events), if read_events => self.on_event(event),
            }
        }
    }

    fn on_request(&mut self, request: Request) {
        if matches!(self.phase, Phase::Committing(_)) {
            self.deferred.push_back(request);
            return;
        }
        match request {
            Request::Observe { timer, reply } => self.on_observe(timer, reply),
            Request::Terminate { reply } => self.on_terminate(reply),
        }
    }

    fn on_observe(&mut self, timer: YieldTimer, reply: oneshot::Sender<ObserveReply>) {
        if let Some(current) = &self.observer {
            if !current.reply.is_closed() {
                let _ = reply.send(ObserveReply::AlreadyObserved);
                return;
            }
            self.observer = None;
        }
        self.first_observed = true;
        if matches!(self.phase, Phase::Terminating { .. }) {
            self.observer = Some(Observer {
                reply,
                deadline: None,
                from_start: None,
            });
            return;
        }
        if let Some(boundary) = self.initial_yield.take() {
            let items: Vec<ContentItem> = self
                .buffer
                .drain(..boundary.min(self.buffer.len()))
                .collect();
            let response = RuntimeResponse::Yielded {
                cell_id: self.cell_id.clone(),
                content_items: items,
            };
            if let Err(ObserveReply::Response(response)) =
                reply.send(ObserveReply::Response(response))
            {
                let items = into_items(response);
                self.initial_yield = Some(items.len());
                self.buffer.splice(0..0, items);
            }
            return;
        }
        if matches!(self.phase, Phase::Completed(_)) {
            self.deliver_final(reply);
            return;
        }
        let (deadline, from_start) = match timer {
            YieldTimer::Until(at) => (Some(at), None),
            YieldTimer::FromStart(after) => match self.started_at {
                Some(started) => (Some(deadline_after(started, after)), None),
                None => (None, Some(after)),
            },
        };
        self.observer = Some(Observer {
            reply,
            deadline,
            from_start,
        });
    }

    fn on_terminate(&mut self, reply: oneshot::Sender<ObserveReply>) {
        match self.phase {
            Phase::Terminating { .. } => {
                let _ = reply.send(ObserveReply::AlreadyTerminating);
            }
            // Natural completion wins over a later terminate (spec §2.2).
            Phase::Completed(_) => {
                self.first_observed = true;
                self.initial_yield = None;
                self.deliver_final(reply);
            }
            Phase::Running | Phase::Finishing { .. } => self.begin_termination(Some(reply)),
            Phase::Committing(_) => self.deferred.push_back(Request::Terminate { reply }),
        }
    }

    fn on_cancelled(&mut self) {
        self.cancel_handled = true;
        match self.phase {
            Phase::Running | Phase::Finishing { .. } => self.begin_termination(None),
            Phase::Completed(_) => self.close(),
            Phase::Committing(_) | Phase::Terminating { .. } => {}
        }
    }

    fn on_yield_timer(&mut self) {
        if let Some(observer) = self.observer.take() {
            self.send_yielded(observer.reply);
        }
    }

    fn on_event(&mut self, event: Option<CellEvent>) {
        let terminating = matches!(self.phase, Phase::Terminating { .. });
        match event {
            Some(CellEvent::Started) => {
                let now = Instant::now();
                self.started_at = Some(now);
                if let Some(observer) = &mut self.observer
                    && let Some(after) = observer.from_start.take()
                {
                    observer.deadline = Some(deadline_after(now, after));
                }
            }
            Some(CellEvent::ContentItem { item }) => self.buffer.push(item),
            Some(CellEvent::ToolCall { .. } | CellEvent::Notify { .. }) if terminating => {}
            Some(CellEvent::ToolCall {
                id,
                tool_name,
                js_name,
                input,
            }) => {
                self.spawn_tool_call(NestedToolCall {
                    cell_id: self.cell_id.clone(),
                    runtime_tool_call_id: id,
                    tool_name,
                    js_name,
                    input,
                });
            }
            Some(CellEvent::Notify { text }) => self.queue_notification(text),
            Some(CellEvent::YieldRequested) => {
                if let Some(observer) = self.observer.take() {
                    self.send_yielded(observer.reply);
                } else if !self.first_observed && self.initial_yield.is_none() {
                    self.initial_yield = Some(self.buffer.len());
                }
            }
            Some(CellEvent::Result {
                error_text,
                stored_value_writes,
                abandoned_tool_calls,
                terminated,
            }) => {
                self.events = None;
                if terminating {
                    self.check_termination_done();
                } else {
                    let completion = Completion {
                        error_text,
                        abandoned_tool_calls: abandoned_tool_calls.len(),
                    };
                    self.begin_finishing(completion, (!terminated).then_some(stored_value_writes));
                }
            }
            None => {
                self.events = None;
                if terminating {
                    self.check_termination_done();
                } else {
                    tracing::warn!(cell_id = %self.cell_id, "cell engine ended without a result");
                    let completion = Completion {
                        error_text: Some(RUNTIME_ENDED_UNEXPECTEDLY.to_owned()),
                        abandoned_tool_calls: 0,
                    };
                    self.begin_finishing(completion, None);
                }
            }
        }
    }

    fn spawn_tool_call(&mut self, call: NestedToolCall) {
        let token = self.callbacks_token.child_token();
        let permits = Arc::clone(&self.tool_permits);
        let delegate = Arc::clone(&self.delegate);
        let commands = Arc::clone(&self.commands);
        let span = tracing::debug_span!("nested_tool_call", call_id = %call.runtime_tool_call_id);
        let task = async move {
            let _permit = tokio::select! {
                biased;
                () = token.cancelled() => return,
                permit = permits.acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
            };
            let id = call.runtime_tool_call_id.clone();
            let outcome = delegate.invoke_tool(call, token.clone()).await;
            if token.is_cancelled() {
                return;
            }
            let command = match outcome {
                Ok(value) => CellCommand::ToolResponse { id, value },
                Err(text) => CellCommand::ToolError { id, text },
            };
            commands.send(command);
        };
        self.tool_calls.spawn(task.instrument(span));
    }

    fn queue_notification(&mut self, text: String) {
        let queue = self.notify_queue.get_or_insert_with(|| {
            let (tx, mut rx) = mpsc::unbounded_channel::<String>();
            let delegate = Arc::clone(&self.delegate);
            let cell_id = self.cell_id.clone();
            let exec_call_id = self.exec_call_id.clone();
            // One forwarder per cell keeps notifications in order.
            self.notifier = Some(AbortOnDropHandle::new(tokio::spawn(async move {
                while let Some(text) = rx.recv().await {
                    delegate
                        .notify(cell_id.clone(), exec_call_id.clone(), text)
                        .await;
                }
            })));
            tx
        });
        let _ = queue.send(text);
    }

    fn begin_finishing(&mut self, completion: Completion, writes: Option<StoredValues>) {
        self.phase = Phase::Finishing { completion, writes };
        self.notify_queue = None;
        let notifier = self.notifier.take();
        let calls = std::mem::take(&mut self.tool_calls);
        let token = self.callbacks_token.clone();
        let grace = self.callback_grace;
        self.step = Some(Box::pin(async move {
            if let Some(notifier) = notifier {
                let _ = notifier.await;
            }
            token.cancel();
            stop_calls(calls, grace).await;
        }));
    }

    fn begin_termination(&mut self, reply: Option<oneshot::Sender<ObserveReply>>) {
        if matches!(self.phase, Phase::Running) {
            self.commands.send(CellCommand::Terminate);
        }
        // Dropping a `Finishing` step aborts what it still held; its writes are discarded.
        self.step = None;
        self.phase = Phase::Terminating {
            reply,
            callbacks_stopped: false,
        };
        self.initial_yield = None;
        if let Some(observer) = &mut self.observer {
            observer.deadline = None;
            observer.from_start = None;
        }
        self.cell_token.cancel();
        self.notify_queue = None;
        self.notifier = None;
        let calls = std::mem::take(&mut self.tool_calls);
        let grace = self.callback_grace;
        self.step = Some(Box::pin(stop_calls(calls, grace)));
    }

    fn on_step_done(&mut self) {
        match std::mem::replace(&mut self.phase, Phase::Running) {
            Phase::Finishing {
                completion,
                writes: Some(writes),
            } if !writes.is_empty() => {
                self.phase = Phase::Committing(completion);
                self.step = Some(self.delegate.commit_store(self.cell_id.clone(), writes));
            }
            Phase::Finishing { completion, .. } | Phase::Committing(completion) => {
                self.phase = Phase::Completed(completion);
                self.publish_completion();
            }
            Phase::Terminating { reply, .. } => {
                self.phase = Phase::Terminating {
                    reply,
                    callbacks_stopped: true,
                };
                self.check_termination_done();
            }
            other => self.phase = other,
        }
    }

    fn publish_completion(&mut self) {
        if let Some(observer) = self.observer.take() {
            self.deliver_final(observer.reply);
        }
        while !self.closed
            && let Some(request) = self.deferred.pop_front()
        {
            self.on_request(request);
        }
    }

    fn check_termination_done(&mut self) {
        let Phase::Terminating {
            reply,
            callbacks_stopped,
        } = &mut self.phase
        else {
            return;
        };
        if self.events.is_some() || !*callbacks_stopped {
            return;
        }
        let reply = reply.take();
        let items = std::mem::take(&mut self.buffer);
        let observer = self.observer.take().map(|o| o.reply);
        let (first, second) = match reply {
            Some(reply) => (Some(reply), observer),
            None => (observer, None),
        };
        if let Some(first) = first {
            let _ = first.send(self.terminated(items));
        }
        if let Some(second) = second {
            let _ = second.send(self.terminated(Vec::new()));
        }
        self.close();
    }

    fn terminated(&self, content_items: Vec<ContentItem>) -> ObserveReply {
        ObserveReply::Response(RuntimeResponse::Terminated {
            cell_id: self.cell_id.clone(),
            content_items,
        })
    }

    fn send_yielded(&mut self, reply: oneshot::Sender<ObserveReply>) {
        let items = std::mem::take(&mut self.buffer);
        let response = RuntimeResponse::Yielded {
            cell_id: self.cell_id.clone(),
            content_items: items,
        };
        if let Err(ObserveReply::Response(response)) = reply.send(ObserveReply::Response(response))
        {
            self.buffer.splice(0..0, into_items(response));
        }
    }

    /// Delivers the buffered completion; the cell closes only if the receiver took it.
    fn deliver_final(&mut self, reply: oneshot::Sender<ObserveReply>) {
        let Phase::Completed(completion) = &self.phase else {
            return;
        };
        let response = RuntimeResponse::Result {
            cell_id: self.cell_id.clone(),
            content_items: std::mem::take(&mut self.buffer),
            error_text: completion.error_text.clone(),
            abandoned_tool_calls: completion.abandoned_tool_calls,
        };
        match reply.send(ObserveReply::Response(response)) {
            Ok(()) => self.close(),
            Err(ObserveReply::Response(response)) => self.buffer = into_items(response),
            Err(_) => {}
        }
    }

    fn close(&mut self) {
        self.closed = true;
        self.cell_token.cancel();
        if let Some(on_close) = self.on_close.take() {
            on_close();
        }
    }
}

/// `start + after`, saturating far in the future instead of overflowing on huge yield times.
pub(crate) fn deadline_after(start: Instant, after: Duration) -> Instant {
    const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    start.checked_add(after.min(FAR_FUTURE)).unwrap_or(start)
}

fn into_items(response: RuntimeResponse) -> Vec<ContentItem> {
    match response {
        RuntimeResponse::Yielded { content_items, .. }
        | RuntimeResponse::Terminated { content_items, .. }
        | RuntimeResponse::Result { content_items, .. } => content_items,
    }
}

/// Cancelled nested calls get `grace` to finish; the rest are aborted.
async fn stop_calls(mut calls: JoinSet<()>, grace: Duration) {
    let drained =
        tokio::time::timeout(grace, async { while calls.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        calls.abort_all();
        while calls.join_next().await.is_some() {}
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => futures::future::pending().await,
    }
}

async fn run_step(step: &mut Option<BoxFuture<'static, ()>>) {
    match step {
        Some(step) => step.await,
        None => futures::future::pending().await,
    }
}

async fn recv_event(events: &mut Option<mpsc::UnboundedReceiver<CellEvent>>) -> Option<CellEvent> {
    match events {
        Some(events) => events.recv().await,
        None => futures::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
