//! `teammem show`

use clap::Args;
use serde::Serialize;

use crate::domain::memory::MemoryType;
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::ops::catalog::{self, MemoryId};
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Print one memory exactly as its file holds it, or one entry of a legacy multi-entry file.
///
/// ID is the path relative to the scope folder (as `teammem list` prints it), optionally with a
/// scope prefix (`team:feedback/use-real-db.md`) and an entry index (`feedback.md:2`).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The memory's id.
    id: String,
    /// Print JSON: {scope, id, path, type, name, description, keywords, text}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
    /// Print it as an agent may read it: through the memory gate (a memory holding a secret, a
    /// trust error or an unreadable frontmatter is withheld, with exit status 1), hidden
    /// characters removed, markup escaped, the body wrapped as data.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    for_agent: bool,
}

/// `show --json`: the memory's fields and the text that `show` prints.
#[derive(Debug, Serialize)]
struct ShowJson {
    scope: ScopeKind,
    id: String,
    path: String,
    #[serde(rename = "type")]
    kind: MemoryType,
    name: String,
    description: String,
    keywords: Vec<String>,
    text: String,
}

/// Runs `teammem show`; returns its exit status.
pub fn run(project: &Project, args: ShowArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let id = MemoryId::parse(&args.id)?;
    let found = catalog::find(project, &id, &every_scope(project))?;
    let path = project.scope_dir(found.scope)?.join(&found.memory.rel);
    if args.for_agent {
        return match ops::guard::memory_for_agent(project, found.scope, &found.memory.rel)? {
            Ok(memory) => {
                out!(
                    "# {} ({}, {})\n{}\n\n{}",
                    memory.name,
                    found.scope,
                    super::shown(&found.memory.rel),
                    memory.description,
                    memory.body
                );
                Ok(EXIT_OK)
            }
            Err(withheld) => {
                outln!("{}", withheld.line());
                Ok(ops::EXIT_FINDINGS)
            }
        };
    }
    let text = match &found.entry {
        Some(entry) => entry.text.clone(),
        // The file as written (comments, quoting and key order kept), not a re-rendering.
        None => String::from_utf8_lossy(&store::read_capped(&path)?).into_owned(),
    };
    if json {
        let file = &found.memory.file;
        super::print_json(&ShowJson {
            scope: found.scope,
            id: match &found.entry {
                Some(entry) => format!("{}:{}", found.memory.rel, entry.index.unwrap_or(1)),
                None => found.memory.rel.clone(),
            },
            path: path.display().to_string(),
            kind: file.kind,
            name: file.name.clone(),
            description: file.description.clone(),
            keywords: file.keywords.clone().unwrap_or_default(),
            text,
        })?;
    } else {
        // The file as written, but never a secret in full (invariant 4).
        out!("{}", crate::domain::secrets::redact_text(&text));
    }
    Ok(EXIT_OK)
}

/// `show` looks in every scope that exists, switched on or not: the user named the memory.
fn every_scope(project: &Project) -> Vec<ScopeKind> {
    ScopeKind::ALL
        .into_iter()
        .filter(|s| *s == ScopeKind::User || project.repo.is_some())
        .collect()
}
