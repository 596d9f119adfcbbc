//! Recording that memories were used (`teammem cite`), in machine-local state beside each
//! scope's memory folder — never in the memory files, so citing a team memory changes nothing
//! the team shares.

use std::path::PathBuf;

use serde::Serialize;

use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::domain::usage::{self, UsageBook, UseKind};

use super::catalog::{self, MemoryId};
use super::scope_write::{state_dir, state_prefix};
use super::{OpError, Project};

/// One citation recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Cited {
    /// The memory's scope.
    pub scope: ScopeKind,
    /// The memory's path in its scope (an entry id counts for its file).
    pub id: String,
    /// Times cited, this one included.
    pub usage_count: u64,
    /// When, seconds since the Unix epoch.
    pub last_usage: Option<i64>,
}

/// Where a scope's usage records live (`<state dir>/<memory folder name>-usage.json`).
pub fn usage_path(project: &Project, scope: ScopeKind) -> Option<PathBuf> {
    let dir = project.layout.state_dir(scope)?;
    let name = project.layout.memory_dir(scope)?;
    let prefix = name.file_name()?.to_string_lossy().into_owned();
    Some(dir.join(format!("{prefix}-usage.json")))
}

/// A scope's usage records; empty when none were kept yet or the file is unreadable.
pub fn load_usage(project: &Project, scope: ScopeKind) -> UsageBook {
    usage_path(project, scope)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| UsageBook::from_json(&t).ok())
        .unwrap_or_default()
}

/// Records one use of each memory named (in every scope that exists, like `show`).
pub fn cite(project: &Project, ids: &[String]) -> Result<Vec<Cited>, OpError> {
    let scopes: Vec<ScopeKind> = ScopeKind::ALL
        .into_iter()
        .filter(|s| *s == ScopeKind::User || project.repo.is_some())
        .collect();
    let mut found = Vec::new();
    for text in ids {
        let id = MemoryId::parse(text)?;
        let hit = catalog::find(project, &id, &scopes)?;
        found.push((hit.scope, hit.memory.rel));
    }
    let now = usage::now();
    let mut out = Vec::new();
    for scope in ScopeKind::ALL {
        let mine: Vec<&String> = found
            .iter()
            .filter(|(s, _)| *s == scope)
            .map(|(_, rel)| rel)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut book = load_usage(project, scope);
        for rel in mine {
            let u = book.cite(rel, now);
            out.push(Cited {
                scope,
                id: rel.clone(),
                usage_count: u.usage_count,
                last_usage: u.last_usage,
            });
        }
        let path = state_dir(project, scope)?
            .join(format!("{}-usage.json", state_prefix(project, scope)?));
        store::write_atomic(&path, book.to_json().as_bytes())?;
    }
    Ok(out)
}

/// Records one use of each memory (`scope`, path in it) through `kind`'s door, for the doors
/// an agent waits on (a prompt's hook, an MCP call): the book is replaced atomically but
/// without waiting for the disk (an fsync cost 8 ms here, a prompt's whole budget is 20), so a
/// machine crash may cost the counts. Usage is a convenience, never worth a failure: the error
/// is returned for a warning.
pub fn record_use(
    project: &Project,
    used: &[(ScopeKind, String)],
    kind: UseKind,
) -> Result<(), OpError> {
    let now = usage::now();
    for scope in ScopeKind::ALL {
        let mine: Vec<&String> = used
            .iter()
            .filter(|(s, _)| *s == scope)
            .map(|(_, rel)| rel)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut book = load_usage(project, scope);
        for rel in mine {
            book.record(rel, kind, now);
        }
        let path = state_dir(project, scope)?
            .join(format!("{}-usage.json", state_prefix(project, scope)?));
        store::write_cache(&path, book.to_json().as_bytes())?;
    }
    Ok(())
}
