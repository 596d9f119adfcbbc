//! `teammem show`

use clap::Args;
use serde::Serialize;

use crate::domain::memory::MemoryType;
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::ops::catalog::{self, MemoryId};
use crate::ops::{EXIT_OK, OpError, Project};

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
}

/// `show --json`: the memory's fields and the text that `show` prints.
#[derive(Debug, Serialize)]
struct Shown {
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
    let text = match &found.entry {
        Some(entry) => entry.text.clone(),
        // The file as written (comments, quoting and key order kept), not a re-rendering.
        None => String::from_utf8_lossy(&store::read_capped(&path)?).into_owned(),
    };
    if json {
        let file = &found.memory.file;
        super::print_json(&Shown {
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
        out!("{text}");
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
