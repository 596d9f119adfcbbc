//! Forgetting: deleting exactly the memories named — a whole file, or one entry of a legacy
//! multi-entry file (`path:index`) — and rebuilding the indexes. Team-scope forgets are left in
//! the work tree for the next sync to commit, like any other change.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::domain::consolidate;
use crate::domain::scope::ScopeKind;
use std::path::PathBuf;

use crate::domain::store::{self, StoredMemory};

use super::catalog::{self, MemoryId};
use super::guard::TeamWriter;
use super::recall::{self, Hit};
use super::scope_write::{remove_memory, state_dir, write_memory};
use super::{OpError, Project};

/// One thing forgotten.
#[derive(Debug, Clone, Serialize)]
pub struct Forgotten {
    /// Its scope.
    pub scope: ScopeKind,
    /// The id as forgotten (`path` or `path:index`).
    pub id: String,
    /// Its title (the entry's summary for an entry).
    pub name: String,
}

/// What `forget` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ForgetReport {
    /// What was deleted (with `dry_run`: what would be).
    pub forgotten: Vec<Forgotten>,
    /// Scopes whose MEMORY.md changed.
    pub indexes_written: Vec<ScopeKind>,
    /// Nothing was deleted: the report says what would be.
    pub dry_run: bool,
    /// Where the files as they were before are kept for `teammem forget --undo`.
    pub kept_in: Vec<String>,
}

/// The folder, inside a scope's state folder, where forget keeps what it removed.
const FORGOTTEN_DIR: &str = "forgotten";
/// The list of files one forget changed, inside its batch folder.
const MANIFEST: &str = "manifest.json";

/// One file a forget changed, as `forget --undo` needs it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct ForgottenFile {
    /// Path relative to the scope folder.
    rel: String,
    /// The saved copy, relative to the batch folder.
    saved: String,
    /// SHA-256 of what forget left at `rel`; `None` when it deleted the file.
    after: Option<String>,
}

fn every_scope(project: &Project) -> Vec<ScopeKind> {
    ScopeKind::ALL
        .into_iter()
        .filter(|s| *s == ScopeKind::User || project.repo.is_some())
        .collect()
}

/// What to do to one file.
enum Cut {
    Whole,
    Entries(BTreeSet<usize>),
}

/// Deletes the memories or entries named by `ids`. Every id is resolved before anything is
/// deleted, so one bad id deletes nothing.
pub fn forget(project: &Project, ids: &[String]) -> Result<ForgetReport, OpError> {
    forget_with(project, ids, false)
}

/// [`forget`]; with `dry_run`, only resolves the ids and reports what would go. Each file
/// changed is first copied to the scope's state folder, for [`undo`].
pub fn forget_with(
    project: &Project,
    ids: &[String],
    dry_run: bool,
) -> Result<ForgetReport, OpError> {
    let scopes = every_scope(project);
    let mut plan: BTreeMap<(ScopeKind, String), (StoredMemory, Cut)> = BTreeMap::new();
    let mut report = ForgetReport {
        dry_run,
        ..ForgetReport::default()
    };
    for text in ids {
        let id = MemoryId::parse(text)?;
        let found = catalog::find(project, &id, &scopes)?;
        let key = (found.scope, found.memory.rel.clone());
        let (name, shown) = match &found.entry {
            Some(e) => (
                e.summary.clone(),
                format!("{}:{}", found.memory.rel, e.index.unwrap_or(1)),
            ),
            None => (found.memory.file.name.clone(), found.memory.rel.clone()),
        };
        let slot = plan
            .entry(key)
            .or_insert_with(|| (found.memory.clone(), Cut::Entries(BTreeSet::new())));
        match (&mut slot.1, &found.entry) {
            (Cut::Whole, _) => continue,
            (cut, None) => *cut = Cut::Whole,
            (Cut::Entries(set), Some(e)) => {
                if !set.insert(e.index.unwrap_or(1) - 1) {
                    continue;
                }
            }
        }
        report.forgotten.push(Forgotten {
            scope: found.scope,
            id: shown,
            name,
        });
    }
    if dry_run {
        return Ok(report);
    }
    let stamp = batch_stamp();
    let mut batches: BTreeMap<ScopeKind, (PathBuf, Vec<ForgottenFile>)> = BTreeMap::new();
    let mut touched = BTreeSet::new();
    for ((scope, rel), (memory, cut)) in &plan {
        let body = match cut {
            Cut::Whole => None,
            Cut::Entries(set) => consolidate::rebuild(&memory.file, &BTreeMap::new(), set),
        };
        let new_text = body.map(|body| {
            let mut file = memory.file.clone();
            file.body = body;
            file.render()
        });
        // Saved before anything is removed, so a forget is always undoable.
        let (batch, kept) = match batches.entry(*scope) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let dir = state_dir(project, *scope)?.join(FORGOTTEN_DIR).join(&stamp);
                e.insert((dir, Vec::new()))
            }
        };
        let source = project.scope_dir(*scope)?.join(rel);
        let bytes = store::read_capped(&source)?;
        let saved = format!("{}", kept.len() + 1);
        store::write_atomic(&batch.join(&saved), &bytes)?;
        kept.push(ForgottenFile {
            rel: rel.clone(),
            saved,
            after: new_text.as_deref().map(|t| sha256_hex(t.as_bytes())),
        });
        let manifest = serde_json::to_vec_pretty(&*kept)
            .map_err(|e| OpError::Usage(format!("cannot write the forget record: {e}")))?;
        store::write_atomic(&batch.join(MANIFEST), &manifest)?;
        match new_text {
            None => remove_memory(project, *scope, rel)?,
            Some(text) => {
                write_memory(project, *scope, TeamWriter::Rewrite, rel, &text)?;
            }
        }
        touched.insert(*scope);
    }
    report.kept_in = batches
        .values()
        .map(|(dir, _)| dir.display().to_string())
        .collect();
    for scope in touched {
        if project.rebuild_index(scope)?.0 {
            report.indexes_written.push(scope);
        }
    }
    Ok(report)
}

/// What `forget --undo` put back.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UndoReport {
    /// Files restored, as `scope:path`.
    pub restored: Vec<String>,
    /// Scopes whose MEMORY.md changed.
    pub indexes_written: Vec<ScopeKind>,
}

/// Puts back what the last `forget` removed (in every scope it touched), when the files are
/// still as that forget left them; a file changed since is refused, nothing is restored, and
/// the message names the saved copy.
pub fn undo(project: &Project) -> Result<UndoReport, OpError> {
    let mut latest: Option<String> = None;
    let scopes = every_scope(project);
    for &scope in &scopes {
        let Some(dir) = project.layout.state_dir(scope) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(dir.join(FORGOTTEN_DIR)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().join(MANIFEST).is_file() && latest.as_ref().is_none_or(|l| &name > l) {
                latest = Some(name);
            }
        }
    }
    let Some(stamp) = latest else {
        return Err(OpError::Usage(
            "nothing to undo: no forget is recorded for this project".into(),
        ));
    };
    let mut plan = Vec::new();
    for &scope in &scopes {
        let Some(state) = project.layout.state_dir(scope) else {
            continue;
        };
        let batch = state.join(FORGOTTEN_DIR).join(&stamp);
        let manifest = batch.join(MANIFEST);
        let Ok(text) = std::fs::read(&manifest) else {
            continue;
        };
        let kept: Vec<ForgottenFile> = serde_json::from_slice(&text).map_err(|e| {
            OpError::Usage(format!(
                "{}: cannot read the forget record: {e}",
                manifest.display()
            ))
        })?;
        let scope_dir = project.check_scope_safe(scope)?;
        for k in kept {
            let saved = batch.join(&k.saved);
            let now = std::fs::read(scope_dir.join(&k.rel)).ok();
            let unchanged = match (&k.after, &now) {
                (None, None) => true,
                (Some(after), Some(now)) => *after == sha256_hex(now),
                _ => false,
            };
            if !unchanged {
                return Err(OpError::Refused(format!(
                    "{}{} changed after it was forgotten, so nothing was restored; the version                      forget removed is in {}",
                    project.shown_prefix(scope),
                    k.rel,
                    saved.display()
                )));
            }
            plan.push((scope, batch.clone(), k.rel, saved));
        }
    }
    let mut report = UndoReport::default();
    let mut touched = BTreeSet::new();
    for (scope, _, rel, saved) in &plan {
        let bytes = store::read_capped(saved)?;
        let text = String::from_utf8_lossy(&bytes);
        write_memory(project, *scope, TeamWriter::Rewrite, rel, &text)?;
        report.restored.push(format!("{scope}:{rel}"));
        touched.insert(*scope);
    }
    for (_, batch, _, _) in &plan {
        let _ = std::fs::remove_dir_all(batch);
    }
    for scope in touched {
        if project.rebuild_index(scope)?.0 {
            report.indexes_written.push(scope);
        }
    }
    Ok(report)
}

/// A batch name that sorts by time: zero-padded milliseconds, then the process id.
fn batch_stamp() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{ms:016}-{:010}", std::process::id())
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The memories a query would forget: the best recall matches across the enabled scopes.
pub fn candidates(project: &Project, query: &str, max: usize) -> Result<Vec<Hit>, OpError> {
    Ok(recall::recall(project, &project.default_scopes(), query, max, 200)?.hits)
}
