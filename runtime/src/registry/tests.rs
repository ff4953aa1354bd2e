//! Registry tests: normalization, ordering, collisions, reserved names.

use super::*;
use crate::router::test_support::TestTool;

fn names(registry: &ToolRegistry) -> Vec<String> {
    registry.names().map(ToString::to_string).collect()
}

#[test]
fn handler_looks_up_namespaced_aliases_explicitly() {
    let mut registry = ToolRegistry::new();
    registry
        .register_builtin(TestTool::plain("echo").label("plain").arc())
        .unwrap();
    registry
        .register_builtin(
            TestTool::new(ToolName::namespaced("mcp__a__", "echo"))
                .label("ns")
                .arc(),
        )
        .unwrap();
    assert!(registry.first_collision().is_none());
    assert_eq!(
        registry.get(&ToolName::plain("echo")).unwrap().tool_name(),
        ToolName::plain("echo")
    );
    assert_eq!(
        registry
            .get(&ToolName::namespaced("mcp__a__", "echo"))
            .unwrap()
            .tool_name(),
        ToolName::namespaced("mcp__a__", "echo")
    );
    assert!(
        registry
            .get(&ToolName::namespaced("mcp__b__", "echo"))
            .is_none()
    );
    assert!(
        registry
            .get(&ToolName::namespaced("functions", "echo"))
            .is_some()
    );
    assert!(registry.get(&ToolName::namespaced("", "echo")).is_some());
}

#[test]
fn duplicate_builtin_is_an_error_not_a_panic() {
    let mut registry = ToolRegistry::new();
    registry
        .register_builtin(TestTool::plain("x").arc())
        .unwrap();
    let error = registry
        .register_builtin(TestTool::new(ToolName::namespaced("functions", "x")).arc())
        .unwrap_err();
    assert_eq!(error.to_string(), "tool x already registered");
    assert!(
        registry
            .prepend_builtin(TestTool::plain("x").arc())
            .is_err()
    );
    assert_eq!(registry.len(), 1);
}

#[test]
fn registry_preserves_external_winners_and_trusted_synthetic_order() {
    let mut registry = ToolRegistry::new();
    registry
        .register_builtin(TestTool::plain("builtin").arc())
        .unwrap();
    let first = TestTool::new(ToolName::namespaced("mcp__s__", "t")).label("first");
    assert!(registry.register_external(first.clone().arc()));
    let second = TestTool::new(ToolName::namespaced("mcp__s__", "t")).label("second");
    assert!(!registry.register_external(second.arc()));
    assert_eq!(
        registry.first_collision(),
        Some(&ToolCollision {
            tool_name: ToolName::namespaced("mcp__s__", "t"),
            kind: CollisionKind::Duplicate
        })
    );
    registry
        .prepend_builtin(TestTool::plain("wait").arc())
        .unwrap();
    registry
        .prepend_builtin(TestTool::plain("exec").arc())
        .unwrap();
    assert_eq!(
        names(&registry),
        vec!["exec", "wait", "builtin", "mcp__s__t"]
    );

    // The first registration won: it is the one dispatched.
    let winner = registry
        .get(&ToolName::namespaced("mcp__s__", "t"))
        .unwrap();
    assert_eq!(winner.spec().name(), "t");
    assert!(registry.remove(&ToolName::plain("wait")).is_some());
    assert_eq!(names(&registry), vec!["exec", "builtin", "mcp__s__t"]);
    assert!(
        registry.get(&ToolName::plain("builtin")).is_some(),
        "index stays valid after remove"
    );
    assert!(registry.remove(&ToolName::plain("wait")).is_none());
}

#[test]
fn reserved_shell_command_rejects_external_runtimes_without_a_builtin() {
    let mut registry = ToolRegistry::new();
    assert!(!registry.register_external(TestTool::plain("shell_command").arc()));
    assert!(
        !registry.register_external(
            TestTool::new(ToolName::namespaced("functions", "exec_command")).arc()
        )
    );
    assert!(
        registry.first_collision().is_none(),
        "no collision without a matching built-in"
    );
    assert!(
        registry.register_external(
            TestTool::new(ToolName::namespaced("mcp__x__", "shell_command")).arc()
        )
    );
    assert_eq!(names(&registry), vec!["mcp__x__shell_command"]);
}

#[test]
fn registry_records_reserved_shell_command_when_a_matching_tool_exists() {
    let mut registry = ToolRegistry::new();
    registry
        .register_builtin(TestTool::plain("exec_command").arc())
        .unwrap();
    assert!(!registry.register_external(TestTool::plain("exec_command").arc()));
    assert_eq!(
        registry.first_collision(),
        Some(&ToolCollision {
            tool_name: ToolName::namespaced("functions", "exec_command"),
            kind: CollisionKind::Reserved
        })
    );
}

#[test]
fn registry_allows_identical_names_in_different_namespaces() {
    let mut registry = ToolRegistry::new();
    assert!(
        registry.register_external(TestTool::new(ToolName::namespaced("mcp__a__", "search")).arc())
    );
    assert!(
        registry.register_external(TestTool::new(ToolName::namespaced("mcp__b__", "search")).arc())
    );
    assert!(registry.register_external(TestTool::plain("search").arc()));
    assert!(registry.collisions().is_empty());
    assert_eq!(registry.len(), 3);
}
