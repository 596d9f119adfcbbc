//! `teammem stale`

use clap::Args;

use super::ScopeArg;
use crate::domain::recall::usage;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// List memories nobody used for a while, and memories naming paths that no longer hold.
///
/// A memory is stale when its last use — read or found by an agent through MCP
/// (`memory_read`, `memory_search`), or cited (`teammem cite`) — is at least --days days old;
/// one never used counts from its creation: the commit that first added it when git tracks
/// it, else its file time. Being surfaced unasked by `teammem prompt-context` is shown but is
/// not a use. Usage is counted on this machine only, never committed. A team or private memory
/// naming a path that is gone from HEAD (with the commit that removed or renamed it), or a line
/// past a file's end, is listed too, however recently used.
#[derive(Debug, Args)]
pub struct StaleArgs {
    /// The window, in days.
    #[arg(long, default_value_t = 30)]
    days: u32,
    /// Only this scope.
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: [{scope, id, name, days_unused, since, since_what, usage_count (cited),
    /// read_count, surfaced_count, last_surfaced, unused, broken_references}].
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem stale`; returns its exit status.
pub fn run(project: &Project, args: StaleArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let scopes = super::scopes(project, args.scope);
    let found = ops::stale::stale(project, &scopes, args.days, usage::now())?;
    if json {
        super::print_json(&found)?;
        return Ok(EXIT_OK);
    }
    if found.is_empty() {
        outln!(
            "No memory unused for {} days, and every path the memories name holds.",
            args.days
        );
    }
    for s in &found {
        let ago = days_ago(s.days_unused);
        let mut what = match s.since_what {
            "last-usage" => format!(
                "last used {ago}: read {} time{}, cited {}",
                s.read_count,
                if s.read_count == 1 { "" } else { "s" },
                s.usage_count
            ),
            "first-commit" => format!("never cited; first committed {ago}"),
            _ => format!("never cited; file written {ago}"),
        };
        if s.surfaced_count > 0 {
            what.push_str(&format!(
                "; surfaced {} time{} unasked",
                s.surfaced_count,
                if s.surfaced_count == 1 { "" } else { "s" }
            ));
        }
        if s.unused {
            outln!("{}:{} — {} ({what})", s.scope, s.id, s.name);
        } else {
            outln!("{}:{} — {}", s.scope, s.id, s.name);
        }
        for line in &s.broken_references {
            outln!("  {line}");
        }
    }
    Ok(EXIT_OK)
}

/// `today`, `1 day ago`, `12 days ago`.
fn days_ago(days: i64) -> String {
    match days {
        i64::MIN..=0 => "today".into(),
        1 => "1 day ago".into(),
        n => format!("{n} days ago"),
    }
}
