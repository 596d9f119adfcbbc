//! `teammem sync`

use clap::Args;

use crate::ops::sync::{self, SyncOptions};
use crate::ops::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Commit the team memory's changes: only .qwen/team-memory/, nothing else.
///
/// Only the local half of sync exists so far, so --no-pull and --no-push are both required.
/// Every changed file under .qwen/team-memory/ is scanned for secrets and validated; a file that
/// fails stays on disk untouched, is not committed and is reported ("quarantined"). MEMORY.md is
/// regenerated from the clean memories. The commit ("chore(memory): sync team memory", trailer
/// "Teammem-Sync: 1") holds team files only: whatever you staged or changed elsewhere stays as
/// it was. No git hooks run; with commit.gpgsign on, the commit is signed with your own key or
/// not made at all.
///
/// Exit status: 0 committed or nothing to do; 1 a file was quarantined, the sync was skipped
/// (locked, detached HEAD, a rebase in progress, …) or the commit could not be made (signing
/// failed); 2 usage, I/O or git error.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Do not fetch or fast-forward (required: pulling is not available yet).
    #[arg(long)]
    no_pull: bool,
    /// Do not push (required: pushing is not available yet).
    #[arg(long)]
    no_push: bool,
    /// The sync commit's author, as `Name <email>` (default: git's user.name and user.email).
    #[arg(long, value_name = "NAME <EMAIL>")]
    author: Option<String>,
    /// Print the report as JSON: committed, pulled, pushed, skipped_reason, quarantined,
    /// commit, duration_ms, warnings.
    #[arg(long)]
    json: bool,
}

impl SyncArgs {
    /// Whether this sync stays on this machine (no fetch, no push).
    pub fn is_offline(&self) -> bool {
        self.no_pull && self.no_push
    }
}

pub fn run(project: &Project, args: SyncArgs) -> Result<u8, OpError> {
    if !args.no_pull || !args.no_push {
        eprintln!(
            "teammem: only the local half of sync exists yet; run `teammem sync --no-pull --no-push`"
        );
        return Ok(EXIT_ERROR);
    }
    let options = SyncOptions {
        pull: false,
        push: false,
        author: args.author,
        ..SyncOptions::default()
    };
    let outcome = sync::sync(project, &options)?;
    if args.json {
        super::print_json(&outcome)?;
    } else {
        println!("{}", outcome.summary());
        for file in &outcome.quarantined {
            eprintln!("quarantined {}: {}", file.path, file.reasons.join("; "));
        }
        // The summary line already holds the reason for a skip or a refused commit.
        let shown = &outcome.warnings[usize::from(outcome.skipped_reason.is_some())..];
        let shown = match (outcome.commit_refused, shown.split_last()) {
            (true, Some((_, rest))) => rest,
            _ => shown,
        };
        for warning in shown {
            eprintln!("teammem: warning: {warning}");
        }
    }
    let trouble = outcome.skipped_reason.is_some()
        || outcome.commit_refused
        || !outcome.quarantined.is_empty();
    Ok(if trouble { EXIT_FINDINGS } else { EXIT_OK })
}
