//! The per-step call runtime: parallelism gate, call-ordered results and cancellation
//! (spec runtime §3).
//!
//! # Guarantees
//! - Parallel-safe tools take the step's lock for reading, all others for writing: two
//!   parallel-safe calls overlap, a non-parallel call excludes every other call of the step.
//! - [`InFlightToolCalls`] yields results in the order calls were pushed, whatever order they
//!   complete in; each call starts running as soon as it is pushed.
//! - Each call gets a child cancellation token. A cancelled call answers
//!   `aborted by user after <s>s` unless it had already finished, in which case its real
//!   result is returned. The lifecycle reports exactly one terminal outcome either way.
//!
//! # Termination
//! Dropping a pending call aborts its task (the handler future is dropped).

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use futures::stream::{FuturesOrdered, StreamExt};
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::router::{
    CallLifecycle, StepContext, ToolCall, ToolCallResult, ToolFinishOutcome, ToolLifecycleEvent,
};
use crate::tool::{AbortedToolOutput, FunctionCallError, ToolCallSource, ToolOutput, messages};

type DispatchOutcome = (Result<Box<dyn ToolOutput>, FunctionCallError>, Vec<String>);

/// Runs the calls of one sampling step; clone it per call.
#[derive(Clone, Debug)]
pub struct ToolCallRuntime {
    step: StepContext,
    parallel_execution: Arc<RwLock<()>>,
    cancellation: CancellationToken,
}

impl ToolCallRuntime {
    /// A runtime for the calls of `step`; `cancellation` is the turn's interrupt token.
    pub fn new(step: StepContext, cancellation: CancellationToken) -> Self {
        Self {
            step,
            parallel_execution: Arc::new(RwLock::new(())),
            cancellation,
        }
    }

    /// A runtime for calls nested in a call of this one (code-mode `tools.x()` inside `exec`):
    /// the same step plan and turn token, but its own parallelism gate. The hosting `exec`
    /// call holds this runtime's gate while its cell runs, so nested calls taking the same
    /// gate would deadlock; nested calls are serialized among themselves instead.
    pub fn for_nested_calls(&self) -> Self {
        Self::new(self.step.clone(), self.cancellation.clone())
    }

    /// The step whose plan every call of this runtime uses.
    pub fn step(&self) -> &StepContext {
        &self.step
    }

    /// Runs one call to completion (or cancellation by the turn token). Code-mode nested calls
    /// come through here with `ToolCallSource::CodeMode`, under the same lock, hooks and
    /// lifecycle as direct calls.
    pub async fn handle_tool_call(&self, call: ToolCall, source: ToolCallSource) -> ToolCallResult {
        self.start_tool_call(call, source, None).wait().await
    }

    /// Like [`handle_tool_call`](Self::handle_tool_call), also cancelled by `cancellation`
    /// (for example an exec cell's token).
    pub async fn handle_tool_call_with_cancellation(
        &self,
        call: ToolCall,
        source: ToolCallSource,
        cancellation: CancellationToken,
    ) -> ToolCallResult {
        self.start_tool_call(call, source, Some(cancellation))
            .wait()
            .await
    }

    /// Starts a call now (it runs even if the returned handle is not polled yet).
    pub fn start_tool_call(
        &self,
        call: ToolCall,
        source: ToolCallSource,
        extra_cancellation: Option<CancellationToken>,
    ) -> PendingToolCall {
        let started = Instant::now();
        let token = self.cancellation.child_token();
        let lifecycle = Arc::new(CallLifecycle::new(
            ToolLifecycleEvent {
                call_id: call.call_id.clone(),
                tool_name: call.tool_name.clone(),
                source: source.clone(),
            },
            Arc::clone(&self.step.plan.observers),
        ));
        let parallel = self.step.tool_supports_parallel(&call.tool_name);
        let waits_for_cleanup = self
            .step
            .registry()
            .get(&call.tool_name)
            .is_some_and(|executor| executor.waits_for_runtime_cancellation());
        let task = {
            let step = self.step.clone();
            let lock = Arc::clone(&self.parallel_execution);
            let call = call.clone();
            let token = token.clone();
            let lifecycle = Arc::clone(&lifecycle);
            async move {
                let _read;
                let _write;
                if parallel {
                    _read = lock.read_owned().await;
                } else {
                    _write = lock.write_owned().await;
                }
                step.dispatch(&call, source, token, &lifecycle).await
            }
        };
        PendingToolCall {
            call,
            handle: AbortOnDropHandle::new(tokio::spawn(task)),
            token,
            turn: self.cancellation.clone(),
            extra: extra_cancellation,
            lifecycle,
            started,
            waits_for_cleanup,
        }
    }
}

/// A started call; [`wait`](Self::wait) for its result. Dropping it aborts the call.
pub struct PendingToolCall {
    call: ToolCall,
    handle: AbortOnDropHandle<DispatchOutcome>,
    token: CancellationToken,
    turn: CancellationToken,
    extra: Option<CancellationToken>,
    lifecycle: Arc<CallLifecycle>,
    started: Instant,
    waits_for_cleanup: bool,
}

impl PendingToolCall {
    /// The call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// Waits for the result, racing the call against cancellation.
    pub async fn wait(mut self) -> ToolCallResult {
        let turn = self.turn.clone();
        let extra = self.extra.clone();
        let cancelled = async move {
            match extra {
                Some(extra) => tokio::select! {
                    () = turn.cancelled() => {},
                    () = extra.cancelled() => {},
                },
                None => turn.cancelled().await,
            }
        };
        tokio::select! {
            biased;
            joined = &mut self.handle => return self.joined(joined),
            () = cancelled => {}
        }
        self.token.cancel();
        if self.lifecycle.is_claimed() || self.handle.is_finished() {
            let joined = (&mut self.handle).await;
            return self.joined(joined);
        }
        if self.waits_for_cleanup {
            if !self.lifecycle.claim() {
                let joined = (&mut self.handle).await;
                return self.joined(joined);
            }
            self.lifecycle.notify_finish(ToolFinishOutcome::Aborted);
            // Let the handler tear its process down; its output is no longer wanted.
            let _ = (&mut self.handle).await;
            return self.aborted();
        }
        self.handle.abort();
        match (&mut self.handle).await {
            Ok(outcome) => self.joined(Ok(outcome)),
            Err(_) => {
                self.lifecycle.finish(ToolFinishOutcome::Aborted);
                self.aborted()
            }
        }
    }

    fn joined(self, joined: Result<DispatchOutcome, tokio::task::JoinError>) -> ToolCallResult {
        match joined {
            Ok((output, additional_contexts)) => ToolCallResult {
                call: self.call,
                output,
                additional_contexts,
            },
            Err(error) if error.is_cancelled() => self.aborted(),
            Err(error) => ToolCallResult {
                call: self.call,
                output: Err(FunctionCallError::Fatal(messages::task_failed_to_receive(
                    &error.to_string(),
                ))),
                additional_contexts: Vec::new(),
            },
        }
    }

    fn aborted(self) -> ToolCallResult {
        let output = AbortedToolOutput::after(self.started.elapsed().as_secs_f64());
        ToolCallResult {
            call: self.call,
            output: Ok(Box::new(output)),
            additional_contexts: Vec::new(),
        }
    }
}

/// The calls of one step in flight, yielded in call order.
#[derive(Default)]
pub struct InFlightToolCalls {
    futures: FuturesOrdered<BoxFuture<'static, ToolCallResult>>,
}

impl InFlightToolCalls {
    /// No calls yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a direct call now and queues its result behind the earlier ones.
    pub fn push(&mut self, runtime: &ToolCallRuntime, call: ToolCall) {
        let pending = runtime.start_tool_call(call, ToolCallSource::Direct, None);
        self.futures.push_back(Box::pin(pending.wait()));
    }

    /// The next result in call order.
    pub async fn next(&mut self) -> Option<ToolCallResult> {
        self.futures.next().await
    }

    /// All results, in call order.
    pub async fn drain(mut self) -> Vec<ToolCallResult> {
        let mut results = Vec::with_capacity(self.futures.len());
        while let Some(result) = self.futures.next().await {
            results.push(result);
        }
        results
    }

    /// Calls not yet yielded.
    pub fn len(&self) -> usize {
        self.futures.len()
    }

    /// Whether every result was yielded.
    pub fn is_empty(&self) -> bool {
        self.futures.is_empty()
    }
}

#[cfg(test)]
mod tests;
