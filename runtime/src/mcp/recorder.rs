//! Optional NDJSON log of every JSON-RPC message exchanged with MCP servers, for protocol
//! oracles (anchors §5) and debugging.
//!
//! Each line is `{"server": <name>, "direction": "send"|"receive", "message": <JSON-RPC>}`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Serialize;

/// Environment variable naming an NDJSON file to append the message log to, used when the
/// options name none.
pub const RECORD_ENV_VAR: &str = "CODEMODE_MCP_RECORD";

/// Appends JSON-RPC messages to one NDJSON file, one whole line per message.
#[derive(Debug)]
pub struct JsonRpcRecorder {
    path: PathBuf,
    file: Mutex<File>,
}

#[derive(Serialize)]
struct Record<'a, M> {
    server: &'a str,
    direction: &'a str,
    message: &'a M,
}

impl JsonRpcRecorder {
    /// Opens (creating or appending to) `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record<M: Serialize>(&self, server: &str, direction: &str, message: &M) {
        let mut line = match serde_json::to_vec(&Record {
            server,
            direction,
            message,
        }) {
            Ok(line) => line,
            Err(error) => {
                tracing::warn!(%error, "could not serialize an MCP message for the record");
                return;
            }
        };
        line.push(b'\n');
        // One write per line under the lock keeps lines from different servers whole.
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(error) = file.write_all(&line) {
            tracing::warn!(%error, path = %self.path.display(), "could not append to the MCP record");
        }
    }
}

/// A client transport that shows every message to an optional recorder before passing it on.
pub(crate) struct RecordingTransport<T> {
    inner: T,
    server: Arc<str>,
    recorder: Option<Arc<JsonRpcRecorder>>,
}

impl<T> RecordingTransport<T> {
    pub(crate) fn new(inner: T, server: Arc<str>, recorder: Option<Arc<JsonRpcRecorder>>) -> Self {
        Self {
            inner,
            server,
            recorder,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for RecordingTransport<T> {
    type Error = T::Error;

    /// Short, because rmcp puts it into every transport error message.
    fn name() -> std::borrow::Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(recorder) = &self.recorder {
            recorder.record(&self.server, "send", &item);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let (Some(recorder), Some(message)) = (&self.recorder, &message) {
            recorder.record(&self.server, "receive", message);
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
