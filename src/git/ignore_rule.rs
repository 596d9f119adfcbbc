//! Which ignore rule makes git ignore a path: `git check-ignore -v --no-index`, which — unlike
//! plain `check-ignore` — also answers for a path git already tracks (the team `MEMORY.md`),
//! so the rule a teammate's clone has can be named even where this one tracks the file.

use std::time::Duration;

use git2::Repository;

use super::GitError;
use super::cli::{local_command, run_local};
use super::remote::Deadline;
use crate::domain::memory::MemoryType;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};

/// A path in the team folder that git ignores in this clone — its `MEMORY.md`, or a memory
/// in any type folder (probed as `<type>/memory.md`) — or `None` when git sees them all. Rules
/// only: a file git already tracks counts as ignored when a rule matches it, as it does for
/// every new memory beside it.
pub fn ignored_team_path(repo: &Repository) -> Result<Option<String>, GitError> {
    let probes = std::iter::once(format!("{TEAM_DIR}/{INDEX_FILE}")).chain(
        MemoryType::ALL
            .iter()
            .map(|kind| format!("{TEAM_DIR}/{kind}/memory.md")),
    );
    for probe in probes {
        let ignored = repo
            .is_path_ignored(&probe)
            .map_err(|e| GitError::git(format!("checking whether git ignores {probe}"), e))?;
        if ignored {
            return Ok(Some(probe));
        }
    }
    Ok(None)
}

/// The rule ignoring `path` (relative to the work tree) as git prints it —
/// `.gitignore:3:.qwen/` — or `None` when no rule does or git cannot be run.
pub fn rule_for(repo: &Repository, path: &str) -> Option<String> {
    let deadline = Deadline::after(Duration::from_secs(5));
    let mut cmd = local_command(repo);
    cmd.args(["check-ignore", "-v", "--no-index", "--", path]);
    let run = run_local(
        cmd,
        b"",
        &deadline,
        "finding the ignore rule (git check-ignore)",
    )
    .ok()?;
    if !run.success {
        return None;
    }
    let line = run.stdout.lines().next()?;
    let (rule, _) = line.split_once('\t')?;
    // A negative rule (`!pattern`) matched last means the path is not ignored.
    let pattern = rule.splitn(3, ':').nth(2)?;
    (!pattern.starts_with('!')).then(|| rule.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_named_for_a_tracked_file_too() {
        let (dir, repo) = crate::git::scratch_repo();
        std::fs::write(dir.path().join(".gitignore"), "# x\n.qwen/\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".qwen/team-memory")).unwrap();
        std::fs::write(dir.path().join(".qwen/team-memory/MEMORY.md"), "").unwrap();
        crate::git::git_cli(dir.path(), &["add", "-f", ".qwen/team-memory/MEMORY.md"]);
        assert_eq!(
            rule_for(&repo, ".qwen/team-memory/MEMORY.md").as_deref(),
            Some(".gitignore:2:.qwen/")
        );
        assert_eq!(rule_for(&repo, "src/main.rs"), None);
    }
}
