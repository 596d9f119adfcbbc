//! Trees of a repository only git can open, read and written one level at a time
//! (`git ls-tree`, `git mktree`), never through an index: a tree a teammate crafted (a `.git`
//! name, a duplicate entry) is carried as it is wherever nothing changes, where `git read-tree`
//! would refuse the whole tree. Objects only; no ref moves.

use std::collections::BTreeMap;

use super::{CliRepo, TreeEntry};
use crate::git::GitError;
use crate::git::remote::Deadline;

/// One entry of one tree level, as `git ls-tree` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelEntry {
    /// The mode in octal (`100644`, `040000`, `120000`, `160000`).
    pub mode: String,
    /// `blob`, `tree` or `commit`.
    pub kind: String,
    /// The object id in hex.
    pub id: String,
    /// The entry's name (bytes that are not UTF-8 shown as U+FFFD).
    pub name: String,
}

impl LevelEntry {
    /// Whether the entry is a folder.
    pub fn is_tree(&self) -> bool {
        self.kind == "tree"
    }
}

impl CliRepo {
    /// The tree of `commit`.
    pub fn tree_of(&self, commit: &str, deadline: &Deadline) -> Result<String, GitError> {
        Ok(self
            .run(
                &["rev-parse", "--verify", &format!("{commit}^{{tree}}")],
                deadline,
                "reading a commit's tree (git rev-parse)",
            )?
            .trim()
            .to_string())
    }

    /// The entries of one tree level, in the tree's order (duplicates kept).
    pub fn level(&self, tree: &str, deadline: &Deadline) -> Result<Vec<LevelEntry>, GitError> {
        let out = self.run(
            &["ls-tree", "-z", "--full-tree", tree],
            deadline,
            "reading a tree (git ls-tree)",
        )?;
        let mut entries = Vec::new();
        for record in out.split('\0').filter(|r| !r.is_empty()) {
            let Some((meta, name)) = record.split_once('\t') else {
                continue;
            };
            let mut fields = meta.split(' ');
            let (Some(mode), Some(kind), Some(id)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            entries.push(LevelEntry {
                mode: mode.to_string(),
                kind: kind.to_string(),
                id: id.to_string(),
                name: name.to_string(),
            });
        }
        Ok(entries)
    }

    /// The folder at `path` (`a/b`) inside `tree`, if there is one (a name held twice: none).
    pub fn subtree_at(
        &self,
        tree: &str,
        path: &str,
        deadline: &Deadline,
    ) -> Result<Option<String>, GitError> {
        let mut at = tree.to_string();
        for part in path.split('/') {
            let level = self.level(&at, deadline)?;
            let mut named = level.iter().filter(|e| e.name == part);
            match (named.next(), named.next()) {
                (Some(e), None) if e.is_tree() => at = e.id.clone(),
                _ => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    /// Writes one tree level; returns its id. Written as the object's bytes (`git hash-object
    /// -t tree --literally`), not by `git mktree`, which refuses a name with a `/` or an entry
    /// whose object is not of its mode's kind: a teammate's crafted entry that this level only
    /// carries must never stop a sync from writing the level (it would, at every sync).
    pub fn make_tree(
        &self,
        entries: &[LevelEntry],
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        // git's order: by name, a folder's name compared as if it ended with `/`.
        let key = |e: &LevelEntry| {
            let mut key = e.name.as_bytes().to_vec();
            if e.is_tree() {
                key.push(b'/');
            }
            key
        };
        let mut sorted: Vec<&LevelEntry> = entries.iter().collect();
        sorted.sort_by_key(|e| key(e));
        let mut input = Vec::new();
        for e in sorted {
            input.extend_from_slice(e.mode.trim_start_matches('0').as_bytes());
            input.push(b' ');
            input.extend_from_slice(e.name.as_bytes());
            input.push(0);
            input.extend(id_bytes(&e.id).ok_or_else(|| GitError::Cli {
                context: "writing a tree (git hash-object)".to_string(),
                message: format!("the entry {} names no object id ({})", e.name, e.id),
            })?);
        }
        Ok(self
            .run_with(
                &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
                &[],
                &input,
                deadline,
                "writing a tree (git hash-object)",
            )?
            .trim()
            .to_string())
    }

    /// `root` (a tree; `None`: empty) with `updates` made — paths from the top, `Some` sets a
    /// file, `None` removes it (and a folder left empty) — level by level: only the folders on
    /// an updated path are read and rewritten, every other entry stays as it is.
    pub fn edit_tree(
        &self,
        root: Option<&str>,
        updates: &BTreeMap<String, Option<TreeEntry>>,
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        let edited = self.edit_level(root, updates, deadline)?;
        match edited {
            Some(tree) => Ok(tree),
            None => self.make_tree(&[], deadline),
        }
    }

    fn edit_level(
        &self,
        tree: Option<&str>,
        updates: &BTreeMap<String, Option<TreeEntry>>,
        deadline: &Deadline,
    ) -> Result<Option<String>, GitError> {
        let mut entries = match tree {
            Some(tree) => self.level(tree, deadline)?,
            None => Vec::new(),
        };
        let mut below: BTreeMap<&str, BTreeMap<String, Option<TreeEntry>>> = BTreeMap::new();
        for (path, update) in updates {
            match path.split_once('/') {
                Some((dir, rest)) => {
                    below
                        .entry(dir)
                        .or_default()
                        .insert(rest.to_string(), update.clone());
                }
                None => {
                    entries.retain(|e| e.name != *path);
                    if let Some(file) = update {
                        let kind = if file.mode == "160000" {
                            "commit"
                        } else {
                            "blob"
                        };
                        entries.push(LevelEntry {
                            mode: file.mode.clone(),
                            kind: kind.to_string(),
                            id: file.id.clone(),
                            name: path.clone(),
                        });
                    }
                }
            }
        }
        for (dir, inner) in below {
            let existing = {
                let mut named = entries.iter().filter(|e| e.name == dir);
                match (named.next(), named.next()) {
                    (Some(e), None) if e.is_tree() => Some(e.id.clone()),
                    _ => None,
                }
            };
            let edited = self.edit_level(existing.as_deref(), &inner, deadline)?;
            if existing.is_none() && edited.is_none() {
                continue;
            }
            entries.retain(|e| e.name != dir);
            if let Some(id) = edited {
                entries.push(LevelEntry {
                    mode: "040000".into(),
                    kind: "tree".into(),
                    id,
                    name: dir.to_string(),
                });
            }
        }
        if entries.is_empty() {
            return Ok(None);
        }
        self.make_tree(&entries, deadline).map(Some)
    }
}

/// An object id's bytes from its hex (SHA-1 or SHA-256); `None` for anything else.
fn id_bytes(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::git_cli as git;
    use crate::git::repo::RepoPaths;

    #[test]
    fn edits_keep_what_read_tree_would_refuse() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "--object-format=sha256"]);
        let cli = CliRepo::needing_git(&RepoPaths {
            workdir: dir.to_path_buf(),
            git_dir: dir.join(".git"),
        })
        .unwrap();
        let deadline = Deadline::after(std::time::Duration::from_secs(30));
        let blob = cli.store_raw(b"x\n", &deadline).unwrap();
        let crafted = LevelEntry {
            mode: "100644".into(),
            kind: "blob".into(),
            id: blob.clone(),
            name: ".GIT".into(),
        };
        let folder = cli
            .make_tree(std::slice::from_ref(&crafted), &deadline)
            .unwrap();
        let team = cli
            .make_tree(
                &[LevelEntry {
                    mode: "040000".into(),
                    kind: "tree".into(),
                    id: folder,
                    name: "team".into(),
                }],
                &deadline,
            )
            .unwrap();
        let mut updates = BTreeMap::new();
        let file = TreeEntry {
            mode: "100644".into(),
            id: blob,
        };
        updates.insert("team/a.md".to_string(), Some(file.clone()));
        let edited = cli.edit_tree(Some(&team), &updates, &deadline).unwrap();
        let inner = cli.subtree_at(&edited, "team", &deadline).unwrap().unwrap();
        let names: Vec<String> = cli
            .level(&inner, &deadline)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, [".GIT", "a.md"]);

        let mut removal = BTreeMap::new();
        removal.insert("team/a.md".to_string(), None);
        removal.insert("team/.GIT".to_string(), None);
        let emptied = cli.edit_tree(Some(&edited), &removal, &deadline).unwrap();
        assert!(cli.level(&emptied, &deadline).unwrap().is_empty());
    }
}
