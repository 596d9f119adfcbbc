//! Moving the current branch forward with a safe checkout: exactly what
//! `git merge --ff-only` allows, and nothing when a local change is in the way.
//!
//! The work tree and index are updated by a two-way checkout from the old tip to the new one
//! (libgit2's "safe" mode, like git's `read-tree -m -u`): files the move does not touch keep
//! their local and staged changes; a changed file, or an untracked or ignored file the move
//! would overwrite, blocks the whole move before anything is written (libgit2, like git,
//! would replace an ignored file: [`untracked_in_the_way`] refuses it first). The branch then moves by
//! compare-and-swap; if it moved meanwhile, the checkout is undone.
//!
//! libgit2 runs no external filter drivers (`filter.<name>.smudge`, e.g. Git LFS), no hooks
//! (`post-merge`, `post-checkout`) and no fsmonitor; git would run them.

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use git2::build::CheckoutBuilder;
use git2::{CheckoutNotificationType, Oid, Repository};

use super::helper;
use super::recovery::checkout::{self, CheckoutNote};
use super::recovery::ref_move::RefIntent;
use super::remote::Deadline;
use super::{GitError, history};

/// What a move of the branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchMove {
    /// The branch was already at the target.
    UpToDate,
    /// The branch, index and work tree now stand at the target.
    Moved {
        /// The old tip (`None` for an unborn branch).
        from: Option<Oid>,
        /// The new tip.
        to: Oid,
    },
    /// Local changes are in the way (`pull-blocked`); nothing was changed.
    Blocked {
        /// The paths in the way, relative to the work tree.
        paths: Vec<String>,
    },
    /// The target does not contain the current tip: `git merge --ff-only` would refuse.
    NotFastForward,
    /// The branch moved while this ran (another git process); nothing was changed.
    BranchMoved,
    /// The budget ran out in the middle of the checkout: the helper doing it was stopped, and
    /// the next sync finishes the move (or rolls it back).
    OutOfTime,
}

/// Where a checkout runs: in the helper process, killed at the deadline, or in this process.
#[derive(Debug, Clone, Copy)]
pub struct CheckoutBudget<'a> {
    /// When the sync must be over.
    pub deadline: Deadline,
    /// The teammem binary to run the checkout in; `None` runs it here, unbounded.
    pub helper: Option<&'a Path>,
}

impl CheckoutBudget<'_> {
    /// A checkout in this process with no deadline (library use, tests).
    pub fn unbounded() -> CheckoutBudget<'static> {
        CheckoutBudget {
            deadline: Deadline::after(Duration::from_secs(u32::MAX.into())),
            helper: None,
        }
    }
}

/// Fast-forwards `branch_ref` (the checked-out branch) to `target`, when `target` contains
/// its tip, as `git merge --ff-only` would.
pub fn fast_forward(
    repo: &Repository,
    branch_ref: &str,
    target: Oid,
    budget: &CheckoutBudget<'_>,
) -> Result<BranchMove, GitError> {
    let from = current_tip(repo, branch_ref)?;
    if let Some(from) = from {
        if from == target {
            return Ok(BranchMove::UpToDate);
        }
        if !history::contains(repo, target, from)? {
            return Ok(BranchMove::NotFastForward);
        }
    }
    move_branch(repo, branch_ref, from, target, budget)
}

/// Moves the checked-out `branch_ref` from `from` to `to` with a safe checkout and a
/// compare-and-swap on the ref. Used for fast-forwards and to land replayed sync commits
/// (whose old tip differs from the new one only inside the team folder). With a helper, the
/// checkout is stopped at the deadline (`OutOfTime`) and the next sync finishes it.
pub fn move_branch(
    repo: &Repository,
    branch_ref: &str,
    from: Option<Oid>,
    to: Oid,
    budget: &CheckoutBudget<'_>,
) -> Result<BranchMove, GitError> {
    if super::fast_forward_cli::index_unreadable(repo) {
        // A split or sparse index: git moves the branch, index and files itself.
        return super::fast_forward_cli::move_branch(repo, branch_ref, from, to, &budget.deadline);
    }
    let Some(program) = budget.helper else {
        return move_branch_in_process(repo, branch_ref, from, to);
    };
    if small_move(repo, from, to) {
        // Starting the helper would cost more than the checkout; a move this small cannot
        // outlast the budget by more than the margin.
        return move_branch_in_process(repo, branch_ref, from, to);
    }
    let job = helper::Job::MoveBranch {
        branch_ref: branch_ref.to_string(),
        from: from.map(|o| o.to_string()),
        to: to.to_string(),
    };
    match helper::run(program, repo, job, budget.deadline, None) {
        Ok(helper::HelperReply::Moved(wire)) => wire.outcome().map_err(|e| helper_error(to, e)),
        Ok(helper::HelperReply::Error(e)) => Err(helper_error(to, e)),
        Ok(other) => Err(helper_error(to, format!("the helper answered {other:?}"))),
        Err(helper::Abandoned::Timeout) => Ok(BranchMove::OutOfTime),
        Err(helper::Abandoned::Failed(e)) => Err(helper_error(to, e)),
    }
}

/// A move that writes at most this many files is checked out in this process.
const SMALL_MOVE_FILES: usize = 64;

/// A move that writes at most this many bytes is checked out in this process.
const SMALL_MOVE_BYTES: usize = 1 << 20;

/// Whether the move from `from` to `to` writes only a few small files (a replayed sync
/// commit, a teammate's new memory), so that it is done in this process.
fn small_move(repo: &Repository, from: Option<Oid>, to: Oid) -> bool {
    let tree = |id: Oid| repo.find_commit(id).and_then(|c| c.tree()).ok();
    let (Some(from_tree), Some(to_tree)) = (from.and_then(tree), tree(to)) else {
        return false;
    };
    let Ok(diff) = repo.diff_tree_to_tree(Some(&from_tree), Some(&to_tree), None) else {
        return false;
    };
    if diff.deltas().len() > SMALL_MOVE_FILES {
        return false;
    }
    let Ok(odb) = repo.odb() else {
        return false;
    };
    let mut bytes = 0usize;
    for delta in diff.deltas() {
        let id = delta.new_file().id();
        if id.is_zero() {
            continue;
        }
        match odb.read_header(id) {
            Ok((size, _)) => bytes = bytes.saturating_add(size),
            Err(_) => return false,
        }
        if bytes > SMALL_MOVE_BYTES {
            return false;
        }
    }
    true
}

/// Finishes, or rolls back, a checkout that a killed sync left half-done (see
/// [`checkout`](super::recovery::checkout)). Returns what was done, for the report; `OutOfTime` when the budget
/// ran out again (the next sync goes on).
pub fn resume_interrupted(
    repo: &Repository,
    budget: &CheckoutBudget<'_>,
) -> Result<Resumed, GitError> {
    if !checkout::interrupted(repo) {
        return Ok(Resumed::Nothing);
    }
    let Some(program) = budget.helper else {
        return Ok(checkout::resume_in_process(repo)?.map_or(Resumed::Nothing, Resumed::Done));
    };
    let fail = |e: String| GitError::Io {
        path: repo.commondir().join(crate::git::recovery::CHECKOUT_NOTE),
        source: std::io::Error::other(format!("finishing an interrupted pull: {e}")),
    };
    match helper::run(
        program,
        repo,
        helper::Job::ResumeCheckout,
        budget.deadline,
        None,
    ) {
        Ok(helper::HelperReply::Resumed(said)) => Ok(said.map_or(Resumed::Nothing, Resumed::Done)),
        Ok(helper::HelperReply::Error(e)) => Err(fail(e)),
        Ok(other) => Err(fail(format!("the helper answered {other:?}"))),
        Err(helper::Abandoned::Timeout) => Ok(Resumed::OutOfTime),
        Err(helper::Abandoned::Failed(e)) => Err(fail(e)),
    }
}

/// What [`resume_interrupted`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resumed {
    /// No checkout was left half-done.
    Nothing,
    /// It was finished or rolled back; the sentence says which.
    Done(String),
    /// The budget ran out first; the next sync goes on.
    OutOfTime,
}

fn helper_error(to: Oid, message: String) -> GitError {
    GitError::Io {
        path: std::path::PathBuf::from(format!("checkout of {to}")),
        source: std::io::Error::other(message),
    }
}

/// The branch move itself, in this process: the checkout is announced in the checkout note
/// first, so a kill in the middle is finished by the next sync.
pub(crate) fn move_branch_in_process(
    repo: &Repository,
    branch_ref: &str,
    from: Option<Oid>,
    to: Oid,
) -> Result<BranchMove, GitError> {
    if current_tip(repo, branch_ref)? != from {
        return Ok(BranchMove::BranchMoved);
    }
    if from == Some(to) {
        return Ok(BranchMove::UpToDate);
    }
    let target = repo
        .find_commit(to)
        .map_err(|e| GitError::git(format!("reading commit {to}"), e))?;
    let staged = staged_in_the_way(repo, from, &target)?;
    if !staged.is_empty() {
        return Ok(BranchMove::Blocked { paths: staged });
    }
    let untracked = untracked_in_the_way(repo, from, &target)?;
    if !untracked.is_empty() {
        return Ok(BranchMove::Blocked { paths: untracked });
    }
    let note = CheckoutNote::announce(repo, branch_ref, from, to)?;
    let in_the_way = RefCell::new(Vec::new());
    let checked_out = {
        let mut checkout = CheckoutBuilder::new();
        checkout
            .safe()
            .notify_on(CheckoutNotificationType::CONFLICT)
            .notify(|_, path, _, _, _| {
                if let Some(path) = path {
                    in_the_way
                        .borrow_mut()
                        .push(path.to_string_lossy().into_owned());
                }
                true
            });
        repo.checkout_tree(target.as_object(), Some(&mut checkout))
    };
    match checked_out {
        Ok(()) => {}
        Err(err) if err.code() == git2::ErrorCode::Conflict || !in_the_way.borrow().is_empty() => {
            // Refused before anything was written.
            note.done();
            let mut paths = in_the_way.into_inner();
            paths.sort();
            paths.dedup();
            return Ok(BranchMove::Blocked { paths });
        }
        // Some files may be written: the note stays, and the next sync finishes the move.
        Err(err) => return Err(GitError::git(format!("checking out {to}"), err)),
    }
    let message = format!("teammem: fast-forward to {to}");
    let intent = RefIntent::announce(repo, branch_ref, Some(to))?;
    let moved = match from {
        Some(from) => repo.reference_matching(branch_ref, to, true, from, &message),
        None => repo.reference(branch_ref, to, false, &message),
    };
    drop(intent);
    if moved.is_ok() {
        note.done();
        return Ok(BranchMove::Moved { from, to });
    }
    // Another git command moved the branch between the check and the swap (teammem's own
    // syncs are serialised by the sync lock): try to put the files back as they were. The
    // checkout's baseline is HEAD, which now names that other commit, so files it changed
    // may stay as checked out; `git status` then shows them, nothing is deleted.
    if let Some(from) = from {
        if let Ok(previous) = repo.find_commit(from) {
            let mut back = CheckoutBuilder::new();
            back.safe();
            let _ = repo.checkout_tree(previous.as_object(), Some(&mut back));
        }
    }
    note.done();
    Ok(BranchMove::BranchMoved)
}

/// The trees a move goes between: `from`'s (`None` for an unborn branch) and `target`'s.
fn move_trees<'r>(
    repo: &'r Repository,
    from: Option<Oid>,
    target: &git2::Commit<'r>,
    context: &str,
) -> Result<(Option<git2::Tree<'r>>, git2::Tree<'r>), GitError> {
    let old_tree = match from {
        Some(from) => Some(
            repo.find_commit(from)
                .and_then(|c| c.tree())
                .map_err(|e| GitError::git(context, e))?,
        ),
        None => None,
    };
    let new_tree = target.tree().map_err(|e| GitError::git(context, e))?;
    Ok((old_tree, new_tree))
}

/// Staged changes to files the move changes. libgit2's safe checkout compares the work tree
/// with the old tree but lets the new tree overwrite an index entry whose file matches HEAD
/// again (`git add` then an edit back), dropping the staged version; git refuses. So does this.
pub(crate) fn staged_in_the_way(
    repo: &Repository,
    from: Option<Oid>,
    target: &git2::Commit<'_>,
) -> Result<Vec<String>, GitError> {
    let context = "comparing the index with the pull";
    let (old_tree, new_tree) = move_trees(repo, from, target, context)?;
    let paths_of = |diff: &git2::Diff<'_>| -> HashSet<String> {
        diff.deltas()
            .flat_map(|d| [d.old_file().path(), d.new_file().path()])
            .flatten()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    let pulled = repo
        .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), None)
        .map_err(|e| GitError::git(context, e))?;
    let pulled = paths_of(&pulled);
    if pulled.is_empty() {
        return Ok(Vec::new());
    }
    let staged = repo
        .diff_tree_to_index(old_tree.as_ref(), None, None)
        .map_err(|e| GitError::git(context, e))?;
    let mut in_the_way: Vec<String> = paths_of(&staged).intersection(&pulled).cloned().collect();
    in_the_way.sort();
    Ok(in_the_way)
}

/// Files in the work tree that the move would write over although git does not track them:
/// for each path the move adds, a file, symlink or folder already there (untracked or
/// ignored), and a file or symlink where the move needs a folder. libgit2's safe checkout
/// replaces ignored files (a teammate's `.qwen/settings.json` would replace the user's own,
/// whose hooks then run), and so does `git merge --ff-only`; this refuses them too. An
/// untracked file is refused even when its bytes are the new ones, as git refuses it
/// ("untracked working tree files would be overwritten").
pub(crate) fn untracked_in_the_way(
    repo: &Repository,
    from: Option<Oid>,
    target: &git2::Commit<'_>,
) -> Result<Vec<String>, GitError> {
    let Some(workdir) = repo.workdir() else {
        return Ok(Vec::new());
    };
    let context = "looking for untracked files in the way of the pull";
    let (old_tree, new_tree) = move_trees(repo, from, target, context)?;
    let pulled = repo
        .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), None)
        .map_err(|e| GitError::git(context, e))?;
    let tracked = |rel: &Path| {
        old_tree
            .as_ref()
            .and_then(|t| t.get_path(rel).ok())
            .map(|entry| entry.kind())
    };
    let mut in_the_way = Vec::new();
    let mut seen = HashSet::new();
    let mut modes = crate::git::tree_entries::SideModes::new(repo, Some(&new_tree));
    for delta in pulled.deltas() {
        let mode = modes.mode(&delta.new_file());
        if delta.status() != git2::Delta::Added || mode == Some(i32::from(git2::FileMode::Commit)) {
            continue;
        }
        let Some(rel) = delta.new_file().path() else {
            continue;
        };
        // A folder the move needs, where the work tree has an untracked file or symlink.
        for folder in rel.ancestors().skip(1) {
            if folder.as_os_str().is_empty() || !seen.insert(folder.to_path_buf()) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(workdir.join(folder)) else {
                continue;
            };
            if !meta.is_dir() && tracked(folder).is_none() {
                in_the_way.push(described(folder));
            }
        }
        let Ok(meta) = std::fs::symlink_metadata(workdir.join(rel)) else {
            continue;
        };
        if meta.is_dir() && tracked(rel) == Some(Some(git2::ObjectType::Tree)) {
            // A tracked folder the move replaces by a file: what it holds beyond the old tree.
            if let Some(tree) = old_tree.as_ref() {
                untracked_inside(tree, workdir, rel, &mut in_the_way);
            }
            continue;
        }
        in_the_way.push(described(rel));
    }
    in_the_way.sort();
    in_the_way.dedup();
    Ok(in_the_way)
}

/// Most paths named under a tracked folder the move replaces: enough to say what to move away.
const NAMED_INSIDE: usize = 20;

/// Adds the paths under the work tree's folder `rel` that the old tree lacks.
fn untracked_inside(tree: &git2::Tree<'_>, workdir: &Path, rel: &Path, out: &mut Vec<String>) {
    let mut folders = vec![rel.to_path_buf()];
    let mut named = 0;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(workdir.join(&folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = folder.join(entry.file_name());
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            match tree.get_path(&path).map(|e| e.kind()) {
                Ok(Some(git2::ObjectType::Tree)) if meta.is_dir() => folders.push(path),
                Ok(_) => {}
                Err(_) => {
                    out.push(described(&path));
                    named += 1;
                    if named >= NAMED_INSIDE {
                        return;
                    }
                }
            }
        }
    }
}

/// A path relative to the work tree, as the report names it.
fn described(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

pub(crate) fn current_tip(repo: &Repository, branch_ref: &str) -> Result<Option<Oid>, GitError> {
    match repo.refname_to_id(branch_ref) {
        Ok(oid) => Ok(Some(oid)),
        Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(err) => Err(GitError::git(format!("reading {branch_ref}"), err)),
    }
}
