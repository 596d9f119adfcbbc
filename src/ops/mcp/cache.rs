//! What a long-lived server keeps between calls, so that a call pays only for what changed:
//! one repository handle and the last commit of each memory path, remembered for the `HEAD`
//! commit it was found at ([`FreshnessBook`]); and the gate's [`Policy`], remembered for the
//! stamps of the files it is read from ([`PolicyBook`]). Nothing is opened or read before the
//! first call that needs it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::{Oid, Repository};

use crate::domain::check::CONFIG_FILE;
use crate::domain::gate::Policy;
use crate::domain::scope::ScopeKind;
use crate::domain::secrets::IGNORE_FILE;
use crate::domain::store::Stamp;
use crate::git::file_history::{self, LastChange};
use crate::git::{repo, snapshot};
use crate::ops::Project;

/// When a memory last changed, and who changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freshness {
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// `commit` (the last commit that touched it) or `file-time`.
    pub from: &'static str,
    /// Who made that commit (tracked memories only).
    pub by: Option<String>,
}

/// The last commit of each memory path, for one `HEAD` commit.
#[derive(Default)]
struct Book {
    /// Opened at the first lookup; `None` until then, or when the repository cannot be opened.
    repo: Option<Repository>,
    /// The `HEAD` commit the entries below were found at.
    tip: Option<Oid>,
    /// Path (relative to the repository root) → the blob `HEAD` holds there and the last
    /// commit that changed it; `None` when `HEAD` does not hold the path.
    changes: HashMap<String, Option<(Oid, LastChange)>>,
}

/// Freshness of memories for a server that answers many calls: the rule recall uses (the last
/// commit that touched the file when git tracks it as it is on disk, else its file time), with
/// one repository handle and each path's last commit computed once per `HEAD` commit. When
/// `HEAD` moves (a sync, a commit, a checkout), everything remembered is dropped.
pub struct FreshnessBook {
    /// The repository's work-tree root; `None` outside a repository.
    root: Option<PathBuf>,
    book: Mutex<Book>,
}

impl FreshnessBook {
    /// A book for the repository at `root` (nothing is opened yet).
    pub fn new(root: Option<PathBuf>) -> FreshnessBook {
        FreshnessBook {
            root,
            book: Mutex::new(Book::default()),
        }
    }

    /// The freshness of each memory file (`path`, and the `bytes` it holds, as just read), in
    /// order. The history is walked once for every path not yet known at this `HEAD`.
    pub fn of(&self, files: &[(&Path, &[u8])]) -> Vec<Freshness> {
        let committed = self.committed(files);
        files
            .iter()
            .zip(committed)
            .map(|((path, _), found)| found.unwrap_or_else(|| file_time(path)))
            .collect()
    }

    fn committed(&self, files: &[(&Path, &[u8])]) -> Vec<Option<Freshness>> {
        let Some(root) = &self.root else {
            return vec![None; files.len()];
        };
        let rels: Vec<Option<String>> = files
            .iter()
            .map(|(path, _)| {
                path.strip_prefix(root)
                    .ok()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            })
            .collect();
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if book.repo.is_none() {
            book.repo = repo::open(root).ok();
        }
        let Some(repo) = book.repo.take() else {
            return vec![None; files.len()];
        };
        let tip = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .map(|c| c.id());
        if tip != book.tip {
            book.changes.clear();
            book.tip = tip;
        }
        let mut missing: Vec<String> = rels
            .iter()
            .flatten()
            .filter(|rel| !book.changes.contains_key(*rel))
            .cloned()
            .collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            let heads = file_history::head_blobs(&repo, &missing).unwrap_or_default();
            let mut changes = file_history::last_changes(&repo, &missing).unwrap_or_default();
            for rel in missing {
                let entry = heads.get(&rel).copied().zip(changes.remove(&rel));
                book.changes.insert(rel, entry);
            }
        }
        let out = files
            .iter()
            .zip(&rels)
            .map(|((_, bytes), rel)| {
                let (blob, change) = book.changes.get(rel.as_ref()?)?.as_ref()?;
                // Git knows this version only when the work tree holds what `HEAD` does.
                (snapshot::blob_id(bytes).ok()? == *blob).then(|| Freshness {
                    time: change.time,
                    from: "commit",
                    by: Some(change.author.clone()),
                })
            })
            .collect();
        book.repo = Some(repo);
        out
    }
}

fn file_time(path: &Path) -> Freshness {
    let time = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    Freshness {
        time,
        from: "file-time",
        by: None,
    }
}

/// The gate's policy ([`crate::ops::guard::policy`]: the user's configuration over the
/// team's, and the team's accepted fingerprints), read again only when one of its files
/// changed. A file's stamp is trusted only once it is older than the file system's clock tick
/// ([`crate::ops::recall::SETTLE`]); until then the policy is read on every call.
pub struct PolicyBook {
    /// The files the policy is read from.
    files: Vec<PathBuf>,
    kept: Mutex<Option<KeptPolicy>>,
}

/// A policy and the stamps of its files when it was read (`None`: the file was not there).
struct KeptPolicy {
    stamps: Vec<Option<Stamp>>,
    policy: Arc<Policy>,
}

impl PolicyBook {
    /// A book for `project`'s policy files (nothing is read yet).
    pub fn new(project: &Project) -> PolicyBook {
        let mut files = vec![crate::ops::guard::user_config_path(&project.env.base())];
        if let Some(team) = project.layout.memory_dir(ScopeKind::Team) {
            files.push(team.join(CONFIG_FILE));
            files.push(team.join(IGNORE_FILE));
        }
        PolicyBook {
            files,
            kept: Mutex::new(None),
        }
    }

    /// The policy in force now.
    pub fn policy(&self, project: &Project) -> Arc<Policy> {
        let stamps: Vec<Option<Stamp>> = self
            .files
            .iter()
            .map(|f| std::fs::metadata(f).ok().map(|m| Stamp::of(&m)))
            .collect();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.as_ref() {
            if k.stamps == stamps {
                return Arc::clone(&k.policy);
            }
        }
        let policy = Arc::new(crate::ops::guard::policy(project).0);
        let now = now_ns();
        let window = crate::ops::recall::SETTLE.as_nanos() as i64;
        let settled = stamps.iter().flatten().all(|s| s.settled(now, window));
        *kept = settled.then(|| KeptPolicy {
            stamps,
            policy: Arc::clone(&policy),
        });
        policy
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commits `path` holding `text` with `time` as author and committer time.
    fn commit(repo: &Repository, path: &str, text: &str, author: &str, time: i64) {
        let root = repo.workdir().unwrap().to_path_buf();
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(path)).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::new(author, "a@example.com", &git2::Time::new(time, 0)).unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, "change", &tree, &parents)
            .unwrap();
    }

    #[test]
    fn ages_come_from_the_commit_until_the_file_or_head_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let repo = Repository::init(&root).unwrap();
        let rel = ".qwen/team-memory/project/a.md";
        commit(&repo, rel, "first\n", "Alice", 1_000_000);
        let path = root.join(rel);
        let book = FreshnessBook::new(Some(root.clone()));
        let first = book.of(&[(path.as_path(), b"first\n".as_slice())]);
        assert_eq!(
            first[0],
            Freshness {
                time: 1_000_000,
                from: "commit",
                by: Some("Alice".into()),
            }
        );
        // Edited in the work tree: git does not know this version.
        let edited = book.of(&[(path.as_path(), b"edited\n".as_slice())]);
        assert_eq!(edited[0].from, "file-time");
        // A commit moves HEAD: what was remembered for the old HEAD is not used.
        commit(&repo, rel, "second\n", "Bob", 2_000_000);
        let second = book.of(&[(path.as_path(), b"second\n".as_slice())]);
        assert_eq!(
            (second[0].time, second[0].by.as_deref()),
            (2_000_000, Some("Bob"))
        );
        // A file git does not track, and a server outside any repository.
        let loose = root.join(".qwen/team-memory/project/b.md");
        std::fs::write(&loose, "b\n").unwrap();
        assert_eq!(
            book.of(&[(loose.as_path(), b"b\n".as_slice())])[0].from,
            "file-time"
        );
        let outside = FreshnessBook::new(None);
        assert_eq!(
            outside.of(&[(path.as_path(), b"second\n".as_slice())])[0].from,
            "file-time"
        );
    }
}
