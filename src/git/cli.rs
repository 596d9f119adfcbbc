//! Running the installed git on the local repository, for the jobs libgit2 cannot do (an index
//! form it cannot read): under a deadline, with the repository named explicitly and nothing
//! planted in it allowed to run — the rules of the `git-cli` transport (`remote/git_cli.rs`).

use std::process::Command;

use git2::Repository;

use super::GitError;
use super::remote::Deadline;
use super::remote::git_cli::{GitProgram, GitRun, run_git};

/// A git command for `repo`: `GIT_DIR` and `GIT_WORK_TREE` as teammem found them, no
/// prompt, and settings that keep the repository's own programs from running (no hooks, no
/// fsmonitor, no automatic gc or maintenance).
pub(crate) fn local_command(repo: &Repository) -> Command {
    let mut cmd = GitProgram::from_process().command();
    cmd.env("GIT_DIR", repo.path());
    match repo.workdir() {
        Some(workdir) => {
            cmd.current_dir(workdir).env("GIT_WORK_TREE", workdir);
        }
        None => {
            cmd.current_dir(repo.path());
        }
    }
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "gc.auto=0",
        "maintenance.auto=false",
    ] {
        cmd.arg("-c").arg(setting);
    }
    cmd
}

/// Runs `cmd` with `input` on stdin until `deadline`; a failure names `what` and git's words.
pub(crate) fn run_local(
    cmd: Command,
    input: &[u8],
    deadline: &Deadline,
    what: &str,
) -> Result<GitRun, GitError> {
    run_git(cmd, input, deadline, what).map_err(|failure| GitError::Cli {
        context: what.to_string(),
        message: failure.message,
    })
}
