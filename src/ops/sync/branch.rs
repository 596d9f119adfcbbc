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

use git2::{ObjectType, Oid, Repository};

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::{self, StoreError};
use crate::git::commit::{self, CommitSettings, TeamUpdate};
use crate::git::fetch;
use crate::git::lock::SyncLock;
use crate::git::memory_branch::{self, Combined, MemoryBranch, Recorded};
use crate::git::offline;
use crate::git::push::{self, PushOutcome};
use crate::git::remote::{Advertisement, Deadline, NetworkOptions};
use crate::git::status::{self, ChangeKind, TreeFile};
use crate::git::transfer_note;
use crate::git::upstream::Upstream;
use crate::git::{team_files, tree_entries};

use crate::ops::quarantine::{self, Quarantined};
use crate::ops::sync::{self, Rounds, SkipReason, SyncMode, SyncOptions, SyncOutcome};
use crate::ops::{OpError, Project};

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
    if let Some(tip) = nothing_to_do(project, repo, memory, advertised)? {
        // The remote holds what this clone has and the folder what was written there: no
        // lock, no transfer. The report is a no-op's (the identity warnings included).
        sync::commit_settings(repo, options, deadline, outcome)?;
        offline::forget_failure(repo.path());
        outcome.memory_tip = Some(tip.to_string());
        super::fast_noop::record(project, repo, memory, outcome);
        return Ok(());
    }
    let _lock = match SyncLock::acquire(repo)? {
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
    if let Some(refname) = crate::git::ref_intent::release_abandoned_ref_lock(repo)? {
        outcome.warnings.push(format!(
            "removed {refname}.lock, left by an earlier sync that was interrupted"
        ));
    }
    transfer_note::clean_if_dead(repo, None)?;
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
    let recording = record_folder(project, repo, memory, base, &mut local, &settings, outcome)?;
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
                    let mut rounds = BranchRounds {
                        memory,
                        up,
                        settings: &settings,
                        local: &mut local,
                    };
                    share(repo, options, deadline, advertised, &mut rounds, outcome)?;
                }
                None => outcome.skip(
                    SkipReason::NoRemote,
                    format!(
                        "the repository has no remote, so {} is kept here only; add one with \
                         `git remote add origin <url>`",
                        memory.name
                    ),
                ),
            }
        }
    }
    if go_on {
        materialise(project, repo, base, recording, local, deadline, outcome)?;
    }
    outcome.memory_tip = local.map(|o| o.to_string());
    super::fast_noop::record(project, repo, memory, outcome);
    Ok(())
}

/// The memory branch's tip when a sync has nothing to do: the remote advertises the tip this
/// clone's memory branch, its remote-tracking ref and the folder's last materialisation all
/// stand on; nothing was withheld from the folder there; the folder holds exactly what was
/// written (so nothing to record, quarantine or write); the folder is excluded; and no earlier
/// sync left a ref move or a transfer to clean up. Reads only (no lock is held): a sync running
/// meanwhile makes one of these differ, and the full sync then takes its turn at the lock.
/// Notes an interrupted sync leaves in the git folder for the next one to finish from: while
/// one is there, a sync has work to do.
pub(super) const LEFTOVER_NOTES: [&str; 2] = [
    crate::git::ref_intent::INTENT_FILE,
    crate::git::transfer_note::NOTE_FILE,
];

fn nothing_to_do(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    advertised: Option<&Advertisement>,
) -> Result<Option<Oid>, OpError> {
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
    if base.source != Some(remote_tip) || base.tree != tip_tree.id() {
        return Ok(None);
    }
    let common = repo.commondir();
    if LEFTOVER_NOTES.iter().any(|f| common.join(f).exists()) {
        return Ok(None);
    }
    if !exclude_text(repo).lines().any(is_exclude_line) {
        return Ok(None);
    }
    let workdir = project.git_root()?;
    sync::remove_stale_temp_files(&workdir.join(TEAM_DIR));
    // The materialised base's tree is the tip's (checked above).
    if !status::folder_changes(repo, Some(&tip_tree), TEAM_DIR, false)?.is_empty() {
        return Ok(None);
    }
    Ok(Some(remote_tip))
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
            sync::network_skip(
                outcome,
                &failure,
                SkipReason::FetchFailed,
                &format!(
                    " — this partial clone lacks files of {} and the remote did not send them; \
                     sync again once it is reachable",
                    memory.name
                ),
            );
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
    /// The commit that recorded the folder's changes.
    recorded: Option<Oid>,
    /// The files quarantined: they stay on disk, out of the folder's `MEMORY.md`, as in
    /// current-branch sync.
    held_back: HashSet<String>,
}

impl Recording {
    fn new(go_on: bool, recorded: Option<Oid>, held_back: HashSet<String>) -> Self {
        Recording {
            go_on,
            recorded,
            held_back,
        }
    }
}

/// Records the folder's changes since its last materialisation as a commit on the memory
/// branch. Returns whether the sync may go on, and the commit recorded.
fn record_folder(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    base: Option<memory_branch::Materialised>,
    local: &mut Option<Oid>,
    settings: &CommitSettings,
    outcome: &mut SyncOutcome,
) -> Result<Recording, OpError> {
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
    // A change the local branch already holds (an earlier sync recorded or merged it, then
    // stopped before it moved the base) is not recorded twice.
    let local_tree = memory_branch::tree_of(repo, if base.is_none() { parent } else { *local })?;
    updates.retain(|u| {
        let there = local_tree
            .get_path(Path::new(&u.path))
            .ok()
            .map(|e| (e.id(), e.filemode()));
        there != u.file.map(|f| (f.id, i32::from(f.mode)))
    });
    if updates.is_empty() {
        return Ok(Recording::new(true, None, held_back));
    }
    let recorded = match memory_branch::record(repo, parent, &updates, settings)? {
        Recorded::Nothing => return Ok(Recording::new(true, None, held_back)),
        Recorded::Commit(id) => id,
        Recorded::NotSigned(why) => {
            outcome.commit_refused = true;
            outcome.warnings.push(format!(
                "commit.gpgsign is on but the memory-branch commit could not be signed ({why}); \
                 nothing was recorded{}",
                sync::SIGNING_FIX
            ));
            return Ok(Recording::new(false, None, held_back));
        }
    };
    // The local branch moved past the folder's base (another worktree's sync): the record is
    // re-created on top of it, memory by memory.
    let published = proposal_tips(repo, memory);
    let combined = memory_branch::combine(repo, Some(recorded), *local, &published, settings)?;
    if !land(repo, memory, local, combined, outcome)? {
        return Ok(Recording::new(false, Some(recorded), held_back));
    }
    outcome.committed = true;
    outcome.commit = local.map(|tip| tip.to_string());
    outcome.files_committed = updates.len();
    Ok(Recording::new(true, Some(recorded), held_back))
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
        if options.pull {
            if let Some(tip) = remote_tip {
                if sync::refuse_oversized(repo, *self.local, tip, outcome)? {
                    return Ok(false);
                }
            }
            let before = *self.local;
            // This clone's unpublished record commits are re-created on the remote's tip, so
            // the branch's history stays a line.
            let published = proposal_tips(repo, self.memory);
            let combined =
                memory_branch::combine(repo, *self.local, remote_tip, &published, self.settings)?;
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

/// How many proposal branch names a sync tries: `<user>`, then `<user>-2` … `<user>-9`.
const PROPOSAL_NAMES: usize = 9;

/// The memory branch refused the push: the same commits go to the user's proposal branch
/// (`team-memory-proposals/<user>`), with a lease on what the remote holds there. A proposal
/// branch holding commits this clone lacks (someone else pushed there) is not adopted and does
/// not block: the commits go to the next free name (`<user>-2`, …), and the report says so.
fn propose(
    repo: &Repository,
    memory: &MemoryBranch,
    up: &Upstream,
    tip: Oid,
    refusal: &str,
    net: &NetworkOptions,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let user = memory_branch::proposal_user(repo);
    let remote = &up.remote;
    let mut taken = Vec::new();
    for n in 1..=PROPOSAL_NAMES {
        let branch = if n == 1 {
            user.clone()
        } else {
            format!("{user}-{n}")
        };
        let name = format!("{}{branch}", memory_branch::PROPOSALS_PREFIX);
        let Some(target) = memory.proposal(&branch) else {
            return Ok(());
        };
        let said = |outcome: &mut SyncOutcome, taken: &[String]| {
            outcome.proposal = Some(name.clone());
            if !taken.is_empty() {
                outcome.warnings.push(format!(
                    "{} holds commits this clone did not make, so it was not used; your memory \
                     is proposed on {name} instead",
                    taken.join(", ")
                ));
            }
            outcome.skip(
                SkipReason::Proposed,
                format!(
                    "the remote refused the push to {} ({refusal}), so your memory is proposed \
                     on {name} for a maintainer to merge; see it with `teammem review \
                     {remote}/{}..{remote}/{name}`; once merged, the next sync takes it in",
                    memory.name, memory.name
                ),
            );
        };
        let seen = match fetch::fetch(repo, &target, net) {
            Ok(fetched) => fetched.tip,
            Err(failure) => {
                sync::network_skip(
                    outcome,
                    &failure,
                    SkipReason::PushRejected,
                    &format!(
                        " (after the remote refused the push to {}: {refusal})",
                        memory.name
                    ),
                );
                return Ok(());
            }
        };
        if seen == Some(tip) {
            said(outcome, &taken);
            return Ok(());
        }
        if seen.is_some_and(|s| !crate::git::history::contains(repo, tip, s).unwrap_or(false)) {
            // Commits this clone lacks: not the user's to build on.
            taken.push(name);
            continue;
        }
        match push::push(repo, &target, seen, net) {
            Ok(PushOutcome::Pushed { .. }) => said(outcome, &taken),
            Ok(PushOutcome::LeaseRefused) => outcome.skip(
                SkipReason::PushRejected,
                format!(
                    "the remote refused the push to {} ({refusal}), and {name} moved while \
                     sync ran, so nothing was proposed; the commits stay on the local memory \
                     branch and the next sync proposes them",
                    memory.name
                ),
            ),
            Ok(PushOutcome::Rejected { message }) => outcome.skip(
                SkipReason::PushRejected,
                format!(
                    "the remote refused the push to {} ({refusal}) and to {name} ({message}); \
                     the commits stay on the local memory branch",
                    memory.name
                ),
            ),
            Err(failure) => {
                sync::network_skip(outcome, &failure, SkipReason::PushFailed, "");
            }
        }
        return Ok(());
    }
    outcome.skip(
        SkipReason::PushRejected,
        format!(
            "the remote refused the push to {} ({refusal}), and every proposal branch name of \
             yours ({}) holds commits this clone did not make, so nothing was proposed; the \
             commits stay on the local memory branch",
            memory.name,
            taken.join(", ")
        ),
    );
    Ok(())
}

/// Writes the memory branch's `tip` into the folder against what it was last made to hold
/// (`base`): a file the user left as materialised takes the new version; one already holding
/// it is left alone; an edit not recorded (made while sync ran, or quarantined) is kept beside
/// the new version as a conflict copy, or kept in place when the teammate deleted the file (the
/// next sync records it). Only the entries that differ between the two trees are read. What
/// the gate withholds, and every entry a checkout cannot write safely (see
/// [`tree_entries`]), is never written and is reported; the folder's `MEMORY.md` is
/// regenerated from the memories on disk.
fn materialise(
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
    let changes = tree_entries::diff(repo, old_team.as_ref(), new_team.as_ref())?;
    let limits = Limits::of(repo, &source);
    let mut room = Room::of(repo, old_team.as_ref(), &limits)?;
    let mut past_limit: Vec<(&'static str, String)> = Vec::new();
    let mut unfinished = 0usize;
    // What this sync recorded is safe on the branch (at its path, or beside it as a conflict
    // copy): a file holding it may be replaced.
    let recorded_blobs: HashSet<Oid> = match recorded {
        Some(id) => {
            let tree = memory_branch::tree_of(repo, Some(id))?;
            status::tree_files(repo, Some(&tree), TEAM_DIR)?
                .values()
                .map(|f| f.id)
                .collect()
        }
        None => HashSet::new(),
    };
    let (policy, _) = crate::ops::guard::policy(project);
    let team_prefix = format!("{TEAM_DIR}/");
    let short = tip.to_string()[..7].to_string();
    // The changes taken (written, or standing for an edit the next sync records): the folder
    // as materialised is the base with these applied.
    let mut taken = Vec::new();
    let mut kept_out = false;
    let mut withheld = held_back;
    let mut wrote = false;
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
                let Ok(blob) = repo.find_blob(file.id) else {
                    let why = "the entry does not name a file git holds".to_string();
                    withhold(&path, vec![why], &mut withheld, outcome);
                    kept_out = true;
                    continue;
                };
                let reasons =
                    quarantine::check_team_bytes(&path, &change.rel, blob.content(), &policy);
                if !reasons.is_empty() {
                    withhold(&path, reasons, &mut withheld, outcome);
                    kept_out = true;
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
                store::write_atomic(&abs, bytes)?;
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
                store::write_atomic(&abs, bytes)?;
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
        outcome.warnings.push(line);
    }
    if unfinished > 0 {
        outcome.warnings.push(format!(
            "the time budget ran out while writing the team folder: {unfinished} changes wait \
             for the next sync"
        ));
    }
    if wrote || team_dir.is_dir() {
        sync::regenerate_index(project, &team_dir, &withheld, &team_prefix, &policy)?;
    }
    let materialised = if kept_out {
        commit::updated_tree(repo, &base_tree, &taken)?.id()
    } else {
        source.id()
    };
    memory_branch::set_materialised(repo, Some(tip), materialised)?;
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

/// How much of the memory branch the folder takes: at most this many files and bytes
/// (defaults 5,000 and 20 MB; `teammem.maxMemories` / `teammem.maxBytes` in git config change
/// them, and the branch's `.teammem-check.json` can only lower them), so a flood pushed onto
/// the branch costs a bounded time to write.
struct Limits {
    memories: usize,
    bytes: u64,
    /// Whether the repository's file lowered the count limit.
    memories_lowered: bool,
    /// Whether the repository's file lowered the size limit.
    bytes_lowered: bool,
}

impl Limits {
    const DEFAULT_MEMORIES: usize = 5_000;
    const DEFAULT_BYTES: u64 = 20 * 1024 * 1024;

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

    fn of_user(repo: &Repository) -> Limits {
        let config = repo.config().ok();
        let get = |key: &str| {
            config
                .as_ref()
                .and_then(|c| c.get_i64(key).ok())
                .filter(|v| *v > 0)
        };
        Limits {
            memories: get("teammem.maxMemories")
                .and_then(|v| usize::try_from(v).ok())
                .unwrap_or(Self::DEFAULT_MEMORIES),
            bytes: get("teammem.maxBytes")
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(Self::DEFAULT_BYTES),
            memories_lowered: false,
            bytes_lowered: false,
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
fn disk_refusal(team_dir: &Path, rel: &str) -> Option<&'static str> {
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
