//! `teammem show`

use clap::Args;

use crate::domain::scope::ScopeKind;
use crate::ops::catalog::{self, MemoryId};
use crate::ops::{EXIT_OK, OpError, Project};

/// Print one memory, or one entry of a legacy multi-entry file.
///
/// ID is the path relative to the scope folder (as `teammem list` prints it), optionally with a
/// scope prefix (`team:feedback/use-real-db.md`) and an entry index (`feedback.md:2`).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The memory's id.
    id: String,
}

pub fn run(project: &Project, args: ShowArgs) -> Result<u8, OpError> {
    let id = MemoryId::parse(&args.id)?;
    let found = catalog::find(project, &id, &every_scope(project))?;
    match found.entry {
        Some(entry) => print!("{}", entry.text),
        None => print!("{}", found.memory.file.render()),
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
