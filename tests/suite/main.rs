//! The codemode integration suite: one binary, so V8 links once. Modules by area.
#![allow(clippy::print_stdout, clippy::print_stderr, missing_docs)]

mod cells;
mod cli;
mod e2e;
mod limits;
mod mcp;
