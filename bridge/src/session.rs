//! [`LocalSession`]: one logical code-mode session whose cells run on an engine in this
//! process (the host process, or the runtime itself with an injected engine).
//!
//! # States
//! Open (admits cells) → shutting down (admits none, terminates all) → shut down (no cells).
//! Each cell is active (its actor runs) or, after it closed, a tombstone kept for
//! [`LocalSessionOptions::tombstone_ttl`] so a late `wait` learns the result was returned.
//!
//! # Guarantees
//! - Admission is checked under the registry lock, so no cell starts after shutdown began.
//! - At most [`CellAdmission`]'s cap of cells are active across the sessions sharing it.
//! - Unknown ids are `Missing`; recently closed ones are `AlreadyClosed`.
//!
//! # Termination
//! `shutdown` cancels the session token (every cell terminates; attached observers receive
//! `Terminated`) and returns once no cell is active. Dropping the session cancels the token
//! too, so no cell outlives its session.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cell_actor::{
    CALLBACK_CANCELLATION_GRACE, CellActorParams, CellHandle, ObserveReply, YieldTimer,
    deadline_after,
};
use crate::code_mode_session::RUNTIME_ENDED_UNEXPECTEDLY;
use crate::{
    BridgeError, CellAdmission, CellEngine, CellId, CodeModeSession, ExecuteRequest,
    RuntimeResponse, SessionDelegate, WaitOutcome,
};

/// How long a closed cell's id is remembered by default.
pub const DEFAULT_TOMBSTONE_TTL: Duration = Duration::from_secs(15 * 60);

/// Configuration of a [`LocalSession`].
#[derive(Clone, Debug)]
pub struct LocalSessionOptions {
    /// How long a closed cell answers `AlreadyClosed` instead of `Missing`.
    pub tombstone_ttl: Duration,
    /// How long cancelled nested calls may take before they are aborted.
    pub callback_grace: Duration,
    /// The active-cell cap; share one value between sessions of one host.
    pub admission: CellAdmission,
}

impl Default for LocalSessionOptions {
    fn default() -> Self {
        Self {
            tombstone_ttl: DEFAULT_TOMBSTONE_TTL,
            callback_grace: CALLBACK_CANCELLATION_GRACE,
            admission: CellAdmission::default(),
        }
    }
}

/// One logical session whose cells run on a [`CellEngine`] in this process.
pub struct LocalSession {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    engine: Arc<dyn CellEngine>,
    delegate: Arc<dyn SessionDelegate>,
    options: LocalSessionOptions,
    token: CancellationToken,
    registry: Mutex<Registry>,
    idle: Notify,
}

#[derive(Default)]
struct Registry {
    shutting_down: bool,
    active: HashMap<CellId, CellHandle>,
    tombstones: HashMap<CellId, Instant>,
}

impl Drop for SessionInner {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

impl SessionInner {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding this lock leaves only plain maps behind; keep using them.
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A started cell whose initial observation has not completed yet.
pub struct LaunchedCell {
    /// The new cell's id.
    pub cell_id: CellId,
    /// Resolves with the initial exec response (yield or completion).
    pub initial_response: BoxFuture<'static, RuntimeResponse>,
}

impl LocalSession {
    /// A session running cells on `engine`, reaching back through `delegate`.
    pub fn new(
        engine: Arc<dyn CellEngine>,
        delegate: Arc<dyn SessionDelegate>,
        options: LocalSessionOptions,
    ) -> Self {
        Self {
            inner: Arc::new(SessionInner {
                engine,
                delegate,
                options,
                token: CancellationToken::new(),
                registry: Mutex::new(Registry::default()),
                idle: Notify::new(),
            }),
        }
    }

    /// Starts a cell and returns its id at once, with the initial observation as a future
    /// (the host protocol announces the id before the first response).
    pub fn launch(&self, req: ExecuteRequest) -> Result<LaunchedCell, BridgeError> {
        let inner = &self.inner;
        let handle;
        let cell_id;
        {
            let mut registry = inner.registry();
            if registry.shutting_down {
                return Err(BridgeError::ShuttingDown);
            }
            let permit = inner.options.admission.try_admit()?;
            cell_id = CellId::generate();
            let channels = inner.engine.start_cell(cell_id.clone(), req.start)?;
            let weak: Weak<SessionInner> = Arc::downgrade(inner);
            let delegate = Arc::clone(&inner.delegate);
            let closing_id = cell_id.clone();
            let on_close = Box::new(move || {
                drop(permit);
                if let Some(inner) = weak.upgrade() {
                    inner.record_closed(&closing_id);
                }
                delegate.cell_closed(closing_id);
            });
            handle = CellHandle::spawn(CellActorParams {
                cell_id: cell_id.clone(),
                exec_call_id: req.exec_call_id,
                channels,
                delegate: Arc::clone(&inner.delegate),
                max_concurrent_tool_calls: req.max_concurrent_tool_calls,
                cell_token: inner.token.child_token(),
                callback_grace: inner.options.callback_grace,
                on_close,
            });
            registry.active.insert(cell_id.clone(), handle.clone());
        }
        let timer = YieldTimer::FromStart(Duration::from_millis(req.yield_time_ms));
        let id = cell_id.clone();
        let initial_response = async move {
            match handle.observe(timer).await {
                Some(ObserveReply::Response(response)) => response,
                // The first observation of a new cell cannot be rejected; if the actor is
                // gone the cell ended without anyone seeing a result.
                Some(ObserveReply::AlreadyObserved | ObserveReply::AlreadyTerminating) | None => {
                    RuntimeResponse::Result {
                        cell_id: id,
                        content_items: Vec::new(),
                        error_text: Some(RUNTIME_ENDED_UNEXPECTEDLY.to_owned()),
                        abandoned_tool_calls: 0,
                    }
                }
            }
        }
        .boxed();
        Ok(LaunchedCell {
            cell_id,
            initial_response,
        })
    }

    /// Number of cells whose actors still run.
    pub fn active_cells(&self) -> usize {
        self.inner.registry().active.len()
    }

    fn lookup(&self, cell_id: &CellId) -> Result<CellHandle, WaitOutcome> {
        let mut registry = self.inner.registry();
        let ttl = self.inner.options.tombstone_ttl;
        let now = Instant::now();
        registry
            .tombstones
            .retain(|_, closed| now.duration_since(*closed) < ttl);
        if let Some(handle) = registry.active.get(cell_id) {
            return Ok(handle.clone());
        }
        if registry.tombstones.contains_key(cell_id) {
            return Err(WaitOutcome::AlreadyClosed(cell_id.clone()));
        }
        Err(WaitOutcome::Missing(cell_id.clone()))
    }

    async fn wait_impl(&self, cell_id: CellId, yield_time_ms: u64) -> WaitOutcome {
        let handle = match self.lookup(&cell_id) {
            Ok(handle) => handle,
            Err(outcome) => return outcome,
        };
        let deadline = deadline_after(Instant::now(), Duration::from_millis(yield_time_ms));
        to_outcome(cell_id, handle.observe(YieldTimer::Until(deadline)).await)
    }

    async fn terminate_impl(&self, cell_id: CellId) -> WaitOutcome {
        let handle = match self.lookup(&cell_id) {
            Ok(handle) => handle,
            Err(outcome) => return outcome,
        };
        to_outcome(cell_id, handle.terminate().await)
    }

    async fn shutdown_impl(&self) {
        self.inner.registry().shutting_down = true;
        self.inner.token.cancel();
        loop {
            let mut notified = pin!(self.inner.idle.notified());
            notified.as_mut().enable();
            if self.inner.registry().active.is_empty() {
                return;
            }
            notified.await;
        }
    }
}

impl SessionInner {
    fn record_closed(&self, cell_id: &CellId) {
        let mut registry = self.registry();
        registry.active.remove(cell_id);
        registry.tombstones.insert(cell_id.clone(), Instant::now());
        if registry.active.is_empty() {
            self.idle.notify_waiters();
        }
    }
}

fn to_outcome(cell_id: CellId, reply: Option<ObserveReply>) -> WaitOutcome {
    match reply {
        Some(ObserveReply::Response(response)) => WaitOutcome::Live(response),
        Some(ObserveReply::AlreadyObserved) => WaitOutcome::AlreadyObserved(cell_id),
        Some(ObserveReply::AlreadyTerminating) => WaitOutcome::AlreadyTerminating(cell_id),
        // The actor ended between the lookup and the request: its result went elsewhere.
        None => WaitOutcome::AlreadyClosed(cell_id),
    }
}

impl CodeModeSession for LocalSession {
    fn execute(&self, req: ExecuteRequest) -> BoxFuture<'_, Result<RuntimeResponse, BridgeError>> {
        async move {
            let launched = self.launch(req)?;
            Ok(launched.initial_response.await)
        }
        .boxed()
    }

    fn wait(
        &self,
        cell_id: CellId,
        yield_time_ms: u64,
    ) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        async move { Ok(self.wait_impl(cell_id, yield_time_ms).await) }.boxed()
    }

    fn terminate(&self, cell_id: CellId) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        async move { Ok(self.terminate_impl(cell_id).await) }.boxed()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.shutdown_impl().boxed()
    }
}

#[cfg(test)]
mod tests;
