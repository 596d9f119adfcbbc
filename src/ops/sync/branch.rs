//! Branch-mode sync: the team memory on a memory branch of its own (`git/memory_branch.rs`),
//! the work tree's `.qwen/team-memory/` its materialised view.
//!
//! The steps, under the repository's sync lock (in the common git dir, shared by every linked
//! worktree): record the folder's changes since its last materialisation as a commit on the
//! memory branch (gated, built from trees); fetch the remote's memory branch alone; bring the
//! two together memory by memory; push with one refspec and a lease (again when a teammate
//! pushed in between; to the user's proposal branch when the memory branch refuses); then write
//! the result into the folder — only the files that changed, never over an edit not recorded,
//! never what the gate withholds — and remember what was written.
//!
//! HEAD, the index, the current branch and every file outside the team folder are never read
//! or written, so the state of the work tree (detached HEAD, a rebase under way, dirty files,
//! a sparse checkout) does not matter.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use git2::{Oid, Repository};

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::{self, StoreError};
use crate::git::GitError;
use crate::git::commit::{self, CommitSettings, TeamUpdate};
use crate::git::fetch;
use crate::git::memory_branch::{self, Combined, MemoryBranch, Recorded};
use crate::git::offline;
use crate::git::remote::{Advertisement, Deadline, NetworkOptions};
use crate::git::status::{self, ChangeKind, TreeFile};
use crate::git::upstream::Upstream;

use crate::ops::quarantine::{self, Quarantined};
use crate::ops::sync::{self, Rounds, SkipReason, SyncMode, SyncOptions, SyncOutcome};
use crate::ops::{OpError, Project, TeamMemoryIndexGate};

mod materialise;
mod propose;

use materialise::materialise;
pub(super) use materialise::{DEFAULT_LIMITS, disk_refusal};
use propose::propose;

/// The line sync keeps in `.git/info/exclude` so the work tree's branch ignores the folder.
pub const EXCLUDE_LINE: &str = "/.qwen/team-memory/";

/// Runs a branch-mode sync of `memory`; the outcome says what happened.
pub fn run(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    options: &SyncOptions,
    deadline: Instant,
    advertised: Option<&Advertisement>,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    outcome.mode = SyncMode::Branch;
    outcome.memory_branch = Some(memory.name.clone());
    let local_ref = memory.local_ref();
    outcome.memory_tip = repo.refname_to_id(&local_ref).ok().map(|o| o.to_string());
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
    if let Some((tip, note)) = nothing_to_do(project, repo, memory, advertised)? {
        // The remote holds what this clone has and the folder what was written there: no
        // lock, no transfer. The report is a no-op's (the identity warnings included), with
        // the lines naming what the folder's limits keep out.
        sync::commit_settings(repo, options, deadline, outcome)?;
        if let Some(note) = note {
            say_kept_out(&note.lines, outcome);
        }
        offline::forget_failure(repo.path());
        outcome.memory_tip = Some(tip.to_string());
        super::fast_noop::record(project, repo, memory, outcome);
        return Ok(());
    }
    let Some(_lock) = sync::lock_and_recover(repo, outcome)? else {
        return Ok(());
    };
    ensure_excluded(repo)?;
    let settings = sync::commit_settings(repo, options, deadline, outcome)?;
    let mut local = repo.refname_to_id(&local_ref).ok();
    let base = memory_branch::materialised(repo)?;
    if base.is_none() && local.is_none() && options.pull {
        outcome.pulled = fetch_unknown_branch(repo, memory, advertised, deadline);
    }
    if !memory_blobs_here(repo, memory, local, base, options, deadline, outcome) {
        return Ok(());
    }
    let recording = match record_folder(
        project, repo, memory, base, &mut local, &settings, deadline, outcome,
    ) {
        Err(OpError::Git(GitError::OutOfTime { what })) => {
            outcome.skip(
                SkipReason::Timeout,
                format!(
                    "the time budget ran out while {what}; your memories stay in the folder and \
                     the next sync records them"
                ),
            );
            Recording::new(false, HashSet::new(), HashSet::new())
        }
        other => other?,
    };
    let go_on = recording.go_on;
    if go_on && (options.pull || options.push) {
        if Instant::now() >= deadline {
            outcome.skip(
                SkipReason::Timeout,
                "the time budget ran out before the fetch",
            );
        } else {
            match memory.upstream() {
                Some(up) => {
                    let known_remote = repo.refname_to_id(&up.tracking_ref).ok();
                    let mut rounds = BranchRounds {
                        memory,
                        up,
                        settings: &settings,
                        local: &mut local,
                        known_remote,
                        deadline: Deadline::at(deadline),
                    };
                    match share(repo, options, deadline, advertised, &mut rounds, outcome) {
                        Err(OpError::Git(GitError::OutOfTime { what })) => outcome.skip(
                            SkipReason::Timeout,
                            format!("the time budget ran out while {what}{}", BranchRounds::LEFT),
                        ),
                        other => other?,
                    }
                }
                None => outcome.skip(
                    SkipReason::NoRemote,
                    memory_branch::no_remote_line(&memory.name, &memory_branch::remote_names(repo)),
                ),
            }
        }
    }
    if go_on && Instant::now() >= deadline {
        // Writing the folder reads the branch's changes: past the budget it waits for the next
        // sync (the folder and its recorded base stay as they were, so nothing is lost).
        if outcome.skipped_reason.is_none() {
            outcome.skip(
                SkipReason::Timeout,
                "the time budget ran out before the team folder was written; the next sync \
                 writes it",
            );
        }
    } else if go_on {
        match materialise(project, repo, base, recording, local, deadline, outcome) {
            // The branch's changes were not all read in time: nothing was written that the
            // recorded base does not hold, so the next sync goes on from there.
            Err(OpError::Git(GitError::OutOfTime { what })) => {
                if outcome.skipped_reason.is_none() {
                    outcome.skip(
                        SkipReason::Timeout,
                        format!(
                            "the time budget ran out while {what}; the next sync writes the \
                             team folder"
                        ),
                    );
                }
            }
            other => other?,
        }
    }
    outcome.memory_tip = local.map(|o| o.to_string());
    super::fast_noop::record(project, repo, memory, outcome);
    Ok(())
}

/// Reports the lines naming what the folder's limits keep out, as the materialisation that
/// kept it out did.
pub(super) fn say_kept_out(lines: &[String], outcome: &mut SyncOutcome) {
    for line in lines {
        outcome
            .withheld
            .push(Quarantined::new(TEAM_DIR, vec![line.clone()]));
        outcome.warnings.push(line.clone());
    }
}

/// Notes an interrupted sync leaves in the git folder for the next one to finish from: while
/// one is there, a sync has work to do. So has a sync lock left by a sync that is gone
/// ([`left_behind`]): only a sync that takes the lock removes it.
const LEFTOVER_NOTES: [&str; 2] = [
    crate::git::recovery::REF_MOVE_NOTE,
    crate::git::recovery::TRANSFER_NOTE,
];

/// Whether an interrupted sync left something in the common git folder `common` for the next
/// one to finish: a note of [`LEFTOVER_NOTES`], or its lock. A lock a live sync holds is not:
/// a sync with nothing to do does not wait for a running one.
pub(super) fn left_behind(common: &std::path::Path) -> bool {
    LEFTOVER_NOTES.iter().any(|f| common.join(f).exists())
        || crate::git::recovery::lock::left_by_a_dead_sync(common)
}

/// The memory branch's tip when a sync has nothing to do: the remote advertises the tip this
/// clone's memory branch, its remote-tracking ref and the folder's last materialisation all
/// stand on; nothing was withheld from the folder there, or only what the folder's limits kept
/// out under the same limits (the note that names it comes back too); the folder holds exactly
/// what was written (so nothing to record, quarantine or write; over the limits, its
/// `MEMORY.md` is the one regenerated from the folder, not the branch's); the folder is
/// excluded; and no earlier sync left a ref move, a transfer or its lock to clean up. Reads only (no lock
/// is held): a sync running meanwhile makes one of these differ, and the full sync then takes
/// its turn at the lock.
fn nothing_to_do(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    advertised: Option<&Advertisement>,
) -> Result<Option<(Oid, Option<memory_branch::LimitNote>)>, OpError> {
    let (Some(adv), Some(up)) = (advertised, memory.upstream()) else {
        return Ok(None);
    };
    let Some(Some(remote_tip)) = adv.tip(&up.remote, &up.merge_ref) else {
        return Ok(None);
    };
    let at_tip = |refname: &str| repo.refname_to_id(refname).ok() == Some(remote_tip);
    if !at_tip(&memory.local_ref()) || !at_tip(&up.tracking_ref) {
        return Ok(None);
    }
    let Some(base) = memory_branch::materialised(repo)? else {
        return Ok(None);
    };
    let tip_tree = memory_branch::tree_of(repo, Some(remote_tip))?;
    if base.source != Some(remote_tip) {
        return Ok(None);
    }
    let note = if base.tree == tip_tree.id() {
        None
    } else {
        match memory_branch::materialised_note(repo)? {
            Some(note) if note.limits == materialise::Limits::of_user(repo).user => Some(note),
            _ => return Ok(None),
        }
    };
    let common = repo.commondir();
    if left_behind(common) {
        return Ok(None);
    }
    if !exclude_text(repo).lines().any(is_exclude_line) {
        return Ok(None);
    }
    let workdir = project.git_root()?;
    sync::remove_stale_temp_files(&workdir.join(TEAM_DIR));
    let folder = if note.is_some() {
        repo.find_tree(base.tree)
            .map_err(|e| GitError::git("reading the materialised base", e))?
    } else {
        tip_tree
    };
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let changes = status::folder_changes(repo, Some(&folder), TEAM_DIR, false)?;
    if changes
        .iter()
        .any(|c| note.is_none() || c.path != index_path)
    {
        return Ok(None);
    }
    Ok(Some((remote_tip, note)))
}

/// A clone that knows nothing of the memory branch the remote advertises (made before the
/// branch existed, or with `--single-branch`) fetches it before recording the folder, so the
/// folder's files go on top of the branch's history rather than starting one of their own. A
/// failure here is not reported: the fetch of the network half tries again and says why.
/// Returns whether teammates' memory came in.
fn fetch_unknown_branch(
    repo: &Repository,
    memory: &MemoryBranch,
    advertised: Option<&Advertisement>,
    deadline: Instant,
) -> bool {
    let Some(up) = memory.upstream() else {
        return false;
    };
    let advertised_tip = advertised.and_then(|adv| adv.tip(&up.remote, &up.merge_ref));
    if repo.refname_to_id(&up.tracking_ref).is_ok() || !matches!(advertised_tip, Some(Some(_))) {
        return false;
    }
    let deadline = Deadline::at(deadline);
    let mut net =
        NetworkOptions::from_process(deadline.remaining(), crate::git::remote::Transport::Builtin);
    net.deadline = deadline;
    fetch::fetch(repo, &up, &net).is_ok_and(|fetched| fetched.tip.is_some())
}

/// A partial clone (`git clone --filter=blob:none`) holds the memory branch's commits and
/// trees but not its files' blobs, and recording the folder (a merge with the local branch)
/// and writing it read them before any fetch round: git fetches the missing ones from the
/// promisor remote first, within the budget. When that fails the sync stops here, saying why
/// (nothing was changed). Returns whether the sync may go on.
fn memory_blobs_here(
    repo: &Repository,
    memory: &MemoryBranch,
    local: Option<Oid>,
    base: Option<memory_branch::Materialised>,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> bool {
    if !crate::git::missing_blobs::is_partial_clone(repo) {
        return true;
    }
    let tracked = memory
        .upstream()
        .and_then(|up| repo.refname_to_id(&up.tracking_ref).ok());
    let commits: Vec<Oid> = [local, tracked, base.and_then(|m| m.source)]
        .into_iter()
        .flatten()
        .collect();
    let deadline = Deadline::at(deadline);
    let mut net = NetworkOptions::from_process(deadline.remaining(), options.transport);
    net.deadline = deadline;
    match crate::git::missing_blobs::fetch_missing(repo, &commits, TEAM_DIR, &net) {
        Ok(_) => true,
        Err(failure) => {
            sync::missing_objects_skip(outcome, &failure, &memory.name);
            false
        }
    }
}

/// Adds [`EXCLUDE_LINE`] to the common `info/exclude` when it is missing: the materialised
/// folder is never shown by `git status` nor added by `git add -A`. A local file, never
/// committed; a folder tracked on the current branch stays tracked (`init --branch --migrate`
/// removes it).
pub fn ensure_excluded(repo: &Repository) -> Result<bool, OpError> {
    let text = exclude_text(repo);
    if text.lines().any(is_exclude_line) {
        return Ok(false);
    }
    let path = exclude_path(repo);
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

/// The common `info/exclude` (shared by every linked worktree).
fn exclude_path(repo: &Repository) -> std::path::PathBuf {
    repo.commondir().join("info").join("exclude")
}

/// The text of the common `info/exclude`; empty when there is none.
fn exclude_text(repo: &Repository) -> String {
    std::fs::read_to_string(exclude_path(repo)).unwrap_or_default()
}

/// Whether a line of `info/exclude` is [`EXCLUDE_LINE`].
pub(super) fn is_exclude_line(line: &str) -> bool {
    line.trim() == EXCLUDE_LINE
}

/// What [`record_folder`] did.
struct Recording {
    /// Whether the sync may go on.
    go_on: bool,
    /// The blobs of the folder's changes when a commit recorded them (at their paths, or
    /// beside them as conflict copies; a change the local branch already held included): a
    /// file holding one of them is safe on the branch and may be replaced. Empty when nothing
    /// was recorded.
    recorded: HashSet<Oid>,
    /// The files quarantined: they stay on disk, out of the folder's `MEMORY.md`, as in
    /// current-branch sync.
    held_back: HashSet<String>,
}

impl Recording {
    fn new(go_on: bool, recorded: HashSet<Oid>, held_back: HashSet<String>) -> Self {
        Recording {
            go_on,
            recorded,
            held_back,
        }
    }
}

/// Records the folder's changes since its last materialisation as a commit on the memory
/// branch. Returns whether the sync may go on, and the commit recorded; `GitError::OutOfTime`
/// when the deadline passed while the commit was made (no ref moved).
#[allow(clippy::too_many_arguments)]
fn record_folder(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    base: Option<memory_branch::Materialised>,
    local: &mut Option<Oid>,
    settings: &CommitSettings,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<Recording, OpError> {
    let deadline = Deadline::at(deadline);
    let mut held_back = HashSet::new();
    let workdir = project.git_root()?;
    sync::remove_stale_temp_files(&workdir.join(TEAM_DIR));
    let base_tree = match base {
        Some(m) => Some(
            repo.find_tree(m.tree)
                .map_err(|e| crate::git::GitError::git("reading the materialised base", e))?,
        ),
        None => None,
    };
    let changes = status::folder_changes(repo, base_tree.as_ref(), TEAM_DIR, false)?;
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let team_prefix = format!("{TEAM_DIR}/");
    let (policy, _) = crate::ops::guard::policy(project);
    let mut updates = Vec::new();
    for change in &changes {
        if change.path == index_path {
            continue;
        }
        let Some(mode) = change.mode.filter(|_| change.kind != ChangeKind::Deleted) else {
            // Never materialised here: a file missing is one not received yet, not a deletion.
            if base.is_some() {
                updates.push(TeamUpdate {
                    path: change.path.clone(),
                    file: None,
                });
            }
            continue;
        };
        let rel = change
            .path
            .strip_prefix(&team_prefix)
            .unwrap_or(&change.path);
        let abs = workdir.join(&change.path);
        let (reasons, bytes) = if change.unreadable_name {
            (
                vec!["invalid: the file name is not valid UTF-8 — rename it".to_string()],
                None,
            )
        } else {
            let file = quarantine::check_team_file(&change.path, rel, &abs, &policy)?;
            (file.reasons, file.bytes)
        };
        if !reasons.is_empty() {
            outcome
                .quarantined
                .push(Quarantined::new(&change.path, reasons));
            held_back.insert(change.path.clone());
            continue;
        }
        let id = commit::store_blob(repo, &change.path, bytes.as_deref())?;
        updates.push(TeamUpdate {
            path: change.path.clone(),
            file: Some(TreeFile { id, mode }),
        });
    }
    // Never materialised here (a fresh clone, a new worktree): the folder's files are recorded
    // on the memory branch as this clone knows it; a file the branch holds in another version
    // is recorded beside it as a conflict copy, so neither version is lost.
    let parent = match base {
        Some(m) => m.source,
        None => local.or_else(|| {
            memory
                .upstream()
                .and_then(|up| repo.refname_to_id(&up.tracking_ref).ok())
        }),
    };
    if base.is_none() {
        let parent_tree = memory_branch::tree_of(repo, parent)?;
        for update in &mut updates {
            let Some(file) = update.file else { continue };
            let there = parent_tree
                .get_path(Path::new(&update.path))
                .ok()
                .map(|e| e.id());
            if there.is_some_and(|id| id != file.id) {
                let short = file.id.to_string()[..7].to_string();
                update.path = crate::domain::conflict::copy_path(&update.path, &short);
            }
        }
    }
    let recorded_blobs: HashSet<Oid> = updates
        .iter()
        .filter_map(|u| u.file)
        .map(|f| f.id)
        .collect();
    // A change the local branch already holds (an earlier sync recorded or merged it, then
    // stopped before it moved the base) is not recorded twice. A file mode alone is no change:
    // a teammate's memory committed executable is written here as a plain file, and recording
    // that back would give the branch a commit from a clone that changed nothing.
    let local_tree = memory_branch::tree_of(repo, if base.is_none() { parent } else { *local })?;
    updates.retain(|u| {
        let there = local_tree.get_path(Path::new(&u.path)).ok().map(|e| e.id());
        there != u.file.map(|f| f.id)
    });
    if updates.is_empty() {
        return Ok(Recording::new(true, HashSet::new(), held_back));
    }
    let recorded = match memory_branch::record(
        repo,
        parent,
        &updates,
        settings,
        &TeamMemoryIndexGate,
        deadline,
    )? {
        Recorded::Nothing => return Ok(Recording::new(true, HashSet::new(), held_back)),
        Recorded::Commit(id) => id,
        Recorded::NotSigned(why) => {
            outcome.record_not_signed(&why);
            return Ok(Recording::new(false, HashSet::new(), held_back));
        }
    };
    // The local branch moved past the folder's base (another worktree's sync): the record is
    // re-created on top of it, memory by memory.
    let published = proposal_tips(repo, memory);
    let combined = memory_branch::combine(
        repo,
        Some(recorded),
        *local,
        &published,
        settings,
        &TeamMemoryIndexGate,
        deadline,
    )?;
    if !land(repo, memory, local, combined, outcome)? {
        return Ok(Recording::new(false, recorded_blobs, held_back));
    }
    outcome.committed = true;
    outcome.commit = local.map(|tip| tip.to_string());
    outcome.files_committed = updates.len();
    Ok(Recording::new(true, recorded_blobs, held_back))
}

/// Moves the local memory branch to a combined tip; returns whether it stands there.
fn land(
    repo: &Repository,
    memory: &MemoryBranch,
    local: &mut Option<Oid>,
    combined: Combined,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    if let Some(why) = combined.not_signed {
        outcome.commit_refused = true;
        outcome.warnings.push(format!(
            "commit.gpgsign is on but the merge of the memory branch could not be signed \
             ({why}); nothing was merged{}",
            sync::SIGNING_FIX
        ));
        return Ok(false);
    }
    let Some(tip) = combined.tip else {
        return Ok(true);
    };
    if !memory_branch::move_ref(repo, &memory.local_ref(), *local, tip, "teammem: sync")? {
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
    for kept in &combined.conflicts {
        outcome.warnings.push(format!(
            "a teammate and you both changed {} differently: theirs is kept at that path, yours \
             beside it as {}; keep one and delete the other",
            kept.path, kept.kept_as
        ));
    }
    Ok(true)
}

/// The tips of the user's proposal branches this clone knows of: what they hold is never
/// re-created.
fn proposal_tips(repo: &Repository, memory: &MemoryBranch) -> Vec<Oid> {
    memory
        .remote
        .as_deref()
        .map(|remote| memory_branch::proposal_tips(repo, remote))
        .unwrap_or_default()
}

/// Fetches the remote's memory branch, merges it in, and pushes with a lease, again after a
/// jittered pause when a teammate pushed in between; to the proposal branch when refused.
fn share(
    repo: &Repository,
    options: &SyncOptions,
    deadline: Instant,
    advertised: Option<&Advertisement>,
    rounds: &mut BranchRounds<'_>,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let deadline = Deadline::at(deadline);
    let mut net = NetworkOptions::from_process(deadline.remaining(), options.transport);
    net.deadline = deadline;
    let up = rounds.up.clone();
    sync::push_rounds(repo, &up, &net, options, advertised, rounds, outcome)
}

/// Branch mode's half of [`sync::push_rounds`]: merge the fetched tip into the local memory
/// branch; a refused push goes to the user's proposal branch.
struct BranchRounds<'a> {
    memory: &'a MemoryBranch,
    up: Upstream,
    settings: &'a CommitSettings,
    local: &'a mut Option<Oid>,
    /// The remote's tip as this clone knew it when the sync began (its remote-tracking ref).
    known_remote: Option<Oid>,
    /// When the sync must be over: a merge regenerating `MEMORY.md` stops there.
    deadline: Deadline,
}

impl Rounds for BranchRounds<'_> {
    const LEFT: &'static str =
        "; the commits stay on the local memory branch and the next sync pushes them";
    const MOVED_NO_PULL: &'static str = "the remote memory branch moved since the last fetch";

    fn land(
        &mut self,
        repo: &Repository,
        options: &SyncOptions,
        remote_tip: Option<Oid>,
        outcome: &mut SyncOutcome,
    ) -> Result<bool, OpError> {
        let unpublished = *self.local;
        if options.pull {
            // A teammate's file over the size limit is no reason to refuse the pull here: it is
            // carried on the branch by its id and never read whole (combining reads only its
            // size), and materialising withholds it alone.
            let before = *self.local;
            // This clone's unpublished record commits are re-created on the remote's tip, so
            // the branch's history stays a line.
            let published = proposal_tips(repo, self.memory);
            let combined = memory_branch::combine(
                repo,
                *self.local,
                remote_tip,
                &published,
                self.settings,
                &TeamMemoryIndexGate,
                self.deadline,
            )?;
            if !land(repo, self.memory, self.local, combined, outcome)? {
                return Ok(false);
            }
            if outcome.committed && *self.local != before && *self.local != remote_tip {
                outcome.commit = self.local.map(|tip| tip.to_string());
            }
            if *self.local != before && before.is_none_or(|b| Some(b) != remote_tip) {
                outcome.pulled = true;
            }
        }
        let Some(tip) = *self.local else {
            return Ok(false);
        };
        if self.published_unseen(repo, unpublished, remote_tip) {
            // The remote holds this clone's commits that it had not seen there: a push of an
            // earlier sync (or an earlier try of this one) whose answer was lost landed after
            // all.
            outcome.pushed = true;
        }
        if !options.push || remote_tip == Some(tip) {
            return Ok(false);
        }
        if remote_tip.is_some_and(|r| !crate::git::history::contains(repo, tip, r).unwrap_or(false))
        {
            // --no-pull and the remote moved: pushing would need its commits first.
            outcome.skip(
                SkipReason::RemoteBusy,
                "the remote memory branch has commits this one lacks and --no-pull was given; \
                 sync without --no-pull to bring them in",
            );
            return Ok(false);
        }
        Ok(true)
    }

    fn rejected(
        &mut self,
        repo: &Repository,
        message: String,
        net: &NetworkOptions,
        outcome: &mut SyncOutcome,
    ) -> Result<(), OpError> {
        let Some(tip) = *self.local else {
            return Ok(());
        };
        propose(repo, self.memory, &self.up, tip, &message, net, outcome)
    }
}

impl BranchRounds<'_> {
    /// Whether the remote's tip `remote` holds the local memory branch's `local` tip (before
    /// this round brought the two together) though the remote did not, as this clone knew it
    /// when the sync began: commits of this clone reached the remote unseen.
    fn published_unseen(&self, repo: &Repository, local: Option<Oid>, remote: Option<Oid>) -> bool {
        let (Some(local), Some(remote)) = (local, remote) else {
            return false;
        };
        let contains = |a: Oid, b: Oid| crate::git::history::contains(repo, a, b).unwrap_or(false);
        let seen = self
            .known_remote
            .is_some_and(|known| contains(known, local));
        !seen && contains(remote, local)
    }
}
