//! What a sync is asked and what it reports: its options, the reasons it skips, the outcome
//! (with the push to each URL) and the outcome's one-line summary.

use std::time::Duration;

use serde::Serialize;

use crate::git::push;
use crate::git::remote::Transport;
use crate::ops::quarantine::Quarantined;

use super::DEFAULT_TIMEOUT;

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
    /// Current-branch mode: the fetched commits bring a team entry no checkout can write here
    /// (a name or path longer than the file system takes); nothing is pulled.
    Unwritable,
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
            SkipReason::Unwritable => "unwritable",
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
    /// Branch mode's record commit could not be signed with `commit.gpgSign` on: nothing is
    /// recorded (never an unsigned commit instead); the warning gives the reason and the fix.
    /// The memory branch `branch` refused the push (`refusal`), and the commits are now on the
    /// proposal branch `name` of `remote`; `taken` says, one clause each, which proposal branches
    /// were passed over and why (commits this clone did not make, a refusal of the remote).
    pub(crate) fn proposed(
        &mut self,
        branch: &str,
        remote: &str,
        name: &str,
        refusal: &str,
        taken: &[String],
    ) {
        self.proposal = Some(name.to_string());
        if !taken.is_empty() {
            self.warnings.push(format!(
                "{}; your memory is proposed on {name} instead",
                taken.join("; ")
            ));
        }
        self.skip(
            SkipReason::Proposed,
            format!(
                "the remote refused the push to {branch} ({refusal}), so your memory is proposed \
                 on {name} for a maintainer to merge; see it with `teammem review \
                 {remote}/{branch}..{remote}/{name}`; once merged, the next sync takes it in"
            ),
        );
    }

    /// The memory branch `branch` refused the push, and no proposal name of the user could be
    /// used (`taken`, one clause each saying why): nothing was proposed.
    pub(crate) fn nothing_proposed(&mut self, branch: &str, refusal: &str, taken: &[String]) {
        self.skip(
            SkipReason::PushRejected,
            format!(
                "the remote refused the push to {branch} ({refusal}), and no proposal branch \
                 name of yours could be used ({}), so nothing was proposed; the commits stay on \
                 the local memory branch",
                taken.join("; ")
            ),
        );
    }

    pub(crate) fn record_not_signed(&mut self, why: &str) {
        self.commit_refused = true;
        self.warnings.push(format!(
            "commit.gpgsign is on but the memory-branch commit could not be signed ({why}); \
             nothing was recorded{}",
            super::SIGNING_FIX
        ));
    }
}

impl SyncOutcome {
    /// Stops the sync with a reason and the message explaining it.
    pub fn skip(&mut self, reason: SkipReason, why: impl Into<String>) {
        self.skipped_reason = Some(reason);
        self.warnings.insert(0, why.into());
    }

    /// Stops the sync as `push-partial`: some of `remote`'s push URLs took the push and the
    /// `refused` ones (each with its answer) did not.
    pub fn skip_push_partial(&mut self, remote: &str, refused: &[String]) {
        let why = format!(
            "pushed to {} of {} push URLs of {remote}; not to {}",
            self.push_urls.len() - refused.len(),
            self.push_urls.len(),
            refused.join("; ")
        );
        self.skip(SkipReason::PushPartial, why);
    }

    /// Stops the sync as `pull-blocked`: `paths` (changed locally, or untracked or ignored)
    /// stand in the way of the pull.
    pub fn skip_pull_blocked(&mut self, paths: &[String]) {
        let why = format!(
            "local changes, or files git does not track (untracked or ignored), are in the way \
             of the pull: {}; nothing was changed — commit or stash them, or move them away, \
             then sync again",
            paths.join(", ")
        );
        self.skip(SkipReason::PullBlocked, why);
    }

    /// Stops the sync as `staged-removal`: `removed` are staged for removal but still on disk.
    pub fn skip_staged_removal<S: AsRef<str>>(&mut self, removed: &[S]) {
        let removed: Vec<&str> = removed.iter().map(AsRef::as_ref).collect();
        let why = format!(
            "{} staged for removal (`git rm --cached`) but still on disk, and a sync would \
             publish it again; to unpublish it, delete the file (`teammem forget`, or `rm`) \
             and sync; to keep it, `git restore --staged {}`",
            removed.join(", "),
            removed.join(" ")
        );
        self.skip(SkipReason::StagedRemoval, why);
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
