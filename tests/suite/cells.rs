//! Cells on real V8: modules, globals, helpers, value conversion, timers, exit (issue 2).

use codemode_bridge::{CellEvent, ContentItem, ImageDetail};
use codemode_tests::{Answer, RunOptions, function_tool, run_cell, run_cell_with};
use serde_json::json;

const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

#[tokio::test]
async fn text_completes_and_events_start_with_started() {
    let run = run_cell(r#"text("hi")"#).await;
    assert!(run.completed(), "{:?}", run.error_text);
    assert_eq!(run.texts, ["hi"]);
    assert!(matches!(run.events.first(), Some(CellEvent::Started)));
}

#[tokio::test]
async fn top_level_await_works() {
    let run = run_cell("const v = await Promise.resolve(41); text(v + 1)").await;
    assert_eq!(run.texts, ["42"]);
}

#[tokio::test]
async fn thrown_error_fails_with_its_stack() {
    let run = run_cell(r#"text("before"); throw new Error("boom")"#).await;
    let error = run.error_text.expect("cell failed");
    assert!(error.starts_with("Error: boom\n    at exec_main.mjs:1:"), "{error}");
    assert_eq!(run.texts, ["before"]);
}

#[tokio::test]
async fn thrown_string_fails_with_the_string() {
    let run = run_cell(r#"await null; throw "plain""#).await;
    assert_eq!(run.error_text.as_deref(), Some("plain"));
}

#[tokio::test]
async fn syntax_error_fails_with_v8_message() {
    let run = run_cell("let = ;").await;
    let error = run.error_text.expect("cell failed");
    assert!(error.starts_with("SyntaxError: "), "{error}");
    assert!(error.contains("exec_main.mjs:1"), "{error}");
}

#[tokio::test]
async fn static_import_is_rejected() {
    let run = run_cell(r#"import fs from "fs"; text("no")"#).await;
    assert_eq!(run.error_text.as_deref(), Some("Unsupported import in exec: fs"));
    assert!(run.texts.is_empty());
}

#[tokio::test]
async fn dynamic_import_rejects_with_a_catchable_string() {
    let run = run_cell(r#"try { await import("node:fs"); } catch (e) { text(typeof e + ":" + e); }"#).await;
    assert_eq!(run.texts, ["string:Unsupported import in exec: node:fs"]);
}

#[tokio::test]
async fn globals_allow_list() {
    let run = run_cell(
        r#"
        const names = Object.getOwnPropertyNames(globalThis);
        for (const removed of ["console", "Atomics", "SharedArrayBuffer", "WebAssembly", "require",
                               "process", "fetch", "module", "__codemode_bootstrap", "Deno"]) {
          if (names.includes(removed) || typeof globalThis[removed] !== "undefined") text("present: " + removed);
        }
        for (const added of ["tools", "ALL_TOOLS", "text", "image", "generatedImage", "store", "load",
                             "notify", "yield_control", "exit", "setTimeout", "clearTimeout"]) {
          if (!names.includes(added)) text("missing: " + added);
        }
        text("checked");
        "#,
    )
    .await;
    assert_eq!(run.texts, ["checked"]);
}

#[tokio::test]
async fn intl_formats_french_dates() {
    let run = run_cell(
        r#"const d = new Date(2025, 0, 2, 3, 4, 5);
        text(d.toLocaleString("fr-FR", { weekday: "long", day: "numeric", month: "long", hour: "2-digit", minute: "2-digit", second: "2-digit" }));
        text(new Intl.DateTimeFormat("fr-FR", { month: "long" }).format(d));"#,
    )
    .await;
    assert_eq!(run.texts, ["jeudi 2 janvier à 03:04:05", "janvier"]);
}

#[tokio::test]
async fn text_converts_values_like_the_reference() {
    let run = run_cell(
        r#"text(undefined); text(null); text(true); text(10n); text("s"); text({json: true});
        text({a: undefined, b: NaN, c: {toJSON() { return "tj"; }}}); text(() => 1); text([1, "x"]);"#,
    )
    .await;
    assert_eq!(
        run.texts,
        ["undefined", "null", "true", "10", "s", r#"{"json":true}"#, r#"{"b":null,"c":"tj"}"#, "() => 1", r#"[1,"x"]"#]
    );
}

#[tokio::test]
async fn stringify_errors_are_thrown_as_strings() {
    let run = run_cell(
        r#"const cyclic = {}; cyclic.self = cyclic;
        try { text(cyclic); } catch (e) { text(typeof e); text(e.split("\n")[0]); }
        try { text({n: 1n}); } catch (e) { text(e.split("\n")[0]); }
        text(cyclic);"#,
    )
    .await;
    assert_eq!(run.texts[0], "string");
    assert!(run.texts[1].starts_with("TypeError: Converting circular structure to JSON"), "{:?}", run.texts);
    assert_eq!(run.texts[2], "TypeError: Do not know how to serialize a BigInt");
    assert!(run.error_text.expect("uncaught cycle fails").contains("Converting circular structure to JSON"));
}

#[tokio::test]
async fn helpers_return_undefined() {
    let run = run_cell(&format!(
        r#"const r = [text("a"), image("{PNG}"), notify("n"), store("k", 1), yield_control()];
        text(r.every((v) => v === undefined));"#
    ))
    .await;
    assert_eq!(run.texts, ["a", "true"]);
}

#[tokio::test]
async fn tool_calls_resolve_reject_and_convert_arguments() {
    let options = RunOptions { tools: vec![function_tool("echo"), function_tool("fail")], ..Default::default() };
    let run = run_cell_with(
        r#"const a = await tools.echo({x: 1, skip: undefined, n: NaN});
        const b = await tools.echo();
        const c = await tools.echo("s", "ignored second argument");
        try { await tools.fail({}); } catch (e) { text(typeof e + ":" + e + ":" + e.message); }
        text(JSON.stringify([a, b, c]));"#,
        options,
        |name, input| match name {
            "echo" => Answer::Value(Some(json!({ "got": input }))),
            _ => Answer::Error("tool exploded".to_owned()),
        },
    )
    .await;
    assert!(run.completed(), "{:?}", run.error_text);
    assert_eq!(run.texts[0], "string:tool exploded:undefined");
    assert_eq!(run.texts[1], r#"[{"got":{"x":1,"n":null}},{"got":null},{"got":"s"}]"#);
    assert_eq!(run.tool_calls[1], ("echo".to_owned(), None));
}

#[tokio::test]
async fn tool_call_ids_count_up_and_promise_all_issues_calls_together() {
    let options = RunOptions { tools: vec![function_tool("t")], ..Default::default() };
    let run = run_cell_with(
        r#"const r = await Promise.all([tools.t(1), tools.t(2), tools.t(3)]); text(r.join(","));"#,
        options,
        |_, input| Answer::Value(input.clone()),
    )
    .await;
    assert_eq!(run.texts, ["1,2,3"]);
    let ids: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            CellEvent::ToolCall { id, .. } => Some(id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["tool-1", "tool-2", "tool-3"]);
}

#[tokio::test]
async fn bigint_argument_throws_synchronously_as_string() {
    let options = RunOptions { tools: vec![function_tool("t")], ..Default::default() };
    let run = run_cell_with(
        r#"try { tools.t({n: 1n}); } catch (e) { text(typeof e + ":" + e); }"#,
        options,
        |_, _| Answer::Value(None),
    )
    .await;
    assert_eq!(run.texts, ["string:TypeError: Do not know how to serialize a BigInt\n    at exec_main.mjs:1:13"]);
    assert!(run.tool_calls.is_empty());
}

#[tokio::test]
async fn all_tools_lists_name_and_description_in_catalog_order() {
    let options = RunOptions { tools: vec![function_tool("b_tool"), function_tool("a_tool")], ..Default::default() };
    let run = run_cell_with(
        r#"text(JSON.stringify(ALL_TOOLS)); text(Object.keys(tools).join(",")); text(typeof tools.a_tool);"#,
        options,
        |_, _| Answer::Value(None),
    )
    .await;
    assert_eq!(
        run.texts[0],
        r#"[{"name":"b_tool","description":"test tool b_tool"},{"name":"a_tool","description":"test tool a_tool"}]"#
    );
    assert_eq!(run.texts[1], "b_tool,a_tool");
    assert_eq!(run.texts[2], "function");
}

#[tokio::test]
async fn overwritten_intrinsics_do_not_subvert_the_bridge() {
    let options = RunOptions { tools: vec![function_tool("t")], ..Default::default() };
    let run = run_cell_with(
        r#"JSON.stringify = () => "hijacked"; JSON.parse = () => "hijacked";
        Map.prototype.get = () => undefined; Reflect.apply = () => { throw "hijacked"; };
        const r = await tools.t({a: 1});
        store("k", {b: 2});
        text({c: 3});
        await new Promise((resolve) => setTimeout(resolve, 1));
        text(r.a + ":" + load("k").b);"#,
        options,
        |_, input| Answer::Value(input.clone()),
    )
    .await;
    assert!(run.completed(), "{:?}", run.error_text);
    assert_eq!(run.texts, [r#"{"c":3}"#, "1:2"]);
    assert_eq!(run.tool_calls[0].1, Some(json!({"a": 1})));
}

#[tokio::test]
async fn store_and_load_copy_values_and_record_writes() {
    let mut stored = codemode_bridge::StoredValues::new();
    stored.insert("seed".to_owned(), json!({"n": 1}));
    let options = RunOptions { stored, ..Default::default() };
    let run = run_cell_with(
        r#"const s = load("seed"); s.n = 99; text(load("seed").n);
        store("obj", {list: [1, 2]}); const o = load("obj"); o.list.push(3); text(load("obj").list.length);
        text(String(load("missing")));
        store(42, "numeric key"); text(load("42"));
        try { store("bad", undefined); } catch (e) { text(e); }
        try { store("fn", () => 1); } catch (e) { text(e); }"#,
        options,
        |_, _| Answer::Value(None),
    )
    .await;
    assert_eq!(
        run.texts,
        [
            "1",
            "2",
            "undefined",
            "numeric key",
            r#"Unable to store "bad". Only plain serializable objects can be stored."#,
            r#"Unable to store "fn". Only plain serializable objects can be stored."#,
        ]
    );
    assert_eq!(run.writes.get("obj"), Some(&json!({"list": [1, 2]})));
    assert_eq!(run.writes.get("42"), Some(&json!("numeric key")));
    assert!(!run.writes.contains_key("seed"));
}

#[tokio::test]
async fn failed_cells_still_report_their_writes() {
    let run = run_cell(r#"store("k", 1); throw new Error("late")"#).await;
    assert!(run.error_text.is_some());
    assert_eq!(run.writes.get("k"), Some(&json!(1)));
}

#[tokio::test]
async fn timers_fire_in_order_and_clear() {
    let run = run_cell(
        r#"setTimeout(() => text("b"), 30);
        setTimeout(() => text("a"), 10);
        setTimeout(() => text("z"), 0);
        const id = setTimeout(() => text("cleared"), 5);
        clearTimeout(id); clearTimeout(); clearTimeout(null); clearTimeout(-1);
        const start = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 100));
        text(Date.now() - start >= 100 ? "elapsed" : "too early");"#,
    )
    .await;
    assert_eq!(run.texts, ["z", "a", "b", "elapsed"]);
}

#[tokio::test]
async fn timer_validation_errors_are_strings() {
    let run = run_cell(
        r#"try { setTimeout("code", 1); } catch (e) { text(e); }
        try { clearTimeout(Symbol("x")); } catch (e) { text(e); }
        text(typeof setTimeout(() => {}, "nonsense"));"#,
    )
    .await;
    assert_eq!(run.texts, ["setTimeout expects a function callback", "clearTimeout expects a numeric timeout id", "number"]);
}

#[tokio::test]
async fn exception_in_timer_fails_the_cell() {
    let run = run_cell(
        r#"setTimeout(() => { throw new Error("in timer"); }, 1);
        await new Promise((resolve) => setTimeout(resolve, 200));
        text("unreachable");"#,
    )
    .await;
    assert!(run.error_text.expect("cell failed").starts_with("Error: in timer"));
    assert!(run.texts.is_empty());
}

#[tokio::test]
async fn pending_timers_are_dropped_at_completion() {
    let started = std::time::Instant::now();
    let run = run_cell(r#"setTimeout(() => text("late"), 60000); text("done")"#).await;
    assert_eq!(run.texts, ["done"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[tokio::test]
async fn exit_stops_immediately_and_keeps_earlier_effects() {
    let run = run_cell(
        r#"store("before", 1); text("before");
        try { exit(); } finally { text("finally"); }
        text("after"); store("after", 2);"#,
    )
    .await;
    assert!(run.completed(), "{:?}", run.error_text);
    assert_eq!(run.texts, ["before"]);
    assert!(run.writes.contains_key("before") && !run.writes.contains_key("after"));
}

#[tokio::test]
async fn exit_inside_conversion_admits_no_further_effects() {
    let options = RunOptions { tools: vec![function_tool("t")], ..Default::default() };
    let run = run_cell_with(
        r#"await tools.t(1);
        text({ toJSON() { exit(); return "x"; } });
        tools.t(2); store("after", 1);"#,
        options,
        |_, _| Answer::Value(None),
    )
    .await;
    assert!(run.completed());
    assert!(run.texts.is_empty());
    assert_eq!(run.tool_calls.len(), 1);
    assert!(run.writes.is_empty());
}

#[tokio::test]
async fn image_helpers_normalize_and_validate() {
    let run = run_cell(&format!(
        r#"image("{PNG}");
        image({{ image_url: "{PNG}", detail: "HIGH" }}, "original");
        image({{ type: "image", data: "QUJD", mimeType: "image/png", _meta: {{ "codex/imageDetail": "original" }} }});
        image({{ type: "image", data: "QUJD", mimeType: "image/png", _meta: {{ "codex/imageDetail": "original" }} }}, "low");
        generatedImage({{ image_url: "{PNG}", output_hint: "a hint" }});
        for (const bad of [
          () => image("https://example.com/a.png"),
          () => image("ftp://x"),
          () => image("{PNG}", "medium"),
          () => image("{PNG}", 3),
          () => image({{ content: [] }}),
          () => image(""),
          () => image([]),
          () => image({{ type: "text", text: "x" }}),
          () => generatedImage("x"),
          () => generatedImage({{ image_url: "{PNG}", output_hint: 1 }}),
          () => generatedImage({{ image_url: "http://x" }}),
        ]) {{ try {{ bad(); text("accepted"); }} catch (e) {{ text(e); }} }}"#
    ))
    .await;
    let images: Vec<(String, Option<ImageDetail>)> = run
        .items
        .iter()
        .filter_map(|item| match item {
            ContentItem::InputImage { image_url, detail } => Some((image_url.clone(), *detail)),
            _ => None,
        })
        .collect();
    assert_eq!(
        images,
        [
            (PNG.to_owned(), Some(ImageDetail::High)),
            (PNG.to_owned(), Some(ImageDetail::Original)),
            ("data:image/png;base64,QUJD".to_owned(), Some(ImageDetail::Original)),
            ("data:image/png;base64,QUJD".to_owned(), Some(ImageDetail::Low)),
            (PNG.to_owned(), Some(ImageDetail::High)),
        ]
    );
    let expects = "image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block";
    let remote = "Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead";
    assert_eq!(
        run.texts,
        [
            "a hint",
            remote,
            "Tool call failed: invalid image output. Pass a base64 data URI instead",
            "image detail must be one of: auto, low, high, original",
            "image detail must be a string when provided",
            expects,
            expects,
            expects,
            r#"image only accepts MCP image blocks, got "text""#,
            "generatedImage expects an image generation result object",
            "generatedImage output_hint must be a string when provided",
            remote,
        ]
    );
}

#[tokio::test]
async fn notify_and_yield_control_emit_events() {
    let run = run_cell(
        r#"notify("progress"); notify({step: 1}); yield_control();
        try { notify("   "); } catch (e) { text(e); }"#,
    )
    .await;
    assert_eq!(run.notifications, ["progress", r#"{"step":1}"#]);
    assert!(run.events.iter().any(|e| matches!(e, CellEvent::YieldRequested)));
    assert_eq!(run.texts, ["notify expects non-empty text"]);
}

#[tokio::test]
async fn unawaited_tool_calls_are_reported_as_abandoned() {
    let options = RunOptions { tools: vec![function_tool("slow")], ..Default::default() };
    let run = run_cell_with(r#"tools.slow(); tools.slow(); text("done")"#, options, |_, _| Answer::Ignore).await;
    assert!(run.completed());
    assert_eq!(run.abandoned, 2);
}
