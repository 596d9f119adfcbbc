//! The repository a check reads: through libgit2, or — refs in reftable, SHA-256 objects,
//! which libgit2 cannot open — through the installed git (`git/cli_repo/`), with the same
//! folder reads, so `check --staged` and `check --all` judge the same bytes either way; and
//! its history ([`HistoryRepo`]), so `check --range`, `check --ref-updates` and `review` walk
//! the same commits and read the same file versions either way.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use git2::{Oid, Repository};

use crate::domain::memory::MemoryType;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::cli_repo::range::{DiffEntry, RangeWalk, RawCommit, WalkedChange};
use crate::git::cli_repo::{CliRepo, Opened};
use crate::git::history;
use crate::git::history::folder;
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

    /// The repository's history, for a range's or new commits' check and a review.
    pub(crate) fn history(&self) -> HistoryRepo<'_> {
        match self {
            CheckRepo::Libgit2(repo) => HistoryRepo::Libgit2(repo),
            CheckRepo::Git(cli, deadline) => HistoryRepo::Git(cli, deadline),
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

/// The commits of the range a check or review walks (`removing_commits` looks at this many
/// first-parent commits at most, as the libgit2 walk does).
const REMOVAL_WALK: usize = 10_000;

/// A repository's history as a range's check and a review read it: through libgit2, or through
/// the installed git where libgit2 cannot open the repository. Object ids are hex text, so a
/// SHA-256 id fits.
#[derive(Clone, Copy)]
pub enum HistoryRepo<'r> {
    /// Read by libgit2.
    Libgit2(&'r Repository),
    /// Read by git; every run ends by the deadline.
    Git(&'r CliRepo, &'r Deadline),
}

impl HistoryRepo<'_> {
    /// The commit `rev` names, as hex.
    pub(crate) fn resolve_commit(&self, rev: &str) -> Result<String, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => folder::resolve_commit(repo, rev)?.to_string(),
            HistoryRepo::Git(cli, deadline) => cli.resolve_commit(rev, deadline)?,
        })
    }

    /// What each commit of `base..head` (parents before children) wrote below `dir`.
    pub(crate) fn walk(&self, base: &str, head: &str, dir: &str) -> Result<RangeWalk, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => {
                let walked = folder::range(repo, oid(base)?, oid(head)?, dir)?;
                RangeWalk {
                    commits: walked.commits,
                    changes: walked
                        .changes
                        .into_iter()
                        .map(|c| WalkedChange {
                            commit: c.commit,
                            rel: c.rel,
                            new: c.new.map(|(id, mode)| (id.to_string(), mode)),
                        })
                        .collect(),
                }
            }
            HistoryRepo::Git(cli, deadline) => cli.folder_range(base, head, dir, deadline)?,
        })
    }

    /// The team folder in commit `id`'s tree.
    pub(crate) fn folder_at(&self, id: &str) -> Result<FolderRead, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => team_files::at_revision(repo, id, TEAM_DIR)?,
            HistoryRepo::Git(cli, deadline) => {
                cli.folder_at(id, TEAM_DIR, deadline)?
                    .ok_or_else(|| GitError::Cli {
                        context: format!("reading commit {id}"),
                        message: "not a commit in this repository".into(),
                    })?
            }
        })
    }

    /// The bytes of each `(blob, mode)`, in order (a submodule has none).
    pub(crate) fn blobs(&self, wanted: &[(&str, u32)]) -> Result<Vec<Vec<u8>>, OpError> {
        match self {
            HistoryRepo::Libgit2(repo) => wanted
                .iter()
                .map(|(id, mode)| Ok(team_files::read_blob(repo, oid(id)?, *mode)?))
                .collect(),
            HistoryRepo::Git(cli, deadline) => {
                let ids: Vec<&str> = wanted
                    .iter()
                    .filter(|(_, mode)| *mode != team_files::MODE_SUBMODULE)
                    .map(|(id, _)| *id)
                    .collect();
                let read = cli.blobs(&ids, deadline)?;
                Ok(wanted
                    .iter()
                    .map(|(id, mode)| {
                        if *mode == team_files::MODE_SUBMODULE {
                            Vec::new()
                        } else {
                            read.get(*id).cloned().unwrap_or_default()
                        }
                    })
                    .collect())
            }
        }
    }

    /// The best common ancestor of two commits.
    pub(crate) fn merge_base(&self, one: &str, two: &str) -> Result<String, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => {
                history::merge_base(repo, oid(one)?, oid(two)?)?.to_string()
            }
            HistoryRepo::Git(cli, deadline) => cli.merge_base(one, two, deadline)?,
        })
    }

    /// What `new` removes of `old`, renames found by similarity.
    pub(crate) fn removed_between(&self, old: &str, new: &str) -> Result<Removed, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => removal::removed_between(repo, oid(old)?, oid(new)?)?,
            HistoryRepo::Git(cli, deadline) => cli.removed_between(old, new, deadline)?,
        })
    }

    /// The commit of `head`'s first-parent history that removed each path (`true`: a folder),
    /// as hex; a path whose removal is not found (or a walk that failed) is left out.
    pub(crate) fn removing_commits(
        &self,
        head: &str,
        paths: &[(String, bool)],
    ) -> HashMap<String, String> {
        match self {
            HistoryRepo::Libgit2(repo) => match oid(head) {
                Ok(head) => super::references::removing_commits(repo, head, paths),
                Err(_) => HashMap::new(),
            },
            HistoryRepo::Git(cli, deadline) => cli
                .removing_commits(head, paths, REMOVAL_WALK, deadline)
                .unwrap_or_default(),
        }
    }

    /// The changes below the team folder from `old` to `new`, renames found by similarity.
    pub(crate) fn folder_diff(&self, old: &str, new: &str) -> Result<Vec<DiffEntry>, OpError> {
        Ok(match self {
            HistoryRepo::Libgit2(repo) => folder::folder_diff(repo, old, new, TEAM_DIR)?
                .into_iter()
                .map(|e| {
                    let side = |s: Option<(String, Oid, u32)>| {
                        s.map(|(path, id, mode)| (path, id.to_string(), mode))
                    };
                    DiffEntry {
                        kind: e.kind,
                        old: side(e.old),
                        new: side(e.new),
                    }
                })
                .collect(),
            HistoryRepo::Git(cli, deadline) => cli.folder_diff(old, new, TEAM_DIR, deadline)?,
        })
    }

    /// The commits of `base..head`, parents before children (libgit2's topological order, git's
    /// `--topo-order`), with their people.
    pub(crate) fn commits_between(
        &self,
        base: &str,
        head: &str,
    ) -> Result<Vec<RawCommit>, OpError> {
        match self {
            HistoryRepo::Libgit2(repo) => {
                let git = |e| GitError::git(format!("listing the commits of {base}..{head}"), e);
                let mut walk = repo.revwalk().map_err(git)?;
                walk.push(oid(head)?).map_err(git)?;
                walk.hide(oid(base)?).map_err(git)?;
                walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
                    .map_err(git)?;
                let mut out = Vec::new();
                for id in walk {
                    out.push(raw_commit(repo, id.map_err(git)?)?);
                }
                Ok(out)
            }
            HistoryRepo::Git(cli, deadline) => Ok(cli.range_commits(base, head, deadline)?),
        }
    }

    /// The commits reachable from `tips` that no ref and not HEAD reaches yet, with their
    /// parents.
    pub(crate) fn unreferenced_commits(&self, tips: &[String]) -> Result<Vec<RawCommit>, OpError> {
        match self {
            HistoryRepo::Libgit2(repo) => {
                let git = |what: &'static str| move |e| GitError::git(what, e);
                let mut walk = repo.revwalk().map_err(git("walking new commits"))?;
                for tip in tips {
                    walk.push(oid(tip)?).map_err(git("walking new commits"))?;
                }
                if tips.is_empty() {
                    return Ok(Vec::new());
                }
                // In the `prepared` state no ref has moved yet: every commit a ref reaches now
                // was already there, fetched or checked when it was made.
                for reference in repo.references().map_err(git("listing refs"))?.flatten() {
                    if let Ok(commit) = reference.peel_to_commit() {
                        let _ = walk.hide(commit.id());
                    }
                }
                if let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) {
                    let _ = walk.hide(head.id());
                }
                let mut out = Vec::new();
                for id in walk {
                    out.push(raw_commit(repo, id.map_err(git("walking new commits"))?)?);
                }
                Ok(out)
            }
            HistoryRepo::Git(cli, deadline) => Ok(cli.unreferenced_commits(tips, deadline)?),
        }
    }
}

/// A libgit2 object id from hex.
fn oid(hex: &str) -> Result<Oid, GitError> {
    Oid::from_str(hex).map_err(|e| GitError::git(format!("reading object id {hex}"), e))
}

/// A commit's parents, people and summary, as libgit2 reads them.
fn raw_commit(repo: &Repository, id: Oid) -> Result<RawCommit, GitError> {
    let commit = repo
        .find_commit(id)
        .map_err(|e| GitError::git(format!("reading commit {id}"), e))?;
    let person = |s: git2::Signature<'_>| crate::git::cli_repo::range::Person {
        name: String::from_utf8_lossy(s.name_bytes()).into_owned(),
        email: String::from_utf8_lossy(s.email_bytes()).into_owned(),
        time: s.when().seconds(),
    };
    Ok(RawCommit {
        id: id.to_string(),
        parents: commit.parent_ids().map(|p| p.to_string()).collect(),
        author: person(commit.author()),
        committer: person(commit.committer()),
        summary: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned(),
    })
}
