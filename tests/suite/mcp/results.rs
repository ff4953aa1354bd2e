//! The shapes of MCP results a script works with: structured content, `isError`, images,
//! big outputs filtered down, and state kept by a server across exec calls.

use codemode_tests::{everything_server, filesystem_server, mcp_session, memory_server};

use super::{exec_completed, json_text};

#[tokio::test]
async fn structured_content_fields_are_readable_and_meta_is_dropped() {
    let session = mcp_session(vec![("everything", everything_server())]).await;
    let output = exec_completed(
        &session,
        r#"const r = await tools.mcp__everything__get_structured_content({ location: "Chicago" });
const s = r.structuredContent;
text(JSON.stringify([s.temperature, s.conditions, s.humidity]));
text(JSON.stringify({ isError: r.isError ?? false, keys: Object.keys(r).sort(), hasMeta: "_meta" in r }));"#,
    )
    .await;
    let [fields, shape] = output.texts.as_slice() else {
        panic!("{:?}", output.texts)
    };
    let fields = json_text(fields);
    assert!(
        fields[0].is_number() && fields[2].is_number(),
        "temperature and humidity: {fields}"
    );
    assert!(
        fields[1].as_str().is_some_and(|c| !c.is_empty()),
        "conditions: {fields}"
    );
    let shape = json_text(shape);
    assert_eq!(shape["isError"], false);
    assert_eq!(shape["hasMeta"], false, "_meta is removed from results");
    let keys = shape["keys"].as_array().expect("keys");
    assert!(
        keys.contains(&"content".into()) && keys.contains(&"structuredContent".into()),
        "{shape}"
    );
}

#[tokio::test]
async fn is_error_result_resolves_and_the_script_continues() {
    let allowed = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "nope").expect("write");
    let session = mcp_session(vec![("fs", filesystem_server(&[allowed.path()]))]).await;
    let source = format!(
        r#"const r = await tools.mcp__fs__read_text_file({{ path: {path} }});
text(JSON.stringify({{ isError: r.isError, blocks: r.content.length, type: r.content[0].type }}));
text(r.content[0].text);
text("after");"#,
        path = serde_json::to_string(&secret.to_string_lossy()).expect("json")
    );
    let output = exec_completed(&session, &source).await;
    let [shape, message, after] = output.texts.as_slice() else {
        panic!("{:?}", output.texts)
    };
    assert_eq!(
        json_text(shape),
        serde_json::json!({"isError": true, "blocks": 1, "type": "text"})
    );
    assert!(message.contains("outside allowed directories"), "{message}");
    assert_eq!(after, "after");
}

#[tokio::test]
async fn mcp_image_block_passed_to_image_becomes_an_input_image() {
    let session = mcp_session(vec![("everything", everything_server())]).await;
    let output = exec_completed(
        &session,
        r#"const r = await tools.mcp__everything__get_tiny_image({});
const block = r.content.find((c) => c.type === "image");
image(block);
text(block.mimeType);"#,
    )
    .await;
    assert_eq!(output.texts, ["image/png"]);
    let [url] = output.images.as_slice() else {
        panic!("{:#}", output.item)
    };
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    let parts = output.item["output"].as_array().expect("items");
    assert_eq!(
        parts[1]["type"], "input_image",
        "the image follows the header: {:#}",
        output.item
    );
}

/// A tree of `dirs × per_dir` files (every third one `.rs`) under nested directories.
fn generate_tree(root: &std::path::Path, dirs: usize, per_dir: usize) -> usize {
    let mut rust_files = 0;
    for d in 0..dirs {
        let dir = root
            .join(format!("crate_{d}"))
            .join("src")
            .join(format!("module_{d}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..per_dir {
            let name = if f % 3 == 0 {
                rust_files += 1;
                format!("file_{f}.rs")
            } else {
                format!("file_{f}.txt")
            };
            std::fs::write(dir.join(name), "x").expect("write");
        }
    }
    rust_files
}

#[tokio::test]
async fn large_directory_tree_is_filtered_down_in_javascript() {
    let root = tempfile::tempdir().expect("tempdir");
    let rust_files = generate_tree(root.path(), 20, 15);
    let session = mcp_session(vec![("fs", filesystem_server(&[root.path()]))]).await;
    let source = format!(
        r#"const r = await tools.mcp__fs__directory_tree({{ path: {path} }});
const tree = JSON.parse(r.structuredContent.content);
let files = 0, rs = 0;
const walk = (nodes) => {{
  for (const n of nodes) {{
    if (n.type === "directory") walk(n.children);
    else {{ files++; if (n.name.endsWith(".rs")) rs++; }}
  }}
}};
walk(tree);
text(`${{rs}} of ${{files}} files are .rs`);
text(r.content[0].text.length);"#,
        path = serde_json::to_string(&root.path().to_string_lossy()).expect("json")
    );
    let output = exec_completed(&session, &source).await;
    let [summary, tree_len] = output.texts.as_slice() else {
        panic!("{:?}", output.texts)
    };
    assert_eq!(summary, &format!("{rust_files} of 300 files are .rs"));
    let tree_len: usize = tree_len.parse().expect("length");
    assert!(
        tree_len > 20_000,
        "the tree JSON is large: {tree_len} chars"
    );
    assert!(
        output.bytes() < 400,
        "the model sees only the summary: {} bytes",
        output.bytes()
    );
}

#[tokio::test]
async fn memory_graph_round_trips_across_exec_calls_with_store_and_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = mcp_session(vec![(
        "memory",
        memory_server(&dir.path().join("memory.jsonl")),
    )])
    .await;
    let created = exec_completed(
        &session,
        r#"const id = "Ada-" + Math.random().toString(36).slice(2, 10);
const r = await tools.mcp__memory__create_entities({
  entities: [{ name: id, entityType: "person", observations: ["wrote the first program"] }],
});
store("entity", { id });
text(r.isError ?? false);"#,
    )
    .await;
    assert_eq!(created.texts, ["false"]);
    let stored = session
        .store()
        .get("entity")
        .expect("store committed at completion");
    let id = stored["id"].as_str().expect("id").to_owned();

    let read = exec_completed(
        &session,
        r#"const { id } = load("entity");
const graph = (await tools.mcp__memory__read_graph({})).structuredContent;
const entity = graph.entities.find((e) => e.name === id);
text(JSON.stringify({ id, type: entity?.entityType, observations: entity?.observations }));"#,
    )
    .await;
    let [found] = read.texts.as_slice() else {
        panic!("{:?}", read.texts)
    };
    assert_eq!(
        json_text(found),
        serde_json::json!({"id": id, "type": "person", "observations": ["wrote the first program"]})
    );
}
