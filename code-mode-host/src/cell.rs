//! One cell on its own thread: a fresh isolate (from the snapshot, made ahead of time as a
//! [`PreparedIsolate`] that serves this one cell only), the prelude's globals, the module
//! `exec_main.mjs`, and an explicit event loop that pumps microtasks, answers nested tool calls
//! and fires timers until the module's promise settles.
//!
//! # States
//! Setting up → Running (module evaluating or awaiting) → Finished. Finished is reached by the
//! module promise settling, `exit()`, a terminate request, the heap limit, or an exception in
//! a timer callback.
//!
//! # Guarantees
//! - Exactly one `CellEvent::Result` is sent, last; the event channel closes after it.
//! - A terminated cell reports no store writes; every other ending reports all of them.
//! - Timers never keep a cell alive; nested calls still unanswered at the end are listed as
//!   abandoned.
//!
//! # Termination
//! `CellSink::send(Terminate)` flips a flag and calls `IsolateHandle::terminate_execution`
//! from the caller's thread, so a busy loop stops promptly; the loop then finishes without
//! entering JavaScript again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use codemode_bridge::{CellCommand, CellCommandSink, CellEvent, CellStart, StoredValues};
use tokio::sync::mpsc::UnboundedSender;

use crate::cell_state::CellState;
use crate::js_error::JsError;
use crate::names;
use crate::natives::natives_object;
use crate::timers::Timers;
use crate::v8::{HeapGuard, dynamic_import_rejected, resolve_import_rejected};

/// What the cell thread and the command senders share.
#[derive(Default)]
pub(crate) struct CellShared {
    terminate: AtomicBool,
    handle: Mutex<Option<::v8::IsolateHandle>>,
}

impl CellShared {
    fn publish_handle(&self, handle: ::v8::IsolateHandle) {
        if let Ok(mut slot) = self.handle.lock() {
            *slot = Some(handle);
        }
    }

    fn terminate_requested(&self) -> bool {
        self.terminate.load(Ordering::SeqCst)
    }
}

/// Sends commands into a cell thread; `Terminate` also interrupts running JavaScript.
#[derive(Debug)]
pub(crate) struct CellSink {
    commands: Mutex<Sender<CellCommand>>,
    shared: Arc<CellShared>,
}

impl std::fmt::Debug for CellShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CellShared")
            .field("terminate", &self.terminate_requested())
            .finish()
    }
}

impl CellSink {
    pub(crate) fn new(commands: Sender<CellCommand>, shared: Arc<CellShared>) -> Self {
        Self {
            commands: Mutex::new(commands),
            shared,
        }
    }
}

impl CellCommandSink for CellSink {
    fn send(&self, command: CellCommand) -> bool {
        if matches!(command, CellCommand::Terminate) {
            self.shared.terminate.store(true, Ordering::SeqCst);
            if let Ok(handle) = self.shared.handle.lock()
                && let Some(handle) = handle.as_ref()
            {
                handle.terminate_execution();
            }
        }
        match self.commands.lock() {
            Ok(commands) => commands.send(command).is_ok(),
            Err(_) => false,
        }
    }
}

/// An isolate with its context, made before the cell that will use it is known (ahead of
/// time for the warm pool, or just in time). Only the prelude has run in it; it serves
/// exactly one cell and is then dropped.
pub(crate) struct PreparedIsolate {
    // Field order is drop order: the context handle before the isolate, and the isolate
    // before the heap guard V8 holds a pointer to.
    context: ::v8::Global<::v8::Context>,
    isolate: ::v8::OwnedIsolate,
    guard: Box<HeapGuard>,
    /// Set when the prelude failed to run (no-snapshot mode); reported as the cell's error.
    prelude_error: Option<JsError>,
    heap_limit_mib: u64,
    shared: Arc<CellShared>,
    commands: Receiver<CellCommand>,
}

impl PreparedIsolate {
    /// Creates the isolate (from `snapshot` when given) with a `heap_limit_mib` heap and its
    /// context, on the current thread, which must be the thread that later calls [`run`].
    ///
    /// [`run`]: PreparedIsolate::run
    pub(crate) fn new(
        snapshot: Option<&'static [u8]>,
        heap_limit_mib: u64,
        shared: Arc<CellShared>,
        commands: Receiver<CellCommand>,
    ) -> Self {
        let heap_limit =
            usize::try_from(heap_limit_mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let mut params = ::v8::Isolate::create_params().heap_limits(0, heap_limit);
        if let Some(blob) = snapshot {
            params = params.snapshot_blob(::v8::StartupData::from(blob));
        }
        let mut isolate = ::v8::Isolate::new(params);
        let guard = HeapGuard::new(isolate.thread_safe_handle());
        guard.install(&mut isolate);
        isolate.set_microtasks_policy(::v8::MicrotasksPolicy::Explicit);
        isolate.set_host_import_module_dynamically_callback(dynamic_import_rejected);
        shared.publish_handle(isolate.thread_safe_handle());
        let (context, prelude_error) = {
            ::v8::scope!(let scope, &mut isolate);
            let context = ::v8::Context::new(scope, Default::default());
            let global = ::v8::Global::new(scope, context);
            let prelude_error = match snapshot {
                Some(_) => None,
                None => {
                    let scope = &mut ::v8::ContextScope::new(scope, context);
                    run_prelude(scope).err()
                }
            };
            (global, prelude_error)
        };
        Self {
            context,
            isolate,
            guard,
            prelude_error,
            heap_limit_mib,
            shared,
            commands,
        }
    }

    /// Runs `start` to its end, sending its events to `events`; the Result goes last.
    pub(crate) fn run(mut self, start: CellStart, events: UnboundedSender<CellEvent>) {
        let tool_catalog = tool_catalog_json(&start);
        self.isolate.set_slot(CellState {
            events,
            tools: start.tools,
            tool_calls_made: 0,
            pending_tools: Default::default(),
            values: start.stored_values,
            writes: StoredValues::new(),
            exit_requested: false,
            timers: Timers::default(),
        });

        let outcome = if self.shared.terminate_requested() {
            Outcome::Terminated
        } else if let Some(error) = self.prelude_error.take() {
            Outcome::Completed(Some(error.text))
        } else {
            let mut cell = Driver {
                shared: &self.shared,
                guard: &self.guard,
                commands: &self.commands,
                heap_limit_mib: self.heap_limit_mib,
            };
            cell.drive(
                &mut self.isolate,
                &self.context,
                &start.source,
                &tool_catalog,
            )
        };

        let state = self
            .isolate
            .remove_slot::<CellState>()
            .expect("the CellState slot is set before the cell runs and removed only here");
        let abandoned_tool_calls = state.pending_ids();
        let result = match outcome {
            Outcome::Terminated => CellEvent::Result {
                error_text: None,
                stored_value_writes: StoredValues::new(),
                abandoned_tool_calls,
                terminated: true,
            },
            Outcome::Completed(error_text) => CellEvent::Result {
                error_text,
                stored_value_writes: state.writes.clone(),
                abandoned_tool_calls,
                terminated: false,
            },
        };
        let events = state.events.clone();
        // Promise resolvers are V8 globals: release them while the isolate is still alive.
        drop(state);
        // The Result goes out before the isolate is disposed (which takes a while), so the
        // caller is not kept waiting; the channel still closes only after it, when `events`
        // drops at the end of this function.
        let _ = events.send(result);
        drop(self);
    }
}

enum Outcome {
    Completed(Option<String>),
    Terminated,
}

fn tool_catalog_json(start: &CellStart) -> String {
    let entries: Vec<serde_json::Value> = start
        .tools
        .iter()
        .map(|tool| serde_json::json!({ "name": tool.name, "description": tool.description }))
        .collect();
    serde_json::Value::Array(entries).to_string()
}

struct Driver<'a> {
    shared: &'a CellShared,
    guard: &'a HeapGuard,
    commands: &'a Receiver<CellCommand>,
    heap_limit_mib: u64,
}

impl Driver<'_> {
    fn drive(
        &mut self,
        isolate: &mut ::v8::OwnedIsolate,
        context: &::v8::Global<::v8::Context>,
        source: &str,
        catalog: &str,
    ) -> Outcome {
        ::v8::scope!(let scope, isolate);
        let context = ::v8::Local::new(scope, context);
        let scope = &mut ::v8::ContextScope::new(scope, context);

        let fire_timer = match bootstrap(scope, catalog) {
            Ok(fire_timer) => fire_timer,
            Err(error) => {
                return self
                    .interrupted(scope)
                    .unwrap_or(Outcome::Completed(Some(error.text)));
            }
        };
        state(scope).emit(CellEvent::Started);

        let promise = match evaluate_module(scope, source) {
            Ok(promise) => promise,
            Err(error) => {
                return self
                    .interrupted(scope)
                    .unwrap_or(Outcome::Completed(Some(error.text)));
            }
        };

        loop {
            scope.perform_microtask_checkpoint();
            if let Some(outcome) = self.interrupted(scope) {
                return outcome;
            }
            {
                ::v8::scope!(let inner, scope);
                let promise = ::v8::Local::new(inner, &promise);
                match promise.state() {
                    ::v8::PromiseState::Fulfilled => return Outcome::Completed(None),
                    ::v8::PromiseState::Rejected => {
                        let reason = promise.result(inner);
                        return Outcome::Completed(Some(error_text(inner, reason)));
                    }
                    ::v8::PromiseState::Pending => {}
                }
            }
            if let Err(error) = self.step(scope, &fire_timer) {
                return self
                    .interrupted(scope)
                    .unwrap_or(Outcome::Completed(Some(error.text)));
            }
        }
    }

    /// Why the cell must stop now, if it must: terminate beats exit beats the heap limit.
    fn interrupted(&self, scope: &mut ::v8::PinScope<'_, '_>) -> Option<Outcome> {
        if self.shared.terminate_requested() {
            return Some(Outcome::Terminated);
        }
        if state(scope).exit_requested {
            return Some(Outcome::Completed(None));
        }
        if self.guard.exceeded() {
            return Some(Outcome::Completed(Some(format!(
                "exec cell exceeded its memory limit ({} MiB)",
                self.heap_limit_mib
            ))));
        }
        None
    }

    /// Waits for one command or the next timer and applies it.
    fn step(
        &mut self,
        scope: &mut ::v8::PinScope<'_, '_>,
        fire_timer: &::v8::Global<::v8::Function>,
    ) -> Result<(), JsError> {
        let deadline = state(scope).timers.next_deadline();
        let received = match deadline {
            Some(deadline) => self
                .commands
                .recv_timeout(deadline.saturating_duration_since(Instant::now())),
            None => self
                .commands
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(command) => {
                apply_command(scope, command);
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => {
                while let Some(id) = state(scope).timers.pop_due(Instant::now()) {
                    call_timer(scope, fire_timer, id)?;
                    scope.perform_microtask_checkpoint();
                    if self.interrupted(scope).is_some() {
                        break;
                    }
                }
                Ok(())
            }
            Err(RecvTimeoutError::Disconnected) => {
                // Nobody can answer this cell any more: treat it as terminated.
                self.shared.terminate.store(true, Ordering::SeqCst);
                Ok(())
            }
        }
    }
}

fn state<'a>(scope: &'a mut ::v8::PinScope<'_, '_>) -> &'a mut CellState {
    scope
        .get_slot_mut::<CellState>()
        .expect("every cell isolate carries a CellState slot")
}

fn apply_command(scope: &mut ::v8::PinScope<'_, '_>, command: CellCommand) {
    ::v8::scope!(let scope, scope);
    match command {
        CellCommand::Terminate => {}
        CellCommand::ToolResponse { id, value } => {
            let Some(resolver) = state(scope).pending_tools.remove(&id) else {
                return;
            };
            let resolver = ::v8::Local::new(scope, &resolver);
            ::v8::tc_scope!(let tc, scope);
            let value = match value {
                None => Some(::v8::undefined(tc).into()),
                Some(value) => ::v8::String::new(tc, &value.to_string())
                    .and_then(|json| ::v8::json::parse(tc, json)),
            };
            match value {
                Some(value) => {
                    resolver.resolve(tc, value);
                }
                None => {
                    let message = "failed to convert the tool result to a JavaScript value";
                    if let Some(text) = ::v8::String::new(tc, message) {
                        resolver.reject(tc, text.into());
                    }
                }
            }
        }
        CellCommand::ToolError { id, text } => {
            let Some(resolver) = state(scope).pending_tools.remove(&id) else {
                return;
            };
            let resolver = ::v8::Local::new(scope, &resolver);
            if let Some(text) = ::v8::String::new(scope, &text) {
                resolver.reject(scope, text.into());
            }
        }
    }
}

fn call_timer(
    scope: &mut ::v8::PinScope<'_, '_>,
    fire_timer: &::v8::Global<::v8::Function>,
    id: u64,
) -> Result<(), JsError> {
    ::v8::scope!(let scope, scope);
    let function = ::v8::Local::new(scope, fire_timer);
    ::v8::tc_scope!(let tc, scope);
    let receiver = ::v8::undefined(tc).into();
    let argument = ::v8::Number::new(tc, id as f64).into();
    if function.call(tc, receiver, &[argument]).is_some() {
        return Ok(());
    }
    Err(caught(tc))
}

/// Compiles and runs the prelude as a classic script (at snapshot build time, or per cell
/// when no snapshot is used).
pub(crate) fn run_prelude(scope: &mut ::v8::PinScope<'_, '_>) -> Result<(), JsError> {
    ::v8::scope!(let scope, scope);
    ::v8::tc_scope!(let tc, scope);
    let source = codemode_js_prelude::source();
    let code =
        ::v8::String::new(tc, &source).ok_or_else(|| js_error("prelude source too large"))?;
    let name = ::v8::String::new(tc, codemode_js_prelude::RESOURCE_NAME)
        .ok_or_else(|| js_error("bad name"))?;
    let origin = ::v8::ScriptOrigin::new(
        tc,
        name.into(),
        0,
        0,
        false,
        0,
        None,
        false,
        false,
        false,
        None,
    );
    // Eager: the snapshot keeps the bytecode of every prelude function, so no cell pays
    // for lazily compiling the bootstrap and helpers again.
    let mut source = ::v8::script_compiler::Source::new(code, Some(&origin));
    let Some(script) = ::v8::script_compiler::compile(
        tc,
        &mut source,
        ::v8::script_compiler::CompileOptions::EagerCompile,
        ::v8::script_compiler::NoCacheReason::NoReason,
    ) else {
        return Err(caught(tc));
    };
    if script.run(tc).is_none() {
        return Err(caught(tc));
    }
    Ok(())
}

fn bootstrap(
    scope: &mut ::v8::PinScope<'_, '_>,
    catalog: &str,
) -> Result<::v8::Global<::v8::Function>, JsError> {
    ::v8::scope!(let scope, scope);
    ::v8::tc_scope!(let tc, scope);
    let context = tc.get_current_context();
    let global = context.global(tc);
    let key = ::v8::String::new(tc, names::BOOTSTRAP).ok_or_else(|| js_error("bad name"))?;
    let function = global
        .get(tc, key.into())
        .and_then(|value| ::v8::Local::<::v8::Function>::try_from(value).ok())
        .ok_or_else(|| js_error("the code-mode prelude did not define its bootstrap"))?;
    let natives =
        natives_object(tc).ok_or_else(|| js_error("failed to build the natives object"))?;
    let catalog =
        ::v8::String::new(tc, catalog).ok_or_else(|| js_error("tool catalog too large"))?;
    let Some(fire_timer) = function.call(tc, global.into(), &[natives.into(), catalog.into()])
    else {
        return Err(caught(tc));
    };
    let fire_timer = ::v8::Local::<::v8::Function>::try_from(fire_timer)
        .map_err(|_| js_error("the code-mode bootstrap did not return the timer dispatcher"))?;
    Ok(::v8::Global::new(tc, fire_timer))
}

fn evaluate_module(
    scope: &mut ::v8::PinScope<'_, '_>,
    source: &str,
) -> Result<::v8::Global<::v8::Promise>, JsError> {
    ::v8::scope!(let scope, scope);
    ::v8::tc_scope!(let tc, scope);
    let code = ::v8::String::new(tc, source).ok_or_else(|| js_error("exec source is too large"))?;
    let name = ::v8::String::new(tc, names::MODULE_NAME).ok_or_else(|| js_error("bad name"))?;
    let origin = ::v8::ScriptOrigin::new(
        tc,
        name.into(),
        0,
        0,
        false,
        0,
        None,
        false,
        false,
        true,
        None,
    );
    let mut source = ::v8::script_compiler::Source::new(code, Some(&origin));
    let Some(module) = ::v8::script_compiler::compile_module(tc, &mut source) else {
        return Err(caught_with_location(tc));
    };
    if module.instantiate_module(tc, resolve_import_rejected) != Some(true) {
        return Err(caught(tc));
    }
    let Some(result) = module.evaluate(tc) else {
        return Err(caught(tc));
    };
    let promise = ::v8::Local::<::v8::Promise>::try_from(result)
        .map_err(|_| js_error("module evaluation did not return a promise"))?;
    Ok(::v8::Global::new(tc, promise))
}

fn js_error(text: &str) -> JsError {
    JsError {
        text: text.to_owned(),
    }
}

/// The pending exception of `tc` as text.
fn caught(tc: &mut ::v8::PinnedRef<'_, ::v8::TryCatch<'_, '_, ::v8::HandleScope<'_>>>) -> JsError {
    match tc.exception() {
        Some(exception) => JsError {
            text: error_text(tc, exception),
        },
        None => js_error("JavaScript execution terminated"),
    }
}

/// Like [`caught`], adding `at exec_main.mjs:L:C` for syntax errors, whose stack has no
/// frame to point at the offending line.
fn caught_with_location(
    tc: &mut ::v8::PinnedRef<'_, ::v8::TryCatch<'_, '_, ::v8::HandleScope<'_>>>,
) -> JsError {
    let mut error = caught(tc);
    if let Some(message) = tc.message() {
        let line = message.get_line_number(tc).unwrap_or(0);
        let column = message.get_start_column() + 1;
        if !error.text.contains(names::MODULE_NAME) {
            error
                .text
                .push_str(&format!("\n    at {}:{line}:{column}", names::MODULE_NAME));
        }
    }
    error
}

/// The text of a thrown value: its `stack` string when it has one, else `String(value)`.
pub(crate) fn error_text(
    scope: &mut ::v8::PinScope<'_, '_>,
    value: ::v8::Local<'_, ::v8::Value>,
) -> String {
    ::v8::scope!(let scope, scope);
    ::v8::tc_scope!(let tc, scope);
    if let Ok(object) = ::v8::Local::<::v8::Object>::try_from(value)
        && let Some(key) = ::v8::String::new(tc, names::STACK)
        && let Some(stack) = object.get(tc, key.into())
        && stack.is_string()
    {
        return stack.to_rust_string_lossy(tc);
    }
    if tc.is_execution_terminating() {
        return "JavaScript execution terminated".to_owned();
    }
    match value.to_string(tc) {
        Some(text) => text.to_rust_string_lossy(tc),
        None => "uncaught exception (its text could not be read)".to_owned(),
    }
}
