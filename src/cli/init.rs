//! `teammem init`

use clap::Args;

use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Set up team memory in this repository: branch mode when it has a remote, else the current
/// branch.
///
/// Without --branch or --current-branch, init chooses and says which mode and why, in one
/// line: an existing setup keeps its mode (branch mode recorded in .git/config, a team folder
/// tracked on the current branch, a memory branch the remote already has); otherwise a
/// repository with a remote gets branch mode (memory branch team-memory), one without a remote
/// current-branch mode.
///
/// In current-branch mode (--current-branch), init creates .qwen/team-memory/ and its index,
/// committed on your branches like code. If git would ignore the team folder, init says so and prints the exact .gitignore lines that
/// fix it; with --fix-gitignore it appends them and commits that change alone. When .qwen/ itself is ignored, only the team
/// folder is let back in, so settings and local memory stay private.
///
/// With --branch [NAME] (default team-memory), switches this repository to branch mode: the
/// team memory lives on a branch of its own on the same remote, and .qwen/team-memory/ is
/// teammem's view of it, never committed on your branches. The mode is recorded in .git/config
/// (teammem.branch); the branch is created from the remote's, else from the folder's history on
/// the current branch, else from its files; .git/info/exclude hides the folder from git status.
/// A folder the current branch tracks stays tracked unless you pass --migrate, which commits
/// its removal there (the memories stay on the memory branch and on disk). The next
/// `teammem sync` publishes the branch.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Branch mode: keep the team memory on the memory branch NAME (default team-memory).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "team-memory")]
    branch: Option<String>,
    /// With --branch: commit the removal of the tracked team folder on the current branch.
    #[arg(long, requires = "branch")]
    migrate: bool,
    /// Current-branch mode (Qwen Code's own model): the team memory is committed on your
    /// branches; a memory branch the remote has is not used here (teammem.branch = false).
    #[arg(long, conflicts_with = "branch")]
    current_branch: bool,
    /// Append the lines that stop .gitignore from hiding the team folder, and commit that
    /// change alone on the current branch when .gitignore has no changes of yours (else say
    /// the command that commits it). Current-branch mode: implies --current-branch unless
    /// --branch is given.
    #[arg(long)]
    fix_gitignore: bool,
    /// Print JSON: {team_dir, created, index_written, ignored, fix_lines, gitignore_fixed,
    /// gitignore_commit, gitignore_uncommitted};
    /// with --branch: {memory_branch, created_from, memory_tip, still_tracked,
    /// migration_commit, warnings}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem init`; returns its exit status.
pub fn run(project: &Project, args: InitArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let mut branch = args.branch.clone();
    // Only current-branch mode commits the folder, so only it needs .gitignore fixed.
    let current_branch = args.current_branch || (args.fix_gitignore && branch.is_none());
    if branch.is_none() && !current_branch && project.repo.is_some() {
        let choice = ops::init::choose_mode(project)?;
        if !json {
            let mode = choice
                .memory_branch
                .as_deref()
                .map_or("current-branch mode".to_string(), |b| {
                    format!("branch mode ({b})")
                });
            status!("Mode: {mode}: {}", choice.why);
        }
        branch = choice.memory_branch;
    }
    if current_branch && ops::init::keep_current_branch(project)? && !json {
        status!(
            "Mode: current-branch mode, as asked: teammem.branch = false in .git/config, so \
             sync leaves the remote's memory branch alone here"
        );
    }
    if let Some(name) = &branch {
        let done = ops::init::branch::init_branch(project, name, args.migrate)?;
        if json {
            super::print_json(&done)?;
            return Ok(EXIT_OK);
        }
        let tip = done
            .memory_tip
            .as_deref()
            .map_or("no commit yet", |t| &t[..t.len().min(7)]);
        status!(
            "Branch mode: team memory lives on {} ({}, from {})",
            done.memory_branch,
            tip,
            done.created_from
        );
        if let Some(commit) = &done.migration_commit {
            status!(
                "Committed the removal of .qwen/team-memory/ from the current branch as {}",
                &commit[..commit.len().min(7)]
            );
        }
        for warning in &done.warnings {
            warning!("{}", super::shown(warning));
        }
        return Ok(EXIT_OK);
    }
    let done = ops::init::init(project, args.fix_gitignore)?;
    if json {
        super::print_json(&done)?;
        return Ok(if done.ignored { EXIT_FINDINGS } else { EXIT_OK });
    }
    if done.created {
        status!("Created {}", done.team_dir.display());
    } else {
        status!("Team memory already at {}", done.team_dir.display());
    }
    if done.gitignore_fixed {
        status!("Added to .gitignore:\n  {}", done.fix_lines.join("\n  "));
        // Sync publishes only its own commits: until this one is pushed, every teammate's
        // clone still ignores the folder.
        if let Some(commit) = &done.gitignore_commit {
            status!(
                "Committed .gitignore alone as {}; push it (`git push`) so teammates' clones \
                 see the team folder",
                &commit[..commit.len().min(7)]
            );
        }
        if let Some(why) = &done.gitignore_uncommitted {
            warning!("{why}, then push it (`git push`)");
        }
    }
    if done.ignored {
        errln!(
            "teammem: git ignores .qwen/team-memory/, so team memories would never be shared.\n\
             Add these lines to .gitignore (or run `teammem init --fix-gitignore`):\n  {}",
            done.fix_lines.join("\n  ")
        );
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}
