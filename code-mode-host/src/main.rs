//! `code-mode-host`: serves code-mode sessions over stdio (length-prefixed JSON, see
//! bridge/PROTOCOL.md), running every cell in a fresh V8 isolate. Stdout is the wire:
//! nothing else writes to it; logs go to stderr.
//!
//! Not here: protocol logic (codemode-bridge) or cell logic (codemode-host's library).

use std::os::fd::AsFd;
use std::sync::Arc;

use anyhow::Context as _;
use codemode_host::{V8Engine, V8EngineOptions};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_env("CODEMODE_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .init();
    let engine = V8Engine::new(V8EngineOptions::default()).context("starting V8")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let (reader, writer) = stdio();
        codemode_bridge::serve(Arc::new(engine), reader, writer)
            .await
            .context("serving the code-mode protocol on stdio")
    })
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

/// Stdin and stdout as non-blocking pipes when they are pipes (the runtime spawns the host
/// that way): `tokio::io::stdin/stdout` hand every read and write to a blocking thread, which
/// costs a thread switch per frame. Anything else (a file, a terminal) falls back to them.
fn stdio() -> (Reader, Writer) {
    let reader: Reader = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let writer: Writer = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (reader, writer)
}
