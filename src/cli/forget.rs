//! `teammem forget`

use clap::Args;

use crate::ops::{self, EXIT_OK, OpError, Project};

/// Delete memories: whole files, or single entries of legacy multi-entry files.
///
/// IDs are as `teammem list` prints them, optionally with a scope prefix
/// (`team:feedback/x.md`) and an entry index (`feedback.md:2`). Every id is checked before
/// anything is deleted. With --query, lists the memories that match and deletes them only with
/// --yes. Indexes are rebuilt; a team-scope forget is committed by the next sync.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The memories to delete.
    #[arg(required_unless_present = "query", conflicts_with = "query")]
    ids: Vec<String>,
    /// List the memories matching this query (delete them with --yes).
    #[arg(long)]
    query: Option<String>,
    /// With --query: delete the memories listed.
    #[arg(long, requires = "query")]
    yes: bool,
    /// With --query: consider at most this many memories.
    #[arg(long, default_value_t = ops::recall::DEFAULT_MAX)]
    max: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `teammem forget`; returns its exit status.
pub fn run(project: &Project, args: ForgetArgs) -> Result<u8, OpError> {
    let ids = match &args.query {
        None => args.ids.clone(),
        Some(query) => {
            let hits = ops::forget::candidates(project, query, args.max)?;
            let ids: Vec<String> = hits
                .iter()
                .map(|h| format!("{}:{}", h.scope, h.id))
                .collect();
            if !args.yes {
                if args.json {
                    super::print_json(&serde_json::json!({ "candidates": ids, "deleted": false }))?;
                } else if ids.is_empty() {
                    println!("No memory matches \"{query}\".");
                } else {
                    println!("Would forget (run again with --yes to delete):");
                    for hit in &hits {
                        println!("  {}:{} — {}", hit.scope, hit.id, hit.name);
                    }
                }
                return Ok(EXIT_OK);
            }
            ids
        }
    };
    let report = ops::forget::forget(project, &ids)?;
    if args.json {
        super::print_json(&report)?;
    } else {
        for f in &report.forgotten {
            println!("Forgot {}:{} — {}", f.scope, f.id, f.name);
        }
        if report.forgotten.is_empty() {
            println!("Nothing to forget.");
        }
    }
    Ok(EXIT_OK)
}
