//! Catalog memories across scopes and finding one by its id.
//!
//! An id is the memory's path relative to its scope folder (`feedback/use-real-db.md`), or
//! `path:index` for one entry of a legacy file that holds several bullet entries. It may carry a
//! scope prefix (`team:feedback/use-real-db.md`) when the same path exists in two scopes.

use serde::Serialize;

use crate::domain::memory::{Entry, Invalid, MemoryType};
use crate::domain::scope::ScopeKind;
use crate::domain::store::StoredMemory;

use super::{OpError, Project};

/// One memory as `list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// The scope it lives in.
    pub scope: ScopeKind,
    /// Its id within the scope.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Its title.
    pub name: String,
    /// Its one-line description.
    pub description: String,
    /// Its keywords (empty when none).
    pub keywords: Vec<String>,
    /// The file on disk.
    pub path: String,
    /// How many bullet entries it holds (1 for an ordinary memory).
    pub entries: usize,
    /// The ids and summaries of the entries of a legacy file that holds several bullet entries
    /// (`feedback.md:1`, `feedback.md:2`, …); empty for an ordinary memory.
    pub entry_ids: Vec<EntryId>,
}

/// One entry of a legacy multi-entry file, as `list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EntryId {
    /// `path:index`.
    pub id: String,
    /// The bullet's first line.
    pub summary: String,
}

/// What `list` found.
#[derive(Debug, Default, Serialize)]
pub struct Catalog {
    /// Valid memories, by scope then id.
    pub memories: Vec<Listed>,
    /// Files that are not valid memories, with the problem and fix.
    pub invalid: Vec<Invalid>,
}

/// Lists the memories of the given scopes.
pub fn list(project: &Project, scopes: &[ScopeKind]) -> Result<Catalog, OpError> {
    let mut listing = Catalog::default();
    for &scope in scopes {
        let dir = project.scope_dir(scope)?;
        let loaded = project.load(scope)?;
        for m in loaded.memories {
            let entries = m.file.entries();
            let entry_ids = entries
                .iter()
                .filter_map(|e| {
                    Some(EntryId {
                        id: format!("{}:{}", m.rel, e.index?),
                        summary: e.summary.clone(),
                    })
                })
                .collect();
            listing.memories.push(Listed {
                scope,
                id: m.rel.clone(),
                kind: m.file.kind,
                name: m.file.name.clone(),
                description: m.file.description.clone(),
                keywords: m.file.keywords.clone().unwrap_or_default(),
                path: dir.join(&m.rel).display().to_string(),
                entries: entries.len(),
                entry_ids,
            });
        }
        listing.invalid.extend(loaded.invalid);
    }
    Ok(listing)
}

/// A memory id, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryId {
    /// The scope named in the id, if any.
    pub scope: Option<ScopeKind>,
    /// Path relative to the scope folder.
    pub path: String,
    /// 1-based entry index within a legacy multi-entry file.
    pub entry: Option<usize>,
}

impl MemoryId {
    /// Parses `[scope:]path[:index]`.
    pub fn parse(text: &str) -> Result<MemoryId, OpError> {
        let (scope, rest) = match text.split_once(':') {
            Some((s, rest)) => match ScopeKind::parse(s) {
                Some(scope) => (Some(scope), rest),
                None => (None, text),
            },
            None => (None, text),
        };
        let (path, entry) = match rest.rsplit_once(':') {
            Some((path, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                let n: usize = n
                    .parse()
                    .map_err(|_| OpError::Usage(format!("entry index in `{text}` is too large")))?;
                if n == 0 {
                    return Err(OpError::Usage(format!(
                        "entry indexes start at 1: `{text}`"
                    )));
                }
                (path, Some(n))
            }
            _ => (rest, None),
        };
        let path = path.trim_start_matches("./").to_string();
        if path.is_empty() || path.split('/').any(|p| p == "..") || path.starts_with('/') {
            return Err(OpError::Usage(format!(
                "`{text}` is not a memory id — use a path relative to the scope folder, like `feedback/use-real-db.md` (see `teammem list`)"
            )));
        }
        Ok(MemoryId { scope, path, entry })
    }
}

/// A memory found by id.
#[derive(Debug, Clone)]
pub struct FoundById {
    /// The scope it lives in.
    pub scope: ScopeKind,
    /// The memory.
    pub memory: StoredMemory,
    /// The entry named by the id, when it named one.
    pub entry: Option<Entry>,
}

/// Finds the memory an id names, across `scopes` (or the id's own scope).
pub fn find(project: &Project, id: &MemoryId, scopes: &[ScopeKind]) -> Result<FoundById, OpError> {
    let search: Vec<ScopeKind> = match id.scope {
        Some(s) => vec![s],
        None => scopes.to_vec(),
    };
    let mut hits = Vec::new();
    for scope in search {
        let loaded = project.load(scope)?;
        if let Some(m) = loaded.memories.into_iter().find(|m| m.rel == id.path) {
            hits.push((scope, m));
        }
    }
    let (scope, memory) = match hits.len() {
        0 => {
            return Err(OpError::Usage(format!(
                "no memory `{}` — see `teammem list` for ids",
                id.path
            )));
        }
        1 => hits.remove(0),
        _ => {
            let names: Vec<String> = hits
                .iter()
                .map(|(s, _)| format!("{s}:{}", id.path))
                .collect();
            return Err(OpError::Usage(format!(
                "`{}` exists in several scopes — name one: {}",
                id.path,
                names.join(", ")
            )));
        }
    };
    let entry = match id.entry {
        None => None,
        Some(n) => {
            let entries = memory.file.entries();
            if entries.len() < 2 {
                return Err(OpError::Usage(format!(
                    "`{}` holds one entry — use its id without `:{n}`",
                    id.path
                )));
            }
            match entries.into_iter().nth(n - 1) {
                Some(e) => Some(e),
                None => {
                    return Err(OpError::Usage(format!(
                        "`{}` has no entry {n} — it holds {} entries",
                        id.path,
                        memory.file.entries().len()
                    )));
                }
            }
        }
    };
    Ok(FoundById {
        scope,
        memory,
        entry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        let id = MemoryId::parse("team:feedback/a.md:2").unwrap();
        assert_eq!(id.scope, Some(ScopeKind::Team));
        assert_eq!(id.path, "feedback/a.md");
        assert_eq!(id.entry, Some(2));
        let id = MemoryId::parse("feedback/a.md").unwrap();
        assert_eq!((id.scope, id.entry), (None, None));
        assert!(MemoryId::parse("../etc/passwd").is_err());
        assert!(MemoryId::parse("a.md:0").is_err());
    }
}
