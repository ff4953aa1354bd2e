//! Every model-visible string of code mode, produced from typed values in one place and pinned
//! by golden tests. Strings marked "reference" match the reference implementation exactly
//! (spec code-mode §1.3, §2, §3.3, §5.2); models are trained on them. The rest are ours
//! (DESIGN.md "Where we go beyond the reference").

use std::time::Duration;

use codemode_bridge::CellId;

/// Reference: an empty or whitespace-only exec input.
pub const EXEC_EMPTY_SOURCE: &str = "exec expects raw JavaScript source text (non-empty). Provide JS only, optionally with first-line `// @exec: {\"yield_time_ms\": 10000, \"max_output_tokens\": 1000}`.";
/// Reference: a pragma line with nothing after it.
pub const PRAGMA_WITHOUT_SOURCE: &str =
    "exec pragma must be followed by JavaScript source on subsequent lines";
/// Reference: an empty directive or one whose JSON is not an object.
pub const PRAGMA_NOT_AN_OBJECT: &str = "exec pragma must be a JSON object with supported fields `yield_time_ms` and `max_output_tokens`";
/// Reference: exec called with a payload that is not freeform text.
pub const EXEC_EXPECTS_SOURCE: &str = "exec expects raw JavaScript source text";
/// Reference: wait called with a payload that is not JSON function arguments.
pub const WAIT_EXPECTS_JSON: &str = "wait expects JSON arguments";
/// Reference: a nested call naming `exec` (or, ours, `wait`): the recursion guard.
pub const EXEC_CANNOT_INVOKE_ITSELF: &str = "exec cannot invoke itself";
/// Reference: the host's cell cap was reached.
pub const TOO_MANY_ACTIVE_CELLS: &str = "code-mode host has too many active cells";
/// Reference: a nested call cancelled because its cell ended or the turn was interrupted.
pub const NESTED_CALL_CANCELLED: &str = "code mode nested tool call cancelled";
/// Reference: the nested-call dispatcher is gone (session shut down).
pub const NESTED_DISPATCHER_UNAVAILABLE: &str = "code mode nested tool dispatcher is unavailable";

/// Reference: a pragma directive that is not valid JSON.
pub fn pragma_invalid_json(err: &str) -> String {
    format!(
        "exec pragma must be valid JSON with supported fields `yield_time_ms` and `max_output_tokens`: {err}"
    )
}

/// Reference: a pragma key other than the two supported ones.
pub fn pragma_unsupported_key(key: &str) -> String {
    format!("exec pragma only supports `yield_time_ms` and `max_output_tokens`; got `{key}`")
}

/// Reference: a pragma field whose value is not a non-negative integer.
pub fn pragma_invalid_field_types(err: &str) -> String {
    format!(
        "exec pragma fields `yield_time_ms` and `max_output_tokens` must be non-negative safe integers: {err}"
    )
}

/// Reference: a pragma field above 2^53 − 1.
pub fn pragma_unsafe_integer(field: &str) -> String {
    format!("exec pragma field `{field}` must be a non-negative safe integer")
}

/// How an observation of a cell ended; picks the first line of the header item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptStatus {
    /// The cell yielded and keeps running.
    Running(CellId),
    /// The cell was stopped by `wait {terminate: true}`.
    Terminated,
    /// The module settled without an error (or `exit()` ran).
    Completed,
    /// The module failed.
    Failed,
}

impl ScriptStatus {
    /// Reference: the status line.
    pub fn line(&self) -> String {
        match self {
            Self::Running(cell_id) => format!("Script running with cell ID {cell_id}"),
            Self::Terminated => "Script terminated".to_owned(),
            Self::Completed => "Script completed".to_owned(),
            Self::Failed => "Script failed".to_owned(),
        }
    }
}

/// Reference: the header item prepended to every exec/wait result,
/// `<status>\nWall time <s.s> seconds\nOutput:\n`, wall time rounded to 0.1 s.
pub fn script_header(status: &ScriptStatus, wall_time: Duration) -> String {
    let seconds = (wall_time.as_secs_f64() * 10.0).round() / 10.0;
    format!(
        "{}\nWall time {seconds:.1} seconds\nOutput:\n",
        status.line()
    )
}

/// Reference: the item appended when a script failed.
pub fn script_error(error_text: &str) -> String {
    format!("Script error:\n{error_text}")
}

/// Reference: `wait` named a cell this session does not know.
pub fn cell_not_found(cell_id: &CellId) -> String {
    format!("exec cell {cell_id} not found")
}

/// Reference: a second concurrent `wait` on the same cell.
pub fn cell_has_active_observer(cell_id: &CellId) -> String {
    format!("exec cell {cell_id} already has an active observer")
}

/// Reference: a second terminate while the first is still cleaning up.
pub fn cell_already_terminating(cell_id: &CellId) -> String {
    format!("exec cell {cell_id} is already terminating")
}

/// Ours: `wait` on a cell whose final result was already returned (issue #32816: the
/// reference says "not found" and agents retry in a loop).
pub fn cell_already_completed(cell_id: &CellId) -> String {
    format!(
        "exec cell {cell_id} already completed; its result was returned earlier. Start a new exec."
    )
}

/// Reference: wait arguments that are not valid JSON for its schema.
pub fn failed_to_parse_arguments(err: &str) -> String {
    format!("failed to parse function arguments: {err}")
}

/// Reference: a nested call to a function tool whose argument is not an object.
pub fn tool_expects_json_object(js_name: &str) -> String {
    format!("tool `{js_name}` expects a JSON object for arguments")
}

/// Reference: a nested call to a freeform tool whose argument is not a string.
pub fn tool_expects_string(js_name: &str) -> String {
    format!("tool `{js_name}` expects a string input")
}

/// Ours: the module settled while `pending` nested calls were never awaited; they were
/// cancelled. One line, so it survives truncation intact at the end of the output.
pub fn abandoned_calls_warning(pending: usize) -> String {
    let (calls, pronoun, verb) = if pending == 1 {
        ("tool call", "it", "was")
    } else {
        ("tool calls", "they", "were")
    };
    format!(
        "Warning: the script finished while {pending} {calls} {verb} still pending; {pronoun} {verb} cancelled. Await every tools.* call (for example with await Promise.all([...]))."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell() -> CellId {
        CellId::from_raw("7")
    }

    #[test]
    fn headers_golden() {
        assert_eq!(
            script_header(&ScriptStatus::Running(cell()), Duration::from_millis(1_250)),
            "Script running with cell ID 7\nWall time 1.3 seconds\nOutput:\n"
        );
        assert_eq!(
            script_header(&ScriptStatus::Terminated, Duration::ZERO),
            "Script terminated\nWall time 0.0 seconds\nOutput:\n"
        );
        assert_eq!(
            script_header(&ScriptStatus::Completed, Duration::from_millis(10_040)),
            "Script completed\nWall time 10.0 seconds\nOutput:\n"
        );
        assert_eq!(
            script_header(&ScriptStatus::Failed, Duration::from_millis(99)),
            "Script failed\nWall time 0.1 seconds\nOutput:\n"
        );
    }

    #[test]
    fn cell_messages_golden() {
        assert_eq!(
            script_error("Error: boom\n    at exec_main.mjs:1:7"),
            "Script error:\nError: boom\n    at exec_main.mjs:1:7"
        );
        assert_eq!(
            cell_not_found(&CellId::from_raw("999999")),
            "exec cell 999999 not found"
        );
        assert_eq!(
            cell_has_active_observer(&cell()),
            "exec cell 7 already has an active observer"
        );
        assert_eq!(
            cell_already_terminating(&CellId::from_raw("1")),
            "exec cell 1 is already terminating"
        );
        assert_eq!(
            cell_already_completed(&cell()),
            "exec cell 7 already completed; its result was returned earlier. Start a new exec."
        );
    }

    #[test]
    fn call_messages_golden() {
        assert_eq!(EXEC_CANNOT_INVOKE_ITSELF, "exec cannot invoke itself");
        assert_eq!(
            EXEC_EXPECTS_SOURCE,
            "exec expects raw JavaScript source text"
        );
        assert_eq!(WAIT_EXPECTS_JSON, "wait expects JSON arguments");
        assert_eq!(
            TOO_MANY_ACTIVE_CELLS,
            "code-mode host has too many active cells"
        );
        assert_eq!(
            NESTED_CALL_CANCELLED,
            "code mode nested tool call cancelled"
        );
        assert_eq!(
            NESTED_DISPATCHER_UNAVAILABLE,
            "code mode nested tool dispatcher is unavailable"
        );
        assert_eq!(
            failed_to_parse_arguments("missing field `cell_id`"),
            "failed to parse function arguments: missing field `cell_id`"
        );
        assert_eq!(
            tool_expects_json_object("exec_command"),
            "tool `exec_command` expects a JSON object for arguments"
        );
        assert_eq!(
            tool_expects_string("apply_patch"),
            "tool `apply_patch` expects a string input"
        );
    }

    #[test]
    fn abandoned_calls_warning_golden() {
        assert_eq!(
            abandoned_calls_warning(2),
            "Warning: the script finished while 2 tool calls were still pending; they were cancelled. Await every tools.* call (for example with await Promise.all([...]))."
        );
        assert_eq!(
            abandoned_calls_warning(1),
            "Warning: the script finished while 1 tool call was still pending; it was cancelled. Await every tools.* call (for example with await Promise.all([...]))."
        );
        assert!(!abandoned_calls_warning(3).contains('\n'));
    }
}
