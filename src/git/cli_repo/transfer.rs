//! Fetching and pushing for a repository only the git CLI can open, with the git CLI
//! transport's settings (`remote/git_cli.rs`: no hooks, no askpass, no signed push, no `ext::`,
//! the repository's own credential helpers dropped, a planted `include`/`core.gitProxy`
//! refused): one branch fetched into its remote-tracking ref, one refspec pushed with a lease
//! to every push URL of the remote.

use std::process::Command;

use super::CliRepo;
use crate::git::GitError;
use crate::git::remote::git_cli::network_command_at;
use crate::git::remote::{NetFailure, NetworkOptions};

/// The current branch's upstream, as `git rev-parse @{u}` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliUpstream {
    /// The checked-out branch, `refs/heads/<b>`.
    pub local_ref: String,
    /// `branch.<b>.remote`: a remote's name, or a URL.
    pub remote: String,
    /// `branch.<b>.merge`: the branch on the remote.
    pub merge_ref: String,
    /// Where its fetched tip is kept: the remote's fetch refspec's target, else
    /// `refs/teammem/upstream/<b>`.
    pub tracking_ref: String,
}

/// How a push to one URL went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliPush {
    /// The remote branch now holds the local tip.
    Pushed,
    /// The remote branch is no longer at the fetched tip (a teammate pushed meanwhile).
    LeaseRefused,
    /// The remote refused the update (a hook, a protected branch), with its words.
    Rejected(String),
}

impl CliRepo {
    /// The upstream of `local_ref`; `None` when it has none (or `branch.<b>.remote = .`).
    pub fn upstream(
        &self,
        local_ref: &str,
        deadline: &crate::git::remote::Deadline,
    ) -> Result<Option<CliUpstream>, GitError> {
        let branch = local_ref.strip_prefix("refs/heads/").unwrap_or(local_ref);
        let remote = self.config(&format!("branch.{branch}.remote"), deadline)?;
        let merge = self.config(&format!("branch.{branch}.merge"), deadline)?;
        let (Some(remote), Some(merge_ref)) = (remote, merge) else {
            return Ok(None);
        };
        if remote == "." {
            return Ok(None);
        }
        let mut cmd = self.command();
        cmd.args([
            "rev-parse",
            "--symbolic-full-name",
            &format!("{branch}@{{upstream}}"),
        ]);
        let run = self.try_run(cmd, b"", deadline, "reading the upstream (git rev-parse)")?;
        let tracking_ref = Some(run.stdout.trim().to_string())
            .filter(|r| run.success && r.starts_with("refs/remotes/"))
            .unwrap_or_else(|| format!("refs/teammem/upstream/{branch}"));
        Ok(Some(CliUpstream {
            local_ref: local_ref.to_string(),
            remote,
            merge_ref,
            tracking_ref,
        }))
    }

    /// The remote's URLs for `push` (every push URL) or fetching (the first URL), as
    /// `git remote get-url` gives them (`insteadOf` applied). A URL as the remote is itself.
    pub fn remote_urls(
        &self,
        remote: &str,
        push: bool,
        deadline: &crate::git::remote::Deadline,
    ) -> Result<Vec<String>, GitError> {
        let mut cmd = self.command();
        cmd.args(["remote", "get-url"]);
        if push {
            cmd.args(["--push", "--all"]);
        }
        cmd.args(["--", remote]);
        let run = self.try_run(cmd, b"", deadline, "reading the remote's URL (git remote)")?;
        if !run.success {
            // Not a configured remote: `branch.<b>.remote` holds the URL itself.
            return Ok(vec![remote.to_string()]);
        }
        Ok(run.stdout.lines().map(str::to_string).collect())
    }

    /// A network command with the git CLI transport's rules, reading this repository's own
    /// config files for what must be refused or dropped.
    pub(crate) fn network_command(&self, options: &NetworkOptions) -> Result<Command, NetFailure> {
        let mut config = git2::Config::new().ok();
        if let Some(config) = config.as_mut() {
            let local = self.common_dir.join("config");
            let worktree = self.paths.git_dir.join("config.worktree");
            let _ = config.add_file(&local, git2::ConfigLevel::Local, false);
            if worktree.is_file() {
                let _ = config.add_file(&worktree, git2::ConfigLevel::Worktree, false);
            }
        }
        let mut cmd = network_command_at(
            &self.paths.git_dir,
            Some(&self.paths.workdir),
            config.as_ref(),
            options,
        )?;
        cmd.env("GIT_COMMON_DIR", &self.common_dir);
        Ok(cmd)
    }

    /// Fetches the upstream branch into its tracking ref; returns the fetched tip (`None` when
    /// the remote has no such branch).
    pub fn fetch(
        &self,
        up: &CliUpstream,
        options: &NetworkOptions,
    ) -> Result<Option<String>, NetFailure> {
        let what = format!("git fetch {} from {} (git CLI)", up.merge_ref, up.remote);
        let url = self
            .remote_urls(&up.remote, false, &options.deadline)
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?
            .into_iter()
            .next()
            .ok_or_else(|| NetFailure::failed(format!("{what}: the remote has no URL")))?;
        let mut cmd = self.network_command(options)?;
        // Kept as a pack, what arrives lands whole or not at all (see `git/fetch.rs`).
        cmd.args(["-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1"]);
        cmd.args(crate::git::remote::git_cli::QUIET_FETCH).args([
            "--",
            &url,
            &format!("+{}:{}", up.merge_ref, up.tracking_ref),
        ]);
        let note = |e: GitError| NetFailure::failed(format!("{what}: {e}"));
        let step = self
            .announce_step(&Self::ref_locks(&up.tracking_ref), None)
            .map_err(note)?;
        let run = crate::git::remote::git_cli::run_git(cmd, b"", &options.deadline, &what)?;
        step.done();
        if !run.success {
            if run.stderr.contains("couldn't find remote ref") {
                return Ok(None);
            }
            let message = format!("{what}: {}", run.stderr.trim());
            return Err(if options.deadline.passed() {
                NetFailure::timeout(message)
            } else {
                NetFailure::failed(message)
            });
        }
        self.resolve(&up.tracking_ref, &options.deadline)
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))
    }

    /// Pushes `up.local_ref` to `url`'s `up.merge_ref`, with a lease on `expected` (`None`:
    /// the remote branch must not exist yet, and the push creates it).
    pub fn push(
        &self,
        up: &CliUpstream,
        url: &str,
        expected: Option<&str>,
        options: &NetworkOptions,
    ) -> Result<CliPush, NetFailure> {
        // An empty expected value is git's "must not exist".
        let expected = expected.unwrap_or("");
        let what = format!("git push {} to {} (git CLI)", up.merge_ref, up.remote);
        let mut cmd = self.network_command(options)?;
        cmd.args([
            "push",
            "--porcelain",
            "--no-verify",
            "--no-signed",
            "--no-recurse-submodules",
            "--receive-pack=git-receive-pack",
            &format!("--force-with-lease={}:{expected}", up.merge_ref),
            "--",
            url,
            &format!("{}:{}", up.local_ref, up.merge_ref),
        ]);
        // A push that goes through moves the remote-tracking ref too.
        let step = self
            .announce_step(&Self::ref_locks(&up.tracking_ref), None)
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?;
        let run = crate::git::remote::git_cli::run_git(cmd, b"", &options.deadline, &what)?;
        step.done();
        // Porcelain: "<flag>\t<from>:<to>\t<summary> (<reason>)"; `!` is a refusal.
        let status = run
            .stdout
            .lines()
            .find(|l| l.contains(&format!(":{}\t", up.merge_ref)));
        match status {
            Some(line) if line.starts_with('!') => {
                let reason = line.rsplit('\t').next().unwrap_or(line);
                // Another push landed between the remote's advertisement and its ref update:
                // receive-pack says "cannot lock ref … but expected …" (or "failed to lock"),
                // a race lost as a stale lease is, never a refusal to propose around.
                let moved = reason.contains("failed to lock")
                    || (reason.contains("failed to update ref")
                        && run.stderr.contains("but expected"));
                if reason.contains("stale info") || reason.contains("fetch first") || moved {
                    return Ok(CliPush::LeaseRefused);
                }
                let remote_lines: Vec<&str> = run
                    .stderr
                    .lines()
                    .filter_map(|l| l.strip_prefix("remote:"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                let mut message = reason.to_string();
                if !remote_lines.is_empty() {
                    message = format!("{message}: {}", remote_lines.join(" / "));
                }
                Ok(CliPush::Rejected(message))
            }
            Some(_) if run.success => Ok(CliPush::Pushed),
            _ => {
                let message = format!("{what}: {}", run.stderr.trim());
                Err(if options.deadline.passed() {
                    NetFailure::timeout(message)
                } else {
                    NetFailure::failed(message)
                })
            }
        }
    }
}
