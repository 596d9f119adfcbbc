//! The git engine: one file per git operation, each over a repository path, on libgit2.
//!
//! libgit2 runs no hooks, no fsmonitor and no credential or signing programs of its own accord;
//! where it differs from the git CLI in a way that matters here, the code says so at the spot.

pub mod credentials;
pub mod fast_forward;
pub mod fetch;
pub mod file_history;
pub mod folder_history;
pub mod history;
pub mod hooks_dir;
pub mod index_file;
pub mod push;
pub mod replay;
pub mod repo;
pub mod snapshot;
pub mod team_files;
pub mod transport;
pub mod upstream;

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
}

impl GitError {
    /// Wraps a libgit2 error with what was being done.
    pub fn git(context: impl Into<String>, source: git2::Error) -> Self {
        GitError::Git {
            context: context.into(),
            source,
        }
    }
}
