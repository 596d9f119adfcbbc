//! Setting up team memory in a repository: the folder, its index, and a `.gitignore` that lets
//! git see it.

use std::fs;
use std::path::PathBuf;

use serde::Serialize;

use crate::domain::scope::{INDEX_FILE, ScopeKind};
use crate::domain::store;
use crate::git::{GitError, repo};

use super::{OpError, Project};

pub(crate) mod branch;

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
    let rule = crate::git::ignore_rule::rule_for(repo, path)
        .map(|r| format!("the rule `{r}`"))
        .unwrap_or_else(|| "an ignore rule".to_string());
    let qwen_ignored = repo.is_path_ignored(".qwen/").unwrap_or(false);
    let lines = gitignore_fix(qwen_ignored)[1..].join("\n");
    format!(
        "({rule}); to share them, add these lines at the end of .gitignore and commit it:\n{lines}"
    )
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
}

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
    if ignored && fix {
        let path = root.join(".gitignore");
        let mut text = fs::read_to_string(&path).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&fix_lines.join("\n"));
        text.push('\n');
        store::write_atomic(&path, text.as_bytes())?;
        gitignore_fixed = true;
        ignored = team_dir_ignored(paths)?.0;
    }
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
    })
}

/// Whether git ignores the team index or a memory file in any type folder, and whether it
/// ignores `.qwen/` itself. A fresh repository handle each time: libgit2 caches ignore rules per
/// handle.
pub fn team_dir_ignored(paths: &repo::RepoPaths) -> Result<(bool, bool), OpError> {
    let repo = repo::open(paths)?;
    let ignored = crate::git::ignore_rule::ignored_team_path(&repo)?.is_some();
    let qwen = repo
        .is_path_ignored(".qwen/")
        .map_err(|e| GitError::git("checking whether git ignores .qwen/", e))?;
    Ok((ignored, qwen))
}
