//! [`HostPool`]: spawns one `code-mode-host` lazily and respawns it after it died;
//! [`PooledSession`]: a [`CodeModeSession`] that lives on the pool's current host.
//!
//! # States
//! No host → host running → host exited (the next execute spawns a new one).
//!
//! # Guarantees
//! - Spawning is serialized: concurrent executes share one new host.
//! - `wait`/`terminate` never spawn a host or recreate lost state: a cell of a dead host
//!   reports the loss once, then `AlreadyClosed` (spec §8.1).
//!
//! # Termination
//! `shutdown` shuts the current remote session down; dropping the pool and its sessions
//! closes the host's stdin and kills the process.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::{
    BridgeError, CellId, CodeModeSession, ExecuteRequest, HostClient, RemoteSession,
    RuntimeResponse, SessionDelegate, SessionId, WaitOutcome,
};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How to start the host.
#[derive(Clone, Debug)]
pub struct HostPoolOptions {
    /// The `code-mode-host` binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// Owns at most one live host process and hands out sessions on it.
pub struct HostPool {
    options: HostPoolOptions,
    current: tokio::sync::Mutex<Option<HostClient>>,
    next_session: AtomicU64,
}

impl HostPool {
    /// A pool that starts `options.program` on first use.
    pub fn new(options: HostPoolOptions) -> Arc<Self> {
        Arc::new(Self {
            options,
            current: tokio::sync::Mutex::new(None),
            next_session: AtomicU64::new(1),
        })
    }

    /// The live host, spawning one if there is none or the last one exited.
    pub async fn client(&self) -> Result<HostClient, BridgeError> {
        let mut current = self.current.lock().await;
        if let Some(client) = current.as_ref()
            && !client.has_exited()
        {
            return Ok(client.clone());
        }
        let client = HostClient::spawn(&self.options.program, &self.options.args).await?;
        *current = Some(client.clone());
        Ok(client)
    }

    /// A new logical session (`session-N`) whose cells reach back through `delegate`.
    pub fn session(self: &Arc<Self>, delegate: Arc<dyn SessionDelegate>) -> PooledSession {
        PooledSession {
            pool: Arc::clone(self),
            delegate,
            current: tokio::sync::Mutex::new(None),
            retired: Mutex::default(),
        }
    }

    fn next_session_id(&self) -> SessionId {
        SessionId::new(format!(
            "session-{}",
            self.next_session.fetch_add(1, Ordering::Relaxed)
        ))
    }
}

/// A session that re-opens itself on a fresh host when its host died.
pub struct PooledSession {
    pool: Arc<HostPool>,
    delegate: Arc<dyn SessionDelegate>,
    current: tokio::sync::Mutex<Option<RemoteSession>>,
    /// Sessions on hosts that died, kept so their cells can report the loss.
    retired: Mutex<Vec<RemoteSession>>,
}

impl PooledSession {
    async fn live_session(&self) -> Result<RemoteSession, BridgeError> {
        let mut current = self.current.lock().await;
        if let Some(session) = current.as_ref()
            && !session.client().has_exited()
        {
            return Ok(session.clone());
        }
        if let Some(dead) = current.take() {
            lock(&self.retired).push(dead);
        }
        let client = self.pool.client().await?;
        let session = client
            .open_session(self.pool.next_session_id(), Arc::clone(&self.delegate))
            .await?;
        *current = Some(session.clone());
        Ok(session)
    }

    async fn owner(&self, cell_id: &CellId) -> Option<RemoteSession> {
        if let Some(session) = self.current.lock().await.as_ref()
            && session.knows_cell(cell_id)
        {
            return Some(session.clone());
        }
        lock(&self.retired)
            .iter()
            .find(|s| s.knows_cell(cell_id))
            .cloned()
    }
}

impl CodeModeSession for PooledSession {
    fn execute(&self, req: ExecuteRequest) -> BoxFuture<'_, Result<RuntimeResponse, BridgeError>> {
        async move { self.live_session().await?.execute(req).await }.boxed()
    }

    fn wait(
        &self,
        cell_id: CellId,
        yield_time_ms: u64,
    ) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        async move {
            match self.owner(&cell_id).await {
                Some(session) => session.wait(cell_id, yield_time_ms).await,
                None => Ok(WaitOutcome::Missing(cell_id)),
            }
        }
        .boxed()
    }

    fn terminate(&self, cell_id: CellId) -> BoxFuture<'_, Result<WaitOutcome, BridgeError>> {
        async move {
            match self.owner(&cell_id).await {
                Some(session) => session.terminate(cell_id).await,
                None => Ok(WaitOutcome::Missing(cell_id)),
            }
        }
        .boxed()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        async move {
            let current = self.current.lock().await.take();
            if let Some(session) = current {
                session.shutdown().await;
            }
        }
        .boxed()
    }
}
