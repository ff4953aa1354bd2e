//! `Observation`: one exec or wait result as the CLI reports it, recovered from the
//! model-visible items (header, output, `Script error:`), so what the CLI shows is exactly
//! what a model would see.

use codemode_runtime::router::ToolCallResult;
use codemode_runtime::tool::{FunctionCallOutputContentItem, ResponseInputItem};
use serde::Serialize;
use serde_json::Value;

/// Reference prefix of the status line of a yielded cell.
const RUNNING_PREFIX: &str = "Script running with cell ID ";
/// Reference prefix of the item appended when a script failed.
const SCRIPT_ERROR_PREFIX: &str = "Script error:\n";

/// How an observation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// The cell yielded and keeps running.
    Running,
    /// The script finished.
    Completed,
    /// The script (or the call) failed.
    Failed,
    /// The cell was terminated.
    Terminated,
}

/// One observation, in the `--json` shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Observation {
    /// How it ended.
    pub(crate) status: Status,
    /// The cell, when known (a cell that completes within its first exec never shows it).
    pub(crate) cell_id: Option<String>,
    /// The wall time of the call, from the header.
    pub(crate) wall_time_seconds: Option<f64>,
    /// Output items after the header, without the `Script error:` item.
    pub(crate) items: Vec<FunctionCallOutputContentItem>,
    /// The script error, or why the call itself failed.
    pub(crate) error: Option<String>,
    /// Every model-visible item, header and error included.
    #[serde(skip)]
    pub(crate) model_items: Vec<FunctionCallOutputContentItem>,
}

impl Observation {
    /// Reads a result of `exec` or `wait`; `known_cell` fills `cell_id` when the header does
    /// not name it.
    pub(crate) fn from_result(result: &ToolCallResult, known_cell: Option<&str>) -> Self {
        let output = match result.response_item() {
            Ok(
                ResponseInputItem::CustomToolCallOutput { output, .. }
                | ResponseInputItem::FunctionCallOutput { output, .. },
            ) => output,
            Ok(other) => Value::String(format!("unexpected result item: {other:?}")),
            Err(fatal) => Value::String(fatal.to_string()),
        };
        let mut observation = match output {
            Value::Array(items) => {
                let items: Vec<FunctionCallOutputContentItem> = items
                    .into_iter()
                    .filter_map(|item| serde_json::from_value(item).ok())
                    .collect();
                Self::from_items(items)
            }
            // A plain string is a call that failed before a cell ran or was observed.
            Value::String(text) => Self::call_failed(text),
            other => Self::call_failed(other.to_string()),
        };
        if observation.cell_id.is_none() {
            observation.cell_id = known_cell.map(str::to_owned);
        }
        observation
    }

    /// Ctrl-C arrived before the cell yielded its id; every cell was terminated.
    pub(crate) fn terminated_before_yield() -> Self {
        let text = "Script terminated (interrupted before it yielded)".to_owned();
        Self {
            status: Status::Terminated,
            cell_id: None,
            wall_time_seconds: None,
            items: Vec::new(),
            model_items: vec![FunctionCallOutputContentItem::InputText { text }],
            error: None,
        }
    }

    fn call_failed(text: String) -> Self {
        Self {
            status: Status::Failed,
            cell_id: None,
            wall_time_seconds: None,
            items: Vec::new(),
            model_items: vec![FunctionCallOutputContentItem::InputText { text: text.clone() }],
            error: Some(text),
        }
    }

    fn from_items(model_items: Vec<FunctionCallOutputContentItem>) -> Self {
        let header = match model_items.first() {
            Some(FunctionCallOutputContentItem::InputText { text }) => text.as_str(),
            _ => "",
        };
        let mut lines = header.lines();
        let status_line = lines.next().unwrap_or_default();
        let (status, cell_id) = match status_line {
            "Script completed" => (Status::Completed, None),
            "Script failed" => (Status::Failed, None),
            "Script terminated" => (Status::Terminated, None),
            line => match line.strip_prefix(RUNNING_PREFIX) {
                Some(cell) => (Status::Running, Some(cell.to_owned())),
                None => (Status::Failed, None),
            },
        };
        let wall_time_seconds = lines
            .next()
            .and_then(|line| line.strip_prefix("Wall time "))
            .and_then(|rest| rest.strip_suffix(" seconds"))
            .and_then(|seconds| seconds.parse().ok());
        let mut error = None;
        let mut items = Vec::new();
        for item in model_items.iter().skip(1) {
            match item {
                FunctionCallOutputContentItem::InputText { text }
                    if error.is_none() && text.starts_with(SCRIPT_ERROR_PREFIX) =>
                {
                    error = Some(text[SCRIPT_ERROR_PREFIX.len()..].to_owned());
                }
                other => items.push(other.clone()),
            }
        }
        Self {
            status,
            cell_id,
            wall_time_seconds,
            items,
            error,
            model_items,
        }
    }

    /// The process exit code this observation ends with.
    pub(crate) fn exit_code(&self) -> u8 {
        match self.status {
            Status::Running | Status::Completed => 0,
            Status::Failed | Status::Terminated => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> FunctionCallOutputContentItem {
        FunctionCallOutputContentItem::InputText {
            text: text.to_owned(),
        }
    }

    #[test]
    fn running_header_gives_cell_and_wall_time() {
        let observation = Observation::from_items(vec![
            text("Script running with cell ID 7\nWall time 0.1 seconds\nOutput:\n"),
            text("partial"),
        ]);
        assert_eq!(observation.status, Status::Running);
        assert_eq!(observation.cell_id.as_deref(), Some("7"));
        assert_eq!(observation.wall_time_seconds, Some(0.1));
        assert_eq!(observation.items, vec![text("partial")]);
        assert_eq!(observation.error, None);
    }

    #[test]
    fn failed_script_moves_error_out_of_items() {
        let observation = Observation::from_items(vec![
            text("Script failed\nWall time 0.0 seconds\nOutput:\n"),
            text("before"),
            text("Script error:\nError: boom"),
        ]);
        assert_eq!(observation.status, Status::Failed);
        assert_eq!(observation.error.as_deref(), Some("Error: boom"));
        assert_eq!(observation.items, vec![text("before")]);
        assert_eq!(observation.model_items.len(), 3);
        assert_eq!(observation.exit_code(), 1);
    }

    #[test]
    fn plain_text_is_a_failed_call() {
        let observation = Observation::call_failed("exec cell 9 not found".to_owned());
        assert_eq!(observation.status, Status::Failed);
        assert_eq!(observation.error.as_deref(), Some("exec cell 9 not found"));
        assert!(observation.items.is_empty());
    }

    #[test]
    fn json_shape() {
        let observation = Observation::from_items(vec![
            text("Script completed\nWall time 1.5 seconds\nOutput:\n"),
            text("hi"),
        ]);
        let json = serde_json::to_value(&observation).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "status": "completed",
                "cell_id": null,
                "wall_time_seconds": 1.5,
                "items": [{"type": "input_text", "text": "hi"}],
                "error": null
            })
        );
    }
}
