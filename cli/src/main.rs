//! `codemode`: run code-mode cells from the command line (`exec`), serve them to MCP clients
//! (`serve`), and list the tools a cell sees (`tools`). See `cli/README-cli.md`.

mod args;
mod exec;
mod observation;
mod output;
mod serve;
mod setup;
mod tools;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::setup::UsageError;

/// Exit status for usage and configuration errors.
const USAGE_EXIT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            output::error(&format!("cannot start the async runtime: {error}"));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Exec(args) => exec::run(args).await,
            Command::Serve(args) => serve::run(args).await,
            Command::Tools(args) => tools::run(args).await,
        }
    });
    // Cells, MCP servers and stdin readers may still hold runtime threads; do not wait.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            output::error(&format!("{error:#}"));
            if error.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(USAGE_EXIT)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
