//! The model-visible specs of `exec_command` and `write_stdin`.

use serde_json::json;

use crate::tool::ToolSpec;

fn output_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "chunk_id": {"type": "string"},
            "wall_time_seconds": {"type": "number"},
            "exit_code": {"type": "number"},
            "session_id": {"type": "number"},
            "original_token_count": {"type": "number"},
            "output": {"type": "string"}
        },
        "required": ["wall_time_seconds", "output"],
        "additionalProperties": false
    })
}

/// The `exec_command` spec (`login` is only offered when login shells are allowed).
pub(crate) fn exec_command_spec(allow_login_shell: bool) -> ToolSpec {
    let mut properties = json!({
        "cmd": {"type": "string", "description": "Shell command to execute."},
        "workdir": {"type": "string", "description": "Optional working directory to run the command in; defaults to the turn cwd."},
        "tty": {"type": "boolean", "description": "Whether to allocate a TTY for the command. Defaults to false (plain pipes); set to true to open a PTY and access TTY process."},
        "yield_time_ms": {"type": "number", "description": "How long to wait (in milliseconds) for output before yielding."},
        "max_output_tokens": {"type": "number", "description": "Maximum number of tokens to return. Excess output will be truncated."},
        "shell": {"type": "string", "description": "Shell binary to launch. Defaults to the user's default shell."},
        "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"], "description": "Sandbox permissions for the command. Set to \"require_escalated\" to request running without sandbox restrictions; defaults to \"use_default\"."},
        "justification": {"type": "string", "description": "Only set if sandbox_permissions is \"require_escalated\". Request approval from the user to run this command outside the sandbox. Phrased as a simple question that summarizes the purpose of the command."},
        "prefix_rule": {"type": "array", "items": {"type": "string"}, "description": "Only specify when sandbox_permissions is `require_escalated`. Suggest a prefix command pattern that will allow you to fulfill similar requests from the user in the future."}
    });
    if allow_login_shell {
        properties["login"] = json!({"type": "boolean", "description": "Whether to run the shell with -l/-i semantics. Defaults to true."});
    }
    ToolSpec::Function {
        name: "exec_command".to_owned(),
        description:
            "Runs a command in a PTY, returning output or a session ID for ongoing interaction."
                .to_owned(),
        strict: false,
        defer_loading: None,
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": ["cmd"],
            "additionalProperties": false
        }),
        output_schema: Some(output_schema()),
    }
}

/// The `write_stdin` spec.
pub(crate) fn write_stdin_spec() -> ToolSpec {
    ToolSpec::Function {
        name: "write_stdin".to_owned(),
        description:
            "Writes characters to an existing unified exec session and returns recent output."
                .to_owned(),
        strict: false,
        defer_loading: None,
        parameters: json!({
            "type": "object",
            "properties": {
                "session_id": {"type": "number", "description": "Identifier of the running unified exec session."},
                "chars": {"type": "string", "description": "Bytes to write to stdin (may be empty to poll)."},
                "yield_time_ms": {"type": "number", "description": "How long to wait (in milliseconds) for output before yielding."},
                "max_output_tokens": {"type": "number", "description": "Maximum number of tokens to return. Excess output will be truncated."}
            },
            "required": ["session_id"],
            "additionalProperties": false
        }),
        output_schema: Some(output_schema()),
    }
}
