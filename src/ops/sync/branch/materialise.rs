//! Writing the memory branch into the work tree's team folder: only the entries that changed,
//! never over an edit not recorded, never what the gate withholds, within the folder's limits
//! on files and bytes.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use git2::{ObjectType, Oid, Repository};

use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::domain::store;
use crate::git::commit::{self, TeamUpdate};
use crate::git::memory_branch::{self, LimitNote};
use crate::git::status::TreeFile;
use crate::git::{team_files, tree_entries};

use crate::ops::quarantine::{self, Quarantined};
use crate::ops::sync::{self, SyncOutcome};
use crate::ops::{OpError, Project};

use super::Recording;

/// Writes the memory branch's `tip` into the folder against what it was last made to hold
/// (`base`): a file the user left as materialised takes the new version; one already holding
/// it is left alone; an edit not recorded (made while sync ran, or quarantined) is kept beside
/// the new version as a conflict copy, or kept in place when the teammate deleted the file (the
/// next sync records it). Only the entries that differ between the two trees are read. What
/// the gate withholds, and every entry a checkout cannot write safely (see
/// [`tree_entries`]), is never written and is reported; the folder's `MEMORY.md` is
/// regenerated from the memories on disk.
pub(super) fn materialise(
    project: &Project,
    repo: &Repository,
    base: Option<memory_branch::Materialised>,
    recording: Recording,
    tip: Option<Oid>,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let Some(tip) = tip else { return Ok(()) };
    let Recording {
        recorded,
        held_back,
        ..
    } = recording;
    let workdir = project.git_root()?;
    let team_dir = workdir.join(TEAM_DIR);
    let git = |what: &str, e| crate::git::GitError::git(what.to_string(), e);
    let source = memory_branch::tree_of(repo, Some(tip))?;
    let base_tree = match base {
        Some(m) => repo
            .find_tree(m.tree)
            .map_err(|e| git("reading the materialised base", e))?,
        None => crate::git::commit::empty_tree(repo)?,
    };
    let old_team = team_files::subtree(repo, &base_tree, TEAM_DIR)?;
    let new_team = team_files::subtree(repo, &source, TEAM_DIR)?;
    let changes = tree_entries::diff_within(
        repo,
        old_team.as_ref(),
        new_team.as_ref(),
        Some(crate::git::remote::Deadline::at(deadline)),
    )?;
    let limits = Limits::of(repo, &source);
    let mut room = Room::of(repo, old_team.as_ref(), &limits)?;
    let mut past_limit: Vec<(&'static str, String)> = Vec::new();
    let mut unfinished = 0usize;
    // What this sync recorded is safe on the branch (at its path, or beside it as a conflict
    // copy): a file holding it may be replaced. The record's own blobs, not a listing of the
    // recorded tree: the cost is the change's, not the branch's.
    let recorded_blobs = recorded;
    let (policy, _) = crate::ops::guard::policy(project);
    let team_prefix = format!("{TEAM_DIR}/");
    let short = tip.to_string()[..7].to_string();
    // The changes taken (written, or standing for an edit the next sync records): the folder
    // as materialised is the base with these applied.
    let mut taken = Vec::new();
    let mut kept_out = false;
    let mut withheld = held_back;
    let mut wrote = false;
    let mut batch = store::Batch::new();
    let withheld_before = outcome.withheld.len();
    for change in changes {
        let path = format!("{team_prefix}{}", change.rel);
        let m = change.old.map(tree_file);
        let f = change.new.map(tree_file);
        if change.rel == INDEX_FILE && change.refused.is_none() {
            // Never written: regenerated from the memories on disk.
            taken.push(TeamUpdate { path, file: f });
            continue;
        }
        if unfinished > 0 || Instant::now() >= deadline {
            // Out of time: the rest waits for the next sync (left out of the materialised
            // tree, so it is neither lost nor taken for a deletion).
            unfinished += 1;
            kept_out = true;
            continue;
        }
        if change.new.is_none() {
            room.free(repo, change.old);
        }
        if let Some(limit) = change.new.and_then(|n| room.take(repo, change.old, n)) {
            past_limit.push((limit, path));
            withheld.insert(past_limit[past_limit.len() - 1].1.clone());
            kept_out = true;
            continue;
        }
        let abs = team_dir.join(&change.rel);
        let refusal = change
            .refused
            .or_else(|| f.and_then(|_| disk_refusal(&team_dir, &change.rel)));
        if let Some(why) = refusal {
            withhold(&path, vec![why.to_string()], &mut withheld, outcome);
            kept_out = true;
            continue;
        }
        let incoming = match f {
            None => None,
            Some(file) => {
                let size = blob_size(repo, file.id);
                let limit_bytes = crate::domain::memory::MAX_FILE_BYTES as u64;
                if size > limit_bytes {
                    // Never read whole: it stays on the branch, and the rest of the memory
                    // flows.
                    let why = format!(
                        "{size} bytes, over the {} KiB a team memory file may have: it stays \
                         on the memory branch and is not written here; ask its author to \
                         shorten it",
                        crate::domain::memory::MAX_FILE_BYTES / 1024
                    );
                    withhold(&path, vec![why], &mut withheld, outcome);
                    kept_out = true;
                    wrote |=
                        keep_base_version(repo, &mut batch, (&path, &abs), m, &recorded_blobs)?;
                    continue;
                }
                let Ok(blob) = repo.find_blob(file.id) else {
                    let why = "the entry does not name a file git holds".to_string();
                    withhold(&path, vec![why], &mut withheld, outcome);
                    kept_out = true;
                    wrote |=
                        keep_base_version(repo, &mut batch, (&path, &abs), m, &recorded_blobs)?;
                    continue;
                };
                let reasons =
                    quarantine::check_team_bytes(&path, &change.rel, blob.content(), &policy);
                if !reasons.is_empty() {
                    withhold(&path, reasons, &mut withheld, outcome);
                    kept_out = true;
                    wrote |=
                        keep_base_version(repo, &mut batch, (&path, &abs), m, &recorded_blobs)?;
                    continue;
                }
                Some(blob.content().to_vec())
            }
        };
        taken.push(TeamUpdate {
            path: path.clone(),
            file: f,
        });
        let on_disk = disk_blob(repo, &path, &abs)?;
        if on_disk == f.map(|x| x.id) {
            continue;
        }
        let untouched =
            on_disk == m.map(|x| x.id) || on_disk.is_some_and(|d| recorded_blobs.contains(&d));
        match (&incoming, untouched, on_disk.is_some()) {
            (Some(bytes), true, _) | (Some(bytes), false, false) => {
                batch.write(&abs, bytes)?;
                wrote = true;
            }
            (Some(bytes), false, true) => {
                // An edit here that no commit holds yet: kept beside the teammate's version.
                let mut copy = crate::domain::conflict::copy_path(&path, &short);
                if workdir.join(&copy).exists() {
                    copy = crate::domain::conflict::plain_copy_path(&path, &short);
                }
                let copy_abs = workdir.join(&copy);
                std::fs::rename(&abs, &copy_abs).map_err(|e| OpError::io(&copy_abs, e))?;
                batch.write(&abs, bytes)?;
                wrote = true;
                outcome.warnings.push(format!(
                    "{path} changed here while a teammate changed it too: theirs is at that path, \
                     yours beside it as {copy}; keep one and delete the other"
                ));
            }
            (None, true, _) => {
                remove_file(&abs)?;
                wrote = true;
            }
            (None, false, _) => {
                // Deleted by a teammate, changed here: the change stays and is recorded next.
            }
        }
    }
    // Withheld for anything but the limits (the gate, a name the disk refuses) is looked at
    // again by every sync; what only the limits kept out is noted in the materialised base.
    let only_limits = outcome.withheld.len() == withheld_before && unfinished == 0;
    let mut note = LimitNote {
        limits: limits.user,
        lines: Vec::new(),
    };
    for limit in [TOO_MANY, TOO_LARGE] {
        let over: Vec<&String> = past_limit
            .iter()
            .filter(|(l, _)| *l == limit)
            .map(|(_, p)| p)
            .collect();
        let Some(first) = over.first() else { continue };
        let (key, value, lowered) = if limit == TOO_MANY {
            (
                "teammem.maxMemories",
                limits.memories as u64,
                limits.memories_lowered,
            )
        } else {
            ("teammem.maxBytes", limits.bytes, limits.bytes_lowered)
        };
        let fix = if lowered {
            format!("the repository's {TEAM_DIR}/{CHECK_FILE} lowers it")
        } else {
            format!("raise it with `git config --global {key} N`")
        };
        // One line for them all: a flood is named, not listed.
        let line = format!(
            "{limit}: {} memories past the memory branch's limit ({key} = {value}) are not \
             written, first {}; {fix}",
            over.len(),
            crate::domain::gate::redact_path(first)
        );
        outcome
            .withheld
            .push(Quarantined::new(TEAM_DIR, vec![line.clone()]));
        note.lines.push(line.clone());
        outcome.warnings.push(line);
    }
    if unfinished > 0 {
        outcome.warnings.push(format!(
            "the time budget ran out while writing the team folder: {unfinished} changes wait \
             for the next sync"
        ));
    }
    // Every file written reaches the disk before it takes its place and before the base says
    // the folder holds it.
    batch.finish()?;
    if wrote || team_dir.is_dir() {
        sync::regenerate_index(project, &team_dir, &withheld, &team_prefix, &policy)?;
    }
    let materialised = if kept_out {
        commit::updated_tree(repo, &base_tree, &taken)?.id()
    } else {
        source.id()
    };
    let note = (only_limits
        && !note.lines.is_empty()
        && !note.lines.iter().any(|l| l.contains(['\n', '\r'])))
    .then_some(note);
    memory_branch::set_materialised_with(repo, Some(tip), materialised, note.as_ref())?;
    Ok(())
}

/// The `withheld` reason of a memory past the count limit.
const TOO_MANY: &str = "too-many";
/// The `withheld` reason of a memory past the size limit.
const TOO_LARGE: &str = "too-large";

/// The repository's check configuration, which may lower the limits.
const CHECK_FILE: &str = crate::domain::check::CONFIG_FILE;

/// The largest repository check configuration read for its limits.
const CHECK_FILE_MAX_BYTES: u64 = 64 * 1024;

/// The limits (memories, bytes) when git config sets none.
pub(in crate::ops::sync) const DEFAULT_LIMITS: (u64, u64) = (5_000, 20 * 1024 * 1024);

/// How much of the memory branch the folder takes: at most this many files and bytes
/// (defaults 5,000 and 20 MB; `teammem.maxMemories` / `teammem.maxBytes` in git config change
/// them, and the branch's `.teammem-check.json` can only lower them), so a flood pushed onto
/// the branch costs a bounded time to write.
pub(super) struct Limits {
    memories: usize,
    bytes: u64,
    /// Whether the repository's file lowered the count limit.
    memories_lowered: bool,
    /// Whether the repository's file lowered the size limit.
    bytes_lowered: bool,
    /// The user's own limits (memories, bytes), before the repository's file lowered them.
    pub(super) user: (u64, u64),
}

impl Limits {
    const DEFAULT_MEMORIES: usize = DEFAULT_LIMITS.0 as usize;
    const DEFAULT_BYTES: u64 = DEFAULT_LIMITS.1;

    /// The user's limits (git config), lowered by the `.teammem-check.json` the memory
    /// branch's `tip` holds, if it does (what of it does not parse lowers nothing; `check`
    /// reports it).
    fn of(repo: &Repository, tip: &git2::Tree<'_>) -> Limits {
        let mut limits = Self::of_user(repo);
        let path = format!("{TEAM_DIR}/{CHECK_FILE}");
        let Some(config) = tip
            .get_path(Path::new(&path))
            .ok()
            .filter(|e| blob_size(repo, e.id()) <= CHECK_FILE_MAX_BYTES)
            .and_then(|e| repo.find_blob(e.id()).ok())
            // The reader `check` uses: a bad line elsewhere costs only that line.
            .map(|b| {
                crate::domain::check_config::read_lenient(&String::from_utf8_lossy(b.content())).0
            })
        else {
            return limits;
        };
        if let Some(max) = config.max_memories.filter(|m| *m < limits.memories) {
            limits.memories = max;
            limits.memories_lowered = true;
        }
        if let Some(max) = config.max_total_bytes.filter(|m| *m < limits.bytes) {
            limits.bytes = max;
            limits.bytes_lowered = true;
        }
        limits
    }

    pub(super) fn of_user(repo: &Repository) -> Limits {
        let config = repo.config().ok();
        let get = |key: &str| {
            config
                .as_ref()
                .and_then(|c| c.get_i64(key).ok())
                .filter(|v| *v > 0)
        };
        let memories = get("teammem.maxMemories")
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(Self::DEFAULT_MEMORIES);
        let bytes = get("teammem.maxBytes")
            .and_then(|v| u64::try_from(v).ok())
            .unwrap_or(Self::DEFAULT_BYTES);
        Limits {
            memories,
            bytes,
            memories_lowered: false,
            bytes_lowered: false,
            user: (memories as u64, bytes),
        }
    }
}

/// What the folder holds against its [`Limits`]: files and bytes materialised so far.
struct Room<'l> {
    limits: &'l Limits,
    files: usize,
    bytes: u64,
}

impl<'l> Room<'l> {
    /// The room the materialised folder `team` already takes.
    fn of(
        repo: &Repository,
        team: Option<&git2::Tree<'_>>,
        limits: &'l Limits,
    ) -> Result<Self, OpError> {
        let mut room = Room {
            limits,
            files: 0,
            bytes: 0,
        };
        if let Some(team) = team {
            for version in tree_entries::list(repo, team)?.files.values() {
                room.files += 1;
                room.bytes += blob_size(repo, version.0);
            }
        }
        Ok(room)
    }

    /// Gives back the room of a file removed.
    fn free(&mut self, repo: &Repository, old: Option<tree_entries::Version>) {
        if let Some(old) = old {
            self.files = self.files.saturating_sub(1);
            self.bytes = self.bytes.saturating_sub(blob_size(repo, old.0));
        }
    }

    /// Takes room for `new` replacing `old`; the limit it would pass, if any.
    fn take(
        &mut self,
        repo: &Repository,
        old: Option<tree_entries::Version>,
        new: tree_entries::Version,
    ) -> Option<&'static str> {
        let files = self.files + usize::from(old.is_none());
        if files > self.limits.memories {
            return Some(TOO_MANY);
        }
        let old_size = old.map_or(0, |o| blob_size(repo, o.0));
        let bytes = (self.bytes + blob_size(repo, new.0)).saturating_sub(old_size);
        if bytes > self.limits.bytes {
            return Some(TOO_LARGE);
        }
        self.files = files;
        self.bytes = bytes;
        None
    }
}

/// A blob's size from its header alone (0 when it cannot be read: the write step says why).
fn blob_size(repo: &Repository, id: Oid) -> u64 {
    repo.odb()
        .and_then(|odb| odb.read_header(id))
        .map_or(0, |(size, _)| size as u64)
}

fn tree_file((id, mode): tree_entries::Version) -> TreeFile {
    TreeFile {
        id,
        mode: match mode {
            0o100755 => git2::FileMode::BlobExecutable,
            0o120000 => git2::FileMode::Link,
            0o160000 => git2::FileMode::Commit,
            _ => git2::FileMode::Blob,
        },
    }
}

/// Why a file at `rel` cannot be written into the folder as it is on disk: a file or symlink
/// where the memory branch has a folder above it, or a folder where it has the file. Such a
/// file waits (withheld) until the user's own entry there is gone.
pub(in crate::ops::sync) fn disk_refusal(team_dir: &Path, rel: &str) -> Option<&'static str> {
    let mut dir = team_dir.to_path_buf();
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    for part in parts {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Some("a file or symlink here stands where it needs a folder"),
            Err(_) => return None,
        }
    }
    match std::fs::symlink_metadata(team_dir.join(rel)) {
        Ok(meta) if meta.is_dir() => Some("a folder here stands where it is a file"),
        _ => None,
    }
}

/// Leaves a teammate's file out of the work tree and reports it. The caller leaves the change
/// out of the materialised tree, so the folder's entry stays what was materialised before and
/// the next sync does not record its absence as a deletion.
fn withhold(
    path: &str,
    reasons: Vec<String>,
    withheld: &mut HashSet<String>,
    outcome: &mut SyncOutcome,
) {
    withheld.insert(path.to_string());
    outcome.withheld.push(Quarantined::new(path, reasons));
}

/// A teammate's version withheld at `path` (`abs` on disk) leaves the path as the materialised base has it
/// (`base`, the version before theirs). Where this sync's own version stands there (recorded,
/// so safe on the branch beside theirs), the base's is put back (or the file removed when the
/// base had none, or one too large to write): left, the next sync would record it over theirs.
/// Returns whether the folder changed.
fn keep_base_version(
    repo: &Repository,
    batch: &mut store::Batch,
    (path, abs): (&str, &Path),
    base: Option<TreeFile>,
    recorded: &HashSet<Oid>,
) -> Result<bool, OpError> {
    let on_disk = disk_blob(repo, path, abs)?;
    let base = base.map(|old| old.id);
    if on_disk == base || !on_disk.is_some_and(|d| recorded.contains(&d)) {
        return Ok(false);
    }
    let limit = crate::domain::memory::MAX_FILE_BYTES as u64;
    match base.filter(|&old| blob_size(repo, old) <= limit) {
        Some(old) => {
            let blob = repo.find_blob(old).map_err(|e| {
                OpError::Git(crate::git::GitError::git(format!("reading {path}"), e))
            })?;
            batch.write(abs, blob.content())?;
        }
        None => remove_file(abs)?,
    }
    Ok(true)
}

/// The blob id git would store for a regular file (`None`: absent, or not a regular file).
fn disk_blob(repo: &Repository, path: &str, abs: &Path) -> Result<Option<Oid>, OpError> {
    match std::fs::symlink_metadata(abs) {
        Ok(meta) if meta.is_file() => {
            let bytes = std::fs::read(abs).map_err(|e| OpError::io(abs, e))?;
            // A file git would convert (CRLF under `core.autocrlf` or a `.gitattributes`
            // `eol`) is compared as git stores it: line endings never make a conflict.
            if bytes.contains(&b'\r') {
                return Ok(Some(commit::store_blob(repo, path, Some(&bytes))?));
            }
            Oid::hash_object(ObjectType::Blob, &bytes)
                .map(Some)
                .map_err(|e| {
                    crate::git::GitError::git(format!("hashing {}", abs.display()), e).into()
                })
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OpError::io(abs, e)),
    }
}

/// Removes a file or symlink; a folder in its place is left alone.
fn remove_file(abs: &Path) -> Result<(), OpError> {
    if std::fs::symlink_metadata(abs).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    match std::fs::remove_file(abs) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OpError::io(abs, e)),
    }
}
