//! Fetching the upstream branch into its remote-tracking ref, within the time budget.
//!
//! Only the one branch is fetched (`+<merge ref>:<tracking ref>`), no tags, FETCH_HEAD left
//! alone. The result says whether the remote has the branch at all: libgit2 silently fetches
//! nothing for a missing branch (git says "couldn't find remote ref"), so the tip is taken
//! from the update-tips callback with unchanged tips reported, not from the stale ref.

use std::cell::Cell;

use git2::{AutotagOption, FetchOptions, Oid, Repository};

use super::helper;
use super::recovery::ref_move::{self, RefIntent};
use super::recovery::transfer::{self, TransferNote};
use super::remote::callbacks::{Session, with_timeouts};
use super::remote::git_cli::{QUIET_FETCH, git_cli_network_command, remote_url, run_git};
use super::remote::{NetFailure, NetworkOptions, Transport};
use super::upstream::{Upstream, open_remote};

/// A libgit2 fetch that has received more than this many bytes is stopped (`too-large`).
pub const MAX_FETCH_BYTES: usize = 512 << 20;

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The remote's tip of the upstream branch, now at `upstream.tracking_ref`; `None` when
    /// the remote has no such branch (a new, empty remote).
    pub tip: Option<Oid>,
}

/// Fetches the upstream branch. Fails with `Failed` (unreachable, refused, bad credentials)
/// or `Timeout` (the budget ran out); never prompts.
pub fn fetch(
    repo: &Repository,
    upstream: &Upstream,
    options: &NetworkOptions,
) -> Result<Fetched, NetFailure> {
    if options.deadline.passed() {
        return Err(NetFailure::timeout(
            "the time budget ran out before the fetch",
        ));
    }
    let fetched = match (options.transport, &options.helper) {
        (Transport::Builtin, Some(program)) => fetch_in_helper(program, repo, upstream, options),
        (Transport::Builtin, None) => fetch_in_process(repo, upstream, options),
        (Transport::GitCli, _) => return fetch_git_cli(repo, upstream, options),
    };
    match fetched {
        // A remote folder on this machine that libgit2 cannot open (its refs in reftable, its
        // objects SHA-256: "unsupported extension"): git's own fetch reads it.
        Err(failure)
            if failure.to_string().contains("unsupported extension")
                && super::push::remote_is_local(repo, upstream, false) =>
        {
            fetch_git_cli(repo, upstream, options)
        }
        other => other,
    }
}

/// libgit2's fetch in the helper process, killed at the deadline.
fn fetch_in_helper(
    program: &std::path::Path,
    repo: &Repository,
    upstream: &Upstream,
    options: &NetworkOptions,
) -> Result<Fetched, NetFailure> {
    let what = format!("fetching {} from {}", upstream.merge_ref, upstream.remote);
    // Kept here, not in the helper: a helper killed after libgit2 rewrote the file cannot
    // put the roots back.
    let shallow = ShallowRoots::read(repo);
    let job = helper::Job::Fetch {
        upstream: upstream.into(),
    };
    let reply = helper::run(program, repo, job, options.deadline, Some(options));
    shallow.restore();
    match reply.map_err(|a| helper::net_failure(a, &what))? {
        helper::HelperReply::Fetched(tip) => Ok(Fetched {
            tip: tip
                .as_deref()
                .map(helper::parse_oid)
                .transpose()
                .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?,
        }),
        other => Err(helper::unexpected(other, &what)),
    }
}

fn refspec(upstream: &Upstream) -> String {
    format!("+{}:{}", upstream.merge_ref, upstream.tracking_ref)
}

/// libgit2's fetch in this process: bounded by its connect and read timeouts and the progress
/// callbacks only (a server trickling bytes can hold it longer).
pub(crate) fn fetch_in_process(
    repo: &Repository,
    upstream: &Upstream,
    options: &NetworkOptions,
) -> Result<Fetched, NetFailure> {
    let what = format!("fetching {} from {}", upstream.merge_ref, upstream.remote);
    let mut remote = open_remote(repo, upstream)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let deadline = options.deadline;
    let session = Session::new(options).limit_received(MAX_FETCH_BYTES);
    let tip: Cell<Option<Oid>> = Cell::new(None);
    let result = {
        let mut callbacks = session.callbacks();
        callbacks.update_tips(|name, _old, new| {
            if name == upstream.tracking_ref {
                tip.set(Some(new));
            }
            true
        });
        let proxy = Session::proxy();
        let mut fetch_options = FetchOptions::new();
        fetch_options
            .remote_callbacks(callbacks)
            .proxy_options(proxy)
            .download_tags(AutotagOption::None)
            .update_fetchhead(false)
            .report_unchanged(true);
        let spec = refspec(upstream);
        let shallow = ShallowRoots::read(repo);
        let intent = RefIntent::announce(repo, &upstream.tracking_ref, None)
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?;
        let result = with_timeouts(&deadline, || {
            remote.fetch(&[spec.as_str()], Some(&mut fetch_options), None)
        });
        drop(intent);
        shallow.restore();
        result
    };
    match result {
        Ok(()) => Ok(Fetched { tip: tip.get() }),
        Err(err) => Err(session.failure(&what, &err)),
    }
}

/// The shallow roots of a shallow clone, kept across a libgit2 fetch.
///
/// libgit2 1.9 rewrites `.git/shallow` after every fetch from the server's shallow-info,
/// which is empty unless a depth was asked for: the file disappears and the repository
/// claims history it does not have (`git fsck`: missing commits). git keeps the roots; so
/// does this, merging back whatever libgit2 wrote.
struct ShallowRoots {
    path: std::path::PathBuf,
    before: Option<String>,
}

impl ShallowRoots {
    fn read(repo: &Repository) -> Self {
        let path = repo.commondir().join("shallow");
        let before = std::fs::read_to_string(&path).ok();
        ShallowRoots { path, before }
    }

    fn restore(self) {
        let Some(before) = self.before else { return };
        let after = std::fs::read_to_string(&self.path).unwrap_or_default();
        let mut roots: Vec<&str> = before.lines().chain(after.lines()).collect();
        roots.sort_unstable();
        roots.dedup();
        let text: String = roots.iter().map(|r| format!("{r}\n")).collect();
        if text != after {
            let _ = crate::domain::store::write_atomic(&self.path, text.as_bytes());
        }
    }
}

fn fetch_git_cli(
    repo: &Repository,
    upstream: &Upstream,
    options: &NetworkOptions,
) -> Result<Fetched, NetFailure> {
    let what = format!(
        "git fetch {} from {} (git CLI)",
        upstream.merge_ref, upstream.remote
    );
    let remote = open_remote(repo, upstream)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let url = remote_url(&remote, false)?;
    let mut cmd = git_cli_network_command(repo, options)?;
    // A small pack is otherwise unpacked into loose objects as it arrives: killed at the
    // deadline, that leaves the commit without its files, and libgit2's next fetch, seeing the
    // commit, would not fetch the rest. Kept as a pack, it lands whole or not at all.
    cmd.args(["-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1"]);
    cmd.args(QUIET_FETCH).args(["--", &url, &refspec(upstream)]);
    let run = {
        let note = TransferNote::announce(repo).map_err(|e| NetFailure::failed(e.to_string()))?;
        let intent = RefIntent::announce(repo, &upstream.tracking_ref, None)
            .map_err(|e| NetFailure::failed(e.to_string()))?;
        let run = run_git(cmd, b"", &options.deadline, &what);
        if run.is_err() {
            // git was killed at the deadline: its temp pack and ref lock are ours to remove.
            let _ = ref_move::release_lock_of_dead_writer(repo);
            let _ = transfer::clean_if_dead(repo, Some(std::process::id()));
        }
        drop(intent);
        drop(note);
        run?
    };
    if !run.success {
        if run.stderr.contains("couldn't find remote ref") {
            return Ok(Fetched { tip: None });
        }
        let message = format!("{what}: {}", run.stderr.trim());
        return Err(if options.deadline.passed() {
            NetFailure::timeout(message)
        } else {
            NetFailure::failed(message)
        });
    }
    let tip = repo.refname_to_id(&upstream.tracking_ref).map_err(|e| {
        NetFailure::failed(format!(
            "{what}: git did not update {}: {}",
            upstream.tracking_ref,
            e.message()
        ))
    })?;
    Ok(Fetched { tip: Some(tip) })
}
