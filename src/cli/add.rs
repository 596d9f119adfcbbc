//! `teammem add`

use std::io::Read;

use clap::Args;

use super::{ScopeArg, TypeArg};
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Add a memory: writes <type>/<slug>.md in the scope and rebuilds its index.
///
/// The body comes from --body, or from standard input when --body is not given. A name that the
/// scope already has is refused. Content with a detected secret is refused in team scope (team
/// memory is shared with every collaborator) and gives a warning in private and user scope;
/// --redact stores [REDACTED_SECRET] in place of every secret instead.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Which memory to write to.
    #[arg(long, value_enum, default_value = "private")]
    scope: ScopeArg,
    /// The memory's type.
    #[arg(long = "type", value_enum)]
    kind: TypeArg,
    /// The title; the file name is made from it.
    #[arg(long)]
    name: String,
    /// One line saying what the memory is for (shown in the index).
    #[arg(long)]
    description: String,
    /// Comma-separated search keywords.
    #[arg(long, value_delimiter = ',')]
    keywords: Vec<String>,
    /// The body text; without it the body is read from standard input.
    #[arg(long)]
    body: Option<String>,
    /// Replace every detected secret by [REDACTED_SECRET] before writing.
    #[arg(long)]
    redact: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `teammem add`; returns its exit status.
pub fn run(project: &Project, args: AddArgs) -> Result<u8, OpError> {
    let body = match args.body {
        Some(body) => body,
        None => {
            use std::io::IsTerminal;
            // Waiting silently on a terminal would look like a hang.
            if std::io::stdin().is_terminal() {
                return Err(OpError::Usage(
                    "no body: give --body TEXT or pipe the body on standard input".into(),
                ));
            }
            let mut body = String::new();
            std::io::stdin().read_to_string(&mut body).map_err(|e| {
                OpError::Usage(format!("cannot read the body from standard input: {e}"))
            })?;
            body
        }
    };
    let keywords: Vec<String> = args
        .keywords
        .iter()
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    let new = ops::add::NewMemory {
        scope: args.scope.into(),
        kind: args.kind.into(),
        name: args.name,
        description: args.description,
        keywords: (!keywords.is_empty()).then_some(keywords),
        body,
    };
    let new = if args.redact { new.redacted() } else { new };
    let added = ops::add::add(project, &new)?;
    for warning in &added.warnings {
        eprintln!("teammem: warning: {warning}");
    }
    if args.json {
        super::print_json(&added)?;
    } else {
        println!(
            "Added {}:{} ({})",
            added.scope,
            added.id,
            added.path.display()
        );
    }
    Ok(EXIT_OK)
}
