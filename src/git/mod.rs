//! The git engine: one file per git operation, each over a repository path, on libgit2.
//!
//! libgit2 runs no hooks, no fsmonitor and no credential or signing programs of its own accord;
//! where it differs from the git CLI in a way that matters here, the code says so at the spot.

pub mod checkout_resume;
pub mod commit;
pub mod fast_forward;
pub mod fetch;
pub mod file_history;
pub mod folder_history;
pub mod helper;
pub mod history;
pub mod hooks_dir;
pub mod index;
pub mod index_file;
pub mod index_splice;
pub mod lock;
pub mod memory_branch;
pub mod merge_driver;
pub mod offline;
pub mod oversized;
pub mod preflight;
pub mod push;
pub mod ref_intent;
pub mod remote;
pub mod replay;
pub mod repo;
pub mod sign;
pub mod snapshot;
pub mod status;
pub mod team_files;
pub mod transfer_note;
pub mod upstream;

/// The remote's options and failures under the name they had before `remote/` held them.
pub use remote as transport;
/// Credentials under the path they had before `remote/` held them.
pub use remote::credentials;

/// Errors from the git engine, with the operation and the repository they concern.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// libgit2 refused an operation.
    #[error("{context}: {}", source.message())]
    Git {
        /// What was being done, and where.
        context: String,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// The repository uses a format libgit2 cannot read.
    #[error("{path}: {what} — teammem cannot work in this repository; {fix}")]
    Unsupported {
        /// The repository.
        path: String,
        /// What is not supported.
        what: String,
        /// What the user can do.
        fix: String,
    },
    /// A file in the git folder or the work tree could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

impl GitError {
    /// Wraps a libgit2 error with what was being done.
    pub fn git(context: impl Into<String>, source: git2::Error) -> Self {
        GitError::Git {
            context: context.into(),
            source,
        }
    }

    /// Wraps an I/O error with the file it concerns.
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        GitError::Io {
            path: path.into(),
            source,
        }
    }
}

/// A new empty repository in a temp folder, for the engine's unit tests.
#[cfg(test)]
pub(crate) fn scratch_repo() -> (tempfile::TempDir, git2::Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    (dir, repo)
}

/// Runs the git CLI in `dir` with no system or global config and a fixed identity, for the
/// engine's unit tests; returns its standard output and panics with its error output if it fails.
#[cfg(test)]
pub(crate) fn git_cli(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
