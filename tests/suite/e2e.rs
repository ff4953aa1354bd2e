//! exec and wait end to end (issue 5): the scenarios of spec §10.8, each run with cells in
//! process and in a real `code-mode-host` child process.

use std::time::{Duration, Instant};

use codemode_tests::{Backend, exec, session, session_with, wait};
use serde_json::json;

/// Runs one async scenario against both backends.
macro_rules! both_backends {
    ($name:ident, |$backend:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn scenario($backend: Backend) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn in_process() {
                scenario(Backend::InProcess).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn host_process() {
                scenario(Backend::HostProcess).await
            }
        }
    };
}

fn assert_header(header: &str, status: &str) {
    let mut lines = header.split('\n');
    assert_eq!(lines.next(), Some(status), "header: {header:?}");
    let wall = lines.next().unwrap_or_default();
    assert!(
        wall.starts_with("Wall time ") && wall.ends_with(" seconds"),
        "header: {header:?}"
    );
    assert_eq!(lines.next(), Some("Output:"), "header: {header:?}");
}

both_backends!(completes_with_text, |backend| {
    let (session, _dir) = session(backend).await;
    let reply = exec(&session, r#"text("hi"); text({json: true})"#).await;
    assert_header(&reply.header, "Script completed");
    assert!(reply.header.ends_with("Output:\n"));
    assert_eq!(reply.items, ["hi", r#"{"json":true}"#]);
    assert_eq!(reply.success, Some(true));
    assert_eq!(reply.raw["type"], "custom_tool_call_output");
});

both_backends!(yield_and_resume_with_wait, |backend| {
    let (session, _dir) = session(backend).await;
    let first = exec(
        &session,
        r#"text("phase 1"); yield_control();
        await new Promise((r) => setTimeout(r, 300));
        text("phase 2"); yield_control();
        await new Promise((r) => setTimeout(r, 300));
        text("phase 3");"#,
    )
    .await;
    let cell = first.cell_id();
    assert_eq!(cell.len(), 16);
    assert_eq!(first.items, ["phase 1"]);
    let second = wait(&session, json!({"cell_id": cell})).await;
    assert_eq!(second.cell_id(), cell);
    assert_eq!(second.items, ["phase 2"]);
    assert_eq!(second.raw["type"], "function_call_output");
    let third = wait(&session, json!({"cell_id": cell})).await;
    assert_header(&third.header, "Script completed");
    assert_eq!(third.items, ["phase 3"]);
});

both_backends!(busy_loop_yields_then_terminates, |backend| {
    let (session, _dir) = session(backend).await;
    let started = Instant::now();
    let first = exec(
        &session,
        "// @exec: {\"yield_time_ms\": 100}\ntext(\"spin\"); while (true) {}",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let cell = first.cell_id();
    assert_eq!(first.items, ["spin"]);
    let stopped = wait(&session, json!({"cell_id": cell, "terminate": true})).await;
    assert_header(&stopped.header, "Script terminated");
    assert!(stopped.items.is_empty());
    // A new exec works after a terminate.
    assert_eq!(exec(&session, r#"text("again")"#).await.items, ["again"]);
});

both_backends!(multiple_yielded_cells_finish_independently, |backend| {
    let (session, _dir) = session(backend).await;
    let source = |name: &str| {
        format!(
            "// @exec: {{\"yield_time_ms\": 0}}\nawait new Promise((r) => setTimeout(r, 200)); text(\"{name} done\");"
        )
    };
    let a = exec(&session, &source("a")).await.cell_id();
    let b = exec(&session, &source("b")).await.cell_id();
    assert_ne!(a, b);
    let b_done = wait(&session, json!({"cell_id": b})).await;
    let a_done = wait(&session, json!({"cell_id": a})).await;
    assert_eq!(b_done.items, ["b done"]);
    assert_eq!(a_done.items, ["a done"]);
});

both_backends!(unknown_and_closed_cells, |backend| {
    let (session, _dir) = session(backend).await;
    let unknown = wait(&session, json!({"cell_id": "999999"})).await;
    assert_header(&unknown.header, "Script failed");
    assert_eq!(unknown.items, ["Script error:\nexec cell 999999 not found"]);
    assert_ne!(unknown.success, Some(true));

    let cell = exec(
        &session,
        "// @exec: {\"yield_time_ms\": 0}\nawait new Promise((r) => setTimeout(r, 50)); text(1)",
    )
    .await
    .cell_id();
    assert_eq!(wait(&session, json!({"cell_id": cell})).await.items, ["1"]);
    let again = wait(&session, json!({"cell_id": cell})).await;
    assert_header(&again.header, "Script failed");
    assert_eq!(
        again.items,
        [format!(
            "Script error:\nexec cell {cell} already completed; its result was returned earlier. Start a new exec."
        )]
    );
});

both_backends!(terminate_after_completion_returns_the_result, |backend| {
    let (session, _dir) = session(backend).await;
    let cell = exec(
        &session,
        r#"text("a"); yield_control(); await new Promise((r) => setTimeout(r, 50)); store("done", true); text("session a done");"#,
    )
    .await
    .cell_id();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let reply = wait(&session, json!({"cell_id": cell, "terminate": true})).await;
    assert_header(&reply.header, "Script completed");
    assert_eq!(reply.items, ["session a done"]);
    assert_eq!(session.store().get("done"), Some(json!(true)));
});

both_backends!(background_progress_without_wait, |backend| {
    let (session, _dir) = session(backend).await;
    let cell = exec(
        &session,
        r#"text("started"); yield_control();
        const r = await tools.exec_command({cmd: "echo background", login: false});
        store("bg", r.output.trim()); text("finished");"#,
    )
    .await
    .cell_id();
    // No wait: the cell keeps running and commits on its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while session.store().get("bg").is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(session.store().get("bg"), Some(json!("background")));
    let later = wait(&session, json!({"cell_id": cell})).await;
    assert_header(&later.header, "Script completed");
    assert_eq!(later.items, ["finished"]);
});

both_backends!(each_call_has_its_own_token_budget, |backend| {
    let (session, _dir) = session(backend).await;
    let long = "x".repeat(400);
    let first = exec(
        &session,
        &format!("// @exec: {{\"max_output_tokens\": 100, \"yield_time_ms\": 0}}\nawait new Promise((r) => setTimeout(r, 200)); text(\"{long}\")"),
    )
    .await;
    let reply = wait(
        &session,
        json!({"cell_id": first.cell_id(), "max_tokens": 6}),
    )
    .await;
    assert_eq!(reply.items.len(), 1);
    let text = &reply.items[0];
    assert!(text.contains("Total output lines: 1\n\n"), "{text}");
    assert!(text.contains("tokens truncated…"), "{text}");
    assert!(text.len() < 200, "{text}");

    let truncated = exec(
        &session,
        &format!("// @exec: {{\"max_output_tokens\": 6}}\ntext(\"{long}\")"),
    )
    .await;
    assert!(
        truncated.items[0].contains("tokens truncated…"),
        "{:?}",
        truncated.items
    );
});

both_backends!(failure_keeps_accumulated_output, |backend| {
    let (session, _dir) = session(backend).await;
    let reply = exec(
        &session,
        r#"text("before crash"); text("still before crash"); throw new Error("boom")"#,
    )
    .await;
    assert_header(&reply.header, "Script failed");
    assert_eq!(reply.items.len(), 3);
    assert_eq!(reply.items[..2], ["before crash", "still before crash"]);
    assert!(
        reply.items[2].starts_with("Script error:\nError: boom\n    at exec_main.mjs:1:"),
        "{:?}",
        reply.items
    );
    assert_eq!(reply.success, Some(false));
});

both_backends!(nested_errors_are_catchable, |backend| {
    let (session, _dir) = session(backend).await;
    let reply = exec(
        &session,
        r#"try { await tools.exec_command({}); text("unreachable"); }
        catch (e) { text("caught: " + typeof e); }
        try { await tools.exec({}); } catch (e) { text(String(e)); }"#,
    )
    .await;
    assert_header(&reply.header, "Script completed");
    assert_eq!(reply.items[0], "caught: string");
    // exec/wait are never nested tools.
    assert!(
        reply.items[1].contains("is not a function"),
        "{:?}",
        reply.items
    );
});

both_backends!(nested_calls_run_in_parallel, |backend| {
    let (session, _dir) = session(backend).await;
    let started = Instant::now();
    let reply = exec(
        &session,
        r#"const r = await Promise.all([
            tools.exec_command({cmd: "sleep 0.3; echo ok", login: false}),
            tools.exec_command({cmd: "sleep 0.3; echo ok", login: false}),
        ]);
        text(JSON.stringify(r.map((x) => x.output.trim())));"#,
    )
    .await;
    assert_eq!(reply.items, [r#"["ok","ok"]"#]);
    assert!(
        started.elapsed() < Duration::from_millis(1600),
        "{:?}",
        started.elapsed()
    );
});

both_backends!(exec_command_result_is_an_object, |backend| {
    let (session, _dir) = session(backend).await;
    let reply = exec(
        &session,
        r#"const r = await tools.exec_command({cmd: "printf hello", login: false});
        text(JSON.stringify({keys: Object.keys(r).sort(), exit: r.exit_code, out: r.output, session: r.session_id ?? null,
                             wall: typeof r.wall_time_seconds}));"#,
    )
    .await;
    let value: serde_json::Value = serde_json::from_str(&reply.items[0]).expect("json");
    assert_eq!(value["exit"], 0);
    assert_eq!(value["out"], "hello");
    assert_eq!(value["session"], serde_json::Value::Null);
    assert_eq!(value["wall"], "number");
    assert!(
        value["keys"]
            .as_array()
            .expect("keys")
            .contains(&json!("chunk_id"))
    );
});

both_backends!(builtins_return_their_code_mode_values, |backend| {
    let (session, dir) = session(backend).await;
    let reply = exec(
        &session,
        r#"text(JSON.stringify(await tools.update_plan({plan: [{step: "a", status: "pending"}]})));
        text(JSON.stringify(await tools.apply_patch("*** Begin Patch\n*** Add File: made.txt\n+made by a cell\n*** End Patch")));"#,
    )
    .await;
    assert_eq!(reply.items, ["{}", "{}"], "{:?}", reply.items);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("made.txt")).expect("file created"),
        "made by a cell\n"
    );
});

both_backends!(
    store_persists_across_cells_and_terminate_discards,
    |backend| {
        let (session, _dir) = session(backend).await;
        exec(&session, r#"store("obj", {a: [1, 2], b: "x"})"#).await;
        let loaded = exec(&session, r#"text(JSON.stringify(load("obj")))"#).await;
        assert_eq!(loaded.items, [r#"{"a":[1,2],"b":"x"}"#]);

        let cell = exec(
            &session,
            "// @exec: {\"yield_time_ms\": 50}\nstore(\"obj\", \"overwritten\"); while (true) {}",
        )
        .await
        .cell_id();
        wait(&session, json!({"cell_id": cell, "terminate": true})).await;
        let after = exec(&session, r#"text(JSON.stringify(load("obj")))"#).await;
        assert_eq!(after.items, [r#"{"a":[1,2],"b":"x"}"#]);
    }
);

both_backends!(notify_reaches_the_embedder_immediately, |backend| {
    let (session, _dir) = session(backend).await;
    let mut notifications = session.take_notifications().expect("first take");
    let reply = exec(&session, r#"notify("marker text"); text("done")"#).await;
    assert_eq!(reply.items, ["done"]);
    let notification = notifications
        .try_recv()
        .expect("notification delivered before the result");
    assert_eq!(notification.text, "marker text");
    let item = notification.response_item();
    assert_eq!(item["type"], "custom_tool_call_output");
    assert_eq!(item["name"], "exec");
    assert_eq!(item["call_id"], reply.raw["call_id"]);
});

both_backends!(exit_and_timers, |backend| {
    let (session, _dir) = session(backend).await;
    let exited = exec(&session, r#"text("before"); exit(); text("after")"#).await;
    assert_header(&exited.header, "Script completed");
    assert_eq!(exited.items, ["before"]);
    let timed = exec(
        &session,
        r#"await new Promise((r) => setTimeout(r, 10)); text("timer done")"#,
    )
    .await;
    assert_eq!(timed.items, ["timer done"]);
});

both_backends!(second_observer_is_rejected, |backend| {
    let (session, _dir) = session(backend).await;
    let cell = exec(&session, "// @exec: {\"yield_time_ms\": 0}\nawait new Promise((r) => setTimeout(r, 800)); text(\"end\")")
        .await
        .cell_id();
    let (first, second) = tokio::join!(
        wait(&session, json!({"cell_id": cell, "yield_time_ms": 5000})),
        async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            wait(&session, json!({"cell_id": cell, "yield_time_ms": 5000})).await
        }
    );
    assert_eq!(first.items, ["end"]);
    assert_eq!(
        second.items,
        [format!(
            "Script error:\nexec cell {cell} already has an active observer"
        )]
    );
});

both_backends!(pragma_errors_are_model_visible, |backend| {
    let (session, _dir) = session(backend).await;
    let result = session.exec("// @exec: {\"nope\": 1}\ntext(1)").await;
    let item = serde_json::to_value(result.response_item().expect("item")).expect("json");
    assert_eq!(item["type"], "custom_tool_call_output");
    assert_eq!(
        item["output"],
        "exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `nope`"
    );
});

both_backends!(unawaited_calls_get_a_warning, |backend| {
    let (session, _dir) = session(backend).await;
    let reply = exec(
        &session,
        r#"tools.exec_command({cmd: "sleep 5"}); text("done")"#,
    )
    .await;
    assert_header(&reply.header, "Script completed");
    assert_eq!(reply.items[0], "done");
    assert!(
        reply
            .items
            .last()
            .expect("warning")
            .starts_with("Warning: the script finished while 1 tool call"),
        "{:?}",
        reply.items
    );
});

both_backends!(many_concurrent_cells_lose_nothing, |backend| {
    let (session, _dir) = session(backend).await;
    let cells = (0..64).map(|n| {
        let session = &session;
        async move {
            let source = format!(
                r#"const results = await Promise.all(Array.from({{length: 50}}, () => tools.update_plan({{plan: []}})));
                store("cell{n}", results.length); text("cell {n}: " + results.length);"#
            );
            exec(session, &source).await
        }
    });
    let replies = futures::future::join_all(cells).await;
    for (n, reply) in replies.iter().enumerate() {
        assert_eq!(reply.items, [format!("cell {n}: 50")], "{}", reply.header);
    }
    for n in 0..64 {
        assert_eq!(session.store().get(&format!("cell{n}")), Some(json!(50)));
    }
});

/// The host process dies mid-cell: that cell fails clearly, committed values survive, and
/// the next exec starts a new host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_killed_mid_cell_loses_only_running_cells() {
    // A private link to the host binary tells this test's host apart from other tests' hosts.
    let links = tempfile::tempdir().expect("temp dir");
    let program = links.path().join("code-mode-host");
    std::os::unix::fs::symlink(codemode_tests::host_program(), &program).expect("symlink");
    let (session, _dir) = session_with(Backend::HostProcess, |options| {
        options.backend = codemode_runtime::session::CellBackend::HostProcess {
            program: program.clone(),
        };
    })
    .await;
    exec(&session, r#"store("kept", 1)"#).await;
    let cell = exec(
        &session,
        "// @exec: {\"yield_time_ms\": 50}\ntext(\"running\"); while (true) {}",
    )
    .await
    .cell_id();
    let hosts = hosts_started_as(&program);
    assert_eq!(hosts.len(), 1, "one host: {hosts:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &hosts[0].to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let lost = wait(&session, json!({"cell_id": cell})).await;
    assert_header(&lost.header, "Script failed");
    assert!(
        lost.items
            .iter()
            .any(|item| item.contains("host exited unexpectedly")),
        "{:?}",
        lost.items
    );
    let next = exec(&session, r#"text(load("kept"))"#).await;
    assert_eq!(next.items, ["1"]);
    // The killed host may linger in /proc for a moment while it is reaped.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut restarted = hosts_started_as(&program);
    while restarted.contains(&hosts[0]) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        restarted = hosts_started_as(&program);
    }
    assert_eq!(
        restarted.len(),
        1,
        "one new host: {restarted:?} (killed {hosts:?})"
    );
    assert_ne!(restarted, hosts);
}

/// Pids of live processes whose argv[0] is `program`.
fn hosts_started_as(program: &std::path::Path) -> Vec<u32> {
    let wanted = program.as_os_str().as_encoded_bytes();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let zombie = stat
            .rfind(')')
            .and_then(|close| stat.get(close + 2..close + 3))
            == Some("Z");
        if !zombie && cmdline.split(|b| *b == 0).next() == Some(wanted) {
            found.push(pid);
        }
    }
    found
}

both_backends!(nested_commands_run_in_the_sandbox, |backend| {
    let (session, dir) = session(backend).await;
    // Not under /tmp: workspace-write also allows /tmp and $TMPDIR, as the reference does.
    let outside = codemode_tests::outside_workspace_dir();
    let target = outside.path().join("escaped.txt");
    let reply = exec(
        &session,
        &format!(
            r#"const inside = await tools.exec_command({{cmd: "echo in > inside.txt && cat inside.txt", login: false}});
            const outside = await tools.exec_command({{cmd: "echo out > {}", login: false}});
            text(inside.exit_code + ":" + inside.output.trim());
            text(outside.exit_code === 0 ? "escaped" : "blocked");"#,
            target.display()
        ),
    )
    .await;
    assert_eq!(reply.items, ["0:in", "blocked"], "{:?}", reply.items);
    assert!(dir.path().join("inside.txt").is_file());
    assert!(
        !target.exists(),
        "the sandbox let a nested command write outside the workspace"
    );
});

both_backends!(hooks_see_and_block_nested_calls, |backend| {
    let (session, _dir) = session_with(backend, |options| {
        options.hooks =
            codemode_runtime::hooks::ToolHooks::new().with_pre_tool_use("update_plan", |input| {
                if input.tool_input.to_string().contains("forbidden") {
                    codemode_runtime::hooks::HookResponse::block("plans may not say forbidden")
                } else {
                    codemode_runtime::hooks::HookResponse::default()
                }
            });
    })
    .await;
    let reply = exec(
        &session,
        r#"await tools.update_plan({plan: [{step: "fine", status: "pending"}]});
        try { await tools.update_plan({plan: [{step: "forbidden", status: "pending"}]}); text("ran"); }
        catch (e) { text(e); }"#,
    )
    .await;
    assert_eq!(
        reply.items,
        ["Tool call blocked by PreToolUse hook: plans may not say forbidden. Tool: update_plan"],
        "{:?}",
        reply.items
    );
});

/// An embedder's dynamic tool, deferred (not shown to the model), answering with text.
struct HiddenDynamicTool;

impl codemode_runtime::tool::ToolExecutor for HiddenDynamicTool {
    fn tool_name(&self) -> codemode_runtime::tool::ToolName {
        codemode_runtime::tool::ToolName::namespaced("codex_app", "hidden_dynamic_tool")
    }

    fn spec(&self) -> codemode_runtime::tool::ToolSpec {
        codemode_runtime::tool::ToolSpec::Function {
            name: "hidden_dynamic_tool".to_owned(),
            description: "A deferred dynamic tool".to_owned(),
            strict: false,
            defer_loading: Some(true),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
            output_schema: None,
        }
    }

    fn exposure(&self) -> codemode_runtime::tool::ToolExposure {
        codemode_runtime::tool::ToolExposure::Deferred
    }

    fn handle(
        &self,
        invocation: codemode_runtime::tool::ToolInvocation,
    ) -> futures::future::BoxFuture<
        '_,
        Result<
            Box<dyn codemode_runtime::tool::ToolOutput>,
            codemode_runtime::tool::FunctionCallError,
        >,
    > {
        Box::pin(async move {
            let codemode_runtime::tool::ToolPayload::Function { arguments } = invocation.payload
            else {
                return Err(codemode_runtime::tool::FunctionCallError::RespondToModel(
                    "bad payload".to_owned(),
                ));
            };
            Ok(Box::new(codemode_runtime::tool::TextToolOutput::ok(format!(
                "hidden-ok {arguments}"
            )))
                as Box<dyn codemode_runtime::tool::ToolOutput>)
        })
    }
}

both_backends!(deferred_dynamic_tools_are_callable_and_listed, |backend| {
    let (session, _dir) = session_with(backend, |options| {
        options
            .extra_tools
            .push(std::sync::Arc::new(HiddenDynamicTool));
    })
    .await;
    let reply = exec(
        &session,
        r#"const entry = ALL_TOOLS.find((tool) => tool.name.includes("hidden_dynamic_tool"));
        text(entry.name);
        text(await tools[entry.name]({x: 1}));"#,
    )
    .await;
    assert_eq!(
        reply.items,
        ["codex_app__hidden_dynamic_tool", r#"hidden-ok {"x":1}"#],
        "{:?}",
        reply.items
    );
    // Deferred: callable from cells but not in the model's tool list.
    assert!(
        !session
            .model_tools()
            .to_string()
            .contains("hidden_dynamic_tool")
    );
});
