//! `teammem dream`

use clap::Args;

use super::ScopeArg;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Consolidate memories mechanically: merge entries that say the same thing.
///
/// Within a file, entries with the same summary (without case) merge, keeping every distinct
/// line (Why, How to apply, anything else). Across files, entries with the same type and summary
/// merge into the first file by path; a duplicate is removed only after its lines are in the
/// survivor. The index is rebuilt. Runs at most once per 24 hours and 5 sessions (one session =
/// one `teammem context` run), one at a time per scope (consolidation.lock). A memory sync kept
/// in two versions, and its copy, are left alone until `teammem resolve` (merging them would
/// hide the contradiction).
///
/// A path a memory names that git's rename detection maps one-to-one to a file at HEAD is
/// rewritten to its new name (team memories through the same gate as every write); the
/// memories whose paths were deleted, or whose lines are past a file's end, are listed for a
/// person to update or forget.
#[derive(Debug, Args)]
pub struct DreamArgs {
    /// Run even if the 24-hour / 5-session gate says it is too soon.
    #[arg(long)]
    force: bool,
    /// Say what would be merged (one round) and write nothing.
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// Only this scope (default: every enabled scope).
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: [{scope, status, reason, deduped_entries, touched_topics, index_written, dry_run,
    /// skipped_conflicts, rewritten_paths, broken_references}].
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem dream`; returns its exit status.
pub fn run(project: &Project, args: DreamArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let mut reports = Vec::new();
    for scope in super::scopes(project, args.scope) {
        reports.push(ops::dream::dream_with(
            project,
            scope,
            args.force,
            args.dry_run,
        )?);
    }
    if json {
        super::print_json(&reports)?;
        return Ok(EXIT_OK);
    }
    for r in &reports {
        match r.status {
            "done" => outln!(
                "{}: {} {} entr{} in {} file{}{}",
                r.scope,
                if r.dry_run { "would merge" } else { "merged" },
                r.deduped_entries,
                if r.deduped_entries == 1 { "y" } else { "ies" },
                r.touched_topics.len(),
                if r.touched_topics.len() == 1 { "" } else { "s" },
                if r.touched_topics.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.touched_topics.join(", "))
                }
            ),
            status => outln!(
                "{}: {status} — {}",
                r.scope,
                r.reason.as_deref().unwrap_or("")
            ),
        }
        for line in &r.rewritten_paths {
            outln!(
                "{}: {} path {line}",
                r.scope,
                if r.dry_run {
                    "would rewrite"
                } else {
                    "rewrote"
                }
            );
        }
        for line in &r.broken_references {
            outln!("{}: for a person to update or forget — {line}", r.scope);
        }
        if !r.skipped_conflicts.is_empty() {
            warning!(
                "{}: left alone, kept in two versions by sync: {} — run `teammem resolve` first",
                r.scope,
                r.skipped_conflicts.join(", ")
            );
        }
    }
    Ok(EXIT_OK)
}
