//! The command line: `codemode exec | serve | tools`.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

/// Code Mode for agents: run JavaScript cells that call tools, or serve them over MCP.
#[derive(Debug, Parser)]
#[command(name = "codemode", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one exec cell with the configured tools, waiting until it completes.
    Exec(ExecArgs),
    /// Serve `exec` and `wait` as an MCP server over stdio.
    Serve(ServeArgs),
    /// List the nested tools a cell sees (`ALL_TOOLS`).
    Tools(ToolsArgs),
}

/// Options every subcommand takes.
#[derive(Debug, Args)]
pub(crate) struct CommonArgs {
    /// Config file (default: ./codemode.toml, then ~/.config/codemode/config.toml).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Working directory of the tools (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
}

/// `codemode exec`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["script", "eval"])))]
pub(crate) struct ExecArgs {
    /// Config and working directory.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Yield after this many milliseconds (the exec pragma's `yield_time_ms`; also used for
    /// every `wait`).
    #[arg(long, value_name = "N")]
    pub(crate) yield_ms: Option<u64>,
    /// Output token budget of each observation (the pragma's `max_output_tokens`).
    #[arg(long, value_name = "N")]
    pub(crate) max_output_tokens: Option<u64>,
    /// Print the first observation and exit, even if the cell is still running (the cell
    /// ends with the process).
    #[arg(long)]
    pub(crate) no_wait: bool,
    /// Print one JSON object per observation.
    #[arg(long)]
    pub(crate) json: bool,
    /// JavaScript source to run instead of a file.
    #[arg(short = 'e', long = "eval", value_name = "CODE")]
    pub(crate) eval: Option<String>,
    /// The script file, or `-` for standard input.
    #[arg(value_name = "SCRIPT.js")]
    pub(crate) script: Option<PathBuf>,
}

/// `codemode serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Config and working directory.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

/// `codemode tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Config and working directory.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Print a JSON array instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}
