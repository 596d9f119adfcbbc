//! Memories nobody used for a while (`teammem stale`), as Codex's retention window sees them:
//! unused for N days since they were last read (MCP) or cited, or since their creation when
//! never used (being surfaced unasked by `prompt-context` is shown, but is not a use); and
//! beside them, memories naming a path that no longer holds at HEAD, however recently used.

use std::collections::HashMap;

use serde::Serialize;

use crate::domain::recall::usage::{self, DAY_SECS};
use crate::domain::scope::ScopeKind;
use crate::git::cli_repo::CliRepo;
use crate::git::history;
use crate::git::remote::Deadline;

use super::cite::load_usage;
use super::recall::GIT_HISTORY_BUDGET;
use super::{OpError, Project, references};

/// A memory unused for at least the window, or naming a path that no longer holds.
#[derive(Debug, Clone, Serialize)]
pub struct StaleMemory {
    /// Its scope.
    pub scope: ScopeKind,
    /// Its id.
    pub id: String,
    /// Its title.
    pub name: String,
    /// Whole days since `since`.
    pub days_unused: i64,
    /// The time counted from, seconds since the Unix epoch.
    pub since: i64,
    /// What `since` is: `last-usage`, `first-commit` or `file-time`.
    pub since_what: &'static str,
    /// Times cited.
    pub usage_count: u64,
    /// Times read or found by an agent (MCP).
    pub read_count: u64,
    /// Times surfaced to a model unasked (`prompt-context`).
    pub surfaced_count: u64,
    /// When it was last surfaced, seconds since the Unix epoch.
    pub last_surfaced: Option<i64>,
    /// Whether it is unused for at least the window (else it is listed for its references).
    pub unused: bool,
    /// Each reference that no longer holds: `names src/old.rs, removed in 1a2b3c4 by Alice on
    /// 2026-11-02`.
    pub broken_references: Vec<String>,
}

/// When each memory of a scope was created: the commit that first added it for files git
/// tracks (a clone resets mtimes), else the file's modification time.
pub fn creation_times(
    project: &Project,
    scope: ScopeKind,
    rels: &[String],
) -> Result<HashMap<String, (i64, &'static str)>, OpError> {
    let dir = project.scope_dir(scope)?;
    let mut out = HashMap::new();
    if let Some(root) = project.repo.as_ref().map(|r| r.workdir.clone()) {
        if let Ok(inside) = dir.strip_prefix(&root) {
            let prefix = inside.to_string_lossy().replace('\\', "/");
            let full: Vec<String> = rels.iter().map(|r| format!("{prefix}/{r}")).collect();
            let paths = project.repo_paths()?;
            let added = match CliRepo::needing_git(paths) {
                Some(cli) => {
                    let deadline = Deadline::after(GIT_HISTORY_BUDGET);
                    cli.first_additions(&full, &history::file::common_dir(&full), &deadline)?
                }
                None => history::file::first_additions(&crate::git::repo::open(paths)?, &full)?,
            };
            for (rel, path) in rels.iter().zip(&full) {
                if let Some(&t) = added.get(path) {
                    out.insert(rel.clone(), (t, "first-commit"));
                }
            }
        }
    }
    for rel in rels {
        if out.contains_key(rel) {
            continue;
        }
        let path = dir.join(rel);
        let time = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| OpError::io(&path, e))?;
        let secs = time
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        out.insert(rel.clone(), (secs, "file-time"));
    }
    Ok(out)
}

/// The memories of `scopes` unused for at least `days` days at `now`, oldest first.
pub fn stale(
    project: &Project,
    scopes: &[ScopeKind],
    days: u32,
    now: i64,
) -> Result<Vec<StaleMemory>, OpError> {
    let window = i64::from(days) * DAY_SECS;
    let mut out = Vec::new();
    for &scope in scopes {
        let loaded = project.load(scope)?;
        let book = load_usage(project, scope);
        let rels: Vec<String> = loaded.memories.iter().map(|m| m.rel.clone()).collect();
        let never_used: Vec<String> = rels
            .iter()
            .filter(|r| book.get(r).last_used().is_none())
            .cloned()
            .collect();
        let created = creation_times(project, scope, &never_used)?;
        let texts: Vec<String> = loaded
            .memories
            .iter()
            .map(|m| references::memory_text(&m.file))
            .collect();
        let pairs: Vec<(ScopeKind, &str)> = texts.iter().map(|t| (scope, t.as_str())).collect();
        let broken = references::check_memories(project, &pairs)?;
        for (m, refs) in loaded.memories.iter().zip(broken) {
            let u = book.get(&m.rel);
            let (since, since_what) = match u.last_used() {
                Some(t) => (t, "last-usage"),
                None => match created.get(&m.rel) {
                    Some(&(t, what)) => (t, what),
                    None => continue,
                },
            };
            let unused = now - since >= window;
            let broken_references: Vec<String> = refs.broken.iter().map(|b| b.describe()).collect();
            if unused || !broken_references.is_empty() {
                out.push(StaleMemory {
                    scope,
                    id: m.rel.clone(),
                    name: m.file.name.clone(),
                    days_unused: usage::days_between(since, now),
                    since,
                    since_what,
                    usage_count: u.usage_count,
                    read_count: u.read_count,
                    surfaced_count: u.surfaced_count,
                    last_surfaced: u.last_surfaced,
                    unused,
                    broken_references,
                });
            }
        }
    }
    out.sort_by(|a, b| a.since.cmp(&b.since).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}
