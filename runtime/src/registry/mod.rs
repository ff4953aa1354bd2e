//! The tool registry: every dispatchable tool of a session, keyed by normalized `ToolName`,
//! in insertion order (spec runtime §1.3).
//!
//! # Guarantees
//! - Keys are normalized with `ToolName::with_default_namespace`, so `x`, `("", x)` and
//!   `("functions", x)` are one tool; the same name in two namespaces is two tools.
//! - A duplicate built-in is a programming error reported as `RegistryError` (never a panic).
//! - An external (MCP, dynamic) duplicate is skipped, first one wins, and the clash is
//!   recorded; default-namespace `exec_command` / `shell_command` are reserved for built-ins.

use std::collections::HashMap;
use std::sync::Arc;

use crate::tool::{ToolExecutor, ToolName};

/// Default-namespace names external tools may never take (spec runtime §1.3).
const RESERVED_EXTERNAL_NAMES: &[&str] = &["exec_command", "shell_command"];

/// A registration the registry refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two built-ins with one name: a bug in the embedder's tool set.
    #[error("tool {0} already registered")]
    DuplicateBuiltin(ToolName),
}

/// Why an external registration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollisionKind {
    /// A tool with the same normalized name was already registered.
    Duplicate,
    /// The name is reserved for a built-in that is registered.
    Reserved,
}

/// One refused external registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCollision {
    /// The refused name (normalized).
    pub tool_name: ToolName,
    /// Why.
    pub kind: CollisionKind,
}

#[derive(Clone)]
struct RegistryEntry {
    key: ToolName,
    executor: Arc<dyn ToolExecutor>,
}

/// Insertion-ordered map from normalized tool name to executor. Cloning is cheap (executors
/// are shared), which is how a step freezes its view.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    entries: Vec<RegistryEntry>,
    index: HashMap<ToolName, usize>,
    collisions: Vec<ToolCollision>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| e.key.to_string())
                    .collect::<Vec<_>>(),
            )
            .field("collisions", &self.collisions)
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a built-in at the end; a duplicate name is an error.
    pub fn register_builtin(
        &mut self,
        executor: Arc<dyn ToolExecutor>,
    ) -> Result<(), RegistryError> {
        let key = executor.tool_name().with_default_namespace();
        if self.index.contains_key(&key) {
            return Err(RegistryError::DuplicateBuiltin(executor.tool_name()));
        }
        self.index.insert(key.clone(), self.entries.len());
        self.entries.push(RegistryEntry { key, executor });
        Ok(())
    }

    /// Registers a built-in first (synthetic tools such as `exec`/`wait`); a duplicate name is
    /// an error.
    pub fn prepend_builtin(
        &mut self,
        executor: Arc<dyn ToolExecutor>,
    ) -> Result<(), RegistryError> {
        let key = executor.tool_name().with_default_namespace();
        if self.index.contains_key(&key) {
            return Err(RegistryError::DuplicateBuiltin(executor.tool_name()));
        }
        self.entries.insert(0, RegistryEntry { key, executor });
        self.reindex();
        Ok(())
    }

    /// Registers an MCP, dynamic or extension tool. Returns false, with a warning, when the
    /// name is reserved or already taken; the first clash stays available as
    /// [`first_collision`](Self::first_collision).
    pub fn register_external(&mut self, executor: Arc<dyn ToolExecutor>) -> bool {
        let name = executor.tool_name();
        let key = name.with_default_namespace();
        if name.is_default_namespace() && RESERVED_EXTERNAL_NAMES.contains(&name.name.as_str()) {
            tracing::warn!(tool = %name, "skipping external tool with a reserved built-in name");
            if self.index.contains_key(&key) {
                self.collisions.push(ToolCollision {
                    tool_name: key,
                    kind: CollisionKind::Reserved,
                });
            }
            return false;
        }
        if self.index.contains_key(&key) {
            tracing::warn!(tool = %name, "skipping external tool: the name is already registered");
            self.collisions.push(ToolCollision {
                tool_name: key,
                kind: CollisionKind::Duplicate,
            });
            return false;
        }
        self.index.insert(key.clone(), self.entries.len());
        self.entries.push(RegistryEntry { key, executor });
        true
    }

    /// Removes a tool; returns its executor.
    pub fn remove(&mut self, name: &ToolName) -> Option<Arc<dyn ToolExecutor>> {
        let position = self.index.get(&name.with_default_namespace()).copied()?;
        let entry = self.entries.remove(position);
        self.reindex();
        Some(entry.executor)
    }

    /// The executor of `name` (any namespace spelling of the default namespace).
    pub fn get(&self, name: &ToolName) -> Option<Arc<dyn ToolExecutor>> {
        let position = self.index.get(&name.with_default_namespace())?;
        Some(Arc::clone(&self.entries[*position].executor))
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &ToolName) -> bool {
        self.index.contains_key(&name.with_default_namespace())
    }

    /// Executors in registration order.
    pub fn executors(&self) -> impl Iterator<Item = &Arc<dyn ToolExecutor>> {
        self.entries.iter().map(|entry| &entry.executor)
    }

    /// Normalized names in registration order.
    pub fn names(&self) -> impl Iterator<Item = &ToolName> {
        self.entries.iter().map(|entry| &entry.key)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first refused external registration, if any.
    pub fn first_collision(&self) -> Option<&ToolCollision> {
        self.collisions.first()
    }

    /// Every refused external registration, in order.
    pub fn collisions(&self) -> &[ToolCollision] {
        &self.collisions
    }

    fn reindex(&mut self) {
        self.index = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.key.clone(), i))
            .collect();
    }
}

#[cfg(test)]
mod tests;
