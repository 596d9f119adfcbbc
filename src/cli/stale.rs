//! `teammem stale`

use clap::Args;

use super::ScopeArg;
use crate::domain::usage;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// List memories nobody used for a while.
///
/// A memory is stale when its last citation (`teammem cite`) is at least --days days old; one
/// never cited counts from its creation: the commit that first added it when git tracks it,
/// else its file time.
#[derive(Debug, Args)]
pub struct StaleArgs {
    /// The window, in days.
    #[arg(long, default_value_t = 30)]
    days: u32,
    /// Only this scope.
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: [{scope, id, name, days_unused, since, since_what, usage_count}].
    #[arg(long)]
    json: bool,
}

/// Runs `teammem stale`; returns its exit status.
pub fn run(project: &Project, args: StaleArgs) -> Result<u8, OpError> {
    let scopes = super::scopes(project, args.scope);
    let found = ops::stale::stale(project, &scopes, args.days, usage::now())?;
    if args.json {
        super::print_json(&found)?;
        return Ok(EXIT_OK);
    }
    if found.is_empty() {
        println!("No memory unused for {} days.", args.days);
    }
    for s in &found {
        let what = match s.since_what {
            "last-usage" => "since last cited",
            "first-commit" => "never cited, since its first commit",
            _ => "never cited, since its file time",
        };
        println!(
            "{}:{} — {} ({} days {what})",
            s.scope, s.id, s.name, s.days_unused
        );
    }
    Ok(EXIT_OK)
}
