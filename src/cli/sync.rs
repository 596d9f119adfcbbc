//! `teammem sync`

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::git::remote::Transport;
use crate::ops::sync::{self, SyncOptions};
use crate::ops::{EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, OpError, Project};

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
/// Push: only sync commits are pushed, with a lease, retried with jittered backoff within the
/// budget when a teammate pushed in between (remote-busy when every try lost the race). Your
/// own unpushed commits are never rewritten or pushed (local-ahead, diverged).
///
/// Never prompts; the whole sync has one time budget. The team change is committed even when
/// it cannot be published (no upstream, your own commits unpushed, offline, push refused): the
/// sync commit stays on your branch and the next sync pushes it.
///
/// Branch mode (`teammem init --branch`, or a remote with a team-memory branch): the same three
/// steps on the memory branch alone — the folder's changes recorded there, only that branch
/// fetched, merged memory by memory and pushed with a lease (to team-memory-proposals/<user>
/// when the remote refuses: skipped_reason proposed), then written into the folder. HEAD, the
/// index and every file outside the folder are left alone, whatever state the work tree is in.
///
/// Exit status: 0 synced or nothing to do; 1 a file was quarantined, the sync stopped early
/// (skipped_reason: locked, no-upstream, fetch-failed, push-rejected, remote-busy, timeout, …)
/// or the commit could not be made; 2 not inside a git repository (skipped_reason:
/// not-a-git-repo), a usage, I/O or git error (skipped_reason: error).
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Do not fetch or fast-forward.
    #[arg(long)]
    no_pull: bool,
    /// Do not push.
    #[arg(long)]
    no_push: bool,
    /// The time budget for the whole sync, network and checkout included, in seconds (at most
    /// a day; larger values mean a day). The sync reports within it plus a short margin.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    timeout: u64,
    /// How fetch and push reach the remote: libgit2's own transports, or the installed git
    /// (for SSH setups libssh2 cannot read: ~/.ssh/config aliases, ProxyCommand).
    #[arg(long, value_enum, default_value = "builtin")]
    transport: TransportArg,
    /// Say what a sync would commit and where it would fetch and push; change nothing.
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// The sync commit's author, as `Name <email>` (default: git's user.name and user.email).
    #[arg(long, value_name = "NAME <EMAIL>")]
    author: Option<String>,
    /// Print the report as JSON: committed, pulled, pushed, skipped_reason, quarantined,
    /// commit, duration_ms, warnings.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
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

/// Prints the `--json` report of a sync that could not start because the project could not be
/// read (a broken `.git/config`, a repository format libgit2 cannot open): the report is printed
/// on every exit path (skipped_reason: error, the first warning saying why); the error itself
/// then goes to stderr with status 2.
pub fn report_unopened(args: &SyncArgs, err: &OpError) -> Result<(), OpError> {
    if !super::json_wanted(args.json, args.format) {
        return Ok(());
    }
    let mut outcome = sync::SyncOutcome::default();
    outcome.skip(sync::SkipReason::Error, err.to_string());
    super::print_json(&outcome)
}

pub fn run(project: &Project, args: SyncArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let options = SyncOptions {
        pull: !args.no_pull,
        push: !args.no_push,
        timeout: Duration::from_secs(args.timeout),
        author: args.author,
        transport: args.transport.into(),
    };
    if args.dry_run {
        let plan = sync::dry_run(project)?;
        if json {
            super::print_json(&plan)?;
        } else {
            for change in &plan.would_commit {
                outln!("would commit ({}): {}", change.change, change.path);
            }
            if plan.would_commit.is_empty() {
                outln!("Nothing to commit in the team folder.");
            }
            match (&plan.upstream, plan.skipped_reason) {
                (Some(up), _) => outln!("Would fetch from and push to {up}."),
                (None, Some(reason)) => {
                    outln!("Would stop before the network: {}.", reason.as_str())
                }
                (None, None) => {}
            }
        }
        return Ok(EXIT_OK);
    }
    let fast = sync::fast_noop::try_noop(project, &options);
    // The fast no-op's report with the default branch name holds fixed words, a commit id and
    // numbers only (unless it names what the folder's limits keep out): nothing there can be a
    // secret, so no redaction scanner is built for it.
    let fixed_text = fast.as_ref().is_ok_and(|o| {
        o.memory_branch.as_deref() == Some(crate::git::memory_branch::DEFAULT_BRANCH)
            && o.withheld.is_empty()
    });
    let outcome = match fast {
        Ok(outcome) => {
            super::ui::debug(format_args!(
                "sync: nothing to do, decided from the repository's files without opening it \
                 (fast no-op; {}=0 turns it off)",
                sync::fast_noop::SWITCH
            ));
            outcome
        }
        // The fast check's time is already out of these options' budget.
        Err(options) => {
            let progress =
                (options.pull || options.push).then(|| super::ui::progress("Syncing team memory"));
            let (outcome, failed) = sync::sync_reporting(project, &options);
            drop(progress);
            if let Some(err) = failed {
                // The report is printed on every exit path; the error then goes to stderr
                // (status 2).
                if json {
                    super::print_json(&outcome)?;
                }
                return Err(err);
            }
            outcome
        }
    };
    super::ui::debug(format_args!(
        "sync took {} ms (budget {} s, transport {:?})",
        outcome.duration_ms, args.timeout, args.transport
    ));
    if json && fixed_text {
        super::print_json_unredacted(&outcome)?;
    } else if json {
        super::print_json(&outcome)?;
    } else if fixed_text {
        outln!("{}", outcome.summary());
    } else {
        outln!("{}", super::shown(&outcome.summary()));
        for file in &outcome.quarantined {
            let line = format!("quarantined {}: {}", file.path, file.reasons.join("; "));
            errln!("{}", super::shown(&line));
        }
        // In current-branch mode git wrote the entry; its reason says what sync does with it.
        let left = match outcome.mode {
            sync::SyncMode::Branch => " (not written to the work tree)",
            sync::SyncMode::CurrentBranch => "",
        };
        for file in &outcome.withheld {
            let line = format!("withheld {}{left}: {}", file.path, file.reasons.join("; "));
            errln!("{}", super::shown(&line));
        }
        // The summary line already holds the reason for a skip or a refused commit.
        let shown = &outcome.warnings[usize::from(outcome.skipped_reason.is_some())..];
        let shown = match (outcome.commit_refused, shown.split_last()) {
            (true, Some((_, rest))) => rest,
            _ => shown,
        };
        for warning in shown {
            warning!("{}", super::shown(warning));
        }
    }
    // No repository where one is needed is a usage error, as the exit status table says; the
    // report above still names it (skipped_reason: not-a-git-repo).
    if outcome.skipped_reason == Some(sync::SkipReason::NotAGitRepo) {
        return Ok(EXIT_ERROR);
    }
    let trouble = outcome.skipped_reason.is_some()
        || outcome.commit_refused
        || !outcome.quarantined.is_empty();
    Ok(if trouble { EXIT_FINDINGS } else { EXIT_OK })
}
