//! Setting up team memory in a repository: which sync mode (branch mode when the repository
//! has a remote, unless an existing setup says otherwise), the folder, its index, and a
//! `.gitignore` that lets git see it (current-branch mode).

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store;
use crate::git::cli_repo::CliRepo;
use crate::git::memory_branch;
use crate::git::{GitError, repo};

use super::{OpError, Project};

pub(crate) mod branch;
mod git_cli;

/// The lines `init` adds to `.gitignore` when git would ignore the team folder. When `.qwen/`
/// itself is ignored, only the team folder is let back in: the rest of `.qwen/` (settings,
/// local memory) stays ignored, so nothing private is published by accident.
pub(crate) fn gitignore_fix(qwen_dir_ignored: bool) -> Vec<&'static str> {
    let mut lines = vec!["# teammem: share team memory through git"];
    if qwen_dir_ignored {
        lines.extend(["!/.qwen/", "/.qwen/*"]);
    }
    lines.extend(["!/.qwen/team-memory/", "!/.qwen/team-memory/**"]);
    lines
}

/// Why git ignores `path` in the team folder and how to share it, for sync's warning and
/// `check`'s finding: `(the rule `.gitignore:1:.qwen/`); to share them, add these lines …`
/// followed by the lines of [`gitignore_fix`], one per line — the lines that work: a negation
/// alone does not reach below an ignored `.qwen/`.
pub(crate) fn ignored_advice(repo: &git2::Repository, path: &str) -> String {
    ignored_advice_for(
        crate::git::ignore_rule::rule_for(repo, path),
        repo.is_path_ignored(".qwen/").unwrap_or(false),
    )
}

/// [`ignored_advice`] from the rule git names (`.gitignore:1:.qwen/`; `None`: unknown) and
/// whether `.qwen/` itself is ignored.
pub(crate) fn ignored_advice_for(rule: Option<String>, qwen_ignored: bool) -> String {
    let rule = rule
        .map(|r| format!("the rule `{r}`"))
        .unwrap_or_else(|| "an ignore rule".to_string());
    let lines = gitignore_fix(qwen_ignored)[1..].join("\n");
    format!(
        "({rule}); to share them, add these lines at the end of .gitignore and commit it:\n{lines}"
    )
}

/// The sync mode `init` sets up when neither `--branch` nor `--current-branch` is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeChoice {
    /// The memory branch (branch mode), or `None` (current-branch mode).
    pub memory_branch: Option<String>,
    /// Why, in one line the user reads.
    pub why: String,
}

/// Chooses the sync mode for `init`: an existing setup keeps its mode (branch mode recorded
/// or switched off in `.git/config`, a team folder tracked on the current branch, a memory
/// branch the remote already has); otherwise branch mode when the repository has a remote,
/// current-branch mode when it has none. Reads only.
pub fn choose_mode(project: &Project) -> Result<ModeChoice, OpError> {
    let current = |why: String| ModeChoice {
        memory_branch: None,
        why,
    };
    let branch = |name: &str, why: String| ModeChoice {
        memory_branch: Some(name.to_string()),
        why,
    };
    let Some(paths) = &project.repo else {
        return Ok(current("not inside a git repository".into()));
    };
    if let Some(cli) = CliRepo::needing_git(paths) {
        return git_cli::choose_mode(&cli);
    }
    let repo = repo::open(paths)?;
    if memory_branch::switched_off(&repo) {
        return Ok(current(format!(
            "{} = false in .git/config keeps the team memory on your branches",
            memory_branch::CONFIG_KEY
        )));
    }
    if let Some(name) = memory_branch::configured(&repo) {
        return Ok(branch(
            &name,
            format!(
                "this repository already uses branch mode ({} = {name})",
                memory_branch::CONFIG_KEY
            ),
        ));
    }
    if memory_branch::tracked_folder(&repo).is_some() {
        return Ok(current(format!(
            "{TEAM_DIR}/ is tracked on the current branch, an existing setup (`teammem init \
             --branch --migrate` moves it to a memory branch)"
        )));
    }
    if let Some(found) = memory_branch::mode(&repo)? {
        return Ok(branch(
            &found.name,
            format!("the remote already has the memory branch {}", found.name),
        ));
    }
    match memory_branch::choose_remote(&repo)? {
        Some(remote) => Ok(branch(
            memory_branch::DEFAULT_BRANCH,
            format!(
                "the repository has a remote ({remote}), so the team memory gets a branch of \
                 its own (`teammem init --current-branch` keeps it on your branches instead)"
            ),
        )),
        None => Ok(no_chosen_remote(&memory_branch::remote_names(&repo))),
    }
}

/// The mode when [`memory_branch::choose_remote`] found none: current-branch mode when there
/// is no remote at all; branch mode when there are several (none `origin`, no upstream), with
/// what to set so sync knows which one to share the memory branch through.
fn no_chosen_remote(remotes: &[String]) -> ModeChoice {
    if remotes.is_empty() {
        return ModeChoice {
            memory_branch: None,
            why: "the repository has no remote yet (after `git remote add`, `teammem init \
                  --branch` gives the team memory a branch of its own)"
                .into(),
        };
    }
    ModeChoice {
        memory_branch: Some(memory_branch::DEFAULT_BRANCH.to_string()),
        why: format!(
            "the repository has {} remotes ({}), so the team memory gets a branch of its own \
             (`teammem init --current-branch` keeps it on your branches instead); none is \
             `origin` and the current branch has no upstream, so until you set one (`git \
             branch --set-upstream-to <remote>/<branch>`, or `git remote rename <remote> \
             origin`) sync keeps it here",
            remotes.len(),
            remotes.join(", ")
        ),
    }
}

/// Switches branch mode off for this repository (`teammem.branch = false` in `.git/config`)
/// when it would otherwise be on — recorded, or found from the remote's memory branch —
/// because the user asked for current-branch mode. Returns whether it was switched off now.
pub fn keep_current_branch(project: &Project) -> Result<bool, OpError> {
    let Some(paths) = &project.repo else {
        return Ok(false);
    };
    if let Some(cli) = CliRepo::needing_git(paths) {
        // Recorded off, a remote's memory branch does not switch this clone to branch mode.
        let deadline = crate::git::remote::Deadline::after(std::time::Duration::from_secs(10));
        let key = memory_branch::CONFIG_KEY;
        if cli.config(key, &deadline)?.as_deref() == Some("false") {
            return Ok(false);
        }
        cli.run(
            &["config", key, "false"],
            &deadline,
            "writing teammem.branch (git config)",
        )?;
        return Ok(true);
    }
    let repo = repo::open(paths)?;
    if memory_branch::mode(&repo)?.is_none() {
        return Ok(false);
    }
    repo.config()
        .and_then(|c| c.open_level(git2::ConfigLevel::Local))
        .and_then(|mut c| c.set_str(memory_branch::CONFIG_KEY, "false"))
        .map_err(|e| GitError::git("writing teammem.branch to .git/config", e))?;
    Ok(true)
}

/// What `init` did or found.
#[derive(Debug, Clone, Serialize)]
pub struct Initialised {
    /// The team folder.
    pub team_dir: PathBuf,
    /// Whether the folder was created now.
    pub created: bool,
    /// Whether `MEMORY.md` was written.
    pub index_written: bool,
    /// Whether git ignores the team folder (after any fix).
    pub ignored: bool,
    /// The `.gitignore` lines that fix it, when it is ignored.
    pub fix_lines: Vec<String>,
    /// Whether `.gitignore` was changed now.
    pub gitignore_fixed: bool,
    /// The commit of that change on the current branch, when init could make it.
    pub gitignore_commit: Option<String>,
    /// Why the change was left uncommitted, with the command that commits it.
    pub gitignore_uncommitted: Option<String>,
}

/// The subject of the commit `init --fix-gitignore` makes.
pub const GITIGNORE_SUBJECT: &str = "chore(memory): let git see the team memory folder";

/// Creates `.qwen/team-memory/` and its index; checks (and with `fix`, repairs) `.gitignore`.
pub fn init(project: &Project, fix: bool) -> Result<Initialised, OpError> {
    let root = project.git_root()?.to_path_buf();
    let paths = project.repo_paths()?;
    let dir = project.check_scope_safe(ScopeKind::Team)?;
    let created = !dir.exists();
    fs::create_dir_all(&dir).map_err(|e| OpError::io(&dir, e))?;
    let (index_written, _) = project.rebuild_index(ScopeKind::Team)?;
    if !dir.join(INDEX_FILE).exists() {
        store::write_atomic(&dir.join(INDEX_FILE), b"")?;
    }

    let (mut ignored, qwen_ignored) = team_dir_ignored(paths)?;
    let fix_lines: Vec<String> = gitignore_fix(qwen_ignored)
        .into_iter()
        .map(String::from)
        .collect();
    let mut gitignore_fixed = false;
    let mut committed = Ok(None);
    if ignored && fix {
        let path = root.join(".gitignore");
        let before = match fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(OpError::io(&path, e)),
        };
        // Byte for byte: the user's lines stay exactly as they were, whatever their encoding.
        let mut text = before.clone().unwrap_or_default();
        if text.last().is_some_and(|b| *b != b'\n') {
            text.push(b'\n');
        }
        text.extend_from_slice(fix_lines.join("\n").as_bytes());
        text.push(b'\n');
        // A repository libgit2 cannot open gets the lines, and the command that commits them.
        let cli = CliRepo::needing_git(paths);
        let repo = match &cli {
            Some(_) => None,
            None => Some(repo::open(paths)?),
        };
        let untouched = match (&repo, &cli) {
            (Some(repo), _) => untouched_gitignore(repo, before.as_deref())?,
            (None, cli) => Err(format!(
                "init did not commit it ({})",
                cli.as_ref().map_or("", |c| c.why.as_str())
            )),
        };
        store::write_atomic(&path, &text)?;
        gitignore_fixed = true;
        ignored = team_dir_ignored(paths)?.0;
        committed = match (untouched, &repo) {
            (Ok(branch), Some(repo)) => commit_gitignore(repo, &branch, &text),
            (Ok(_), None) => Ok(Err("init did not commit it".to_string())),
            (Err(why), _) => Ok(Err(why)),
        }
        .map(Some);
    }
    let (gitignore_commit, gitignore_uncommitted) = match committed? {
        Some(Ok(id)) => (Some(id), None),
        Some(Err(why)) => (
            None,
            // `git commit -- PATH` commits that file alone; the rest of the index stays staged.
            Some(format!(
                "{why}; commit it with `git commit -m \"{GITIGNORE_SUBJECT}\" -- .gitignore`"
            )),
        ),
        None => (None, None),
    };
    Ok(Initialised {
        team_dir: dir,
        created,
        index_written,
        ignored,
        fix_lines: if ignored || gitignore_fixed {
            fix_lines
        } else {
            Vec::new()
        },
        gitignore_fixed,
        gitignore_commit,
        gitignore_uncommitted,
    })
}

/// The branch to commit `.gitignore` on, when init may commit it: a branch with a commit, no
/// operation in progress, and `.gitignore` (its bytes `before`, `None` when absent) exactly as
/// the branch has it, in the index and on disk. Otherwise why not, in the user's words.
fn untouched_gitignore(
    repo: &git2::Repository,
    before: Option<&[u8]>,
) -> Result<Result<crate::git::preflight::Branch, String>, OpError> {
    use crate::git::preflight::{self, Preflight};
    let branch = match preflight::preflight(repo, TEAM_DIR)? {
        Preflight::Ready(branch) => branch,
        Preflight::Blocked(blocker) => {
            return Ok(Err(format!("init did not commit it: {blocker}")));
        }
    };
    if branch.tip.is_none() {
        return Ok(Err(format!(
            "init did not commit it: {} has no commit yet",
            branch.refname
        )));
    }
    if !crate::git::file_commit::untouched_since_tip(repo, &branch, ".gitignore", before)? {
        return Ok(Err(
            "init did not commit it: .gitignore has changes of yours (staged or not), and the \
             commit would hold them too"
                .to_string(),
        ));
    }
    Ok(Ok(branch))
}

/// Commits the fixed `.gitignore` (`bytes`) alone on `branch`, holding the sync lock. The
/// commit id, or why it was not made.
fn commit_gitignore(
    repo: &git2::Repository,
    branch: &crate::git::preflight::Branch,
    bytes: &[u8],
) -> Result<Result<String, String>, OpError> {
    use crate::git::commit::CommitResult;
    use crate::ops::sync::{self, SyncOptions};
    let mut outcome = sync::SyncOutcome::default();
    let settings = sync::commit_settings(
        repo,
        &SyncOptions::default(),
        std::time::Instant::now() + sync::DEFAULT_TIMEOUT,
        &mut outcome,
    )?;
    let _lock = match sync::lock_for_setup(repo) {
        Ok(lock) => lock,
        Err(OpError::Refused(_)) => {
            return Ok(Err(
                "init did not commit it: a sync is running in this repository".to_string(),
            ));
        }
        Err(err) => return Err(err),
    };
    let message = format!(
        "{GITIGNORE_SUBJECT}\n\nAdded by `teammem init --fix-gitignore`: without these lines git \
         ignores {TEAM_DIR}/ and teammates' clones never get the memory files.\n"
    );
    let (result, _index) = crate::git::file_commit::commit_file(
        repo,
        branch,
        ".gitignore",
        bytes,
        &message,
        &settings,
    )?;
    Ok(match result {
        CommitResult::Committed(id) => Ok(id.to_string()),
        CommitResult::NothingToCommit => Err("init did not commit it: nothing changed".into()),
        CommitResult::HeadMoved => {
            Err("init did not commit it: the branch moved while it worked".into())
        }
        CommitResult::NotSigned(why) => Err(format!(
            "init did not commit it: the commit could not be signed ({why})"
        )),
        CommitResult::BranchLocked(lock) => Err(format!(
            "init did not commit it: another program holds {}",
            lock.display()
        )),
    })
}

/// Whether git ignores the team index or a memory file in any type folder, and whether it
/// ignores `.qwen/` itself. A fresh repository handle each time: libgit2 caches ignore rules per
/// handle.
pub fn team_dir_ignored(paths: &repo::RepoPaths) -> Result<(bool, bool), OpError> {
    if let Some(cli) = CliRepo::needing_git(paths) {
        return Ok(cli.team_dir_ignored(TEAM_DIR)?);
    }
    let repo = repo::open(paths)?;
    let ignored = crate::git::ignore_rule::ignored_team_path(&repo)?.is_some();
    let qwen = repo
        .is_path_ignored(".qwen/")
        .map_err(|e| GitError::git("checking whether git ignores .qwen/", e))?;
    Ok((ignored, qwen))
}
