//! Sync: share the team memory through the repository's own git history.
//!
//! The steps, in order: preflight (is the repository in a state to sync?) → the sync lock →
//! guard and commit the team folder → fetch the upstream → fast-forward, or re-create the
//! unpublished sync commits on top of it → push with a lease, again (fetch, re-create) when a
//! teammate pushed in between. Each step that cannot go on stops the sync with a
//! `skipped_reason`; nothing already done is undone, and nothing half-done is left.
//!
//! The team change is committed *before* the fetch: a memory written by `teammem add` also
//! rewrites `MEMORY.md`, which a teammate's push changes too, so an uncommitted change would
//! block the fast-forward. Committed, it is merged file by file with the teammate's change
//! (`git/replay.rs`) and `MEMORY.md` is regenerated. It also means the team change is always
//! committed locally, whatever happens on the network (`no-upstream`, `local-ahead`,
//! `diverged`, `fetch-failed`, …); the next sync publishes it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use git2::Repository;

use crate::domain::scope::TEAM_DIR;
use crate::git::GitError;
use crate::git::cli_repo::Opened;
use crate::git::fast_forward::{self, BranchMove, CheckoutBudget, Resumed};
use crate::git::fetch;
use crate::git::helper;
use crate::git::offline;
use crate::git::oversized;
use crate::git::preflight;
use crate::git::push::{self, PushOutcome};
use crate::git::recovery::lock::SyncLock;
use crate::git::recovery::transfer;
use crate::git::remote::{
    Advertisement, Deadline, NetFailure, NetFailureKind, NetworkOptions, Transport, advertise,
};
use crate::git::replay::{self, Divergence};
use crate::git::upstream::{self, Upstream, UpstreamLookup};
use git_cli::branch::Advertised;

use super::quarantine;
use super::{OpError, Project};

mod arrived;
pub(crate) mod branch;
pub(crate) mod fast_noop;
mod git_cli;
mod outcome;
mod plan;
mod team_commit;

pub(crate) use git_cli::branch::{
    choose_remote as cli_choose_remote, ensure_excluded as cli_ensure_excluded,
    memory_branch as cli_memory_branch,
};
pub(crate) use git_cli::commit::commit_folder_removal as cli_commit_folder_removal;
pub use outcome::{PushedUrl, SkipReason, SyncMode, SyncOptions, SyncOutcome};
pub use plan::dry_run;
pub(crate) use team_commit::{
    SIGNING_FIX, commit_settings, parse_person, regenerate_index, remove_stale_temp_files,
};
pub use team_commit::{check_repository, commit_team_changes};

/// The whole sync's default time budget.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long to wait for another git process's `.git/index.lock` before skipping.
const INDEX_PATIENCE: Duration = Duration::from_secs(1);

/// The longest budget honoured; a larger `--timeout` (up to `u64::MAX` seconds) means this.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The first pause before a push is tried again after a teammate's push won the race; each
/// later pause may be twice as long, up to [`MAX_BACKOFF`], with full jitter.
const FIRST_BACKOFF: Duration = Duration::from_millis(40);

/// The longest pause between two push attempts (unless one round takes longer, and never
/// longer than the budget has room for). Thirty clones pushing at once spread out over the
/// budget with it: 113 of 120 published in their round on a 2-core machine at load 13–16, the
/// release build (87 of 120 when a pause that did not fit made a clone give up;
/// `scripts/bench-branch-concurrency.py`).
const MAX_BACKOFF: Duration = Duration::from_millis(6000);

/// The identity used when git has none configured and `--author` is not given.
pub const FALLBACK_AUTHOR: &str = "teammem <teammem@localhost>";

/// Runs a sync in the project's repository. Errors are I/O and git failures; every expected
/// reason not to sync is a `skipped_reason` in the outcome instead.
pub fn sync(project: &Project, options: &SyncOptions) -> Result<SyncOutcome, OpError> {
    match sync_reporting(project, options) {
        (outcome, None) => Ok(outcome),
        (_, Some(err)) => Err(err),
    }
}

/// Runs a sync and always gives its report: when an I/O or git error stopped it, the report
/// says `error` with the message (and what was done before), and the error comes with it.
pub fn sync_reporting(project: &Project, options: &SyncOptions) -> (SyncOutcome, Option<OpError>) {
    let started = Instant::now();
    let deadline = started + options.timeout.min(MAX_TIMEOUT);
    let mut outcome = SyncOutcome::default();
    let failed = run(project, options, deadline, &mut outcome).err();
    if let Some(err) = &failed {
        outcome.skip(SkipReason::Error, err.to_string());
    }
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    (outcome, failed)
}

fn run(
    project: &Project,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let Some(paths) = &project.repo else {
        outcome.skip(
            SkipReason::NotAGitRepo,
            "not inside a git work tree; team memory lives in a repository",
        );
        return Ok(());
    };
    let repo = match crate::git::cli_repo::open(paths)? {
        Opened::Libgit2(repo) => repo,
        // Reftable refs, SHA-256 objects, `GIT_COMMON_DIR`: the sync runs through git.
        Opened::Git(cli) => {
            if let Some(done) =
                git_cli::branch::noop::nothing_to_do(project, &cli, options, deadline)
            {
                *outcome = done;
                return Ok(());
            }
            let memory = match git_cli::branch::memory_branch(&cli, &Deadline::at(deadline))? {
                Some(memory) => Some(memory),
                None => match git_cli::branch::advertised(&cli, options, deadline) {
                    Advertised::Branch(memory) => Some(memory),
                    Advertised::CurrentBranch => None,
                    Advertised::NoAnswer(remote) => {
                        skip_undecided(outcome, &remote);
                        return Ok(());
                    }
                },
            };
            return match memory {
                Some(memory) => {
                    git_cli::branch::run(project, &cli, &memory, options, deadline, outcome)
                }
                None => git_cli::run(project, &cli, options, deadline, outcome),
            };
        }
    };
    let mut memory = crate::git::memory_branch::mode(&repo)?;
    let advertised = advertise_first(&repo, memory.as_ref(), options, deadline)?;
    if memory.is_none() {
        memory = advertised
            .as_ref()
            .and_then(|adv| crate::git::memory_branch::advertised(&repo, adv));
    }
    let asked = options.pull && options.transport == Transport::Builtin;
    if memory.is_none() && advertised.is_none() && asked {
        if let Some(remote) = crate::git::memory_branch::undecided(&repo)? {
            let now = Instant::now();
            let mut net = NetworkOptions::from_process(
                deadline.saturating_duration_since(now) / 2,
                options.transport,
            );
            net.deadline = Deadline::after(deadline.saturating_duration_since(now) / 2);
            match crate::git::memory_branch::remote_has_default_branch(&repo, &remote, &net) {
                Ok(true) => {
                    memory = Some(crate::git::memory_branch::MemoryBranch {
                        name: crate::git::memory_branch::DEFAULT_BRANCH.to_string(),
                        remote: Some(remote),
                    });
                }
                Ok(false) => {}
                Err(_) => {
                    skip_undecided(outcome, &remote);
                    return Ok(());
                }
            }
        }
    }
    if let Some(memory) = memory {
        return branch::run(
            project,
            &repo,
            &memory,
            options,
            deadline,
            advertised.as_ref(),
            outcome,
        );
    }
    let Some(mut branch) = check_repository(project, &repo, outcome)? else {
        return Ok(());
    };
    let Some(_lock) = lock_and_recover(&repo, outcome)? else {
        return Ok(());
    };
    crate::git::staging_index::update::release_abandoned_lock(&repo)?;
    let helper = helper::registered_program();
    let budget = CheckoutBudget {
        deadline: Deadline::at(deadline),
        helper: helper.as_deref(),
    };
    match fast_forward::resume_interrupted(&repo, &budget) {
        Ok(Resumed::Nothing) => {}
        Ok(Resumed::Done(said)) => {
            outcome.warnings.push(said);
            // The branch may have moved: commit on its new tip.
            match check_repository(project, &repo, outcome)? {
                Some(moved) => branch = moved,
                None => return Ok(()),
            }
        }
        Ok(Resumed::OutOfTime) => {
            outcome.skip(
                SkipReason::Timeout,
                "the time budget ran out while finishing a pull an earlier sync left half-done; \
                 the next sync goes on with it (or run `teammem sync --timeout 120` once)",
            );
            return Ok(());
        }
        Err(err) => {
            outcome.skip(
                SkipReason::Locked,
                format!("{err}; nothing else was changed — sync again"),
            );
            return Ok(());
        }
    }
    if !preflight::wait_for_index_lock(&repo, INDEX_PATIENCE) {
        outcome.skip(
            SkipReason::Locked,
            "another git process holds .git/index.lock; nothing was changed (it is not removed: \
             if no git command is running, delete it yourself)",
        );
        return Ok(());
    }
    commit_team_changes(project, &repo, &branch, options, deadline, outcome)?;
    // After the user's own commit: only what the pull brings is named, never the user's files.
    let before = fast_forward::current_tip(&repo, &branch.refname).unwrap_or(branch.tip);
    if (options.pull || options.push) && outcome.skipped_reason.is_none() {
        share(&repo, options, &budget, advertised.as_ref(), outcome)?;
    }
    let team_dir = project.git_root()?.join(TEAM_DIR);
    if let Err(err) =
        arrived::name_arrived_entries(&repo, &branch.refname, before, &team_dir, outcome)
    {
        // Everything is done by now: a pulled tree that cannot be read again costs the naming
        // of its entries, not the sync.
        outcome.warnings.push(format!(
            "could not list the entries this pull brought in that sync leaves alone: {err}"
        ));
    }
    Ok(())
}

/// Nothing set up and the remote did not answer: whether the team memory lives on the
/// remote's memory branch is unknown, so nothing is committed on the current branch (a clone
/// made with `--single-branch` or `--depth 1` has no remote-tracking ref for the memory
/// branch; its first sync offline put the memory onto the code branch, for the user's next
/// `git push`). Reported as branch mode, the default for a repository with a remote.
fn skip_undecided(outcome: &mut SyncOutcome, remote: &str) {
    outcome.mode = SyncMode::Branch;
    outcome.skip(
        SkipReason::FetchFailed,
        format!(
            "the remote {remote} did not answer, so sync cannot tell whether the team memory \
             lives on its memory branch ({}) or on your branches: nothing was recorded and \
             your files stay as they are; the next sync that reaches {remote} decides \
             (`teammem init` chooses now)",
            crate::git::memory_branch::DEFAULT_BRANCH
        ),
    );
}

/// The remote's ref advertisement, asked for before anything else (`git/remote/advertise.rs`):
/// when it shows the tip this clone already has, the sync fetches nothing (and a branch-mode
/// sync with nothing else to do is over before its lock); it also tells a clone with no mode
/// recorded that the remote has a memory branch. Only for a pulling sync on libgit2's own
/// transports; waited for at most half the budget, and a listing that failed or did not answer
/// in time is no answer: the sync goes on as it would have, its fetch reporting the trouble.
fn advertise_first(
    repo: &Repository,
    memory: Option<&crate::git::memory_branch::MemoryBranch>,
    options: &SyncOptions,
    deadline: Instant,
) -> Result<Option<Advertisement>, OpError> {
    if !options.pull || options.transport != Transport::Builtin {
        return Ok(None);
    }
    let remote = match memory {
        Some(memory) => memory.remote.clone(),
        None => crate::git::memory_branch::choose_remote(repo)?,
    };
    let Some(remote) = remote else {
        return Ok(None);
    };
    let now = Instant::now();
    let wait_until = now + deadline.saturating_duration_since(now) / 2;
    let mut net =
        NetworkOptions::from_process(deadline.saturating_duration_since(now), options.transport);
    net.deadline = Deadline::at(deadline);
    Ok(advertise::list_refs(repo, &remote, &net, wait_until).ok())
}

/// The network half: fetch the upstream, land it (fast-forward, or the unpublished sync
/// commits re-created on top of it), and push the sync commits with a lease — again, after a
/// jittered pause, as long as the budget allows, when a teammate pushed in between. The
/// user's own commits are never rewritten or pushed.
fn share(
    repo: &Repository,
    options: &SyncOptions,
    budget: &CheckoutBudget<'_>,
    advertised: Option<&Advertisement>,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let up = match upstream::resolve(repo)? {
        UpstreamLookup::Found(up) => up,
        UpstreamLookup::NoUpstream { local_ref } => {
            let branch = local_ref.strip_prefix("refs/heads/").unwrap_or(&local_ref);
            outcome.skip(
                SkipReason::NoUpstream,
                format!(
                    "branch {branch} has no upstream, so nothing is fetched or pushed (team \
                     memory is committed on this branch only); set one with \
                     `git push -u <remote> {branch}`"
                ),
            );
            return Ok(());
        }
        UpstreamLookup::Detached => {
            outcome.skip(SkipReason::DetachedHead, "HEAD is not on a branch");
            return Ok(());
        }
    };
    let mut net = NetworkOptions::from_process(budget.deadline.remaining(), options.transport);
    net.deadline = budget.deadline;
    let mut rounds = CurrentBranchRounds { up: &up, budget };
    push_rounds(repo, &up, &net, options, advertised, &mut rounds, outcome)
}

/// Current-branch mode's half of [`push_rounds`]: land the fetched tip on the checked-out
/// branch (fast-forward, or the sync commits re-created on top), never past the user's own
/// commits.
struct CurrentBranchRounds<'a> {
    up: &'a Upstream,
    budget: &'a CheckoutBudget<'a>,
}

impl Rounds for CurrentBranchRounds<'_> {
    const LEFT: &'static str = "; the sync commit stays on your branch and the next sync pushes it";
    const MOVED_NO_PULL: &'static str = "the remote branch moved since the last fetch and \
         --no-pull was given; sync without --no-pull to bring it in";

    fn land(
        &mut self,
        repo: &Repository,
        options: &SyncOptions,
        upstream_tip: Option<git2::Oid>,
        outcome: &mut SyncOutcome,
    ) -> Result<bool, OpError> {
        let (up, budget) = (self.up, self.budget);
        let local = repo.refname_to_id(&up.local_ref).ok();
        if let (Some(tip), true) = (upstream_tip, options.pull) {
            if refuse_oversized(repo, local, tip, outcome)?
                || arrived::refuse_unwritable_fetched(repo, local, tip, outcome)?
            {
                return Ok(false);
            }
        }
        match replay::classify(repo, local, upstream_tip)? {
            Divergence::UpToDate => Ok(false),
            Divergence::Behind => {
                if let (true, Some(tip)) = (options.pull, upstream_tip) {
                    let moved = fast_forward::fast_forward(repo, &up.local_ref, tip, budget)?;
                    landed(moved, outcome);
                }
                Ok(false)
            }
            Divergence::SyncAhead { .. } => Ok(true),
            Divergence::Replayable { .. } => {
                let (Some(local), Some(tip), true) = (local, upstream_tip, options.pull) else {
                    outcome.skip(
                        SkipReason::PushFailed,
                        "the remote branch has commits this branch lacks and --no-pull was \
                         given; sync without --no-pull to bring them in first",
                    );
                    return Ok(false);
                };
                replay_onto(repo, up, local, tip, budget, outcome)
            }
            Divergence::LocalAhead { user_commits } => {
                outcome.skip(
                    SkipReason::LocalAhead,
                    format!(
                        "your own commit{} ({}) on {} {} not pushed yet, and sync never \
                         publishes your commits: the team memory is committed here and goes \
                         out with your next `git push`",
                        plural(user_commits.len()),
                        short_list(&user_commits),
                        branch_name(up),
                        if user_commits.len() == 1 { "is" } else { "are" },
                    ),
                );
                Ok(false)
            }
            Divergence::Diverged { user_commits } => {
                outcome.skip(
                    SkipReason::Diverged,
                    format!(
                        "{} and its upstream have both moved and your own commit{} ({}) \
                         {} not pushed; sync never rewrites your commits: pull \
                         (`git pull --rebase`), then sync again; the team memory is committed \
                         here",
                        branch_name(up),
                        plural(user_commits.len()),
                        short_list(&user_commits),
                        if user_commits.len() == 1 { "is" } else { "are" },
                    ),
                );
                Ok(false)
            }
        }
    }

    fn rejected(
        &mut self,
        _repo: &Repository,
        message: String,
        _net: &NetworkOptions,
        outcome: &mut SyncOutcome,
    ) -> Result<(), OpError> {
        outcome.skip(
            SkipReason::PushRejected,
            format!("the remote refused the push: {message}{}", Self::LEFT),
        );
        Ok(())
    }
}

/// What a sync mode does in each round of [`push_rounds`].
pub(crate) trait Rounds {
    /// Where the commits stay when a push does not go through (the tail of a skip's message).
    const LEFT: &'static str;
    /// Why `--no-pull` stopped a push whose lease the remote refused.
    const MOVED_NO_PULL: &'static str;

    /// Brings this round's remote tip in (`pull`), or checks the push may go on with it;
    /// returns whether to push, a skip recorded in `outcome` when not.
    fn land(
        &mut self,
        repo: &Repository,
        options: &SyncOptions,
        remote_tip: Option<git2::Oid>,
        outcome: &mut SyncOutcome,
    ) -> Result<bool, OpError>;

    /// The remote refused the push (not the lease: a hook, a protected branch).
    fn rejected(
        &mut self,
        repo: &Repository,
        message: String,
        net: &NetworkOptions,
        outcome: &mut SyncOutcome,
    ) -> Result<(), OpError>;
}

/// The network half of both modes, one round after another: fetch the remote tip of `up`
/// (the advertisement may already say there is nothing to fetch), let the mode land it, push
/// with a lease on it — again, after a jittered pause, as long as the budget allows, when a
/// teammate pushed in between.
pub(crate) fn push_rounds<R: Rounds>(
    repo: &Repository,
    up: &Upstream,
    net: &NetworkOptions,
    options: &SyncOptions,
    advertised: Option<&Advertisement>,
    mode: &mut R,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let round_started = Instant::now();
        let Some(remote_tip) =
            fetch_round(repo, up, net, options.pull, attempt, advertised, outcome)
        else {
            return Ok(());
        };
        if !mode.land(repo, options, remote_tip, outcome)? || !options.push {
            return Ok(());
        }
        let (pushed, urls) = push::push_every_url(repo, up, remote_tip, net);
        outcome.push_urls = urls.into_iter().map(PushedUrl::from).collect();
        match pushed {
            Ok(PushOutcome::Pushed { .. }) => {
                let refused: Vec<String> = outcome
                    .push_urls
                    .iter()
                    .filter(|u| !u.pushed)
                    .map(|u| format!("{} ({})", u.url, u.error.as_deref().unwrap_or("")))
                    .collect();
                outcome.pushed = refused.is_empty();
                if !refused.is_empty() {
                    outcome.skip_push_partial(&up.remote, &refused);
                }
                return Ok(());
            }
            Ok(PushOutcome::LeaseRefused) if !options.pull => {
                outcome.skip(
                    SkipReason::RemoteBusy,
                    format!("{}{}", R::MOVED_NO_PULL, R::LEFT),
                );
                return Ok(());
            }
            Ok(PushOutcome::LeaseRefused) => {
                if !another_round(attempt, round_started, net, R::LEFT, outcome) {
                    return Ok(());
                }
            }
            Ok(PushOutcome::Rejected { message }) => {
                return mode.rejected(repo, message, net, outcome);
            }
            Err(failure) => {
                network_skip(outcome, &failure, SkipReason::PushFailed, R::LEFT);
                return Ok(());
            }
        }
    }
}

/// Re-creates the unpublished sync commits on top of the fetched tip and checks the result
/// out. Returns whether the branch now stands on it (the push may go on).
fn replay_onto(
    repo: &Repository,
    up: &Upstream,
    local: git2::Oid,
    tip: git2::Oid,
    budget: &CheckoutBudget<'_>,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let replayed = match replay::replay_sync_commits(repo, local, tip, &super::TeamMemoryIndexGate)
    {
        Ok(replayed) => replayed,
        Err(GitError::Unsupported { what, fix, .. }) => {
            outcome.skip(SkipReason::Diverged, format!("{what}; {fix}"));
            return Ok(false);
        }
        Err(err) => return Err(err.into()),
    };
    let moved =
        fast_forward::move_branch(repo, &up.local_ref, Some(local), replayed.commit, budget)?;
    if !landed(moved, outcome) {
        return Ok(false);
    }
    if outcome.committed {
        outcome.commit = Some(replayed.commit.to_string());
    }
    for kept in &replayed.conflicts {
        outcome.warnings.push(format!(
            "a teammate and you both changed {} differently: theirs is kept at that path, yours \
             beside it as {}; keep one and delete the other",
            kept.path, kept.kept_as
        ));
    }
    Ok(true)
}

/// Refuses to land fetched commits that bring a team file over the memory size limit: it is
/// never checked out, merged or read whole (only its size is looked at), and the report names
/// the commit and the file. Returns whether the pull was refused.
pub(crate) fn refuse_oversized(
    repo: &Repository,
    local: Option<git2::Oid>,
    tip: git2::Oid,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let base = match local {
        Some(local) if local == tip => return Ok(false),
        Some(local) => repo.merge_base(local, tip).ok(),
        None => None,
    };
    let limit = crate::domain::memory::MAX_FILE_BYTES;
    let Some(big) = oversized::fetched_oversized(repo, base, tip, TEAM_DIR, limit)? else {
        return Ok(false);
    };
    outcome.skip(
        SkipReason::TooLarge,
        format!(
            "commit {} brings {} of {} bytes, over the {} KiB a team memory file may have; \
             nothing was pulled (it is never checked out or read) — ask its author to remove it \
             from the branch; your team change is committed here",
            &big.commit.to_string()[..12],
            big.path,
            big.size,
            limit / 1024
        ),
    );
    Ok(true)
}

/// Records what a branch move did; returns whether the branch moved.
fn landed(moved: BranchMove, outcome: &mut SyncOutcome) -> bool {
    match moved {
        BranchMove::Moved { .. } => {
            outcome.pulled = true;
            true
        }
        BranchMove::UpToDate => true,
        BranchMove::Blocked { paths } => {
            outcome.skip_pull_blocked(&paths);
            false
        }
        BranchMove::OutOfTime => {
            outcome.skip(
                SkipReason::Timeout,
                "the time budget ran out during the checkout of the pull; it was stopped, and \
                 the next sync finishes it",
            );
            false
        }
        BranchMove::NotFastForward | BranchMove::BranchMoved => {
            outcome.skip(
                SkipReason::PullBlocked,
                "the branch moved while sync ran; nothing was changed — sync again",
            );
            false
        }
    }
}

/// Records a failed fetch or push: `timeout` when the budget ran out.
pub(crate) fn network_skip(
    outcome: &mut SyncOutcome,
    failure: &NetFailure,
    reason: SkipReason,
    tail: &str,
) {
    let reason = match failure.kind {
        NetFailureKind::Timeout => SkipReason::Timeout,
        NetFailureKind::TooLarge => SkipReason::TooLarge,
        NetFailureKind::Failed => reason,
    };
    outcome.skip(reason, format!("{}{tail}", failure.message));
}

/// Records that a partial clone could not fetch the objects of the memory branch `branch` it
/// lacks (nothing was changed).
pub(crate) fn missing_objects_skip(outcome: &mut SyncOutcome, failure: &NetFailure, branch: &str) {
    network_skip(
        outcome,
        failure,
        SkipReason::FetchFailed,
        &format!(
            " — this partial clone lacks files of {branch} and the remote did not send them; \
             sync again once it is reachable"
        ),
    );
}

/// When the upstream's remote is a local folder that does not exist, says so: libgit2 reports
/// only "unsupported URL protocol" for it.
pub(crate) fn missing_local_remote(repo: &Repository, up: &Upstream) -> Option<String> {
    let url = match repo.find_remote(&up.remote) {
        Ok(remote) => remote.url().ok()?.to_string(),
        Err(_) => up.remote.clone(),
    };
    let path = match url.strip_prefix("file://") {
        Some(path) => path.to_string(),
        // `host:path` is scp-style ssh; anything with a scheme is a URL.
        None if url.contains("://") => return None,
        None if url
            .split('/')
            .next()
            .is_some_and(|first| first.contains(':')) =>
        {
            return None;
        }
        None => url.clone(),
    };
    let at = repo.workdir().unwrap_or(repo.path()).join(&path);
    if at.exists() {
        return None;
    }
    Some(format!(
        " — the remote `{}` is the local folder {}, which does not exist; fix it with `git \
         remote set-url {} <url>`",
        up.remote,
        at.display(),
        up.remote
    ))
}

/// This round's tip of the remote branch `up`: fetched when `pull` (keeping the offline note
/// up to date), else the one last fetched. `None` when the fetch failed: the skip is recorded
/// in `outcome` and the sync stops.
pub(crate) fn fetch_round(
    repo: &Repository,
    up: &Upstream,
    net: &NetworkOptions,
    pull: bool,
    attempt: u32,
    advertised: Option<&Advertisement>,
    outcome: &mut SyncOutcome,
) -> Option<Option<git2::Oid>> {
    let tracked = repo.refname_to_id(&up.tracking_ref).ok();
    if !pull {
        return Some(tracked);
    }
    // A partial clone lacks the team files' blobs of what it fetched (now or before) until git
    // fetches them.
    let local = repo.refname_to_id(&up.local_ref).ok();
    let blobs_fetched = |tip: Option<git2::Oid>, outcome: &mut SyncOutcome| {
        let commits: Vec<git2::Oid> = tip.into_iter().chain(local).collect();
        match crate::git::missing_blobs::fetch_missing(repo, &commits, TEAM_DIR, net) {
            Ok(_) => true,
            Err(failure) => {
                network_skip(outcome, &failure, SkipReason::FetchFailed, "");
                false
            }
        }
    };
    // The first round's advertisement already says the remote holds what this clone has:
    // nothing to fetch (a later round fetches: the remote moved under a push).
    if attempt == 1
        && advertised.and_then(|adv| adv.tip(&up.remote, &up.merge_ref)) == Some(tracked)
    {
        offline::forget_failure(repo.path());
        return blobs_fetched(tracked, outcome).then_some(tracked);
    }
    match fetch::fetch(repo, up, net) {
        Ok(fetched) => {
            if attempt == 1 {
                offline::forget_failure(repo.path());
            }
            blobs_fetched(fetched.tip, outcome).then_some(fetched.tip)
        }
        Err(failure) => {
            offline::remember_failure(repo.path(), &failure.message);
            let tail = missing_local_remote(repo, up).unwrap_or_default();
            network_skip(outcome, &failure, SkipReason::FetchFailed, &tail);
            None
        }
    }
}

/// After a push that lost the race to a teammate's: waits the backoff and says `true` when
/// another round (costing about what this one did) fits in the time budget; otherwise records
/// `remote-busy`, `left` saying where the commits stay, and says `false`. A pause drawn longer
/// than the budget leaves room for is drawn again within that room: a clone gives up only when
/// no round fits any more, never because its dice came up long.
pub(crate) fn another_round(
    attempt: u32,
    round_started: Instant,
    net: &NetworkOptions,
    left: &str,
    outcome: &mut SyncOutcome,
) -> bool {
    let round = round_started.elapsed();
    let Some(room) = net.deadline.remaining().checked_sub(round) else {
        outcome.skip(
            SkipReason::RemoteBusy,
            format!(
                "teammates kept pushing: each of {attempt} tries lost the race within the time \
                 budget{left}"
            ),
        );
        return false;
    };
    let mut pause = backoff(attempt, round);
    if pause > room {
        pause = jitter(room, attempt);
    }
    std::thread::sleep(pause);
    true
}

/// The pause before push attempt `attempt + 1`: exponential backoff with full jitter, a random
/// share of `unit × 2^(attempt-1)` (at most [`MAX_BACKOFF`]), where the unit is what the
/// round that lost took (at least [`FIRST_BACKOFF`]): on a slow or crowded remote the clones
/// spread out over as many rounds as they need instead of colliding again.
fn backoff(attempt: u32, round: Duration) -> Duration {
    let unit = round.max(FIRST_BACKOFF);
    let cap = unit
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(10))
        .min(MAX_BACKOFF.max(unit));
    jitter(cap, attempt)
}

/// A random pause shorter than `cap` (whole milliseconds), from the clock, the PID and
/// `salt`: clones that lost together draw different pauses.
fn jitter(cap: Duration, salt: u32) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut x = u64::from(nanos) ^ (u64::from(std::process::id()) << 32) ^ u64::from(salt);
    // xorshift64*: a well-spread number from the clock and the PID.
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
    let cap_ms = u64::try_from(cap.as_millis()).unwrap_or(u64::MAX).max(1);
    Duration::from_millis(x % cap_ms)
}

fn branch_name(up: &Upstream) -> &str {
    up.local_ref
        .strip_prefix("refs/heads/")
        .unwrap_or(&up.local_ref)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn short_list(oids: &[git2::Oid]) -> String {
    let shown: Vec<String> = oids
        .iter()
        .take(3)
        .map(|o| o.to_string()[..7].to_string())
        .collect();
    let more = if oids.len() > 3 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

/// Takes the sync lock, the one way every sync does, and clears what a sync killed before
/// this one left (a ref lock its move held, its transfer's temp packs, its writes' temp files). `None` when another
/// sync holds the lock: the outcome says so (`locked`), and nothing was changed.
pub(crate) fn lock_and_recover(
    repo: &Repository,
    outcome: &mut SyncOutcome,
) -> Result<Option<SyncLock>, OpError> {
    let lock = match SyncLock::acquire(repo)? {
        Ok(lock) => lock,
        Err(owner) => {
            let who = owner.map_or(String::new(), |o| format!(" (pid {})", o.pid));
            outcome.skip(
                SkipReason::Locked,
                format!("another sync is running in this repository{who}"),
            );
            return Ok(None);
        }
    };
    if let Some(refname) = crate::git::recovery::ref_move::release_abandoned_ref_lock(repo)? {
        outcome.warnings.push(format!(
            "removed {refname}.lock, left by an earlier sync that was interrupted"
        ));
    }
    transfer::clean_if_dead(repo, None)?;
    crate::git::recovery::remove_dead_writes(repo);
    Ok(Some(lock))
}

/// Takes the sync lock for a setup step (`init`), which waits for no one: another sync
/// holding it is a refusal to try again.
pub(crate) fn lock_for_setup(repo: &Repository) -> Result<SyncLock, OpError> {
    SyncLock::acquire(repo)?.map_err(|_| {
        OpError::Refused("another sync is running in this repository; try again in a moment".into())
    })
}

#[cfg(test)]
mod tests;
