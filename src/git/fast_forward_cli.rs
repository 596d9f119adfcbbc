//! Moving the current branch through git itself, for the index forms libgit2 cannot read (a
//! split or sparse index): `git read-tree -m -u OLD NEW` — the two-tree merge that
//! `git merge --ff-only` does, which refuses before writing anything when a local or staged
//! change is in the way — after teammem's own refusal of an untracked or ignored file the move
//! would overwrite, then `git update-ref NEW OLD` (compare-and-swap; the files are moved back
//! when the branch moved meanwhile). Under the caller's deadline, no hooks, no fsmonitor.

use git2::{Oid, Repository};

use super::GitError;
use super::cli::{local_command, run_local};
use super::fast_forward::{BranchMove, current_tip, untracked_in_the_way};
use super::remote::Deadline;

/// Whether libgit2 cannot read this repository's index (so the move goes through git).
pub fn index_unreadable(repo: &Repository) -> bool {
    match repo.index() {
        Ok(_) => false,
        Err(err) => err.message().contains("unsupported mandatory extension"),
    }
}

/// Moves the checked-out `branch_ref` from `from` to `to` through git (see the module doc).
pub fn move_branch(
    repo: &Repository,
    branch_ref: &str,
    from: Option<Oid>,
    to: Oid,
    deadline: &Deadline,
) -> Result<BranchMove, GitError> {
    if current_tip(repo, branch_ref)? != from {
        return Ok(BranchMove::BranchMoved);
    }
    let Some(from) = from else {
        return Err(GitError::Unsupported {
            path: repo.path().display().to_string(),
            what: "an unborn branch with a split or sparse index".into(),
            fix: "make a first commit with git, or run `git update-index --no-split-index`".into(),
        });
    };
    if from == to {
        return Ok(BranchMove::UpToDate);
    }
    let target = repo
        .find_commit(to)
        .map_err(|e| GitError::git(format!("reading commit {to}"), e))?;
    let untracked = untracked_in_the_way(repo, Some(from), &target)?;
    if !untracked.is_empty() {
        return Ok(BranchMove::Blocked { paths: untracked });
    }
    // As `git merge` does first: entries whose stat data is stale (the ones teammem's own
    // index update wrote) are compared by content, so they do not count as local changes.
    let mut refresh = local_command(repo);
    refresh.args(["update-index", "-q", "--refresh"]);
    run_local(
        refresh,
        b"",
        deadline,
        "refreshing the index (git update-index)",
    )?;
    let what = format!("checking out {to} (git read-tree)");
    let mut read_tree = local_command(repo);
    read_tree.args(["read-tree", "-m", "-u", &from.to_string(), &to.to_string()]);
    let run = run_local(read_tree, b"", deadline, &what)?;
    if !run.success {
        let paths = paths_in_the_way(&run.stderr);
        if paths.is_empty() {
            return Err(GitError::Cli {
                context: what,
                message: run.stderr.trim().to_string(),
            });
        }
        return Ok(BranchMove::Blocked { paths });
    }
    let mut update_ref = local_command(repo);
    update_ref.args([
        "update-ref",
        "-m",
        &format!("teammem: fast-forward to {to}"),
        branch_ref,
        &to.to_string(),
        &from.to_string(),
    ]);
    let moved = run_local(
        update_ref,
        b"",
        deadline,
        "moving the branch (git update-ref)",
    )?;
    if moved.success {
        return Ok(BranchMove::Moved {
            from: Some(from),
            to,
        });
    }
    // Another git command moved the branch in between: put the files back as they were.
    let mut back = local_command(repo);
    back.args(["read-tree", "-m", "-u", &to.to_string(), &from.to_string()]);
    let _ = run_local(
        back,
        b"",
        deadline,
        "putting the files back (git read-tree)",
    );
    Ok(BranchMove::BranchMoved)
}

/// The paths git names when it refuses a two-tree merge: the tab-indented lines after "would
/// be overwritten by merge", and `Entry 'PATH' not uptodate`.
pub(crate) fn paths_in_the_way(stderr: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if let Some(path) = line.strip_prefix('\t') {
            paths.push(path.trim().to_string());
        } else {
            // The plumbing's one-path forms: "Entry 'P' not uptodate", "Untracked working
            // tree file 'P' would be overwritten by merge", "Updating 'P' would lose …".
            let quoted = ["Entry '", "working tree file '", "Updating '"]
                .iter()
                .find_map(|lead| line.split(lead).nth(1))
                .and_then(|rest| rest.split_once('\''));
            if let Some((path, _)) = quoted {
                paths.push(path.to_string());
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_git_names_are_read_from_its_refusal() {
        let stderr = "error: Your local changes to the following files would be overwritten \
                      by merge:\n\tsrc/a.rs\n\tsrc/b.rs\nPlease commit your changes or stash them \
                      before you merge.\nerror: Entry 'docs/c.md' not uptodate. Cannot merge.\n\
                      error: Untracked working tree file 'src/d.rs' would be overwritten by \
                      merge.\n";
        assert_eq!(
            paths_in_the_way(stderr),
            ["docs/c.md", "src/a.rs", "src/b.rs", "src/d.rs"]
        );
    }
}
