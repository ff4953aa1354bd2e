//! `apply_patch`: the freeform patch grammar, verification of every hunk against the files
//! before any write, the apply step with its `Success. Updated the following files:` summary,
//! recognition of `apply_patch` heredocs inside shell commands, and the tool itself.

mod grammar;
mod invocation;
mod parser;
mod seek;
mod tool;
mod verified;

pub use grammar::{APPLY_PATCH_DESCRIPTION, APPLY_PATCH_LARK_GRAMMAR};
pub use invocation::{ApplyPatchInvocation, IMPLICIT_PATCH_ERROR, classify_invocation};
pub use parser::{Hunk, ParseError, Patch, UpdateChunk, parse_patch};
pub use tool::{ApplyPatchTool, ApplyPatchToolOutput, PatchRunResult, run_patch};
pub use verified::{
    ApplyError, FileChange, VerifiedPatch, VerifyError, resolve_path, verify_patch,
};

#[cfg(test)]
mod tests;
