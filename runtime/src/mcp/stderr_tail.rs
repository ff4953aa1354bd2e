//! A bounded buffer of the last lines a server wrote to stderr, for startup and crash reports.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::watch;

/// Lines kept.
const MAX_LINES: usize = 40;
/// Bytes kept per line.
const MAX_LINE_BYTES: usize = 512;

/// How long a failure report waits for a dying child's last stderr lines.
const SETTLE_TIMEOUT: Duration = Duration::from_millis(500);

/// The tail of one child's stderr; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Becomes `true` when the reader hit EOF (the child closed stderr, usually by exiting).
    eof: watch::Receiver<bool>,
    eof_sender: Arc<watch::Sender<bool>>,
}

impl Default for StderrTail {
    fn default() -> Self {
        let (sender, eof) = watch::channel(false);
        Self {
            lines: Arc::default(),
            eof,
            eof_sender: Arc::new(sender),
        }
    }
}

impl StderrTail {
    /// Reads `stderr` line by line until EOF on a background task, logging each line.
    pub(crate) fn capture(
        &self,
        server: Arc<str>,
        stderr: impl AsyncRead + Unpin + Send + 'static,
    ) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        tracing::debug!(server = %server, "stderr: {line}");
                        tail.push(line);
                    }
                    Ok(None) => break,
                    Err(error) => {
                        tracing::debug!(server = %server, %error, "stopped reading stderr");
                        break;
                    }
                }
            }
            tail.eof_sender.send_replace(true);
        });
    }

    fn push(&self, mut line: String) {
        if line.len() > MAX_LINE_BYTES {
            let mut cut = MAX_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if lines.len() == MAX_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines joined with `\n` (empty when the child wrote nothing).
    pub(crate) fn text(&self) -> String {
        let lines = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `text` after giving a child that is going away a moment to finish writing stderr, so
    /// that a failure report carries the child's last words.
    pub(crate) async fn settled_text(&self) -> String {
        let mut eof = self.eof.clone();
        let _ = tokio::time::timeout(SETTLE_TIMEOUT, eof.wait_for(|done| *done)).await;
        self.text()
    }
}
