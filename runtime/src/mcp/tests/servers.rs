//! Real npm servers over stdio: listing, calls, result shapes, concurrency.

use futures::future::join_all;
use serde_json::{Value, json};

use super::support::{call, everything, executor, filesystem, first_text, memory, start};
use crate::tool::{ResponseInputItem, ToolExposure, ToolPayload, ToolSpec};

fn tool_names(manager: &crate::mcp::McpConnectionManager) -> Vec<String> {
    manager
        .executors()
        .iter()
        .map(|executor| super::support::flat(&executor.tool_name()))
        .collect()
}

#[tokio::test]
async fn lists_tools_of_everything_filesystem_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let manager = start(vec![
        ("everything", everything()),
        ("fs", filesystem(dir.path())),
        ("memory", memory(&dir.path().join("memory.json"))),
    ])
    .await;
    let names = tool_names(&manager);
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-structured-content",
        "mcp__everything__get-tiny-image",
        "mcp__everything__trigger-long-running-operation",
        "mcp__fs__read_text_file",
        "mcp__fs__directory_tree",
        "mcp__fs__list_allowed_directories",
        "mcp__memory__create_entities",
        "mcp__memory__read_graph",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} missing from {names:?}"
        );
    }
    assert!(names.iter().all(|name| {
        name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }));
    assert_eq!(manager.server_names(), vec!["everything", "fs", "memory"]);
}

#[tokio::test]
async fn spec_is_a_namespace_with_one_function_and_declares_a_call_tool_result() {
    let manager = start(vec![("everything", everything())]).await;
    let echo = executor(&manager, "mcp__everything__echo");
    assert_eq!(echo.exposure(), ToolExposure::Direct);
    let ToolSpec::Namespace { name, tools, .. } = echo.spec() else {
        panic!("not a namespace: {:?}", echo.spec())
    };
    assert_eq!(name, "mcp__everything__");
    let [
        ToolSpec::Function {
            name,
            parameters,
            strict,
            defer_loading,
            ..
        },
    ] = tools.as_slice()
    else {
        panic!("expected one function, got {tools:?}")
    };
    assert_eq!(name, "echo");
    assert!(!strict);
    assert_eq!(*defer_loading, None);
    assert_eq!(parameters["type"], "object");
    assert!(
        parameters["properties"]["message"].is_object(),
        "{parameters}"
    );
    // Serialized, the spec is a Responses API namespace tool.
    let json = serde_json::to_value(echo.spec()).unwrap();
    assert_eq!(json["type"], "namespace");
    assert_eq!(json["tools"][0]["type"], "function");

    let structured = executor(&manager, "mcp__everything__get-structured-content");
    let ToolSpec::Namespace { tools, .. } = structured.spec() else {
        panic!()
    };
    let ToolSpec::Function {
        output_schema: Some(schema),
        ..
    } = &tools[0]
    else {
        panic!("no output schema: {tools:?}")
    };
    // Code mode resolves with the whole CallToolResult; the declared schema is its
    // structuredContent.
    assert!(
        schema["properties"]["structuredContent"]["properties"]["temperature"].is_object(),
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["isError"]["type"], "boolean",
        "{schema}"
    );
    // readOnlyHint makes it parallel-safe; echo declares no hint.
    assert!(structured.supports_parallel_tool_calls());
}

#[tokio::test]
async fn echo_round_trips() {
    let manager = start(vec![("everything", everything())]).await;
    let output = call(&manager, "mcp__everything__echo", r#"{"message":"hello"}"#).await;
    assert_eq!(output.success(), Some(true));
    assert_eq!(output.model_text(), "Echo: hello");
    let result = output.code_mode_result();
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "Echo: hello"}]})
    );
    let item = output.to_response_item(
        "c1",
        &ToolPayload::Function {
            arguments: String::new(),
        },
    );
    assert_eq!(
        item,
        ResponseInputItem::FunctionCallOutput {
            call_id: "c1".into(),
            output: json!("Echo: hello")
        }
    );
}

#[tokio::test]
async fn structured_content_is_preferred_for_the_model_and_kept_for_code_mode() {
    let manager = start(vec![("everything", everything())]).await;
    let output = call(
        &manager,
        "mcp__everything__get-structured-content",
        r#"{"location":"Chicago"}"#,
    )
    .await;
    let result = output.code_mode_result();
    let structured = &result["structuredContent"];
    assert_eq!(structured["conditions"], "Light rain / drizzle", "{result}");
    assert!(
        result["content"]
            .as_array()
            .is_some_and(|content| !content.is_empty())
    );
    assert!(
        result.get("_meta").is_none() && result.get("resultType").is_none(),
        "{result}"
    );
    let model: Value = serde_json::from_str(&output.model_text()).unwrap();
    assert_eq!(&model, structured);
}

#[tokio::test]
async fn image_content_is_preserved() {
    let manager = start(vec![("everything", everything())]).await;
    let output = call(&manager, "mcp__everything__get-tiny-image", "").await;
    let result = output.code_mode_result();
    let image = result["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|block| block["type"] == "image"))
        .unwrap_or_else(|| panic!("no image block in {result}"));
    assert_eq!(image["mimeType"], "image/png");
    assert!(image["data"].as_str().is_some_and(|data| data.len() > 100));
    let ResponseInputItem::FunctionCallOutput { output: items, .. } = output.to_response_item(
        "c",
        &ToolPayload::Function {
            arguments: String::new(),
        },
    ) else {
        panic!()
    };
    let url = items
        .as_array()
        .and_then(|items| items.iter().find(|item| item["type"] == "input_image"))
        .and_then(|item| item["image_url"].as_str())
        .unwrap_or_else(|| panic!("no input_image in {items}"));
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
}

#[tokio::test]
async fn error_results_are_failures_not_exceptions() {
    let dir = tempfile::tempdir().unwrap();
    let manager = start(vec![
        ("everything", everything()),
        ("fs", filesystem(dir.path())),
    ])
    .await;

    // Outside the allowed directories: the server answers with isError.
    let output = call(
        &manager,
        "mcp__fs__read_text_file",
        r#"{"path":"/etc/hostname"}"#,
    )
    .await;
    assert_eq!(output.success(), Some(false));
    let result = output.code_mode_result();
    assert_eq!(result["isError"], true, "{result}");
    assert!(first_text(&result).contains("denied"), "{result}");

    // Arguments the tool's schema rejects.
    let output = call(&manager, "mcp__everything__echo", r#"{"message": 5}"#).await;
    assert_eq!(
        output.code_mode_result()["isError"],
        true,
        "{}",
        output.code_mode_result()
    );

    // Arguments that are not JSON never reach the server (spec runtime §9.3).
    let output = call(&manager, "mcp__everything__echo", "{not json").await;
    let result = output.code_mode_result();
    assert_eq!(result["isError"], true);
    assert!(
        first_text(&result).starts_with("err: key must be a string"),
        "{result}"
    );
}

#[tokio::test]
async fn fifty_concurrent_calls_each_get_their_own_answer() {
    let manager = start(vec![("everything", everything())]).await;
    let echo = executor(&manager, "mcp__everything__echo");
    let calls = (0..50).map(|i| {
        let echo = echo.clone();
        async move {
            let invocation = super::support::invocation(
                echo.as_ref(),
                &format!(r#"{{"message":"m{i}"}}"#),
                tokio_util::sync::CancellationToken::new(),
            );
            echo.handle(invocation).await.unwrap().model_text()
        }
    });
    let texts = join_all(calls).await;
    for (i, text) in texts.iter().enumerate() {
        assert_eq!(text, &format!("Echo: m{i}"));
    }
}

#[tokio::test]
async fn directory_tree_of_a_generated_tree() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    std::fs::write(dir.path().join("src/nested/deep.txt"), "x").unwrap();
    std::fs::write(dir.path().join("README.md"), "# r").unwrap();
    let manager = start(vec![("fs", filesystem(dir.path()))]).await;
    let arguments = json!({"path": dir.path()}).to_string();
    let output = call(&manager, "mcp__fs__directory_tree", &arguments).await;
    assert_eq!(output.success(), Some(true), "{}", output.model_text());
    let text = output.model_text();
    for name in ["src", "nested", "deep.txt", "lib.rs", "README.md"] {
        assert!(text.contains(name), "{name} missing from {text}");
    }
}

#[tokio::test]
async fn memory_server_keeps_entities_between_calls() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl");
    let manager = start(vec![("memory", memory(&file))]).await;
    let created = call(
        &manager,
        "mcp__memory__create_entities",
        r#"{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}"#,
    )
    .await;
    assert_eq!(created.success(), Some(true), "{}", created.model_text());
    let graph = call(&manager, "mcp__memory__read_graph", "{}")
        .await
        .code_mode_result();
    assert_eq!(
        graph["structuredContent"]["entities"][0]["name"], "Ada",
        "{graph}"
    );
    assert!(file.exists(), "MEMORY_FILE_PATH reached the server");
}

#[tokio::test]
async fn child_environment_is_minimal_plus_configured() {
    let mut config = everything();
    config
        .env
        .insert("CODEMODE_CONFIGURED".to_owned(), "yes".to_owned());
    config.env_vars.push("CARGO_PKG_NAME".to_owned());
    let manager = start(vec![("everything", config)]).await;
    let text = call(&manager, "mcp__everything__get-env", "")
        .await
        .model_text();
    assert!(text.contains("CODEMODE_CONFIGURED"), "{text}");
    assert!(
        text.contains("CARGO_PKG_NAME"),
        "env_vars passes a named variable: {text}"
    );
    // Cargo sets this for the test process; it is neither inherited by default nor named.
    assert!(!text.contains("CARGO_MANIFEST_DIR"), "{text}");
}

#[tokio::test]
async fn enabled_and_disabled_tools_filter_the_list() {
    let mut config = everything();
    config.enabled_tools = Some(vec![
        "echo".to_owned(),
        "get-sum".to_owned(),
        "no-such-tool".to_owned(),
    ]);
    config.disabled_tools = vec!["get-sum".to_owned()];
    let manager = start(vec![("everything", config)]).await;
    assert_eq!(tool_names(&manager), vec!["mcp__everything__echo"]);
}

#[tokio::test]
async fn deferral_marks_specs_for_tool_search() {
    let mut options = super::support::options(vec![("everything", everything())]);
    options.deferral = crate::mcp::McpToolDeferral::WhenMoreThan(3);
    let manager = crate::mcp::McpConnectionManager::start(options)
        .await
        .unwrap();
    let echo = executor(&manager, "mcp__everything__echo");
    assert_eq!(echo.exposure(), ToolExposure::Deferred);
    let json = serde_json::to_value(echo.spec()).unwrap();
    assert_eq!(json["tools"][0]["defer_loading"], true, "{json}");

    let mut options = super::support::options(vec![("everything", everything())]);
    options.deferral = crate::mcp::McpToolDeferral::WhenMoreThan(100);
    let manager = crate::mcp::McpConnectionManager::start(options)
        .await
        .unwrap();
    assert_eq!(
        executor(&manager, "mcp__everything__echo").exposure(),
        ToolExposure::Direct
    );
}

#[tokio::test]
async fn progress_notifications_reach_the_hook() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut options = super::support::options(vec![("everything", everything())]);
    options.progress_hook = Some(std::sync::Arc::new(move |progress| {
        sink.lock().unwrap().push(progress)
    }));
    let manager = crate::mcp::McpConnectionManager::start(options)
        .await
        .unwrap();
    let output = call(
        &manager,
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":0.4,"steps":2}"#,
    )
    .await;
    assert_eq!(output.success(), Some(true), "{}", output.model_text());
    // Notifications are handled on their own tasks; give the last one a moment.
    for _ in 0..50 {
        if seen.lock().unwrap().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = seen.lock().unwrap();
    let steps: Vec<f64> = seen.iter().map(|progress| progress.progress).collect();
    assert_eq!(steps, vec![1.0, 2.0]);
    assert!(
        seen.iter()
            .all(|progress| progress.server == "everything" && progress.total == Some(2.0))
    );
}

#[tokio::test]
async fn tool_list_changed_refreshes_the_tools() {
    let script = super::support::servers_dir().join("dynamic_tools_server.py");
    let config =
        crate::mcp::McpServerConfig::new("python3", [script.to_string_lossy().into_owned()]);
    let manager = start(vec![("dyn", config)]).await;
    assert_eq!(tool_names(&manager), vec!["mcp__dyn__add_tool"]);
    let generation = manager.tools_generation();
    assert_eq!(
        call(&manager, "mcp__dyn__add_tool", "").await.model_text(),
        "called add_tool"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while manager.tools_generation() == generation {
        assert!(
            std::time::Instant::now() < deadline,
            "tool list was not refreshed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        tool_names(&manager),
        vec!["mcp__dyn__add_tool", "mcp__dyn__extra_1"]
    );
    assert_eq!(
        call(&manager, "mcp__dyn__extra_1", "{}").await.model_text(),
        "called extra_1"
    );
}
