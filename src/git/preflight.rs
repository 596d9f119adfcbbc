//! Preflight: whether the repository is in a state where committing the team folder is safe,
//! checked before anything is written.
//!
//! libgit2 would happily commit in the middle of a rebase, and it does not understand sparse
//! checkouts: a file left out of the work tree by `git sparse-checkout` looks deleted to it. Both
//! are refused here instead.

use std::fmt;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use git2::{Index, Oid, Repository, RepositoryState};

use super::GitError;
use super::staging_index::read::{self as index_file, FolderEntries};

/// The branch a sync commits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// The full ref name, for example `refs/heads/main`.
    pub refname: String,
    /// The commit the branch points at; `None` on an unborn branch (no commit yet).
    pub tip: Option<Oid>,
}

/// Why the repository is not in a state to sync now. Nothing has been touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// HEAD points at a commit, not a branch.
    DetachedHead,
    /// A merge, rebase, cherry-pick, revert, `git am` or bisect is under way.
    OperationInProgress(Operation),
    /// Files of the team folder are left out of the work tree (the path shown).
    SparseCheckout(String),
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::DetachedHead => f.write_str(
                "HEAD is detached; check out a branch (`git switch <branch>`) to sync team memory",
            ),
            Blocker::OperationInProgress(operation) => write!(
                f,
                "{} is in progress; {}, then sync again",
                operation.name(),
                operation.remedy()
            ),
            Blocker::SparseCheckout(path) => write!(
                f,
                "{path} is left out of the work tree by a sparse checkout (skip-worktree); \
                 add the team folder to it (`git sparse-checkout add .qwen/team-memory`)"
            ),
        }
    }
}

/// An operation git left unfinished in the work tree, as git's own state files show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `MERGE_HEAD`: a merge stopped before its commit.
    Merge,
    /// `rebase-merge/` or `rebase-apply/rebasing`.
    Rebase,
    /// `CHERRY_PICK_HEAD`, or a cherry-pick sequence's `sequencer/` (`git cherry-pick A B`
    /// stopped between its commits, `--no-commit` too).
    CherryPick,
    /// `REVERT_HEAD`, or a revert sequence's `sequencer/`.
    Revert,
    /// `rebase-apply/applying`: `git am`.
    Am,
    /// `rebase-apply/` alone: `git am` or an older `git rebase`, git's files do not say which.
    AmOrRebase,
    /// `BISECT_LOG`.
    Bisect,
}

impl Operation {
    /// What is in progress, as the user would say it.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Merge => "a merge",
            Operation::Rebase => "a rebase",
            Operation::CherryPick => "a cherry-pick",
            Operation::Revert => "a revert",
            Operation::Am => "a `git am`",
            Operation::AmOrRebase => "a `git am` or `git rebase` (.git/rebase-apply)",
            Operation::Bisect => "a bisect",
        }
    }

    /// The commands that finish or abort it.
    pub fn remedy(self) -> &'static str {
        match self {
            Operation::Merge => {
                "finish it with `git merge --continue` (after resolving any conflict) or abort \
                 it with `git merge --abort`"
            }
            Operation::Rebase => {
                "finish it with `git rebase --continue` or abort it with `git rebase --abort`"
            }
            Operation::CherryPick => {
                "finish it with `git cherry-pick --continue` or abort it with \
                 `git cherry-pick --abort`"
            }
            Operation::Revert => {
                "finish it with `git revert --continue` or abort it with `git revert --abort`"
            }
            Operation::Am => "finish it with `git am --continue` or abort it with `git am --abort`",
            Operation::AmOrRebase => {
                "finish it with `git am --continue` or `git rebase --continue`, or abort it \
                 with `git am --abort` or `git rebase --abort`"
            }
            Operation::Bisect => "end it with `git bisect reset`",
        }
    }
}

/// The repository's state as far as a sync cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preflight {
    /// Safe to go on, on this branch.
    Ready(Branch),
    /// Not now, and why.
    Blocked(Blocker),
}

/// Checks HEAD, any operation in progress and sparse checkouts covering `team_dir` (relative to
/// the work tree, `/`-separated).
pub fn preflight(repo: &Repository, team_dir: &str) -> Result<Preflight, GitError> {
    // A rebase detaches HEAD: name the rebase, not the detached HEAD.
    if let Some(what) = operation_in_progress(repo.state()).or_else(|| sequence_left(repo.path())) {
        return Ok(Preflight::Blocked(Blocker::OperationInProgress(what)));
    }
    let head = repo
        .find_reference("HEAD")
        .map_err(|e| GitError::git("reading HEAD", e))?;
    let target = head
        .symbolic_target()
        .map_err(|e| GitError::git("reading HEAD", e))?;
    let Some(target) = target else {
        return Ok(Preflight::Blocked(Blocker::DetachedHead));
    };
    if !target.starts_with("refs/heads/") {
        return Ok(Preflight::Blocked(Blocker::DetachedHead));
    }
    let refname = target.to_string();
    if let Some(path) = sparse_entry(repo, team_dir)? {
        return Ok(Preflight::Blocked(Blocker::SparseCheckout(path)));
    }
    let tip = match repo.refname_to_id(&refname) {
        Ok(oid) => Some(oid),
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(GitError::git(format!("reading {refname}"), e)),
    };
    Ok(Preflight::Ready(Branch { refname, tip }))
}

fn operation_in_progress(state: RepositoryState) -> Option<Operation> {
    match state {
        RepositoryState::Clean => None,
        RepositoryState::Merge => Some(Operation::Merge),
        RepositoryState::Revert | RepositoryState::RevertSequence => Some(Operation::Revert),
        RepositoryState::CherryPick | RepositoryState::CherryPickSequence => {
            Some(Operation::CherryPick)
        }
        RepositoryState::Bisect => Some(Operation::Bisect),
        RepositoryState::Rebase
        | RepositoryState::RebaseInteractive
        | RepositoryState::RebaseMerge => Some(Operation::Rebase),
        RepositoryState::ApplyMailbox => Some(Operation::Am),
        RepositoryState::ApplyMailboxOrRebase => Some(Operation::AmOrRebase),
    }
}

/// The operation git's own files in `git_dir` show under way, read without libgit2 (for a
/// repository it cannot open, `git/cli_repo/`), in the order git's status names them.
pub fn operation_in_files(git_dir: &Path) -> Option<Operation> {
    let has = |name: &str| git_dir.join(name).exists();
    if has("rebase-merge") {
        return Some(Operation::Rebase);
    }
    if has("rebase-apply") {
        return Some(if has("rebase-apply/rebasing") {
            Operation::Rebase
        } else if has("rebase-apply/applying") {
            Operation::Am
        } else {
            Operation::AmOrRebase
        });
    }
    if has("MERGE_HEAD") {
        return Some(Operation::Merge);
    }
    if has("CHERRY_PICK_HEAD") {
        return Some(Operation::CherryPick);
    }
    if has("REVERT_HEAD") {
        return Some(Operation::Revert);
    }
    if has("BISECT_LOG") {
        return Some(Operation::Bisect);
    }
    sequence_left(git_dir)
}

/// A multi-commit `git cherry-pick A B` or `git revert A B` stopped between its commits, seen
/// from its `sequencer/` folder alone: libgit2 names the operation only while
/// `CHERRY_PICK_HEAD` or `REVERT_HEAD` is there, and `--no-commit` writes neither, nor is it
/// left once the user commits a resolved pick. git's status reads the todo list's next command
/// for which one it is; so does this (`revert`, else a cherry-pick).
fn sequence_left(git_dir: &Path) -> Option<Operation> {
    let sequencer = git_dir.join("sequencer");
    if !sequencer.is_dir() {
        return None;
    }
    let todo = fs::read_to_string(sequencer.join("todo")).unwrap_or_default();
    let next = todo
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .and_then(|line| line.split_whitespace().next());
    Some(match next {
        Some("revert") => Operation::Revert,
        _ => Operation::CherryPick,
    })
}

/// Finds an index entry with the skip-worktree bit under `team_dir` (or a sparse-index folder
/// entry holding it). Skip-worktree needs the extended flags of index version 3 or later, so a
/// version 2 index without `core.sparseCheckout` is not read at all. Otherwise only the team
/// folder's entries are read, straight from the file ([`index_file`]): libgit2 would load the
/// whole index, 50 ms of a sync with nothing to do in a 100,000-file repository whose index is
/// version 4 (`feature.manyFiles`). libgit2 reads what that reader leaves to it (a sparse index).
fn sparse_entry(repo: &Repository, team_dir: &str) -> Result<Option<String>, GitError> {
    let index_path = repo.path().join("index");
    let sparse_config = repo
        .config()
        .and_then(|c| c.get_bool("core.sparseCheckout"))
        .unwrap_or(false);
    if !sparse_config && index_version(&index_path) < 3 {
        return Ok(None);
    }
    let prefix = format!("{team_dir}/");
    let id_len = match repo.object_format() {
        git2::ObjectFormat::Sha1 => 20,
        _ => 32,
    };
    match index_file::folder_entries(&index_path, prefix.as_bytes(), id_len) {
        Ok(FolderEntries::Read(entries)) => {
            let skipped = entries.into_iter().find(|e| e.skip_worktree);
            return Ok(skipped.map(|e| String::from_utf8_lossy(&e.path).into_owned()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Ok(FolderEntries::Unsupported(_)) | Err(_) => {}
    }
    let index = match Index::open(&index_path) {
        Ok(index) => index,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) if e.message().contains("unsupported mandatory extension") => {
            // A sparse or split index: git lists the skipped entries itself.
            return skipped_by_git(repo, team_dir);
        }
        Err(e) => return Err(GitError::git("reading the index", e)),
    };
    let prefix = format!("{team_dir}/");
    for entry in index.iter() {
        if entry.flags_extended & SKIP_WORKTREE == 0 {
            continue;
        }
        let path = String::from_utf8_lossy(&entry.path);
        let holds_team_dir = prefix.starts_with(path.trim_end_matches('/'))
            && prefix.as_bytes().get(path.trim_end_matches('/').len()) == Some(&b'/');
        if path.starts_with(&prefix) || holds_team_dir {
            return Ok(Some(path.into_owned()));
        }
    }
    Ok(None)
}

/// [`sparse_entry`] through `git ls-files -t --sparse`, for index forms libgit2 cannot
/// read: the first skip-worktree entry (`S`) in the team folder, or a sparse folder holding it.
fn skipped_by_git(repo: &Repository, team_dir: &str) -> Result<Option<String>, GitError> {
    let deadline = super::remote::Deadline::after(std::time::Duration::from_secs(10));
    let mut cmd = super::cli::local_command(repo);
    cmd.args(["ls-files", "-t", "-z", "--sparse"]);
    let run = super::cli::run_local(cmd, b"", &deadline, "listing skipped index entries (git)")?;
    if !run.success {
        return Err(GitError::Cli {
            context: "listing skipped index entries (git ls-files)".into(),
            message: run.stderr.trim().to_string(),
        });
    }
    let prefix = format!("{team_dir}/");
    for record in run.stdout.split('\0') {
        let Some(path) = record.strip_prefix("S ") else {
            continue;
        };
        let folder = path.trim_end_matches('/');
        let holds_team_dir =
            prefix.starts_with(folder) && prefix.as_bytes().get(folder.len()) == Some(&b'/');
        if path.starts_with(&prefix) || holds_team_dir {
            return Ok(Some(path.to_string()));
        }
    }
    Ok(None)
}

/// The skip-worktree bit of an index entry's extended flags.
const SKIP_WORKTREE: u16 = 1 << 14;

/// The version number in an index file's header; 0 when there is none.
fn index_version(path: &Path) -> u32 {
    use std::io::Read;
    let mut header = [0u8; 8];
    let read = fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    match read {
        Ok(()) if &header[..4] == b"DIRC" => {
            u32::from_be_bytes([header[4], header[5], header[6], header[7]])
        }
        _ => 0,
    }
}

/// Waits up to `patience` for another git process to release `index.lock`. Returns whether it
/// is free. The lock is never removed here: it belongs to someone else.
pub fn wait_for_index_lock(repo: &Repository, patience: Duration) -> bool {
    let lock = repo.path().join("index.lock");
    let start = Instant::now();
    loop {
        if !lock.exists() {
            return true;
        }
        if start.elapsed() >= patience {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}
