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
#[derive(Debug, Args)]
pub struct InstallHooksArgs {}

/// Remove teammem's hooks and put back the hooks they had chained.
#[derive(Debug, Args)]
pub struct UninstallHooksArgs {}

/// Runs `teammem install-hooks`; returns its exit status.
pub fn install(project: &Project, _args: InstallHooksArgs) -> Result<u8, OpError> {
    let binary = std::env::current_exe()
        .map_err(|e| OpError::Usage(format!("cannot find the teammem binary: {e}")))?;
    for outcome in hooks::install(project, &binary)? {
        print_outcome(&outcome);
    }
    Ok(EXIT_OK)
}

/// Runs `teammem uninstall-hooks`; returns its exit status.
pub fn uninstall(project: &Project, _args: UninstallHooksArgs) -> Result<u8, OpError> {
    for outcome in hooks::uninstall(project)? {
        print_outcome(&outcome);
    }
    Ok(EXIT_OK)
}

fn print_outcome(outcome: &HookOutcome) {
    let (name, hook) = (outcome.name, outcome.hook.display());
    match outcome.action {
        HookAction::Installed => println!("Installed the {name} hook at {hook}."),
        HookAction::Updated => println!("Updated the {name} hook at {hook}."),
        HookAction::Unchanged => println!("The {name} hook at {hook} is already installed."),
        HookAction::Removed => println!("Removed the {name} hook at {hook}."),
        HookAction::NotInstalled => {
            println!("No teammem {name} hook at {hook}; nothing to do.")
        }
    }
    match (&outcome.action, &outcome.chained) {
        (HookAction::Removed, Some(_)) => println!("Put back the hook it ran first."),
        (_, Some(chained)) => println!("Your earlier hook runs first, from {}.", chained.display()),
        _ => {}
    }
}
