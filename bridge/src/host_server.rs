//! The host side of the framed protocol: serves [`LocalSession`]s over a byte stream (the
//! `code-mode-host` process's stdin/stdout), forwarding each cell's delegate calls to the
//! client.
//!
//! # States
//! Handshake (first message must be `connection/hello`) → serving (operations run as tasks;
//! delegate answers are routed to the waiting cell) → closing (EOF: sessions shut down, the
//! writer drains and closes).
//!
//! # Guarantees
//! - The reader never waits on an operation or a delegate: each operation runs in its own
//!   task and every outbound message goes through one writer task.
//! - A session id is accepted once per connection, even after its session shut down.
//! - A delegate request whose cell stopped caring is followed by `delegate/cancel`.
//!
//! # Termination
//! `serve` returns after EOF (or a fatal protocol error) once every session has shut down,
//! so no cell outlives the connection.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{
    BridgeError, CAPABILITY_STORE_COMMIT, CellEngine, CellId, ClientMessage, DelegateCall,
    DelegateReply, FrameReader, FrameWriter, HostMessage, LocalSession, LocalSessionOptions,
    NestedToolCall, Operation, OperationValue, PROTOCOL_VERSION, RejectReason, RequestId,
    RuntimeResponse, SessionDelegate, SessionId, StoredValues, WireResult,
};

/// The message a cell's promise rejects with when the client went away mid-call.
const CLIENT_GONE: &str = "code-mode client disconnected";

/// Configuration of [`serve_with`].
#[derive(Clone, Debug, Default)]
pub struct HostServerOptions {
    /// Options of every session; its [`CellAdmission`] is shared by all of them.
    pub session: LocalSessionOptions,
}

/// Serves the protocol on `reader`/`writer` with default options until the client closes.
pub async fn serve<R, W>(
    engine: Arc<dyn CellEngine>,
    reader: R,
    writer: W,
) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(engine, reader, writer, HostServerOptions::default()).await
}

/// Serves the protocol on `reader`/`writer` until the client closes.
pub async fn serve_with<R, W>(
    engine: Arc<dyn CellEngine>,
    reader: R,
    writer: W,
    options: HostServerOptions,
) -> Result<(), BridgeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let outbound = Arc::new(Outbound {
        tx,
        pending: Mutex::new(Some(HashMap::new())),
        next_id: AtomicU64::new(1),
    });
    let closing = CancellationToken::new();
    let writer_task = tokio::spawn(write_loop(
        FrameWriter::new(writer),
        rx,
        Arc::clone(&outbound),
        closing.clone(),
    ));
    let mut reader = FrameReader::new(reader);

    let result = match handshake(&mut reader, &outbound).await {
        Ok(true) => {
            let connection = Arc::new(Connection {
                engine,
                options,
                outbound: Arc::clone(&outbound),
                sessions: Mutex::default(),
                used_ids: Mutex::default(),
                shutting_down: AtomicBool::new(false),
            });
            let result = read_loop(&mut reader, &connection).await;
            connection.shutting_down.store(true, Ordering::SeqCst);
            // Delegate calls fail from now on, so no cell waits on a client that is gone.
            outbound.close();
            let sessions: Vec<Arc<LocalSession>> =
                lock(&connection.sessions).drain().map(|(_, s)| s).collect();
            futures::future::join_all(
                sessions
                    .iter()
                    .map(|s| crate::CodeModeSession::shutdown(s.as_ref())),
            )
            .await;
            result
        }
        Ok(false) => Ok(()),
        Err(error) => Err(error),
    };
    outbound.close();
    closing.cancel();
    let _ = writer_task.await;
    result
}

/// Returns `Ok(false)` on EOF before any message.
async fn handshake<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
    outbound: &Outbound,
) -> Result<bool, BridgeError> {
    let reject = |reason: RejectReason| {
        let text = reason.to_string();
        outbound.send(HostMessage::Rejected { reason });
        Err(BridgeError::HandshakeFailed(text))
    };
    let hello = match reader.read_message::<ClientMessage>().await {
        Ok(None) => return Ok(false),
        Ok(Some(ClientMessage::Hello {
            supported_versions,
            required_capabilities,
            optional_capabilities,
        })) => (
            supported_versions,
            required_capabilities,
            optional_capabilities,
        ),
        Ok(Some(_)) | Err(BridgeError::InvalidMessage(_)) => {
            return reject(RejectReason::InvalidHello {
                message: "first message must be connection/hello".to_owned(),
            });
        }
        Err(error) => return Err(error),
    };
    let (versions, required, optional) = hello;
    if let Some(both) = required.iter().find(|c| optional.contains(c)) {
        return reject(RejectReason::InvalidHello {
            message: format!("capability {both} is both required and optional"),
        });
    }
    if !versions.iter().any(|v| v == PROTOCOL_VERSION) {
        return reject(RejectReason::NoCompatibleVersion {
            supported_versions: vec![PROTOCOL_VERSION.to_owned()],
        });
    }
    let capabilities = vec![CAPABILITY_STORE_COMMIT.to_owned()];
    if let Some(missing) = required.iter().find(|c| !capabilities.contains(c)) {
        return reject(RejectReason::MissingRequiredCapability {
            capability: missing.clone(),
        });
    }
    outbound.send(HostMessage::Ready {
        selected_version: PROTOCOL_VERSION.to_owned(),
        capabilities,
    });
    Ok(true)
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: &mut FrameReader<R>,
    connection: &Arc<Connection>,
) -> Result<(), BridgeError> {
    loop {
        match reader.read_message::<ClientMessage>().await? {
            None => return Ok(()),
            Some(ClientMessage::Hello { .. }) => {
                return Err(BridgeError::UnexpectedMessage {
                    expected: "an operation or delegate response",
                    got: "a second connection/hello".to_owned(),
                });
            }
            Some(ClientMessage::OperationRequest { id, request }) => {
                let connection = Arc::clone(connection);
                tokio::spawn(async move { connection.run_operation(id, request).await });
            }
            Some(ClientMessage::DelegateResponse { id, result }) => {
                // A response to a cancelled or unknown request is dropped.
                if let Some(waiter) = connection.outbound.take(id) {
                    let _ = waiter.send(result);
                }
            }
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: FrameWriter<W>,
    mut rx: mpsc::UnboundedReceiver<HostMessage>,
    outbound: Arc<Outbound>,
    closing: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            biased;
            message = rx.recv() => message,
            () = closing.cancelled() => rx.try_recv().ok(),
        };
        let Some(message) = message else { break };
        let message = match serde_json::to_vec(&message) {
            Ok(payload) if payload.len() <= writer.max_frame() => {
                if let Err(error) = writer.write_frame(&payload).await {
                    tracing::warn!(%error, "code-mode host could not write to its client");
                    break;
                }
                continue;
            }
            Ok(payload) => {
                oversized_replacement(message, payload.len(), writer.max_frame(), &outbound)
            }
            Err(error) => {
                tracing::error!(%error, "could not serialize a host message");
                None
            }
        };
        if let Some(message) = message
            && let Err(error) = writer.write_message(&message).await
        {
            tracing::warn!(%error, "code-mode host could not write to its client");
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// A message too large for one frame is replaced by one that names the limit (spec §8.3).
fn oversized_replacement(
    message: HostMessage,
    len: usize,
    max: usize,
    outbound: &Outbound,
) -> Option<HostMessage> {
    let note = format!("message of {len} bytes exceeds the {max}-byte frame limit");
    tracing::warn!("{note}");
    match message {
        HostMessage::OperationResponse { id, .. } => Some(HostMessage::OperationResponse {
            id,
            result: WireResult::Error {
                message: note,
                code: None,
            },
        }),
        HostMessage::ExecuteInitialResponse { id, result } => {
            Some(HostMessage::ExecuteInitialResponse {
                id,
                result: RuntimeResponse::Result {
                    cell_id: result.cell_id().clone(),
                    content_items: Vec::new(),
                    error_text: Some(note),
                    abandoned_tool_calls: 0,
                },
            })
        }
        HostMessage::DelegateRequest { id, .. } => {
            if let Some(waiter) = outbound.take(id) {
                let _ = waiter.send(WireResult::Error {
                    message: note,
                    code: None,
                });
            }
            None
        }
        _ => None,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Outbound messages and the delegate requests awaiting answers.
struct Outbound {
    tx: mpsc::UnboundedSender<HostMessage>,
    /// `None` once the connection is closing: new delegate calls fail at once.
    pending: Mutex<Option<HashMap<RequestId, oneshot::Sender<WireResult<DelegateReply>>>>>,
    next_id: AtomicU64,
}

impl Outbound {
    fn close(&self) {
        // Dropping the waiters fails every unanswered delegate call.
        lock(&self.pending).take();
    }

    fn take(&self, id: RequestId) -> Option<oneshot::Sender<WireResult<DelegateReply>>> {
        lock(&self.pending)
            .as_mut()
            .and_then(|pending| pending.remove(&id))
    }

    fn send(&self, message: HostMessage) {
        // Fails only after the writer stopped; the connection is closing anyway.
        let _ = self.tx.send(message);
    }

    fn start(
        self: &Arc<Self>,
        session_id: &SessionId,
        request: DelegateCall,
    ) -> (
        PendingDelegate,
        oneshot::Receiver<WireResult<DelegateReply>>,
    ) {
        let id = RequestId(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        if let Some(pending) = lock(&self.pending).as_mut() {
            pending.insert(id, tx);
            self.send(HostMessage::DelegateRequest {
                id,
                session_id: session_id.clone(),
                request,
            });
        }
        (
            PendingDelegate {
                id,
                outbound: Arc::clone(self),
                answered: false,
                cancel_sent: false,
            },
            rx,
        )
    }
}

/// Sends `delegate/cancel` when a delegate request is abandoned before its answer arrived.
struct PendingDelegate {
    id: RequestId,
    outbound: Arc<Outbound>,
    answered: bool,
    cancel_sent: bool,
}

impl PendingDelegate {
    fn cancel(&mut self) {
        if !self.cancel_sent {
            self.cancel_sent = true;
            self.outbound
                .send(HostMessage::DelegateCancel { id: self.id });
        }
    }
}

impl Drop for PendingDelegate {
    fn drop(&mut self) {
        if !self.answered && self.outbound.take(self.id).is_some() {
            self.cancel();
        }
    }
}

/// Awaits a delegate answer; `cancel` firing sends `delegate/cancel` and keeps waiting (the
/// cell actor aborts the wait after its grace).
async fn await_reply(
    mut pending: PendingDelegate,
    mut rx: oneshot::Receiver<WireResult<DelegateReply>>,
    cancel: Option<CancellationToken>,
) -> Result<DelegateReply, String> {
    let reply = match cancel {
        Some(cancel) => tokio::select! {
            reply = &mut rx => reply,
            () = cancel.cancelled() => {
                pending.cancel();
                rx.await
            }
        },
        None => rx.await,
    };
    pending.answered = true;
    match reply {
        Ok(WireResult::Ok { value }) => Ok(value),
        Ok(WireResult::Error { message, .. }) => Err(message),
        Err(_) => Err(CLIENT_GONE.to_owned()),
    }
}

/// Forwards one session's delegate calls to the client.
struct WireDelegate {
    session_id: SessionId,
    outbound: Arc<Outbound>,
}

impl SessionDelegate for WireDelegate {
    fn invoke_tool(
        &self,
        call: NestedToolCall,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Option<serde_json::Value>, String>> {
        let (pending, rx) = self.outbound.start(
            &self.session_id,
            DelegateCall::ToolInvoke { invocation: call },
        );
        async move {
            match await_reply(pending, rx, Some(cancel)).await? {
                DelegateReply::ToolResult { value } => Ok(value),
                DelegateReply::ToolError { message } => Err(message),
                other => Err(format!(
                    "unexpected delegate reply to tool/invoke: {other:?}"
                )),
            }
        }
        .boxed()
    }

    fn notify(
        &self,
        cell_id: CellId,
        exec_call_id: String,
        text: String,
    ) -> BoxFuture<'static, ()> {
        let request = DelegateCall::NotificationSend {
            call_id: exec_call_id,
            cell_id,
            text,
        };
        let (pending, rx) = self.outbound.start(&self.session_id, request);
        async move {
            if let Err(error) = await_reply(pending, rx, None).await {
                tracing::warn!(%error, "notification was not delivered");
            }
        }
        .boxed()
    }

    fn commit_store(&self, cell_id: CellId, writes: StoredValues) -> BoxFuture<'static, ()> {
        let (pending, rx) = self.outbound.start(
            &self.session_id,
            DelegateCall::StoreCommit { cell_id, writes },
        );
        async move {
            if let Err(error) = await_reply(pending, rx, None).await {
                tracing::warn!(%error, "store writes were not committed");
            }
        }
        .boxed()
    }

    fn cell_closed(&self, cell_id: CellId) {
        self.outbound.send(HostMessage::CellClosed {
            session_id: self.session_id.clone(),
            cell_id,
        });
    }
}

struct Connection {
    engine: Arc<dyn CellEngine>,
    options: HostServerOptions,
    outbound: Arc<Outbound>,
    sessions: Mutex<HashMap<SessionId, Arc<LocalSession>>>,
    used_ids: Mutex<HashSet<SessionId>>,
    shutting_down: AtomicBool,
}

impl Connection {
    fn respond(&self, id: RequestId, result: Result<OperationValue, BridgeError>) {
        let result = match result {
            Ok(value) => WireResult::Ok { value },
            Err(error) => WireResult::from_error(&error),
        };
        self.outbound
            .send(HostMessage::OperationResponse { id, result });
    }

    fn session(&self, session_id: &SessionId) -> Result<Arc<LocalSession>, BridgeError> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(BridgeError::HostShuttingDown);
        }
        lock(&self.sessions)
            .get(session_id)
            .cloned()
            .ok_or_else(|| BridgeError::UnknownSession(session_id.clone()))
    }

    async fn run_operation(&self, id: RequestId, operation: Operation) {
        use crate::CodeModeSession as _;
        let result = match operation {
            Operation::Open { session_id } => self.open(session_id),
            Operation::Execute {
                session_id,
                request,
            } => {
                let launched = self
                    .session(&session_id)
                    .and_then(|session| session.launch(request));
                match launched {
                    Ok(launched) => {
                        self.respond(
                            id,
                            Ok(OperationValue::ExecutionStarted {
                                cell_id: launched.cell_id,
                            }),
                        );
                        let result = launched.initial_response.await;
                        self.outbound
                            .send(HostMessage::ExecuteInitialResponse { id, result });
                        return;
                    }
                    Err(error) => Err(error),
                }
            }
            Operation::Wait {
                session_id,
                cell_id,
                yield_time_ms,
            } => match self.session(&session_id) {
                Ok(session) => session
                    .wait(cell_id, yield_time_ms)
                    .await
                    .map(|outcome| OperationValue::WaitCompleted { outcome }),
                Err(error) => Err(error),
            },
            Operation::Terminate {
                session_id,
                cell_id,
            } => match self.session(&session_id) {
                Ok(session) => session
                    .terminate(cell_id)
                    .await
                    .map(|outcome| OperationValue::WaitCompleted { outcome }),
                Err(error) => Err(error),
            },
            Operation::Shutdown { session_id } => match self.session(&session_id) {
                Ok(session) => {
                    lock(&self.sessions).remove(&session_id);
                    session.shutdown().await;
                    Ok(OperationValue::SessionClosed { session_id })
                }
                Err(error) => Err(error),
            },
        };
        self.respond(id, result);
    }

    fn open(&self, session_id: SessionId) -> Result<OperationValue, BridgeError> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(BridgeError::HostShuttingDown);
        }
        if !lock(&self.used_ids).insert(session_id.clone()) {
            return Err(BridgeError::SessionReused(session_id));
        }
        let delegate = Arc::new(WireDelegate {
            session_id: session_id.clone(),
            outbound: Arc::clone(&self.outbound),
        });
        let session = LocalSession::new(
            Arc::clone(&self.engine),
            delegate,
            self.options.session.clone(),
        );
        lock(&self.sessions).insert(session_id.clone(), Arc::new(session));
        Ok(OperationValue::SessionReady { session_id })
    }
}
