//! The one door through which commands (add, dream, forget, remember) write memory files,
//! so every team write passes the secret guard, and where each scope keeps its machine-local
//! state.

use std::fs;
use std::path::PathBuf;

use crate::domain::scope::ScopeKind;
use crate::domain::store;

use super::guard::{self, TeamWriter};
use super::{OpError, Project};

/// The folder where a scope keeps its machine-local state (`meta.json`, `consolidation.lock`,
/// `usage.json`, baselines), created when missing.
pub fn state_dir(project: &Project, scope: ScopeKind) -> Result<PathBuf, OpError> {
    let dir = project.layout.state_dir(scope).ok_or_else(|| {
        OpError::Usage(format!(
            "the {scope} scope lives in a git repository — run this inside your project's work tree (or pass -C DIR)"
        ))
    })?;
    fs::create_dir_all(&dir).map_err(|e| OpError::io(&dir, e))?;
    Ok(dir)
}

/// The name a scope's state files start with: its memory folder's name (`memory`, `memories`,
/// `team-memory`), so that the state of two scopes sharing a folder never collides.
pub fn state_prefix(project: &Project, scope: ScopeKind) -> Result<String, OpError> {
    let dir = project.scope_dir(scope)?;
    Ok(dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| scope.as_str().to_string()))
}

/// Writes a memory file (path relative to the scope folder) atomically, after the scope's
/// safety check. A team write holding a detected secret (not allowed by `teammem:allow` or the
/// team's `.secretsignore`) is refused with [`OpError::Refused`], whose fix fits `writer`, and
/// nothing is written.
pub fn write_memory(
    project: &Project,
    scope: ScopeKind,
    writer: TeamWriter,
    rel: &str,
    text: &str,
) -> Result<PathBuf, OpError> {
    let dir = project.check_scope_safe(scope)?;
    if scope == ScopeKind::Team {
        guard::refuse_in_team(project, writer, rel, text)?;
    }
    let path = dir.join(rel);
    store::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// Removes a memory file (path relative to the scope folder), and its type folder when that is
/// left empty.
pub fn remove_memory(project: &Project, scope: ScopeKind, rel: &str) -> Result<(), OpError> {
    let dir = project.check_scope_safe(scope)?;
    let path = dir.join(rel);
    fs::remove_file(&path).map_err(|e| OpError::io(&path, e))?;
    if let Some(parent) = path.parent() {
        if parent != dir {
            // Only succeeds when empty, which is the point.
            let _ = fs::remove_dir(parent);
        }
    }
    Ok(())
}
