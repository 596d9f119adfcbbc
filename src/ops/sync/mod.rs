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

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use git2::Repository;
use serde::Serialize;

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::{self, StoreError};
use crate::git::GitError;
use crate::git::commit::{self, CommitResult, CommitSettings, Identity, Person, TeamUpdate};
use crate::git::fast_forward::{self, BranchMove, CheckoutBudget, Resumed};
use crate::git::fetch;
use crate::git::helper;
use crate::git::lock::{self, SyncLock};
use crate::git::offline;
use crate::git::oversized;
use crate::git::preflight::{self, Blocker, Branch, Preflight};
use crate::git::push::{self, PushOutcome};
use crate::git::remote::{
    Advertisement, Deadline, NetFailure, NetFailureKind, NetworkOptions, Transport, advertise,
};
use crate::git::replay::{self, Divergence};
use crate::git::sign;
use crate::git::staging_index::update::{FileStamp, FreshFile, IndexUpdate};
use crate::git::status::{self, ChangeKind, TreeFile};
use crate::git::team_files;
use crate::git::transfer_note;
use crate::git::upstream::{self, Upstream, UpstreamLookup};

use super::quarantine::{self, Quarantined};
use super::{OpError, Project};

mod arrived;
pub(crate) mod branch;
pub(crate) mod fast_noop;

/// The whole sync's default time budget.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long to wait for another git process's `.git/index.lock` before skipping.
const INDEX_PATIENCE: Duration = Duration::from_secs(1);

/// The longest budget honoured; a larger `--timeout` (up to `u64::MAX` seconds) means this.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The first pause before a push is tried again after a teammate's push won the race; each
/// later pause may be twice as long, up to [`MAX_BACKOFF`], with full jitter.
const FIRST_BACKOFF: Duration = Duration::from_millis(40);

/// The longest pause between two push attempts (unless one round takes longer). Thirty
/// clones pushing at once spread out over the budget with it: 38 to 82 of 120 published in their
/// round on a loaded 2-core machine (34 of 120 before, with 2 s and merge commits;
/// `scripts/bench-branch-concurrency.py`).
const MAX_BACKOFF: Duration = Duration::from_millis(6000);

/// The identity used when git has none configured and `--author` is not given.
pub const FALLBACK_AUTHOR: &str = "teammem <teammem@localhost>";

/// What a sync is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncOptions {
    /// Fetch the upstream and fast-forward to it.
    pub pull: bool,
    /// Push sync commits to the upstream.
    pub push: bool,
    /// The time budget for the whole sync, network included.
    pub timeout: Duration,
    /// `Name <email>` for the sync commit, instead of git's configured identity.
    pub author: Option<String>,
    /// libgit2's transports or the git CLI for fetch and push.
    pub transport: Transport,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            pull: true,
            push: true,
            timeout: DEFAULT_TIMEOUT,
            author: None,
            transport: Transport::Builtin,
        }
    }
}

/// What the push to one push URL did (`push_urls` in the report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushedUrl {
    /// The URL, user-info redacted.
    pub url: String,
    /// Whether it took the push.
    pub pushed: bool,
    /// Why not.
    pub error: Option<String>,
}

impl From<push::UrlPush> for PushedUrl {
    fn from(url: push::UrlPush) -> Self {
        PushedUrl {
            url: url.url,
            pushed: url.pushed,
            error: url.error,
        }
    }
}

/// Why a sync stopped early. The JSON names are the contract (DESIGN.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Not inside a git work tree.
    NotAGitRepo,
    /// HEAD is not on a branch.
    DetachedHead,
    /// A merge, rebase, cherry-pick, revert or bisect is under way.
    OperationInProgress,
    /// Team files are left out of the work tree by a sparse checkout.
    SparseCheckout,
    /// The team folder or a parent is a symlink, or a folder in it cannot be read. (A symlink
    /// below the folder withholds only itself.)
    UnsafePath,
    /// Another sync, or another git process holding the index, is running.
    Locked,
    /// The branch has no upstream.
    NoUpstream,
    /// Fetching the upstream failed.
    FetchFailed,
    /// The user's own commits and the upstream's both moved.
    Diverged,
    /// A fast-forward would overwrite a local change.
    PullBlocked,
    /// The user's own commits are ahead of the upstream.
    LocalAhead,
    /// The remote refused the push.
    PushRejected,
    /// The push failed (the network, the server's transport).
    PushFailed,
    /// Teammates kept pushing: every attempt within the budget lost the race.
    RemoteBusy,
    /// A team file was unstaged with `git rm --cached` while still on disk: committing the
    /// folder would put it back.
    StagedRemoval,
    /// The remote has several push URLs and some took the push while others refused it
    /// (`push_urls` says which, and why).
    PushPartial,
    /// Branch mode: the memory branch refused the push (protected), so the commits went to
    /// the user's proposal branch (`proposal` names it) for a maintainer to merge.
    Proposed,
    /// Branch mode: the repository has no remote to share the memory branch through.
    NoRemote,
    /// The fetched commits bring a team file over the memory size limit; nothing is pulled.
    TooLarge,
    /// The time budget ran out.
    Timeout,
    /// An I/O or git error stopped the sync (a full disk, a broken repository); the first
    /// warning says which.
    Error,
}

impl SkipReason {
    /// The name used in JSON and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::NotAGitRepo => "not-a-git-repo",
            SkipReason::DetachedHead => "detached-head",
            SkipReason::OperationInProgress => "operation-in-progress",
            SkipReason::SparseCheckout => "sparse-checkout",
            SkipReason::UnsafePath => "unsafe-path",
            SkipReason::Locked => "locked",
            SkipReason::NoUpstream => "no-upstream",
            SkipReason::FetchFailed => "fetch-failed",
            SkipReason::Diverged => "diverged",
            SkipReason::PullBlocked => "pull-blocked",
            SkipReason::LocalAhead => "local-ahead",
            SkipReason::PushRejected => "push-rejected",
            SkipReason::PushFailed => "push-failed",
            SkipReason::RemoteBusy => "remote-busy",
            SkipReason::PushPartial => "push-partial",
            SkipReason::StagedRemoval => "staged-removal",
            SkipReason::Proposed => "proposed",
            SkipReason::NoRemote => "no-remote",
            SkipReason::TooLarge => "too-large",
            SkipReason::Timeout => "timeout",
            SkipReason::Error => "error",
        }
    }
}

/// How the team memory is shared (`mode` in the report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMode {
    /// Sync commits on the current branch, pulled and pushed with it.
    #[default]
    CurrentBranch,
    /// The team memory lives on a memory branch of its own (`teammem init --branch`).
    Branch,
}

/// What a sync did: the `--json` report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncOutcome {
    /// A sync commit was made.
    pub committed: bool,
    /// The branch was fast-forwarded to its upstream.
    pub pulled: bool,
    /// Sync commits were pushed.
    pub pushed: bool,
    /// Why the sync stopped early, if it did.
    pub skipped_reason: Option<SkipReason>,
    /// Changed team files kept out of the commit, and why.
    pub quarantined: Vec<Quarantined>,
    /// The sync commit's id.
    pub commit: Option<String>,
    /// How long the sync took.
    pub duration_ms: u64,
    /// What the user should know (the reason behind a skip comes first).
    pub warnings: Vec<String>,
    /// How the team memory is shared: on its own branch, or on the current branch.
    pub mode: SyncMode,
    /// Branch mode: the memory branch's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_branch: Option<String>,
    /// Branch mode: the local memory branch's tip after the sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_tip: Option<String>,
    /// Branch mode: the proposal branch the commits were pushed to (`proposed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// Teammates' entries teammem leaves alone, and why. Branch mode: files the gate kept out
    /// of the work tree. Current-branch mode: entries a pull brought in that git checked out but
    /// teammem never reads, commits or deletes (a symlink leading out, a gitlink).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<Quarantined>,
    /// When a push was tried: one line per push URL of the remote (git pushes to each of
    /// `remote.<name>.pushurl`), credentials redacted. `pushed` is true only when all took it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub push_urls: Vec<PushedUrl>,
    /// How many team files the sync commit changed.
    #[serde(skip)]
    pub files_committed: usize,
    /// Team changes were ready but not committed (signing failed, the branch moved); the
    /// warnings say why.
    #[serde(skip)]
    pub commit_refused: bool,
}

impl SyncOutcome {
    /// Stops the sync with a reason and the message explaining it.
    pub fn skip(&mut self, reason: SkipReason, why: impl Into<String>) {
        self.skipped_reason = Some(reason);
        self.warnings.insert(0, why.into());
    }

    /// One line saying what happened.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match (&self.commit, self.committed) {
            (Some(sha), true) => parts.push(format!(
                "committed {} team memory file{} as {}",
                self.files_committed,
                if self.files_committed == 1 { "" } else { "s" },
                &sha[..sha.len().min(7)]
            )),
            _ if self.commit_refused => parts.push(format!(
                "team memory not committed: {}",
                self.warnings.last().map(String::as_str).unwrap_or("")
            )),
            _ if self.skipped_reason.is_none() => {
                parts.push("no team memory changes to commit".to_string())
            }
            _ => {}
        }
        // In the order they happen: the commit comes before the pull.
        if self.pulled {
            parts.push("pulled teammates' changes".to_string());
        }
        if self.pushed {
            parts.push("pushed".to_string());
        }
        if !self.quarantined.is_empty() {
            parts.push(format!("{} file(s) quarantined", self.quarantined.len()));
        }
        if !self.withheld.is_empty() {
            let from = match self.mode {
                SyncMode::Branch => "from the work tree",
                SyncMode::CurrentBranch => "(left as git checked them out)",
            };
            parts.push(format!(
                "{} teammate file(s) withheld {from}",
                self.withheld.len()
            ));
        }
        if let (SyncMode::Branch, Some(name)) = (self.mode, &self.memory_branch) {
            let at = self
                .memory_tip
                .as_deref()
                .map_or("no commit yet".to_string(), |t| {
                    format!("at {}", &t[..t.len().min(7)])
                });
            parts.push(format!("memory branch {name} {at}"));
        }
        if let Some(reason) = self.skipped_reason {
            let why = self.warnings.first().map(String::as_str).unwrap_or("");
            parts.push(format!("skipped ({}): {why}", reason.as_str()));
        }
        let mut line = parts.join("; ");
        if let Some(first) = line.get(..1) {
            line = first.to_uppercase() + &line[1..];
        }
        line
    }
}

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
    let repo = crate::git::repo::open(paths)?;
    let mut memory = crate::git::memory_branch::mode(&repo)?;
    let advertised = advertise_first(&repo, memory.as_ref(), options, deadline)?;
    if memory.is_none() {
        memory = advertised
            .as_ref()
            .and_then(|adv| crate::git::memory_branch::advertised(&repo, adv));
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
    let _lock = match SyncLock::acquire(&repo)? {
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
    crate::git::staging_index::update::release_abandoned_lock(&repo)?;
    if let Some(refname) = crate::git::ref_intent::release_abandoned_ref_lock(&repo)? {
        outcome.warnings.push(format!(
            "removed {refname}.lock, left by an earlier sync that was interrupted"
        ));
    }
    transfer_note::clean_if_dead(&repo, None)?;
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
            if refuse_oversized(repo, local, tip, outcome)? {
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
                    outcome.skip(
                        SkipReason::PushPartial,
                        format!(
                            "pushed to {} of {} push URLs of {}; not to {}",
                            outcome.push_urls.len() - refused.len(),
                            outcome.push_urls.len(),
                            up.remote,
                            refused.join("; ")
                        ),
                    );
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
    let replayed = match replay::replay_sync_commits(repo, local, tip) {
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
            outcome.skip(
                SkipReason::PullBlocked,
                format!(
                    "local changes, or files git does not track (untracked or ignored), are in \
                     the way of the pull: {}; nothing was changed — commit or stash them, or move \
                     them away, then sync again",
                    paths.join(", ")
                ),
            );
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

/// The pause before push attempt `attempt + 1`: exponential backoff with full jitter, a random
/// share of `unit × 2^(attempt-1)` (at most [`MAX_BACKOFF`]), where the unit is what the
/// round that lost took (at least [`FIRST_BACKOFF`]): on a slow or crowded remote the clones
/// spread out over as many rounds as they need instead of colliding again.
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
/// `remote-busy`, `left` saying where the commits stay, and says `false`.
pub(crate) fn another_round(
    attempt: u32,
    round_started: Instant,
    net: &NetworkOptions,
    left: &str,
    outcome: &mut SyncOutcome,
) -> bool {
    let pause = backoff(attempt, round_started.elapsed());
    if net.deadline.remaining() < pause + round_started.elapsed() {
        outcome.skip(
            SkipReason::RemoteBusy,
            format!(
                "teammates kept pushing: each of {attempt} tries lost the race within the time \
                 budget{left}"
            ),
        );
        return false;
    }
    std::thread::sleep(pause);
    true
}

fn backoff(attempt: u32, round: Duration) -> Duration {
    let unit = round.max(FIRST_BACKOFF);
    let cap = unit
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(10))
        .min(MAX_BACKOFF.max(unit));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut x = u64::from(nanos) ^ (u64::from(std::process::id()) << 32) ^ u64::from(attempt);
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

/// Preflight and path safety, each refusal recorded in `outcome`. Returns the branch to commit
/// on when the sync may go on.
pub fn check_repository(
    project: &Project,
    repo: &Repository,
    outcome: &mut SyncOutcome,
) -> Result<Option<Branch>, OpError> {
    let branch = match preflight::preflight(repo, TEAM_DIR)? {
        Preflight::Ready(branch) => branch,
        Preflight::Blocked(blocker) => {
            let reason = match blocker {
                Blocker::DetachedHead => SkipReason::DetachedHead,
                Blocker::OperationInProgress(_) => SkipReason::OperationInProgress,
                Blocker::SparseCheckout(_) => SkipReason::SparseCheckout,
            };
            outcome.skip(reason, blocker.to_string());
            return Ok(None);
        }
    };
    let safe = project
        .check_scope_safe(ScopeKind::Team)
        .and_then(|dir| unreadable_folder(&dir));
    match safe {
        Ok(_) => {}
        Err(OpError::Store(err @ StoreError::UnsafePath { .. })) => {
            outcome.skip(SkipReason::UnsafePath, err.to_string());
            return Ok(None);
        }
        Err(err) => return Err(err),
    }
    Ok(Some(branch))
}

/// Refuses a team folder holding a folder that cannot be read: its files could not be told
/// apart from deleted ones. A symlink below the folder is no reason to stop: one a teammate
/// committed is left as git checked it out (and named when it arrives, [`name_arrived_entries`]),
/// one of the user's own is quarantined by the commit step ([`SYMLINK_NOT_PUBLISHED`]).
fn unreadable_folder(dir: &Path) -> Result<(), OpError> {
    let listing = store::memory_listing(dir)?;
    let unreadable = listing
        .withheld
        .into_iter()
        .find(|entry| entry.rule != crate::domain::check::PATH_SYMLINK);
    match unreadable {
        Some(bad) => Err(OpError::Store(StoreError::UnsafePath {
            path: dir.join(&bad.rel),
            why: bad.why,
        })),
        None => Ok(()),
    }
}

/// Why a symlink the user made (or changed) in the team folder stays out of the sync commit:
/// `check` and the pre-commit hook refuse any symlink there (`path-symlink`), branch mode never
/// writes one into a teammate's folder, and a link can point an agent outside the memory.
pub(crate) const SYMLINK_NOT_PUBLISHED: &str = "invalid: a symlink (path-symlink) is never \
     published from the team folder — replace it with the file itself, or delete it";

/// The local half: finds the team folder's changes against the branch tip, quarantines what
/// must not be committed, regenerates `MEMORY.md` from the clean memories, and commits the rest
/// with [`commit::commit_team_dir`]. Call it with the sync lock held.
pub fn commit_team_changes(
    project: &Project,
    repo: &Repository,
    branch: &Branch,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let workdir = project.git_root()?;
    let head_commit = match branch.tip {
        Some(tip) => Some(
            repo.find_commit(tip)
                .map_err(|e| crate::git::GitError::git("reading HEAD", e))?,
        ),
        None => None,
    };
    let head_tree = match &head_commit {
        Some(c) => Some(
            c.tree()
                .map_err(|e| crate::git::GitError::git("reading HEAD's tree", e))?,
        ),
        None => None,
    };
    remove_stale_temp_files(&workdir.join(TEAM_DIR));
    let changes = status::team_changes(repo, head_tree.as_ref(), TEAM_DIR)?;
    // Memories git ignores in this clone are never published, nor listed in MEMORY.md; one
    // ignore lookup rules the scan out when the folder is not ignored.
    let probe = format!("{TEAM_DIR}/{INDEX_FILE}");
    let ignored = match repo.is_path_ignored(&probe).unwrap_or(false) {
        true => ignored_memories(project, repo, head_tree.as_ref(), &changes)?,
        false => Vec::new(),
    };
    if !ignored.is_empty() {
        outcome.warnings.push(ignored_warning(repo, &ignored));
    }
    if changes.is_empty() && !commit::index_pending(repo) {
        return Ok(());
    }
    // Only now, when the commit would make the index match the folder: a `git rm --cached`
    // left alone by a sync with nothing to commit stays staged as the user left it. An index
    // that a killed sync left behind its branch lacks that sync's new files for the same
    // reason a `git rm --cached` would: that lag is teammem's own, finished here, not refused.
    let removed = match commit::index_pending(repo) {
        true => Vec::new(),
        false => crate::git::staged_removal::staged_removals(repo, head_tree.as_ref(), TEAM_DIR)?,
    };
    if !removed.is_empty() {
        outcome.skip(
            SkipReason::StagedRemoval,
            format!(
                "{} staged for removal (`git rm --cached`) but still on disk, and a sync would \
                 publish it again; to unpublish it, delete the file (`teammem forget`, or `rm`) \
                 and sync; to keep it, `git restore --staged {}`",
                removed.join(", "),
                removed.join(" ")
            ),
        );
        return Ok(());
    }
    if Instant::now() >= deadline {
        outcome.skip(
            SkipReason::Timeout,
            "the time budget ran out before the commit",
        );
        return Ok(());
    }
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let team_prefix = format!("{TEAM_DIR}/");
    let mut held_back: HashSet<String> = HashSet::new();
    let mut checked: HashMap<String, (FileStamp, Option<Vec<u8>>)> = HashMap::new();
    let (policy, _) = super::guard::policy(project);
    for change in &changes {
        if change.kind == ChangeKind::Deleted || change.path == index_path {
            continue;
        }
        let rel = change
            .path
            .strip_prefix(&team_prefix)
            .unwrap_or(&change.path);
        let abs = workdir.join(&change.path);
        let reasons = if change.unreadable_name {
            vec!["invalid: the file name is not valid UTF-8 — rename it".to_string()]
        } else if change.mode == Some(git2::FileMode::Link) {
            // Never followed: what it points at is not this change.
            vec![SYMLINK_NOT_PUBLISHED.to_string()]
        } else {
            let stamp = stamp_of(&abs)?;
            let file = quarantine::check_team_file(&change.path, rel, &abs, &policy)?;
            checked.insert(change.path.clone(), (stamp, file.bytes));
            file.reasons
        };
        if !reasons.is_empty() {
            held_back.insert(change.path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(&change.path, reasons));
        }
    }

    let team_dir = workdir.join(TEAM_DIR);
    // The index lists only what is published: no line for a file git leaves out.
    held_back.extend(ignored);
    let index_abs = workdir.join(&index_path);
    if std::fs::symlink_metadata(&index_abs).is_ok_and(|m| m.is_dir()) {
        // A teammate's folder where the generated index belongs: left as git checked it out
        // (named when it arrived), neither written into nor committed away.
        held_back.insert(index_path.clone());
    } else {
        regenerate_index(project, &team_dir, &held_back, &team_prefix, &policy)?;
    }
    if index_abs.is_file() {
        let stamp = stamp_of(&index_abs)?;
        let bytes = std::fs::read(&index_abs).map_err(|e| OpError::io(&index_abs, e))?;
        let reasons = quarantine::index_reasons(&bytes, &policy);
        if !reasons.is_empty() {
            held_back.insert(index_path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(&index_path, reasons));
        }
        checked.insert(index_path.clone(), (stamp, Some(bytes)));
    }

    let mut updates = Vec::new();
    let mut fresh = HashMap::new();
    let paths = changes
        .iter()
        .filter(|c| !held_back.contains(&c.path) && c.path != index_path)
        .map(|c| (c.path.as_str(), c.mode))
        .chain((!held_back.contains(&index_path)).then_some((
            index_path.as_str(),
            index_abs.is_file().then_some(git2::FileMode::Blob),
        )));
    for (path, mode) in paths {
        let Some(mode) = mode else {
            updates.push(TeamUpdate {
                path: path.to_string(),
                file: None,
            });
            continue;
        };
        let (stamp, bytes) = match checked.get(path) {
            Some((stamp, bytes)) => (*stamp, bytes.as_deref()),
            None => (stamp_of(&workdir.join(path))?, None),
        };
        let id = commit::store_blob(repo, path, bytes)?;
        if changed_since_checked(&workdir.join(path), bytes)? {
            outcome.quarantined.push(Quarantined::new(
                path,
                vec!["changed while sync ran — sync again".into()],
            ));
            continue;
        }
        fresh.insert(path.to_string(), FreshFile { id, stamp });
        updates.push(TeamUpdate {
            path: path.to_string(),
            file: Some(TreeFile { id, mode }),
        });
    }

    let settings = commit_settings(repo, options, deadline, outcome)?;
    let done = commit::commit_team_dir(repo, branch, TEAM_DIR, &updates, &fresh, &settings)?;
    match done.result {
        CommitResult::Committed(oid) => {
            outcome.committed = true;
            outcome.commit = Some(oid.to_string());
            outcome.files_committed = count_changed(repo, branch, oid)?;
        }
        CommitResult::NothingToCommit => {}
        CommitResult::HeadMoved => {
            outcome.commit_refused = true;
            outcome.warnings.push(
                "the branch moved while sync was committing; nothing was committed — sync again"
                    .into(),
            );
        }
        CommitResult::BranchLocked(lock) => {
            outcome.skip(
                SkipReason::Locked,
                format!(
                    "another git process holds {}; nothing was committed (it is not removed: if \
                     no git command is running, delete it yourself)",
                    lock.display()
                ),
            );
        }
        CommitResult::NotSigned(why) => {
            outcome.commit_refused = true;
            outcome.warnings.push(format!(
                "commit.gpgsign is on but the sync commit could not be signed ({why}); nothing \
                 was committed{SIGNING_FIX}"
            ));
        }
    }
    if done.index == IndexUpdate::Locked {
        outcome.warnings.push(
            "another git process held .git/index.lock, so the index's team entries were not \
             updated; the next sync updates them"
                .into(),
        );
    }
    Ok(())
}

/// The memories on disk that neither HEAD nor this commit holds because git ignores them in
/// this clone (a `.gitignore` rule, `info/exclude`, a global excludes file).
fn ignored_memories(
    project: &Project,
    repo: &Repository,
    head_tree: Option<&git2::Tree<'_>>,
    changes: &[status::TeamChange],
) -> Result<Vec<String>, OpError> {
    let team_prefix = format!("{TEAM_DIR}/");
    let team_dir = project.git_root()?.join(TEAM_DIR);
    let (entries, _) =
        store::load_index_entries(&team_dir, &project.shown_prefix(ScopeKind::Team))?;
    let mut ignored = Vec::new();
    for entry in entries {
        let full = format!("{team_prefix}{}", entry.path);
        let tracked = head_tree.is_some_and(|t| t.get_path(Path::new(&full)).is_ok());
        if tracked || changes.iter().any(|c| c.path == full) {
            continue;
        }
        if repo.is_path_ignored(&full).unwrap_or(false) {
            ignored.push(full);
        }
    }
    Ok(ignored)
}

/// Names the ignored memories, the rule that ignores them and the exact `.gitignore` lines
/// that publish them (the same `teammem init --fix-gitignore` writes).
fn ignored_warning(repo: &Repository, ignored: &[String]) -> String {
    format!(
        "not published, and left out of MEMORY.md: {} — git ignores {} in this clone {}",
        ignored.join(", "),
        if ignored.len() == 1 { "it" } else { "them" },
        crate::ops::init::ignored_advice(repo, &ignored[0]),
    )
}

/// What a user does when a commit could not be signed, said after every such refusal.
pub(crate) const SIGNING_FIX: &str = "; fix the key git signs with (`git config user.signingkey`), \
     or turn signing off in this repository with `git config commit.gpgsign false`";

/// Rewrites `MEMORY.md` from the memories on disk as Qwen Code would, leaving quarantined files
/// out (they are not committed) and any line that would carry a secret: a teammate's pulled
/// secret is never copied into the index this sync commits. A missing team folder stays missing.
pub(crate) fn regenerate_index(
    project: &Project,
    team_dir: &Path,
    held_back: &HashSet<String>,
    team_prefix: &str,
    policy: &crate::domain::gate::Policy,
) -> Result<(), OpError> {
    let (entries, _) = store::load_index_entries(team_dir, &project.shown_prefix(ScopeKind::Team))?;
    let kept = entries
        .into_iter()
        .filter(|e| !held_back.contains(&format!("{team_prefix}{}", e.path)));
    let text = crate::domain::gate::team_index_md(kept, Some(policy));
    if team_dir.is_dir() && !same_lines_as_checked_out(&team_dir.join(INDEX_FILE), &text) {
        store::write_index_unsynced(team_dir, &text)?;
    }
    Ok(())
}

/// Whether `path` holds `text` with CRLF line endings, as git checks it out under
/// `core.autocrlf=true` or a `.gitattributes` `eol=crlf`: such a file is left as it is.
/// Rewritten with LF it would hold the same blob but change size, and `git status` would show
/// it modified (git trusts a size change without reading the file) with no difference.
fn same_lines_as_checked_out(path: &Path, text: &str) -> bool {
    // Only a file is read: a symlinked MEMORY.md is replaced, never read through.
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(old) = std::fs::read(path) else {
        return false;
    };
    old.contains(&b'\r') && old.len() == text.len() + text.matches('\n').count() && {
        let mut normalised = Vec::with_capacity(old.len());
        let mut rest = old.as_slice();
        while let Some(at) = rest.windows(2).position(|w| w == b"\r\n") {
            normalised.extend_from_slice(&rest[..at]);
            normalised.push(b'\n');
            rest = &rest[at + 2..];
        }
        normalised.extend_from_slice(rest);
        normalised == text.as_bytes()
    }
}

/// Removes the temp files (`.<name>.<pid>[-n].tmp`) that an atomic write leaves when its process is
/// killed, in the team folder and its type folders, once their process is gone. They are never
/// committed (hidden), but `git status` would show them.
pub(crate) fn remove_stale_temp_files(team_dir: &Path) {
    let mut folders = vec![team_dir.to_path_buf()];
    folders.extend(
        crate::domain::memory::MemoryType::ALL
            .iter()
            .map(|t| team_dir.join(t.as_str())),
    );
    for folder in folders {
        // A type folder a teammate committed as a symlink is never followed out of the team
        // folder: what it points at is not teammem's to clean.
        if !std::fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let pid = name
                .strip_prefix('.')
                .and_then(|n| n.strip_suffix(".tmp"))
                .and_then(|n| n.rsplit_once('.'))
                .and_then(|(_, tag)| tag.split('-').next()?.parse::<u32>().ok());
            if pid.is_some_and(|pid| !lock::process_alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

pub(crate) fn stamp_of(abs: &Path) -> Result<FileStamp, OpError> {
    std::fs::symlink_metadata(abs)
        .map(|m| FileStamp::of(&m))
        .map_err(|e| OpError::io(abs, e))
}

/// When filters made libgit2 read the file itself (carriage returns, `$Id`), checks that it
/// still holds the bytes the guard checked.
fn changed_since_checked(abs: &Path, checked: Option<&[u8]>) -> Result<bool, OpError> {
    match checked {
        Some(bytes) if bytes.contains(&b'\r') || bytes.windows(3).any(|w| w == b"$Id") => {
            let now = std::fs::read(abs).map_err(|e| OpError::io(abs, e))?;
            Ok(now != bytes)
        }
        _ => Ok(false),
    }
}

fn count_changed(repo: &Repository, branch: &Branch, commit: git2::Oid) -> Result<usize, OpError> {
    let git = |e| crate::git::GitError::git("comparing the sync commit with its parent", e);
    let new_tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git)?;
    let old_tree = match branch.tip {
        Some(tip) => Some(repo.find_commit(tip).and_then(|c| c.tree()).map_err(git)?),
        None => None,
    };
    // A sync commit changes the team folder alone; libgit2 would walk every entry of both whole
    // trees (about 40 ms in a 100,000-file repository), so only its subtrees are
    // compared.
    let new_team = team_files::subtree(repo, &new_tree, TEAM_DIR)?;
    let old_team = match &old_tree {
        Some(tree) => team_files::subtree(repo, tree, TEAM_DIR)?,
        None => None,
    };
    let diff = repo
        .diff_tree_to_tree(old_team.as_ref(), new_team.as_ref(), None)
        .map_err(git)?;
    Ok(diff.deltas().len())
}

/// Who the commit is by and how it is signed, with warnings for a fallback identity and for a
/// signing program named by the repository's own config (ignored).
pub(crate) fn commit_settings(
    repo: &Repository,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<CommitSettings, OpError> {
    let configured = repo.signature().ok().and_then(|s| {
        Some(Person {
            name: s.name().ok()?.to_string(),
            email: s.email().ok()?.to_string(),
        })
    });
    let author = match &options.author {
        Some(text) => Some(parse_person(text)?),
        None => None,
    };
    let fallback = || {
        parse_person(FALLBACK_AUTHOR).unwrap_or(Person {
            name: "teammem".into(),
            email: "teammem@localhost".into(),
        })
    };
    let identity = match (author, configured) {
        (Some(author), Some(committer)) => Identity { author, committer },
        (Some(author), None) => Identity {
            committer: author.clone(),
            author,
        },
        (None, Some(person)) => Identity {
            author: person.clone(),
            committer: person,
        },
        (None, None) => {
            outcome.warnings.push(format!(
                "git has no user.name/user.email configured, so the sync commit is by \
                 {FALLBACK_AUTHOR}; set them with `git config --global user.name …` and \
                 `git config --global user.email …`, or pass --author"
            ));
            let person = fallback();
            Identity {
                author: person.clone(),
                committer: person,
            }
        }
    };
    let plan = sign::signing_plan(repo)?;
    if let Some(program) = &plan.ignored_program {
        outcome.warnings.push(format!(
            "the repository's own config names the signing program `{program}`; teammem never \
             runs programs named there, and uses the one from your global git config instead"
        ));
    }
    Ok(CommitSettings {
        identity,
        signing: plan.signing,
        index_patience: INDEX_PATIENCE,
        sign_budget: deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1)),
    })
}

/// Parses `Name <email>`.
pub fn parse_person(text: &str) -> Result<Person, OpError> {
    let bad = || {
        OpError::Usage(format!(
            "--author {text:?} is not of the form `Name <email>`"
        ))
    };
    let (name, rest) = text.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    let name = name.trim();
    if name.is_empty() || email.is_empty() || email.contains(['<', '>']) {
        return Err(bad());
    }
    Ok(Person {
        name: name.to_string(),
        email: email.to_string(),
    })
}

/// What `teammem sync --dry-run` reports: the team folder's changes a sync would commit, and
/// where it would fetch from and push to. Nothing is committed, fetched or pushed.
#[derive(Debug, Clone, Serialize)]
pub struct SyncPlan {
    /// Always true: nothing was done.
    pub dry_run: bool,
    /// Changed files under the team folder: `{path, change: added|modified|deleted}`.
    pub would_commit: Vec<PlannedChange>,
    /// The upstream a sync would fetch and push (`origin/main`), or null.
    pub upstream: Option<String>,
    /// Why a sync would stop early (same names as `skipped_reason`), or null.
    pub skipped_reason: Option<SkipReason>,
}

/// One file a sync would commit.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedChange {
    /// Path relative to the work tree.
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub change: &'static str,
}

/// Computes [`SyncPlan`] from the work tree and HEAD alone (no lock taken, no network).
pub fn dry_run(project: &Project) -> Result<SyncPlan, OpError> {
    let mut plan = SyncPlan {
        dry_run: true,
        would_commit: Vec::new(),
        upstream: None,
        skipped_reason: None,
    };
    let Some(paths) = &project.repo else {
        plan.skipped_reason = Some(SkipReason::NotAGitRepo);
        return Ok(plan);
    };
    let repo = crate::git::repo::open(paths)?;
    if let Some(memory) = crate::git::memory_branch::mode(&repo)? {
        // Branch mode: the folder against what it was last made to hold.
        let base = crate::git::memory_branch::materialised(&repo)?;
        let base_tree = match base {
            Some(m) => repo.find_tree(m.tree).ok(),
            None => None,
        };
        let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
        for change in status::folder_changes(&repo, base_tree.as_ref(), TEAM_DIR, false)? {
            if change.path == index_path || (base.is_none() && change.kind == ChangeKind::Deleted) {
                continue;
            }
            plan.would_commit.push(PlannedChange {
                path: change.path,
                change: match change.kind {
                    ChangeKind::Added => "added",
                    ChangeKind::Modified => "modified",
                    ChangeKind::Deleted => "deleted",
                },
            });
        }
        match &memory.remote {
            Some(remote) => plan.upstream = Some(format!("{remote}/{}", memory.name)),
            None => plan.skipped_reason = Some(SkipReason::NoRemote),
        }
        return Ok(plan);
    }
    let head_tree = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    for change in status::team_changes(&repo, head_tree.as_ref(), TEAM_DIR)? {
        plan.would_commit.push(PlannedChange {
            path: change.path,
            change: match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Deleted => "deleted",
            },
        });
    }
    match upstream::resolve(&repo)? {
        UpstreamLookup::Found(up) => {
            let branch = up
                .merge_ref
                .strip_prefix("refs/heads/")
                .unwrap_or(&up.merge_ref);
            plan.upstream = Some(format!("{}/{branch}", up.remote));
        }
        UpstreamLookup::NoUpstream { .. } => plan.skipped_reason = Some(SkipReason::NoUpstream),
        UpstreamLookup::Detached => plan.skipped_reason = Some(SkipReason::DetachedHead),
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_reasons_serialize_as_in_the_design() {
        let all = [
            SkipReason::NotAGitRepo,
            SkipReason::DetachedHead,
            SkipReason::OperationInProgress,
            SkipReason::SparseCheckout,
            SkipReason::UnsafePath,
            SkipReason::Locked,
            SkipReason::NoUpstream,
            SkipReason::FetchFailed,
            SkipReason::Diverged,
            SkipReason::PullBlocked,
            SkipReason::LocalAhead,
            SkipReason::PushRejected,
            SkipReason::PushFailed,
            SkipReason::RemoteBusy,
            SkipReason::Proposed,
            SkipReason::NoRemote,
            SkipReason::TooLarge,
            SkipReason::Timeout,
            SkipReason::Error,
        ];
        for reason in all {
            assert_eq!(
                serde_json::to_string(&reason).unwrap(),
                format!("\"{}\"", reason.as_str())
            );
        }
    }

    #[test]
    fn outcome_has_the_design_field_names() {
        let value = serde_json::to_value(SyncOutcome::default()).unwrap();
        let mut keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "commit",
                "committed",
                "duration_ms",
                "mode",
                "pulled",
                "pushed",
                "quarantined",
                "skipped_reason",
                "warnings"
            ]
        );
    }

    #[test]
    fn authors() {
        let p = parse_person("Ada Lovelace <ada@example.com>").unwrap();
        assert_eq!(p.name, "Ada Lovelace");
        assert_eq!(p.email, "ada@example.com");
        assert!(parse_person("nobody").is_err());
        assert!(parse_person("<a@b>").is_err());
    }
}
