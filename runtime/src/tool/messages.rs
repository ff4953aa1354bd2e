//! Every model-visible string of the tool runtime core, built from typed values and pinned by
//! tests. The wording follows spec runtime §2–§3 exactly: models are trained on it.

use std::path::Path;

use super::ToolName;

/// Lookup failure for a function or tool-search call (spec runtime §2.2).
pub fn unsupported_call(name: &ToolName) -> String {
    format!("unsupported call: {name}")
}

/// Lookup failure for a custom (freeform) call (spec runtime §2.2).
pub fn unsupported_custom_tool_call(name: &ToolName) -> String {
    format!("unsupported custom tool call: {name}")
}

/// A payload kind the tool cannot take; a fatal error, never shown as a tool failure.
pub fn incompatible_payload(name: &ToolName) -> String {
    format!("tool {name} invoked with incompatible payload")
}

/// A PreToolUse block of a shell-like or patch tool (spec runtime §2.3).
pub fn pre_tool_use_blocked_command(reason: &str, command: &str) -> String {
    format!("Command blocked by PreToolUse hook: {reason}. Command: {command}")
}

/// A PreToolUse block of any other tool (spec runtime §2.3).
pub fn pre_tool_use_blocked_tool(reason: &str, tool: &str) -> String {
    format!("Tool call blocked by PreToolUse hook: {reason}. Tool: {tool}")
}

/// A PostToolUse block that gave no message of its own (spec runtime §2.3).
pub const POST_TOOL_USE_BLOCKED: &str = "PostToolUse hook blocked the tool result";

/// The output of a call cancelled before it finished (spec runtime §3). `secs` is floored at
/// 0.1 so an instant cancellation never reads as `0.0s`.
pub fn aborted_by_user(elapsed_secs: f64) -> String {
    let secs = elapsed_secs.max(0.1);
    format!("aborted by user after {secs:.1}s")
}

/// A client `tool_search_call` whose arguments are not `{query, limit?}`.
pub fn tool_search_parse_failed(error: &str) -> String {
    format!("failed to parse tool_search arguments: {error}")
}

/// Function arguments that are not the JSON the tool expects.
pub fn failed_to_parse_arguments(error: &str) -> String {
    format!("failed to parse function arguments: {error}")
}

/// The dispatch task died (panicked) instead of returning.
pub fn task_failed_to_receive(error: &str) -> String {
    format!("tool task failed to receive: {error}")
}

/// A hook rewrote the input of a freeform tool with something that is not a string.
pub fn hook_input_not_string(name: &ToolName) -> String {
    format!("PreToolUse hook rewrote the input of {name} with a non-string value")
}

/// A hook rewrote the input of a shell or patch tool without a string `command`.
pub fn hook_input_without_command(name: &ToolName) -> String {
    format!("PreToolUse hook rewrote the input of {name} without a string `command`")
}

/// The text `update_plan` answers with.
pub const PLAN_UPDATED: &str = "Plan updated";

/// `view_image`: the file could not be read.
pub fn image_unreadable(path: &Path, error: &str) -> String {
    format!("unable to locate image at `{}`: {error}", path.display())
}

/// `view_image`: the path is a directory or something else that is not a file.
pub fn image_not_a_file(path: &Path) -> String {
    format!("image path `{}` is not a file", path.display())
}

/// `view_image`: the bytes cannot be used as an image.
fn image_unsupported(path: &Path, detail: &str) -> String {
    format!("unable to process image at `{}`: {detail}", path.display())
}

/// `view_image`: the file is larger than the configured limit.
pub fn image_too_large(path: &Path, len: u64, max: u64) -> String {
    image_unsupported(
        path,
        &format!("the file is {len} bytes, above the {max}-byte limit"),
    )
}

/// `view_image`: the bytes are none of the supported formats.
pub fn image_unknown_format(path: &Path) -> String {
    image_unsupported(path, "not a png, jpeg, gif or webp image")
}

/// `view_image`: the sandbox read policy forbids the path.
pub fn image_read_denied(path: &Path) -> String {
    format!(
        "access to `{}` is denied by the sandbox read policy",
        path.display()
    )
}

/// `view_image`: a `detail` other than `original`.
pub fn image_detail_unsupported(detail: &str) -> String {
    format!(
        "view_image.detail only supports `original`; omit `detail` for default resized behavior, got `{detail}`"
    )
}
