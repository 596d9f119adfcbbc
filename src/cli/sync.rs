//! `teammem sync`

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::git::transport::Transport;
use crate::ops::sync::{self, SyncOptions};
use crate::ops::{EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Share the team memory: commit .qwen/team-memory/, pull what teammates pushed, push.
///
/// Commit: every changed file under .qwen/team-memory/ is scanned for secrets and validated; a file
/// that fails stays on disk untouched, is not committed and is reported ("quarantined").
/// MEMORY.md is regenerated from the clean memories, and the team folder alone is committed
/// ("chore(memory): sync team memory", trailer "Teammem-Sync: 1"): whatever you staged or
/// changed elsewhere stays as it was. No git hooks run.
///
/// Pull: the current branch's upstream is fetched; the branch moves forward only as
/// `git merge --ff-only` would. Unpublished sync commits are re-created on top of what
/// teammates pushed, memory by memory; when both changed a memory differently, both versions
/// are kept.
///
/// Push: only sync commits are pushed, with a lease, retried up to 3 times when a teammate pushed
/// in between. Your own unpushed commits are never rewritten or pushed (local-ahead, diverged).
///
/// Never prompts; the whole sync has one time budget. A failed push leaves the sync commit in
/// place and the next sync pushes it.
///
/// Exit status: 0 synced or nothing to do; 1 a file was quarantined, the sync stopped early
/// (skipped_reason: locked, no-upstream, fetch-failed, push-rejected, timeout, …) or the commit
/// could not be made; 2 usage, I/O or git error.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Do not fetch or fast-forward.
    #[arg(long)]
    no_pull: bool,
    /// Do not push.
    #[arg(long)]
    no_push: bool,
    /// The time budget for the whole sync, network included, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    timeout: u64,
    /// How fetch and push reach the remote: libgit2's own transports, or the installed git
    /// (for SSH setups libssh2 cannot read: ~/.ssh/config aliases, ProxyCommand).
    #[arg(long, value_enum, default_value = "builtin")]
    transport: TransportArg,
    /// The sync commit's author, as `Name <email>` (default: git's user.name and user.email).
    #[arg(long, value_name = "NAME <EMAIL>")]
    author: Option<String>,
    /// Print the report as JSON: committed, pulled, pushed, skipped_reason, quarantined,
    /// commit, duration_ms, warnings.
    #[arg(long)]
    json: bool,
}

/// The transport as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// libgit2's own transports (file, git, http(s), ssh).
    Builtin,
    /// The installed git CLI.
    GitCli,
}

impl From<TransportArg> for Transport {
    fn from(arg: TransportArg) -> Self {
        match arg {
            TransportArg::Builtin => Transport::Builtin,
            TransportArg::GitCli => Transport::GitCli,
        }
    }
}

impl SyncArgs {
    /// Whether this sync stays on this machine (no fetch, no push).
    pub fn is_offline(&self) -> bool {
        self.no_pull && self.no_push
    }
}

pub fn run(project: &Project, args: SyncArgs) -> Result<u8, OpError> {
    let options = SyncOptions {
        pull: !args.no_pull,
        push: !args.no_push,
        timeout: Duration::from_secs(args.timeout),
        author: args.author,
        transport: args.transport.into(),
    };
    let outcome = sync::sync(project, &options)?;
    if args.json {
        super::print_json(&outcome)?;
    } else {
        println!("{}", outcome.summary());
        for file in &outcome.quarantined {
            eprintln!("quarantined {}: {}", file.path, file.reasons.join("; "));
        }
        // The summary line already holds the reason for a skip or a refused commit.
        let shown = &outcome.warnings[usize::from(outcome.skipped_reason.is_some())..];
        let shown = match (outcome.commit_refused, shown.split_last()) {
            (true, Some((_, rest))) => rest,
            _ => shown,
        };
        for warning in shown {
            eprintln!("teammem: warning: {warning}");
        }
    }
    let trouble = outcome.skipped_reason.is_some()
        || outcome.commit_refused
        || !outcome.quarantined.is_empty();
    Ok(if trouble { EXIT_FINDINGS } else { EXIT_OK })
}
