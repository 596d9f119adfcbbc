//! Forgetting: deleting exactly the memories named — a whole file, or one entry of a legacy
//! multi-entry file (`path:index`) — and rebuilding the indexes. Team-scope forgets are left in
//! the work tree for the next sync to commit, like any other change.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::domain::consolidate;
use crate::domain::scope::ScopeKind;
use crate::domain::store::StoredMemory;

use super::catalog::{self, MemoryId};
use super::guard::TeamWriter;
use super::recall::{self, Hit};
use super::scope_write::{remove_memory, write_memory};
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
    /// What was deleted.
    pub forgotten: Vec<Forgotten>,
    /// Scopes whose MEMORY.md changed.
    pub indexes_written: Vec<ScopeKind>,
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
    let scopes = every_scope(project);
    let mut plan: BTreeMap<(ScopeKind, String), (StoredMemory, Cut)> = BTreeMap::new();
    let mut report = ForgetReport::default();
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
    let mut touched = BTreeSet::new();
    for ((scope, rel), (memory, cut)) in &plan {
        let body = match cut {
            Cut::Whole => None,
            Cut::Entries(set) => consolidate::rebuild(&memory.file, &BTreeMap::new(), set),
        };
        match body {
            None => remove_memory(project, *scope, rel)?,
            Some(body) => {
                let mut file = memory.file.clone();
                file.body = body;
                write_memory(project, *scope, TeamWriter::Rewrite, rel, &file.render())?;
            }
        }
        touched.insert(*scope);
    }
    for scope in touched {
        if project.rebuild_index(scope)?.0 {
            report.indexes_written.push(scope);
        }
    }
    Ok(report)
}

/// The memories a query would forget: the best recall matches across the enabled scopes.
pub fn candidates(project: &Project, query: &str, max: usize) -> Result<Vec<Hit>, OpError> {
    Ok(recall::recall(project, &project.default_scopes(), query, max, 200)?.hits)
}
