//! The `memory-reference` rule: the team memories whose paths a code change deletes or
//! renames, found in the pull request that breaks them rather than by the next agent that
//! reads them. A code-only change is checked too: it is exactly the change that does this.
//!
//! The change is what a pull request page shows (the merge base to HEAD, renames found by
//! similarity); the memories are the team folder at HEAD; each finding points at the line of
//! the memory that names the path, with the commit of the range that removed it.

use std::collections::HashMap;

use git2::{Oid, Repository};

use crate::domain::check::{self, Findings, MEMORY_REFERENCE};
use crate::domain::memory;
use crate::domain::references::{self, Form, Reference};
use crate::git::history::removal::{self, Removed, WalkLimit};
use crate::git::team_files::{FolderFile, MODE_SYMLINK};

use super::OpError;

/// How a removed path shows in a finding's message.
struct RemovedPath<'a> {
    path: &'a str,
    renamed_to: Option<String>,
    commit: Option<String>,
}

/// Adds a finding for each reference of the memories in `files` (the team folder after the
/// change) to a path `removed` says the change deletes or renames. `commits` finds, for the
/// paths concerned, the commit that removed each (`None` for a change not committed yet).
pub fn report(
    out: &mut Findings<'_>,
    files: &[FolderFile],
    removed: &Removed,
    commits: impl FnOnce(&[(String, bool)]) -> HashMap<String, String>,
) {
    if removed.is_empty() {
        return;
    }
    let mut hits: Vec<(&FolderFile, Reference, Option<String>)> = Vec::new();
    for file in files {
        if file.stage != 0 || file.mode == MODE_SYMLINK || !memory::is_memory_path(&file.rel) {
            continue;
        }
        let text = String::from_utf8_lossy(&file.bytes);
        for r in references::extract(&text) {
            let renamed_to = match r.form {
                Form::Path | Form::Bare => match removed.get(&r.path) {
                    Some(new) => new.clone(),
                    None => continue,
                },
                Form::Folder => {
                    let prefix = format!("{}/", r.path);
                    if !removed.keys().any(|k| k.starts_with(&prefix)) {
                        continue;
                    }
                    removal::folder_renamed(removed, &r.path)
                }
            };
            hits.push((file, r, renamed_to));
        }
    }
    if hits.is_empty() {
        return;
    }
    let mut wanted: Vec<(String, bool)> = hits
        .iter()
        .map(|(_, r, _)| (r.path.clone(), r.form == Form::Folder))
        .collect();
    wanted.sort();
    wanted.dedup();
    let commits = commits(&wanted);
    for (file, r, renamed_to) in hits {
        let gone = RemovedPath {
            path: &r.path,
            renamed_to,
            commit: commits.get(&r.path).cloned(),
        };
        let id = format!("team:{}", file.rel);
        out.push(
            MEMORY_REFERENCE,
            &check::repo_path(&file.rel),
            r.line,
            r.column,
            message(&gone, &id),
            &r.path,
            gone.commit.as_deref(),
        );
    }
}

fn message(gone: &RemovedPath<'_>, id: &str) -> String {
    let commit = gone
        .commit
        .as_deref()
        .map(|c| format!(" in commit {}", &c[..7.min(c.len())]))
        .unwrap_or_default();
    match &gone.renamed_to {
        Some(new) => format!(
            "names `{}`, which this change renames to `{new}`{commit}: update the memory to \
             `{new}` (`teammem dream --scope team` rewrites it), or forget it: `teammem forget {id}`",
            gone.path
        ),
        None => format!(
            "names `{}`, which this change deletes{commit}: update or forget: `teammem forget {id}`",
            gone.path
        ),
    }
}

/// The commit of `head`'s first-parent history that removed each path, as a full hex id.
pub fn removing_commits(
    repo: &Repository,
    head: Oid,
    paths: &[(String, bool)],
) -> HashMap<String, String> {
    let limit = WalkLimit {
        commits: 10_000,
        deadline: std::time::Instant::now() + std::time::Duration::from_secs(5),
    };
    removal::removals(repo, head, paths, limit)
        .map(|found| {
            found
                .into_iter()
                .map(|(path, r)| (path, r.commit.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The memory-reference findings of `base..head`: what the change since the merge base
/// removes, against the team memories at `head`.
pub(crate) fn in_range(
    repo: super::HistoryRepo<'_>,
    out: &mut Findings<'_>,
    base: &str,
    head: &str,
    head_files: &[FolderFile],
) -> Result<(), OpError> {
    let fork = repo.merge_base(base, head)?;
    let removed = repo.removed_between(&fork, head)?;
    report(out, head_files, &removed, |paths| {
        repo.removing_commits(head, paths)
    });
    Ok(())
}
