//! Whether a path holds at `HEAD`, and for one that does not, the commit that removed or
//! renamed it.
//!
//! A path is looked up in `HEAD`'s tree, never in the work tree: what is committed is what a
//! teammate's clone has. The commit that removed a path is found by walking first-parent
//! history back from `HEAD` until a parent still has it, as `git log --first-parent -- PATH`
//! would show; a rename is what git's rename detection (`git diff -M`, libgit2's
//! `Diff::find_similar`) finds in that commit. The walk is bounded in commits and time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use git2::{Delta, DiffFindOptions, ObjectType, Oid, Repository, Tree};
use serde::{Deserialize, Serialize};

use crate::git::GitError;

/// What `HEAD`'s tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtHead {
    /// A file (or symlink): its blob.
    File(Oid),
    /// A folder.
    Folder,
    /// Nothing.
    Missing,
}

/// The commit that removed or renamed a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    /// The commit.
    #[serde(with = "oid_hex")]
    pub commit: Oid,
    /// Its author's name.
    pub author: String,
    /// Author time, seconds since the Unix epoch.
    pub time: i64,
    /// Where the path went, when git's rename detection maps it one-to-one.
    pub renamed_to: Option<String>,
}

/// The first commits of a walk are looked at whatever the deadline says: a recent removal is
/// the common case, and its answer must not depend on how loaded the machine is.
pub const ALWAYS_WALKED: usize = 64;

/// How far [`removals`] may walk (past the first [`ALWAYS_WALKED`] commits).
#[derive(Debug, Clone, Copy)]
pub struct WalkLimit {
    /// The most first-parent commits looked at.
    pub commits: usize,
    /// The walk stops here, whatever is left.
    pub deadline: Instant,
}

/// `HEAD`'s tree, for many lookups. Each folder's tree is found once: paths named by the
/// memories of one project share a few folders, so most lookups are one search by name.
pub struct HeadTree<'r> {
    repo: &'r Repository,
    commit: Option<Oid>,
    tree: Option<Tree<'r>>,
    folders: RefCell<HashMap<String, Option<Tree<'r>>>>,
}

impl<'r> HeadTree<'r> {
    /// `HEAD`'s tree; an unborn `HEAD` has none, and every path is missing from it.
    pub fn open(repo: &'r Repository) -> Result<HeadTree<'r>, GitError> {
        match repo.head().and_then(|h| h.peel_to_commit()) {
            Ok(commit) => {
                let tree = commit
                    .tree()
                    .map_err(|e| GitError::git("reading HEAD's tree", e))?;
                Ok(HeadTree {
                    repo,
                    commit: Some(commit.id()),
                    tree: Some(tree),
                    folders: RefCell::default(),
                })
            }
            Err(e)
                if e.code() == git2::ErrorCode::UnbornBranch
                    || e.code() == git2::ErrorCode::NotFound =>
            {
                Ok(HeadTree {
                    repo,
                    commit: None,
                    tree: None,
                    folders: RefCell::default(),
                })
            }
            Err(e) => Err(GitError::git("reading HEAD", e)),
        }
    }

    /// `HEAD`'s commit, `None` when unborn.
    pub fn commit(&self) -> Option<Oid> {
        self.commit
    }

    /// What the tree holds at `path` (relative to the repository root, `/`-separated).
    pub fn at(&self, path: &str) -> AtHead {
        let Some(root) = &self.tree else {
            return AtHead::Missing;
        };
        let kind = |entry: git2::TreeEntry<'_>| match entry.kind() {
            Some(ObjectType::Blob) => AtHead::File(entry.id()),
            // A folder, or a submodule: something is there.
            _ => AtHead::Folder,
        };
        let Some((folder, name)) = path.rsplit_once('/') else {
            return root.get_name(path).map_or(AtHead::Missing, kind);
        };
        let mut folders = self.folders.borrow_mut();
        let tree = folders.entry(folder.to_string()).or_insert_with(|| {
            root.get_path(Path::new(folder))
                .ok()
                .and_then(|entry| entry.to_object(self.repo).ok())
                .and_then(|object| object.into_tree().ok())
        });
        tree.as_ref()
            .and_then(|tree| tree.get_name(name))
            .map_or(AtHead::Missing, kind)
    }

    /// How many lines a file has (a last line without a newline counts), or `None` for a
    /// binary file, which has no lines to point at.
    pub fn line_count(&self, blob: Oid) -> Option<usize> {
        let blob = self.repo.find_blob(blob).ok()?;
        let bytes = blob.content();
        if blob.is_binary() {
            return None;
        }
        let newlines = bytes.iter().filter(|b| **b == b'\n').count();
        Some(newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n')))
    }
}

/// For each path missing at `head`, the commit that removed or renamed it, when first-parent
/// history within `limit` shows one (a merge that took the removal from its other side is
/// followed into that side). `folders` says which paths are folders.
pub fn removals(
    repo: &Repository,
    head: Oid,
    paths: &[(String, bool)],
    limit: WalkLimit,
) -> Result<HashMap<String, Removal>, GitError> {
    let start = WalkFrom {
        commit: head,
        walked: 0,
    };
    Ok(walk_removals(repo, start, paths, limit, None)?.found)
}

/// Where a walk starts: a commit, and how many first-parent commits an earlier walk already
/// looked at to get there (they count towards [`WalkLimit::commits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WalkFrom {
    /// The commit whose parents are looked at next.
    #[serde(with = "oid_hex")]
    pub commit: Oid,
    /// Commits walked before.
    pub walked: usize,
}

/// Where a walk of [`walk_removals`] ended, for the paths it did not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkEnd {
    /// History ran out, the commit limit was reached, or every path was found: walking again
    /// finds nothing more.
    Done,
    /// The deadline stopped it here; a later walk may go on from this point.
    Paused(WalkFrom),
    /// It reached the commit it was told to stop at, and none of the paths left was in any
    /// commit on the way: what was known of them at that commit holds.
    Reached(WalkFrom),
}

/// What a walk found: the removals, and where it ended for the rest.
#[derive(Debug)]
pub struct Walk {
    /// Each path found, with the commit that removed it.
    pub found: HashMap<String, Removal>,
    /// Where the walk ended.
    pub end: WalkEnd,
}

/// [`removals`] from `from` (a `HEAD` or where an earlier walk paused), stopping at `stop_at`
/// when first-parent history reaches it (an earlier `HEAD` whose answers are known).
pub fn walk_removals(
    repo: &Repository,
    from: WalkFrom,
    paths: &[(String, bool)],
    limit: WalkLimit,
    stop_at: Option<Oid>,
) -> Result<Walk, GitError> {
    let mut found = HashMap::new();
    let mut pending: Vec<(&str, bool)> = paths.iter().map(|(p, f)| (p.as_str(), *f)).collect();
    let mut current = repo
        .find_commit(from.commit)
        .map_err(|e| GitError::git(format!("reading commit {}", from.commit), e))?;
    let cap = limit.commits.max(ALWAYS_WALKED);
    let mut walked = from.walked;
    let mut this_walk = 0;
    let end = loop {
        let here = WalkFrom {
            commit: current.id(),
            walked,
        };
        if pending.is_empty() || walked >= cap {
            break WalkEnd::Done;
        }
        if this_walk > 0 && stop_at == Some(current.id()) {
            break WalkEnd::Reached(here);
        }
        if this_walk >= ALWAYS_WALKED && Instant::now() >= limit.deadline {
            break WalkEnd::Paused(here);
        }
        // A shallow clone's oldest commit has no parent here: the walk ends.
        let Ok(parent) = current.parent(0) else {
            break WalkEnd::Done;
        };
        let Ok(parent_tree) = parent.tree() else {
            break WalkEnd::Done;
        };
        let mut removed_here = Vec::new();
        pending.retain(|&(path, folder)| {
            if parent_tree.get_path(Path::new(path)).is_ok() {
                removed_here.push((path, folder));
                false
            } else {
                true
            }
        });
        for (path, folder) in removed_here {
            let (commit, old_tree) = removed_on_side(&current, path, limit)
                .unwrap_or_else(|| (current.clone(), parent_tree.clone()));
            let renamed_to = renamed(repo, &commit, &old_tree, path, folder)?;
            let author = commit.author();
            found.insert(
                path.to_string(),
                Removal {
                    commit: commit.id(),
                    author: String::from_utf8_lossy(author.name_bytes()).into_owned(),
                    time: author.when().seconds(),
                    renamed_to,
                },
            );
        }
        current = parent;
        walked += 1;
        this_walk += 1;
    };
    Ok(Walk { found, end })
}

/// When `commit` is a merge whose other side had already removed `path`, the commit on that
/// side (along its first parents) that did, with its parent's tree; `None` when the merge
/// itself removed it, or the side's removal lies beyond `limit`.
fn removed_on_side<'r>(
    commit: &git2::Commit<'r>,
    path: &str,
    limit: WalkLimit,
) -> Option<(git2::Commit<'r>, Tree<'r>)> {
    let mut side = commit.parent(1).ok()?;
    if side.tree().ok()?.get_path(Path::new(path)).is_ok() {
        return None;
    }
    for walked in 0..limit.commits.max(ALWAYS_WALKED) {
        if walked >= ALWAYS_WALKED && Instant::now() >= limit.deadline {
            return None;
        }
        let parent = side.parent(0).ok()?;
        let tree = parent.tree().ok()?;
        if tree.get_path(Path::new(path)).is_ok() {
            return Some((side, tree));
        }
        side = parent;
    }
    None
}

/// Where `path` went in `commit` (compared with `old_tree`), when git's rename detection maps
/// it one-to-one: the new path of a file, the new folder of a folder whose files all moved
/// to one folder.
fn renamed(
    repo: &Repository,
    commit: &git2::Commit<'_>,
    old_tree: &Tree<'_>,
    path: &str,
    folder: bool,
) -> Result<Option<String>, GitError> {
    let new_tree = commit
        .tree()
        .map_err(|e| GitError::git(format!("reading commit {}", commit.id()), e))?;
    let mut diff = repo
        .diff_tree_to_tree(Some(old_tree), Some(&new_tree), None)
        .map_err(|e| GitError::git(format!("diffing commit {}", commit.id()), e))?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .map_err(|e| GitError::git(format!("finding renames in {}", commit.id()), e))?;
    let prefix = format!("{path}/");
    let mut targets: Vec<String> = Vec::new();
    for delta in diff.deltas().filter(|d| d.status() == Delta::Renamed) {
        let (Some(old), Some(new)) = (delta.old_file().path(), delta.new_file().path()) else {
            continue;
        };
        let (old, new) = (old.to_string_lossy(), new.to_string_lossy());
        if !folder && old == path {
            return Ok(Some(new.into_owned()));
        }
        if let Some(rest) = old.strip_prefix(&prefix) {
            match new.strip_suffix(&format!("/{rest}")) {
                Some(new_folder) => targets.push(new_folder.to_string()),
                None => return Ok(None),
            }
        }
    }
    targets.sort();
    targets.dedup();
    Ok(match targets.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    })
}

/// The files a change removes: each path of the old side the new side no longer has, with
/// its new name when git's rename detection maps it one-to-one.
pub type Removed = HashMap<String, Option<String>>;

/// What `new` removes of `old` (two commits), renames found by similarity as `git diff -M`.
pub fn removed_between(repo: &Repository, old: Oid, new: Oid) -> Result<Removed, GitError> {
    let tree = |id: Oid| {
        repo.find_commit(id)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(format!("reading commit {id}"), e))
    };
    let (old_tree, new_tree) = (tree(old)?, tree(new)?);
    let diff = repo
        .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), None)
        .map_err(|e| GitError::git(format!("diffing {old}..{new}"), e))?;
    removed_in(diff, &format!("{old}..{new}"))
}

/// What the index file (`None`: the repository's own) removes of `HEAD`'s tree: what the
/// commit being made would remove.
pub fn removed_in_index(repo: &Repository, index_file: Option<&Path>) -> Result<Removed, GitError> {
    let index = match index_file {
        Some(path) => git2::Index::open(path),
        None => repo.index(),
    }
    .map_err(|e| GitError::git("reading the index", e))?;
    let head = match repo.head().and_then(|h| h.peel_to_tree()) {
        Ok(tree) => tree,
        // Nothing committed yet: nothing to remove.
        Err(_) => return Ok(Removed::new()),
    };
    let diff = repo
        .diff_tree_to_index(Some(&head), Some(&index), None)
        .map_err(|e| GitError::git("diffing HEAD with the index", e))?;
    removed_in(diff, "HEAD and the index")
}

fn removed_in(mut diff: git2::Diff<'_>, what: &str) -> Result<Removed, GitError> {
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .map_err(|e| GitError::git(format!("finding renames between {what}"), e))?;
    let mut out = Removed::new();
    for delta in diff.deltas() {
        let old = || {
            delta
                .old_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
        };
        let new = || {
            delta
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
        };
        match delta.status() {
            Delta::Deleted => {
                if let Some(old) = old() {
                    out.insert(old, None);
                }
            }
            Delta::Renamed => {
                if let Some(old) = old() {
                    out.insert(old, new());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Where a folder went when every removed file below it was renamed into one other folder
/// with the same name below it (`db/migrate/one.sql` → `migrations/sql/one.sql`).
pub fn folder_renamed(removed: &Removed, folder: &str) -> Option<String> {
    let prefix = format!("{folder}/");
    let mut target: Option<String> = None;
    for (old, new) in removed {
        let Some(rest) = old.strip_prefix(&prefix) else {
            continue;
        };
        let moved = new.as_ref()?.strip_suffix(&format!("/{rest}"))?.to_string();
        match &target {
            Some(t) if *t != moved => return None,
            _ => target = Some(moved),
        }
    }
    target
}

/// An [`Oid`] as its hex text in serde formats.
mod oid_hex {
    use git2::Oid;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(oid: &Oid, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(oid)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Oid, D::Error> {
        let hex = String::deserialize(d)?;
        Oid::from_str(&hex).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{git_cli, scratch_repo};
    use std::time::Duration;

    fn limit() -> WalkLimit {
        WalkLimit {
            commits: 1000,
            deadline: Instant::now() + Duration::from_secs(30),
        }
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn finds_the_commit_that_removed_or_renamed_a_path() {
        let (dir, repo) = scratch_repo();
        let d = dir.path();
        write(
            d,
            "src/old.rs",
            "fn old() {}\n// a file long enough to be found renamed\n",
        );
        write(d, "src/gone.rs", "fn gone() {}\n");
        write(d, "db/migrate/one.sql", "create table a (id int);\n");
        write(d, "db/migrate/two.sql", "create table b (id int);\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "start"]);
        git_cli(d, &["mv", "src/old.rs", "src/new.rs"]);
        git_cli(d, &["commit", "-qm", "rename"]);
        let renamed_in = git_cli(d, &["rev-parse", "HEAD"]);
        git_cli(d, &["rm", "-q", "src/gone.rs"]);
        git_cli(d, &["commit", "-qm", "delete"]);
        let deleted_in = git_cli(d, &["rev-parse", "HEAD"]);
        std::fs::create_dir_all(d.join("migrations")).unwrap();
        git_cli(d, &["mv", "db/migrate", "migrations/sql"]);
        git_cli(d, &["commit", "-qm", "move folder"]);
        write(d, "README.md", "later\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "later"]);

        let head = HeadTree::open(&repo).unwrap();
        assert_eq!(head.at("src/old.rs"), AtHead::Missing);
        assert_eq!(head.at("src"), AtHead::Folder);
        let AtHead::File(blob) = head.at("src/new.rs") else {
            panic!("src/new.rs is a file at HEAD");
        };
        assert_eq!(head.line_count(blob), Some(2));

        let paths = [
            ("src/old.rs".to_string(), false),
            ("src/gone.rs".to_string(), false),
            ("db/migrate".to_string(), true),
            ("never/was.rs".to_string(), false),
        ];
        let found = removals(&repo, head.commit().unwrap(), &paths, limit()).unwrap();
        let old = &found["src/old.rs"];
        assert_eq!(old.commit.to_string(), renamed_in.trim());
        assert_eq!(old.renamed_to.as_deref(), Some("src/new.rs"));
        assert_eq!(old.author, "T");
        let gone = &found["src/gone.rs"];
        assert_eq!(gone.commit.to_string(), deleted_in.trim());
        assert_eq!(gone.renamed_to, None);
        assert_eq!(
            found["db/migrate"].renamed_to.as_deref(),
            Some("migrations/sql")
        );
        assert!(!found.contains_key("never/was.rs"));
    }

    #[test]
    fn a_walk_stops_at_a_known_commit_and_goes_on_from_there() {
        let (dir, repo) = scratch_repo();
        let d = dir.path();
        write(d, "src/a.rs", "a\n");
        write(d, "keep.txt", "k\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "start"]);
        git_cli(d, &["rm", "-q", "src/a.rs"]);
        git_cli(d, &["commit", "-qm", "remove a"]);
        let removed_in = Oid::from_str(git_cli(d, &["rev-parse", "HEAD"]).trim()).unwrap();
        git_cli(d, &["commit", "-q", "--allow-empty", "-m", "old head"]);
        let old_head = Oid::from_str(git_cli(d, &["rev-parse", "HEAD"]).trim()).unwrap();
        git_cli(d, &["commit", "-q", "--allow-empty", "-m", "new head"]);
        let new_head = Oid::from_str(git_cli(d, &["rev-parse", "HEAD"]).trim()).unwrap();

        let paths = [("src/a.rs".to_string(), false)];
        let start = WalkFrom {
            commit: new_head,
            walked: 0,
        };
        let walk = walk_removals(&repo, start, &paths, limit(), Some(old_head)).unwrap();
        let WalkEnd::Reached(at) = walk.end else {
            panic!("the walk reaches the old HEAD: {:?}", walk.end);
        };
        assert!(walk.found.is_empty());
        assert_eq!(
            at,
            WalkFrom {
                commit: old_head,
                walked: 1
            }
        );
        let rest = walk_removals(&repo, at, &paths, limit(), None).unwrap();
        assert_eq!(rest.found["src/a.rs"].commit, removed_in);
        assert_eq!(rest.end, WalkEnd::Done);
    }

    #[test]
    fn a_removal_merged_from_a_side_branch_names_the_side_commit() {
        let (dir, repo) = scratch_repo();
        let d = dir.path();
        write(d, "src/a.rs", "a\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "start"]);
        let main = git_cli(d, &["rev-parse", "--abbrev-ref", "HEAD"]);
        git_cli(d, &["checkout", "-qb", "side"]);
        git_cli(d, &["rm", "-q", "src/a.rs"]);
        git_cli(d, &["commit", "-qm", "remove a"]);
        let removed_in = git_cli(d, &["rev-parse", "HEAD"]);
        git_cli(d, &["checkout", "-q", main.trim()]);
        write(d, "b.txt", "b\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "main moves on"]);
        git_cli(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);

        let head = HeadTree::open(&repo).unwrap();
        let paths = [("src/a.rs".to_string(), false)];
        let found = removals(&repo, head.commit().unwrap(), &paths, limit()).unwrap();
        assert_eq!(found["src/a.rs"].commit.to_string(), removed_in.trim());
    }

    #[test]
    fn a_change_removes_and_renames_files() {
        let (dir, repo) = scratch_repo();
        let d = dir.path();
        write(
            d,
            "src/old.rs",
            "fn old() {}\n// long enough to be found renamed\n",
        );
        write(d, "src/gone.rs", "fn gone() {}\n");
        write(d, "db/migrate/one.sql", "create table a (id int);\n");
        git_cli(d, &["add", "."]);
        git_cli(d, &["commit", "-qm", "start"]);
        let base = Oid::from_str(git_cli(d, &["rev-parse", "HEAD"]).trim()).unwrap();
        git_cli(d, &["mv", "src/old.rs", "src/new.rs"]);
        git_cli(d, &["rm", "-q", "src/gone.rs"]);
        std::fs::create_dir_all(d.join("migrations")).unwrap();
        git_cli(d, &["mv", "db/migrate", "migrations/sql"]);
        let staged = removed_in_index(&repo, None).unwrap();
        git_cli(d, &["commit", "-qm", "change"]);
        let head = Oid::from_str(git_cli(d, &["rev-parse", "HEAD"]).trim()).unwrap();
        let removed = removed_between(&repo, base, head).unwrap();
        assert_eq!(removed, staged);
        assert_eq!(removed["src/old.rs"].as_deref(), Some("src/new.rs"));
        assert_eq!(removed["src/gone.rs"], None);
        assert_eq!(
            folder_renamed(&removed, "db/migrate").as_deref(),
            Some("migrations/sql")
        );
        assert_eq!(folder_renamed(&removed, "src"), None);
    }

    #[test]
    fn an_unborn_head_has_nothing() {
        let (_dir, repo) = scratch_repo();
        let head = HeadTree::open(&repo).unwrap();
        assert_eq!(head.commit(), None);
        assert_eq!(head.at("src/lib.rs"), AtHead::Missing);
    }
}
