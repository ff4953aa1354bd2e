//! Recognizing an `apply_patch` call hidden in a command line: `["apply_patch", PATCH]` or a
//! shell script `[cd DIR &&] apply_patch <<'EOF' … EOF`, so it runs as a patch, not a shell.

use std::path::PathBuf;

/// What a command line turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyPatchInvocation {
    /// An ordinary command.
    NotApplyPatch,
    /// An apply_patch call: the patch text and the `cd` directory if any.
    Patch {
        /// The patch body.
        patch: String,
        /// The directory of a leading `cd DIR &&`, relative to the command's cwd.
        workdir: Option<PathBuf>,
    },
    /// A patch body passed without calling apply_patch.
    ImplicitPatch,
}

/// The model-visible error for a patch body run as a command.
pub const IMPLICIT_PATCH_ERROR: &str =
    "patch detected without explicit call to apply_patch. Rerun as [\"apply_patch\", \"<patch>\"]";

const PROGRAM_NAMES: [&str; 2] = ["apply_patch", "applypatch"];

/// Classifies `argv`.
pub fn classify_invocation(argv: &[String]) -> ApplyPatchInvocation {
    match argv {
        [program, patch] if PROGRAM_NAMES.contains(&program.as_str()) => {
            ApplyPatchInvocation::Patch {
                patch: patch.clone(),
                workdir: None,
            }
        }
        [single] if looks_like_patch(single) => ApplyPatchInvocation::ImplicitPatch,
        [shell, flag, script] if is_shell(shell) && (flag == "-c" || flag == "-lc") => {
            if looks_like_patch(script) {
                return ApplyPatchInvocation::ImplicitPatch;
            }
            parse_heredoc_script(script).unwrap_or(ApplyPatchInvocation::NotApplyPatch)
        }
        _ => ApplyPatchInvocation::NotApplyPatch,
    }
}

fn is_shell(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    matches!(base, "bash" | "zsh" | "sh")
}

fn looks_like_patch(text: &str) -> bool {
    text.trim_start().starts_with("*** Begin Patch")
}

/// `[cd DIR &&] apply_patch <<['"]DELIM['"]\n BODY \nDELIM` and nothing else.
fn parse_heredoc_script(script: &str) -> Option<ApplyPatchInvocation> {
    let script = script.trim();
    let (first_line, rest) = script.split_once('\n')?;
    let mut words = first_line.split_whitespace().peekable();
    let mut workdir = None;
    if words.peek() == Some(&"cd") {
        words.next();
        workdir = Some(PathBuf::from(unquote(words.next()?)?));
        if words.next()? != "&&" {
            return None;
        }
    }
    if !PROGRAM_NAMES.contains(&words.next()?) {
        return None;
    }
    let redirect = words.next()?;
    let delimiter_word = match redirect.strip_prefix("<<") {
        Some("") => words.next()?,
        Some(word) => word,
        None => return None,
    };
    if words.next().is_some() {
        return None;
    }
    let delimiter = unquote(delimiter_word.trim_start_matches('-'))?;
    let mut body = Vec::new();
    let mut lines = rest.lines();
    for line in lines.by_ref() {
        if line == delimiter {
            // Only whitespace may follow the heredoc terminator.
            if lines.any(|l| !l.trim().is_empty()) {
                return None;
            }
            return Some(ApplyPatchInvocation::Patch {
                patch: body.join("\n"),
                workdir,
            });
        }
        body.push(line);
    }
    None
}

/// Strips one level of matching quotes from a plain word; rejects words needing expansion.
fn unquote(word: &str) -> Option<String> {
    let inner = match word.as_bytes() {
        [b'\'', .., b'\''] | [b'"', .., b'"'] if word.len() >= 2 => &word[1..word.len() - 1],
        _ => word,
    };
    let plain = !inner.is_empty() && !inner.contains(['$', '`', '\'', '"', '\\', ';', '|', '&']);
    plain.then(|| inner.to_owned())
}
