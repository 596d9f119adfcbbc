//! What a long-lived server keeps between calls, so that a call pays only for what changed:
//! one repository handle and the last commit of each memory path, remembered for the `HEAD`
//! commit it was found at ([`PathCommits`]); and the gate's [`Gate`], remembered for the
//! stamps of the files it is read from ([`GateBook`]). Nothing is opened or read before the
//! first call that needs it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use git2::{Oid, Repository};

use crate::domain::check::CONFIG_FILE;
use crate::domain::gate::Gate;
use crate::domain::scope::ScopeKind;
use crate::domain::secrets::IGNORE_FILE;
use crate::domain::store::Stamp;
use crate::git::history::file::{ByDate, LastChange};
use crate::git::plain::{self, PlainHead};
use crate::git::repo::{self, RepoPaths};

use super::ages_file;
use crate::ops::Project;

pub use crate::ops::recall::Freshness;

/// The last commit that changed a memory: what its age line says.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CacheChange {
    /// The commit's id.
    pub(super) commit: [u8; 20],
    /// Author time, seconds since the Unix epoch (what `git log` shows).
    pub(super) time: i64,
    /// The author's name.
    pub(super) author: String,
}

/// Path (relative to the repository root) → the blob the commit holds there and the last
/// commit that changed it, for every file the commit holds below the memory folders.
pub(super) type CacheChanges = HashMap<String, ([u8; 20], Arc<CacheChange>)>;

/// Where `HEAD` was when the book was filled.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tip {
    /// Read from the git folder's files ([`plain::head_commit`]).
    Plain(PlainHead),
    /// Asked of libgit2 (a layout [`plain::head_commit`] does not read); `None`: no commit.
    Git(Option<Oid>),
}

/// The last commit of each memory path, for one `HEAD` commit.
#[derive(Default)]
struct PathCommits {
    /// Opened the first time the history must be walked or `HEAD` cannot be read plainly;
    /// `None` until then, or when the repository cannot be opened.
    repo: Option<Repository>,
    /// The `HEAD` the entries below were found at; `None` before the first lookup.
    tip: Option<Tip>,
    changes: CacheChanges,
}

/// Freshness of memories for a server that answers many calls: the rule recall uses (the last
/// commit that touched the file when git tracks it as it is on disk, else its file time), with
/// one repository handle and, for each `HEAD` commit, the last commit of every memory from one
/// walk of the history ([`history_below`]). When `HEAD` moves (a sync, a commit, a checkout),
/// it is walked again. What a walk found is kept in a file in the git folder for the commit it
/// was made at ([`ages_file`]), so the next server at the same `HEAD` reads it instead, without
/// starting libgit2 at all.
pub struct FreshnessBook {
    /// The repository's work-tree root and git folder; `None` outside a repository.
    repo: Option<RepoPaths>,
    /// The memory folders inside the work tree, relative to its root (`.qwen/team-memory`).
    dirs: Vec<String>,
    book: Mutex<PathCommits>,
}

impl FreshnessBook {
    /// A book for the memory folders `dirs` of the repository `repo` (nothing is opened
    /// yet); folders outside the work tree are left out, their memories have file times.
    pub fn new(repo: Option<RepoPaths>, dirs: &[PathBuf]) -> FreshnessBook {
        let dirs = match &repo {
            Some(repo) => dirs
                .iter()
                .filter_map(|d| repo_relative(&repo.workdir, d))
                .collect(),
            None => Vec::new(),
        };
        FreshnessBook {
            repo,
            dirs,
            book: Mutex::new(PathCommits::default()),
        }
    }

    /// A book for the project's memory folders (team, private, user) — the same folders, so
    /// the same ages file, whichever process fills it: the MCP server or `prompt-context`.
    pub fn of_project(project: &Project) -> FreshnessBook {
        let dirs: Vec<PathBuf> = [ScopeKind::Team, ScopeKind::Private, ScopeKind::User]
            .iter()
            .filter_map(|s| project.layout.memory_dir(*s))
            .collect();
        FreshnessBook::new(project.repo.clone(), &dirs)
    }

    /// The freshness of each memory file (`path`, and the `bytes` it holds, as just read), in
    /// order.
    pub fn of(&self, files: &[(&Path, &[u8])]) -> Vec<Freshness> {
        let committed = self.committed(files);
        files
            .iter()
            .zip(committed)
            .map(|((path, _), found)| found.unwrap_or_else(|| file_time(path)))
            .collect()
    }

    /// Fills the book for `HEAD` now, so that the next call finds every memory's last
    /// commit remembered: what the server does once at start, on a thread of its own.
    pub fn prepare(&self) {
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        self.look_up(&mut book, None);
    }

    /// When `HEAD` is not where the book was filled, fills it anew: from the ages file kept
    /// for that commit, else by walking the history (and keeping what was found). `false`
    /// outside a repository, or when the walk was still going at `limit` (nothing is kept).
    fn look_up(&self, book: &mut PathCommits, limit: Option<WalkLimit>) -> bool {
        let Some(paths) = &self.repo else {
            return false;
        };
        let tip = match plain::head_commit(&paths.git_dir) {
            Some(head) => Tip::Plain(head),
            None => {
                let Some(repo) = opened(book, paths) else {
                    return false;
                };
                Tip::Git(
                    repo.head()
                        .ok()
                        .and_then(|h| h.peel_to_commit().ok())
                        .map(|c| c.id()),
                )
            }
        };
        if book.tip.as_ref() == Some(&tip) {
            return true;
        }
        book.changes.clear();
        let key = ages_file::key(&paths.git_dir, &self.dirs);
        let start = match &tip {
            Tip::Plain(PlainHead::Unborn) | Tip::Git(None) => None,
            Tip::Plain(PlainHead::At(id)) => {
                if let Some(kept) = ages_file::load(&paths.git_dir, id, &key) {
                    book.changes = kept;
                    book.tip = Some(tip);
                    return true;
                }
                opened(book, paths).and_then(|_| Oid::from_str(id).ok())
            }
            Tip::Git(Some(id)) => Some(*id),
        };
        if let (Some(start), Some(repo)) = (start, book.repo.as_ref()) {
            let mut commits: HashMap<Oid, Arc<CacheChange>> = HashMap::new();
            for dir in &self.dirs {
                let Some(below) = history_below(repo, start, dir, limit) else {
                    book.changes.clear();
                    return false;
                };
                for (path, (blob, change)) in below {
                    let change = commits
                        .entry(change.commit)
                        .or_insert_with(|| {
                            Arc::new(CacheChange {
                                commit: oid_bytes(change.commit),
                                time: change.time,
                                author: change.author.clone(),
                            })
                        })
                        .clone();
                    book.changes.insert(path, (oid_bytes(blob), change));
                }
            }
            if let Tip::Plain(PlainHead::At(id)) = &tip {
                ages_file::store(&paths.git_dir, id, &key, &book.changes);
            }
        }
        book.tip = Some(tip);
        true
    }

    /// The last commit of each memory file (`path`, and the `bytes` it holds, as just read),
    /// in order; `None` where git does not hold that version at `HEAD` (its age is then its
    /// file time, which the caller knows).
    pub fn committed(&self, files: &[(&Path, &[u8])]) -> Vec<Option<Freshness>> {
        self.committed_by(files, None)
            .unwrap_or_else(|| vec![None; files.len()])
    }

    /// [`FreshnessBook::committed`] for a process that asks once, when the ages for `HEAD` are
    /// kept (only the lines of these files are looked up in them; the book stays empty) or
    /// found by a walk of the history within `limit`; `None` otherwise (outside a repository
    /// too): a caller with a hard time budget then asks git about its few files alone.
    pub fn committed_once(
        &self,
        files: &[(&Path, &[u8])],
        limit: WalkLimit,
    ) -> Option<Vec<Option<Freshness>>> {
        let paths = self.repo.as_ref()?;
        if let Some(PlainHead::At(id)) = plain::head_commit(&paths.git_dir) {
            let rels: Vec<Option<String>> = files
                .iter()
                .map(|(path, _)| repo_relative(&paths.workdir, path))
                .collect();
            let wanted: Vec<&str> = rels.iter().flatten().map(String::as_str).collect();
            let key = ages_file::key(&paths.git_dir, &self.dirs);
            if let Some(kept) = ages_file::load_paths(&paths.git_dir, &id, &key, &wanted) {
                return Some(
                    files
                        .iter()
                        .zip(&rels)
                        .map(|((_, bytes), rel)| commit_age(kept.get(rel.as_deref()?)?, bytes))
                        .collect(),
                );
            }
        }
        self.committed_by(files, Some(limit))
    }

    fn committed_by(
        &self,
        files: &[(&Path, &[u8])],
        limit: Option<WalkLimit>,
    ) -> Option<Vec<Option<Freshness>>> {
        let Some(paths) = &self.repo else {
            return None;
        };
        let mut book = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if !self.look_up(&mut book, limit) {
            return None;
        }
        Some(
            files
                .iter()
                .map(|(path, bytes)| {
                    let kept = book.changes.get(&repo_relative(&paths.workdir, path)?)?;
                    commit_age(kept, bytes)
                })
                .collect(),
        )
    }
}

/// The age the last commit `kept` for a path gives the file holding `bytes`: git knows this
/// version only when the work tree holds what `HEAD` does.
fn commit_age((blob, change): &([u8; 20], Arc<CacheChange>), bytes: &[u8]) -> Option<Freshness> {
    (plain::blob_sha1(bytes) == *blob).then(|| Freshness {
        time: change.time,
        from: "commit",
        by: Some(change.author.clone()),
    })
}

/// The book's repository, opened on first use.
fn opened<'b>(book: &'b mut PathCommits, paths: &RepoPaths) -> Option<&'b Repository> {
    if book.repo.is_none() {
        // libgit2 hashes every object it reads again to check its id (with collision
        // detection: most of the cost of reading a large tree); git itself checks ids when
        // objects arrive (fetch, index-pack) and in fsck, not on every read. This server only
        // reads its own repository's objects, for ages: it reads them as git does.
        git2::opts::strict_hash_verification(false);
        book.repo = repo::open(paths).ok();
    }
    book.repo.as_ref()
}

fn oid_bytes(id: Oid) -> [u8; 20] {
    let mut out = [0; 20];
    let bytes = id.as_bytes();
    if bytes.len() == out.len() {
        out.copy_from_slice(bytes);
    }
    out
}

/// The id of the tree at `dir` (relative to the repository root) in `tree`.
fn tree_at(tree: &git2::Tree<'_>, dir: &str) -> Option<Oid> {
    let entry = tree.get_path(Path::new(dir)).ok()?;
    (entry.kind() == Some(git2::ObjectType::Tree)).then(|| entry.id())
}

/// Trees read from the repository, those of `HEAD`'s memory folder kept while `keep` is on:
/// the commits that last changed the memories hold many of the same trees, read once this way
/// (a folder of 2,500 memories is a tree of 100 KB to inflate, hash and parse).
struct Trees<'r> {
    repo: &'r Repository,
    kept: HashMap<Oid, Rc<git2::Tree<'r>>>,
    keep: bool,
}

impl<'r> Trees<'r> {
    fn get(&mut self, id: Oid) -> Option<Rc<git2::Tree<'r>>> {
        if let Some(tree) = self.kept.get(&id) {
            return Some(Rc::clone(tree));
        }
        let tree = Rc::new(self.repo.find_tree(id).ok()?);
        if self.keep {
            self.kept.insert(id, Rc::clone(&tree));
        }
        Some(tree)
    }
}

/// Calls `found` with the path (below `prefix`) and blob of every file in `here` that `before`
/// does not hold with the same blob: added or changed (a removed file has no last change to
/// tell). Subtrees with the same id in both are equal and skipped, as git's tree diff does.
fn changed_files(
    trees: &mut Trees<'_>,
    before: Option<&git2::Tree<'_>>,
    here: &git2::Tree<'_>,
    prefix: &mut String,
    found: &mut dyn FnMut(&str, Oid),
) {
    for entry in here.iter() {
        let name = String::from_utf8_lossy(entry.name_bytes());
        let old = before.and_then(|b| b.get_name(&name));
        if old.as_ref().is_some_and(|o| o.id() == entry.id()) {
            continue;
        }
        let len = prefix.len();
        prefix.push_str(&name);
        match entry.kind() {
            Some(git2::ObjectType::Blob) => found(prefix, entry.id()),
            Some(git2::ObjectType::Tree) => {
                if let Some(tree) = trees.get(entry.id()) {
                    let old_tree = old
                        .filter(|o| o.kind() == Some(git2::ObjectType::Tree))
                        .and_then(|o| trees.get(o.id()));
                    prefix.push('/');
                    changed_files(trees, old_tree.as_deref(), &tree, prefix, found);
                }
            }
            _ => {}
        }
        prefix.truncate(len);
    }
}

/// The files below `dir` whose blob in `here` differs from `before`, as paths relative to the
/// repository root.
fn changed_below(
    trees: &mut Trees<'_>,
    dir: &str,
    before: Option<&git2::Tree<'_>>,
    here: &git2::Tree<'_>,
) -> HashSet<String> {
    let mut out = HashSet::new();
    changed_files(
        trees,
        before,
        here,
        &mut format!("{dir}/"),
        &mut |path, _| {
            out.insert(path.to_string());
        },
    );
    out
}

/// The blob `HEAD` holds at every file below `dir` (relative to the repository root) and the
/// last commit that changed it, from one walk of the history, newest first, that stops once
/// every file is accounted for. Only the commits whose `dir` differs from every parent's are
/// looked into, by comparing that folder's trees (equal subtrees skipped), so a memory folder
/// of 10,000 files costs a lookup per file once, not per commit. Like `git log -- PATH`, a
/// merge counts as changing a file only when the file differs from every parent; in a shallow
/// clone the walk ends at the shallow boundary. `None` when the walk was still going at
/// `limit`.
fn history_below(
    repo: &Repository,
    start: Oid,
    dir: &str,
    limit: Option<WalkLimit>,
) -> Option<HashMap<String, (Oid, Arc<LastChange>)>> {
    let mut heads: HashMap<String, Oid> = HashMap::new();
    let Ok(start) = repo
        .find_object(start, None)
        .and_then(|o| o.peel_to_commit())
    else {
        return Some(HashMap::new());
    };
    let Ok(head) = start.tree() else {
        return Some(HashMap::new());
    };
    let mut trees = Trees {
        repo,
        kept: HashMap::new(),
        keep: true,
    };
    let Some(top) = tree_at(&head, dir).and_then(|id| trees.get(id)) else {
        return Some(HashMap::new());
    };
    changed_files(
        &mut trees,
        None,
        &top,
        &mut format!("{dir}/"),
        &mut |path, blob| {
            heads.insert(path.to_string(), blob);
        },
    );
    trees.keep = false;
    let mut found: HashMap<String, (Oid, Arc<LastChange>)> = HashMap::new();
    // With a deadline, by date: libgit2's sorted walk reads the whole history before the first
    // commit, which no deadline could bound (see `ByDate`).
    let order: Box<dyn Iterator<Item = Option<Oid>>> = match limit {
        None => {
            let Ok(mut revwalk) = repo.revwalk() else {
                return Some(found);
            };
            if revwalk
                .set_sorting(git2::Sort::TIME | git2::Sort::TOPOLOGICAL)
                .is_err()
                || revwalk.push(start.id()).is_err()
            {
                return Some(found);
            }
            Box::new(revwalk.map(Result::ok))
        }
        Some(_) => Box::new(ByDate::new(repo, &start).map(Some)),
    };
    for (read, oid) in order.enumerate() {
        if limit.is_some_and(|l| Instant::now() > l.until || l.commits.is_some_and(|n| read >= n)) {
            return None;
        }
        // A missing commit: the shallow boundary.
        let Some(commit) = oid.and_then(|oid| repo.find_commit(oid).ok()) else {
            break;
        };
        let Ok(tree) = commit.tree() else {
            break;
        };
        let here = tree_at(&tree, dir);
        let parents: Vec<Option<Oid>> = commit
            .parent_ids()
            .filter_map(|id| repo.find_commit(id).ok())
            .filter_map(|p| p.tree().ok())
            .map(|t| tree_at(&t, dir))
            .collect();
        if parents.contains(&here) {
            continue;
        }
        let Some(here) = here.and_then(|id| trees.get(id)) else {
            continue;
        };
        let change = Arc::new(LastChange {
            commit: commit.id(),
            time: commit.author().when().seconds(),
            author: commit.author().name().unwrap_or("unknown").to_string(),
        });
        // A file `HEAD` holds that is still looked for, changed here: this is its last change.
        let mut visit = |path: &str| {
            if let Some((path, blob)) = heads.remove_entry(path) {
                found.insert(path, (blob, Arc::clone(&change)));
            }
        };
        if parents.len() < 2 {
            let before = parents
                .first()
                .copied()
                .flatten()
                .and_then(|id| trees.get(id));
            let prefix = &mut format!("{dir}/");
            changed_files(
                &mut trees,
                before.as_deref(),
                &here,
                prefix,
                &mut |path, _| visit(path),
            );
        } else {
            // A merge: what differs from every parent.
            let mut changed: Option<HashSet<String>> = None;
            for parent in &parents {
                let before = parent.and_then(|id| trees.get(id));
                let set = changed_below(&mut trees, dir, before.as_deref(), &here);
                changed = Some(match changed {
                    None => set,
                    Some(kept) => kept.intersection(&set).cloned().collect(),
                });
            }
            for path in changed.unwrap_or_default() {
                visit(&path);
            }
        }
        if heads.is_empty() {
            break;
        }
    }
    Some(found)
}

/// How far a walk of the history for every memory's age may go before it is abandoned: a
/// time, and a number of commits read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimit {
    /// When the walk is abandoned.
    pub until: Instant,
    /// How many commits it may read (`None`: as many as it has time for).
    pub commits: Option<usize>,
}

/// `path` relative to the work tree's `root`, `/`-separated, as git names it.
fn repo_relative(root: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(root)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
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
pub struct GateBook {
    /// The files the policy is read from.
    files: Vec<PathBuf>,
    kept: Mutex<Option<KeptGate>>,
}

/// A policy and the stamps of its files when it was read (`None`: the file was not there).
struct KeptGate {
    stamps: Vec<Option<Stamp>>,
    policy: Arc<Gate>,
}

impl GateBook {
    /// A book for `project`'s policy files (nothing is read yet).
    pub fn new(project: &Project) -> GateBook {
        let mut files = vec![crate::ops::guard::user_config_path(&project.env.base())];
        if let Some(team) = project.layout.memory_dir(ScopeKind::Team) {
            files.push(team.join(CONFIG_FILE));
            files.push(team.join(IGNORE_FILE));
        }
        GateBook {
            files,
            kept: Mutex::new(None),
        }
    }

    /// The policy in force now.
    pub fn policy(&self, project: &Project) -> Arc<Gate> {
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
        *kept = settled.then(|| KeptGate {
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
mod tests;
