//! Finding and opening the repository a command runs in, as git finds it. Every command
//! goes through [`discover`]: with none of git's discovery variables set (`GIT_DIR`,
//! `GIT_WORK_TREE`, `GIT_COMMON_DIR`, `GIT_CEILING_DIRECTORIES`,
//! `GIT_DISCOVERY_ACROSS_FILESYSTEM`) the walk up from the current folder is done by hand for the
//! plain layout and by libgit2 otherwise; with any of them set, the installed git answers
//! (`git rev-parse`), since its rules (a relative `GIT_DIR`, the current folder as the work
//! tree when only `GIT_DIR` is set, `core.worktree`) are not libgit2's.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{Repository, RepositoryOpenFlags};

use super::GitError;

/// Environment variables with which git finds the repository otherwise than by walking up
/// from the current folder. `-C DIR` is the start folder itself, as in git.
pub const DISCOVERY_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
];

/// Where a repository lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoPaths {
    /// The work tree's root: for a linked worktree, the worktree's own root.
    pub workdir: PathBuf,
    /// The git folder (for a linked worktree, its private folder under `.git/worktrees/`).
    pub git_dir: PathBuf,
}

/// Whether the environment names the repository ([`DISCOVERY_VARIABLES`]).
pub fn found_through_environment() -> bool {
    DISCOVERY_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Finds the repository of a command started in `start`, as git does (see the module doc).
/// Returns `Ok(None)` outside any repository and for a repository with no work tree (bare, or
/// `start` inside the git folder).
pub fn discover(start: &Path) -> Result<Option<RepoPaths>, GitError> {
    if found_through_environment() {
        return match discover_with_git(start) {
            Some(found) => found,
            None => discover_with_libgit2(start, RepositoryOpenFlags::FROM_ENV),
        };
    }
    match discover_plain(start) {
        Some(found) => Ok(found),
        None => match discover_with_libgit2(start, RepositoryOpenFlags::empty()) {
            // A repository libgit2 cannot open (reftable refs, SHA-256 objects) is found by
            // git, and worked on through it (`git/cli_repo/`).
            // git's "not a repository" is no answer here: libgit2's error says what it found.
            Err(err @ GitError::Unsupported { .. }) => match discover_with_git(start) {
                Some(Ok(Some(found))) => Ok(Some(found)),
                _ => Err(err),
            },
            found => found,
        },
    }
}

/// What the installed git says: `git rev-parse` in `start` with the process's environment.
/// `None` when git cannot be run (then libgit2's reading of the environment is the answer).
fn discover_with_git(start: &Path) -> Option<Result<Option<RepoPaths>, GitError>> {
    // `rev-parse` reads no index and runs no hook; the settings only make sure of it.
    let out = Command::new("git")
        .current_dir(start)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(["rev-parse", "--path-format=absolute", "--absolute-git-dir"])
        .arg("--show-toplevel")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let git_dir = lines.next().filter(|l| !l.is_empty());
    let workdir = lines.next().filter(|l| !l.is_empty());
    Some(match (git_dir, workdir) {
        (Some(git_dir), Some(workdir)) if out.status.success() => Ok(Some(RepoPaths {
            workdir: PathBuf::from(workdir),
            git_dir: PathBuf::from(git_dir),
        })),
        // A repository with no work tree ("this operation must be run in a work tree").
        (Some(_), _) => Ok(None),
        // `GIT_DIR` naming no repository is a mistake to show, not "no repository here".
        (None, _) if std::env::var_os("GIT_DIR").is_some() => Err(GitError::Cli {
            context: format!(
                "finding the repository GIT_DIR={} names",
                Path::new(&std::env::var_os("GIT_DIR").unwrap_or_default()).display()
            ),
            message: format!(
                "{} — set GIT_DIR to a repository's git folder, or unset it",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }),
        (None, _) => Ok(None),
    })
}

/// libgit2's walk up from `start` (with `FROM_ENV`: reading git's variables its own way).
fn discover_with_libgit2(
    start: &Path,
    flags: RepositoryOpenFlags,
) -> Result<Option<RepoPaths>, GitError> {
    let opened = if flags.contains(RepositoryOpenFlags::FROM_ENV) {
        match std::env::var_os("GIT_DIR") {
            Some(dir) => Repository::open_ext(
                start.join(dir),
                flags | RepositoryOpenFlags::NO_SEARCH,
                std::iter::empty::<&Path>(),
            ),
            None => Repository::open_ext(start, flags, std::iter::empty::<&Path>()),
        }
    } else {
        Repository::open_ext(start, flags, std::iter::empty::<&Path>())
    };
    match opened {
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
/// `git/plain.rs` reads it. With a discovery variable set, or anything else (a submodule's `.git` file, a bare repository,
/// another owner, a reftable repository) answers `None`, and [`discover`] decides as before.
pub fn discover_plain(start: &Path) -> Option<Option<RepoPaths>> {
    use std::os::unix::fs::MetadataExt;
    if found_through_environment() {
        return None;
    }
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

/// Opens the repository [`discover`] found: its git folder, with its work tree as found (git's
/// rules, which libgit2 does not always derive from the git folder alone: `--separate-git-dir`,
/// a work tree named by `GIT_WORK_TREE` or the current folder).
///
/// libgit2 is not asked to read the environment here (`FROM_ENV`): it would take a relative
/// `GIT_WORK_TREE` from the git folder, not from where the command started. `GIT_COMMON_DIR`,
/// which only that mode follows, is refused with the fix.
pub fn open(paths: &RepoPaths) -> Result<Repository, GitError> {
    if std::env::var_os("GIT_COMMON_DIR").is_some() {
        return Err(GitError::Unsupported {
            path: paths.git_dir.display().to_string(),
            what: "GIT_COMMON_DIR is set, and libgit2 cannot follow it together with the \
                   work tree git found"
                .into(),
            fix: format!(
                "this command needs libgit2 ({THROUGH_GIT}); for it, unset GIT_COMMON_DIR (a \
                 linked worktree's `commondir` file names the same folder)"
            ),
        });
    }
    let repo = Repository::open_ext(
        &paths.git_dir,
        RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::NO_DOTGIT,
        std::iter::empty::<&Path>(),
    )
    .map_err(|err| unsupported_or(&paths.workdir, err))?;
    if repo.workdir().map(strip_trailing_slash).as_deref() != Some(paths.workdir.as_path()) {
        repo.set_workdir(&paths.workdir, false).map_err(|err| {
            GitError::git(
                format!("using {} as the work tree", paths.workdir.display()),
                err,
            )
        })?;
    }
    super::user_config::follow_environment(&repo).map_err(|err| {
        GitError::git(
            "reading the git config files GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM or \
             GIT_CONFIG_NOSYSTEM name",
            err,
        )
    })?;
    Ok(repo)
}

/// Opens the repository whose work tree is `workdir` (`workdir/.git`), whatever the
/// environment says: for repositories teammem made itself (the demo's clones).
pub fn open_work_tree(workdir: &Path) -> Result<Repository, GitError> {
    Repository::open(workdir).map_err(|err| unsupported_or(workdir, err))
}

/// What runs through the installed git in a repository libgit2 cannot open.
const THROUGH_GIT: &str = "`sync`, `session-start`, `init`, `install-hooks`, `check` (every \
                           source), `review`, `recall`, `stale` and `baseline` run here through \
                           git";

/// libgit2 cannot read reftable repositories or unknown extensions; say so plainly instead of
/// passing on its message, with a fix that works for the extension found: `git refs migrate`
/// converts reftable refs and nothing else.
fn unsupported_or(path: &Path, err: git2::Error) -> GitError {
    if err.code() == git2::ErrorCode::Owner {
        // git's own check (`safe.directory`), which libgit2 applies the same way.
        return GitError::Unsupported {
            path: path.display().to_string(),
            what: "the repository belongs to another user, and git works in such a \
                   repository only when it is marked safe (CVE-2022-24765)"
                .into(),
            fix: format!(
                "if you trust it, run `git config --global --add safe.directory {}`, as git \
                 itself advises",
                path.display()
            ),
        };
    }
    let message = err.message().to_lowercase();
    if message.contains("object format") {
        return GitError::Unsupported {
            path: path.display().to_string(),
            what: format!(
                "the repository's objects are SHA-256, which libgit2 cannot read ({})",
                err.message()
            ),
            fix: format!(
                "this command needs libgit2 ({THROUGH_GIT}); for it, use a SHA-1 clone of \
                 the project (`git init --object-format=sha1`)"
            ),
        };
    }
    if message.contains("refstorage") || message.contains("reftable") {
        return GitError::Unsupported {
            path: path.display().to_string(),
            what: format!(
                "the repository keeps its refs in reftable, which libgit2 cannot open ({})",
                err.message()
            ),
            fix: format!(
                "this command needs libgit2 ({THROUGH_GIT}); for it, clone the repository \
                 again with `git clone --ref-format=files`, or convert it with `git refs \
                 migrate --ref-format=files` (git 2.48 or later: 2.46 and 2.47 refuse a \
                 repository with reflogs; not with linked worktrees)"
            ),
        };
    }
    if message.contains("extension") || message.contains("format version") {
        return GitError::Unsupported {
            path: path.display().to_string(),
            what: format!(
                "the repository uses a format libgit2 cannot open ({})",
                err.message()
            ),
            fix: "use a clone without that setting (`git config --get-regexp '^extensions\\.'` \
                  lists the repository's extensions)"
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
