//! `teammem forget`

use clap::Args;

use crate::ops::{self, EXIT_OK, OpError, Project};

/// Delete memories: whole files, or single entries of legacy multi-entry files.
///
/// IDs are as `teammem list` prints them, optionally with a scope prefix
/// (`team:feedback/x.md`) and an entry index (`feedback.md:2`); `pending:ID` drops a team
/// memory an agent saved that was never published (`teammem share` lists them). Every id is checked before
/// anything is deleted. With --query, lists the memories that match and deletes them only with
/// --yes. Indexes are rebuilt; a team-scope forget is committed by the next sync.
///
/// Every file forget changes is first copied to the scope's state folder (outside the memory
/// folder and the repository); `teammem forget --undo` puts back what the last forget removed,
/// as long as the files were not changed since.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The memories to delete.
    #[arg(required_unless_present_any = ["query", "undo"], conflicts_with = "query")]
    ids: Vec<String>,
    /// Put back what the last forget removed.
    #[arg(long, conflicts_with_all = ["ids", "query", "dry_run"])]
    undo: bool,
    /// Say what would be deleted, and delete nothing.
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// List the memories matching this query (delete them with --yes).
    #[arg(long)]
    query: Option<String>,
    /// With --query: delete the memories listed.
    #[arg(long, requires = "query")]
    yes: bool,
    /// With --query: consider at most this many memories.
    #[arg(long, alias = "max", value_name = "N", default_value_t = ops::recall::DEFAULT_MAX)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem forget`; returns its exit status.
pub fn run(project: &Project, args: ForgetArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    if args.undo {
        let undone = ops::forget::undo(project)?;
        if json {
            super::print_json(&undone)?;
        } else {
            for r in &undone.restored {
                status!("Restored {r}");
            }
        }
        return Ok(EXIT_OK);
    }
    let ids = match &args.query {
        None => args.ids.clone(),
        Some(query) => {
            let hits = ops::forget::candidates(project, query, args.limit)?;
            let ids: Vec<String> = hits
                .iter()
                .map(|h| format!("{}:{}", h.scope, h.id))
                .collect();
            if !args.yes || args.dry_run {
                if json {
                    super::print_json(&serde_json::json!({ "candidates": ids, "deleted": false }))?;
                } else if ids.is_empty() {
                    outln!("No memory matches \"{query}\".");
                } else {
                    outln!("Would forget (run again with --yes to delete):");
                    for hit in &hits {
                        outln!("  {}:{} — {}", hit.scope, hit.id, hit.name);
                    }
                }
                return Ok(EXIT_OK);
            }
            ids
        }
    };
    // A pending memory was never published: dropping it is not a forget of team memory.
    let (pending, ids): (Vec<String>, Vec<String>) = ids
        .into_iter()
        .partition(|id| id.starts_with(ops::pending::PREFIX));
    if !pending.is_empty() {
        if args.dry_run || !ids.is_empty() {
            return Err(OpError::Usage(
                "forget pending memories on their own and without --dry-run: `teammem forget \
                 pending:ID…`"
                    .into(),
            ));
        }
        let dropped = pending
            .iter()
            .map(|id| ops::pending::drop_pending(project, id))
            .collect::<Result<Vec<String>, OpError>>()?;
        if json {
            super::print_json(&serde_json::json!({ "dropped": dropped }))?;
        } else {
            for id in &dropped {
                outln!("Dropped {}; it was never published.", super::shown(id));
            }
        }
        return Ok(EXIT_OK);
    }
    let report = ops::forget::forget_with(project, &ids, args.dry_run)?;
    if json {
        super::print_json(&report)?;
    } else {
        let verb = if args.dry_run {
            "Would forget"
        } else {
            "Forgot"
        };
        for f in &report.forgotten {
            outln!("{verb} {}:{} — {}", f.scope, f.id, f.name);
        }
        if report.forgotten.is_empty() {
            outln!("Nothing to forget.");
        } else if !args.dry_run {
            hint!("`teammem forget --undo` puts it back.");
        }
    }
    Ok(EXIT_OK)
}
