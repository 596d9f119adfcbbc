//! `teammem add`

use std::io::Read;

use clap::Args;

use super::{ScopeArg, TypeArg};
use crate::domain::memory::{MAX_FILE_BYTES, MemoryFile};
use crate::domain::scope::ScopeKind;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Add a memory: writes <type>/<slug>.md in the scope and rebuilds its index.
///
/// The body comes from --body, or from standard input when --body is not given. A name that the
/// scope already has is refused. Content with a detected secret is refused in team scope (team
/// memory is shared with every collaborator) and gives a warning in private and user scope;
/// --redact stores [REDACTED_SECRET] in place of every secret instead.
///
/// Without --scope the memory goes to private scope (this project, this machine only), and add
/// says so on standard error. A refused memory (a secret in team scope, over 64 KiB, a
/// duplicate name) is written nowhere in the scope; a body read from standard input is kept in
/// the scope's state folder, named in the message, so text piped in is never lost.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Which memory to write to (default: private, said on standard error).
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
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
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem add`; returns its exit status.
pub fn run(project: &Project, args: AddArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let piped = args.body.is_none();
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
    let scope: ScopeKind = match args.scope {
        Some(scope) => scope.into(),
        None => {
            hint!(
                "no --scope given: adding to private memory (this project, this machine only); \
                 --scope team shares it with the team"
            );
            ScopeKind::Private
        }
    };
    let new = ops::add::NewMemory {
        scope,
        kind: args.kind.into(),
        name: args.name,
        description: args.description,
        keywords: (!keywords.is_empty()).then_some(keywords),
        body,
    };
    let new = if args.redact { new.redacted() } else { new };
    let file = MemoryFile::new(
        new.name.trim(),
        new.description.trim(),
        new.kind,
        new.keywords.clone(),
        &new.body,
    );
    let size = file.render().len();
    if size > MAX_FILE_BYTES {
        return Err(keep_refused(
            project,
            &new,
            piped,
            format!(
                "refusing to add `{}`: the memory would be {size} bytes, over the {MAX_FILE_BYTES} \
                 byte limit — split it into smaller memories or move the detail into the \
                 repository's docs",
                new.name
            ),
        ));
    }
    let added = match ops::add::add(project, &new) {
        Ok(added) => added,
        Err(OpError::Refused(message)) => {
            return Err(keep_refused(project, &new, piped, message));
        }
        Err(err) => return Err(err),
    };
    for warning in &added.warnings {
        warning!("{warning}");
    }
    if json {
        super::print_json(&added)?;
    } else {
        status!(
            "Added {}:{} ({})",
            added.scope,
            added.id,
            added.path.display()
        );
    }
    Ok(EXIT_OK)
}

/// A refusal whose message names where the refused text is kept (the scope's state folder,
/// readable by its owner only), so a body piped in is never lost. A body given with --body is
/// still on the user's command line: nothing is kept.
fn keep_refused(
    project: &Project,
    new: &ops::add::NewMemory,
    piped: bool,
    message: String,
) -> OpError {
    if !piped {
        return OpError::Refused(message);
    }
    match crate::ops::resolve::save_rejected(project, new.scope, &new.body) {
        Ok(path) => OpError::Refused(format!(
            "{message}\nYour text is kept in {} (readable by you only).",
            path.display()
        )),
        Err(err) => OpError::Refused(format!("{message}\n(Your text could not be kept: {err})")),
    }
}
