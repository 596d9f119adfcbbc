//! The git engine: one file per git operation, each over a repository path, on libgit2.
//!
//! libgit2 runs no hooks, no fsmonitor and no credential or signing programs of its own accord;
//! where it differs from the git CLI in a way that matters here, the code says so at the spot.

pub(crate) mod cli;
pub(crate) mod cli_repo;
pub(crate) mod commit;
pub(crate) mod fast_forward;
pub(crate) mod fast_forward_cli;
pub(crate) mod fetch;
pub(crate) mod file_commit;
pub(crate) mod helper;
pub(crate) mod history;
pub(crate) mod hooks_dir;
pub(crate) mod ignore_rule;
pub(crate) mod memory_branch;
pub(crate) mod merge_driver;
pub(crate) mod missing_blobs;
pub(crate) mod noop_record;
pub(crate) mod offline;
pub(crate) mod oversized;
pub(crate) mod plain;
pub(crate) mod plain_remote;
pub(crate) mod preflight;
pub(crate) mod push;
pub(crate) mod recovery;
pub(crate) mod remote;
pub(crate) mod replay;
pub(crate) mod repo;
pub(crate) mod sign;
pub(crate) mod snapshot;
pub(crate) mod staged_removal;
pub(crate) mod staging_index;
pub(crate) mod status;
pub(crate) mod team_files;
pub(crate) mod tree_entries;
pub(crate) mod upstream;
pub(crate) mod user_config;

// The public face of the git layer: what the binary, the tests, the benches and the fuzz
// targets drive directly. Everything else stays inside the crate.
pub use fast_forward::{BranchMove, CheckoutBudget, fast_forward, move_branch};
pub use fetch::{Fetched, fetch};
pub use helper::serve_if_asked;
pub use push::{PushOutcome, push};
pub use recovery::{GitFolder, LEFT_IN_GIT, LeftInGit};
pub use remote::credentials::{CredentialSources, EnvToken};
pub use remote::deadline::Deadline;
pub use remote::failure::NetFailureKind;
pub use remote::git_cli::GitProgram;
pub use remote::options::{NetworkOptions, Transport};
pub use replay::{Divergence, KeptConflict, Replayed, classify, replay_sync_commits};
pub use staging_index::splice::{checksum_ok, split};
pub use upstream::{Upstream, UpstreamLookup, resolve as resolve_upstream};

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
    #[error("{path}: {what}; {fix}")]
    Unsupported {
        /// The repository.
        path: String,
        /// What is not supported.
        what: String,
        /// What the user can do.
        fix: String,
    },
    /// The installed git refused an operation teammem asked of it.
    #[error("{context}: {message}")]
    Cli {
        /// What was being done, and where.
        context: String,
        /// What git said, and what to do.
        message: String,
    },
    /// The time budget ran out in the middle of work that reads the whole memory branch (a
    /// `MEMORY.md` regenerated from every memory): nothing was written to any ref.
    #[error("the time budget ran out while {what}")]
    OutOfTime {
        /// What was being done.
        what: String,
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
