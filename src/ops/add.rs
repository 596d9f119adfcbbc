//! Adding a memory: a new `<type>/<slug>.md` file in a scope, then a fresh index.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::domain::memory::{self, MemoryFile, MemoryType};
use crate::domain::scope::ScopeKind;
use crate::domain::secrets;

use super::guard::{self, TeamWriter};
use super::scope_write::write_memory;
use super::{OpError, Project};

/// What to add.
#[derive(Debug, Clone)]
pub struct NewMemory {
    /// Where it goes.
    pub scope: ScopeKind,
    /// Its type.
    pub kind: MemoryType,
    /// Its title; the file name is made from it.
    pub name: String,
    /// One line for the index.
    pub description: String,
    /// Optional keywords.
    pub keywords: Option<Vec<String>>,
    /// The markdown body.
    pub body: String,
}

/// What `add` did.
#[derive(Debug, Clone, Serialize)]
pub struct Added {
    /// The scope written to.
    pub scope: ScopeKind,
    /// The new memory's id.
    pub id: String,
    /// The file written.
    pub path: PathBuf,
    /// Whether the scope's MEMORY.md changed.
    pub index_written: bool,
    /// Things the user should know (a secret written to private or user memory).
    pub warnings: Vec<String>,
}

impl NewMemory {
    /// The same memory with every detected secret in its name, description, keywords and body
    /// replaced by `[REDACTED_SECRET]`.
    pub fn redacted(&self) -> NewMemory {
        NewMemory {
            scope: self.scope,
            kind: self.kind,
            name: secrets::redact_text(&self.name),
            description: secrets::redact_text(&self.description),
            keywords: self
                .keywords
                .as_ref()
                .map(|ks| ks.iter().map(|k| secrets::redact_text(k)).collect()),
            body: secrets::redact_text(&self.body),
        }
    }
}

/// Writes a new memory file and rebuilds the scope's index. Refuses a name that the scope
/// already has (compared without case), naming the file that has it, and refuses a secret in
/// team scope (exit 1, nothing written); in private and user scope a secret gives a warning.
pub fn add(project: &Project, new: &NewMemory) -> Result<Added, OpError> {
    let (rel, text) = render(new)?;
    let dir = project.check_scope_safe(new.scope)?;
    let loaded = project.load(new.scope)?;
    let wanted = new.name.trim().to_lowercase();
    if let Some(existing) = loaded
        .memories
        .iter()
        .find(|m| m.file.name.trim().to_lowercase() == wanted)
    {
        return Err(OpError::Refused(format!(
            "the {} scope already has a memory named `{}`: {} — edit that file, or choose another name",
            new.scope, existing.file.name, existing.rel
        )));
    }
    let path = dir.join(&rel);
    if fs::symlink_metadata(&path).is_ok() {
        return Err(OpError::Refused(format!(
            "{} already exists (a file with the same slug) — choose another name",
            path.display()
        )));
    }
    let mut warnings = Vec::new();
    if new.scope != ScopeKind::Team {
        let findings = secrets::scan_text(&text);
        if !findings.is_empty() {
            let shown = format!("{}{rel}", project.shown_prefix(new.scope));
            warnings.push(guard::private_warning(&shown, &findings));
        }
    }
    // The team write guard refuses a secret before anything is written.
    let path = write_memory(project, new.scope, TeamWriter::Add, &rel, &text)?;
    let (index_written, _) = project.rebuild_index(new.scope)?;
    Ok(Added {
        scope: new.scope,
        id: rel,
        path,
        index_written,
        warnings,
    })
}

/// A new memory's id (`<type>/<slug>.md`) and file text, after checking that its name and
/// description are one non-empty line each; the text reads back as a valid memory.
pub fn render(new: &NewMemory) -> Result<(String, String), OpError> {
    for (field, value) in [("name", &new.name), ("description", &new.description)] {
        if value.trim().is_empty() {
            return Err(OpError::Usage(format!(
                "--{field} is empty — give a one-line {field}"
            )));
        }
        if value.contains(['\n', '\r']) {
            return Err(OpError::Usage(format!(
                "--{field} spans several lines — keep it on one line and put detail in the body"
            )));
        }
    }
    let rel = format!("{}/{}.md", new.kind, memory::slugify(&new.name));
    let mut body = new.body.clone();
    if !body.is_empty() && !body.ends_with('\n') {
        body.push('\n');
    }
    let file = MemoryFile::new(
        new.name.trim(),
        new.description.trim(),
        new.kind,
        new.keywords.clone(),
        &body,
    );
    // What we write must read back as a valid memory; anything else is our bug, not the user's.
    let text = file
        .render_checked(&rel)
        .map_err(|first| OpError::Usage(format!("the memory would not be valid: {first}")))?;
    Ok((rel, text))
}
