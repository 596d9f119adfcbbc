//! `teammem list`

use clap::Args;

use super::ScopeArg;
use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// List memories: scope, id, type, name and description.
///
/// Without --scope: user and private memories, and team memories when team memory is on.
/// Files that are not valid memories are reported on standard error (exit status 1).
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this scope.
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: {"memories": [{scope, id, type, name, description, keywords, path, entries,
    /// entry_ids: [{id, summary}]}], "invalid": [{path, line, column, message, fix}]}.
    #[arg(long)]
    json: bool,
}

/// Runs `teammem list`; returns its exit status.
pub fn run(project: &Project, args: ListArgs) -> Result<u8, OpError> {
    let listing = ops::catalog::list(project, &super::scopes(project, args.scope))?;
    if args.json {
        super::print_json(&listing)?;
    } else {
        for m in &listing.memories {
            let line = format!(
                "{:<8} {:<40} {:<9} {} — {}",
                m.scope.as_str(),
                m.id,
                m.kind.as_str(),
                m.name,
                m.description
            );
            println!("{}", super::shown(&line));
            for entry in &m.entry_ids {
                let line = format!("{:<8} {:<40} {:<9} {}", "", entry.id, "", entry.summary);
                println!("{}", super::shown(&line));
            }
        }
        if listing.memories.is_empty() {
            println!("No memories.");
        }
        for problem in &listing.invalid {
            eprintln!("invalid: {}", super::shown(&problem.to_string()));
        }
    }
    Ok(if listing.invalid.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}
