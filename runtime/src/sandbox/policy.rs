//! What a sandboxed command may touch: the file-system mode (read-only, workspace-write with
//! writable roots, danger-full-access), network on/off, and paths it may not even read.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file-system dimension of the sandbox (serialized like Codex's `SandboxPolicy`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read everything, write nothing.
    ReadOnly,
    /// Write only under the cwd, `writable_roots`, `$TMPDIR` and `/tmp`; protected config
    /// folders (`.git`, `.codex`, `.agents`, `.codemode`) inside them stay read-only.
    WorkspaceWrite {
        /// Extra writable folders (absolute).
        #[serde(default)]
        writable_roots: Vec<PathBuf>,
        /// Leave `$TMPDIR` out of the writable roots.
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        /// Leave `/tmp` out of the writable roots.
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
    /// No file-system restriction.
    DangerFullAccess,
}

/// The full sandbox policy of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// File-system mode.
    pub mode: SandboxMode,
    /// Whether sandboxed commands may use the network.
    #[serde(default)]
    pub network_access: bool,
    /// Paths (files or folders) sandboxed commands may not read. Their presence also forbids
    /// running anything unsandboxed.
    #[serde(default)]
    pub deny_read: Vec<PathBuf>,
}

/// Per-call override requested by the model (`sandbox_permissions` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// Run with the session policy.
    #[default]
    UseDefault,
    /// Run with extra permissions (treated as an escalation request).
    WithAdditionalPermissions,
    /// Run without the sandbox (asks the user).
    RequireEscalated,
}

impl SandboxPermissions {
    /// Whether the call asks for more than the session policy.
    pub fn requests_override(self) -> bool {
        !matches!(self, Self::UseDefault)
    }
}

/// A folder a sandboxed command may write, minus its protected subpaths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRoot {
    /// The folder.
    pub root: PathBuf,
    /// Existing subpaths that stay read-only.
    pub read_only_subpaths: Vec<PathBuf>,
}

/// Folder names inside a writable root that stay read-only (VCS metadata and agent config).
const PROTECTED_NAMES: [&str; 4] = [".git", ".codex", ".agents", ".codemode"];

impl SandboxPolicy {
    /// Workspace-write on the cwd, network off (the default).
    pub fn workspace_write() -> Self {
        Self {
            mode: SandboxMode::WorkspaceWrite {
                writable_roots: Vec::new(),
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            },
            network_access: false,
            deny_read: Vec::new(),
        }
    }

    /// Read-only, network off.
    pub fn read_only() -> Self {
        Self {
            mode: SandboxMode::ReadOnly,
            network_access: false,
            deny_read: Vec::new(),
        }
    }

    /// No file-system restriction, network on.
    pub fn danger_full_access() -> Self {
        Self {
            mode: SandboxMode::DangerFullAccess,
            network_access: true,
            deny_read: Vec::new(),
        }
    }

    /// Whether the file system is restricted at all.
    pub fn is_fs_restricted(&self) -> bool {
        !matches!(self.mode, SandboxMode::DangerFullAccess)
    }

    /// Whether running without the sandbox is ever allowed (no deny-read entries).
    pub fn unsandboxed_execution_allowed(&self) -> bool {
        self.deny_read.is_empty()
    }

    /// Whether `path` may be read: false when it is (or lies under) a `deny_read` entry, with
    /// symlinks of existing ancestors resolved on both sides so a link cannot sidestep a
    /// denial.
    pub fn can_read(&self, path: &Path) -> bool {
        let target = resolve_existing_prefix(path);
        !self
            .deny_read
            .iter()
            .any(|denied| target.starts_with(resolve_existing_prefix(denied)))
    }

    /// Whether commands need the platform sandbox at all.
    pub fn requires_platform_sandbox(&self) -> bool {
        !self.network_access || self.is_fs_restricted() || !self.deny_read.is_empty()
    }

    /// The writable roots for a command running in `cwd` (empty unless workspace-write).
    pub fn writable_roots(&self, cwd: &Path) -> Vec<WritableRoot> {
        let SandboxMode::WorkspaceWrite {
            writable_roots,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        } = &self.mode
        else {
            return Vec::new();
        };
        let mut roots: Vec<PathBuf> = vec![cwd.to_path_buf()];
        roots.extend(writable_roots.iter().cloned());
        if !exclude_tmpdir_env_var
            && let Some(tmpdir) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty())
        {
            roots.push(PathBuf::from(tmpdir));
        }
        if !exclude_slash_tmp {
            roots.push(PathBuf::from("/tmp"));
        }
        let mut out: Vec<WritableRoot> = Vec::new();
        for root in roots {
            let Ok(root) = root.canonicalize() else {
                continue;
            };
            if out.iter().any(|r| r.root == root) {
                continue;
            }
            let read_only_subpaths = protected_subpaths(&root);
            out.push(WritableRoot {
                root,
                read_only_subpaths,
            });
        }
        out
    }

    /// Whether the sandbox lets a process in `cwd` write `path` (symlinks of existing
    /// ancestors resolved, so a link out of the workspace does not count as inside).
    pub fn can_write(&self, path: &Path, cwd: &Path) -> bool {
        match self.mode {
            SandboxMode::DangerFullAccess => true,
            SandboxMode::ReadOnly => false,
            SandboxMode::WorkspaceWrite { .. } => {
                let target = resolve_existing_prefix(path);
                self.writable_roots(cwd).iter().any(|root| {
                    target.starts_with(&root.root)
                        && !root
                            .read_only_subpaths
                            .iter()
                            .any(|ro| target.starts_with(ro))
                })
            }
        }
    }
}

fn protected_subpaths(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in PROTECTED_NAMES {
        let path = root.join(name);
        if path.symlink_metadata().is_err() {
            continue;
        }
        // A `.git` file points at the real git dir (worktrees, submodules): protect it too.
        if name == ".git"
            && path.is_file()
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Some(dir) = text.trim().strip_prefix("gitdir:")
            && let Ok(dir) = root.join(dir.trim()).canonicalize()
        {
            out.push(dir);
        }
        out.push(path);
    }
    out
}

/// Lexically normalizes `path`, then canonicalizes its longest existing ancestor.
pub(crate) fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other.as_os_str()),
        }
    }
    let mut existing = normal.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return normal,
        }
    }
}
