//! `code-mode-host`: serves code-mode sessions over stdio (length-prefixed JSON, see
//! bridge/PROTOCOL.md), running every cell in a fresh V8 isolate. Stdout is the wire:
//! nothing else writes to it; logs go to stderr.
//!
//! Not here: protocol logic (codemode-bridge) or cell logic (codemode-host's library).

use std::sync::Arc;

use anyhow::Context as _;
use codemode_host::{V8Engine, V8EngineOptions};
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
        codemode_bridge::serve(Arc::new(engine), tokio::io::stdin(), tokio::io::stdout())
            .await
            .context("serving the code-mode protocol on stdio")
    })
}
