//! Verification (every hunk matched against the files, new contents computed in memory) and
//! the apply step that only runs once verification succeeded.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::parser::{Hunk, Patch, UpdateChunk};
use super::seek::seek_sequence;

/// One file operation, verified and ready to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Create or overwrite `path`.
    Add {
        /// Absolute, lexically normalized path.
        path: PathBuf,
        /// Path as written in the patch (for the summary).
        display: String,
        /// New contents.
        content: String,
    },
    /// Remove `path`.
    Delete {
        /// Absolute path.
        path: PathBuf,
        /// Path as written in the patch.
        display: String,
    },
    /// Rewrite `path` (and move it to `move_to` if set).
    Update {
        /// Absolute path.
        path: PathBuf,
        /// Path as written in the patch.
        display: String,
        /// Absolute destination and its display form.
        move_to: Option<(PathBuf, String)>,
        /// The full new contents.
        new_content: String,
    },
}

/// A patch whose hunks all matched; applying it writes exactly these changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedPatch {
    /// Changes in patch order.
    pub changes: Vec<FileChange>,
}

/// Why a patch does not apply to the files as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The patch has no hunks.
    #[error("No files were modified.")]
    EmptyPatch,
    /// A file to update could not be read.
    #[error("Failed to read file to update {path}: {error}")]
    ReadUpdate {
        /// The file.
        path: PathBuf,
        /// The I/O error text.
        error: String,
    },
    /// A file to delete could not be read.
    #[error("Failed to read file to delete {path}: {error}")]
    ReadDelete {
        /// The file.
        path: PathBuf,
        /// The I/O error text.
        error: String,
    },
    /// The `@@ ctx` line of a chunk is not in the file.
    #[error("Failed to find context '{context}' in {path}")]
    ContextNotFound {
        /// The context text.
        context: String,
        /// The file.
        path: PathBuf,
    },
    /// The old lines of a chunk are not in the file.
    #[error("Failed to find expected lines in {path}:\n{lines}")]
    LinesNotFound {
        /// The file.
        path: PathBuf,
        /// The expected lines, joined by `\n`.
        lines: String,
    },
}

/// A write that failed after verification (earlier changes stay applied).
#[derive(Debug, thiserror::Error)]
#[error("Failed to {action} {path}: {source}")]
pub struct ApplyError {
    /// What was being done (`write`, `delete`, `create directories for`).
    pub action: &'static str,
    /// The file.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

/// Resolves `path` against `cwd` and removes `.` / `..` without touching the filesystem.
pub fn resolve_path(cwd: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Checks every hunk against the files under `cwd` and computes the new contents. Later hunks
/// see the effect of earlier hunks on the same file.
pub fn verify_patch(patch: &Patch, cwd: &Path) -> Result<VerifiedPatch, VerifyError> {
    if patch.hunks.is_empty() {
        return Err(VerifyError::EmptyPatch);
    }
    // The state of files as the patch has left them so far; `None` means deleted.
    let mut overlay: HashMap<PathBuf, Option<String>> = HashMap::new();
    let read = |overlay: &HashMap<PathBuf, Option<String>>, path: &Path| match overlay.get(path) {
        Some(Some(content)) => Ok(content.clone()),
        Some(None) => Err(std::io::Error::from(std::io::ErrorKind::NotFound).to_string()),
        None => std::fs::read_to_string(path).map_err(|e| e.to_string()),
    };
    let mut changes = Vec::with_capacity(patch.hunks.len());
    for hunk in &patch.hunks {
        let display = hunk.path().to_string_lossy().into_owned();
        let path = resolve_path(cwd, hunk.path());
        match hunk {
            Hunk::AddFile { contents, .. } => {
                overlay.insert(path.clone(), Some(contents.clone()));
                changes.push(FileChange::Add {
                    path,
                    display,
                    content: contents.clone(),
                });
            }
            Hunk::DeleteFile { .. } => {
                read(&overlay, &path).map_err(|error| VerifyError::ReadDelete {
                    path: path.clone(),
                    error,
                })?;
                overlay.insert(path.clone(), None);
                changes.push(FileChange::Delete { path, display });
            }
            Hunk::UpdateFile {
                move_path, chunks, ..
            } => {
                let original = read(&overlay, &path).map_err(|error| VerifyError::ReadUpdate {
                    path: path.clone(),
                    error,
                })?;
                let new_content = apply_chunks(&original, chunks, &path)?;
                let move_to = move_path
                    .as_ref()
                    .map(|dest| (resolve_path(cwd, dest), dest.to_string_lossy().into_owned()));
                match &move_to {
                    Some((dest, _)) => {
                        overlay.insert(path.clone(), None);
                        overlay.insert(dest.clone(), Some(new_content.clone()));
                    }
                    None => {
                        overlay.insert(path.clone(), Some(new_content.clone()));
                    }
                }
                changes.push(FileChange::Update {
                    path,
                    display,
                    move_to,
                    new_content,
                });
            }
        }
    }
    Ok(VerifiedPatch { changes })
}

/// Computes the new file text from `original` and the chunks of one update hunk.
fn apply_chunks(
    original: &str,
    chunks: &[UpdateChunk],
    path: &Path,
) -> Result<String, VerifyError> {
    // CRLF is kept only when every newline in the file is CRLF; mixed files are left as-is.
    let newline_count = original.matches('\n').count();
    let crlf = newline_count > 0 && original.matches("\r\n").count() == newline_count;
    let mut lines: Vec<String> = if crlf {
        original.split("\r\n").map(str::to_owned).collect()
    } else {
        original.split('\n').map(str::to_owned).collect()
    };
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }

    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.change_context {
            let found = seek_sequence(&lines, std::slice::from_ref(context), cursor, false)
                .ok_or_else(|| VerifyError::ContextNotFound {
                    context: context.clone(),
                    path: path.to_path_buf(),
                })?;
            cursor = found + 1;
        }
        if chunk.old_lines.is_empty() {
            // A pure addition goes right after its `@@` context line when it has one,
            // otherwise at the end of the file.
            let at = if chunk.change_context.is_some() {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, chunk.new_lines.clone()));
            continue;
        }
        let mut pattern: &[String] = &chunk.old_lines;
        let mut new_lines: &[String] = &chunk.new_lines;
        let mut found = seek_sequence(&lines, pattern, cursor, chunk.is_end_of_file);
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            // A trailing empty context line usually stands for the file's final newline.
            pattern = &pattern[..pattern.len() - 1];
            if new_lines.last().is_some_and(String::is_empty) {
                new_lines = &new_lines[..new_lines.len() - 1];
            }
            found = seek_sequence(&lines, pattern, cursor, chunk.is_end_of_file);
        }
        let Some(at) = found else {
            return Err(VerifyError::LinesNotFound {
                path: path.to_path_buf(),
                lines: chunk.old_lines.join("\n"),
            });
        };
        replacements.push((at, pattern.len(), new_lines.to_vec()));
        cursor = at + pattern.len();
    }

    replacements.sort_by_key(|(at, _, _)| *at);
    for (at, old_len, new_lines) in replacements.into_iter().rev() {
        lines.splice(at..at + old_len, new_lines);
    }
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(newline);
    text.push_str(newline);
    Ok(text)
}

impl VerifiedPatch {
    /// Every path the patch writes or removes, move destinations included.
    pub fn touched_paths(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for change in &self.changes {
            match change {
                FileChange::Add { path, .. } | FileChange::Delete { path, .. } => {
                    paths.push(path.clone())
                }
                FileChange::Update { path, move_to, .. } => {
                    paths.push(path.clone());
                    if let Some((dest, _)) = move_to {
                        paths.push(dest.clone());
                    }
                }
            }
        }
        paths
    }

    /// Writes the changes in order and returns the model-visible summary. Not transactional: a
    /// failure leaves the earlier changes in place.
    pub fn apply(&self) -> Result<String, ApplyError> {
        for change in &self.changes {
            match change {
                FileChange::Add { path, content, .. } => write_file(path, content)?,
                FileChange::Delete { path, .. } => {
                    std::fs::remove_file(path).map_err(|source| ApplyError {
                        action: "delete",
                        path: path.clone(),
                        source,
                    })?
                }
                FileChange::Update {
                    path,
                    move_to,
                    new_content,
                    ..
                } => match move_to {
                    Some((dest, _)) => {
                        write_file(dest, new_content)?;
                        if dest != path {
                            std::fs::remove_file(path).map_err(|source| ApplyError {
                                action: "delete",
                                path: path.clone(),
                                source,
                            })?;
                        }
                    }
                    None => write_file(path, new_content)?,
                },
            }
        }
        Ok(self.summary())
    }

    /// `Success. Updated the following files:` then A, M and D lines, in that order.
    pub fn summary(&self) -> String {
        let mut added = Vec::new();
        let mut modified = Vec::new();
        let mut deleted = Vec::new();
        for change in &self.changes {
            match change {
                FileChange::Add { display, .. } => added.push(display),
                FileChange::Delete { display, .. } => deleted.push(display),
                FileChange::Update {
                    display, move_to, ..
                } => modified.push(move_to.as_ref().map_or(display, |(_, d)| d)),
            }
        }
        let mut out = String::from("Success. Updated the following files:\n");
        for (tag, paths) in [("A", added), ("M", modified), ("D", deleted)] {
            for path in paths {
                out.push_str(&format!("{tag} {path}\n"));
            }
        }
        out
    }
}

fn write_file(path: &Path, content: &str) -> Result<(), ApplyError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ApplyError {
            action: "create directories for",
            path: path.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(path, content).map_err(|source| ApplyError {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}
