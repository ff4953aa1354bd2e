//! `StepContext`: the tool plan of one model request.
//!
//! # Guarantees
//! - The model-visible specs and the registry a step dispatches with are built from the same
//!   executors, frozen when the step is built (an `Arc` snapshot of the registry).
//! - A call always runs with the plan of the step that showed it to the model, even if it runs
//!   after the next step's plan was built or the session registry changed.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::hooks::ToolHooks;
use crate::registry::ToolRegistry;
use crate::tool::{ToolContext, ToolExecutor, ToolExposure, ToolName, ToolSpec, tools_json};

use super::ToolLifecycleObserver;

/// What a step adds to the registry snapshot besides the tools themselves.
#[derive(Clone, Default)]
pub struct StepContextOptions {
    /// PreToolUse / PostToolUse hooks.
    pub hooks: Arc<ToolHooks>,
    /// Lifecycle observers, notified in order.
    pub lifecycle_observers: Vec<Arc<dyn ToolLifecycleObserver>>,
}

pub(crate) struct StepPlan {
    pub(crate) registry: ToolRegistry,
    pub(crate) specs: Vec<ToolSpec>,
    pub(crate) tool_context: Arc<ToolContext>,
    pub(crate) hooks: Arc<ToolHooks>,
    pub(crate) observers: Arc<[Arc<dyn ToolLifecycleObserver>]>,
}

/// The frozen tool plan of one sampling step; cheap to clone.
#[derive(Clone)]
pub struct StepContext {
    pub(crate) plan: Arc<StepPlan>,
}

impl std::fmt::Debug for StepContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepContext")
            .field("registry", &self.plan.registry)
            .finish()
    }
}

impl StepContext {
    /// Freezes `registry` (a snapshot: later registry changes do not reach this step) and
    /// computes the model-visible specs from the same executors.
    pub fn new(
        registry: &ToolRegistry,
        tool_context: Arc<ToolContext>,
        options: StepContextOptions,
    ) -> Self {
        let registry = registry.clone();
        let specs = model_visible_specs(&registry);
        Self {
            plan: Arc::new(StepPlan {
                registry,
                specs,
                tool_context,
                hooks: options.hooks,
                observers: options.lifecycle_observers.into(),
            }),
        }
    }

    /// The tools shown to the model this step (Direct and DirectModelOnly), namespaced
    /// functions grouped into one `namespace` entry each, at the first member's position.
    pub fn model_visible_specs(&self) -> &[ToolSpec] {
        &self.plan.specs
    }

    /// The `tools` JSON array of this step's request.
    pub fn tools_json(&self) -> Vec<Value> {
        tools_json(&self.plan.specs)
    }

    /// The frozen registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.plan.registry
    }

    /// The session facts handlers get.
    pub fn tool_context(&self) -> &Arc<ToolContext> {
        &self.plan.tool_context
    }

    /// Tools a code-mode cell of this step may call (`Direct` and `Deferred`), in order.
    pub fn code_mode_executors(&self) -> impl Iterator<Item = &Arc<dyn ToolExecutor>> {
        self.plan
            .registry
            .executors()
            .filter(|executor| executor.exposure().is_available_in_code_mode())
    }

    /// Whether calls of `name` may overlap: registered, not Hidden, and parallel-safe. A
    /// namespaced lookalike of a parallel built-in is a different tool and does not inherit it.
    pub fn tool_supports_parallel(&self, name: &ToolName) -> bool {
        self.plan.registry.get(name).is_some_and(|executor| {
            executor.exposure() != ToolExposure::Hidden && executor.supports_parallel_tool_calls()
        })
    }
}

fn model_visible_specs(registry: &ToolRegistry) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = Vec::new();
    // Namespace name → (position in `specs`, whether its description was given explicitly).
    let mut namespaces: HashMap<String, (usize, bool)> = HashMap::new();
    for executor in registry.executors() {
        if !executor.exposure().is_model_visible() {
            continue;
        }
        let name = executor.tool_name();
        let spec = executor.spec();
        if name.is_default_namespace() {
            specs.push(spec);
            continue;
        }
        let namespace = name.namespace.clone().unwrap_or_default();
        let (description, members) = match spec {
            ToolSpec::Namespace {
                description, tools, ..
            } => (Some(description), tools),
            function @ ToolSpec::Function { .. } => (None, vec![function]),
            other => {
                specs.push(other);
                continue;
            }
        };
        match namespaces.get_mut(&namespace) {
            Some((position, explicit)) => {
                if let ToolSpec::Namespace {
                    tools,
                    description: current,
                    ..
                } = &mut specs[*position]
                {
                    tools.extend(members);
                    if let (Some(description), false) = (description, *explicit) {
                        *current = description;
                        *explicit = true;
                    }
                }
            }
            None => {
                let explicit = description.is_some();
                let mut entry = ToolSpec::namespace(namespace.clone(), members);
                if let (Some(text), ToolSpec::Namespace { description, .. }) =
                    (description, &mut entry)
                {
                    *description = text;
                }
                namespaces.insert(namespace, (specs.len(), explicit));
                specs.push(entry);
            }
        }
    }
    specs
}
