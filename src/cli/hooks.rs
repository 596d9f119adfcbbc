//! `teammem install-hooks` and `teammem uninstall-hooks`

use clap::Args;

use crate::ops::hooks::{self, HookAction, HookOutcome};
use crate::ops::{EXIT_OK, OpError, Project};

/// Install the pre-commit and pre-merge-commit hooks that run `teammem check --staged`.
///
/// The hooks go where git looks for hooks: core.hooksPath when set, else the repository's
/// hooks folder (shared by its linked worktrees). pre-merge-commit checks a merge git commits
/// by itself. A hook already there is kept as <hook>.teammem-chained and runs first; running
/// this again changes nothing.
///
/// It also sets up the merge driver that keeps .qwen/team-memory/MEMORY.md from conflicting in
/// a rebase, merge or cherry-pick (it merges the index entries of both sides): the line
/// `merge=teammem-index` in .git/info/attributes (local, never committed) and
/// merge.teammem-index.driver in .git/config.
#[derive(Debug, Args)]
pub struct InstallHooksArgs {
    /// Print JSON: [{name, hook, action, chained}], the last one the merge driver
    /// (name merge-driver, hook the attributes file).
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Remove teammem's hooks and put back the hooks they had chained; remove the MEMORY.md merge
/// driver.
#[derive(Debug, Args)]
pub struct UninstallHooksArgs {
    /// Print JSON: [{name, hook, action, chained}].
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem install-hooks`; returns its exit status.
pub fn install(project: &Project, args: InstallHooksArgs) -> Result<u8, OpError> {
    let binary = std::env::current_exe()
        .map_err(|e| OpError::Usage(format!("cannot find the teammem binary: {e}")))?;
    let outcomes = hooks::install(project, &binary)?;
    print_outcomes(&outcomes, super::json_wanted(args.json, args.format))
}

/// Runs `teammem uninstall-hooks`; returns its exit status.
pub fn uninstall(project: &Project, args: UninstallHooksArgs) -> Result<u8, OpError> {
    let outcomes = hooks::uninstall(project)?;
    print_outcomes(&outcomes, super::json_wanted(args.json, args.format))
}

fn print_outcomes(outcomes: &[HookOutcome], json: bool) -> Result<u8, OpError> {
    if json {
        super::print_json(&outcomes)?;
    } else {
        outcomes.iter().for_each(print_outcome);
    }
    Ok(EXIT_OK)
}

fn print_outcome(outcome: &HookOutcome) {
    let (name, hook) = (outcome.name, outcome.hook.display());
    if name == hooks::MERGE_DRIVER {
        match outcome.action {
            HookAction::Installed | HookAction::Updated => status!(
                "Set up the MEMORY.md merge driver: merge=teammem-index in {hook}, its command \
                 in .git/config."
            ),
            HookAction::Unchanged => status!("The MEMORY.md merge driver is already set up."),
            HookAction::Removed => status!(
                "Removed the MEMORY.md merge driver from {hook} and \
                 .git/config."
            ),
            HookAction::NotInstalled => status!("No MEMORY.md merge driver; nothing to do."),
        }
        return;
    }
    match outcome.action {
        HookAction::Installed => status!("Installed the {name} hook at {hook}."),
        HookAction::Updated => status!("Updated the {name} hook at {hook}."),
        HookAction::Unchanged => status!("The {name} hook at {hook} is already installed."),
        HookAction::Removed => status!("Removed the {name} hook at {hook}."),
        HookAction::NotInstalled => {
            status!("No teammem {name} hook at {hook}; nothing to do.")
        }
    }
    match (&outcome.action, &outcome.chained) {
        (HookAction::Removed, Some(_)) => {
            status!("Put back the hook it ran first.")
        }
        (_, Some(chained)) => status!("Your earlier hook runs first, from {}.", chained.display()),
        _ => {}
    }
}
