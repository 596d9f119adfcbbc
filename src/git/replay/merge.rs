//! The per-memory three-way merge of two team folders: no memory version is ever dropped.

use std::collections::{BTreeMap, BTreeSet};

use git2::{FileMode, MergeFileInput, Oid, Repository, Tree};

use super::folder_tree::{folder_files, rebuilt};
use super::memory_index::{MemoryIndexGate, regenerate_index};
use super::{KeptConflict, in_time};
use crate::domain::memory::MemoryFile;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::remote::Deadline;
use crate::git::team_files;
use crate::git::tree_entries::Version;

/// The team folder merged memory by memory: the subtree to put at `.qwen/team-memory`
/// (`None` when nothing is left), and what the merge had to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedFolder {
    /// The merged team folder's tree.
    pub team_tree: Option<Oid>,
    /// Memories kept in two versions (`theirs` at the path, `ours` beside it).
    pub conflicts: Vec<KeptConflict>,
    /// Memories merged line by line by git's text merge.
    pub text_merged: Vec<String>,
}

/// Merges the team folders of `ours` and `theirs` against `base` (`None`: unrelated
/// histories, nothing in common) with the per-memory three-way rules: a side that did not
/// change a memory takes the other's; a memory deleted on one side and changed on the other
/// keeps the change; two different changes are text-merged when git merges them cleanly into
/// a valid memory, else both versions are kept, ours as `<path>.conflict-<short>.md`.
/// `MEMORY.md` is never merged: it is regenerated from the result, stopping with
/// [`GitError::OutOfTime`] once `deadline` passes. Creates objects only.
pub fn merge_team_folders(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    ours: &Tree<'_>,
    theirs: &Tree<'_>,
    short: &str,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<MergedFolder, GitError> {
    let base_files = match base {
        Some(base) => folder_files(repo, base, deadline)?,
        None => BTreeMap::new(),
    };
    in_time(deadline, "merging the memory branch")?;
    let ours = folder_files(repo, ours, deadline)?;
    in_time(deadline, "merging the memory branch")?;
    let theirs_team = team_files::subtree(repo, theirs, TEAM_DIR)?;
    let theirs = folder_files(repo, theirs, deadline)?;
    in_time(deadline, "merging the memory branch")?;
    let mut merged: BTreeMap<String, Version> = BTreeMap::new();
    let mut conflicts = Vec::new();
    let mut text_merged = Vec::new();
    let paths: BTreeSet<&String> = base_files
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    for path in paths {
        if path == INDEX_FILE {
            continue;
        }
        let (b, o, t) = (base_files.get(path), ours.get(path), theirs.get(path));
        let chosen = match (o, t) {
            _ if o == t => o.copied(),
            _ if o == b => t.copied(),
            _ if t == b => o.copied(),
            // Deleted on one side, changed on the other: keep the changed one.
            (None, Some(t)) => Some(*t),
            (Some(o), None) => Some(*o),
            // Theirs already keeps ours beside the memory (a sync killed after it made the
            // copy records the edit again): one edit gives one copy.
            (Some(o), Some(t)) if kept_beside(&theirs, path, *o) => Some(*t),
            (Some(o), Some(t)) => match text_merge(repo, path, b.copied(), *o, *t)? {
                Some(blob) => {
                    text_merged.push(format!("{TEAM_DIR}/{path}"));
                    Some((blob, t.1))
                }
                None => {
                    let mut beside = conflict_name(path, short);
                    if [&base_files, &ours, &theirs]
                        .iter()
                        .any(|side| side.contains_key(&beside))
                        || merged.contains_key(&beside)
                    {
                        beside = crate::domain::conflict::plain_copy_path(path, short);
                    }
                    merged.insert(beside.clone(), *o);
                    conflicts.push(KeptConflict {
                        path: format!("{TEAM_DIR}/{path}"),
                        kept_as: format!("{TEAM_DIR}/{beside}"),
                    });
                    Some(*t)
                }
            },
            (None, None) => None,
        };
        if let Some(version) = chosen {
            merged.insert(path.clone(), version);
        }
    }
    // A file at a path the other side made a folder: the file is kept beside it, as a copy.
    let clashing: Vec<String> = merged
        .keys()
        .filter(|p| {
            let below = format!("{p}/");
            merged
                .range(below.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&below))
        })
        .cloned()
        .collect();
    for path in clashing {
        if let Some(version) = merged.remove(&path) {
            let beside = conflict_name(&path, short);
            merged.insert(beside.clone(), version);
            conflicts.push(KeptConflict {
                path: format!("{TEAM_DIR}/{path}"),
                kept_as: format!("{TEAM_DIR}/{beside}"),
            });
        }
    }
    if !merged.is_empty() {
        let index = regenerate_index(repo, &merged, gate, deadline)?;
        merged.insert(INDEX_FILE.to_string(), (index, i32::from(FileMode::Blob)));
    }
    let team_tree = rebuilt(repo, theirs_team.as_ref(), &theirs, &merged)?;
    Ok(MergedFolder {
        team_tree,
        conflicts,
        text_merged,
    })
}

/// Whether `files` holds `version` as a conflict copy of `path`.
fn kept_beside(files: &BTreeMap<String, Version>, path: &str, version: Version) -> bool {
    files.iter().any(|(other, v)| {
        v.0 == version.0
            && crate::domain::conflict::parse_copy(other).is_some_and(|c| c.original == path)
    })
}

/// git's own text merge of one file; `None` when it conflicts, when either side is binary, or
/// when a clean merge of two valid memories would not be a valid memory.
fn text_merge(
    repo: &Repository,
    path: &str,
    base: Option<Version>,
    ours: Version,
    theirs: Version,
) -> Result<Option<Oid>, GitError> {
    let read = |oid: Oid| -> Result<Vec<u8>, GitError> {
        repo.find_blob(oid)
            .map(|b| b.content().to_vec())
            .map_err(|e| GitError::git(format!("reading {TEAM_DIR}/{path}"), e))
    };
    let base_bytes = match base {
        Some(b) => read(b.0)?,
        None => Vec::new(),
    };
    let (our_bytes, their_bytes) = (read(ours.0)?, read(theirs.0)?);
    if [&base_bytes, &our_bytes, &their_bytes]
        .iter()
        .any(|b| b.contains(&0))
    {
        return Ok(None);
    }
    let result = git2::merge_file(
        &merge_input(&base_bytes, path),
        &merge_input(&our_bytes, path),
        &merge_input(&their_bytes, path),
        None,
    )
    .map_err(|e| GitError::git(format!("merging {TEAM_DIR}/{path}"), e))?;
    if !result.is_automergeable() {
        return Ok(None);
    }
    let merged = result.content().to_vec();
    if path.ends_with(".md") {
        let shown = format!("{TEAM_DIR}/{path}");
        let valid = |bytes: &[u8]| MemoryFile::parse(&shown, bytes).is_ok();
        if valid(&our_bytes) && valid(&their_bytes) && !valid(&merged) {
            return Ok(None);
        }
    }
    repo.blob(&merged)
        .map(Some)
        .map_err(|e| GitError::git(format!("writing the merged {TEAM_DIR}/{path}"), e))
}

fn merge_input<'a>(bytes: &'a [u8], path: &'a str) -> MergeFileInput<'a> {
    let mut input = MergeFileInput::new();
    input.content(bytes).path(path);
    input
}

/// `type/slug.md` becomes `type/slug.md.conflict-<short>.md`, which sorts right after it.
fn conflict_name(path: &str, short: &str) -> String {
    crate::domain::conflict::copy_path(path, short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::memory;

    #[test]
    fn conflict_copies_sit_beside_the_memory() {
        assert_eq!(
            conflict_name("feedback/use-postgres.md", "abc1234"),
            "feedback/use-postgres.md.conflict-abc1234.md"
        );
        assert!(memory::check_file_name("feedback/use-postgres.md.conflict-abc1234.md").is_none());
    }
}
