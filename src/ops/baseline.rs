//! Consolidation baselines: what changed in a scope since the last consolidation, recorded the
//! way Codex records it, and a lease that keeps two consolidations apart.
//!
//! - private and user scopes: a bare repository beside the memory folder
//!   (`memory-baseline.git`, `memories-baseline.git`) holding one parentless commit, rebuilt on
//!   every `commit` so forgotten content does not linger;
//! - team scope: the ref `refs/teammem/baseline` in the project repository.
//!
//! Computing the diff writes nothing into any object store: current files are hashed with git's
//! blob hashing, never stored.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::changes::{self, BaselineChange, FileChange, MODE_EXECUTABLE, MODE_FILE};
use crate::domain::recall::usage;
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::git::cli_repo::CliRepo;
use crate::git::snapshot::{self, BaselineTree, SnapshotFile};
use crate::git::{GitError, repo};

use super::scope_write::{state_dir, state_prefix};
use super::{OpError, Project};

/// How long a lease holds before another consolidation may take it, in seconds.
pub const LEASE_SECS: i64 = 3600;

/// What `baseline diff` produced.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineDiff {
    /// The scope.
    pub scope: ScopeKind,
    /// The markdown report.
    pub report: String,
    /// How many files changed.
    pub changed: usize,
    /// Whether the diff was cut at 4 MiB.
    pub cut: bool,
    /// The baseline commit compared against, if there is one yet.
    pub baseline: Option<String>,
    /// The lease token, with `--claim`.
    pub token: Option<String>,
}

/// What `baseline commit` recorded.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineCommitted {
    /// The scope.
    pub scope: ScopeKind,
    /// The new baseline commit.
    pub commit: String,
    /// How many files it holds.
    pub files: usize,
    /// Where it is kept: the bare repository, or the ref.
    pub location: String,
}

/// A lease on a scope's baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lease {
    token: String,
    pid: u32,
    claimed_at: i64,
    /// The baseline commit the holder's diff was made against.
    baseline: Option<String>,
}

/// Where a scope's baseline is kept.
enum Store {
    Bare(PathBuf),
    TeamRef(repo::RepoPaths),
}

fn store_of(project: &Project, scope: ScopeKind) -> Result<Store, OpError> {
    let bare = || -> Result<Store, OpError> {
        Ok(Store::Bare(state_dir(project, scope)?.join(format!(
            "{}-baseline.git",
            state_prefix(project, scope)?
        ))))
    };
    match scope {
        // A repository libgit2 cannot open (reftable refs, SHA-256 objects) keeps the team
        // baseline in a bare repository of its own, as the other scopes do: the baseline is
        // this clone's alone either way, never pushed.
        ScopeKind::Team if CliRepo::needing_git(project.repo_paths()?).is_some() => bare(),
        ScopeKind::Team => Ok(Store::TeamRef(project.repo_paths()?.clone())),
        _ => bare(),
    }
}

fn open_store(store: &Store) -> Result<Option<(git2::Repository, &'static str)>, OpError> {
    Ok(match store {
        Store::Bare(path) => snapshot::open_bare(path)?.map(|r| (r, snapshot::BARE_BASELINE_REF)),
        Store::TeamRef(paths) => {
            Some((repo::open(paths)?, crate::git::recovery::TEAM_BASELINE_REF))
        }
    })
}

/// A current file as the diff sees it: mode and blob id, and the bytes when they were read.
struct Current {
    path: String,
    mode: u32,
    oid: git2::Oid,
    bytes: Option<Vec<u8>>,
    stat: Option<FileStat>,
}

/// What `stat` says of a file; when it matches the cache, the file is not read or hashed again
/// (the way git's index spares `git status` from rehashing the work tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct FileStat {
    size: u64,
    mtime_ns: i64,
    /// Unlike mtime, no one can set it back: an edit followed by `touch -d` still shows.
    ctime_ns: i64,
    ino: u64,
    mode: u32,
}

/// The stats and blob ids of the files recorded in a baseline, kept beside it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct StatCache {
    /// The baseline commit these stats belong to.
    commit: String,
    /// When the stats were taken, in nanoseconds since the Unix epoch.
    taken_ns: i64,
    files: std::collections::BTreeMap<String, (FileStat, String)>,
}

/// A file changed within this many nanoseconds before the stats were taken may change again
/// without its mtime moving (coarse timestamps), so it is always read ("racy git").
const RACY_NS: i64 = 2_000_000_000;

#[cfg(unix)]
fn file_stat(meta: &fs::Metadata) -> Option<FileStat> {
    use std::os::unix::fs::MetadataExt;
    Some(FileStat {
        size: meta.size(),
        mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        ino: meta.ino(),
        mode: git_mode(meta),
    })
}

#[cfg(not(unix))]
fn file_stat(_meta: &fs::Metadata) -> Option<FileStat> {
    None
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// The scope's current files with their git modes and blob ids. Files whose stat matches
/// `cache` are not read; the others are read and hashed (never written anywhere).
fn current_files(
    project: &Project,
    scope: ScopeKind,
    cache: Option<&StatCache>,
) -> Result<Vec<Current>, OpError> {
    let dir = project.check_scope_safe(scope)?;
    let mut files = Vec::new();
    for rel in store::memory_paths(&dir)? {
        let path = dir.join(&rel);
        if let Some((cached_stat, oid)) = cache.and_then(|c| c.files.get(&rel)) {
            let fresh = cache.is_some_and(|c| {
                cached_stat.mtime_ns.max(cached_stat.ctime_ns) < c.taken_ns - RACY_NS
            });
            let stat = fs::metadata(&path).ok().and_then(|m| file_stat(&m));
            if let (true, Some(stat), Ok(oid)) = (fresh, stat, git2::Oid::from_str(oid)) {
                if stat == *cached_stat {
                    files.push(Current {
                        path: rel,
                        mode: stat.mode,
                        oid,
                        bytes: None,
                        stat: Some(stat),
                    });
                    continue;
                }
            }
        }
        // One open, then fstat and read on the handle: a third of the syscalls of read + stat.
        let mut file = fs::File::open(&path).map_err(|e| OpError::io(&path, e))?;
        let meta = file.metadata().map_err(|e| OpError::io(&path, e))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| OpError::io(&path, e))?;
        files.push(Current {
            path: rel,
            mode: git_mode(&meta),
            oid: snapshot::blob_id(&bytes)?,
            bytes: Some(bytes),
            stat: file_stat(&meta),
        });
    }
    Ok(files)
}

fn stat_cache_path(project: &Project, scope: ScopeKind) -> Result<PathBuf, OpError> {
    Ok(state_dir(project, scope)?.join(format!(
        "{}-baseline.stat.json",
        state_prefix(project, scope)?
    )))
}

/// The stat cache of the baseline `commit`, if one was kept for it.
fn read_stat_cache(
    project: &Project,
    scope: ScopeKind,
    commit: Option<git2::Oid>,
) -> Option<StatCache> {
    let commit = commit?.to_string();
    let text = fs::read_to_string(stat_cache_path(project, scope).ok()?).ok()?;
    let cache: StatCache = serde_json::from_str(&text).ok()?;
    (cache.commit == commit).then_some(cache)
}

#[cfg(unix)]
fn git_mode(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 != 0 {
        MODE_EXECUTABLE
    } else {
        MODE_FILE
    }
}

#[cfg(not(unix))]
fn git_mode(_meta: &fs::Metadata) -> u32 {
    MODE_FILE
}

/// Compares the scope with its baseline and renders the report; with `claim`, takes the lease
/// first (refused while another consolidation holds it).
pub fn diff(project: &Project, scope: ScopeKind, claim: bool) -> Result<BaselineDiff, OpError> {
    let store = store_of(project, scope)?;
    let opened = open_store(&store)?;
    let (base, base_commit) = match &opened {
        Some((repo, refname)) => (
            snapshot::read_baseline(repo, refname)?.unwrap_or_default(),
            snapshot::ref_target(repo, refname)?,
        ),
        None => (BaselineTree::new(), None),
    };
    let cache = read_stat_cache(project, scope, base_commit);
    let current = current_files(project, scope, cache.as_ref())?;
    let dir = project.scope_dir(scope)?;
    let new_text = |file: &Current| -> Result<String, OpError> {
        let bytes = match &file.bytes {
            Some(b) => b.clone(),
            None => {
                let path = dir.join(&file.path);
                fs::read(&path).map_err(|e| OpError::io(&path, e))?
            }
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let mut changes = Vec::new();
    let paths: BTreeSet<&str> = base
        .keys()
        .map(String::as_str)
        .chain(current.iter().map(|f| f.path.as_str()))
        .collect();
    let by_path: std::collections::HashMap<&str, &Current> =
        current.iter().map(|f| (f.path.as_str(), f)).collect();
    let old_text = |oid: git2::Oid| -> Result<String, OpError> {
        let (repo, _) = opened
            .as_ref()
            .ok_or_else(|| OpError::Usage("baseline repository vanished".into()))?;
        Ok(String::from_utf8_lossy(&snapshot::read_blob(repo, oid)?).into_owned())
    };
    for path in paths {
        let change = match (base.get(path), by_path.get(path)) {
            (Some(old), Some(new)) => {
                if new.oid == old.oid && old.mode == new.mode {
                    continue;
                }
                FileChange {
                    path: path.to_string(),
                    kind: BaselineChange::Modified,
                    old_mode: Some(old.mode),
                    new_mode: Some(new.mode),
                    old_text: old_text(old.oid)?,
                    new_text: new_text(new)?,
                }
            }
            (None, Some(new)) => FileChange {
                path: path.to_string(),
                kind: BaselineChange::Added,
                old_mode: None,
                new_mode: Some(new.mode),
                old_text: String::new(),
                new_text: new_text(new)?,
            },
            (Some(old), None) => FileChange {
                path: path.to_string(),
                kind: BaselineChange::Deleted,
                old_mode: Some(old.mode),
                new_mode: None,
                old_text: old_text(old.oid)?,
                new_text: String::new(),
            },
            (None, None) => continue,
        };
        changes.push(change);
    }
    let title = match base_commit {
        Some(c) => format!(
            "Memory changes in the {scope} scope since baseline {}",
            &c.to_string()[..12]
        ),
        None => format!("Memory changes in the {scope} scope (no baseline yet: everything is new)"),
    };
    let report = changes::render(&title, &changes);
    // Claimed last, so a diff that fails on the way leaves no lease behind.
    let token = if claim {
        Some(claim_lease(project, scope, base_commit)?)
    } else {
        None
    };
    Ok(BaselineDiff {
        scope,
        report: report.text,
        changed: changes.len(),
        cut: report.cut,
        baseline: base_commit.map(|c| c.to_string()),
        token,
    })
}

/// Records the scope's current files as its new baseline. With a lease held, only its token may
/// do this; an expired or released token is refused.
pub fn commit(
    project: &Project,
    scope: ScopeKind,
    token: Option<&str>,
) -> Result<BaselineCommitted, OpError> {
    let lease_path = lease_path(project, scope)?;
    let lease = read_lease(&lease_path)?;
    let now = usage::now();
    let expected = match (&lease, token) {
        (Some(l), Some(t)) if l.token == t && now - l.claimed_at < LEASE_SECS => {
            Some(l.baseline.clone())
        }
        (Some(l), Some(t)) if l.token == t => {
            return Err(OpError::Refused(format!(
                "your baseline lease expired at {} — run `teammem baseline diff --claim` again and redo the consolidation",
                usage::utc_text(l.claimed_at + LEASE_SECS)
            )));
        }
        (Some(l), _) if now - l.claimed_at < LEASE_SECS => {
            return Err(OpError::Refused(format!(
                "another consolidation holds the {scope} baseline lease (pid {}, since {}) — pass its --token, or wait until {}",
                l.pid,
                usage::utc_text(l.claimed_at),
                usage::utc_text(l.claimed_at + LEASE_SECS)
            )));
        }
        (_, Some(_)) => {
            return Err(OpError::Refused(
                "that lease token is not held any more (it expired or was released) — run `teammem baseline diff --claim` again".into(),
            ));
        }
        (_, None) => None,
    };
    let taken_ns = now_ns();
    let current = current_files(project, scope, None)?;
    let files: Vec<SnapshotFile> = current
        .iter()
        .map(|f| SnapshotFile {
            path: f.path.clone(),
            mode: f.mode,
            bytes: f.bytes.clone().unwrap_or_default(),
        })
        .collect();
    let store = store_of(project, scope)?;
    let (commit, location) = match &store {
        Store::Bare(path) => {
            if let Some(expected) = &expected {
                let now_at = match snapshot::open_bare(path)? {
                    Some(r) => snapshot::ref_target(&r, snapshot::BARE_BASELINE_REF)?,
                    None => None,
                };
                if now_at.map(|c| c.to_string()) != *expected {
                    return Err(OpError::Refused(
                        "the baseline moved since your diff — run `teammem baseline diff --claim` again".into(),
                    ));
                }
            }
            (
                snapshot::replace_bare_repo(path, &files)?,
                path.display().to_string(),
            )
        }
        Store::TeamRef(paths) => {
            let repo = repo::open(paths)?;
            let current = snapshot::ref_target(&repo, crate::git::recovery::TEAM_BASELINE_REF)?;
            let expected_oid = match &expected {
                Some(Some(text)) => Some(
                    git2::Oid::from_str(text)
                        .map_err(|e| GitError::git("reading the lease's baseline id", e))?,
                ),
                Some(None) => None,
                None => current,
            };
            if expected.is_some() && expected_oid != current {
                return Err(OpError::Refused(
                    "the team baseline moved since your diff — run `teammem baseline diff --claim` again".into(),
                ));
            }
            (
                snapshot::set_ref_snapshot(
                    &repo,
                    crate::git::recovery::TEAM_BASELINE_REF,
                    &files,
                    expected_oid,
                )?,
                crate::git::recovery::TEAM_BASELINE_REF.to_string(),
            )
        }
    };
    let cache = StatCache {
        commit: commit.to_string(),
        taken_ns,
        files: current
            .iter()
            .filter_map(|f| Some((f.path.clone(), (f.stat?, f.oid.to_string()))))
            .collect(),
    };
    // The cache only saves work; a baseline without it is still whole.
    if let Ok(text) = serde_json::to_string(&cache) {
        let _ = store::write_atomic(&stat_cache_path(project, scope)?, text.as_bytes());
    }
    if lease.is_some() {
        remove_lease(&lease_path)?;
    }
    Ok(BaselineCommitted {
        scope,
        commit: commit.to_string(),
        files: files.len(),
        location,
    })
}

/// Gives the lease back. Returns whether a lease was released; a live lease with another token
/// is refused.
pub fn release(project: &Project, scope: ScopeKind, token: &str) -> Result<bool, OpError> {
    let path = lease_path(project, scope)?;
    match read_lease(&path)? {
        None => Ok(false),
        Some(l) if l.token == token => {
            remove_lease(&path)?;
            Ok(true)
        }
        Some(l) if usage::now() - l.claimed_at >= LEASE_SECS => {
            remove_lease(&path)?;
            Ok(false)
        }
        Some(_) => Err(OpError::Refused(
            "that is not the token of the lease held now — nothing released".into(),
        )),
    }
}

fn lease_path(project: &Project, scope: ScopeKind) -> Result<PathBuf, OpError> {
    Ok(
        state_dir(project, scope)?
            .join(format!("{}-baseline.lease", state_prefix(project, scope)?)),
    )
}

fn read_lease(path: &Path) -> Result<Option<Lease>, OpError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(serde_json::from_str(&text).ok().or(Some(Lease {
            // An unreadable lease is treated as stale rather than as held forever.
            token: String::new(),
            pid: 0,
            claimed_at: 0,
            baseline: None,
        }))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OpError::io(path, e)),
    }
}

fn remove_lease(path: &Path) -> Result<(), OpError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OpError::io(path, e)),
    }
}

fn claim_lease(
    project: &Project,
    scope: ScopeKind,
    base: Option<git2::Oid>,
) -> Result<String, OpError> {
    let path = lease_path(project, scope)?;
    let now = usage::now();
    if let Some(held) = read_lease(&path)? {
        if now - held.claimed_at < LEASE_SECS {
            return Err(OpError::Refused(format!(
                "another consolidation holds the {scope} baseline lease (pid {}, since {}) — wait for it to commit or release, or until {}",
                held.pid,
                usage::utc_text(held.claimed_at),
                usage::utc_text(held.claimed_at + LEASE_SECS)
            )));
        }
        remove_lease(&path)?;
    }
    let lease = Lease {
        token: new_token(),
        pid: std::process::id(),
        claimed_at: now,
        baseline: base.map(|c| c.to_string()),
    };
    let text = serde_json::to_string(&lease)
        .map_err(|e| OpError::Usage(format!("cannot write the lease: {e}")))?;
    // create_new: of two claims racing past the check above, exactly one gets the file.
    let mut file = match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(OpError::Refused(format!(
                "another consolidation claimed the {scope} baseline lease just now"
            )));
        }
        Err(e) => return Err(OpError::io(&path, e)),
    };
    file.write_all(text.as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(|e| OpError::io(&path, e))?;
    Ok(lease.token)
}

/// An unguessable-enough owner token: a hash of the time, the process and an address.
fn new_token() -> String {
    use sha2::{Digest, Sha256};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let marker = 0u8;
    let seed = format!("{nanos}:{}:{:p}", std::process::id(), &marker);
    Sha256::digest(seed.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}
