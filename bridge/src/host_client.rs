//! The runtime side of the framed protocol: [`HostClient`] (one connection to a
//! `code-mode-host`, spawned or over any byte stream) and [`RemoteSession`] (a
//! [`CodeModeSession`] opened on it whose delegate calls are served by the runtime's
//! [`SessionDelegate`]).
//!
//! # States
//! Handshaking → connected → exited (EOF, I/O error or protocol error from the host).
//!
//! # Guarantees
//! - Operations in flight when the host exits fail with [`BridgeError::HostExited`]; none hangs.
//! - A cell that was open when its host exited answers its next `wait`/`terminate` with a
//!   `Result` carrying [`HOST_EXITED_CELL_LOST`], then `AlreadyClosed`; the delegate's
//!   `cell_closed` runs for it when the exit is noticed.
//! - Delegate requests run in their own tasks; `delegate/cancel` cancels the tool's token.
//!
//! # Termination
//! Dropping the last handle of a client closes its writer (the host sees EOF and shuts its
//! sessions down) and kills a spawned host process.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{
    BridgeError, CAPABILITY_STORE_COMMIT, CellId, ClientMessage, CodeModeSession, DelegateCall,
    DelegateReply, ErrorCode, ExecuteRequest, FrameReader, FrameWriter, HOST_EXITED_CELL_LOST,
    HostMessage, Operation, OperationValue, PROTOCOL_VERSION, RequestId, RuntimeResponse,
    SessionDelegate, SessionId, WaitOutcome, WireResult,
};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection to one host. Cheap to clone; the connection closes with the last clone.
#[derive(Clone)]
pub struct HostClient {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    shared: Arc<Shared>,
    /// The spawned process, killed when the client is dropped.
    _child: Option<tokio::process::Child>,
    /// Its pid, to notice a dead host before the reader task has seen the pipe close.
    pid: Option<u32>,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        lock(&self.shared.outbound).take();
    }
}

struct PendingOperation {
    tx: mpsc::UnboundedSender<HostMessage>,
    /// Set for `session/execute`: the session whose cell `execution/started` announces.
    execute_session: Option<Arc<SessionState>>,
}

struct Shared {
    outbound: Mutex<Option<mpsc::UnboundedSender<ClientMessage>>>,
    next_id: AtomicU64,
    /// `None` once the host exited: new operations fail at once.
    pending: Mutex<Option<HashMap<RequestId, PendingOperation>>>,
    sessions: Mutex<HashMap<SessionId, Arc<SessionState>>>,
    delegate_tasks: Mutex<HashMap<RequestId, DelegateTask>>,
    exited: CancellationToken,
}

struct DelegateTask {
    cancel: CancellationToken,
    abort: tokio::task::AbortHandle,
    is_tool: bool,
}

/// The client's view of one session: its delegate and which of its cells are open.
struct SessionState {
    session_id: SessionId,
    delegate: Arc<dyn SessionDelegate>,
    cells: Mutex<CellTracker>,
}

#[derive(Default)]
struct CellTracker {
    open: HashSet<CellId>,
    /// Open when the host exited; their next observation reports the loss.
    lost: HashSet<CellId>,
    closed: HashSet<CellId>,
}

impl SessionState {
    fn mark_closed(&self, cell_id: &CellId) {
        let mut cells = lock(&self.cells);
        cells.open.remove(cell_id);
        cells.closed.insert(cell_id.clone());
    }

    fn mark_lost(&self) {
        let lost: Vec<CellId> = {
            let mut cells = lock(&self.cells);
            let open: Vec<CellId> = cells.open.drain().collect();
            cells.lost.extend(open.iter().cloned());
            open
        };
        for cell_id in lost {
            self.delegate.cell_closed(cell_id);
        }
    }

    fn knows(&self, cell_id: &CellId) -> bool {
        let cells = lock(&self.cells);
        cells.open.contains(cell_id)
            || cells.lost.contains(cell_id)
            || cells.closed.contains(cell_id)
    }

    /// The outcome of observing `cell_id` after the host exited.
    fn after_exit(&self, cell_id: CellId) -> WaitOutcome {
        let mut cells = lock(&self.cells);
        if cells.lost.remove(&cell_id) || cells.open.remove(&cell_id) {
            cells.closed.insert(cell_id.clone());
            return WaitOutcome::Live(RuntimeResponse::Result {
                cell_id,
                content_items: Vec::new(),
                error_text: Some(HOST_EXITED_CELL_LOST.to_owned()),
                abandoned_tool_calls: 0,
            });
        }
        if cells.closed.contains(&cell_id) {
            return WaitOutcome::AlreadyClosed(cell_id);
        }
        WaitOutcome::Missing(cell_id)
    }
}

impl HostClient {
    /// Spawns `program args…` with piped stdin/stdout (stderr inherited) and connects to it.
    pub async fn spawn(program: &Path, args: &[OsString]) -> Result<Self, BridgeError> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| BridgeError::HostSpawnFailed {
                program: program.display().to_string(),
                source,
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(BridgeError::HostSpawnFailed {
                program: program.display().to_string(),
                source: std::io::Error::other("child stdio was not piped"),
            });
        };
        Self::connect_inner(stdout, stdin, Some(child)).await
    }

    /// Performs the handshake over `reader`/`writer` (for example one end of a
    /// `tokio::io::duplex` pair served by [`crate::serve`]).
    pub async fn connect<R, W>(reader: R, writer: W) -> Result<Self, BridgeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Self::connect_inner(reader, writer, None).await
    }

    async fn connect_inner<R, W>(
        reader: R,
        writer: W,
        child: Option<tokio::process::Child>,
    ) -> Result<Self, BridgeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(FrameWriter::new(writer), rx));
        let mut reader = FrameReader::new(reader);
        let _ = tx.send(ClientMessage::Hello {
            supported_versions: vec![PROTOCOL_VERSION.to_owned()],
            required_capabilities: vec![CAPABILITY_STORE_COMMIT.to_owned()],
            optional_capabilities: Vec::new(),
        });
        match reader.read_message::<HostMessage>().await? {
            Some(HostMessage::Ready { .. }) => {}
            Some(HostMessage::Rejected { reason }) => {
                return Err(BridgeError::HandshakeFailed(reason.to_string()));
            }
            Some(other) => {
                return Err(BridgeError::UnexpectedMessage {
                    expected: "connection/ready",
                    got: describe(&other),
                });
            }
            None => return Err(BridgeError::HostExited),
        }
        let shared = Arc::new(Shared {
            outbound: Mutex::new(Some(tx)),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Some(HashMap::new())),
            sessions: Mutex::default(),
            delegate_tasks: Mutex::default(),
            exited: CancellationToken::new(),
        });
        tokio::spawn(read_loop(reader, Arc::clone(&shared)));
        let pid = child.as_ref().and_then(tokio::process::Child::id);
        Ok(Self {
            inner: Arc::new(ClientInner {
                shared,
                _child: child,
                pid,
            }),
        })
    }

    /// True once the host's connection ended.
    pub fn has_exited(&self) -> bool {
        self.inner.shared.exited.is_cancelled() || self.inner.pid.is_some_and(process_is_dead)
    }

    /// Resolves when the host's connection ends.
    pub async fn exited(&self) {
        self.inner.shared.exited.cancelled().await;
    }

    /// Opens a session with a client-chosen id; its cells reach back through `delegate`.
    pub async fn open_session(
        &self,
        session_id: SessionId,
        delegate: Arc<dyn SessionDelegate>,
    ) -> Result<RemoteSession, BridgeError> {
        let state = Arc::new(SessionState {
            session_id: session_id.clone(),
            delegate,
            cells: Mutex::default(),
        });
        let reused = {
            let mut sessions = lock(&self.inner.shared.sessions);
            let reused = sessions.contains_key(&session_id);
            if !reused {
                sessions.insert(session_id.clone(), Arc::clone(&state));
            }
            reused
        };
        if reused {
            return Err(BridgeError::SessionReused(session_id));
        }
        let result = async {
            let mut rx = self.call(
                Operation::Open {
                    session_id: session_id.clone(),
                },
                None,
            )?;
            match next_value(&mut rx, &session_id).await? {
                OperationValue::SessionReady { .. } => Ok(()),
                other => Err(unexpected("session/ready", &other)),
            }
        }
        .await;
        if let Err(error) = result {
            lock(&self.inner.shared.sessions).remove(&session_id);
            return Err(error);
        }
        Ok(RemoteSession {
            client: self.clone(),
            state,
        })
    }

    fn call(
        &self,
        operation: Operation,
        execute_session: Option<Arc<SessionState>>,
    ) -> Result<mpsc::UnboundedReceiver<HostMessage>, BridgeError> {
        let shared = &self.inner.shared;
        let id = RequestId(shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = mpsc::unbounded_channel();
        {
            let mut pending = lock(&shared.pending);
            let pending = pending.as_mut().ok_or(BridgeError::HostExited)?;
            pending.insert(
                id,
                PendingOperation {
                    tx,
                    execute_session,
                },
            );
        }
        let sent = lock(&shared.outbound).as_ref().is_some_and(|out| {
            out.send(ClientMessage::OperationRequest {
                id,
                request: operation,
            })
            .is_ok()
        });
        if !sent {
            if let Some(pending) = lock(&shared.pending).as_mut() {
                pending.remove(&id);
            }
            return Err(BridgeError::HostExited);
        }
        Ok(rx)
    }
}

fn describe(message: &HostMessage) -> String {
    serde_json::to_value(message)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "an unknown message".to_owned())
}

fn unexpected(expected: &'static str, got: &OperationValue) -> BridgeError {
    BridgeError::UnexpectedMessage {
        expected,
        got: format!("{got:?}"),
    }
}

async fn next_value(
    rx: &mut mpsc::UnboundedReceiver<HostMessage>,
    session_id: &SessionId,
) -> Result<OperationValue, BridgeError> {
    match rx.recv().await {
        Some(HostMessage::OperationResponse {
            result: WireResult::Ok { value },
            ..
        }) => Ok(value),
        Some(HostMessage::OperationResponse {
            result: WireResult::Error { message, code },
            ..
        }) => Err(ErrorCode::into_error(code, message, session_id)),
        Some(other) => Err(BridgeError::UnexpectedMessage {
            expected: "operation/response",
            got: describe(&other),
        }),
        None => Err(BridgeError::HostExited),
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: FrameWriter<W>,
    mut rx: mpsc::UnboundedReceiver<ClientMessage>,
) {
    while let Some(message) = rx.recv().await {
        if let Err(error) = writer.write_message(&message).await {
            tracing::warn!(%error, "could not write to the code-mode host");
            break;
        }
    }
    let _ = writer.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(mut reader: FrameReader<R>, shared: Arc<Shared>) {
    loop {
        let message = match reader.read_message::<HostMessage>().await {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(error) => {
                tracing::warn!(%error, "code-mode host connection failed");
                break;
            }
        };
        match message {
            HostMessage::OperationResponse { id, result } => {
                let mut pending = lock(&shared.pending);
                let Some(map) = pending.as_mut() else { break };
                let started = match &result {
                    WireResult::Ok {
                        value: OperationValue::ExecutionStarted { cell_id },
                    } => Some(cell_id.clone()),
                    _ => None,
                };
                let entry = match &started {
                    // Keep the entry for the initial response that follows.
                    Some(_) => map
                        .get(&id)
                        .map(|p| (p.tx.clone(), p.execute_session.clone())),
                    None => map.remove(&id).map(|p| (p.tx, None)),
                };
                drop(pending);
                if let Some((tx, session)) = entry {
                    if let (Some(session), Some(cell_id)) = (session, started) {
                        lock(&session.cells).open.insert(cell_id);
                    }
                    let _ = tx.send(HostMessage::OperationResponse { id, result });
                }
            }
            HostMessage::ExecuteInitialResponse { id, result } => {
                let entry = lock(&shared.pending)
                    .as_mut()
                    .and_then(|map| map.remove(&id));
                if let Some(entry) = entry {
                    let _ = entry
                        .tx
                        .send(HostMessage::ExecuteInitialResponse { id, result });
                }
            }
            HostMessage::DelegateRequest {
                id,
                session_id,
                request,
            } => {
                serve_delegate(&shared, id, &session_id, request);
            }
            HostMessage::DelegateCancel { id } => {
                if let Some(task) = lock(&shared.delegate_tasks).remove(&id) {
                    // A tool gets to wind down through its token; other requests just stop.
                    task.cancel.cancel();
                    if !task.is_tool {
                        task.abort.abort();
                    }
                }
            }
            HostMessage::CellClosed {
                session_id,
                cell_id,
            } => {
                let session = lock(&shared.sessions).get(&session_id).cloned();
                if let Some(session) = session {
                    session.mark_closed(&cell_id);
                    session.delegate.cell_closed(cell_id);
                }
            }
            other @ (HostMessage::Ready { .. } | HostMessage::Rejected { .. }) => {
                tracing::warn!(message = %describe(&other), "unexpected handshake message after the handshake");
            }
        }
    }
    // The host is gone: fail in-flight operations, stop delegate work, mark open cells lost.
    lock(&shared.pending).take();
    lock(&shared.outbound).take();
    for (_, task) in lock(&shared.delegate_tasks).drain() {
        task.cancel.cancel();
        task.abort.abort();
    }
    let sessions: Vec<Arc<SessionState>> = lock(&shared.sessions).values().cloned().collect();
    for session in sessions {
        session.mark_lost();
    }
    shared.exited.cancel();
}

fn serve_delegate(
    shared: &Arc<Shared>,
    id: RequestId,
    session_id: &SessionId,
    request: DelegateCall,
) {
    let session = lock(&shared.sessions).get(session_id).cloned();
    let respond = {
        let shared = Arc::clone(shared);
        move |result: WireResult<DelegateReply>| {
            lock(&shared.delegate_tasks).remove(&id);
            if let Some(out) = lock(&shared.outbound).as_ref() {
                let _ = out.send(ClientMessage::DelegateResponse { id, result });
            }
        }
    };
    let Some(session) = session else {
        respond(WireResult::from_error(&BridgeError::UnknownSession(
            session_id.clone(),
        )));
        return;
    };
    let cancel = CancellationToken::new();
    let is_tool = matches!(request, DelegateCall::ToolInvoke { .. });
    let token = cancel.clone();
    // Hold the registry lock while spawning so a fast task cannot finish before it is listed.
    let mut tasks = lock(&shared.delegate_tasks);
    let task = tokio::spawn(async move {
        let delegate = &session.delegate;
        let reply = match request {
            DelegateCall::ToolInvoke { invocation } => {
                match delegate.invoke_tool(invocation, token).await {
                    Ok(value) => DelegateReply::ToolResult { value },
                    Err(message) => DelegateReply::ToolError { message },
                }
            }
            DelegateCall::NotificationSend {
                call_id,
                cell_id,
                text,
            } => {
                delegate.notify(cell_id, call_id, text).await;
                DelegateReply::NotificationDelivered
            }
            DelegateCall::StoreCommit { cell_id, writes } => {
                delegate.commit_store(cell_id, writes).await;
                DelegateReply::StoreCommitted
            }
        };
        respond(WireResult::Ok { value: reply });
    });
    tasks.insert(
        id,
        DelegateTask {
            cancel,
            abort: task.abort_handle(),
            is_tool,
        },
    );
}

/// A [`CodeModeSession`] opened on a host connection.
#[derive(Clone)]
pub struct RemoteSession {
    client: HostClient,
    state: Arc<SessionState>,
}

impl RemoteSession {
    /// The session's id on its host.
    pub fn session_id(&self) -> &SessionId {
        &self.state.session_id
    }

    /// The connection this session lives on.
    pub fn client(&self) -> &HostClient {
        &self.client
    }

    /// True if `cell_id` was started by this session (open, lost or closed).
    pub fn knows_cell(&self, cell_id: &CellId) -> bool {
        self.state.knows(cell_id)
    }

    async fn observe(
        &self,
        operation: Operation,
        cell_id: CellId,
    ) -> Result<WaitOutcome, BridgeError> {
        if self.client.has_exited() {
            return Ok(self.state.after_exit(cell_id));
        }
        let mut rx = match self.client.call(operation, None) {
            Ok(rx) => rx,
            Err(BridgeError::HostExited) => return Ok(self.state.after_exit(cell_id)),
            Err(error) => return Err(error),
        };
        match next_value(&mut rx, &self.state.session_id).await? {
            OperationValue::WaitCompleted { outcome } => Ok(outcome),
            other => Err(unexpected("wait/completed", &other)),
        }
    }
}

impl CodeModeSession for RemoteSession {
    fn execute(&self, req: ExecuteRequest) -> BoxFuture<'_, Result<RuntimeResponse, BridgeError>> {
        async move {
            let session_id = self.state.session_id.clone();
            let operation = Operation::Execute {
                session_id: session_id.clone(),
                request: req,
            };
            let mut rx = self.client.call(operation, Some(Arc::clone(&self.state)))?;
            match next_value(&mut rx, &session_id).await? {
                OperationValue::ExecutionStarted { .. } => {}
                other => return Err(unexpected("execution/started", &other)),
            }
            match rx.recv().await {
                Some(HostMessage::ExecuteInitialResponse { result, .. }) => Ok(result),
                Some(other) => Err(BridgeError::UnexpectedMessage {
                    expected: "execute/initialResponse",
                    got: describe(&other),
                }),
                None => Err(BridgeError::HostExited),
            }
        }
        .boxed()
    }

    fn wait(
        &self,
        cell_id: CellId,
        yield_time_ms: u64,
    ) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        let operation = Operation::Wait {
            session_id: self.state.session_id.clone(),
            cell_id: cell_id.clone(),
            yield_time_ms,
        };
        self.observe(operation, cell_id).boxed()
    }

    fn terminate(&self, cell_id: CellId) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        let operation = Operation::Terminate {
            session_id: self.state.session_id.clone(),
            cell_id: cell_id.clone(),
        };
        self.observe(operation, cell_id).boxed()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        async move {
            let session_id = self.state.session_id.clone();
            if let Ok(mut rx) = self.client.call(
                Operation::Shutdown {
                    session_id: session_id.clone(),
                },
                None,
            ) && let Err(error) = next_value(&mut rx, &session_id).await
            {
                tracing::debug!(%error, "code-mode session shutdown did not complete");
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests;

/// Whether the child `pid` has died (gone, or a zombie not yet reaped). A killed host is seen
/// here at once, while the reader task may notice the closed pipe only later under load; the
/// next `execute` then starts a fresh host instead of failing on the dead one.
fn process_is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|close| stat.get(close + 2..close + 3))
            .is_some_and(|state| state == "Z" || state == "X"),
        // Without procfs there is nothing to learn here; the reader task decides.
        Err(error) => {
            error.kind() == std::io::ErrorKind::NotFound
                && std::path::Path::new("/proc/self").exists()
        }
    }
}
