//! libgit2's side of a network operation: the callbacks fetch and push share, and libgit2's
//! process-wide connect and read timeouts.
//!
//! libgit2 has no per-operation timeout: its connect and read timeouts are process-wide
//! settings (`GIT_OPT_SET_SERVER_CONNECT_TIMEOUT` / `GIT_OPT_SET_SERVER_TIMEOUT`). They are set
//! from the remaining budget under one lock, held for the whole network operation, so two
//! operations in one process never see each other's values. Progress callbacks abort a
//! transfer that is still running when the deadline passes.

use std::cell::{Cell, RefCell};

use git2::{ProxyOptions, RemoteCallbacks};

use super::credentials::CredentialPicker;
use super::deadline::Deadline;
use super::failure::{NetFailure, NetFailureKind};
use super::options::NetworkOptions;

/// Runs a libgit2 network operation with connect and read timeouts set from the budget.
pub(crate) fn with_timeouts<T>(deadline: &Deadline, operation: impl FnOnce() -> T) -> T {
    let millis = deadline.remaining().as_millis().clamp(1, i32::MAX as u128) as i32;
    crate::sys::with_libgit2_timeouts(millis, operation)
}

/// At most this many bytes of the server's messages are kept for the report.
const MESSAGE_LIMIT: usize = 4096;

/// What the callbacks of one libgit2 fetch or push share: the credentials offered so far, the
/// deadline, a bound on what may be received, and the server's messages. Fetch and push build
/// their callbacks here and add only what is theirs (update tips; the lease and the verdict).
pub(crate) struct Session<'a> {
    picker: RefCell<CredentialPicker<'a>>,
    deadline: Deadline,
    max_received: Option<usize>,
    grew_too_big: Cell<bool>,
    server_lines: RefCell<String>,
}

impl<'a> Session<'a> {
    /// A session for one operation with `options`.
    pub(crate) fn new(options: &'a NetworkOptions) -> Self {
        Session {
            picker: RefCell::new(CredentialPicker::new(
                &options.credentials,
                &options.git,
                options.deadline,
            )),
            deadline: options.deadline,
            max_received: None,
            grew_too_big: Cell::new(false),
            server_lines: RefCell::new(String::new()),
        }
    }

    /// Stops the transfer once more than `bytes` have been received.
    pub(crate) fn limit_received(mut self, bytes: usize) -> Self {
        self.max_received = Some(bytes);
        self
    }

    /// The callbacks every operation needs: each credential source offered once, the transfer
    /// stopped at the deadline or past the size bound, the server's lines kept.
    pub(crate) fn callbacks(&'a self) -> RemoteCallbacks<'a> {
        let mut callbacks = RemoteCallbacks::new();
        callbacks
            .credentials(|url, user, allowed| self.picker.borrow_mut().next(url, user, allowed))
            .transfer_progress(|stats| {
                if self
                    .max_received
                    .is_some_and(|max| stats.received_bytes() > max)
                {
                    self.grew_too_big.set(true);
                    return false;
                }
                !self.deadline.passed()
            })
            .sideband_progress(|bytes| {
                let mut lines = self.server_lines.borrow_mut();
                if lines.len() < MESSAGE_LIMIT {
                    lines.push_str(&String::from_utf8_lossy(bytes));
                }
                !self.deadline.passed()
            });
        callbacks
    }

    /// Proxy settings as git's: `http.proxy`, then the environment.
    pub(crate) fn proxy() -> ProxyOptions<'static> {
        let mut proxy = ProxyOptions::new();
        proxy.auto();
        proxy
    }

    /// What the server said on its side band (a hook's output), at most [`MESSAGE_LIMIT`].
    pub(crate) fn server_lines(&self) -> String {
        self.server_lines.borrow().clone()
    }

    /// The failure for a libgit2 error of this session: too large, refused credentials, a
    /// timeout or another failure.
    pub(crate) fn failure(&self, what: &str, err: &git2::Error) -> NetFailure {
        if self.grew_too_big.get() {
            let mib = self.max_received.unwrap_or(0) >> 20;
            return NetFailure {
                kind: NetFailureKind::TooLarge,
                message: format!(
                    "{what}: stopped after {mib} MiB — the fetch is over the {mib} MiB a sync may \
                     bring; fetch it once with git (`git fetch`), then sync"
                ),
            };
        }
        if self.picker.borrow().exhausted {
            return NetFailure::failed(format!(
                "{what}: authentication failed; every available credential was refused ({})",
                err.message()
            ));
        }
        NetFailure::from_git(what, err, &self.deadline)
    }
}
