//! The freeform patch grammar: `*** Begin Patch` … `*** End Patch` with Add/Delete/Update
//! hunks, parsed leniently (trimmed markers, optional heredoc wrapper, first `@@` optional).

use std::path::PathBuf;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const CONTEXT_MARKER: &str = "@@";
const CONTEXT_MARKER_WITH_TEXT: &str = "@@ ";

/// A parsed (not yet verified) patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The hunks in patch order.
    pub hunks: Vec<Hunk>,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// Create (or overwrite) a file.
    AddFile {
        /// Path as written in the patch.
        path: PathBuf,
        /// Full new contents (every `+` line plus `\n`).
        contents: String,
    },
    /// Remove a file.
    DeleteFile {
        /// Path as written in the patch.
        path: PathBuf,
    },
    /// Edit a file in place, optionally renaming it.
    UpdateFile {
        /// Path as written in the patch.
        path: PathBuf,
        /// `*** Move to:` destination.
        move_path: Option<PathBuf>,
        /// The `@@` chunks in order.
        chunks: Vec<UpdateChunk>,
    },
}

impl Hunk {
    /// The path the hunk names first (the source for moves).
    pub fn path(&self) -> &PathBuf {
        match self {
            Self::AddFile { path, .. }
            | Self::DeleteFile { path }
            | Self::UpdateFile { path, .. } => path,
        }
    }
}

/// One `@@` chunk of an update hunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UpdateChunk {
    /// The text after `@@ `, a line to seek before the old lines.
    pub change_context: Option<String>,
    /// Context and removed lines, in order.
    pub old_lines: Vec<String>,
    /// Context and added lines, in order.
    pub new_lines: Vec<String>,
    /// The chunk ended with `*** End of File`: match against the end of the file.
    pub is_end_of_file: bool,
}

/// Why a patch text is not a patch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The boundary markers are wrong.
    #[error("invalid patch: {0}")]
    InvalidPatch(String),
    /// A hunk is malformed.
    #[error("invalid hunk at line {line_number}, {message}")]
    InvalidHunk {
        /// What is wrong.
        message: String,
        /// 1-based line in the patch text.
        line_number: usize,
    },
}

/// Parses a patch text.
pub fn parse_patch(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = text.trim().lines().collect();
    let lines = strip_boundaries(&lines)?;
    let mut hunks = Vec::new();
    let mut remaining = lines;
    // The first hunk line is line 2 of the patch (after `*** Begin Patch`).
    let mut line_number = 2;
    while !remaining.is_empty() {
        let (hunk, consumed) = parse_one_hunk(remaining, line_number)?;
        hunks.push(hunk);
        line_number += consumed;
        remaining = &remaining[consumed..];
    }
    Ok(Patch { hunks })
}

/// Checks the begin/end markers (lenient: surrounding whitespace, heredoc wrapper) and returns
/// the lines between them.
fn strip_boundaries<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], ParseError> {
    match check_boundaries(lines) {
        Ok(inner) => Ok(inner),
        Err(original_error) => {
            // Models sometimes pass the heredoc wrapper along with the patch body.
            let first = lines.first().map(|l| l.trim());
            let is_heredoc_start = matches!(first, Some("<<EOF" | "<<'EOF'" | "<<\"EOF\""));
            let is_heredoc_end = lines.last().is_some_and(|l| l.trim_end().ends_with("EOF"));
            if lines.len() >= 4 && is_heredoc_start && is_heredoc_end {
                check_boundaries(&lines[1..lines.len() - 1])
            } else {
                Err(original_error)
            }
        }
    }
}

fn check_boundaries<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], ParseError> {
    let first = lines.first().map(|l| l.trim());
    let last = lines.last().map(|l| l.trim());
    if first != Some(BEGIN_PATCH) {
        return Err(ParseError::InvalidPatch(
            "The first line of the patch must be '*** Begin Patch'".to_owned(),
        ));
    }
    if lines.len() < 2 || last != Some(END_PATCH) {
        return Err(ParseError::InvalidPatch(
            "The last line of the patch must be '*** End Patch'".to_owned(),
        ));
    }
    Ok(&lines[1..lines.len() - 1])
}

fn parse_one_hunk(lines: &[&str], line_number: usize) -> Result<(Hunk, usize), ParseError> {
    let header = lines[0].trim();
    if let Some(path) = header.strip_prefix(ADD_FILE) {
        let mut contents = String::new();
        let mut consumed = 1;
        for line in &lines[1..] {
            let Some(added) = line.strip_prefix('+') else {
                break;
            };
            contents.push_str(added);
            contents.push('\n');
            consumed += 1;
        }
        return Ok((
            Hunk::AddFile {
                path: PathBuf::from(path),
                contents,
            },
            consumed,
        ));
    }
    if let Some(path) = header.strip_prefix(DELETE_FILE) {
        return Ok((
            Hunk::DeleteFile {
                path: PathBuf::from(path),
            },
            1,
        ));
    }
    if let Some(path) = header.strip_prefix(UPDATE_FILE) {
        let mut consumed = 1;
        let move_path = lines
            .get(1)
            .and_then(|l| l.strip_prefix(MOVE_TO))
            .map(PathBuf::from);
        if move_path.is_some() {
            consumed += 1;
        }
        let mut chunks = Vec::new();
        while consumed < lines.len() {
            let line = lines[consumed];
            if line.trim().is_empty() {
                consumed += 1;
                continue;
            }
            if line.starts_with('*') {
                break;
            }
            let (chunk, used) = parse_update_chunk(
                &lines[consumed..],
                line_number + consumed,
                chunks.is_empty(),
            )?;
            chunks.push(chunk);
            consumed += used;
        }
        if chunks.is_empty() {
            return Err(ParseError::InvalidHunk {
                message: format!("Update file hunk for path '{path}' is empty"),
                line_number,
            });
        }
        return Ok((
            Hunk::UpdateFile {
                path: PathBuf::from(path),
                move_path,
                chunks,
            },
            consumed,
        ));
    }
    Err(ParseError::InvalidHunk {
        message: format!(
            "'{header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', \
             '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
        line_number,
    })
}

fn parse_update_chunk(
    lines: &[&str],
    line_number: usize,
    allow_missing_context: bool,
) -> Result<(UpdateChunk, usize), ParseError> {
    let no_lines = || ParseError::InvalidHunk {
        message: "Update hunk does not contain any lines".to_owned(),
        line_number,
    };
    let first = lines.first().ok_or_else(no_lines)?;
    let (change_context, start) = if *first == CONTEXT_MARKER {
        (None, 1)
    } else if let Some(ctx) = first.strip_prefix(CONTEXT_MARKER_WITH_TEXT) {
        (Some(ctx.to_owned()), 1)
    } else if allow_missing_context {
        (None, 0)
    } else {
        return Err(ParseError::InvalidHunk {
            message: "Expected update hunk to start with a @@ context marker".to_owned(),
            line_number,
        });
    };
    if start >= lines.len() {
        return Err(ParseError::InvalidHunk {
            message: "Update hunk does not contain any lines".to_owned(),
            line_number,
        });
    }
    let mut chunk = UpdateChunk {
        change_context,
        ..UpdateChunk::default()
    };
    let mut consumed = start;
    for (parsed, line) in lines[start..].iter().enumerate() {
        if *line == END_OF_FILE {
            if parsed == 0 {
                return Err(ParseError::InvalidHunk {
                    message: "Update hunk does not contain any lines".to_owned(),
                    line_number: line_number + 1,
                });
            }
            chunk.is_end_of_file = true;
            consumed += 1;
            break;
        }
        match line.chars().next() {
            None => {
                // A fully empty line inside a chunk is an empty context line.
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(' ') => {
                chunk.old_lines.push(line[1..].to_owned());
                chunk.new_lines.push(line[1..].to_owned());
            }
            Some('+') => chunk.new_lines.push(line[1..].to_owned()),
            Some('-') => chunk.old_lines.push(line[1..].to_owned()),
            Some(_) => {
                if parsed == 0 {
                    return Err(ParseError::InvalidHunk {
                        message: format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should \
                             start with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                        line_number: line_number + consumed,
                    });
                }
                break;
            }
        }
        consumed += 1;
    }
    Ok((chunk, consumed))
}
