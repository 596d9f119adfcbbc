//! The team folder's files as git trees: listed from a tree, and written back changing only
//! the paths that differ.

use std::collections::BTreeMap;

use git2::{FileMode, Oid, Repository, Tree};

use crate::domain::scope::INDEX_FILE;
use crate::git::GitError;
use crate::git::remote::Deadline;
use crate::git::tree_entries::{self, Clock, NameCheck, TreeListing, Version};

/// The files under the team folder of `tree`, by path relative to it: those git can rebuild
/// a tree from. An entry a teammate crafted that git refuses (`.GIT`, a duplicate, a name not
/// in UTF-8) is left out here, and so stays in the tree it came with (see [`rebuilt`]).
/// [`GitError::OutOfTime`] once `deadline` passes while listing.
#[cfg(test)]
pub(super) fn folder_files(
    repo: &Repository,
    tree: &Tree<'_>,
    deadline: Option<Deadline>,
) -> Result<BTreeMap<String, Version>, GitError> {
    match crate::git::team_files::subtree(repo, tree, crate::domain::scope::TEAM_DIR)? {
        Some(team) => Ok(tree_entries::list_within(repo, &team, deadline)?.files),
        None => Ok(BTreeMap::new()),
    }
}

/// The files of three team folders — a merge's base, ours and theirs — where ours and theirs
/// may differ: what [`folder_files`] lists of each, less every path where ours equals theirs or
/// ours equals the base (theirs stands there). Subtrees with equal ids are not read, so the
/// cost is what changed, not the folder's size. `MEMORY.md` is not looked at.
pub(super) struct DifferingFiles {
    /// The base's files there.
    pub base: BTreeMap<String, Version>,
    /// Ours.
    pub ours: BTreeMap<String, Version>,
    /// Theirs.
    pub theirs: BTreeMap<String, Version>,
}

/// [`DifferingFiles`] of the team folders (`None`: no folder there); [`GitError::OutOfTime`]
/// once `deadline` passes.
pub(super) fn differing_files(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    ours: Option<&Tree<'_>>,
    theirs: Option<&Tree<'_>>,
    deadline: Option<Deadline>,
) -> Result<DifferingFiles, GitError> {
    let mut check = NameCheck::new(repo)?;
    let mut clock = Clock::new(deadline);
    let mut out = [
        TreeListing::default(),
        TreeListing::default(),
        TreeListing::default(),
    ];
    differing_into(
        repo,
        [base, ours, theirs],
        "",
        &mut check,
        &mut clock,
        &mut out,
    )?;
    let [base, ours, theirs] = out.map(|listing| listing.files);
    Ok(DifferingFiles { base, ours, theirs })
}

/// One folder of [`differing_files`]: `trees` are the base's, ours and theirs.
fn differing_into(
    repo: &Repository,
    trees: [Option<&Tree<'_>>; 3],
    prefix: &str,
    check: &mut NameCheck<'_>,
    clock: &mut Clock,
    out: &mut [TreeListing; 3],
) -> Result<(), GitError> {
    let entries = trees.map(|t| t.map(tree_entries::entries_of).unwrap_or_default());
    let mut names: Vec<&Vec<u8>> = entries.iter().flat_map(|e| e.keys()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        clock.tick()?;
        let [b, o, t] = [0, 1, 2].map(|side| entries[side].get(name));
        // Equal on both sides, or left alone by ours: theirs stands, whatever lies below.
        if o == t || o == b {
            continue;
        }
        let folder = |v: Option<&Vec<Version>>| {
            v.is_some_and(|v| v.len() == 1 && tree_entries::is_tree(v[0].1))
        };
        let top_index = prefix.is_empty() && name.as_slice() == INDEX_FILE.as_bytes();
        if folder(o)
            && folder(t)
            && (b.is_none() || folder(b))
            && !top_index
            && check.refusal(name).is_none()
        {
            let rel = format!("{prefix}{}", String::from_utf8_lossy(name));
            let sub = |v: Option<&Vec<Version>>| -> Result<Option<Tree<'_>>, GitError> {
                v.map(|v| {
                    repo.find_tree(v[0].0).map_err(|e| {
                        GitError::git(format!("reading the folder {rel} of the team memory"), e)
                    })
                })
                .transpose()
            };
            let (sb, so, st) = (sub(b)?, sub(o)?, sub(t)?);
            differing_into(
                repo,
                [sb.as_ref(), so.as_ref(), st.as_ref()],
                &format!("{rel}/"),
                check,
                clock,
                out,
            )?;
            continue;
        }
        // Files on one side, a folder or a refused entry on another: everything at and below
        // this name, on each side, as the full listing gives it.
        for (side, versions) in [b, o, t].into_iter().enumerate() {
            if let Some(versions) = versions {
                tree_entries::list_entry(
                    repo,
                    prefix,
                    name,
                    versions,
                    check,
                    clock,
                    &mut out[side],
                )?;
            }
        }
    }
    Ok(())
}

/// The team folder tree `start` (holding `had`) changed to hold `wanted` instead: only the
/// paths that differ are rewritten, so entries git would refuse to write (which neither map
/// lists) stay as they are rather than failing the write. `None` when nothing is left.
pub(super) fn rebuilt(
    repo: &Repository,
    start: Option<&Tree<'_>>,
    had: &BTreeMap<String, Version>,
    wanted: &BTreeMap<String, Version>,
) -> Result<Option<Oid>, GitError> {
    let context = "writing the merged team folder";
    let Some(start) = start else {
        return if wanted.is_empty() {
            Ok(None)
        } else {
            build_tree(repo, wanted).map(Some)
        };
    };
    // An entry of another kind where a file goes — a folder, or a gitlink where a file goes
    // (or the reverse), a file where a folder goes — is taken out first: the tree update
    // replaces an entry only by one of its own kind.
    let mut clearing = git2::build::TreeUpdateBuilder::new();
    let mut cleared = false;
    for (path, version) in wanted {
        if had.get(path) == Some(version) {
            continue;
        }
        let mut prefix = String::new();
        for part in path.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            let Ok(entry) = start.get_path(std::path::Path::new(&prefix)) else {
                break;
            };
            let wanted_kind = if prefix.len() < path.len() {
                git2::ObjectType::Tree
            } else if version.1 == i32::from(FileMode::Commit) {
                git2::ObjectType::Commit
            } else {
                git2::ObjectType::Blob
            };
            if entry.kind() != Some(wanted_kind) {
                clearing.remove(prefix.as_str());
                cleared = true;
                break;
            }
        }
    }
    let cleared_tree;
    let start = if cleared {
        let id = clearing
            .create_updated(repo, start)
            .map_err(|e| GitError::git(context, e))?;
        cleared_tree = repo.find_tree(id).map_err(|e| GitError::git(context, e))?;
        &cleared_tree
    } else {
        start
    };
    let mut builder = git2::build::TreeUpdateBuilder::new();
    let mut any = cleared;
    for (path, version) in wanted {
        if had.get(path) != Some(version) {
            builder.upsert(path.as_str(), version.0, file_mode(version.1));
            any = true;
        }
    }
    for path in had.keys() {
        if !wanted.contains_key(path) {
            builder.remove(path.as_str());
            any = true;
        }
    }
    let id = if any {
        builder
            .create_updated(repo, start)
            .map_err(|e| GitError::git(context, e))?
    } else {
        start.id()
    };
    let tree = repo.find_tree(id).map_err(|e| GitError::git(context, e))?;
    Ok((!tree.is_empty()).then_some(id))
}

fn file_mode(raw: i32) -> FileMode {
    match raw {
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        0o160000 => FileMode::Commit,
        _ => FileMode::Blob,
    }
}

/// Writes nested trees for `files` (paths with `/`), returning the top tree.
fn build_tree(repo: &Repository, files: &BTreeMap<String, Version>) -> Result<Oid, GitError> {
    let mut here: Vec<(&str, Version)> = Vec::new();
    let mut below: BTreeMap<&str, BTreeMap<String, Version>> = BTreeMap::new();
    for (path, version) in files {
        match path.split_once('/') {
            Some((dir, rest)) => {
                below
                    .entry(dir)
                    .or_default()
                    .insert(rest.to_string(), *version);
            }
            None => here.push((path, *version)),
        }
    }
    let context = "writing the merged team folder";
    let mut builder = repo
        .treebuilder(None)
        .map_err(|e| GitError::git(context, e))?;
    for (name, (oid, mode)) in here {
        builder
            .insert(name, oid, mode)
            .map_err(|e| GitError::git(context, e))?;
    }
    for (dir, files) in below {
        let sub = build_tree(repo, &files)?;
        builder
            .insert(dir, sub, i32::from(FileMode::Tree))
            .map_err(|e| GitError::git(context, e))?;
    }
    builder.write().map_err(|e| GitError::git(context, e))
}

/// `tree` with the subtree at `path` replaced by `new` (removed when `None`); an emptied
/// folder disappears, as in git.
pub(crate) fn replace_subtree(
    repo: &Repository,
    tree: Option<&Tree<'_>>,
    path: &[&str],
    new: Option<Oid>,
) -> Result<Option<Oid>, GitError> {
    let context = "writing the merged tree";
    let Some((name, rest)) = path.split_first() else {
        return Ok(new);
    };
    let mut builder = repo
        .treebuilder(tree)
        .map_err(|e| GitError::git(context, e))?;
    let child = tree
        .and_then(|t| t.get_name(name))
        .filter(|e| e.kind() == Some(git2::ObjectType::Tree))
        .and_then(|e| repo.find_tree(e.id()).ok());
    match replace_subtree(repo, child.as_ref(), rest, new)? {
        Some(oid) => {
            builder
                .insert(name, oid, i32::from(FileMode::Tree))
                .map_err(|e| GitError::git(context, e))?;
        }
        None => {
            if builder
                .get(name)
                .map_err(|e| GitError::git(context, e))?
                .is_some()
            {
                builder
                    .remove(name)
                    .map_err(|e| GitError::git(context, e))?;
            }
        }
    }
    if builder.is_empty() {
        return Ok(None);
    }
    builder
        .write()
        .map(Some)
        .map_err(|e| GitError::git(context, e))
}
