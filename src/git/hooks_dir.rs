//! Where git looks for hooks: `core.hooksPath` when set, else the `hooks` folder of the common
//! git dir (shared by every linked worktree).

use std::path::{Path, PathBuf};

use git2::Repository;

use super::GitError;

/// The hooks folder git uses for `repo`, like `git rev-parse --git-path hooks`.
pub fn hooks_dir(repo: &Repository) -> Result<PathBuf, GitError> {
    let config = repo
        .config()
        .map_err(|e| GitError::git("reading the git config", e))?;
    // `get_path` expands a leading `~/` as git does for path-typed settings.
    match config.get_path("core.hooksPath") {
        Ok(path) if path.is_absolute() => Ok(path),
        // git resolves a relative hooksPath from where hooks run: the work tree's root (the git
        // dir in a bare repository).
        Ok(path) => Ok(repo.workdir().unwrap_or_else(|| repo.path()).join(path)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(common_dir(repo).join("hooks")),
        Err(e) => Err(GitError::git("reading core.hooksPath", e)),
    }
}

/// The same for a repository libgit2 cannot open (reftable refs, SHA-256 objects): its own
/// config file read beside the user's and the system's, as git layers them.
pub fn hooks_dir_in(common_dir: &Path, workdir: &Path) -> Result<PathBuf, GitError> {
    let mut config = crate::git::user_config::open_default()
        .map_err(|e| GitError::git("reading the git config", e))?;
    let local = common_dir.join("config");
    if local.exists() {
        config
            .add_file(&local, git2::ConfigLevel::Local, false)
            .map_err(|e| GitError::git(format!("reading {}", local.display()), e))?;
    }
    match config.get_path("core.hooksPath") {
        Ok(path) if path.is_absolute() => Ok(path),
        Ok(path) => Ok(workdir.join(path)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(common_dir.join("hooks")),
        Err(e) => Err(GitError::git("reading core.hooksPath", e)),
    }
}

fn common_dir(repo: &Repository) -> &Path {
    repo.commondir()
}
