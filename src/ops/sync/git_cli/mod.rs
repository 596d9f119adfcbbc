//! Current-branch sync for a repository libgit2 cannot open — refs in reftable, objects in
//! SHA-256 — through the installed git alone (`git/cli_repo/`), with the libgit2 path's steps
//! and guarantees: preflight, the sync lock, the gated commit of the team folder, fetch,
//! fast-forward (`git read-tree -m -u`, refusing what `git merge --ff-only` refuses, and
//! ignored files too), the unpublished sync commits re-created on a moved remote memory by
//! memory, and a push with a lease to every push URL. Branch mode through git is `branch.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::domain::memory::MemoryFile;
use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::StoreError;
use crate::git::cli_repo::transfer::{CliPush, CliUpstream};
use crate::git::cli_repo::{CliRepo, TreeEntry};
use crate::git::offline;
use crate::git::preflight::{self, Blocker};
use crate::git::recovery::lock::SyncLock;
use crate::git::remote::{Deadline, NetFailure, NetworkOptions};
use crate::git::sign::Signing;
use crate::ops::{OpError, Project};

use super::{PushedUrl, SkipReason, SyncOptions, SyncOutcome};

pub(crate) mod branch;
pub(crate) mod commit;

use commit::{Committed, commit_folder, commit_tree};

/// Where the sync commit stays when it could not be published.
const LEFT: &str = "; the sync commit stays on your branch and the next sync pushes it";

/// Runs a current-branch sync through the git CLI (see the module doc). A git run stopped at
/// the deadline is `timeout`, as on the libgit2 path.
pub(super) fn run(
    project: &Project,
    cli: &CliRepo,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    match run_within(project, cli, options, Deadline::at(deadline), outcome) {
        Err(OpError::Git(crate::git::GitError::OutOfTime { what })) => {
            outcome.skip(
                SkipReason::Timeout,
                format!(
                    "the time budget ran out while {what}; git was stopped, and the next sync \
                     goes on (a sync commit already made stays on your branch)"
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
    options: &SyncOptions,
    budget: Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    if let Some(operation) = preflight::operation_in_files(&cli.paths.git_dir) {
        let blocker = Blocker::OperationInProgress(operation);
        outcome.skip(SkipReason::OperationInProgress, blocker.to_string());
        return Ok(());
    }
    let Some(branch_ref) = cli.head_branch(&budget)? else {
        outcome.skip(SkipReason::DetachedHead, Blocker::DetachedHead.to_string());
        return Ok(());
    };
    if let Some(path) = skipped_team_entry(cli, &budget)? {
        let blocker = Blocker::SparseCheckout(path);
        outcome.skip(SkipReason::SparseCheckout, blocker.to_string());
        return Ok(());
    }
    match project.check_scope_safe(ScopeKind::Team) {
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
    // What a sync on this path killed before this one left: git's locks, a half-done pull.
    let recovered = cli.recover_interrupted(TEAM_DIR, &budget)?;
    outcome.warnings.extend(recovered);
    if !index_lock_released(cli) {
        outcome.skip(
            SkipReason::Locked,
            "another git process holds .git/index.lock; nothing was changed (it is not removed: \
             if no git command is running, delete it yourself)",
        );
        return Ok(());
    }
    let tip = cli.resolve(&branch_ref, &budget)?;
    commit_folder(
        project,
        cli,
        &branch_ref,
        tip.as_deref(),
        tip.as_deref(),
        tip.as_deref(),
        options,
        &budget,
        outcome,
    )?;
    // After the user's own commit: only what the pull brings is named.
    let before = cli.resolve(&branch_ref, &budget)?;
    if (options.pull || options.push) && outcome.skipped_reason.is_none() {
        share(project, cli, &branch_ref, options, &budget, outcome)?;
    }
    if let Err(err) = name_arrived_entries(
        project,
        cli,
        &branch_ref,
        before.as_deref(),
        &budget,
        outcome,
    ) {
        // As on the libgit2 path: everything is done by now.
        outcome.warnings.push(format!(
            "could not list the entries this pull brought in that sync leaves alone: {err}"
        ));
    }
    Ok(())
}

/// The team folder entries the pull brought in that teammem leaves alone, named in
/// `withheld` as the libgit2 path names them (`arrived.rs`): a symlink pointing outside the
/// folder or nowhere, a gitlink, a folder where `MEMORY.md` belongs, a name or path too long
/// for teammem's writes.
fn name_arrived_entries(
    project: &Project,
    cli: &CliRepo,
    branch_ref: &str,
    before: Option<&str>,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    use crate::git::tree_entries::{MAX_NAME_BYTES, MAX_PATH_BYTES};
    let after = cli.resolve(branch_ref, budget)?;
    let Some(after) = after.filter(|tip| Some(tip.as_str()) != before) else {
        return Ok(());
    };
    let old = match before {
        Some(before) => cli.tree_entries(before, TEAM_DIR, budget)?,
        None => BTreeMap::new(),
    };
    let team_dir = project.git_root()?.join(TEAM_DIR);
    let root = std::fs::canonicalize(&team_dir).ok();
    let prefix = format!("{TEAM_DIR}/");
    let index_folder = format!("{prefix}{INDEX_FILE}/");
    let mut named = BTreeSet::new();
    for (path, entry) in cli.tree_entries(&after, TEAM_DIR, budget)? {
        if old.get(&path) == Some(&entry) {
            continue;
        }
        let rel = path.strip_prefix(&prefix).unwrap_or(&path);
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let (shown, why) = if path.starts_with(&index_folder) {
            (
                format!("{prefix}{INDEX_FILE}"),
                "a folder where the generated MEMORY.md belongs",
            )
        } else if entry.mode == "120000" {
            match super::arrived::symlink_reason(&team_dir.join(rel), root.as_deref()) {
                Some(why) => (path.clone(), why),
                // Inside the folder: read as the memory it points at, which is gated.
                None => continue,
            }
        } else if entry.mode == "160000" {
            (path.clone(), "a gitlink (submodule), not a memory")
        } else if name.len() > MAX_NAME_BYTES {
            (
                path.clone(),
                "a name too long for the file system (with teammem's temporary suffix)",
            )
        } else if rel.len() > MAX_PATH_BYTES {
            (path.clone(), "a path too long for the file system")
        } else {
            continue;
        };
        if named.insert(shown.clone()) {
            outcome
                .withheld
                .push(crate::ops::quarantine::Quarantined::new(
                    &shown,
                    vec![format!("{why} — {}", super::arrived::LEFT_ALONE)],
                ));
        }
    }
    Ok(())
}

/// A team entry a sparse checkout leaves out of the work tree (`git ls-files -t`, `S`), or a
/// sparse-index folder holding the team folder.
fn skipped_team_entry(cli: &CliRepo, budget: &Deadline) -> Result<Option<String>, OpError> {
    let sparse = cli
        .config("core.sparsecheckout", budget)?
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !sparse {
        return Ok(None);
    }
    let listed = cli.run(
        &["ls-files", "-t", "-z", "--sparse"],
        budget,
        "listing skipped index entries (git ls-files)",
    )?;
    let prefix = format!("{TEAM_DIR}/");
    Ok(listed
        .split('\0')
        .filter_map(|r| r.strip_prefix("S "))
        .find(|path| {
            let folder = path.trim_end_matches('/');
            path.starts_with(&prefix)
                || (prefix.starts_with(folder)
                    && prefix.as_bytes().get(folder.len()) == Some(&b'/'))
        })
        .map(str::to_string))
}

/// Waits up to a second for another git process's `index.lock`.
fn index_lock_released(cli: &CliRepo) -> bool {
    let lock = cli.paths.git_dir.join("index.lock");
    let started = Instant::now();
    while lock.exists() {
        if started.elapsed() >= super::INDEX_PATIENCE {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    true
}

/// Fetch, land, push with a lease — again when a teammate pushed in between, as long as the
/// budget allows (the libgit2 path's rounds, `push_rounds`).
fn share(
    project: &Project,
    cli: &CliRepo,
    branch_ref: &str,
    options: &SyncOptions,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let Some(up) = cli.upstream(branch_ref, budget)? else {
        let branch = branch_ref.strip_prefix("refs/heads/").unwrap_or(branch_ref);
        outcome.skip(
            SkipReason::NoUpstream,
            format!(
                "branch {branch} has no upstream, so nothing is fetched or pushed (team memory \
                 is committed on this branch only); set one with `git push -u <remote> {branch}`"
            ),
        );
        return Ok(());
    };
    let mut net = NetworkOptions::from_process(budget.remaining(), options.transport);
    net.deadline = *budget;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let round_started = Instant::now();
        // `None`: the remote has no such branch yet; the push creates it (lease: absent).
        let remote_tip = if options.pull {
            // The offline note, kept as the libgit2 path keeps it (`fetch_round`): session
            // starts skip the network for a while after a remote out of reach.
            match cli.fetch(&up, &net) {
                Ok(tip) => {
                    if attempt == 1 {
                        offline::forget_failure(&cli.paths.git_dir);
                    }
                    tip
                }
                Err(failure) => {
                    offline::remember_failure(&cli.paths.git_dir, &failure.message);
                    super::network_skip(outcome, &failure, SkipReason::FetchFailed, LEFT);
                    return Ok(());
                }
            }
        } else {
            cli.resolve(&up.tracking_ref, budget)?
        };
        let landed = land(
            project,
            cli,
            &up,
            remote_tip.as_deref(),
            options,
            budget,
            outcome,
        )?;
        if !landed || !options.push {
            return Ok(());
        }
        let PushRound {
            refused,
            lost_race,
            failure,
        } = push_to_every_url(cli, &up, remote_tip.as_deref(), &net, outcome)?;
        if refused.is_empty() {
            outcome.pushed = true;
            return Ok(());
        }
        if outcome.push_urls.iter().any(|u| u.pushed) {
            outcome.skip_push_partial(&up.remote, &refused);
            return Ok(());
        }
        if let Some(failure) = failure {
            super::network_skip(outcome, &failure, SkipReason::PushFailed, LEFT);
            return Ok(());
        }
        if lost_race && options.pull {
            if !super::another_round(attempt, round_started, &net, LEFT, outcome) {
                return Ok(());
            }
            continue;
        }
        let reason = if lost_race {
            SkipReason::RemoteBusy
        } else {
            SkipReason::PushRejected
        };
        outcome.skip(
            reason,
            format!("the remote refused the push: {}{LEFT}", refused.join("; ")),
        );
        return Ok(());
    }
}

/// What one push to every push URL of a remote came to.
struct PushRound {
    /// The URLs that refused, each `url (why)`.
    refused: Vec<String>,
    /// A URL refused the lease: a teammate pushed in between.
    lost_race: bool,
    /// The first network failure, if any.
    failure: Option<NetFailure>,
}

/// Pushes `up` to every push URL of its remote, as git does, with a lease on `expected`
/// (`None`: the branch must not exist yet); one result per URL in `outcome.push_urls`. Both
/// sync modes of this path push through it.
fn push_to_every_url(
    cli: &CliRepo,
    up: &CliUpstream,
    expected: Option<&str>,
    net: &NetworkOptions,
    outcome: &mut SyncOutcome,
) -> Result<PushRound, OpError> {
    let mut round = PushRound {
        refused: Vec::new(),
        lost_race: false,
        failure: None,
    };
    let mut urls = Vec::new();
    for url in cli.remote_urls(&up.remote, true, &net.deadline)? {
        let shown = crate::git::remote::failure::redact_url_credentials(&url);
        let (pushed, error) = match cli.push(up, &url, expected, net) {
            Ok(CliPush::Pushed) => (true, None),
            Ok(CliPush::LeaseRefused) => {
                round.lost_race = true;
                (false, Some("the remote branch moved (lease)".to_string()))
            }
            Ok(CliPush::Rejected(message)) => (false, Some(message)),
            Err(net_failure) => {
                let message = net_failure.message.clone();
                round.failure.get_or_insert(net_failure);
                (false, Some(message))
            }
        };
        if !pushed {
            round
                .refused
                .push(format!("{shown} ({})", error.as_deref().unwrap_or("")));
        }
        urls.push(PushedUrl {
            url: shown,
            pushed,
            error,
        });
    }
    outcome.push_urls = urls;
    Ok(round)
}

/// Lands the fetched `remote_tip` on the branch: a fast-forward when only the remote moved,
/// the unpublished sync commits re-created on top of it when both did. Returns whether the
/// branch now holds sync commits the remote lacks (the push may go on).
fn land(
    project: &Project,
    cli: &CliRepo,
    up: &CliUpstream,
    remote_tip: Option<&str>,
    options: &SyncOptions,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let Some(local) = cli.resolve(&up.local_ref, budget)? else {
        return Ok(false);
    };
    let Some(remote_tip) = remote_tip else {
        // A remote without the branch yet: as on the libgit2 path (`replay::classify` with no
        // upstream), the push creates it when every commit of the branch is a sync commit;
        // the user's own commits are never published.
        let user_commits = user_commits(cli, None, &local, budget)?;
        if user_commits.is_empty() {
            return Ok(true);
        }
        outcome.skip(
            SkipReason::LocalAhead,
            local_ahead(&user_commits, branch_name(up)),
        );
        return Ok(false);
    };
    if local == remote_tip {
        return Ok(false);
    }
    if options.pull && refuse_unfit(cli, &local, remote_tip, budget, outcome)? {
        return Ok(false);
    }
    if cli.is_ancestor(&local, remote_tip, budget)? {
        if options.pull {
            checked_out(cli, &up.local_ref, &local, remote_tip, budget, outcome)?;
        }
        return Ok(false);
    }
    let user_commits = user_commits(cli, Some(remote_tip), &local, budget)?;
    let ahead = cli.is_ancestor(remote_tip, &local, budget)?;
    let branch = branch_name(up);
    if !user_commits.is_empty() {
        let (reason, what) = if ahead {
            (SkipReason::LocalAhead, local_ahead(&user_commits, branch))
        } else {
            (
                SkipReason::Diverged,
                format!(
                    "{branch} and its upstream have both moved and your own commit{} ({}) {} \
                     not pushed; sync never rewrites your commits: pull (`git pull --rebase`), \
                     then sync again; the team memory is committed here",
                    plural(user_commits.len()),
                    short_list(&user_commits),
                    if user_commits.len() == 1 { "is" } else { "are" },
                ),
            )
        };
        outcome.skip(reason, what);
        return Ok(false);
    }
    if ahead {
        return Ok(true);
    }
    if !options.pull {
        outcome.skip(
            SkipReason::PushFailed,
            "the remote branch has commits this branch lacks and --no-pull was given; sync \
             without --no-pull to bring them in first",
        );
        return Ok(false);
    }
    replay(
        project, cli, up, &local, remote_tip, options, budget, outcome,
    )
}

/// Up to ten of the user's own commits (not sync commits) on `local` and not on `remote_tip`
/// (all of `local`'s history when the remote has no branch), newest first — the libgit2
/// path's list (`replay::classify`).
fn user_commits(
    cli: &CliRepo,
    remote_tip: Option<&str>,
    local: &str,
    budget: &Deadline,
) -> Result<Vec<String>, OpError> {
    const LISTED: usize = 10;
    let mut found = Vec::new();
    for commit in cli.commits_not_in(remote_tip, local, budget)? {
        if !cli.is_sync_commit(&commit, TEAM_DIR, budget)? {
            found.push(commit);
            if found.len() >= LISTED {
                break;
            }
        }
    }
    Ok(found)
}

/// `local-ahead`'s message, as the libgit2 path words it.
fn local_ahead(user_commits: &[String], branch: &str) -> String {
    format!(
        "your own commit{} ({}) on {branch} {} not pushed yet, and sync never publishes your \
         commits: the team memory is committed here and goes out with your next `git push`",
        plural(user_commits.len()),
        short_list(user_commits),
        if user_commits.len() == 1 { "is" } else { "are" },
    )
}

fn branch_name(up: &CliUpstream) -> &str {
    up.local_ref
        .strip_prefix("refs/heads/")
        .unwrap_or(&up.local_ref)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The first three short ids, `…` when there are more.
fn short_list(ids: &[String]) -> String {
    let shown: Vec<&str> = ids
        .iter()
        .take(3)
        .map(|id| &id[..7.min(id.len())])
        .collect();
    let more = if ids.len() > 3 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

/// Refuses to land a fetched tip that brings a team file over the memory size limit (never
/// checked out, merged or read whole: `too-large`), or one no checkout can write into this
/// work tree (`arrived::unwritable`: `unwritable`), naming the file. Returns whether refused.
fn refuse_unfit(
    cli: &CliRepo,
    local: &str,
    remote_tip: &str,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let changed = cli.changed_files(Some(local), remote_tip, TEAM_DIR, budget)?;
    let limit = crate::domain::memory::MAX_FILE_BYTES;
    let limit_bytes = u64::try_from(limit).unwrap_or(u64::MAX);
    let Some((path, size)) = cli.oversized_among(&changed, limit_bytes, budget)? else {
        let names = crate::git::tree_entries::name_check_repository()?;
        let mut check = crate::git::tree_entries::NameCheck::new(&names)?;
        for (path, _) in &changed {
            if let Some(why) = super::arrived::unwritable(&cli.paths.workdir, path, &mut check) {
                super::arrived::refuse_unwritable(path, &why, remote_tip, outcome);
                return Ok(true);
            }
        }
        return Ok(false);
    };
    outcome.skip(
        SkipReason::TooLarge,
        format!(
            "the fetched {} brings {path} of {size} bytes, over the {} KiB a team memory file \
             may have; nothing was pulled (it is never checked out or read) — ask its author to \
             remove it from the branch; your team change is committed here",
            &remote_tip[..12.min(remote_tip.len())],
            limit / 1024
        ),
    );
    Ok(true)
}

/// Moves the branch and its files from `from` to `to`; records what it did. Returns whether
/// the branch moved.
fn checked_out(
    cli: &CliRepo,
    branch_ref: &str,
    from: &str,
    to: &str,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    match cli.check_out(branch_ref, from, to, budget)? {
        Ok(true) => {
            outcome.pulled = true;
            Ok(true)
        }
        Ok(false) => {
            outcome.skip(
                SkipReason::PullBlocked,
                "the branch moved while sync ran; nothing was changed — sync again",
            );
            Ok(false)
        }
        Err(paths) => {
            outcome.skip_pull_blocked(&paths);
            Ok(false)
        }
    }
}

/// Re-creates the unpublished sync commits (`remote_tip..local`, all sync commits) as one on
/// top of `remote_tip`, memory by memory as the libgit2 path does (`git/replay.rs`): a side
/// that did not change a memory takes the other's; deleted on one side and changed on the
/// other keeps the change; two different changes keep theirs at the path and ours beside it.
/// `MEMORY.md` is regenerated from the result and checked out with it.
#[allow(clippy::too_many_arguments)]
fn replay(
    project: &Project,
    cli: &CliRepo,
    up: &CliUpstream,
    local: &str,
    remote_tip: &str,
    options: &SyncOptions,
    budget: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    // As the libgit2 path (`replay::replay_sync_commits`): with signing on, no replayed commit.
    if commit::signing_plan(cli, &mut SyncOutcome::default())?.signing != Signing::Off {
        outcome.skip(
            SkipReason::Diverged,
            "commit.gpgsign is on and teammem cannot sign the replayed sync commit; run `git \
             pull --rebase` yourself, or sync again after the next pull",
        );
        return Ok(false);
    }
    // None in common (unrelated histories, or a shallow clone's cut): every memory is new.
    let mut merge_base = cli.command();
    merge_base.args(["merge-base", local, remote_tip]);
    let found = cli.try_run(
        merge_base,
        b"",
        budget,
        "finding the common commit (git merge-base)",
    )?;
    let base_files = match found.stdout.trim() {
        base if found.success && !base.is_empty() => cli.tree_entries(base, TEAM_DIR, budget)?,
        _ => BTreeMap::new(),
    };
    let ours = cli.tree_entries(local, TEAM_DIR, budget)?;
    let theirs = cli.tree_entries(remote_tip, TEAM_DIR, budget)?;
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let short = &local[..7.min(local.len())];
    let team_prefix = format!("{TEAM_DIR}/");
    let mut updates: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
    let mut kept = Vec::new();
    let mut merged = Vec::new();
    let paths: BTreeSet<&String> = base_files
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    for path in paths {
        if *path == index_path {
            continue;
        }
        let (b, o, t) = (base_files.get(path), ours.get(path), theirs.get(path));
        let chosen = match (o, t) {
            _ if o == t || o == b => t.cloned(),
            _ if t == b => o.cloned(),
            (None, Some(t)) => Some(t.clone()),
            (Some(o), None) => Some(o.clone()),
            (Some(o), Some(t)) => match text_merged(cli, path, b, o, t, budget)? {
                Some(id) => {
                    merged.push(path.clone());
                    Some(TreeEntry {
                        mode: t.mode.clone(),
                        id,
                    })
                }
                None => {
                    let rel = path.strip_prefix(&team_prefix).unwrap_or(path);
                    let mut beside = format!(
                        "{team_prefix}{}",
                        crate::domain::conflict::copy_path(rel, short)
                    );
                    // Theirs already keeps ours beside the memory (a sync killed after it
                    // made the copy): one edit gives one copy.
                    if theirs.get(&beside) != Some(o) {
                        let taken = [&base_files, &ours, &theirs]
                            .iter()
                            .any(|side| side.contains_key(&beside))
                            || updates.contains_key(&beside);
                        if taken {
                            beside = format!(
                                "{team_prefix}{}",
                                crate::domain::conflict::plain_copy_path(rel, short)
                            );
                        }
                        updates.insert(beside.clone(), Some(o.clone()));
                        kept.push((path.clone(), beside));
                    }
                    Some(t.clone())
                }
            },
            (None, None) => None,
        };
        if chosen.as_ref() != t {
            updates.insert(path.clone(), chosen);
        }
    }
    let tree = cli.write_tree(Some(remote_tip), &updates, budget)?;
    let replayed = commit_tree(cli, &tree, Some(remote_tip), options, budget, outcome)?;
    if !checked_out(cli, &up.local_ref, local, &replayed, budget, outcome)? {
        return Ok(false);
    }
    // The checked-out MEMORY.md is the teammate's: regenerated here, it amends the commit.
    let (was_committed, files_committed) = (outcome.committed, outcome.files_committed);
    let amended = commit_folder(
        project,
        cli,
        &up.local_ref,
        Some(&replayed),
        Some(remote_tip),
        Some(&replayed),
        options,
        budget,
        outcome,
    )?;
    outcome.committed = was_committed;
    outcome.files_committed = files_committed;
    outcome.commit = match amended {
        Committed::Made(commit) => Some(commit),
        Committed::Nothing => Some(replayed),
        Committed::Refused => return Ok(false),
    };
    if !was_committed {
        outcome.commit = None;
    }
    if !merged.is_empty() {
        outcome.warnings.push(format!(
            "a teammate and you both changed {}: git merged the changes line by line",
            merged.join(", ")
        ));
    }
    for (path, beside) in kept {
        outcome.warnings.push(format!(
            "a teammate and you both changed {path} differently: theirs is kept at that path, \
             yours beside it as {beside}; keep one and delete the other"
        ));
    }
    Ok(true)
}

/// Two different changes to one memory, merged by git's text merge when it merges them
/// cleanly into a valid memory (the libgit2 path's rule, `git/replay.rs`): the merged blob.
fn text_merged(
    cli: &CliRepo,
    path: &str,
    base: Option<&TreeEntry>,
    ours: &TreeEntry,
    theirs: &TreeEntry,
    budget: &Deadline,
) -> Result<Option<String>, OpError> {
    let Some(merged) =
        cli.merge_blobs(base.map(|b| b.id.as_str()), &ours.id, &theirs.id, budget)?
    else {
        return Ok(None);
    };
    if path.ends_with(".md") {
        let valid = |bytes: &[u8]| MemoryFile::parse(path, bytes).is_ok();
        if valid(&cli.blob(&ours.id, budget)?)
            && valid(&cli.blob(&theirs.id, budget)?)
            && !valid(&merged)
        {
            return Ok(None);
        }
    }
    Ok(Some(cli.store_raw(&merged, budget)?))
}
