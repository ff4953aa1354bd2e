//! From command-line options to a running `Session`: config discovery, the cell backend,
//! and who answers approvals.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use codemode_bridge::CellEngine;
use codemode_host::{V8Engine, V8EngineOptions};
use codemode_runtime::approval::{AskForApproval, TerminalApprover};
use codemode_runtime::config::Config;
use codemode_runtime::session::{CellBackend, HOST_PROGRAM_NAME, Session, SessionOptions};

use crate::args::CommonArgs;
use crate::output;

/// A usage or configuration error: the process exits with status 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Which subcommand the session is for; decides defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `codemode exec`: approval `on-request` by default, asked on the terminal.
    Exec,
    /// `codemode serve`: approval `never` by default (stdin is the MCP channel).
    Serve,
    /// `codemode tools`: no cell ever runs.
    Tools,
}

/// The tools' working directory: `--cwd` or the current directory, made absolute.
pub(crate) fn working_dir(common: &CommonArgs) -> anyhow::Result<PathBuf> {
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let cwd = match &common.cwd {
        Some(dir) => current.join(dir),
        None => current,
    };
    if !cwd.is_dir() {
        return Err(UsageError(format!("--cwd {} is not a directory", cwd.display())).into());
    }
    Ok(cwd)
}

/// Loads the config for `common` (usage error on any config problem).
pub(crate) fn load_config(common: &CommonArgs, cwd: &std::path::Path) -> anyhow::Result<Config> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    Config::discover(common.config.as_deref(), cwd, home.as_deref())
        .map_err(|error| UsageError(error.to_string()).into())
}

/// Session options for `mode`: config sections, the cell backend and the approver.
pub(crate) fn session_options(common: &CommonArgs, mode: Mode) -> anyhow::Result<SessionOptions> {
    let cwd = working_dir(common)?;
    let config = load_config(common, &cwd)?;
    let backend = match mode {
        // Listing tools never starts a cell, so neither V8 nor a host is needed.
        Mode::Tools => CellBackend::HostProcess {
            program: PathBuf::from(HOST_PROGRAM_NAME),
        },
        Mode::Exec | Mode::Serve => {
            let (backend, warning) = config.cell_backend(in_process_engine)?;
            if let Some(warning) = warning {
                output::warn(&warning);
            }
            backend
        }
    };
    let default_approval = match mode {
        Mode::Exec | Mode::Tools => AskForApproval::OnRequest,
        Mode::Serve => AskForApproval::Never,
    };
    let mut options = config.session_options(cwd, backend, default_approval);
    if mode == Mode::Serve {
        // An MCP client sees only exec and wait, so exec's description documents every
        // nested tool.
        options.code_mode.code_mode_only = true;
    }
    if options.approval_policy != AskForApproval::Never {
        if mode == Mode::Exec && std::io::stdin().is_terminal() {
            options.approver = Arc::new(TerminalApprover::new());
        } else {
            // Nobody can answer: never ask, let failures reach the script.
            options.approval_policy = AskForApproval::Never;
        }
    }
    Ok(options)
}

/// Starts the session for `mode`.
pub(crate) async fn start_session(common: &CommonArgs, mode: Mode) -> anyhow::Result<Session> {
    let options = session_options(common, mode)?;
    // MCP servers that fail to start are logged by the session and leave their tools out.
    Session::start(options)
        .await
        .map_err(|error| UsageError(error.to_string()).into())
}

fn in_process_engine() -> anyhow::Result<Arc<dyn CellEngine>> {
    let engine = V8Engine::new(V8EngineOptions::default()).context("cannot start V8")?;
    Ok(Arc::new(engine))
}
