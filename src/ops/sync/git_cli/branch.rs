//! Branch-mode sync for a repository libgit2 cannot open (reftable refs, SHA-256 objects),
//! through the git CLI alone, with the libgit2 branch mode's steps (`ops/sync/branch.rs`):
//! under the sync lock, record the folder's changes since its last materialisation as a commit
//! on the local memory branch (gated), fetch the remote's memory branch alone, bring the two
//! together memory by memory, push with a lease to every push URL (again after a jittered pause
//! when a teammate pushed in between), then write what changed into the folder and remember
//! what was written. HEAD, the index and every file outside the team folder are never read or
//! written. A push the memory branch refuses goes to the user's proposal branch.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::Instant;

use super::commit::hold_back_filtered;
use super::{PushRound, push_to_every_url};
use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::{self, StoreError};
use crate::git::GitError;
use crate::git::cli_repo::transfer::CliUpstream;
use crate::git::cli_repo::{CliRepo, TreeEntry};
use crate::git::memory_branch::{self, DEFAULT_BRANCH};
use crate::git::recovery::lock::SyncLock;
use crate::git::remote::{Deadline, NetworkOptions};
use crate::ops::quarantine::{self, Quarantined};
use crate::ops::sync::branch::{EXCLUDE_LINE, is_exclude_line};
use crate::ops::sync::{SkipReason, SyncMode, SyncOptions, SyncOutcome};
use crate::ops::{OpError, Project};

mod combine;
mod materialise;
pub(crate) mod noop;
mod propose;

use combine::{Recorded, Writer};
use materialise::Materialised;
use propose::propose;

/// Where the commits stay when they could not be published.
const LEFT: &str = "; the commits stay on the local memory branch and the next sync pushes them";

/// Hidden files that are recorded all the same (the libgit2 path's list).
const HIDDEN_KEPT: &[&str] = &[".gitignore", ".gitattributes", ".gitkeep", ".secretsignore"];

/// The memory branch of a repository only git can open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliMemory {
    /// The branch name (`team-memory`).
    pub(crate) name: String,
    /// The remote it is shared through, if the repository has one.
    pub(crate) remote: Option<String>,
}

impl CliMemory {
    fn local_ref(&self) -> String {
        format!("refs/heads/{}", self.name)
    }

    /// The fetch and push target: the remote's branch of the same name.
    fn upstream(&self) -> Option<CliUpstream> {
        let remote = self.remote.as_ref()?;
        Some(CliUpstream {
            local_ref: self.local_ref(),
            remote: remote.clone(),
            merge_ref: self.local_ref(),
            tracking_ref: format!("refs/remotes/{remote}/{}", self.name),
        })
    }
}

/// Branch mode, if this repository uses it — the libgit2 path's rule
/// (`memory_branch::mode`): `teammem.branch` names the branch (`false` switches it off), else
/// `team-memory` when the remote-tracking ref of the chosen remote exists.
pub(crate) fn memory_branch(
    cli: &CliRepo,
    deadline: &Deadline,
) -> Result<Option<CliMemory>, GitError> {
    let recorded = cli.config(memory_branch::CONFIG_KEY, deadline)?;
    if recorded.as_deref().is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "false" | "off" | "no" | "0"
        )
    }) {
        return Ok(None);
    }
    let remote = choose_remote(cli, deadline)?;
    if let Some(name) = recorded.filter(|n| memory_branch::valid_name(n)) {
        return Ok(Some(CliMemory { name, remote }));
    }
    let Some(remote) = remote else {
        return Ok(None);
    };
    let tracking = format!("refs/remotes/{remote}/{DEFAULT_BRANCH}");
    Ok(cli.resolve(&tracking, deadline)?.map(|_| CliMemory {
        name: DEFAULT_BRANCH.to_string(),
        remote: Some(remote),
    }))
}

/// What the remote's refs say of the mode of a clone with nothing recorded.
pub(crate) enum Advertised {
    /// The remote has `team-memory`: branch mode.
    Branch(CliMemory),
    /// Current-branch mode: the remote has no memory branch, nothing was asked (no pull, no
    /// remote, the mode is recorded), or the team folder is tracked on the current branch.
    CurrentBranch,
    /// The remote (named) did not answer, and nothing else decides the mode.
    NoAnswer(String),
}

/// Branch mode found in the remote's ref advertisement (the libgit2 path's
/// `memory_branch::advertised`): nothing recorded, and the chosen remote advertises
/// `refs/heads/team-memory` though this clone has no remote-tracking ref for it (a clone made
/// before the branch existed, or with `--single-branch`), so its memory never goes onto the
/// code branch. Asked for at most half the budget; no answer decides nothing, unless the team
/// folder is tracked on the current branch (an existing current-branch setup).
pub(crate) fn advertised(cli: &CliRepo, options: &SyncOptions, deadline: Instant) -> Advertised {
    let budget = Deadline::at(deadline);
    let recorded = cli.config(memory_branch::CONFIG_KEY, &budget);
    if !options.pull || !matches!(recorded, Ok(None)) {
        return Advertised::CurrentBranch;
    }
    let Ok(Some(remote)) = choose_remote(cli, &budget) else {
        return Advertised::CurrentBranch;
    };
    let mut net = network(options, &budget);
    net.deadline = Deadline::after(budget.remaining() / 2);
    let head = format!("refs/heads/{DEFAULT_BRANCH}");
    match cli.remote_has(&remote, &head, &net) {
        Ok(true) => Advertised::Branch(CliMemory {
            name: DEFAULT_BRANCH.to_string(),
            remote: Some(remote),
        }),
        Ok(false) => Advertised::CurrentBranch,
        Err(_) => {
            let tracked = cli.run(
                &[
                    "ls-tree",
                    "--name-only",
                    "HEAD",
                    "--",
                    &format!(":(literal){TEAM_DIR}"),
                ],
                &budget,
                "looking for a tracked team folder (git ls-tree)",
            );
            if tracked.is_ok_and(|t| !t.trim().is_empty()) {
                Advertised::CurrentBranch
            } else {
                Advertised::NoAnswer(remote)
            }
        }
    }
}

/// The remote the memory branch is shared through: the current branch's upstream remote,
/// else `origin`, else the only remote (the libgit2 path's rule).
pub(crate) fn choose_remote(
    cli: &CliRepo,
    deadline: &Deadline,
) -> Result<Option<String>, GitError> {
    let names: Vec<String> = cli
        .run(&["remote"], deadline, "listing the remotes (git remote)")?
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(branch) = cli.head_branch(deadline)? {
        let short = branch.trim_start_matches("refs/heads/");
        if let Some(remote) = cli.config(&format!("branch.{short}.remote"), deadline)? {
            if names.contains(&remote) {
                return Ok(Some(remote));
            }
        }
    }
    if names.iter().any(|n| n == "origin") {
        return Ok(Some("origin".into()));
    }
    Ok(match names.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    })
}

/// Runs a branch-mode sync of `memory` through git (see the module doc). A git run stopped at
/// the deadline is `timeout`, as on the libgit2 path.
pub(crate) fn run(
    project: &Project,
    cli: &CliRepo,
    memory: &CliMemory,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    outcome.mode = SyncMode::Branch;
    outcome.memory_branch = Some(memory.name.clone());
    let done = run_within(
        project,
        cli,
        memory,
        options,
        &Deadline::at(deadline),
        outcome,
    );
    if done.is_ok() {
        noop::record(project, cli, memory, outcome, deadline);
    } else {
        crate::git::noop_record::remove(&cli.paths.git_dir);
    }
    match done {
        Err(OpError::Git(GitError::OutOfTime { what })) => {
            outcome.skip(
                SkipReason::Timeout,
                format!(
                    "the time budget ran out while {what}; git was stopped, and the next sync goes \
                     on (your memories stay in the folder)"
                ),
            );
            Ok(())
        }
        done => done,
    }
}

fn run_within(
    project: &Project,
    cli: &CliRepo,
    memory: &CliMemory,
    options: &SyncOptions,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let local_ref = memory.local_ref();
    let safe = project
        .check_scope_safe(ScopeKind::Team)
        .and_then(|dir| store::memory_paths(&dir).map_err(OpError::from));
    match safe {
        Ok(_) => {}
        Err(OpError::Store(err @ StoreError::UnsafePath { .. })) => {
            outcome.skip(SkipReason::UnsafePath, err.to_string());
            return Ok(());
        }
        Err(err) => return Err(err),
    }
    let _lock = match SyncLock::acquire_in(&cli.common_dir)? {
        Ok(lock) => lock,
        Err(owner) => {
            let who = owner.map_or(String::new(), |o| format!(" (pid {})", o.pid));
            outcome.skip(
                SkipReason::Locked,
                format!("another sync is running in this repository{who}"),
            );
            return Ok(());
        }
    };
    ensure_excluded(&cli.common_dir)?;
    let writer = Writer::new(cli, options, budget);
    let mut local = cli.resolve(&local_ref, budget)?;
    outcome.memory_tip.clone_from(&local);
    let base = materialise::materialised(cli, budget)?;
    if base.is_none() && local.is_none() && options.pull {
        // A clone that knows nothing of the branch yet fetches it first, so the folder's files
        // go on top of its history rather than start one of their own.
        if let Some(up) = memory.upstream() {
            if cli.resolve(&up.tracking_ref, budget)?.is_none() {
                let net = network(options, budget);
                outcome.pulled = cli.fetch(&up, &net).is_ok_and(|tip| tip.is_some());
            }
        }
    }
    let tracked = match memory.upstream() {
        Some(up) => cli.resolve(&up.tracking_ref, budget)?,
        None => None,
    };
    let source = base.as_ref().and_then(|b| b.source.clone());
    let here = [local.as_deref(), tracked.as_deref(), source.as_deref()];
    if !team_objects_here(cli, memory, &here, options, budget, outcome) {
        return Ok(());
    }
    let Some((recorded, held_back)) =
        record_folder(project, &writer, memory, base.as_ref(), &mut local, outcome)?
    else {
        return Ok(());
    };
    if options.pull || options.push {
        match memory.upstream() {
            Some(up) => share(&writer, memory, &up, &mut local, outcome)?,
            None => {
                let remotes: Vec<String> = cli
                    .run(&["remote"], budget, "listing the remotes (git remote)")?
                    .lines()
                    .map(str::to_string)
                    .collect();
                outcome.skip(
                    SkipReason::NoRemote,
                    memory_branch::no_remote_line(&memory.name, &remotes),
                );
            }
        }
    }
    if let Some(tip) = &local {
        if budget.passed() {
            if outcome.skipped_reason.is_none() {
                outcome.skip(
                    SkipReason::Timeout,
                    "the time budget ran out before the team folder was written; the next sync \
                     writes it",
                );
            }
        } else {
            materialise::materialise(
                project,
                cli,
                base.as_ref(),
                recorded.as_deref(),
                held_back,
                tip,
                budget,
                outcome,
            )?;
        }
    }
    outcome.memory_tip = local;
    Ok(())
}

/// A partial clone (`--filter=blob:none`, `--filter=tree:0`) lacks objects of the memory
/// branch's `commits` that recording, combining and writing the folder read: they are fetched
/// first, within the budget (the libgit2 path's `memory_blobs_here`). When that fails the sync
/// stops here, saying why (nothing was changed). Returns whether the sync may go on.
fn team_objects_here(
    cli: &CliRepo,
    memory: &CliMemory,
    commits: &[Option<&str>],
    options: &SyncOptions,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> bool {
    let Some(remote) = memory.remote.as_deref() else {
        return true;
    };
    let commits: Vec<&str> = commits.iter().flatten().copied().collect();
    let net = network(options, budget);
    match crate::git::missing_blobs::fetch_missing_through_git(cli, remote, &commits, &net) {
        Ok(_) => true,
        Err(failure) => {
            crate::ops::sync::missing_objects_skip(outcome, &failure, &memory.name);
            false
        }
    }
}

/// Adds [`EXCLUDE_LINE`] to the common `info/exclude` when it is missing (the libgit2 path's
/// `branch::ensure_excluded`): the folder is never shown by `git status`.
pub(crate) fn ensure_excluded(common_dir: &Path) -> Result<bool, OpError> {
    let path = common_dir.join("info").join("exclude");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text.lines().any(is_exclude_line) {
        return Ok(false);
    }
    let mut new = text;
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str("# teammem branch mode: the team memory lives on its memory branch\n");
    new.push_str(EXCLUDE_LINE);
    new.push('\n');
    store::write_atomic(&path, new.as_bytes())?;
    Ok(true)
}

fn network(options: &SyncOptions, budget: &Deadline) -> NetworkOptions {
    let mut net = NetworkOptions::from_process(budget.remaining(), options.transport);
    net.deadline = *budget;
    net
}

/// Records the folder's changes since the materialised `base` on the local memory branch
/// (the libgit2 path's `record_folder`). Returns the record commit (if one was made) and the
/// paths quarantined, or `None` when the sync stops here (the outcome says why).
#[allow(clippy::type_complexity)]
fn record_folder(
    project: &Project,
    writer: &Writer<'_>,
    memory: &CliMemory,
    base: Option<&Materialised>,
    local: &mut Option<String>,
    outcome: &mut SyncOutcome,
) -> Result<Option<(Option<String>, HashSet<String>)>, OpError> {
    let (cli, deadline) = (writer.cli, writer.deadline);
    let workdir = project.git_root()?.to_path_buf();
    let team_dir = workdir.join(TEAM_DIR);
    let team_prefix = format!("{TEAM_DIR}/");
    let index_path = format!("{team_prefix}{INDEX_FILE}");
    crate::ops::sync::remove_stale_temp_files(&team_dir);
    let base_files = match base {
        Some(b) => cli.tree_entries(&b.tree, TEAM_DIR, deadline)?,
        None => BTreeMap::new(),
    };
    let mut on_disk = Vec::new();
    walk(&team_dir, &team_prefix, &mut on_disk)?;
    let mut held_back = HashSet::new();
    let mut updates: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let filemode = !cli.config("core.filemode", deadline)?.is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "false" | "no" | "off" | "0"
        )
    });
    let mut executable = HashSet::new();
    for file in on_disk {
        let path = file.path;
        if path == index_path {
            continue;
        }
        seen.insert(path.clone());
        let in_base = base_files.get(&path);
        if file.unreadable_name {
            held_back.insert(path.clone());
            outcome.quarantined.push(Quarantined::new(
                &path,
                vec!["invalid: the file name is not valid UTF-8 — rename it".to_string()],
            ));
            continue;
        }
        if file.symlink {
            if in_base.is_none_or(|e| e.mode != "120000") {
                held_back.insert(path.clone());
                outcome.quarantined.push(Quarantined::new(
                    &path,
                    vec![crate::ops::sync::team_commit::SYMLINK_NOT_PUBLISHED.to_string()],
                ));
            }
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(&path);
        if name.starts_with('.') && !HIDDEN_KEPT.contains(&name) && in_base.is_none() {
            continue;
        }
        if filemode && file.executable {
            executable.insert(path.clone());
        }
        files.push(path);
    }
    if base.is_some() {
        for path in base_files.keys() {
            if *path != index_path && !seen.contains(path) {
                updates.insert(path.clone(), None);
            }
        }
    }
    hold_back_filtered(cli, &mut files, &mut held_back, deadline, outcome)?;
    let ids = cli.file_ids(&files, deadline)?;
    let (policy, _) = crate::ops::guard::policy(project);
    for (path, id) in files.iter().zip(ids) {
        let in_base = base_files.get(path);
        let mode = match (filemode, executable.contains(path)) {
            (true, true) => "100755".to_string(),
            (true, false) => "100644".to_string(),
            // No file modes here (`core.filemode = false`): the branch's mode stays.
            (false, _) => in_base.map_or_else(|| "100644".to_string(), |e| e.mode.clone()),
        };
        // A file mode alone is no change (as on the libgit2 path): a teammate's executable
        // memory is written here as a plain file.
        if in_base.is_some_and(|e| e.id == id) {
            continue;
        }
        let rel = path.strip_prefix(&team_prefix).unwrap_or(path);
        let checked = quarantine::check_team_file(path, rel, &workdir.join(path), &policy)?;
        if !checked.reasons.is_empty() {
            held_back.insert(path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(path, checked.reasons));
            continue;
        }
        let Some(bytes) = checked.bytes else { continue };
        let stored = match cli.store_file_blob(path, &bytes, deadline)? {
            Ok(id) => id,
            Err(why) => {
                held_back.insert(path.clone());
                outcome.quarantined.push(Quarantined::new(path, vec![why]));
                continue;
            }
        };
        if stored != id {
            held_back.insert(path.clone());
            outcome.quarantined.push(Quarantined::new(
                path,
                vec!["changed while sync ran — sync again".into()],
            ));
            continue;
        }
        updates.insert(path.clone(), Some(TreeEntry { mode, id: stored }));
    }
    let tracking = match memory.upstream() {
        Some(up) => cli.resolve(&up.tracking_ref, deadline)?,
        None => None,
    };
    // Never materialised here (a fresh clone, a new worktree): recorded on the branch as this
    // clone knows it; a file the branch holds in another version goes beside it as a
    // conflict copy, so neither version is lost.
    let parent = match base {
        Some(b) => b.source.clone(),
        None => local.clone().or(tracking),
    };
    if base.is_none() {
        if let Some(parent) = &parent {
            let there = cli.tree_entries(parent, TEAM_DIR, deadline)?;
            let mut moved = BTreeMap::new();
            for (path, update) in std::mem::take(&mut updates) {
                let differs = match (&update, there.get(&path)) {
                    (Some(file), Some(held)) => held.id != file.id,
                    _ => false,
                };
                if differs {
                    let short = update
                        .as_ref()
                        .map_or("", |f| f.id.get(..7).unwrap_or(&f.id));
                    moved.insert(crate::domain::conflict::copy_path(&path, short), update);
                } else {
                    moved.insert(path, update);
                }
            }
            updates = moved;
        }
    }
    // A change the local branch already holds (an earlier sync recorded it, then stopped
    // before it moved the base) is not recorded twice.
    let against = if base.is_none() {
        parent.clone()
    } else {
        local.clone()
    };
    if let Some(against) = &against {
        let there = cli.tree_entries(against, TEAM_DIR, deadline)?;
        updates.retain(|path, update| there.get(path) != update.as_ref());
    } else {
        updates.retain(|_, update| update.is_some());
    }
    if updates.is_empty() {
        return Ok(Some((None, held_back)));
    }
    let files_recorded = updates.len();
    let recorded = match writer.record(parent.as_deref(), &updates, outcome)? {
        Recorded::Nothing => return Ok(Some((None, held_back))),
        Recorded::Commit(id) => id,
        Recorded::NotSigned(why) => {
            outcome.record_not_signed(&why);
            return Ok(None);
        }
    };
    // The local branch moved past the folder's base (another worktree's sync): the record is
    // re-created on top of it, memory by memory.
    let combined = writer.combine(
        Some(&recorded),
        local.as_deref(),
        memory.remote.as_deref(),
        outcome,
    )?;
    if !land(cli, memory, local, combined, deadline, outcome)? {
        return Ok(None);
    }
    outcome.committed = true;
    outcome.commit.clone_from(local);
    outcome.files_committed = files_recorded;
    Ok(Some((Some(recorded), held_back)))
}

/// One file or symlink found in the team folder.
struct DiskFile {
    /// Its path from the top (a name that is not UTF-8 shown with U+FFFD).
    path: String,
    symlink: bool,
    executable: bool,
    /// Its name is not UTF-8: it cannot be recorded.
    unreadable_name: bool,
}

/// The files and symlinks below `dir` (paths from the top, starting with `prefix`);
/// symlinked folders are not followed.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<DiskFile>) -> Result<(), OpError> {
    use std::os::unix::fs::PermissionsExt;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(OpError::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| OpError::io(dir, e))?;
        let raw = entry.file_name();
        let name = raw.to_string_lossy();
        let meta =
            std::fs::symlink_metadata(entry.path()).map_err(|e| OpError::io(entry.path(), e))?;
        let path = format!("{prefix}{name}");
        if meta.is_dir() {
            if raw.to_str().is_some() {
                walk(&entry.path(), &format!("{path}/"), out)?;
            }
            continue;
        }
        out.push(DiskFile {
            path,
            symlink: meta.file_type().is_symlink(),
            executable: meta.permissions().mode() & 0o100 != 0,
            unreadable_name: raw.to_str().is_none(),
        });
    }
    Ok(())
}

/// Moves the local memory branch to a combined tip by compare-and-swap; returns whether it
/// stands there.
fn land(
    cli: &CliRepo,
    memory: &CliMemory,
    local: &mut Option<String>,
    combined: combine::Combined,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    if let Some(why) = combined.not_signed {
        outcome.commit_refused = true;
        outcome.warnings.push(format!(
            "commit.gpgsign is on but the memory-branch commit that brings the two branches \
             together could not be signed ({why}); nothing was combined{}",
            crate::ops::sync::SIGNING_FIX
        ));
        return Ok(false);
    }
    let Some(tip) = combined.tip else {
        return Ok(true);
    };
    if local.as_deref() != Some(tip.as_str())
        && !cli.move_ref(
            &memory.local_ref(),
            &tip,
            local.as_deref(),
            "teammem: sync",
            deadline,
        )?
    {
        outcome.skip(
            SkipReason::Locked,
            format!(
                "{} moved while sync ran (another program changed it); nothing was lost — sync \
                 again",
                memory.name
            ),
        );
        return Ok(false);
    }
    *local = Some(tip);
    for (path, beside) in combined.conflicts {
        outcome.warnings.push(format!(
            "a teammate and you both changed {path} differently: theirs is kept at that path, \
             yours beside it as {beside}; keep one and delete the other"
        ));
    }
    Ok(true)
}

/// Fetches the remote's memory branch, brings it together with the local one and pushes with
/// a lease to every push URL — again after a jittered pause when a teammate pushed in between,
/// as long as the budget has room for another round.
fn share(
    writer: &Writer<'_>,
    memory: &CliMemory,
    up: &CliUpstream,
    local: &mut Option<String>,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let (cli, budget, options) = (writer.cli, writer.deadline, writer.options);
    let net = network(options, budget);
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let round_started = Instant::now();
        let remote_tip = if options.pull {
            match cli.fetch(up, &net) {
                Ok(tip) => tip,
                Err(failure) => {
                    crate::ops::sync::network_skip(
                        outcome,
                        &failure,
                        SkipReason::FetchFailed,
                        LEFT,
                    );
                    return Ok(());
                }
            }
        } else {
            cli.resolve(&up.tracking_ref, budget)?
        };
        if options.pull {
            let here = [local.as_deref(), remote_tip.as_deref()];
            if !team_objects_here(cli, memory, &here, options, budget, outcome) {
                return Ok(());
            }
            if let Some(tip) = &remote_tip {
                if oversized(cli, local.as_deref(), tip, budget, outcome)? {
                    return Ok(());
                }
            }
            let before = local.clone();
            let combined = writer.combine(
                local.as_deref(),
                remote_tip.as_deref(),
                memory.remote.as_deref(),
                outcome,
            )?;
            if !land(cli, memory, local, combined, budget, outcome)? {
                return Ok(());
            }
            if outcome.committed && *local != before && *local != remote_tip {
                outcome.commit.clone_from(local);
            }
            if *local != before
                && before
                    .as_ref()
                    .is_none_or(|b| Some(b) != remote_tip.as_ref())
            {
                outcome.pulled = true;
            }
        }
        let Some(tip) = local.clone() else {
            return Ok(());
        };
        if !options.push || remote_tip.as_deref() == Some(tip.as_str()) {
            return Ok(());
        }
        if let Some(remote) = &remote_tip {
            if !cli.is_ancestor(remote, &tip, budget)? {
                outcome.skip(
                    SkipReason::RemoteBusy,
                    "the remote memory branch has commits this one lacks and --no-pull was \
                     given; sync without --no-pull to bring them in",
                );
                return Ok(());
            }
        }
        let expected = remote_tip.as_deref();
        let PushRound {
            refused,
            lost_race,
            failure,
        } = push_to_every_url(cli, up, expected, &net, outcome)?;
        if refused.is_empty() {
            outcome.pushed = true;
            // As `git push` to a named remote does (a push to its URLs does not): the
            // remote-tracking ref shows what the remote now holds, so the next sync with
            // nothing to do knows it without a fetch (`noop.rs`). Only that is lost when it
            // cannot be moved: the next fetch moves it.
            let _ = cli.move_ref(
                &up.tracking_ref,
                &tip,
                remote_tip.as_deref(),
                "teammem: pushed",
                budget,
            );
            return Ok(());
        }
        if outcome.push_urls.iter().any(|u| u.pushed) {
            outcome.skip_push_partial(&up.remote, &refused);
            return Ok(());
        }
        if let Some(failure) = failure {
            crate::ops::sync::network_skip(outcome, &failure, SkipReason::PushFailed, LEFT);
            return Ok(());
        }
        if lost_race && options.pull {
            if !crate::ops::sync::another_round(attempt, round_started, &net, LEFT, outcome) {
                return Ok(());
            }
            continue;
        }
        if lost_race {
            outcome.skip(
                SkipReason::RemoteBusy,
                format!("the remote memory branch moved since the last fetch{LEFT}"),
            );
            return Ok(());
        }
        return propose(cli, memory, up, &tip, &refused.join("; "), &net, outcome);
    }
}

/// Refuses a fetched tip that brings a team file over the memory size limit: `too-large`,
/// naming the file. Returns whether refused.
fn oversized(
    cli: &CliRepo,
    local: Option<&str>,
    remote_tip: &str,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let limit = crate::domain::memory::MAX_FILE_BYTES;
    let limit_bytes = u64::try_from(limit).unwrap_or(u64::MAX);
    let Some((path, size)) = cli.oversized(local, remote_tip, TEAM_DIR, limit_bytes, budget)?
    else {
        return Ok(false);
    };
    outcome.skip(
        SkipReason::TooLarge,
        format!(
            "the fetched {} brings {path} of {size} bytes, over the {} KiB a team memory file \
             may have; nothing was pulled — ask its author to remove it from the branch{LEFT}",
            &remote_tip[..12.min(remote_tip.len())],
            limit / 1024
        ),
    );
    Ok(true)
}
