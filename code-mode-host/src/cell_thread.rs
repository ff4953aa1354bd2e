//! [`CellThread`]: a thread that owns one isolate and serves exactly one cell with it.
//!
//! # States
//! Preparing (creating the isolate and context) → ready (blocked until assigned a cell) →
//! running the cell → exited. A thread whose handle is dropped before it is assigned exits
//! without running anything, disposing its unused isolate.
//!
//! # Guarantees
//! - One isolate per thread, one cell per isolate: nothing is ever reused.
//! - Commands (including `Terminate`) may be sent as soon as the handle exists, even while
//!   the isolate is still being made; a terminate that arrives before the cell runs ends it
//!   as terminated without running any of its JavaScript.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::time::Duration;

use codemode_bridge::{CellChannels, CellEvent, CellStart};

use crate::HostError;
use crate::cell::{CellShared, CellSink, PreparedIsolate};

/// Stack size of a cell thread. V8 sets its own JS stack limit well below this, so deep
/// recursion is a `RangeError`, never a native stack overflow.
const CELL_STACK_BYTES: usize = 8 << 20;

/// One cell's start, handed to its thread.
struct Assignment {
    start: CellStart,
    events: tokio::sync::mpsc::UnboundedSender<CellEvent>,
    /// Dropped when the cell is over and its isolate disposed.
    finished: Sender<()>,
}

/// Tells when a cell thread has finished its cell (Result sent, isolate disposed).
pub(crate) struct CellFinished(Receiver<()>);

impl CellFinished {
    /// Blocks until the cell has finished, or at most `limit`.
    pub(crate) fn wait(self, limit: Duration) {
        let _ = self.0.recv_timeout(limit);
    }
}

/// The handle of a cell thread that has not been given its cell yet.
pub(crate) struct CellThread {
    name: String,
    assign: Sender<Assignment>,
    commands: Sender<codemode_bridge::CellCommand>,
    shared: Arc<CellShared>,
}

impl std::fmt::Debug for CellThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CellThread")
            .field("name", &self.name)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl CellThread {
    /// Spawns a thread that (after `after`, if given, so a cell that just started is not
    /// slowed down by it) creates its isolate with a `heap_limit_mib` heap, then calls
    /// `on_ready` with its own handle (from the new thread) and waits for its cell.
    /// `on_ready` returns the handle back when nobody wants it, and the thread exits.
    pub(crate) fn spawn(
        name: String,
        snapshot: Option<&'static [u8]>,
        heap_limit_mib: u64,
        after: Option<(CellFinished, Duration)>,
        on_ready: impl FnOnce(CellThread) -> Option<CellThread> + Send + 'static,
    ) -> Result<(), HostError> {
        let (handle, assignments, commands) = Self::handle(name.clone());
        let shared = Arc::clone(&handle.shared);
        std::thread::Builder::new()
            .name(name)
            .stack_size(CELL_STACK_BYTES)
            .spawn(move || {
                if let Some((finished, limit)) = after {
                    finished.wait(limit);
                }
                let prepared = PreparedIsolate::new(snapshot, heap_limit_mib, shared, commands);
                if let Some(unwanted) = on_ready(handle) {
                    drop(unwanted);
                    return;
                }
                serve(prepared, &assignments);
            })
            .map(|_| ())
            .map_err(HostError::SpawnThread)
    }

    /// Spawns a thread that creates its isolate and runs `start` at once: the path of a
    /// cell that found no suitable warm isolate.
    pub(crate) fn spawn_for(
        name: String,
        snapshot: Option<&'static [u8]>,
        start: CellStart,
    ) -> Result<CellChannels, HostError> {
        let (handle, assignments, commands) = Self::handle(name.clone());
        let shared = Arc::clone(&handle.shared);
        let heap_limit_mib = start.limits.heap_limit_mib;
        let (channels, _finished) = handle.assign(start);
        std::thread::Builder::new()
            .name(name)
            .stack_size(CELL_STACK_BYTES)
            .spawn(move || {
                serve(
                    PreparedIsolate::new(snapshot, heap_limit_mib, shared, commands),
                    &assignments,
                )
            })
            .map_err(HostError::SpawnThread)?;
        Ok(channels)
    }

    fn handle(
        name: String,
    ) -> (
        CellThread,
        Receiver<Assignment>,
        Receiver<codemode_bridge::CellCommand>,
    ) {
        let (assign, assignments) = std::sync::mpsc::channel();
        let (commands, commands_rx) = std::sync::mpsc::channel();
        let handle = CellThread {
            name,
            assign,
            commands,
            shared: Arc::new(CellShared::default()),
        };
        (handle, assignments, commands_rx)
    }

    /// The thread's name (`cell-<id>` or `cell-warm-<n>`).
    #[cfg(test)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Gives the thread its cell and returns the cell's channels.
    pub(crate) fn assign(self, start: CellStart) -> (CellChannels, CellFinished) {
        let (events_tx, events_rx) = tokio::sync::mpsc::unbounded_channel();
        let (finished_tx, finished_rx) = std::sync::mpsc::channel();
        let CellThread {
            assign,
            commands,
            shared,
            ..
        } = self;
        // If the thread is already gone (it cannot be, it waits for this), the events
        // channel closes without a Result and the cell actor reports the loss.
        let _ = assign.send(Assignment {
            start,
            events: events_tx,
            finished: finished_tx,
        });
        let channels = CellChannels {
            events: events_rx,
            commands: Arc::new(CellSink::new(commands, shared)),
        };
        (channels, CellFinished(finished_rx))
    }
}

/// Waits for the one assignment and runs it; exits without one when the handle is dropped.
fn serve(prepared: PreparedIsolate, assignments: &Receiver<Assignment>) {
    if let Ok(Assignment {
        start,
        events,
        finished,
    }) = assignments.recv()
    {
        prepared.run(start, events);
        drop(finished);
    }
}
