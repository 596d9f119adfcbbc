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

/// [`discover`] without libgit2, for commands that only need to know where the work tree is
/// (`scan`, and `sync` for its fast no-op): starting libgit2 initialises OpenSSL, which costs
/// more than scanning a team folder. Handles the plain layout only — a `.git` folder with
/// `HEAD`, owned by this user, in `start` or a parent on the same file system, with a config
/// naming no work tree, bareness or extension, or a linked worktree's `.git` file as
/// `git/plain.rs` reads it. Anything else (a submodule's `.git` file, a bare repository,
/// another owner, a reftable repository) answers `None`, and [`discover`] decides as before.
pub fn discover_plain(start: &Path) -> Option<Option<RepoPaths>> {
    use std::os::unix::fs::MetadataExt;
    let start = std::fs::canonicalize(start).ok()?;
    let device = std::fs::metadata(&start).ok()?.dev();
    let me = crate::sys::effective_uid();
    for dir in start.ancestors() {
        let meta = std::fs::metadata(dir).ok()?;
        if meta.dev() != device || dir.join("HEAD").exists() {
            // Another file system, or `dir` may itself be a git folder: libgit2's rules.
            return None;
        }
        let dot_git = dir.join(".git");
        match std::fs::metadata(&dot_git) {
            Ok(m) if m.is_dir() => {
                let config = std::fs::read_to_string(dot_git.join("config")).ok()?;
                let unusual = config.lines().any(|line| {
                    let line: String = line
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect::<String>()
                        .to_ascii_lowercase();
                    line == "bare=true"
                        || line.starts_with("worktree")
                        || line.starts_with("[extensions")
                });
                let plain = m.uid() == me
                    && meta.uid() == me
                    && dot_git.join("HEAD").is_file()
                    && !dot_git.join("reftable").exists()
                    && !unusual;
                return plain.then(|| {
                    Some(RepoPaths {
                        workdir: strip_trailing_slash(dir),
                        git_dir: dot_git,
                    })
                });
            }
            // A linked worktree's gitfile, when its layout is the plain one.
            Ok(m) if m.is_file() => {
                let linked = super::plain::PlainRepo::at(dir).filter(|r| r.is_linked_worktree())?;
                return Some(Some(RepoPaths {
                    workdir: strip_trailing_slash(dir),
                    git_dir: linked.git_dir,
                }));
            }
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        }
    }
    Some(None)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn plain_discovery_agrees_with_libgit2_or_leaves_the_case_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let repo = root.join("project");
        let deep = repo.join("src/deep");
        std::fs::create_dir_all(&deep).unwrap();
        git(&repo, &["init", "-q"]);
        for dir in [&repo, &deep] {
            assert_eq!(discover_plain(dir), Some(discover(dir).unwrap()), "{dir:?}");
        }
        assert_eq!(discover_plain(&deep).unwrap().unwrap().workdir, repo);
        // Outside any repository (unless the walk up crosses a file system, left to libgit2).
        if let Some(found) = discover_plain(&root) {
            assert_eq!(found, None);
            assert_eq!(discover(&root).unwrap(), None);
        }

        // A linked worktree (a `.git` file) is found as libgit2 finds it; a bare repository is
        // libgit2's to decide.
        git(
            &repo,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "c",
            ],
        );
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                root.join("linked").to_str().unwrap(),
            ],
        );
        let linked = root.join("linked");
        assert_eq!(discover_plain(&linked), Some(discover(&linked).unwrap()));
        git(&root, &["init", "-q", "--bare", "bare.git"]);
        assert_eq!(discover_plain(&root.join("bare.git")), None);
        assert_eq!(discover(&root.join("bare.git")).unwrap(), None);

        // A repository with `core.bare` set is not the plain layout either.
        let odd = root.join("odd");
        std::fs::create_dir_all(&odd).unwrap();
        git(&odd, &["init", "-q"]);
        git(&odd, &["config", "core.bare", "true"]);
        assert_eq!(discover_plain(&odd), None);
    }
}
