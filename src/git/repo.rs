//! Finding and opening the repository a command runs in.

use std::path::{Path, PathBuf};

use git2::{Repository, RepositoryOpenFlags};

use super::GitError;

/// Where a repository lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPaths {
    /// The work tree's root: for a linked worktree, the worktree's own root.
    pub workdir: PathBuf,
    /// The git folder (for a linked worktree, its private folder under `.git/worktrees/`).
    pub git_dir: PathBuf,
}

/// Finds the repository containing `start`, like `git rev-parse --show-toplevel`. Returns
/// `Ok(None)` outside any repository and for a bare repository (it has no work tree).
pub fn discover(start: &Path) -> Result<Option<RepoPaths>, GitError> {
    match Repository::open_ext(
        start,
        RepositoryOpenFlags::empty(),
        std::iter::empty::<&Path>(),
    ) {
        Ok(repo) => Ok(repo.workdir().map(|workdir| RepoPaths {
            workdir: strip_trailing_slash(workdir),
            git_dir: strip_trailing_slash(repo.path()),
        })),
        Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(err) => Err(unsupported_or(start, err)),
    }
}

/// Opens the repository at `workdir` (found earlier by [`discover`]).
pub fn open(workdir: &Path) -> Result<Repository, GitError> {
    Repository::open(workdir).map_err(|err| unsupported_or(workdir, err))
}

/// libgit2 cannot read reftable repositories or unknown extensions; say so plainly instead of
/// passing on its message.
fn unsupported_or(path: &Path, err: git2::Error) -> GitError {
    let message = err.message().to_lowercase();
    if message.contains("extension")
        || message.contains("reftable")
        || message.contains("format version")
    {
        return GitError::Unsupported {
            path: path.display().to_string(),
            what: format!(
                "the repository uses a format libgit2 cannot open ({})",
                err.message()
            ),
            fix: "convert it with `git refs migrate --ref-format=files` or use a plain clone"
                .into(),
        };
    }
    GitError::git(format!("opening the repository at {}", path.display()), err)
}

fn strip_trailing_slash(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    let trimmed = text.trim_end_matches('/');
    if trimmed.is_empty() {
        path.to_path_buf()
    } else {
        PathBuf::from(trimmed)
    }
}
