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
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem list`; returns its exit status.
pub fn run(project: &Project, args: ListArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let listing = ops::catalog::list(project, &super::scopes(project, args.scope))?;
    if json {
        super::print_json(&listing)?;
    } else {
        // An id is a file name: printed with its secrets redacted and its control characters
        // escaped, so a name can neither drive the terminal nor forge a line.
        let shown_id = crate::domain::gate::redact_path;
        // Columns as wide as their longest value, so a long id never pushes the rest out of line.
        let scope_w = listing
            .memories
            .iter()
            .map(|m| m.scope.as_str().len())
            .chain([5])
            .max()
            .unwrap_or(5);
        let id_w = listing
            .memories
            .iter()
            .flat_map(|m| {
                std::iter::once(shown_id(&m.id).chars().count())
                    .chain(m.entry_ids.iter().map(|e| shown_id(&e.id).chars().count()))
            })
            .chain([2])
            .max()
            .unwrap_or(2);
        let kind_w = 9;
        if !listing.memories.is_empty() {
            outln!(
                "{:<scope_w$}  {:<id_w$}  {:<kind_w$}  NAME — DESCRIPTION",
                "SCOPE",
                "ID",
                "TYPE"
            );
        }
        for m in &listing.memories {
            let line = format!(
                "{:<scope_w$}  {:<id_w$}  {:<kind_w$}  {} — {}",
                m.scope.as_str(),
                shown_id(&m.id),
                m.kind.as_str(),
                shown_id(&m.name),
                shown_id(&m.description)
            );
            outln!("{}", super::shown(&line));
            for entry in &m.entry_ids {
                let line = format!(
                    "{:<scope_w$}  {:<id_w$}  {:<kind_w$}  {}",
                    "",
                    shown_id(&entry.id),
                    "",
                    shown_id(&entry.summary)
                );
                outln!("{}", super::shown(&line));
            }
        }
        if listing.memories.is_empty() {
            outln!("No memories.");
        }
        for problem in &listing.invalid {
            errln!("invalid: {}", super::shown(&problem.to_string()));
        }
    }
    Ok(if listing.invalid.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}
