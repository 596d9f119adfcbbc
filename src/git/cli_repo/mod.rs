//! A repository libgit2 cannot open — refs in reftable (`--ref-format=reftable`) or SHA-256
//! objects (`--object-format=sha256`) — worked on through the installed git alone, under the
//! rules of the git CLI transport (`remote/git_cli.rs`): the repository named by `GIT_DIR` and
//! `GIT_WORK_TREE`, no prompt, a scrubbed environment, no hooks, no fsmonitor, no automatic gc,
//! no filter program from the repository's config, no signing by git (a sync commit is signed
//! by `git/sign.rs`, with the user's own program), and every run killed at its deadline. Plumbing only (`read-tree`, `update-index`,
//! `write-tree`, `commit-tree`, `update-ref OLD`), so a step that fails leaves nothing
//! half-done; `transfer.rs` fetches and pushes; `interrupted.rs` clears what a killed sync
//! left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::GitError;
use super::remote::Deadline;
use super::remote::git_cli::{GitProgram, GitRun, run_git};
use super::repo::RepoPaths;

pub mod advertise;
mod blobs;
pub mod folder;
pub mod history;
pub mod interrupted;
pub mod paths;
pub mod range;
pub mod transfer;
pub mod trees;

/// A repository as teammem works on it: through libgit2, or through git where libgit2 cannot
/// open it.
pub enum Opened {
    /// libgit2 opened it.
    Libgit2(git2::Repository),
    /// Only git can: reftable refs, SHA-256 objects, `GIT_COMMON_DIR`.
    Git(CliRepo),
}

/// Opens the repository at `paths` with libgit2, and through git only when libgit2 refuses it
/// as unsupported and git can work on it: every other repository pays nothing for the check.
pub fn open(paths: &RepoPaths) -> Result<Opened, GitError> {
    match super::repo::open(paths) {
        Ok(repo) => Ok(Opened::Libgit2(repo)),
        Err(err @ GitError::Unsupported { .. }) => {
            CliRepo::needing_git(paths).map(Opened::Git).ok_or(err)
        }
        Err(err) => Err(err),
    }
}

/// A repository run through the git CLI.
#[derive(Debug, Clone)]
pub struct CliRepo {
    /// Where it lives, as discovery found it.
    pub paths: RepoPaths,
    /// The folder shared by all its worktrees (config, refs, objects).
    pub common_dir: PathBuf,
    /// Why libgit2 cannot open it, in the user's words.
    pub why: String,
    /// The length of an object id in hex: 40 (SHA-1) or 64 (SHA-256).
    pub hex_len: usize,
    /// The filter drivers the repository's own config defines (`filter.<name>.*`): every
    /// run switches their programs off, as libgit2 runs none.
    planted_filters: Vec<String>,
}

/// One entry of a tree: its mode (`100644`) and object id, both as git prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// The mode in octal.
    pub mode: String,
    /// The object id in hex.
    pub id: String,
}

impl CliRepo {
    /// The repository at `paths` when libgit2 cannot open it (its config asks for reftable refs
    /// or SHA-256 objects, or `GIT_COMMON_DIR` names its common folder); `None` for every other
    /// repository, which libgit2 handles.
    pub fn needing_git(paths: &RepoPaths) -> Option<CliRepo> {
        // `GIT_COMMON_DIR` names the folder of refs, objects and config as git takes it
        // (relative to the current folder); libgit2 cannot follow it beside the work tree
        // found, so such a repository goes through git whatever its formats.
        let named_common = std::env::var_os("GIT_COMMON_DIR")
            .filter(|v| !v.is_empty())
            .and_then(|v| std::path::absolute(PathBuf::from(v)).ok());
        let common_dir = named_common
            .clone()
            .unwrap_or_else(|| common_dir(&paths.git_dir));
        let config = git2::Config::open(&common_dir.join("config")).ok()?;
        let lower = |key: &str| config.get_string(key).ok().map(|v| v.to_ascii_lowercase());
        let sha256 = lower("extensions.objectformat").as_deref() == Some("sha256");
        let reftable = lower("extensions.refstorage").as_deref() == Some("reftable");
        let why = match (reftable, sha256, named_common.is_some()) {
            (true, true, _) => "its refs are in reftable and its objects are SHA-256",
            (true, false, _) => "its refs are in reftable",
            (false, true, _) => "its objects are SHA-256",
            (false, false, true) => "GIT_COMMON_DIR names its common folder",
            (false, false, false) => return None,
        };
        let mut planted_filters = Vec::new();
        for file in [
            common_dir.join("config"),
            paths.git_dir.join("config.worktree"),
        ] {
            let Ok(config) = git2::Config::open(&file) else {
                continue;
            };
            let Ok(mut entries) = config.entries(Some("^filter\\.")) else {
                continue;
            };
            while let Some(Ok(entry)) = entries.next() {
                let name = entry.name().ok().and_then(|n| {
                    let rest = n.strip_prefix("filter.")?;
                    Some(rest[..rest.rfind('.')?].to_string())
                });
                if let Some(name) = name.filter(|n| !planted_filters.contains(n)) {
                    planted_filters.push(name);
                }
            }
        }
        Some(CliRepo {
            paths: paths.clone(),
            common_dir,
            why: format!("libgit2 cannot open this repository: {why}"),
            hex_len: if sha256 { 64 } else { 40 },
            planted_filters,
        })
    }

    /// The all-zero object id, which says "no object" to `update-ref` and `--index-info`.
    pub fn zero_id(&self) -> String {
        "0".repeat(self.hex_len)
    }

    /// A git command for this repository, under the rules in the module doc.
    pub fn command(&self) -> Command {
        let mut cmd = GitProgram::from_process().command();
        cmd.current_dir(&self.paths.workdir)
            .env("GIT_DIR", &self.paths.git_dir)
            .env("GIT_COMMON_DIR", &self.common_dir)
            .env("GIT_WORK_TREE", &self.paths.workdir);
        for setting in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "gc.auto=0",
            "maintenance.auto=false",
            "commit.gpgSign=false",
        ] {
            cmd.arg("-c").arg(setting);
        }
        // An empty program is no filter: a checkout writes the blob as it is, as libgit2 does.
        for name in &self.planted_filters {
            for key in ["smudge=", "clean=", "process=", "required=false"] {
                cmd.arg("-c").arg(format!("filter.{name}.{key}"));
            }
        }
        cmd
    }

    /// Runs `git ARGS` with `input` until `deadline`, whatever its exit status.
    pub(crate) fn try_run(
        &self,
        cmd: Command,
        input: &[u8],
        deadline: &Deadline,
        what: &str,
    ) -> Result<GitRun, GitError> {
        run_git(cmd, input, deadline, what).map_err(|failure| match failure.kind {
            super::remote::NetFailureKind::Timeout => GitError::OutOfTime {
                what: what.to_string(),
            },
            _ => GitError::Cli {
                context: what.to_string(),
                message: failure.message,
            },
        })
    }

    /// Runs `git ARGS` and returns its output; a failure is an error naming `what` and git's
    /// words.
    pub fn run(&self, args: &[&str], deadline: &Deadline, what: &str) -> Result<String, GitError> {
        self.run_with(args, &[], b"", deadline, what)
    }

    /// [`Self::run`] with extra environment and `input` on stdin.
    pub fn run_with(
        &self,
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
        input: &[u8],
        deadline: &Deadline,
        what: &str,
    ) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.args(args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let run = self.try_run(cmd, input, deadline, what)?;
        if !run.success {
            return Err(GitError::Cli {
                context: what.to_string(),
                message: run.stderr.trim().to_string(),
            });
        }
        Ok(run.stdout)
    }

    /// The object id `name` resolves to (`rev-parse --verify -q`), `None` when it names
    /// nothing.
    pub fn resolve(&self, name: &str, deadline: &Deadline) -> Result<Option<String>, GitError> {
        let mut cmd = self.command();
        cmd.args(["rev-parse", "--verify", "-q", "--end-of-options", name]);
        let run = self.try_run(cmd, b"", deadline, &format!("reading {name} (git)"))?;
        Ok(run
            .success
            .then(|| run.stdout.trim().to_string())
            .filter(|id| !id.is_empty()))
    }

    /// The branch HEAD points at (`refs/heads/…`), `None` when HEAD is detached.
    pub fn head_branch(&self, deadline: &Deadline) -> Result<Option<String>, GitError> {
        let mut cmd = self.command();
        cmd.args(["symbolic-ref", "-q", "HEAD"]);
        let run = self.try_run(cmd, b"", deadline, "reading HEAD (git symbolic-ref)")?;
        Ok(run
            .success
            .then(|| run.stdout.trim().to_string())
            .filter(|r| r.starts_with("refs/heads/")))
    }

    /// A config value of this repository as git reads it, `None` when unset.
    pub fn config(&self, key: &str, deadline: &Deadline) -> Result<Option<String>, GitError> {
        let mut cmd = self.command();
        cmd.args(["config", "--get", key]);
        let run = self.try_run(cmd, b"", deadline, &format!("reading {key} (git config)"))?;
        Ok(run.success.then(|| run.stdout.trim_end().to_string()))
    }

    /// This repository's configuration at every level (system, global, its own files), as
    /// libgit2 reads it: for settings git's `config --get` cannot say the level of (which
    /// signing program is the user's own).
    pub fn full_config(&self) -> Result<git2::Config, GitError> {
        let git = |e| GitError::git("reading the git configuration", e);
        let mut config = crate::git::user_config::open_default().map_err(git)?;
        config
            .add_file(
                &self.common_dir.join("config"),
                git2::ConfigLevel::Local,
                false,
            )
            .map_err(git)?;
        let worktree = self.paths.git_dir.join("config.worktree");
        if worktree.is_file() {
            config
                .add_file(&worktree, git2::ConfigLevel::Worktree, false)
                .map_err(git)?;
        }
        Ok(config)
    }

    /// The commit `unsigned` again, signed as `signing` says (`git/sign.rs`: the user's own
    /// signing program, never the repository's), written with `git hash-object -t commit`:
    /// the signature goes in git's header (`gpgsig`, `gpgsig-sha256` for SHA-256 objects)
    /// after the committer line. `Ok(Err(why))` when the program did not sign: nothing written.
    pub fn signed_commit(
        &self,
        unsigned: &str,
        signing: &super::sign::Signing,
        deadline: &Deadline,
    ) -> Result<Result<String, super::sign::SignError>, GitError> {
        let payload = self.run(
            &["cat-file", "commit", unsigned],
            deadline,
            "reading the commit to sign (git cat-file)",
        )?;
        let committer = payload
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("committer "))
            .and_then(|l| l.get(..=l.rfind('>')?))
            .unwrap_or("")
            .to_string();
        let scratch = self.paths.git_dir.join(super::recovery::SIGN_SCRATCH);
        let budget = deadline.remaining().max(std::time::Duration::from_secs(1));
        let signature = match super::sign::sign(signing, &payload, &committer, &scratch, budget) {
            Ok(Some(signature)) => signature,
            Ok(None) => return Ok(Ok(unsigned.to_string())),
            Err(why) => return Ok(Err(why)),
        };
        let Some(end_of_headers) = payload.find("\n\n") else {
            return Err(GitError::Cli {
                context: "signing the sync commit".into(),
                message: format!("commit {unsigned} has no message"),
            });
        };
        let header = if self.hex_len == 64 {
            "gpgsig-sha256"
        } else {
            "gpgsig"
        };
        let mut signed = String::with_capacity(payload.len() + signature.len() + 64);
        signed.push_str(&payload[..=end_of_headers]);
        signed.push_str(header);
        for line in signature.trim_end_matches('\n').split('\n') {
            signed.push(' ');
            signed.push_str(line);
            signed.push('\n');
        }
        signed.push_str(&payload[end_of_headers + 1..]);
        let id = self.run_with(
            &["hash-object", "-t", "commit", "-w", "--stdin"],
            &[],
            signed.as_bytes(),
            deadline,
            "writing the signed commit (git hash-object)",
        )?;
        Ok(Ok(id.trim().to_string()))
    }

    /// The entries under `dir/` of `treeish` (recursively), keyed by path from the top.
    pub fn tree_entries(
        &self,
        treeish: &str,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<BTreeMap<String, TreeEntry>, GitError> {
        let out = self.run(
            &[
                "ls-tree",
                "-r",
                "-z",
                "--full-tree",
                treeish,
                "--",
                &format!(":(literal){dir}/"),
            ],
            deadline,
            &format!("listing {dir} in {treeish} (git ls-tree)"),
        )?;
        let mut entries = BTreeMap::new();
        for record in out.split('\0').filter(|r| !r.is_empty()) {
            let Some((meta, path)) = record.split_once('\t') else {
                continue;
            };
            let mut fields = meta.split(' ');
            let (Some(mode), Some(_kind), Some(id)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            entries.insert(
                path.to_string(),
                TreeEntry {
                    mode: mode.to_string(),
                    id: id.to_string(),
                },
            );
        }
        Ok(entries)
    }

    /// Whether git ignores the team index or a memory in any type folder of `dir`, and whether
    /// it ignores `.qwen/` itself (`git check-ignore --no-index`: tracked or not, as the
    /// libgit2 path asks).
    pub fn team_dir_ignored(&self, dir: &str) -> Result<(bool, bool), GitError> {
        let deadline = Deadline::after(std::time::Duration::from_secs(10));
        let mut probes = vec![format!("{dir}/MEMORY.md")];
        for kind in crate::domain::memory::MemoryType::ALL {
            probes.push(format!("{dir}/{}/memory.md", kind.as_str()));
        }
        let qwen = ".qwen/";
        probes.push(qwen.to_string());
        let input: String = probes.iter().map(|p| format!("{p}\0")).collect();
        let mut cmd = self.command();
        cmd.args(["check-ignore", "--no-index", "-z", "--stdin"]);
        let what = "checking what git ignores (git check-ignore)";
        let run = self.try_run(cmd, input.as_bytes(), &deadline, what)?;
        // Status 1: nothing is ignored; 128: an error.
        if !run.success && !run.stderr.trim().is_empty() {
            return Err(GitError::Cli {
                context: what.into(),
                message: run.stderr.trim().to_string(),
            });
        }
        let ignored: Vec<&str> = run.stdout.split('\0').filter(|p| !p.is_empty()).collect();
        let qwen_ignored = ignored.contains(&qwen);
        Ok((ignored.iter().any(|p| *p != qwen), qwen_ignored))
    }

    /// Writes the tree of `base` (a commit, or `None` for an empty tree) with `updates` made
    /// (`Some(entry)` sets the path, `None` removes it), on a temporary index: the user's
    /// index is not read or written. Returns the tree's id.
    pub fn write_tree(
        &self,
        base: Option<&str>,
        updates: &BTreeMap<String, Option<TreeEntry>>,
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        let scratch = ScratchIndex::new();
        let env = [("GIT_INDEX_FILE", scratch.0.as_os_str())];
        let read: Vec<&str> = match base {
            Some(base) => vec!["read-tree", base],
            None => vec!["read-tree", "--empty"],
        };
        self.run_with(
            &read,
            &env,
            b"",
            deadline,
            "reading the tree (git read-tree)",
        )?;
        let input = self.index_info(updates);
        self.run_with(
            &["update-index", "-z", "--index-info"],
            &env,
            input.as_bytes(),
            deadline,
            "staging the team files (git update-index)",
        )?;
        let tree = self.run_with(
            &["write-tree"],
            &env,
            b"",
            deadline,
            "writing the tree (git write-tree)",
        )?;
        Ok(tree.trim().to_string())
    }

    /// `--index-info` records for `updates`.
    pub fn index_info(&self, updates: &BTreeMap<String, Option<TreeEntry>>) -> String {
        let zero = self.zero_id();
        updates
            .iter()
            .map(|(path, entry)| match entry {
                Some(e) => format!("{} {}\t{path}\0", e.mode, e.id),
                None => format!("0 {zero}\t{path}\0"),
            })
            .collect()
    }

    /// Moves `refname` from `old` (`None`: it must not exist) to `new`, compare-and-swap.
    /// Returns whether it moved (`false`: it was not at `old` any more).
    pub fn move_ref(
        &self,
        refname: &str,
        new: &str,
        old: Option<&str>,
        message: &str,
        deadline: &Deadline,
    ) -> Result<bool, GitError> {
        let zero = self.zero_id();
        let mut cmd = self.command();
        cmd.args([
            "update-ref",
            "-m",
            message,
            refname,
            new,
            old.unwrap_or(&zero),
        ]);
        let what = format!("moving {refname} (git update-ref)");
        let run = self.try_run(cmd, b"", deadline, &what)?;
        if run.success {
            return Ok(true);
        }
        if run.stderr.contains("but expected")
            || run.stderr.contains("reference already exists")
            || run.stderr.contains("unable to resolve reference")
            || run.stderr.contains("cannot lock ref")
        {
            return Ok(false);
        }
        Err(GitError::Cli {
            context: what,
            message: run.stderr.trim().to_string(),
        })
    }

    /// Whether `ancestor` is an ancestor of (or the same commit as) `of`.
    pub fn is_ancestor(
        &self,
        ancestor: &str,
        of: &str,
        deadline: &Deadline,
    ) -> Result<bool, GitError> {
        let mut cmd = self.command();
        cmd.args(["merge-base", "--is-ancestor", ancestor, of]);
        let what = "comparing histories (git merge-base)";
        let run = self.try_run(cmd, b"", deadline, what)?;
        match (run.success, run.stderr.trim().is_empty()) {
            (true, _) => Ok(true),
            (false, true) => Ok(false),
            (false, false) => Err(GitError::Cli {
                context: what.into(),
                message: run.stderr.trim().to_string(),
            }),
        }
    }

    /// The commits reachable from `to` and not from `from` (all of `to`'s history when `from`
    /// is `None`), newest first.
    pub fn commits_not_in(
        &self,
        from: Option<&str>,
        to: &str,
        deadline: &Deadline,
    ) -> Result<Vec<String>, GitError> {
        let range = match from {
            Some(from) => format!("{from}..{to}"),
            None => to.to_string(),
        };
        let out = self.run(
            &["rev-list", "--topo-order", &range, "--"],
            deadline,
            "listing commits (git rev-list)",
        )?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// Whether `commit` is a sync commit: the sync subject, the `Teammem-Sync: 1` trailer in
    /// its last paragraph, at most one parent (the first sync commit of a new branch has
    /// none), and changes inside `dir/` only — the same test as libgit2's path
    /// (`replay::is_sync_commit`).
    pub fn is_sync_commit(
        &self,
        commit: &str,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<bool, GitError> {
        let shown = self.run(
            &["log", "-1", "--format=%P%x00%B", commit],
            deadline,
            "reading a commit (git log)",
        )?;
        let (parents, message) = shown.split_once('\0').unwrap_or(("", ""));
        let subject_fits =
            message.lines().next().map(str::trim) == Some(super::commit::SYNC_SUBJECT);
        let trailer_fits = message
            .trim_end()
            .rsplit("\n\n")
            .next()
            .is_some_and(|last| {
                last.lines()
                    .any(|l| l.trim() == super::commit::SYNC_TRAILER)
            });
        if parents.split_whitespace().count() > 1 || !subject_fits || !trailer_fits {
            return Ok(false);
        }
        // `--root`: a commit without a parent is compared with the empty tree.
        let changed = self.run(
            &[
                "diff-tree",
                "--root",
                "--no-commit-id",
                "-r",
                "-z",
                "--name-only",
                commit,
            ],
            deadline,
            "reading what a commit changes (git diff-tree)",
        )?;
        let prefix = format!("{dir}/");
        Ok(changed
            .split('\0')
            .filter(|p| !p.is_empty())
            .all(|p| p.starts_with(&prefix)))
    }

    /// Moves the checked-out `branch_ref` from `from` to `to` with its files, as
    /// `git merge --ff-only` does: `git read-tree -m -u FROM TO` (which refuses before writing
    /// anything when a local change, or an untracked or ignored file, is in the way), then
    /// `git update-ref TO FROM` (the files are moved back when the branch moved meanwhile).
    /// `Err(paths)` names what is in the way; `Ok(false)` says the branch moved.
    pub fn check_out(
        &self,
        branch_ref: &str,
        from: &str,
        to: &str,
        deadline: &Deadline,
    ) -> Result<Result<bool, Vec<String>>, GitError> {
        // As `git merge` does first: entries whose stat data is stale (those the sync's own
        // index update wrote) are compared by content, so they do not count as changes.
        // Killed from here on, the next sync clears the locks and rolls the files back
        // (`interrupted.rs`).
        // Each step note names the locks of that step alone (`interrupted.rs`).
        let index_lock = ["index.lock".to_string()];
        let step = self.announce_step(&index_lock, None)?;
        let checkout = self.announce_checkout(branch_ref, from, to)?;
        let mut refresh = self.command();
        refresh.args(["update-index", "-q", "--refresh"]);
        self.try_run(refresh, b"", deadline, "refreshing the index (git)")?;
        let what = format!("checking out {to} (git read-tree)");
        let mut read_tree = self.command();
        read_tree.args(["read-tree", "-m", "-u", from, to]);
        let run = self.try_run(read_tree, b"", deadline, &what)?;
        if !run.success {
            let paths = super::fast_forward_cli::paths_in_the_way(&run.stderr);
            if paths.is_empty() {
                return Err(GitError::Cli {
                    context: what,
                    message: run.stderr.trim().to_string(),
                });
            }
            checkout.done();
            step.done();
            return Ok(Err(paths));
        }
        let message = format!("teammem: sync to {to}");
        let step = self.announce_step(&Self::ref_locks(branch_ref), None)?;
        if self.move_ref(branch_ref, to, Some(from), &message, deadline)? {
            checkout.done();
            step.done();
            return Ok(Ok(true));
        }
        let step = self.announce_step(&index_lock, None)?;
        let mut back = self.command();
        back.args(["read-tree", "-m", "-u", to, from]);
        let put_back = self.try_run(
            back,
            b"",
            deadline,
            "putting the files back (git read-tree)",
        );
        // Not put back: the note stays, and the next sync rolls the files back.
        if put_back.is_ok_and(|run| run.success) {
            checkout.done();
        }
        step.done();
        Ok(Ok(false))
    }
}

/// A temporary index file outside the repository (so a kill leaves nothing in `.git`),
/// removed with its lock when dropped.
struct ScratchIndex(PathBuf);

impl ScratchIndex {
    fn new() -> ScratchIndex {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!("teammem-index-{}-{nanos}", std::process::id());
        ScratchIndex(std::env::temp_dir().join(name))
    }
}

impl Drop for ScratchIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("lock"));
    }
}

/// The common git folder of `git_dir` (a linked worktree's `commondir` file names it).
fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => {
            let named = PathBuf::from(text.trim());
            if named.is_absolute() {
                named
            } else {
                git_dir.join(named)
            }
        }
        Err(_) => git_dir.to_path_buf(),
    }
}

#[cfg(test)]
mod tests;
