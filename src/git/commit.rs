//! Committing the team folder alone: one commit whose tree is HEAD's tree with the team folder's
//! changed files replaced, the branch moved by compare-and-swap, then the index's team entries
//! brought in line.
//!
//! Unlike `git commit`, this runs no hooks (libgit2 has none) and never looks at the index to
//! build the tree, so whatever the user staged outside the team folder is neither committed nor
//! disturbed. The order (objects, then the branch, then the index) means a kill at any moment
//! leaves a repository `git fsck` accepts; a marker file covers the one gap (branch moved, index
//! not yet updated) so the next sync finishes the job.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use git2::build::TreeUpdateBuilder;
use git2::{Commit, ErrorCode, ObjectType, Oid, Repository, Signature, Tree};

use super::GitError;
use super::preflight::Branch;
use super::recovery::ref_move::RefIntent;
use super::sign::{self, Signing};
use super::staging_index::update::{self as index, FreshFile, StagingUpdate};
use super::status::TreeFile;

/// The subject line of every sync commit.
pub const SYNC_SUBJECT: &str = "chore(memory): sync team memory";

/// The trailer that marks a commit as made by sync.
pub const SYNC_TRAILER: &str = "Teammem-Sync: 1";

use super::recovery::{INDEX_PENDING, SIGN_SCRATCH};

/// The full message of a sync commit.
pub fn sync_message() -> String {
    format!("{SYNC_SUBJECT}\n\n{SYNC_TRAILER}\n")
}

/// One path of the team folder in the new commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamUpdate {
    /// Path relative to the work tree, `/`-separated.
    pub path: String,
    /// The new blob and mode, or `None` to delete the path.
    pub file: Option<TreeFile>,
}

/// A name and an email, as in `Name <email>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The name.
    pub name: String,
    /// The email.
    pub email: String,
}

impl std::fmt::Display for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <{}>", self.name, self.email)
    }
}

/// Who a sync commit is by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The author.
    pub author: Person,
    /// The committer.
    pub committer: Person,
}

/// How a sync commit is made.
#[derive(Debug, Clone)]
pub struct CommitSettings {
    /// Author and committer.
    pub identity: Identity,
    /// Whether and how to sign.
    pub signing: Signing,
    /// How long to wait for another process's `index.lock`.
    pub index_patience: Duration,
    /// How long the signing program may run.
    pub sign_budget: Duration,
}

/// What [`commit_team_dir`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitResult {
    /// The team folder's content already matched HEAD: no commit.
    NothingToCommit,
    /// A commit was made and the branch moved to it.
    Committed(Oid),
    /// The branch (or HEAD) moved while the commit was prepared: nothing was changed.
    HeadMoved,
    /// `commit.gpgsign` is on and the commit could not be signed (why): nothing was changed.
    NotSigned(String),
    /// Another program holds the branch's lock file (its path): nothing was changed.
    BranchLocked(std::path::PathBuf),
}

/// The outcome of [`commit_team_dir`]: the commit, and whether the index followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamCommit {
    /// The commit.
    pub result: CommitResult,
    /// The index's team entries.
    pub index: StagingUpdate,
}

/// Stores a work-tree file as a blob as `git add` would: through git's filters
/// (`.gitattributes`, `core.autocrlf`); a symlink is stored as its target. `bytes`, when given,
/// are the file's bytes as already read (and checked) by the caller: they are stored directly
/// when no built-in filter can change them (no carriage return, and no `$Id` with the `ident`
/// attribute), so what is committed is exactly what was checked, even if the file changes
/// meanwhile. Unlike git, libgit2 runs no external filter drivers (`filter=lfs`): such files
/// are stored as they are on disk.
pub fn store_blob(repo: &Repository, path: &str, bytes: Option<&[u8]>) -> Result<Oid, GitError> {
    if let Some(bytes) = bytes {
        let crlf = bytes.contains(&b'\r');
        let ident = bytes.windows(3).any(|w| w == b"$Id") && has_attr(repo, path, "ident");
        if !crlf && !ident {
            return repo
                .blob(bytes)
                .map_err(|e| GitError::git(format!("storing {path}"), e));
        }
    }
    let workdir = repo.workdir().unwrap_or(repo.path());
    repo.blob_path(&workdir.join(path))
        .map_err(|e| GitError::git(format!("storing {path}"), e))
}

fn has_attr(repo: &Repository, path: &str, name: &str) -> bool {
    let value = repo
        .get_attr(Path::new(path), name, git2::AttrCheckFlags::FILE_THEN_INDEX)
        .ok()
        .flatten();
    !matches!(
        git2::AttrValue::from_string(value),
        git2::AttrValue::Unspecified | git2::AttrValue::False
    )
}

/// Whether an earlier sync moved the branch but was stopped before it updated the index.
pub fn index_pending(repo: &Repository) -> bool {
    repo.path().join(INDEX_PENDING).exists()
}

/// Commits `updates` under the team folder `dir` on `branch`: the new tree is the tip's tree
/// with exactly these paths replaced; the branch moves only if it still points at `branch.tip`
/// and HEAD still names it. Then the index's entries under `dir` are made to match the new tree
/// (or the tip's, when nothing was committed); `fresh` lists files just hashed from disk. An
/// `index.lock` held by someone else is waited for up to `settings.index_patience`, then left
/// alone.
pub fn commit_team_dir(
    repo: &Repository,
    branch: &Branch,
    dir: &str,
    updates: &[TeamUpdate],
    fresh: &HashMap<String, FreshFile>,
    settings: &CommitSettings,
) -> Result<TeamCommit, GitError> {
    let patience = settings.index_patience;
    let parent = match branch.tip {
        Some(tip) => Some(
            repo.find_commit(tip)
                .map_err(|e| GitError::git(format!("reading {}", branch.refname), e))?,
        ),
        None => None,
    };
    let baseline = match &parent {
        Some(commit) => commit
            .tree()
            .map_err(|e| GitError::git("reading HEAD's tree", e))?,
        None => empty_tree(repo)?,
    };
    let tree = updated_tree(repo, &baseline, updates)?;
    if tree.id() == baseline.id() {
        let index = finish_index(repo, dir, &baseline, fresh, patience)?;
        return Ok(TeamCommit {
            result: CommitResult::NothingToCommit,
            index,
        });
    }
    let commit = match write_commit(repo, parent.as_ref(), &tree, &sync_message(), settings)? {
        Ok(commit) => commit,
        Err(not_signed) => {
            return Ok(TeamCommit {
                result: not_signed,
                index: StagingUpdate::Unchanged,
            });
        }
    };
    if !head_names(repo, &branch.refname) {
        return Ok(TeamCommit {
            result: CommitResult::HeadMoved,
            index: StagingUpdate::Unchanged,
        });
    }
    let pending = repo.path().join(INDEX_PENDING);
    fs::write(&pending, commit.to_string()).map_err(|e| GitError::io(&pending, e))?;
    let reflog = format!(
        "commit{}: {SYNC_SUBJECT}",
        if parent.is_none() { " (initial)" } else { "" }
    );
    if let Some(refused) = move_branch_to(repo, branch, commit, &reflog).inspect_err(|_| {
        let _ = fs::remove_file(&pending);
    })? {
        let _ = fs::remove_file(&pending);
        return Ok(TeamCommit {
            result: refused,
            index: StagingUpdate::Unchanged,
        });
    }
    let index = finish_index(repo, dir, &tree, fresh, patience)?;
    Ok(TeamCommit {
        result: CommitResult::Committed(commit),
        index,
    })
}

/// Writes the commit of `tree` on `parent` with `message`, by the identity in `settings` and
/// signed as it says. `Err` holds [`CommitResult::NotSigned`] when signing was required and
/// failed (nothing was written).
pub(crate) fn write_commit(
    repo: &Repository,
    parent: Option<&Commit<'_>>,
    tree: &Tree<'_>,
    message: &str,
    settings: &CommitSettings,
) -> Result<Result<Oid, CommitResult>, GitError> {
    let identity = &settings.identity;
    let parents: Vec<&Commit<'_>> = parent.into_iter().collect();
    let author = Signature::now(&identity.author.name, &identity.author.email)
        .map_err(|e| GitError::git(format!("the author {}", identity.author), e))?;
    let committer = Signature::now(&identity.committer.name, &identity.committer.email)
        .map_err(|e| GitError::git(format!("the committer {}", identity.committer), e))?;
    let buffer = repo
        .commit_create_buffer(&author, &committer, message, tree, &parents)
        .map_err(|e| GitError::git("preparing the commit", e))?;
    let payload = String::from_utf8_lossy(&buffer).into_owned();
    let committer = identity.committer.to_string();
    let scratch = repo.path().join(SIGN_SCRATCH);
    let signature = match sign::sign(
        &settings.signing,
        &payload,
        &committer,
        &scratch,
        settings.sign_budget,
    ) {
        Ok(signature) => signature,
        Err(why) => return Ok(Err(CommitResult::NotSigned(why.to_string()))),
    };
    let commit = match signature {
        Some(signature) => repo
            .commit_signed(&payload, &signature, None)
            .map_err(|e| GitError::git("writing the signed commit", e))?,
        None => repo
            .odb()
            .and_then(|odb| odb.write(ObjectType::Commit, payload.as_bytes()))
            .map_err(|e| GitError::git("writing the commit", e))?,
    };
    Ok(Ok(commit))
}

/// Moves `branch` to `commit` by compare-and-swap (it must still point at `branch.tip`), the
/// move announced for recovery ([`RefIntent`]). `Some` says why it did not move:
/// [`CommitResult::HeadMoved`] or [`CommitResult::BranchLocked`].
pub(crate) fn move_branch_to(
    repo: &Repository,
    branch: &Branch,
    commit: Oid,
    reflog: &str,
) -> Result<Option<CommitResult>, GitError> {
    let intent = RefIntent::announce(repo, &branch.refname, Some(commit))?;
    let moved = match branch.tip {
        Some(tip) => repo.reference_matching(&branch.refname, commit, true, tip, reflog),
        None => repo.reference(&branch.refname, commit, false, reflog),
    };
    drop(intent);
    match moved {
        Ok(_) => Ok(None),
        Err(e) if matches!(e.code(), ErrorCode::Modified | ErrorCode::Exists) => {
            Ok(Some(CommitResult::HeadMoved))
        }
        Err(e) if e.code() == ErrorCode::Locked => {
            let mut lock = repo.commondir().join(&branch.refname).into_os_string();
            lock.push(".lock");
            Ok(Some(CommitResult::BranchLocked(lock.into())))
        }
        Err(e) => Err(GitError::git(format!("moving {}", branch.refname), e)),
    }
}

/// Updates the index, then clears the pending marker unless the index was busy.
fn finish_index(
    repo: &Repository,
    dir: &str,
    tree: &Tree<'_>,
    fresh: &HashMap<String, FreshFile>,
    patience: Duration,
) -> Result<StagingUpdate, GitError> {
    let pending = repo.path().join(INDEX_PENDING);
    let update = index::update_team_entries(repo, dir, tree, fresh, patience)?;
    if update != StagingUpdate::Locked {
        index::remove_if_there(&pending)?;
    }
    Ok(update)
}

pub(crate) fn head_names(repo: &Repository, refname: &str) -> bool {
    repo.find_reference("HEAD")
        .ok()
        .and_then(|head| head.symbolic_target().ok().flatten().map(|t| t == refname))
        .unwrap_or(false)
}

pub(crate) fn empty_tree(repo: &Repository) -> Result<Tree<'_>, GitError> {
    let id = repo
        .treebuilder(None)
        .and_then(|b| b.write())
        .map_err(|e| GitError::git("writing the empty tree", e))?;
    repo.find_tree(id)
        .map_err(|e| GitError::git("reading the empty tree", e))
}

/// The baseline tree with `updates` applied. A path to delete that the baseline lacks is
/// skipped: libgit2 refuses to remove what is not there.
pub(crate) fn updated_tree<'r>(
    repo: &'r Repository,
    baseline: &Tree<'_>,
    updates: &[TeamUpdate],
) -> Result<Tree<'r>, GitError> {
    let mut builder = TreeUpdateBuilder::new();
    let mut any = false;
    for update in updates {
        match &update.file {
            Some(file) => {
                builder.upsert(update.path.as_str(), file.id, file.mode);
                any = true;
            }
            None => {
                if baseline.get_path(Path::new(&update.path)).is_ok() {
                    builder.remove(update.path.as_str());
                    any = true;
                }
            }
        }
    }
    let id = if any {
        builder
            .create_updated(repo, baseline)
            .map_err(|e| GitError::git("building the new tree", e))?
    } else {
        baseline.id()
    };
    repo.find_tree(id)
        .map_err(|e| GitError::git("reading the new tree", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::sign::Signing;

    fn settings() -> CommitSettings {
        let person = Person {
            name: "Test".into(),
            email: "test@example.com".into(),
        };
        CommitSettings {
            identity: Identity {
                author: person.clone(),
                committer: person,
            },
            signing: Signing::Off,
            index_patience: Duration::from_millis(10),
            sign_budget: Duration::from_secs(1),
        }
    }

    fn commit_file(repo: &Repository, parent: Option<Oid>, path: &str, text: &str) -> Oid {
        let blob = repo.blob(text.as_bytes()).unwrap();
        let base = match parent {
            Some(p) => repo.find_commit(p).unwrap().tree().unwrap(),
            None => empty_tree(repo).unwrap(),
        };
        let mut builder = TreeUpdateBuilder::new();
        builder.upsert(path, blob, git2::FileMode::Blob);
        let tree = repo
            .find_tree(builder.create_updated(repo, &base).unwrap())
            .unwrap();
        let sig = Signature::now("T", "t@example.com").unwrap();
        let parents: Vec<Commit<'_>> = parent
            .map(|p| repo.find_commit(p).unwrap())
            .into_iter()
            .collect();
        let parents: Vec<&Commit<'_>> = parents.iter().collect();
        repo.commit(Some("refs/heads/main"), &sig, &sig, "c", &tree, &parents)
            .unwrap()
    }

    #[test]
    fn a_branch_that_moved_meanwhile_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        let first = commit_file(&repo, None, "a.txt", "a\n");
        let stale = Branch {
            refname: "refs/heads/main".into(),
            tip: Some(first),
        };
        let second = commit_file(&repo, Some(first), "b.txt", "b\n");
        let blob = repo.blob(b"memory\n").unwrap();
        let updates = [TeamUpdate {
            path: ".qwen/team-memory/x.md".into(),
            file: Some(TreeFile {
                id: blob,
                mode: git2::FileMode::Blob,
            }),
        }];
        let done = commit_team_dir(
            &repo,
            &stale,
            ".qwen/team-memory",
            &updates,
            &HashMap::new(),
            &settings(),
        )
        .unwrap();
        assert_eq!(done.result, CommitResult::HeadMoved);
        assert_eq!(repo.refname_to_id("refs/heads/main").unwrap(), second);
        assert!(!index_pending(&repo));

        let fresh = Branch {
            refname: "refs/heads/main".into(),
            tip: Some(second),
        };
        let done = commit_team_dir(
            &repo,
            &fresh,
            ".qwen/team-memory",
            &updates,
            &HashMap::new(),
            &settings(),
        )
        .unwrap();
        let CommitResult::Committed(id) = done.result else {
            panic!("{done:?}");
        };
        let commit = repo.find_commit(id).unwrap();
        assert!(crate::git::replay::is_sync_commit(&repo, &commit).unwrap());
        assert_eq!(commit.parent_id(0).unwrap(), second);
        let tree = commit.tree().unwrap();
        assert!(tree.get_path(Path::new("b.txt")).is_ok());
        assert!(tree.get_path(Path::new(".qwen/team-memory/x.md")).is_ok());
        assert_eq!(done.index, StagingUpdate::Written);
    }
}
