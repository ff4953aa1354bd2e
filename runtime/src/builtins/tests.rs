//! Built-in tool tests through the real dispatch path.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::hooks::ToolHooks;
use crate::parallel::ToolCallRuntime;
use crate::registry::ToolRegistry;
use crate::router::{StepContext, StepContextOptions, ToolCall, ToolCallResult};
use crate::tool::{ToolCallSource, ToolContext, ToolExecutor, ToolName};

async fn call_in(
    cwd: &Path,
    tool: Arc<dyn ToolExecutor>,
    arguments: serde_json::Value,
) -> ToolCallResult {
    call_with(ToolContext::new(cwd.to_path_buf()), tool, arguments).await
}

async fn call_with(
    context: ToolContext,
    tool: Arc<dyn ToolExecutor>,
    arguments: serde_json::Value,
) -> ToolCallResult {
    let name = tool.tool_name();
    let mut registry = ToolRegistry::new();
    registry.register_builtin(tool).unwrap();
    let options = StepContextOptions {
        hooks: Arc::new(ToolHooks::new()),
        lifecycle_observers: Vec::new(),
    };
    let step = StepContext::new(&registry, Arc::new(context), options);
    let call = ToolCall::function(name, "c1", arguments.to_string());
    ToolCallRuntime::new(step, CancellationToken::new())
        .handle_tool_call(call, ToolCallSource::Direct)
        .await
}

#[tokio::test]
async fn update_plan_reports_the_plan_and_answers_plan_updated() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let tool = UpdatePlanTool::with_listener(Arc::new(move |args: &UpdatePlanArgs| {
        sink.lock().unwrap().push(args.clone())
    }));
    let args = json!({"explanation": "start", "plan": [{"step": "read", "status": "completed"}, {"step": "write", "status": "in_progress"}]});
    let result = call_in(&std::env::temp_dir(), Arc::new(tool), args).await;
    assert_eq!(
        result.response_item().unwrap(),
        crate::tool::ResponseInputItem::FunctionCallOutput {
            call_id: "c1".to_owned(),
            output: json!("Plan updated")
        }
    );
    assert_eq!(result.code_mode_result(), Ok(json!({})));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].explanation.as_deref(), Some("start"));
    assert_eq!(
        seen[0].plan[1],
        PlanItem {
            step: "write".to_owned(),
            status: StepStatus::InProgress
        }
    );
}

#[tokio::test]
async fn update_plan_rejects_bad_arguments_to_the_model() {
    let result = call_in(
        &std::env::temp_dir(),
        Arc::new(UpdatePlanTool::new()),
        json!({"plan": [{"step": "x", "status": "done"}]}),
    )
    .await;
    let error = result.code_mode_result().unwrap_err();
    assert!(
        error.starts_with("failed to parse function arguments: unknown variant `done`"),
        "{error}"
    );
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

#[tokio::test]
async fn view_image_returns_a_data_url_content_item() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pic.bin"), PNG).unwrap();
    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": "pic.bin"}),
    )
    .await;
    let expected_url = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, PNG)
    );
    let item = serde_json::to_value(result.response_item().unwrap()).unwrap();
    assert_eq!(
        item,
        json!({"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_image", "image_url": expected_url}]})
    );
    assert_eq!(
        result.code_mode_result(),
        Ok(json!({"image_url": expected_url, "detail": null}))
    );
}

#[tokio::test]
async fn view_image_original_detail_is_kept_in_both_views() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.gif");
    std::fs::write(&path, b"GIF89a\x01\x00\x01\x00").unwrap();
    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": path, "detail": "original"}),
    )
    .await;
    let value = result.code_mode_result().unwrap();
    assert!(
        value["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/gif;base64,")
    );
    assert_eq!(value["detail"], "original");
    let item = serde_json::to_value(result.response_item().unwrap()).unwrap();
    assert_eq!(item["output"][0]["detail"], "original");
}

#[test]
fn view_image_sniffs_formats_by_magic_bytes() {
    assert_eq!(
        view_image_sniff(b"\xFF\xD8\xFF\xE0rest"),
        Some("image/jpeg")
    );
    assert_eq!(
        view_image_sniff(b"RIFF\0\0\0\0WEBPVP8 "),
        Some("image/webp")
    );
    assert_eq!(view_image_sniff(b"GIF87a.."), Some("image/gif"));
    assert_eq!(view_image_sniff(PNG), Some("image/png"));
    assert_eq!(view_image_sniff(b"RIFF\0\0\0\0WAVE"), None);
    assert_eq!(view_image_sniff(b""), None);
}

fn view_image_sniff(bytes: &[u8]) -> Option<&'static str> {
    view_image::sniff_image_mime(bytes)
}

#[tokio::test]
async fn view_image_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.png");
    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": missing}),
    )
    .await;
    let error = result.code_mode_result().unwrap_err();
    assert!(
        error.starts_with(&format!(
            "unable to locate image at `{}`: ",
            missing.display()
        )),
        "{error}"
    );

    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": dir.path()}),
    )
    .await;
    assert_eq!(
        result.code_mode_result().unwrap_err(),
        format!("image path `{}` is not a file", dir.path().display())
    );

    let text = dir.path().join("notes.png");
    std::fs::write(&text, "hello").unwrap();
    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": text}),
    )
    .await;
    assert_eq!(
        result.code_mode_result().unwrap_err(),
        format!(
            "unable to process image at `{}`: not a png, jpeg, gif or webp image",
            text.display()
        )
    );

    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new()),
        json!({"path": text, "detail": "low"}),
    )
    .await;
    assert_eq!(
        result.code_mode_result().unwrap_err(),
        "view_image.detail only supports `original`; omit `detail` for default resized behavior, got `low`"
    );

    let big = dir.path().join("big.png");
    std::fs::write(&big, [PNG, &[0u8; 64]].concat()).unwrap();
    let result = call_in(
        dir.path(),
        Arc::new(ViewImageTool::new().with_max_bytes(32)),
        json!({"path": big}),
    )
    .await;
    assert!(
        result
            .code_mode_result()
            .unwrap_err()
            .contains("above the 32-byte limit")
    );
}

#[tokio::test]
async fn view_image_respects_the_read_permission() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.png");
    std::fs::write(&secret, PNG).unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let tool = ViewImageTool::new().with_read_permission(Arc::new(move |path: &Path| {
        log.lock().unwrap().push(path.to_path_buf());
        !path.ends_with("secret.png")
    }));
    let result = call_in(dir.path(), Arc::new(tool), json!({"path": "secret.png"})).await;
    assert_eq!(
        result.code_mode_result().unwrap_err(),
        format!(
            "access to `{}` is denied by the sandbox read policy",
            secret.display()
        )
    );
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        [secret],
        "the predicate gets the absolute path"
    );
}

#[tokio::test]
async fn view_image_refuses_what_the_sandbox_read_policy_denies() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join("secrets");
    std::fs::create_dir(&secrets).unwrap();
    let hidden = secrets.join("key.png");
    std::fs::write(&hidden, PNG).unwrap();
    let denied_file = dir.path().join("private.png");
    std::fs::write(&denied_file, PNG).unwrap();
    std::os::unix::fs::symlink(&denied_file, dir.path().join("alias.png")).unwrap();
    std::fs::write(dir.path().join("public.png"), PNG).unwrap();

    let mut context = ToolContext::new(dir.path().to_path_buf());
    context.sandbox_policy.deny_read = vec![secrets.clone(), denied_file.clone()];
    // No wiring by the caller: the default tool reads the invocation's policy.
    let view = |path: &str| {
        call_with(
            context.clone(),
            Arc::new(ViewImageTool::new()),
            json!({ "path": path }),
        )
    };
    let refusal = |path: &Path| {
        format!(
            "access to `{}` is denied by the sandbox read policy",
            path.display()
        )
    };

    let result = view("secrets/key.png").await;
    assert_eq!(result.code_mode_result().unwrap_err(), refusal(&hidden));
    assert_eq!(
        result.response_item().unwrap(),
        crate::tool::ResponseInputItem::FunctionCallOutput {
            call_id: "c1".to_owned(),
            output: json!(refusal(&hidden)),
        }
    );
    // Neither `..` nor a symlink inside the workspace gets around the denial.
    let dotted = dir.path().join("secrets/../secrets/key.png");
    let result = view(dotted.to_str().unwrap()).await;
    assert_eq!(result.code_mode_result().unwrap_err(), refusal(&dotted));
    let alias = dir.path().join("alias.png");
    let result = view("alias.png").await;
    assert_eq!(result.code_mode_result().unwrap_err(), refusal(&alias));

    let result = view("public.png").await;
    assert!(
        result.code_mode_result().unwrap()["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
}

#[test]
fn builtins_have_their_names_and_parallel_flags() {
    assert_eq!(
        UpdatePlanTool::new().tool_name(),
        ToolName::plain("update_plan")
    );
    assert!(!UpdatePlanTool::new().supports_parallel_tool_calls());
    assert!(ViewImageTool::new().supports_parallel_tool_calls());
    assert_eq!(ViewImageTool::new().spec().name(), "view_image");
}
