//! `teammem cite`

use clap::Args;

use crate::domain::recall::usage;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Record that memories were used (usage_count, last_usage).
///
/// Kept in machine-local state beside each scope's memory folder, never in the memory files.
/// An entry id (`path:index`) counts for its file.
#[derive(Debug, Args)]
pub struct CiteArgs {
    /// The memories used.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem cite`; returns its exit status.
pub fn run(project: &Project, args: CiteArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let cited = ops::cite::cite(project, &args.ids)?;
    if json {
        super::print_json(&cited)?;
    } else {
        for c in &cited {
            status!(
                "Cited {}:{} ({} time{}, last {})",
                c.scope,
                c.id,
                c.usage_count,
                if c.usage_count == 1 { "" } else { "s" },
                c.last_usage.map(usage::utc_text).unwrap_or_default()
            );
        }
    }
    Ok(EXIT_OK)
}
