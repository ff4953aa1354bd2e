//! Callable names: sanitizing, the 64-byte cap, hashing on clashes; the approval rule.

use rmcp::model::ToolAnnotations;

use crate::mcp::approval_rule::approval_annotations;
use crate::mcp::naming::{NamespaceAllocator, assign_tool_names, short_hash};
use crate::mcp::{fnv1a64, sanitize_name};

#[test]
fn fnv1a_matches_the_reference_vectors() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    assert_eq!(short_hash("foobar"), "85944171f7");
}

#[test]
fn sanitizing_keeps_only_the_allowed_alphabet() {
    assert_eq!(sanitize_name("get-sum"), "get-sum");
    assert_eq!(sanitize_name("my tool.v2/run!"), "my_tool_v2_run_");
    assert_eq!(sanitize_name("café"), "caf_");
    assert_eq!(sanitize_name(""), "_");
}

#[test]
fn namespaces_are_unique_per_raw_server_name() {
    let mut allocator = NamespaceAllocator::default();
    assert_eq!(allocator.allocate("docs"), "mcp__docs__");
    let clash = allocator.allocate("do.cs");
    assert_ne!(clash, "mcp__docs__");
    assert_eq!(clash, format!("mcp__do_cs__"));
    let clash = allocator.allocate("do/cs");
    assert_eq!(clash, format!("mcp__do_cs_{}__", short_hash("do/cs")));
    let long = allocator.allocate(&"s".repeat(80));
    assert!(long.len() <= 40, "{long}");
    assert!(long.ends_with(&format!("_{}__", short_hash(&"s".repeat(80)))));
}

#[test]
fn tool_names_are_capped_and_clashes_get_a_stable_hash() {
    let long = "x".repeat(100);
    let raw = ["echo", "echo", "a.b", "a_b", long.as_str()];
    let names = assign_tool_names("srv", "mcp__srv__", raw);
    let callable: Vec<&str> = names.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        callable.len(),
        4,
        "the duplicate raw `echo` is dropped: {callable:?}"
    );
    assert_eq!(callable[0], "echo");
    assert_eq!(callable[1], "a_b");
    assert_eq!(callable[2], format!("a_b_{}", short_hash("srv/a_b")));
    assert!(callable[3].ends_with(&short_hash(&format!("srv/{long}"))));
    for name in &callable {
        assert!(format!("mcp__srv__{name}").len() <= 64, "{name}");
    }
    // Stable: the same input gives the same names.
    assert_eq!(assign_tool_names("srv", "mcp__srv__", raw), names);
}

fn hints(
    read_only: Option<bool>,
    destructive: Option<bool>,
    open_world: Option<bool>,
) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = read_only;
    annotations.destructive_hint = destructive;
    annotations.open_world_hint = open_world;
    annotations
}

/// The one approval rule (`approval::McpToolAnnotations`) applied to rmcp's annotations.
fn needs_approval(annotations: Option<&ToolAnnotations>) -> bool {
    approval_annotations(annotations).requires_approval()
}

#[test]
fn auto_mode_approval_follows_the_annotations() {
    assert!(
        needs_approval(None),
        "no hints: destructive and open-world by default"
    );
    assert!(
        !needs_approval(Some(&hints(Some(true), None, None))),
        "read-only"
    );
    assert!(
        needs_approval(Some(&hints(Some(true), Some(true), None))),
        "destructive wins over read-only"
    );
    assert!(
        !needs_approval(Some(&hints(Some(false), Some(false), Some(false)))),
        "explicitly harmless"
    );
    assert!(
        needs_approval(Some(&hints(Some(false), Some(false), None))),
        "open-world by default"
    );
    assert!(
        needs_approval(Some(&hints(None, None, Some(false)))),
        "destructive by default"
    );
}
