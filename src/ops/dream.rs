//! Dream: mechanical consolidation of a scope, without a language model.
//!
//! Within a file, entries with the same summary (without case) merge, keeping every distinct
//! line; across files, entries with the same `type:summary` merge into the first file (by path),
//! and a duplicate is removed only after its lines are written into the survivor. The index is
//! rebuilt afterwards.
//!
//! A run is gated: 24 hours and 5 sessions since the last one (kept in `meta.json` in the
//! scope's state folder; one session is one `teammem context` run, which is what an agent's
//! session-start hook calls). `--force` skips the gate. Runs are one at a time:
//! `consolidation.lock` holds the running PID, and is taken over when older than an hour or
//! when that process is gone.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::consolidate::{self, carried_lines, new_lines, summary_key};
use crate::domain::recall::usage::{self};
use crate::domain::scope::ScopeKind;
use crate::domain::store::{self, StoredMemory};
use crate::git::recovery::lock;

use super::guard::TeamWriter;
use super::scope_write::{remove_memory, state_dir, write_memory};
use super::{OpError, Project, references};

/// Hours between runs.
pub const GATE_HOURS: i64 = 24;
/// Sessions between runs.
pub const GATE_SESSIONS: u64 = 5;
/// Seconds after which a lock is stale whatever its PID.
pub const LOCK_STALE_SECS: i64 = 3600;
/// The gate's state file in a scope's state folder.
pub const META_FILE: &str = "meta.json";
/// The lock file in a scope's state folder.
pub const LOCK_FILE: &str = "consolidation.lock";

/// What a dream run did.
#[derive(Debug, Clone, Serialize)]
pub struct DreamReport {
    /// The scope.
    pub scope: ScopeKind,
    /// `done`, `gated` (too soon; see `reason`) or `locked` (another run holds the lock).
    pub status: &'static str,
    /// Why it did not run.
    pub reason: Option<String>,
    /// Entries merged away.
    pub deduped_entries: usize,
    /// Files changed or removed, by path.
    pub touched_topics: Vec<String>,
    /// Whether the scope's MEMORY.md changed.
    pub index_written: bool,
    /// With `--dry-run`: nothing was written, the counts say what one round would merge.
    pub dry_run: bool,
    /// Memories left alone because sync kept them in two versions (`teammem resolve` first):
    /// merging two contradicting versions would only hide the contradiction.
    pub skipped_conflicts: Vec<String>,
    /// Paths rewritten to the name git's rename detection maps them to, one-to-one:
    /// `project/db.md: src/old.rs -> src/new.rs`.
    pub rewritten_paths: Vec<String>,
    /// Memories naming a path that no longer holds and that dream cannot rewrite (deleted,
    /// renamed into several files, a line past the end): for a person to update or forget.
    pub broken_references: Vec<String>,
}

fn meta_path(project: &Project, scope: ScopeKind) -> Result<PathBuf, OpError> {
    Ok(state_dir(project, scope)?.join(META_FILE))
}

/// Reads `meta.json` as a JSON object (other programs' keys are kept as they are).
fn read_meta(path: &Path) -> serde_json::Map<String, serde_json::Value> {
    fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

fn write_meta(
    path: &Path,
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), OpError> {
    let mut text = serde_json::to_string_pretty(meta)
        .map_err(|e| OpError::Usage(format!("cannot write {}: {e}", path.display())))?;
    text.push('\n');
    store::write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// Counts one agent session for the gate of `scope`.
pub fn record_session(project: &Project, scope: ScopeKind) -> Result<(), OpError> {
    let path = meta_path(project, scope)?;
    let mut meta = read_meta(&path);
    let sessions = meta
        .get("sessions_since_dream")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    meta.insert("sessions_since_dream".into(), (sessions + 1).into());
    write_meta(&path, &meta)
}

/// Holds `consolidation.lock` until dropped.
struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Takes the lock, or says who holds it.
fn take_lock(path: &Path) -> Result<Result<Lock, String>, OpError> {
    for _ in 0..2 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut file) => {
                let text = format!(
                    "{{\"pid\": {}, \"started\": {}}}\n",
                    std::process::id(),
                    usage::now()
                );
                file.write_all(text.as_bytes())
                    .map_err(|e| OpError::io(path, e))?;
                return Ok(Ok(Lock {
                    path: path.to_path_buf(),
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let held = fs::read_to_string(path)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
                let pid = held
                    .as_ref()
                    .and_then(|v| v.get("pid"))
                    .and_then(|v| v.as_u64());
                let started = held
                    .as_ref()
                    .and_then(|v| v.get("started"))
                    .and_then(|v| v.as_i64())
                    .unwrap_or(0);
                // The same test as the sync lock's: a zombie or a process being killed is gone.
                let alive = pid.is_some_and(|p| lock::process_alive(p as u32));
                if alive && usage::now() - started < LOCK_STALE_SECS {
                    return Ok(Err(format!(
                        "another dream (pid {}) has run since {}",
                        pid.unwrap_or(0),
                        usage::utc_text(started)
                    )));
                }
                // Stale: its process is gone or it is over an hour old.
                let _ = fs::remove_file(path);
            }
            Err(e) => return Err(OpError::io(path, e)),
        }
    }
    Ok(Err("another dream took the lock just now".into()))
}

/// Runs dream on one scope (gate and lock included, unless `force` skips the gate); the tests'
/// shorthand for [`dream_with`] without a dry run.
#[cfg(test)]
pub fn dream(project: &Project, scope: ScopeKind, force: bool) -> Result<DreamReport, OpError> {
    dream_with(project, scope, force, false)
}

/// Runs dream on one scope, or with `dry_run` what its first round would merge, writing nothing (no memory,
/// no index, no gate state).
pub fn dream_with(
    project: &Project,
    scope: ScopeKind,
    force: bool,
    dry_run: bool,
) -> Result<DreamReport, OpError> {
    let mut report = DreamReport {
        scope,
        status: "done",
        reason: None,
        deduped_entries: 0,
        touched_topics: Vec::new(),
        index_written: false,
        dry_run,
        skipped_conflicts: Vec::new(),
        rewritten_paths: Vec::new(),
        broken_references: Vec::new(),
    };
    let meta_file = meta_path(project, scope)?;
    let meta = read_meta(&meta_file);
    let now = usage::now();
    if !force {
        let last = meta.get("last_dream").and_then(|v| v.as_i64());
        let sessions = meta
            .get("sessions_since_dream")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        let hours = last.map(|t| (now - t) / 3600);
        let time_ok = hours.is_none_or(|h| h >= GATE_HOURS);
        if !time_ok || sessions < GATE_SESSIONS {
            report.status = "gated";
            report.reason = Some(format!(
                "{}; {sessions} session{} since (needs {GATE_SESSIONS}) — or pass --force",
                match hours {
                    Some(h) => format!("last run {h} h ago (needs {GATE_HOURS} h)"),
                    None => "never run".to_string(),
                },
                if sessions == 1 { "" } else { "s" }
            ));
            return Ok(report);
        }
    }
    let lock = match take_lock(&state_dir(project, scope)?.join(LOCK_FILE))? {
        Ok(lock) => lock,
        Err(reason) => {
            report.status = "locked";
            report.reason = Some(reason);
            return Ok(report);
        }
    };

    let mut touched = BTreeSet::new();
    let run = DreamRun {
        project,
        scope,
        dry_run,
        in_conflict: conflict_pairs(project, scope)?,
    };
    report.skipped_conflicts = run.in_conflict.iter().cloned().collect();
    // A legacy file cut down to one bullet becomes a one-entry file known by its title, which
    // can make a new duplicate: repeat until nothing merges (a few rounds at most). A dry run
    // changes nothing, so one round says all it can.
    for _ in 0..if dry_run { 1 } else { 8 } {
        let merged =
            merge_within_files(&run, &mut touched)? + merge_across_files(&run, &mut touched)?;
        report.deduped_entries += merged;
        if merged == 0 {
            break;
        }
    }
    follow_renames(&run, &mut report, &mut touched)?;
    report.touched_topics = touched.into_iter().collect();
    if dry_run {
        return Ok(report);
    }
    let (written, _) = project.rebuild_index(scope)?;
    report.index_written = written;

    let mut meta = read_meta(&meta_file);
    meta.insert("last_dream".into(), now.into());
    meta.insert("sessions_since_dream".into(), 0.into());
    write_meta(&meta_file, &meta)?;
    drop(lock);
    Ok(report)
}

/// One dream run over one scope.
struct DreamRun<'a> {
    project: &'a Project,
    scope: ScopeKind,
    dry_run: bool,
    /// Conflict copies and the memories they are versions of.
    in_conflict: BTreeSet<String>,
}

impl DreamRun<'_> {
    /// The scope's memories dream may touch: every one but a conflict pair.
    fn memories(&self) -> Result<Vec<StoredMemory>, OpError> {
        let mut memories = self.project.load(self.scope)?.memories;
        memories.retain(|m| !self.in_conflict.contains(&m.rel));
        Ok(memories)
    }

    fn rewrite(&self, memory: &StoredMemory, body: String) -> Result<(), OpError> {
        if self.dry_run {
            return Ok(());
        }
        rewrite(self.project, self.scope, memory, body)
    }

    fn remove(&self, rel: &str) -> Result<(), OpError> {
        if self.dry_run {
            return Ok(());
        }
        remove_memory(self.project, self.scope, rel)
    }
}

/// The paths of every conflict copy in the scope and of the memory each is a version of.
fn conflict_pairs(project: &Project, scope: ScopeKind) -> Result<BTreeSet<String>, OpError> {
    let mut pairs = BTreeSet::new();
    for memory in project.load(scope)?.memories {
        if let Some(copy) = crate::domain::conflict::parse_copy(&memory.rel) {
            pairs.insert(copy.original);
            pairs.insert(memory.rel);
        }
    }
    Ok(pairs)
}

/// Writes `memory` back with a new body (through the team write guard in team scope).
fn rewrite(
    project: &Project,
    scope: ScopeKind,
    memory: &StoredMemory,
    body: String,
) -> Result<(), OpError> {
    let mut file = memory.file.clone();
    file.body = body;
    write_memory(
        project,
        scope,
        TeamWriter::Rewrite,
        &memory.rel,
        &file.render(),
    )?;
    Ok(())
}

/// Rewrites the paths each memory's body names that git's rename detection maps one-to-one
/// (through the gate, as every write), and lists the memories whose references still do not
/// hold for a person.
fn follow_renames(
    run: &DreamRun<'_>,
    report: &mut DreamReport,
    touched: &mut BTreeSet<String>,
) -> Result<(), OpError> {
    if run.scope == ScopeKind::User {
        return Ok(());
    }
    for memory in run.memories()? {
        if let Some((body, rewrites)) =
            references::renamed_paths(run.project, run.scope, &memory.file.body)?
        {
            run.rewrite(&memory, body)?;
            touched.insert(memory.rel.clone());
            report.rewritten_paths.extend(
                rewrites
                    .iter()
                    .map(|w| format!("{}: {} -> {}", memory.rel, w.old, w.new)),
            );
        }
    }
    // What is left, read again: a rewrite may have settled some of it.
    let memories = run.memories()?;
    let texts: Vec<String> = memories
        .iter()
        .map(|m| references::memory_text(&m.file))
        .collect();
    let pairs: Vec<(ScopeKind, &str)> = texts.iter().map(|t| (run.scope, t.as_str())).collect();
    let checked = references::check_memories(run.project, &pairs)?;
    for (memory, refs) in memories.iter().zip(checked) {
        // In a dry run the renamed paths are still there: they are listed as rewritten.
        let left: Vec<String> = refs
            .broken
            .iter()
            .filter(|b| {
                !report
                    .rewritten_paths
                    .iter()
                    .any(|w| w.starts_with(&format!("{}: {} -> ", memory.rel, b.path())))
            })
            .map(|b| b.describe())
            .collect();
        if !left.is_empty() {
            report
                .broken_references
                .push(format!("{}: {}", memory.rel, left.join("; ")));
        }
    }
    Ok(())
}

fn merge_within_files(
    run: &DreamRun<'_>,
    touched: &mut BTreeSet<String>,
) -> Result<usize, OpError> {
    let mut merged = 0;
    for memory in run.memories()? {
        if let Some((body, n)) = consolidate::merge_within(&memory.file) {
            run.rewrite(&memory, body)?;
            touched.insert(memory.rel.clone());
            merged += n;
        }
    }
    Ok(merged)
}

fn merge_across_files(
    run: &DreamRun<'_>,
    touched: &mut BTreeSet<String>,
) -> Result<usize, OpError> {
    let (project, scope) = (run.project, run.scope);
    let memories = run.memories()?;
    // key -> (file position, entry position) of the first entry with it.
    let mut first: HashMap<String, (usize, usize)> = HashMap::new();
    let mut appends: BTreeMap<usize, BTreeMap<usize, Vec<String>>> = BTreeMap::new();
    let mut removals: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (f, memory) in memories.iter().enumerate() {
        for (e, entry) in memory.file.entries().iter().enumerate() {
            let summary = summary_key(&entry.summary);
            if summary.is_empty() {
                continue;
            }
            let key = format!("{}:{summary}", memory.file.kind);
            match first.get(&key) {
                Some(&(sf, se)) if sf != f => {
                    let survivor = &memories[sf];
                    let added = appends.entry(sf).or_default().entry(se).or_default();
                    let existing =
                        format!("{}\n{}", survivor.file.entries()[se].text, added.join("\n"));
                    let mut lines = carried_lines(entry);
                    if entry.index.is_none()
                        && summary_key(&memory.file.description)
                            != summary_key(&survivor.file.description)
                    {
                        lines.insert(0, format!("Also: {}", memory.file.description));
                    }
                    added.extend(new_lines(&existing, &lines));
                    removals.entry(f).or_default().insert(e);
                }
                Some(_) => {}
                None => {
                    first.insert(key, (f, e));
                }
            }
        }
    }
    let none = BTreeSet::new();
    // First every survivor gains its duplicates' lines; only then are duplicates removed, so a
    // run stopped in between loses nothing (the next run finds the lines already there).
    for (&f, entry_appends) in &appends {
        let memory = &memories[f];
        if entry_appends.values().all(Vec::is_empty) {
            continue;
        }
        if let Some(body) = consolidate::rebuild(&memory.file, entry_appends, &none) {
            run.rewrite(memory, body)?;
            touched.insert(memory.rel.clone());
        }
    }
    let mut removed = 0;
    for (&f, entries) in &removals {
        // Re-read: phase one may have appended to this file too.
        let Some(memory) = reload(project, scope, &memories[f].rel)? else {
            continue;
        };
        removed += entries.len();
        match consolidate::rebuild(&memory.file, &BTreeMap::new(), entries) {
            Some(body) => {
                run.rewrite(&memory, body)?;
            }
            None => run.remove(&memory.rel)?,
        }
        touched.insert(memory.rel.clone());
    }
    Ok(removed)
}

fn reload(project: &Project, scope: ScopeKind, rel: &str) -> Result<Option<StoredMemory>, OpError> {
    let dir = project.check_scope_safe(scope)?;
    let bytes = store::read_capped(&dir.join(rel))?;
    Ok(crate::domain::memory::MemoryFile::parse(rel, &bytes)
        .ok()
        .map(|file| StoredMemory {
            rel: rel.to_string(),
            file,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::scope::Environment;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn lines_and_titles(dir: &Path) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for rel in store::memory_paths(dir).unwrap() {
            let text = fs::read_to_string(dir.join(&rel)).unwrap();
            let body = text.splitn(3, "---\n").nth(2).unwrap_or("");
            // A one-entry file's title is its summary (a bullet merged into it keeps its summary
            // there); a legacy topic file's title only names the container of its bullets.
            let file = crate::domain::memory::MemoryFile::parse(&rel, text.as_bytes()).unwrap();
            if file.entries().len() == 1 {
                out.insert(format!("- {}", file.name.trim().to_lowercase()));
            }
            out.extend(
                body.lines()
                    .map(|l| l.trim().to_lowercase())
                    .filter(|l| !l.is_empty()),
            );
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Dream never loses a distinct line, within or across files: every body line before a
        /// run is in some body after it (trimmed, without case).
        #[test]
        fn dream_never_loses_a_distinct_line(
            files in proptest::collection::vec(
                (any::<bool>(), 0usize..3, any::<bool>(),
                 proptest::collection::vec((0usize..3, proptest::collection::vec(0usize..5, 0..3)), 1..4)),
                1..6,
            ),
        ) {
            let names = ["DreamRun the linter", "Use real DB", "Pin versions"];
            let lines = ["Why: CI fails", "How to apply: before push", "Why: mocks lied",
                "How to apply: in tests", "See docs/db.md"];
            let tmp = tempfile::tempdir().unwrap();
            let env = Environment { base_dir: Some(tmp.path().join("base")), ..Default::default() };
            let project = Project::open_with(tmp.path(), env).unwrap();
            let dir = project.scope_dir(ScopeKind::User).unwrap();
            for (i, (feedback, name, legacy, entries)) in files.iter().enumerate() {
                let kind = if *feedback { "feedback" } else { "project" };
                let mut body = String::new();
                if *legacy {
                    for (summary, subs) in entries {
                        body.push_str(&format!("- {}\n", names[*summary]));
                        for s in subs {
                            body.push_str(&format!("  - {}\n", lines[*s]));
                        }
                    }
                } else {
                    for (_, subs) in entries {
                        for s in subs {
                            body.push_str(&format!("{}\n", lines[*s]));
                        }
                    }
                }
                let text = format!("---\nname: {}\ndescription: d{i}\ntype: {kind}\n---\n{body}", names[*name]);
                store::write_atomic(&dir.join(format!("{kind}/f{i}.md")), text.as_bytes()).unwrap();
            }
            let before = lines_and_titles(&dir);
            let report = dream(&project, ScopeKind::User, true).unwrap();
            prop_assert_eq!(report.status, "done");
            let after = lines_and_titles(&dir);
            for line in &before {
                prop_assert!(after.contains(line), "lost {:?}", line);
            }
            // A second run has nothing left to merge.
            prop_assert_eq!(dream(&project, ScopeKind::User, true).unwrap().deduped_entries, 0);
        }
    }
}
