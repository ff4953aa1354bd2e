//! Shared helpers for the codemode integration suite.
