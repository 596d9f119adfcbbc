//! The repository a check reads: through libgit2, or — refs in reftable, SHA-256 objects,
//! which libgit2 cannot open — through the installed git (`git/cli_repo/`), with the same
//! folder reads, so `check --staged` and `check --all` judge the same bytes either way.

use std::path::Path;
use std::time::Duration;

use git2::Repository;

use crate::domain::memory::MemoryType;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::cli_repo::{CliRepo, Opened};
use crate::git::history::removal::{self, Removed};
use crate::git::remote::Deadline;
use crate::git::team_files::{self, FolderRead};

use super::{OpError, Project};

/// How long the git runs of one check may take together: a hook must never hang a commit.
const GIT_BUDGET: Duration = Duration::from_secs(60);

/// The repository a check reads.
pub(crate) enum CheckRepo {
    /// Opened by libgit2.
    Libgit2(Repository),
    /// Only the installed git can read it; every run ends by the deadline.
    Git(CliRepo, Deadline),
}

impl CheckRepo {
    /// The project's repository, through git when libgit2 cannot open it.
    pub(crate) fn open(project: &Project) -> Result<CheckRepo, OpError> {
        Ok(match crate::git::cli_repo::open(project.repo_paths()?)? {
            Opened::Libgit2(repo) => CheckRepo::Libgit2(repo),
            Opened::Git(cli) => CheckRepo::Git(cli, Deadline::after(GIT_BUDGET)),
        })
    }

    /// libgit2's handle; `what` (a check of a range or of new commits) is refused in a
    /// repository only git can read, naming why and where it does run.
    pub(crate) fn libgit2(&self, what: &str) -> Result<&Repository, OpError> {
        match self {
            CheckRepo::Libgit2(repo) => Ok(repo),
            CheckRepo::Git(cli, _) => Err(GitError::Unsupported {
                path: cli.paths.workdir.display().to_string(),
                what: cli.why.clone(),
                fix: format!(
                    "{what} needs it: run it in a clone with files refs and SHA-1 objects, such \
                     as CI's checkout (`teammem check --staged` and `teammem check --all` run \
                     here through git)"
                ),
            }
            .into()),
        }
    }

    /// The team folder in an index file (`None`: the repository's own index).
    pub(crate) fn staged(&self, index_file: Option<&Path>) -> Result<FolderRead, OpError> {
        Ok(match self {
            CheckRepo::Libgit2(repo) => team_files::staged(repo, index_file, TEAM_DIR)?,
            CheckRepo::Git(cli, deadline) => cli.staged_folder(index_file, TEAM_DIR, deadline)?,
        })
    }

    /// The team folder in HEAD's tree, or `None` when HEAD has no commit yet.
    pub(crate) fn at_head(&self) -> Result<Option<FolderRead>, OpError> {
        Ok(match self {
            CheckRepo::Libgit2(repo) => {
                if repo.head().is_err() {
                    return Ok(None);
                }
                Some(team_files::at_revision(repo, "HEAD", TEAM_DIR)?)
            }
            CheckRepo::Git(cli, deadline) => cli.folder_at("HEAD", TEAM_DIR, deadline)?,
        })
    }

    /// What the index file removes of HEAD's tree.
    pub(crate) fn removed_in_index(&self, index_file: Option<&Path>) -> Result<Removed, OpError> {
        Ok(match self {
            CheckRepo::Libgit2(repo) => removal::removed_in_index(repo, index_file)?,
            CheckRepo::Git(cli, deadline) => cli.removed_in_index(index_file, deadline)?,
        })
    }

    /// When git ignores the team folder in this clone and the folder is in use (`tracked`, or
    /// on disk), the advice for the finding: the rule and the lines to commit. Never in branch
    /// mode, where the work tree's branch ignores the folder on purpose.
    pub(crate) fn ignored_folder_advice(&self, tracked: bool) -> Result<Option<String>, OpError> {
        match self {
            CheckRepo::Libgit2(repo) => {
                let on_disk = repo.workdir().is_some_and(|w| w.join(TEAM_DIR).is_dir());
                if !(tracked || on_disk) || crate::git::memory_branch::mode(repo)?.is_some() {
                    return Ok(None);
                }
                Ok(crate::git::ignore_rule::ignored_team_path(repo)?
                    .map(|path| crate::ops::init::ignored_advice(repo, &path)))
            }
            CheckRepo::Git(cli, deadline) => {
                let on_disk = cli.paths.workdir.join(TEAM_DIR).is_dir();
                if !(tracked || on_disk) || branch_mode_set_up(cli, deadline)? {
                    return Ok(None);
                }
                git_ignore_advice(cli, deadline)
            }
        }
    }
}

/// Whether the clone shares its memory on a memory branch, as `memory_branch::mode` decides
/// it: `teammem.branch` names one, or nothing is recorded and a remote has `team-memory`.
fn branch_mode_set_up(cli: &CliRepo, deadline: &Deadline) -> Result<bool, GitError> {
    let key = crate::git::memory_branch::CONFIG_KEY;
    if let Some(value) = cli.config(key, deadline)? {
        let off = matches!(
            value.to_ascii_lowercase().as_str(),
            "false" | "off" | "no" | "0"
        );
        return Ok(!off);
    }
    let tracking = format!(
        "refs/remotes/*/{}",
        crate::git::memory_branch::DEFAULT_BRANCH
    );
    let listed = cli.run(
        &["for-each-ref", "--format=%(refname)", &tracking],
        deadline,
        "looking for a memory branch (git for-each-ref)",
    )?;
    Ok(!listed.trim().is_empty())
}

/// The advice when git ignores the team index or a memory in any type folder
/// (`git check-ignore -v --no-index`: tracked or not, as libgit2's check asks).
fn git_ignore_advice(cli: &CliRepo, deadline: &Deadline) -> Result<Option<String>, OpError> {
    let mut probes = vec![format!("{TEAM_DIR}/{INDEX_FILE}")];
    probes.extend(
        MemoryType::ALL
            .iter()
            .map(|kind| format!("{TEAM_DIR}/{}/memory.md", kind.as_str())),
    );
    let qwen = ".qwen/";
    probes.push(qwen.to_string());
    let input: String = probes.iter().map(|p| format!("{p}\0")).collect();
    let mut cmd = cli.command();
    cmd.args(["check-ignore", "-v", "--no-index", "-z", "--stdin"]);
    let what = "checking what git ignores (git check-ignore)";
    let run = cli.try_run(cmd, input.as_bytes(), deadline, what)?;
    // Status 1: no rule matches; 128: an error.
    if !run.success && !run.stderr.trim().is_empty() {
        return Err(GitError::Cli {
            context: what.into(),
            message: run.stderr.trim().to_string(),
        }
        .into());
    }
    // Records of four fields: source, line number, pattern, path. A negated pattern matched
    // last means the path is not ignored.
    let fields: Vec<&str> = run.stdout.split('\0').collect();
    let ignored: Vec<(&str, String)> = fields
        .chunks(4)
        .filter(|f| f.len() == 4 && !f[2].starts_with('!'))
        .map(|f| (f[3], format!("{}:{}:{}", f[0], f[1], f[2])))
        .collect();
    let rule_of = |path: &str| ignored.iter().find(|(p, _)| *p == path).map(|(_, r)| r);
    let Some(rule) = probes[..probes.len() - 1].iter().find_map(|p| rule_of(p)) else {
        return Ok(None);
    };
    Ok(Some(crate::ops::init::ignored_advice_for(
        Some(rule.clone()),
        rule_of(qwen).is_some(),
    )))
}
