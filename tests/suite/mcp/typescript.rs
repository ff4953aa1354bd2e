//! The declarations of every tool of the three real servers are valid TypeScript, and real
//! programs written against them type-check under `tsc --strict`: what the model reads in
//! `ALL_TOOLS[i].description` is something it can program against.

use std::path::Path;
use std::process::Command;

use codemode_runtime::declarations::SHARED_MCP_TYPES;
use codemode_tests::{
    everything_server, filesystem_server, mcp_server_bin, mcp_session, memory_server,
};

/// The globals a cell sees, as far as the example programs use them.
const GLOBALS: &str = r#"declare function text(value: unknown): void;
declare function image(item: string | { image_url: string; detail?: string | null } | ImageContent, detail?: string | null): void;
declare function store(key: string, value: unknown): void;
declare function load(key: string): unknown;
declare const ALL_TOOLS: Array<{ name: string; description: string }>;
"#;

const FAN_OUT: &str = r#"const results = await Promise.all(
  Array.from({ length: 50 }, (_, i) => tools.mcp__everything__echo({ message: `m${i}` })),
);
const echoed: string[] = results.map((r) => {
  const first = r.content[0];
  return first?.type === "text" ? first.text : "";
});
text(`${new Set(echoed).size} distinct, ${results.filter((r) => r.isError).length} errors`);
export {};
"#;

const STRUCTURED: &str = r#"const r = await tools.mcp__everything__get_structured_content({ location: "Chicago" });
const temperature: number | undefined = r.structuredContent?.temperature;
const conditions: string | undefined = r.structuredContent?.conditions;
const failed: boolean = r.isError ?? false;
text(`${temperature} ${conditions} ${failed}`);
export {};
"#;

const TREE_FILTER: &str = r#"type TreeNode = { name: string; type: "file" | "directory"; children?: TreeNode[] };
const r = await tools.mcp__fs__directory_tree({ path: "/workspace" });
const tree: TreeNode[] = JSON.parse(r.structuredContent?.content ?? "[]");
const countRs = (nodes: TreeNode[]): number =>
  nodes.reduce(
    (n, node) => n + (node.type === "directory" ? countRs(node.children ?? []) : node.name.endsWith(".rs") ? 1 : 0),
    0,
  );
store("rs_files", countRs(tree));
const graph = await tools.mcp__memory__read_graph({});
text(`${countRs(tree)} .rs files; ${ALL_TOOLS.length} tools; ${JSON.stringify(graph.structuredContent ?? {}).length} bytes of graph`);
export {};
"#;

/// A wrong argument name must be rejected, or the check proves nothing.
const WRONG_ARGUMENT: &str = r#"await tools.mcp__everything__echo({ mesage: "typo" });
export {};
"#;

/// The member `name(args: …): Promise<…>;` of a description's `declare const tools: { … };`
/// fence.
fn declaration_member(name: &str, description: &str) -> String {
    let (_, fence) = description
        .split_once("exec tool declaration:\n```ts\n")
        .unwrap_or_else(|| panic!("{name}: no declaration fence in {description:?}"));
    let body = fence.strip_suffix("\n```").unwrap_or_else(|| {
        panic!("{name}: the fence does not end the description: {description:?}")
    });
    let member = body
        .strip_prefix("declare const tools: { ")
        .and_then(|rest| rest.strip_suffix(" };"))
        .unwrap_or_else(|| panic!("{name}: unexpected declaration shape: {body}"));
    assert!(
        member.starts_with(&format!("{name}(")),
        "{name}: member names another tool: {member}"
    );
    member.to_owned()
}

/// Runs `tsc --noEmit --strict` on `files` in `dir`; `Err(output)` on any diagnostic.
fn tsc(dir: &Path, files: &[&str]) -> Result<(), String> {
    let output = Command::new(mcp_server_bin("tsc"))
        .current_dir(dir)
        .args([
            "--noEmit", "--strict", "--target", "es2022", "--module", "esnext", "--lib", "es2022",
        ])
        .args(files)
        .output()
        .expect("tsc runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

#[tokio::test]
async fn declarations_of_every_real_server_tool_type_check_with_example_programs() {
    let root = tempfile::tempdir().expect("tempdir");
    let session = mcp_session(vec![
        ("everything", everything_server()),
        ("fs", filesystem_server(&[root.path()])),
        ("memory", memory_server(&root.path().join("memory.jsonl"))),
    ])
    .await;
    assert!(
        session.mcp_startup_failures().is_empty(),
        "{:?}",
        session.mcp_startup_failures()
    );
    let mcp_tools: Vec<_> = session
        .nested_tools()
        .into_iter()
        .filter(|tool| tool.name.starts_with("mcp__"))
        .collect();
    for server in ["everything", "fs", "memory"] {
        let count = mcp_tools
            .iter()
            .filter(|t| t.name.starts_with(&format!("mcp__{server}__")))
            .count();
        assert!(count >= 9, "{server} exposes {count} tools");
    }
    let members: Vec<String> = mcp_tools
        .iter()
        .map(|tool| declaration_member(&tool.name, &tool.description))
        .collect();

    let dir = tempfile::tempdir().expect("tempdir");
    let declarations = format!(
        "{SHARED_MCP_TYPES}\n{GLOBALS}declare const tools: {{\n{}\n}};\n",
        members
            .iter()
            .map(|m| format!("  {}", m.replace('\n', "\n  ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let files = [
        ("tools.d.ts", declarations.as_str()),
        ("fan_out.ts", FAN_OUT),
        ("structured.ts", STRUCTURED),
        ("tree_filter.ts", TREE_FILTER),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let names: Vec<&str> = files.iter().map(|(name, _)| *name).collect();
    if let Err(diagnostics) = tsc(dir.path(), &names) {
        panic!(
            "tsc rejected the declarations or the examples:\n{diagnostics}\n--- tools.d.ts ---\n{declarations}"
        );
    }

    std::fs::write(dir.path().join("wrong.ts"), WRONG_ARGUMENT).expect("write");
    let diagnostics = tsc(dir.path(), &["tools.d.ts", "wrong.ts"])
        .expect_err("a misspelled argument is a type error");
    assert!(diagnostics.contains("mesage"), "{diagnostics}");
}
