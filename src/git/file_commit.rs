//! Committing one file outside the team folder — the `.gitignore` lines `teammem init
//! --fix-gitignore` adds — as `git commit --only <path>` would, but with no hook run: the new
//! tree is the tip's tree with that one file replaced, the branch moves by compare-and-swap,
//! then the file's index entry follows. Whatever the user staged elsewhere is neither committed
//! nor disturbed.
//!
//! Only a file the user has not touched is committed this way (its index entry and its bytes on
//! disk are the tip's): then the commit holds exactly the lines teammem added. The index entry
//! is written by `git update-index`, which keeps every index form git has (split, sparse, v4).

use std::time::Duration;

use git2::{FileMode, ObjectType, Oid, Repository};

use super::GitError;
use super::cli::{local_command, run_local};
use super::commit::{self, CommitResult, CommitSettings, TeamUpdate};
use super::preflight::Branch;
use super::remote::Deadline;
use super::staging_index::git_cli::index_info;
use super::staging_index::update::StagingUpdate;
use super::status::TreeFile;

/// How long the git CLI may take to read or write the one index entry.
const INDEX_BUDGET: Duration = Duration::from_secs(10);

/// Whether `path` (relative to the work tree, `/`-separated) is as the tip of `branch` has it:
/// its index entry is the tip's (or both have none), and `on_disk` — the file's bytes, `None`
/// when it does not exist — hash to the tip's blob. `false` on an unborn branch.
pub fn untouched_since_tip(
    repo: &Repository,
    branch: &Branch,
    path: &str,
    on_disk: Option<&[u8]>,
) -> Result<bool, GitError> {
    let Some(tip) = branch.tip else {
        return Ok(false);
    };
    let at_tip = tip_entry(repo, tip, path)?;
    let disk = match on_disk {
        Some(bytes) => Some(
            Oid::hash_object(ObjectType::Blob, bytes)
                .map_err(|e| GitError::git(format!("hashing {path}"), e))?,
        ),
        None => None,
    };
    if disk != at_tip.map(|f| f.id) {
        return Ok(false);
    }
    Ok(index_entry(repo, path)? == at_tip.map(|f| (octal(f.mode), f.id.to_string())))
}

/// Commits `bytes` as `path` on `branch` with `message`, then sets the file's index entry to
/// the committed blob. The branch moves only if it still points at `branch.tip` and HEAD still
/// names it.
pub fn commit_file(
    repo: &Repository,
    branch: &Branch,
    path: &str,
    bytes: &[u8],
    message: &str,
    settings: &CommitSettings,
) -> Result<(CommitResult, StagingUpdate), GitError> {
    let Some(tip) = branch.tip else {
        return Err(GitError::Cli {
            context: format!("committing {path}"),
            message: format!("{} has no commit yet", branch.refname),
        });
    };
    let parent = repo
        .find_commit(tip)
        .map_err(|e| GitError::git(format!("reading {}", branch.refname), e))?;
    let baseline = parent
        .tree()
        .map_err(|e| GitError::git(format!("reading {}'s tree", branch.refname), e))?;
    let mode = tip_entry(repo, tip, path)?.map_or(FileMode::Blob, |f| f.mode);
    let id = repo
        .blob(bytes)
        .map_err(|e| GitError::git(format!("storing {path}"), e))?;
    let update = TeamUpdate {
        path: path.to_string(),
        file: Some(TreeFile { id, mode }),
    };
    let tree = commit::updated_tree(repo, &baseline, &[update])?;
    if tree.id() == baseline.id() {
        return Ok((CommitResult::NothingToCommit, StagingUpdate::Unchanged));
    }
    let commit = match commit::write_commit(repo, Some(&parent), &tree, message, settings)? {
        Ok(commit) => commit,
        Err(not_signed) => return Ok((not_signed, StagingUpdate::Unchanged)),
    };
    if !commit::head_names(repo, &branch.refname) {
        return Ok((CommitResult::HeadMoved, StagingUpdate::Unchanged));
    }
    let subject = message.lines().next().unwrap_or_default();
    if let Some(refused) =
        commit::move_branch_to(repo, branch, commit, &format!("commit: {subject}"))?
    {
        return Ok((refused, StagingUpdate::Unchanged));
    }
    let index = set_index_entry(repo, path, mode, id)?;
    Ok((CommitResult::Committed(commit), index))
}

/// `path`'s blob and mode in the tree of commit `tip`, if it has one.
fn tip_entry(repo: &Repository, tip: Oid, path: &str) -> Result<Option<TreeFile>, GitError> {
    let tree = repo
        .find_commit(tip)
        .and_then(|c| c.tree())
        .map_err(|e| GitError::git(format!("reading the tree of {tip}"), e))?;
    let Ok(entry) = tree.get_path(std::path::Path::new(path)) else {
        return Ok(None);
    };
    if entry.kind() != Some(ObjectType::Blob) {
        return Ok(None);
    }
    Ok(Some(TreeFile {
        id: entry.id(),
        mode: match entry.filemode() {
            0o100755 => FileMode::BlobExecutable,
            0o120000 => FileMode::Link,
            _ => FileMode::Blob,
        },
    }))
}

/// `path`'s index entry as git lists it (mode and id), `None` when it has none; an entry in
/// conflict (stage other than 0) is reported with its stage so it never equals a tip entry.
fn index_entry(repo: &Repository, path: &str) -> Result<Option<(String, String)>, GitError> {
    let deadline = Deadline::after(INDEX_BUDGET);
    let mut cmd = local_command(repo);
    cmd.args(["ls-files", "--stage", "-z", "--"])
        .arg(format!(":(literal){path}"));
    let run = run_local(
        cmd,
        b"",
        &deadline,
        &format!("reading {path}'s index entry (git)"),
    )?;
    if !run.success {
        return Err(GitError::Cli {
            context: format!("reading {path}'s index entry (git ls-files)"),
            message: run.stderr.trim().to_string(),
        });
    }
    let mut records = run.stdout.split('\0').filter(|r| !r.is_empty());
    let Some(record) = records.next() else {
        return Ok(None);
    };
    let meta = record.split('\t').next().unwrap_or_default();
    let mut fields = meta.split(' ');
    let (mode, id, stage) = (
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
        fields.next().unwrap_or_default(),
    );
    if stage != "0" || records.next().is_some() {
        return Ok(Some((format!("{mode} stage {stage}"), id.to_string())));
    }
    Ok(Some((mode.to_string(), id.to_string())))
}

/// Sets `path`'s index entry to `id` through `git update-index --index-info`, touching no
/// other entry. The entry carries no stat data: `git status` compares the file's content once
/// and sees it clean.
fn set_index_entry(
    repo: &Repository,
    path: &str,
    mode: FileMode,
    id: Oid,
) -> Result<StagingUpdate, GitError> {
    let input = format!("{} {id}\t{path}\0", octal(mode));
    index_info(
        repo,
        &input,
        &Deadline::after(INDEX_BUDGET),
        &format!("{path}'s index entry"),
    )
}

/// A mode as git prints it (`100644`).
fn octal(mode: FileMode) -> String {
    format!("{:o}", u32::from(mode))
}
