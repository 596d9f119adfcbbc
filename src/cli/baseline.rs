//! `teammem baseline diff|commit|release`

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::ScopeArg;
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// What changed in a scope since the last consolidation, and recording a new baseline.
///
/// A consolidation (a sub-agent that tidies memories) runs `baseline diff --claim --out FILE`,
/// works from the report, then `baseline commit --token TOKEN`. Private and user baselines are a
/// bare repository beside the memory folder holding one commit; the team baseline is the ref
/// refs/teammem/baseline in the project repository.
#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    action: BaselineAction,
    /// Print JSON: diff {scope, report, changed, cut, baseline, token} (with --out the report
    /// is written there too); commit {scope, commit, files, location}; release {released}.
    #[arg(long, global = true)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "json"
    )]
    format: Option<super::TextFormat>,
}

#[derive(Debug, Subcommand)]
enum BaselineAction {
    Diff(DiffArgs),
    Commit(CommitArgs),
    Release(ReleaseArgs),
}

/// Write the report: a title, `## Status` with `- A|M|D path` lines (or `- none`), and
/// `## Diff` with a unified diff (3 lines of context), cut at 4 MiB with a note.
///
/// Writes nothing into any git object store. With --claim, also takes the scope's lease (for
/// one hour) and prints its token: on standard output after "lease token: " when --out is given,
/// else on standard error. A lease held by another consolidation is refused (exit status 1).
#[derive(Debug, Args)]
struct DiffArgs {
    /// The scope (default: private).
    #[arg(long, value_enum, default_value = "private")]
    scope: ScopeArg,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Take the lease so no other consolidation runs until you commit or release.
    #[arg(long)]
    claim: bool,
}

/// Record the scope's current memories as the new baseline.
///
/// While a lease is held, only its token may commit; a wrong, expired or released token is
/// refused (exit status 1). A successful commit releases the lease.
#[derive(Debug, Args)]
struct CommitArgs {
    /// The scope (default: private).
    #[arg(long, value_enum, default_value = "private")]
    scope: ScopeArg,
    /// The token `baseline diff --claim` printed.
    #[arg(long)]
    token: Option<String>,
}

/// Give the lease back without recording a baseline (the consolidation gave up).
#[derive(Debug, Args)]
struct ReleaseArgs {
    /// The scope (default: private).
    #[arg(long, value_enum, default_value = "private")]
    scope: ScopeArg,
    /// The token `baseline diff --claim` printed.
    #[arg(long)]
    token: String,
}

/// Runs `teammem baseline`; returns its exit status.
pub fn run(project: &Project, args: BaselineArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    match args.action {
        BaselineAction::Diff(a) => {
            let diff = ops::baseline::diff(project, a.scope.into(), a.claim)?;
            if let (true, Some(path)) = (json, &a.out) {
                store::write_atomic(path, diff.report.as_bytes())?;
            }
            if json {
                super::print_json(&diff)?;
                return Ok(EXIT_OK);
            }
            match &a.out {
                Some(path) => {
                    store::write_atomic(path, diff.report.as_bytes())?;
                    status!(
                        "Wrote {} ({} changed file{}{})",
                        path.display(),
                        diff.changed,
                        if diff.changed == 1 { "" } else { "s" },
                        if diff.cut { ", diff cut at 4 MiB" } else { "" }
                    );
                    if let Some(token) = &diff.token {
                        outln!("lease token: {token}");
                    }
                }
                None => {
                    out!("{}", diff.report);
                    if let Some(token) = &diff.token {
                        errln!("lease token: {token}");
                    }
                }
            }
        }
        BaselineAction::Commit(a) => {
            let scope: ScopeKind = a.scope.into();
            let done = ops::baseline::commit(project, scope, a.token.as_deref())?;
            if json {
                super::print_json(&done)?;
                return Ok(EXIT_OK);
            }
            status!(
                "Recorded the {scope} baseline {} ({} file{}) in {}",
                &done.commit[..12.min(done.commit.len())],
                done.files,
                if done.files == 1 { "" } else { "s" },
                done.location
            );
        }
        BaselineAction::Release(a) => {
            let scope: ScopeKind = a.scope.into();
            let released = ops::baseline::release(project, scope, &a.token)?;
            if json {
                super::print_json(&serde_json::json!({ "released": released }))?;
            } else if released {
                status!("Released the {scope} baseline lease.");
            } else {
                status!("No {scope} baseline lease was held.");
            }
        }
    }
    Ok(EXIT_OK)
}
