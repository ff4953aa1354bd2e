//! Everything the CLI prints: observations (text or `--json` lines), `notify()` messages, the
//! progress spinner, tool listings, warnings and errors. The only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::time::Duration;

use codemode_bridge::ToolDefinition;
use codemode_runtime::code_mode::ExecNotification;
use codemode_runtime::tool::FunctionCallOutputContentItem;
use serde_json::json;

use crate::observation::Observation;

/// Frames of the progress spinner.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// Longest image URL prefix shown in text mode.
const IMAGE_URL_PREVIEW: usize = 48;

/// Prints a warning on stderr.
pub(crate) fn warn(message: &str) {
    eprintln!("codemode: warning: {message}");
}

/// Prints an error on stderr.
pub(crate) fn error(message: &str) {
    eprintln!("codemode: error: {message}");
}

/// Prints the observations of one `codemode exec` run.
#[derive(Debug)]
pub(crate) struct Printer {
    json: bool,
    spinner: bool,
    spinner_visible: bool,
    frame: usize,
}

impl Printer {
    /// A printer for `--json` or text; the spinner shows only for text on a terminal.
    pub(crate) fn new(json: bool) -> Self {
        Self {
            json,
            spinner: !json && std::io::stderr().is_terminal(),
            spinner_visible: false,
            frame: 0,
        }
    }

    /// Whether progress ticks are worth scheduling.
    pub(crate) fn wants_spinner(&self) -> bool {
        self.spinner
    }

    /// Prints one observation: the model-visible text, or one JSON line.
    pub(crate) fn observation(&mut self, observation: &Observation) {
        self.clear_spinner();
        let mut stdout = std::io::stdout().lock();
        if self.json {
            let line = serde_json::to_string(observation).unwrap_or_default();
            let _ = writeln!(stdout, "{line}");
        } else {
            for item in &observation.model_items {
                let _ = match item {
                    FunctionCallOutputContentItem::InputText { text } if text.ends_with('\n') => {
                        write!(stdout, "{text}")
                    }
                    FunctionCallOutputContentItem::InputText { text } => {
                        writeln!(stdout, "{text}")
                    }
                    FunctionCallOutputContentItem::InputImage { image_url, detail } => {
                        let preview: String = image_url.chars().take(IMAGE_URL_PREVIEW).collect();
                        let detail = detail.as_deref().unwrap_or("auto");
                        writeln!(
                            stdout,
                            "[image, detail {detail}, {} bytes: {preview}…]",
                            image_url.len()
                        )
                    }
                };
            }
        }
        let _ = stdout.flush();
    }

    /// Prints one `notify()` message as it arrives.
    pub(crate) fn notification(&mut self, notification: &ExecNotification) {
        self.clear_spinner();
        if self.json {
            let line = json!({
                "notification": notification.text,
                "cell_id": notification.cell_id.to_string(),
            });
            println!("{line}");
        } else {
            println!("[notify] {}", notification.text);
        }
    }

    /// Redraws the spinner line (stderr, terminals only).
    pub(crate) fn tick(&mut self, cell_id: Option<&str>, elapsed: Duration) {
        if !self.spinner {
            return;
        }
        self.frame = (self.frame + 1) % SPINNER.len();
        let what = cell_id.map_or_else(|| "running".to_owned(), |id| format!("cell {id} running"));
        eprint!(
            "\r\x1b[2K{} {what} {:.1}s (Ctrl-C terminates)",
            SPINNER[self.frame],
            elapsed.as_secs_f64()
        );
        let _ = std::io::stderr().flush();
        self.spinner_visible = true;
    }

    fn clear_spinner(&mut self) {
        if self.spinner_visible {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.spinner_visible = false;
        }
    }
}

/// Prints the nested tools: `tools.<name>` and the description (with its declaration).
pub(crate) fn tools_text(tools: &[ToolDefinition]) {
    let mut stdout = std::io::stdout().lock();
    for tool in tools {
        let _ = writeln!(stdout, "tools.{}", tool.name);
        for line in tool.description.lines() {
            let _ = writeln!(stdout, "  {line}");
        }
        let _ = writeln!(stdout);
    }
}

/// Prints the nested tools as one JSON array.
pub(crate) fn tools_json(tools: &[ToolDefinition]) {
    let listing: Vec<serde_json::Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "tool": tool.tool_name.to_string(),
                "kind": tool.kind,
                "description": tool.description,
                "input_schema": tool.input_schema,
                "output_schema": tool.output_schema,
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&listing).unwrap_or_default();
    println!("{text}");
}
