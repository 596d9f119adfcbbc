//! Pushing the one branch sync published, with a lease, within the time budget.
//!
//! One explicit refspec, `refs/heads/<b>:<merge ref>`, never `+`: only a fast-forward of the
//! tip fetched moments ago. The lease is checked in libgit2's push-negotiation callback, on
//! the very connection that pushes: it sees the remote tip the server advertised, and the
//! server's receive-pack then refuses the update unless its ref still holds that tip. A
//! separate `ls-remote` first would leave a gap between the check and the push.
//!
//! libgit2 does not fail a push the server rejected (a pre-receive hook, a protected branch):
//! the rejection arrives in the push-update-reference callback, which is read here. The git
//! CLI transport uses `--force-with-lease=<ref>:<tip>` and `--porcelain` for the same.

use std::cell::RefCell;

use git2::{Oid, PushOptions, Repository};

use super::helper;
use super::history;
use super::recovery::ref_move::{self, RefIntent};
use super::remote::callbacks::{Session, with_timeouts};
use super::remote::git_cli::{git_cli_network_command, remote_url, run_git};
use super::remote::{NetFailure, NetworkOptions, Transport};
use super::upstream::{Upstream, open_remote};

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushOutcome {
    /// The remote branch now points at `tip`; the remote-tracking ref too.
    Pushed {
        /// The pushed commit.
        tip: Oid,
    },
    /// The remote branch is not where the last fetch saw it: fetch again, replay, retry.
    LeaseRefused,
    /// The server refused the update (`push-rejected`).
    Rejected {
        /// The server's reason and its `remote:` lines.
        message: String,
    },
}

/// Pushes the local branch to the upstream branch if the remote still has `expected`
/// (the tip the last fetch saw; `None`: the branch must not exist yet).
pub fn push(
    repo: &Repository,
    upstream: &Upstream,
    expected: Option<Oid>,
    options: &NetworkOptions,
) -> Result<PushOutcome, NetFailure> {
    let local = repo.refname_to_id(&upstream.local_ref).map_err(|e| {
        NetFailure::failed(format!(
            "reading {} before the push: {}",
            upstream.local_ref,
            e.message()
        ))
    })?;
    if let Some(expected) = expected {
        if !history::contains(repo, local, expected).unwrap_or(false) {
            return Ok(PushOutcome::LeaseRefused);
        }
    }
    if options.deadline.passed() {
        return Err(NetFailure::timeout(
            "the time budget ran out before the push",
        ));
    }
    let outcome = match (options.transport, &options.helper) {
        // libgit2's local transport writes into the remote folder itself: the remote's
        // receive-pack and its hooks (`pre-receive`) would not run. git's push runs them.
        (Transport::Builtin, _) if remote_is_local(repo, upstream, true) => {
            push_git_cli(repo, upstream, expected, options)
        }
        (Transport::Builtin, Some(program)) => {
            push_in_helper(program, repo, upstream, expected, options)
        }
        (Transport::Builtin, None) => push_in_process(repo, upstream, expected, options),
        (Transport::GitCli, _) => push_git_cli(repo, upstream, expected, options),
    }
    .map_err(answer_lost)?;
    if outcome == (PushOutcome::Pushed { tip: local }) {
        // The remote-tracking ref follows, as after `git push`, so the next sync sees it.
        if let Ok(_intent) = RefIntent::announce(repo, &upstream.tracking_ref, Some(local)) {
            let _ = repo.reference(
                &upstream.tracking_ref,
                local,
                true,
                "teammem: update by push",
            );
        }
    }
    Ok(outcome)
}

/// What the report says of a push stopped at the deadline: the pack and the ref update may
/// already be with the server, whose receive-pack finishes them after teammem stopped waiting
/// (a slow hook, a loaded server). Whether the remote took the push is then not known, and the
/// report says so rather than that it failed; the next sync sees the remote's tip, and says
/// pushed when it holds the commits.
const ANSWER_LOST: &str = "; the push was under way, so the remote may still take it: whether it \
                           did is not known, and the next sync finds out";

fn answer_lost(failure: NetFailure) -> NetFailure {
    match failure.kind {
        super::remote::NetFailureKind::Timeout => NetFailure {
            message: format!("{}{ANSWER_LOST}", failure.message),
            ..failure
        },
        _ => failure,
    }
}

/// What the push to one of the remote's push URLs did, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPush {
    /// The URL, with any user-info replaced (`https://***@host/…`).
    pub url: String,
    /// Whether this URL now holds the pushed tip.
    pub pushed: bool,
    /// Why not, when it does not.
    pub error: Option<String>,
}

/// Pushes as `git push` does when the remote has several push URLs (`remote.<name>.pushurl`
/// set more than once, `git remote set-url --add --push`): to every one, in turn. The first —
/// the fetch URL when it is one of them, else the first configured — is the one the lease was
/// read from: its refusal of the lease is a teammate's push (fetch again and retry), and its
/// outcome is the one returned. Any other URL that refuses (a mirror that lags or moved on its
/// own, a hook) is reported in the list, never retried as contention. With one push URL this
/// is [`push`], and the list holds that one URL.
pub fn push_every_url(
    repo: &Repository,
    upstream: &Upstream,
    expected: Option<Oid>,
    options: &NetworkOptions,
) -> (Result<PushOutcome, NetFailure>, Vec<UrlPush>) {
    let urls = push_urls(repo, upstream);
    if urls.len() < 2 {
        let outcome = push(repo, upstream, expected, options);
        let url = urls
            .into_iter()
            .next()
            .unwrap_or_else(|| upstream.remote.clone());
        return (outcome.clone(), vec![url_push(&url, &outcome, true)]);
    }
    let mut first = None;
    let mut report = Vec::new();
    for (at, url) in urls.iter().enumerate() {
        let target = Upstream {
            remote: url.clone(),
            ..upstream.clone()
        };
        let outcome = push(repo, &target, expected, options);
        if at == 0 && outcome == Ok(PushOutcome::LeaseRefused) {
            // A teammate pushed to the remote the lease was read from: nothing was pushed
            // anywhere yet; the caller fetches again.
            return (outcome, Vec::new());
        }
        report.push(url_push(url, &outcome, at == 0));
        if at == 0 {
            first = Some(outcome);
        }
    }
    let first = first.unwrap_or_else(|| Err(NetFailure::failed("no push URL")));
    (first, report)
}

/// The remote's push URLs as git uses them: every `remote.<name>.pushurl`, else its URL; the
/// fetch URL first when it is one of them. Empty when the upstream names a URL, not a remote.
fn push_urls(repo: &Repository, upstream: &Upstream) -> Vec<String> {
    let Ok(remote) = repo.find_remote(&upstream.remote) else {
        return Vec::new();
    };
    let Ok(config) = repo.config() else {
        return Vec::new();
    };
    let mut urls: Vec<String> = Vec::new();
    if let Ok(mut entries) = config.multivar(&format!("remote.{}.pushurl", upstream.remote), None) {
        while let Some(Ok(entry)) = entries.next() {
            if let Ok(value) = entry.value() {
                if !value.is_empty() && !urls.iter().any(|u| u == value) {
                    urls.push(value.to_string());
                }
            }
        }
    }
    if urls.len() < 2 {
        // One push URL (or none): the remote's own, as libgit2 rewrites it.
        return remote_url(&remote, true).into_iter().collect();
    }
    if let Ok(fetch) = remote.url() {
        if let Some(at) = urls.iter().position(|u| u == fetch) {
            let primary = urls.remove(at);
            urls.insert(0, primary);
        }
    }
    urls
}

/// One URL's line of the report.
fn url_push(url: &str, outcome: &Result<PushOutcome, NetFailure>, leased: bool) -> UrlPush {
    let error = match outcome {
        Ok(PushOutcome::Pushed { .. }) => None,
        Ok(PushOutcome::LeaseRefused) if leased => {
            Some("a teammate pushed since the last fetch".to_string())
        }
        Ok(PushOutcome::LeaseRefused) => Some(
            "its branch is not where the fetch URL's is (a mirror that lags behind or moved on \
             its own); not retried — bring it level with the fetch URL"
                .to_string(),
        ),
        Ok(PushOutcome::Rejected { message }) => Some(format!("refused: {message}")),
        Err(failure) => Some(failure.to_string()),
    };
    UrlPush {
        url: super::remote::failure::redact_url_credentials(url),
        pushed: error.is_none(),
        error: error.map(|e| super::remote::failure::redact_url_credentials(&e)),
    }
}

/// Whether the upstream's push URL (or, with `push` false, its fetch URL) is a folder on this
/// machine (a path or `file://`).
pub(super) fn remote_is_local(repo: &Repository, upstream: &Upstream, push: bool) -> bool {
    let Ok(remote) = open_remote(repo, upstream) else {
        return false;
    };
    match remote_url(&remote, push) {
        Ok(url) => url.starts_with("file://") || !url.contains(':'),
        Err(_) => false,
    }
}

/// libgit2's push in the helper process, killed at the deadline.
fn push_in_helper(
    program: &std::path::Path,
    repo: &Repository,
    upstream: &Upstream,
    expected: Option<Oid>,
    options: &NetworkOptions,
) -> Result<PushOutcome, NetFailure> {
    let what = format!("pushing {} to {}", upstream.merge_ref, upstream.remote);
    let job = helper::Job::Push {
        upstream: upstream.into(),
        expected: expected.map(|o| o.to_string()),
    };
    match helper::run(program, repo, job, options.deadline, Some(options))
        .map_err(|a| helper::net_failure(a, &what))?
    {
        helper::HelperReply::Pushed(wire) => wire
            .outcome()
            .map_err(|e| NetFailure::failed(format!("{what}: {e}"))),
        other => Err(helper::unexpected(other, &what)),
    }
}

fn refspec(upstream: &Upstream) -> String {
    format!("{}:{}", upstream.local_ref, upstream.merge_ref)
}

/// libgit2's push in this process: bounded by its connect and read timeouts and the progress
/// callbacks only.
pub(crate) fn push_in_process(
    repo: &Repository,
    upstream: &Upstream,
    expected: Option<Oid>,
    options: &NetworkOptions,
) -> Result<PushOutcome, NetFailure> {
    let what = format!("pushing {} to {}", upstream.merge_ref, upstream.remote);
    let local = repo
        .refname_to_id(&upstream.local_ref)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let mut remote = open_remote(repo, upstream)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let deadline = options.deadline;
    let session = Session::new(options);
    let lease_broken = RefCell::new(false);
    let rejected: RefCell<Option<String>> = RefCell::new(None);
    let result = {
        let mut callbacks = session.callbacks();
        callbacks
            .push_negotiation(|updates| {
                let expected = expected.unwrap_or(Oid::ZERO_SHA1);
                for update in updates {
                    // `src` is the remote's current tip, `dst` the one being pushed.
                    if update.dst_refname() == Ok(upstream.merge_ref.as_str())
                        && update.src() != expected
                    {
                        *lease_broken.borrow_mut() = true;
                        return Err(git2::Error::from_str(
                            "the remote branch moved since the last fetch",
                        ));
                    }
                }
                Ok(())
            })
            .push_update_reference(|refname, status| {
                if let Some(status) = status {
                    if refname == upstream.merge_ref {
                        *rejected.borrow_mut() = Some(status.to_string());
                    }
                }
                Ok(())
            });
        let mut push_options = PushOptions::new();
        push_options
            .remote_callbacks(callbacks)
            .proxy_options(Session::proxy());
        let spec = refspec(upstream);
        // libgit2 moves the remote-tracking ref to the pushed tip once the push lands.
        let intent = RefIntent::announce(repo, &upstream.tracking_ref, Some(local))
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?;
        let result = with_timeouts(&deadline, || {
            remote.push(&[spec.as_str()], Some(&mut push_options))
        });
        drop(intent);
        result
    };
    if *lease_broken.borrow() {
        return Ok(PushOutcome::LeaseRefused);
    }
    if let Err(err) = result {
        if err.code() == git2::ErrorCode::NotFastForward {
            return Ok(PushOutcome::LeaseRefused);
        }
        return Err(session.failure(&what, &err));
    }
    if let Some(status) = rejected.into_inner() {
        let message = rejection_message(&status, &session.server_lines());
        if lost_the_race(&message) {
            return Ok(PushOutcome::LeaseRefused);
        }
        return Ok(PushOutcome::Rejected { message });
    }
    Ok(PushOutcome::Pushed { tip: local })
}

/// Whether the server refused the update because its ref moved after it advertised it: a
/// teammate's push landed between our negotiation and our update (receive-pack locks the ref
/// with the advertised value as the old one), or is landing right now (its `<ref>.lock` is
/// there: "cannot lock ref …: Unable to create '….lock': File exists", seen with 100 clones
/// pushing at once). That is the lease refusing, not a rejection: proposing it would publish
/// the commits on a proposal branch, and the next syncs would keep them with merge commits.
fn lost_the_race(status: &str) -> bool {
    (status.contains("cannot lock ref")
        && (status.contains("but expected") || status.contains("File exists")))
        || status.contains("non-fast-forward")
        || status.contains("fetch first")
}

/// The server's status for the ref, then its own lines (a hook's output), trimmed.
fn rejection_message(status: &str, server_lines: &str) -> String {
    let lines: Vec<&str> = server_lines
        .lines()
        .map(|l| l.trim_start_matches("remote:").trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        status.to_string()
    } else {
        format!("{status}: {}", lines.join(" / "))
    }
}

fn push_git_cli(
    repo: &Repository,
    upstream: &Upstream,
    expected: Option<Oid>,
    options: &NetworkOptions,
) -> Result<PushOutcome, NetFailure> {
    let what = format!(
        "git push {} to {} (git CLI)",
        upstream.merge_ref, upstream.remote
    );
    let local = repo
        .refname_to_id(&upstream.local_ref)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let remote = open_remote(repo, upstream)
        .map_err(|e| NetFailure::failed(format!("{what}: {}", e.message())))?;
    let url = remote_url(&remote, true)?;
    let lease = format!(
        "--force-with-lease={}:{}",
        upstream.merge_ref,
        expected.map(|o| o.to_string()).unwrap_or_default()
    );
    let mut cmd = git_cli_network_command(repo, options)?;
    cmd.args([
        "push",
        "--porcelain",
        "--no-verify",
        "--no-signed",
        "--no-recurse-submodules",
        "--receive-pack=git-receive-pack",
        &lease,
        "--",
        &url,
        &refspec(upstream),
    ]);
    let run = {
        let intent = RefIntent::announce(repo, &upstream.tracking_ref, Some(local))
            .map_err(|e| NetFailure::failed(e.to_string()))?;
        let run = run_git(cmd, b"", &options.deadline, &what);
        if run.is_err() {
            // git was killed at the deadline: a ref lock it left is ours to remove.
            let _ = ref_move::release_lock_of_dead_writer(repo);
        }
        drop(intent);
        run?
    };
    // Porcelain: "<flag>\t<from>:<to>\t<summary> (<reason>)"; `!` is a refusal.
    let status_line = run
        .stdout
        .lines()
        .find(|l| l.contains(&format!(":{}\t", upstream.merge_ref)));
    if let Some(line) = status_line {
        if line.starts_with('!') {
            let reason = line.rsplit('\t').next().unwrap_or(line);
            if reason.contains("stale info") || reason.contains("fetch first") {
                return Ok(PushOutcome::LeaseRefused);
            }
            if reason.contains("failed to update ref") && lost_the_race(&run.stderr) {
                return Ok(PushOutcome::LeaseRefused);
            }
            let reason = reason
                .trim_start_matches("[remote rejected] ")
                .trim_start_matches("[rejected] ")
                .trim_start_matches('(')
                .trim_end_matches(')');
            let remote_lines: String = run
                .stderr
                .lines()
                .filter(|l| l.starts_with("remote:"))
                .collect::<Vec<_>>()
                .join("\n");
            return Ok(PushOutcome::Rejected {
                message: rejection_message(reason, &remote_lines),
            });
        }
        if run.success {
            return Ok(PushOutcome::Pushed { tip: local });
        }
    }
    let message = format!("{what}: {}", run.stderr.trim());
    Err(if options.deadline.passed() {
        NetFailure::timeout(message)
    } else {
        NetFailure::failed(message)
    })
}
