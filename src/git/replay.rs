//! Telling sync commits from the user's own, and re-creating sync commits on top of a moved
//! upstream with a per-memory three-way merge, so no memory version is ever dropped.
//!
//! Instead of replaying each local sync commit (as `git rebase` would), the team folder of
//! the local tip is merged once with upstream's against their merge base, and one new sync
//! commit is made on top of upstream. Every local-only commit being a sync commit that
//! touches only the team folder, the rest of the local tree equals the merge base's, so the
//! new commit's tree is upstream's with the merged team folder. Nothing is signed and no hook
//! runs; when `commit.gpgsign` is on, nothing is created (never an unsigned commit for a user
//! who signs everything).

use std::collections::{BTreeMap, BTreeSet};

use git2::{Commit, FileMode, MergeFileInput, Oid, Repository, Tree};

use super::commit::{SYNC_SUBJECT, SYNC_TRAILER};
use super::remote::Deadline;
use super::tree_entries::Version;
use super::{GitError, history};
use crate::domain::memory::{self, MemoryFile};
use crate::domain::memory_index;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};

/// How many user commits are listed at most in a `diverged` / `local-ahead` result.
const LISTED_USER_COMMITS: usize = 10;

/// Where the local branch stands against its upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divergence {
    /// Same commit (or both unborn).
    UpToDate,
    /// Only upstream moved: fast-forward.
    Behind,
    /// Only local sync commits are unpublished and upstream did not move: push them.
    SyncAhead {
        /// The local-only sync commits, newest first.
        commits: Vec<Oid>,
    },
    /// Both moved and every local-only commit is a sync commit: replay, then push.
    Replayable {
        /// The local-only sync commits, newest first.
        commits: Vec<Oid>,
    },
    /// A user commit is unpublished and upstream did not move (`local-ahead`).
    LocalAhead {
        /// Some of the user's unpublished commits, newest first.
        user_commits: Vec<Oid>,
    },
    /// A user commit is unpublished and upstream moved too (`diverged`).
    Diverged {
        /// Some of the user's unpublished commits, newest first.
        user_commits: Vec<Oid>,
    },
}

/// Compares the local tip with the fetched upstream tip (`None`: unborn / no remote branch).
pub fn classify(
    repo: &Repository,
    local: Option<Oid>,
    upstream: Option<Oid>,
) -> Result<Divergence, GitError> {
    let Some(local) = local else {
        return Ok(match upstream {
            Some(_) => Divergence::Behind,
            None => Divergence::UpToDate,
        });
    };
    if upstream == Some(local) {
        return Ok(Divergence::UpToDate);
    }
    let mut sync_commits = Vec::new();
    let mut user_commits = Vec::new();
    for oid in history::local_only(repo, local, upstream)? {
        let commit = repo
            .find_commit(oid)
            .map_err(|e| GitError::git(format!("reading commit {oid}"), e))?;
        if is_sync_commit(repo, &commit)? {
            sync_commits.push(oid);
        } else {
            user_commits.push(oid);
            if user_commits.len() >= LISTED_USER_COMMITS {
                break;
            }
        }
    }
    let upstream_moved = match upstream {
        Some(upstream) => !history::contains(repo, local, upstream)?,
        None => false,
    };
    Ok(
        match (
            user_commits.is_empty(),
            sync_commits.is_empty(),
            upstream_moved,
        ) {
            (false, _, true) => Divergence::Diverged { user_commits },
            (false, _, false) => Divergence::LocalAhead { user_commits },
            (true, true, _) => Divergence::Behind,
            (true, false, true) => Divergence::Replayable {
                commits: sync_commits,
            },
            (true, false, false) => Divergence::SyncAhead {
                commits: sync_commits,
            },
        },
    )
}

/// A sync commit: the sync subject, the trailer, one parent, and changes only inside the
/// team folder.
pub fn is_sync_commit(repo: &Repository, commit: &Commit<'_>) -> Result<bool, GitError> {
    let message = String::from_utf8_lossy(commit.message_bytes());
    let subject_fits = message.lines().next().map(str::trim) == Some(SYNC_SUBJECT);
    let trailer_fits = message
        .rsplit("\n\n")
        .next()
        .is_some_and(|last| last.lines().any(|line| line.trim() == SYNC_TRAILER));
    if !subject_fits || !trailer_fits || commit.parent_count() > 1 {
        return Ok(false);
    }
    let context = || format!("reading commit {}", commit.id());
    let tree = commit.tree().map_err(|e| GitError::git(context(), e))?;
    let parent_tree = match commit.parent(0) {
        Ok(parent) => Some(parent.tree().map_err(|e| GitError::git(context(), e))?),
        Err(_) => None,
    };
    let outside = |t: Option<&Tree<'_>>| -> Vec<(String, Oid)> {
        t.map(|t| {
            t.iter()
                .filter(|e| e.name_bytes() != b".qwen")
                .map(|e| (String::from_utf8_lossy(e.name_bytes()).into_owned(), e.id()))
                .collect()
        })
        .unwrap_or_default()
    };
    if outside(Some(&tree)) != outside(parent_tree.as_ref()) {
        return Ok(false);
    }
    let qwen = |t: Option<&Tree<'_>>| -> Result<Vec<(String, Oid)>, GitError> {
        let Some(t) = t else { return Ok(Vec::new()) };
        let Some(entry) = t.get_name(".qwen") else {
            return Ok(Vec::new());
        };
        let Ok(sub) = repo.find_tree(entry.id()) else {
            return Ok(vec![(".qwen".into(), entry.id())]);
        };
        Ok(sub
            .iter()
            .filter(|e| e.name_bytes() != b"team-memory")
            .map(|e| (String::from_utf8_lossy(e.name_bytes()).into_owned(), e.id()))
            .collect())
    };
    Ok(qwen(Some(&tree))? == qwen(parent_tree.as_ref())?)
}

/// A memory both sides changed differently: upstream's version stays at `path`, the local
/// one is kept beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptConflict {
    /// The memory's path in the repository (upstream's version).
    pub path: String,
    /// Where the local version was kept: `<slug>.md.conflict-<short-sha>.md`.
    pub kept_as: String,
}

/// The result of a replay: a new commit on top of upstream, not yet checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The new sync commit (parent: the upstream tip). Land it with
    /// [`super::fast_forward::move_branch`] from the old local tip.
    pub commit: Oid,
    /// Memories kept in two versions.
    pub conflicts: Vec<KeptConflict>,
    /// Memories merged line by line by git's text merge.
    pub text_merged: Vec<String>,
}

/// What the engine asks of the memory gate to write a merged folder's `MEMORY.md`. Sync hands
/// in the gate's own ([`crate::ops::TeamMemoryIndexGate`]); the engine holds no policy of its own.
pub trait MemoryIndexGate {
    /// The folder's own configuration files the gate reads: the check file and the secrets'
    /// ignore file, by path in the folder.
    fn config_files(&self) -> [&'static str; 2];
    /// The judge of index lines under those files (each its bytes and whether it is a symlink;
    /// `None` when absent): `true` for a line `MEMORY.md` may hold.
    fn judge<'f>(
        &self,
        config: [Option<(&'f [u8], bool)>; 2],
    ) -> Box<dyn Fn(&memory_index::IndexLine) -> bool + 'f>;
    /// `MEMORY.md` for the kept lines, in order.
    fn render(&self, kept: Vec<memory_index::IndexLine>) -> String;
}

/// Re-creates the local sync commits between the merge base and `local` as one sync commit on
/// top of `upstream`, merging the team folder file by file. Call only for
/// [`Divergence::Replayable`]. Creates objects only; no ref, index or file changes.
pub fn replay_sync_commits(
    repo: &Repository,
    local: Oid,
    upstream: Oid,
    gate: &dyn MemoryIndexGate,
) -> Result<Replayed, GitError> {
    let signs = repo
        .config()
        .and_then(|c| c.get_bool("commit.gpgsign"))
        .unwrap_or(false);
    if signs {
        return Err(GitError::Unsupported {
            path: repo.path().display().to_string(),
            what: "commit.gpgsign is on and teammem cannot sign the replayed sync commit".into(),
            fix: "run `git pull --rebase` yourself, or sync again after the next pull".into(),
        });
    }
    let context = |what: &str| format!("replaying sync commits of {local} onto {upstream}: {what}");
    let base = history::merge_base(repo, local, upstream)?;
    let commit_tree = |oid: Oid| -> Result<Tree<'_>, GitError> {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(context("reading a tree"), e))
    };
    let base_tree = commit_tree(base)?;
    let theirs_tree = commit_tree(upstream)?;
    let short = local.to_string()[..7].to_string();
    let folder = merge_team_folders(
        repo,
        Some(&base_tree),
        &commit_tree(local)?,
        &theirs_tree,
        &short,
        gate,
        None,
    )?;
    let MergedFolder {
        team_tree,
        conflicts,
        text_merged,
    } = folder;
    let root = replace_subtree(
        repo,
        Some(&theirs_tree),
        &[".qwen", "team-memory"],
        team_tree,
    )?
    .ok_or_else(|| {
        GitError::git(
            context("building the tree"),
            git2::Error::from_str("the merged tree is empty"),
        )
    })?;
    let root = repo
        .find_tree(root)
        .map_err(|e| GitError::git(context("reading the merged tree"), e))?;
    let last = repo
        .find_commit(local)
        .map_err(|e| GitError::git(context("reading the local tip"), e))?;
    let parent = repo
        .find_commit(upstream)
        .map_err(|e| GitError::git(context("reading the upstream tip"), e))?;
    let author = last.author();
    let committer = repo.signature().unwrap_or_else(|_| author.to_owned());
    let message = last.message().unwrap_or(SYNC_SUBJECT).to_string();
    let commit = repo
        .commit(None, &author, &committer, &message, &root, &[&parent])
        .map_err(|e| GitError::git(context("writing the commit"), e))?;
    Ok(Replayed {
        commit,
        conflicts,
        text_merged,
    })
}

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
        Some(base) => team_files(repo, base)?,
        None => BTreeMap::new(),
    };
    in_time(deadline, "merging the memory branch")?;
    let ours = team_files(repo, ours)?;
    in_time(deadline, "merging the memory branch")?;
    let theirs_team = super::team_files::subtree(repo, theirs, TEAM_DIR)?;
    let theirs = team_files(repo, theirs)?;
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

/// The team folder of `tree` with `MEMORY.md` regenerated from its memories, as a tree to put
/// at `.qwen/team-memory` (`None` when the folder is empty), stopping with
/// [`GitError::OutOfTime`] once `deadline` passes. Creates objects only.
pub fn regenerated_team_tree(
    repo: &Repository,
    tree: &Tree<'_>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<Option<Oid>, GitError> {
    let team = super::team_files::subtree(repo, tree, TEAM_DIR)?;
    let files = team_files(repo, tree)?;
    let mut wanted = files.clone();
    wanted.remove(INDEX_FILE);
    if !wanted.is_empty() {
        let index = regenerate_index(repo, &wanted, gate, deadline)?;
        wanted.insert(INDEX_FILE.to_string(), (index, i32::from(FileMode::Blob)));
    }
    rebuilt(repo, team.as_ref(), &files, &wanted)
}

/// The files under the team folder of `tree`, by path relative to it: those git can rebuild
/// a tree from. An entry a teammate crafted that git refuses (`.GIT`, a duplicate, a name not
/// in UTF-8) is left out here, and so stays in the tree it came with (see [`rebuilt`]).
fn team_files(repo: &Repository, tree: &Tree<'_>) -> Result<BTreeMap<String, Version>, GitError> {
    match super::team_files::subtree(repo, tree, TEAM_DIR)? {
        Some(team) => Ok(super::tree_entries::list(repo, &team)?.files),
        None => Ok(BTreeMap::new()),
    }
}

/// The team folder tree `start` (holding `had`) changed to hold `wanted` instead: only the
/// paths that differ are rewritten, so entries git would refuse to write (which neither map
/// lists) stay as they are rather than failing the write. `None` when nothing is left.
fn rebuilt(
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
    // A folder where a file goes (or a file where a folder goes) is taken out first: the tree
    // update replaces files and folders only by their own kind.
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
            let is_folder = entry.kind() == Some(git2::ObjectType::Tree);
            if is_folder != (prefix.len() < path.len()) {
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

/// How many memories [`regenerate_index`] reads between two looks at the clock.
const CLOCK_EVERY: usize = 256;

/// `Err(OutOfTime)` saying `what` was being done once `deadline` has passed.
fn in_time(deadline: Option<Deadline>, what: &str) -> Result<(), GitError> {
    if deadline.is_some_and(|d| d.passed()) {
        return Err(GitError::OutOfTime {
            what: what.to_string(),
        });
    }
    Ok(())
}

/// MEMORY.md for the merged files, rendered as `teammem index` renders it from disk: every
/// valid memory file ([`memory::is_memory_path`]) that passes the
/// memory gate, so a teammate's memory holding a secret is never copied into this commit's
/// index. See [`index_text`] for what is read.
fn regenerate_index(
    repo: &Repository,
    files: &BTreeMap<String, Version>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<Oid, GitError> {
    let text = index_text(repo, files, gate, deadline)?;
    repo.blob(text.as_bytes())
        .map_err(|e| GitError::git("writing the regenerated MEMORY.md", e))
}

/// The text of [`regenerate_index`]. The index lists the first [`memory_index::MAX_FILES`] memories
/// by path (UTF-16 order) that give a line the gate keeps, and paths are unique, so the
/// memories are read in that order until that many are kept: the cost is the paths' sort and
/// about `MAX_FILES` blobs however many memories the branch holds (a flood past them is never
/// read). The same bytes as rendering every memory's line (`tests::full_index_text`). Looks
/// at the clock every [`CLOCK_EVERY`] memories read and stops with [`GitError::OutOfTime`]
/// once `deadline` passed.
fn index_text(
    repo: &Repository,
    files: &BTreeMap<String, Version>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<String, GitError> {
    let blob_of = |rel: &str| {
        files.get(rel).and_then(|(oid, mode)| {
            let blob = repo.find_blob(*oid).ok()?;
            Some((blob.content().to_vec(), *mode == i32::from(FileMode::Link)))
        })
    };
    let [config, ignore] = gate.config_files().map(blob_of);
    let keeps = gate.judge(
        [config.as_ref(), ignore.as_ref()]
            .map(|f| f.map(|(bytes, symlink)| (bytes.as_slice(), *symlink))),
    );

    let what = format!(
        "regenerating {TEAM_DIR}/{INDEX_FILE} from {} files",
        files.len()
    );
    // Only a file's bytes are a memory: not a symlink's target path, not a gitlink's commit
    // (which is no blob at all).
    let mut candidates: Vec<(&String, Oid)> = files
        .iter()
        .filter(|(rel, (_, mode))| {
            (*mode == i32::from(FileMode::Blob) || *mode == i32::from(FileMode::BlobExecutable))
                && memory::is_memory_path(rel)
        })
        .map(|(rel, (oid, _))| (rel, *oid))
        .collect();
    in_time(deadline, &what)?;
    candidates.sort_by(|a, b| memory_index::utf16_cmp(a.0, b.0));
    in_time(deadline, &what)?;
    let mut kept = Vec::new();
    for (n, (rel, oid)) in candidates.into_iter().enumerate() {
        if kept.len() == memory_index::MAX_FILES {
            break;
        }
        if n % CLOCK_EVERY == CLOCK_EVERY - 1 {
            in_time(deadline, &what)?;
        }
        let shown = format!("{TEAM_DIR}/{rel}");
        let blob = repo
            .find_blob(oid)
            .map_err(|e| GitError::git(format!("reading {shown}"), e))?;
        if let Some(entry) = memory::index_entry_of(&shown, rel, blob.content()) {
            if keeps(&entry) {
                kept.push(entry);
            }
        }
    }
    Ok(gate.render(kept))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_copies_sit_beside_the_memory() {
        assert_eq!(
            conflict_name("feedback/use-postgres.md", "abc1234"),
            "feedback/use-postgres.md.conflict-abc1234.md"
        );
        assert!(memory::check_file_name("feedback/use-postgres.md.conflict-abc1234.md").is_none());
    }

    /// MEMORY.md as rendered from every memory's line, each read and gated: what
    /// [`index_text`] must give while reading only the first memories by path.
    fn full_index_text(repo: &Repository, files: &BTreeMap<String, Version>) -> String {
        let blob_of = |rel: &str| {
            files.get(rel).and_then(|(oid, mode)| {
                let blob = repo.find_blob(*oid).ok()?;
                Some((blob.content().to_vec(), *mode == i32::from(FileMode::Link)))
            })
        };
        let config = blob_of(crate::domain::check::CONFIG_FILE);
        let ignore = blob_of(crate::domain::secrets::IGNORE_FILE);
        fn as_team_file(
            found: &Option<(Vec<u8>, bool)>,
        ) -> Option<crate::domain::check_config::TeamFile<'_>> {
            found
                .as_ref()
                .map(|(bytes, symlink)| crate::domain::check_config::TeamFile {
                    bytes,
                    symlink: *symlink,
                })
        }
        let policy = crate::domain::gate::Gate::from_team_files(
            as_team_file(&config),
            as_team_file(&ignore),
        );
        let mut entries = Vec::new();
        for (rel, (oid, mode)) in files {
            let file =
                *mode == i32::from(FileMode::Blob) || *mode == i32::from(FileMode::BlobExecutable);
            if !memory::is_memory_path(rel) || !file {
                continue;
            }
            let blob = repo.find_blob(*oid).unwrap();
            let shown = format!("{TEAM_DIR}/{rel}");
            entries.extend(memory::index_entry_of(&shown, rel, blob.content()));
        }
        crate::domain::gate::team_index_md(entries, Some(&policy))
    }

    /// A small deterministic random number generator (xorshift64*).
    struct Dice(u64);

    impl Dice {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    /// A random team file: a memory (often sharing a description, sometimes carrying a token
    /// the gate keeps out of the index, sometimes broken), a file that is no memory, or a
    /// symlink; at a path mixing ASCII, characters past U+FFFF and in U+E000..U+FFFF (where
    /// UTF-16 order and byte order differ).
    fn random_file(repo: &Repository, dice: &mut Dice) -> (String, Version) {
        let kinds = ["project", "feedback", "user", "reference"];
        let starts = [
            "a",
            "b",
            "z",
            "\u{1F600}",
            "\u{FF5A}",
            "\u{E000}",
            "\u{00E9}",
            "0",
        ];
        let kind = dice.pick(&kinds);
        let mut name = String::new();
        for _ in 0..1 + dice.below(3) {
            name.push_str(dice.pick(&starts));
        }
        name.push_str(&format!("-{}", dice.below(1000)));
        let description = match dice.below(6) {
            0 => "Shared description".to_string(),
            1 => format!("token ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
            2 => String::new(),
            _ => format!("About {name}"),
        };
        let text = match dice.below(10) {
            0 => "no frontmatter at all\n".to_string(),
            _ => format!(
                "---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nBody {}.\n",
                dice.below(100)
            ),
        };
        let (rel, mode) = match dice.below(20) {
            0 => (format!("{kind}/{name}.txt"), FileMode::Blob),
            1 => (format!("{kind}/{name}.md"), FileMode::Link),
            2 => (format!("{kind}/{name}.md"), FileMode::BlobExecutable),
            _ => (format!("{kind}/{name}.md"), FileMode::Blob),
        };
        let oid = repo.blob(text.as_bytes()).unwrap();
        (rel, (oid, i32::from(mode)))
    }

    #[test]
    fn the_index_read_from_the_first_memories_is_the_index_of_them_all() {
        let (_dir, repo) = crate::git::scratch_repo();
        for seed in 1..=4u64 {
            let mut dice = Dice(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut files: BTreeMap<String, Version> = BTreeMap::new();
            for step in 0..12 {
                // Random changes: a burst of additions (past the 200 listed memories), edits
                // and deletions.
                let adds = if step < 3 { 100 } else { dice.below(30) };
                for _ in 0..adds {
                    let (rel, version) = random_file(&repo, &mut dice);
                    files.insert(rel, version);
                }
                let paths: Vec<String> = files.keys().cloned().collect();
                for _ in 0..dice.below(30) {
                    let path = &paths[dice.below(paths.len())];
                    if dice.below(2) == 0 {
                        files.remove(path);
                    } else {
                        let (_, version) = random_file(&repo, &mut dice);
                        files.insert(path.clone(), version);
                    }
                }
                assert_eq!(
                    index_text(&repo, &files, &crate::ops::TeamMemoryIndexGate, None).unwrap(),
                    full_index_text(&repo, &files),
                    "seed {seed}, step {step}, {} files",
                    files.len()
                );
            }
        }
    }
}
