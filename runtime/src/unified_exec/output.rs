//! `ExecCommandToolOutput`: the model-visible text of exec_command / write_stdin (spec §4.4)
//! and the structured object code mode receives.

use std::time::Duration;

use super::args::DEFAULT_MAX_OUTPUT_TOKENS;
use crate::tool::{ResponseInputItem, ToolOutput, ToolPayload};
use crate::truncate::{approx_token_count, formatted_truncate_text};

/// The result of one exec_command or write_stdin call.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecCommandToolOutput {
    /// Random id of this output chunk.
    pub chunk_id: String,
    /// Time spent in the call.
    pub wall_time: Duration,
    /// Exit code, once the process has exited.
    pub exit_code: Option<i32>,
    /// Session id while the process still runs.
    pub session_id: Option<i32>,
    /// The output collected in this call, untruncated.
    pub raw_output: String,
    /// The budget the call asked for; `None` when omitted.
    pub max_output_tokens: Option<usize>,
}

impl ExecCommandToolOutput {
    /// An output with a fresh chunk id.
    pub fn new(
        wall_time: Duration,
        exit_code: Option<i32>,
        session_id: Option<i32>,
        raw_output: String,
        max_output_tokens: Option<usize>,
    ) -> Self {
        let chunk_id = uuid::Uuid::new_v4().simple().to_string()[..6].to_owned();
        Self {
            chunk_id,
            wall_time,
            exit_code,
            session_id,
            raw_output,
            max_output_tokens,
        }
    }

    /// The output truncated to the token budget for the model.
    pub fn truncated_output(&self) -> String {
        formatted_truncate_text(
            &self.raw_output,
            self.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS),
        )
    }

    /// The model-visible text.
    pub fn response_text(&self) -> String {
        let mut text = String::new();
        if !self.chunk_id.is_empty() {
            text.push_str(&format!("Chunk ID: {}\n", self.chunk_id));
        }
        text.push_str(&format!(
            "Wall time: {:.4} seconds\n",
            self.wall_time.as_secs_f64()
        ));
        if let Some(code) = self.exit_code {
            text.push_str(&format!("Process exited with code {code}\n"));
        }
        if let Some(id) = self.session_id {
            text.push_str(&format!("Process running with session ID {id}\n"));
        }
        text.push_str(&format!(
            "Original token count: {}\n",
            approx_token_count(&self.raw_output)
        ));
        text.push_str("Output:\n");
        text.push_str(&self.truncated_output());
        text
    }
}

impl ToolOutput for ExecCommandToolOutput {
    fn success(&self) -> Option<bool> {
        Some(true)
    }

    fn model_text(&self) -> String {
        self.response_text()
    }

    fn to_response_item(&self, call_id: &str, payload: &ToolPayload) -> ResponseInputItem {
        let output = serde_json::Value::String(self.response_text());
        match payload {
            ToolPayload::Custom { .. } => ResponseInputItem::CustomToolCallOutput {
                call_id: call_id.to_owned(),
                output,
            },
            _ => ResponseInputItem::FunctionCallOutput {
                call_id: call_id.to_owned(),
                output,
            },
        }
    }

    /// PostToolUse sees the truncated output, once the process has exited.
    fn hook_response(&self) -> Option<serde_json::Value> {
        self.session_id
            .is_none()
            .then(|| serde_json::Value::String(self.truncated_output()))
    }

    fn code_mode_result(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("chunk_id".into(), self.chunk_id.clone().into());
        obj.insert(
            "wall_time_seconds".into(),
            self.wall_time.as_secs_f64().into(),
        );
        if let Some(code) = self.exit_code {
            obj.insert("exit_code".into(), code.into());
        }
        if let Some(id) = self.session_id {
            obj.insert("session_id".into(), id.into());
        }
        obj.insert(
            "original_token_count".into(),
            approx_token_count(&self.raw_output).into(),
        );
        // A nested call that did not ask for a budget gets the raw output.
        let output = match self.max_output_tokens {
            Some(_) => self.truncated_output(),
            None => self.raw_output.clone(),
        };
        obj.insert("output".into(), output.into());
        serde_json::Value::Object(obj)
    }
}
