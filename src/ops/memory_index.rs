//! Regenerating and checking each scope's `MEMORY.md`.

use std::path::PathBuf;

use serde::Serialize;

use crate::domain::gate;
use crate::domain::memory::Invalid;
use crate::domain::scope::{INDEX_FILE, ScopeKind};
use crate::domain::secrets;
use crate::domain::store;

use super::{OpError, Project};

/// The state of one scope's index.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryIndexState {
    /// The scope.
    pub scope: ScopeKind,
    /// The index file.
    pub path: PathBuf,
    /// Whether the file on disk differs from what the memories give (before any write).
    pub stale: bool,
    /// Whether it was written now.
    pub written: bool,
    /// A unified diff from the file on disk to the expected index, when stale.
    pub diff: Option<String>,
    /// Files left out of the index because they are not valid memories.
    pub invalid: Vec<Invalid>,
}

/// Compares a scope's index with its memories; with `write`, regenerates it when stale.
pub fn index(
    project: &Project,
    scope: ScopeKind,
    write: bool,
) -> Result<MemoryIndexState, OpError> {
    let dir = project.check_scope_safe(scope)?;
    let shown = project.shown_prefix(scope);
    let policy = super::guard::index_policy(project, scope);
    let (expected, mut invalid) = match scope {
        ScopeKind::Team => {
            let (entries, invalid) = store::load_index_entries(&dir, &shown)?;
            (gate::team_index_md(entries, policy.as_ref()), invalid)
        }
        _ => {
            let (entries, invalid) = store::load_dated_entries(&dir, &shown)?;
            (gate::dated_index_md(entries, policy.as_ref()), invalid)
        }
    };
    for problem in &mut invalid {
        problem.path = gate::redact_path(&problem.path);
        problem.message = gate::redact_path(&problem.message);
    }
    let path = dir.join(INDEX_FILE);
    let is_regular = std::fs::symlink_metadata(&path)
        .map(|m| m.is_file())
        .unwrap_or(false);
    let current = if is_regular {
        std::fs::read_to_string(&path).unwrap_or_default()
    } else {
        String::new()
    };
    let missing_dir = !dir.exists();
    let stale = !missing_dir && (!is_regular || current != expected);
    let diff = stale
        .then(|| {
            similar::TextDiff::from_lines(&current, &expected)
                .unified_diff()
                .header(&format!("a/{INDEX_FILE}"), &format!("b/{INDEX_FILE}"))
                .to_string()
        })
        // The file on disk may be a teammate's, holding what the gate keeps out.
        .map(|d| secrets::redact_text(&d));
    let written = if write && stale {
        store::write_if_changed(&path, expected.as_bytes())?
    } else {
        false
    };
    Ok(MemoryIndexState {
        scope,
        path,
        stale,
        written,
        diff,
        invalid,
    })
}
