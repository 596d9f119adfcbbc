//! The remote's ref advertisement, asked for in this process: one connection that lists the
//! remote's refs (what `git ls-remote` shows) and transfers nothing.
//!
//! A sync asks for it first, before its lock: when the remote's tip is the one this clone
//! already has, there is nothing to fetch, and a sync with nothing else to do is over without
//! starting the transfer helper or taking the lock. The same list tells a clone with no mode
//! recorded that the remote has a memory branch.
//!
//! The listing runs on a thread of its own with libgit2's own transports, credentials and
//! timeouts (`callbacks::Session`, as fetch and push use them); the caller waits for it only
//! until `wait_until` and then goes on without it: it writes nothing (no ref, no object, no
//! lock), so a listing abandoned there, or killed with the process, leaves nothing behind.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use git2::{Direction, Oid, Repository};

use super::callbacks::{Session, with_timeouts};
use super::failure::NetFailure;
use super::options::NetworkOptions;

/// The refs one remote advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertisement {
    /// The remote's name (or URL) as configured.
    pub remote: String,
    /// Every advertised ref (`refs/heads/main`, …) with its id; peeled tags left out.
    pub refs: HashMap<String, Oid>,
}

impl Advertisement {
    /// What `remote` advertises for `refname`: `None` when this advertisement is another
    /// remote's (it says nothing), `Some(None)` when the remote lacks the ref.
    pub fn tip(&self, remote: &str, refname: &str) -> Option<Option<Oid>> {
        (self.remote == remote).then(|| self.refs.get(refname).copied())
    }
}

/// Lists the refs of `remote` (a configured remote's name, or a URL), waiting at most until
/// `wait_until` (and never past the options' deadline). Never prompts; fails with a timeout
/// when the answer did not come in time.
pub fn list_refs(
    repo: &Repository,
    remote: &str,
    options: &NetworkOptions,
    wait_until: Instant,
) -> Result<Advertisement, NetFailure> {
    let what = format!("listing the refs of {remote}");
    if options.deadline.passed() {
        return Err(NetFailure::timeout(format!(
            "{what}: the time budget ran out"
        )));
    }
    let git_dir: PathBuf = repo.path().to_path_buf();
    let name = remote.to_string();
    let thread_options = options.clone();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("teammem-ls-remote".into())
        .spawn(move || {
            let listed = list_here(&git_dir, &name, &thread_options);
            let _ = tx.send(listed);
        });
    if let Err(err) = spawned {
        return Err(NetFailure::failed(format!("{what}: {err}")));
    }
    let wait = wait_until
        .min(Instant::now() + options.deadline.remaining())
        .saturating_duration_since(Instant::now());
    match rx.recv_timeout(wait) {
        Ok(listed) => listed.map(|refs| Advertisement {
            remote: remote.to_string(),
            refs,
        }),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(NetFailure::timeout(format!("{what}: no answer in time")))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(NetFailure::failed(format!("{what}: the listing stopped")))
        }
    }
}

/// The listing itself, on the listing thread: its own handle on the repository (for the
/// remote's config: URL, `insteadOf`, proxy), libgit2's connect and `ls`.
fn list_here(
    git_dir: &std::path::Path,
    remote: &str,
    options: &NetworkOptions,
) -> Result<HashMap<String, Oid>, NetFailure> {
    let what = format!("listing the refs of {remote}");
    let failed = |e: git2::Error| NetFailure::failed(format!("{what}: {}", e.message()));
    let repo = Repository::open(git_dir).map_err(failed)?;
    crate::git::user_config::follow_environment(&repo).map_err(failed)?;
    let mut found = match repo.find_remote(remote) {
        Ok(found) => Ok(found),
        Err(err) if remote.contains(['/', ':']) => repo.remote_anonymous(remote).or(Err(err)),
        Err(err) => Err(err),
    }
    .map_err(failed)?;
    let session = Session::new(options);
    let deadline = options.deadline;
    with_timeouts(&deadline, || {
        let connection = found
            .connect_auth(
                Direction::Fetch,
                Some(session.callbacks()),
                Some(Session::proxy()),
            )
            .map_err(|e| session.failure(&what, &e))?;
        let heads = connection.list().map_err(|e| session.failure(&what, &e))?;
        Ok(heads
            .iter()
            .filter(|h| h.name().starts_with("refs/") && !h.name().ends_with("^{}"))
            .map(|h| (h.name().to_string(), h.oid()))
            .collect())
    })
}
