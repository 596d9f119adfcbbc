//! Asking the remote of a repository only git can open which refs it has (`git ls-remote`,
//! the ref advertisement alone: nothing is fetched or written), under the git CLI transport's
//! rules (`transfer.rs`).

use super::CliRepo;
use crate::git::remote::git_cli::run_git;
use crate::git::remote::{NetFailure, NetworkOptions};

impl CliRepo {
    /// Whether `remote` (its first URL) advertises `refname` (`refs/heads/…`).
    pub fn remote_has(
        &self,
        remote: &str,
        refname: &str,
        options: &NetworkOptions,
    ) -> Result<bool, NetFailure> {
        let what = format!("git ls-remote {remote} {refname} (git CLI)");
        let url = self
            .remote_urls(remote, false, &options.deadline)
            .map_err(|e| NetFailure::failed(format!("{what}: {e}")))?
            .into_iter()
            .next()
            .ok_or_else(|| NetFailure::failed(format!("{what}: the remote has no URL")))?;
        let mut cmd = self.network_command(options)?;
        cmd.args([
            "ls-remote",
            "--upload-pack=git-upload-pack",
            "--",
            &url,
            refname,
        ]);
        let run = run_git(cmd, b"", &options.deadline, &what)?;
        if !run.success {
            let message = format!("{what}: {}", run.stderr.trim());
            return Err(if options.deadline.passed() {
                NetFailure::timeout(message)
            } else {
                NetFailure::failed(message)
            });
        }
        Ok(run
            .stdout
            .lines()
            .any(|line| line.split('\t').nth(1) == Some(refname)))
    }

    /// The commit `url` advertises for `refname` (`None`: no such ref), asked with the URL as
    /// written (no remote's config applies).
    pub fn advertised_tip(
        &self,
        url: &str,
        refname: &str,
        options: &NetworkOptions,
    ) -> Result<Option<String>, NetFailure> {
        let what = format!("git ls-remote {url} {refname} (git CLI)");
        let mut cmd = self.network_command(options)?;
        cmd.args([
            "ls-remote",
            "--upload-pack=git-upload-pack",
            "--",
            url,
            refname,
        ]);
        let run = run_git(cmd, b"", &options.deadline, &what)?;
        if !run.success {
            return Err(NetFailure::failed(format!("{what}: {}", run.stderr.trim())));
        }
        Ok(run.stdout.lines().find_map(|line| {
            let (id, name) = line.split_once('\t')?;
            (name == refname).then(|| id.to_string())
        }))
    }
}
