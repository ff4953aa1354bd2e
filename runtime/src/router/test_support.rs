//! A configurable tool and a recording lifecycle observer for the core's tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;

use super::{
    StepContext, StepContextOptions, ToolFinishOutcome, ToolLifecycleEvent, ToolLifecycleObserver,
};
use crate::hooks::{HookToolInput, ToolHooks};
use crate::registry::ToolRegistry;
use crate::tool::{
    FunctionCallError, TextToolOutput, ToolContext, ToolExecutor, ToolExposure, ToolInvocation,
    ToolName, ToolOutput, ToolPayload, ToolSpec,
};

/// What a [`TestTool`] does after its delay.
#[derive(Clone, Debug)]
pub(crate) enum Behaviour {
    /// Answers `<label>:<raw input>`.
    Echo,
    /// Fails with `RespondToModel(text)`.
    Fail(String),
    /// Writes the raw input to the file, answers `wrote`.
    WriteFile(PathBuf),
}

#[derive(Clone)]
pub(crate) struct TestTool {
    pub(crate) name: ToolName,
    pub(crate) label: String,
    pub(crate) exposure: ToolExposure,
    pub(crate) parallel: bool,
    pub(crate) freeform: bool,
    pub(crate) delay: Duration,
    pub(crate) behaviour: Behaviour,
    pub(crate) waits_for_cleanup: bool,
    pub(crate) shell_like: bool,
    pub(crate) calls: Arc<AtomicUsize>,
    pub(crate) seen: Arc<Mutex<Vec<ToolInvocation>>>,
}

impl TestTool {
    pub(crate) fn new(name: ToolName) -> Self {
        Self {
            label: name.name.clone(),
            name,
            exposure: ToolExposure::Direct,
            parallel: false,
            freeform: false,
            delay: Duration::ZERO,
            behaviour: Behaviour::Echo,
            waits_for_cleanup: false,
            shell_like: false,
            calls: Arc::new(AtomicUsize::new(0)),
            seen: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub(crate) fn plain(name: &str) -> Self {
        Self::new(ToolName::plain(name))
    }

    pub(crate) fn label(mut self, label: &str) -> Self {
        self.label = label.to_owned();
        self
    }

    pub(crate) fn exposure(mut self, exposure: ToolExposure) -> Self {
        self.exposure = exposure;
        self
    }

    pub(crate) fn parallel(mut self) -> Self {
        self.parallel = true;
        self
    }

    pub(crate) fn freeform(mut self) -> Self {
        self.freeform = true;
        self
    }

    pub(crate) fn delay_ms(mut self, ms: u64) -> Self {
        self.delay = Duration::from_millis(ms);
        self
    }

    pub(crate) fn behaviour(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }

    pub(crate) fn waits_for_cleanup(mut self) -> Self {
        self.waits_for_cleanup = true;
        self
    }

    /// Hooks see this tool as `Bash` with `{"command": <raw input>}`.
    pub(crate) fn shell_like(mut self) -> Self {
        self.shell_like = true;
        self
    }

    pub(crate) fn arc(self) -> Arc<dyn ToolExecutor> {
        Arc::new(self)
    }

    pub(crate) fn call_count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl ToolExecutor for TestTool {
    fn tool_name(&self) -> ToolName {
        self.name.clone()
    }

    fn spec(&self) -> ToolSpec {
        if self.freeform {
            ToolSpec::freeform(
                &self.name.name,
                "A test freeform tool.",
                "lark",
                "start: /.+/",
            )
        } else {
            ToolSpec::function(
                &self.name.name,
                format!("Test tool {}.", self.label),
                json!({"type": "object"}),
            )
        }
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    fn supports_parallel_tool_calls(&self) -> bool {
        self.parallel
    }

    fn waits_for_runtime_cancellation(&self) -> bool {
        self.waits_for_cleanup
    }

    fn hook_input(&self, payload: &ToolPayload) -> Option<HookToolInput> {
        if !self.shell_like {
            return default_hook_input(self, payload);
        }
        let ToolPayload::Function { arguments } = payload else {
            return None;
        };
        Some(HookToolInput {
            tool_name: "Bash".to_owned(),
            tool_input: json!({ "command": arguments }),
            command: Some(arguments.clone()),
        })
    }

    fn handle(
        &self,
        invocation: ToolInvocation,
    ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.seen.lock().unwrap().push(invocation.clone());
            if self.waits_for_cleanup {
                tokio::select! {
                    () = tokio::time::sleep(self.delay) => {}
                    () = invocation.cancellation.cancelled() => {
                        // Simulated teardown that must complete before the runtime answers.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        return Ok(Box::new(TextToolOutput::ok("cleaned up")) as Box<dyn ToolOutput>);
                    }
                }
            } else {
                tokio::time::sleep(self.delay).await;
            }
            let raw = match &invocation.payload {
                ToolPayload::Function { arguments } | ToolPayload::ToolSearch { arguments } => {
                    arguments.clone()
                }
                ToolPayload::Custom { input } => input.clone(),
            };
            match &self.behaviour {
                Behaviour::Echo => Ok(
                    Box::new(TextToolOutput::ok(format!("{}:{raw}", self.label)))
                        as Box<dyn ToolOutput>,
                ),
                Behaviour::Fail(text) => Err(FunctionCallError::RespondToModel(text.clone())),
                Behaviour::WriteFile(path) => {
                    std::fs::write(path, raw)
                        .map_err(|e| FunctionCallError::RespondToModel(e.to_string()))?;
                    Ok(Box::new(TextToolOutput::ok("wrote")) as Box<dyn ToolOutput>)
                }
            }
        })
    }
}

/// Records `start:<call>` and `finish:<call>:<outcome>` lines.
#[derive(Default)]
pub(crate) struct RecordingObserver {
    pub(crate) events: Mutex<Vec<String>>,
}

impl RecordingObserver {
    pub(crate) fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    pub(crate) fn finishes(&self, call_id: &str) -> Vec<String> {
        let prefix = format!("finish:{call_id}:");
        self.events()
            .into_iter()
            .filter(|e| e.starts_with(&prefix))
            .collect()
    }
}

impl ToolLifecycleObserver for RecordingObserver {
    fn on_tool_start(&self, event: &ToolLifecycleEvent) {
        self.events
            .lock()
            .unwrap()
            .push(format!("start:{}", event.call_id));
    }

    fn on_tool_finish(&self, event: &ToolLifecycleEvent, outcome: ToolFinishOutcome) {
        self.events
            .lock()
            .unwrap()
            .push(format!("finish:{}:{outcome:?}", event.call_id));
    }
}

pub(crate) fn registry_of(tools: &[&TestTool]) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register_builtin((*tool).clone().arc()).unwrap();
    }
    registry
}

pub(crate) fn context() -> Arc<ToolContext> {
    Arc::new(ToolContext::new(std::env::temp_dir()))
}

/// A step over `registry` with `hooks` and a recording observer.
pub(crate) fn step_with(
    registry: &ToolRegistry,
    hooks: ToolHooks,
) -> (StepContext, Arc<RecordingObserver>) {
    let observer = Arc::new(RecordingObserver::default());
    let options = StepContextOptions {
        hooks: Arc::new(hooks),
        lifecycle_observers: vec![observer.clone() as Arc<dyn ToolLifecycleObserver>],
    };
    (StepContext::new(registry, context(), options), observer)
}

/// The trait's default hook view, for a tool that overrides `hook_input` conditionally.
fn default_hook_input(tool: &TestTool, payload: &ToolPayload) -> Option<HookToolInput> {
    struct Plain(ToolName);
    impl ToolExecutor for Plain {
        fn tool_name(&self) -> ToolName {
            self.0.clone()
        }
        fn spec(&self) -> ToolSpec {
            ToolSpec::function(&self.0.name, "", json!({}))
        }
        fn handle(
            &self,
            _: ToolInvocation,
        ) -> BoxFuture<'_, Result<Box<dyn ToolOutput>, FunctionCallError>> {
            Box::pin(async { Err(FunctionCallError::Fatal("unused".to_owned())) })
        }
    }
    Plain(tool.name.clone()).hook_input(payload)
}
