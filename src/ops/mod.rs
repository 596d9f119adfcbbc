//! The operations: what each command does, independent of how its arguments were spelled.
//!
//! An operation returns data (reports, listings) and an [`OpError`] on failure; the command line
//! turns both into text and an exit status.

pub mod add;
pub mod baseline;
pub mod catalog;
pub mod check;
pub mod cite;
pub mod context;
pub mod demo;
pub mod dream;
pub mod forget;
pub mod guard;
pub mod hooks;
pub mod index;
pub mod init;
pub mod init_branch;
pub mod install_mcp;
pub mod mcp;
pub mod project;
pub mod quarantine;
pub mod recall;
pub mod remember;
pub mod resolve;
pub mod review;
pub mod scan;
pub mod scope_write;
pub mod session_start;
pub mod share;
pub mod stale;
pub mod sync;
pub mod sync_branch;
pub mod validate;

pub use project::Project;

use std::path::PathBuf;

use crate::domain::store::StoreError;
use crate::git::GitError;

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: findings, a stale index, invalid memories, or a refused write.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status: bad usage or an I/O or git error.
pub const EXIT_ERROR: u8 = 2;

/// Why an operation did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// The request itself is wrong (a bad id, a missing repository).
    #[error("{0}")]
    Usage(String),
    /// The request was understood and refused (a duplicate name, a secret in team memory).
    #[error("{0}")]
    Refused(String),
    /// Reading or writing memory folders failed, or a path was unsafe.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A git operation failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// Some other file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}

impl OpError {
    /// The documented exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            OpError::Refused(_) | OpError::Store(StoreError::UnsafePath { .. }) => EXIT_FINDINGS,
            _ => EXIT_ERROR,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        OpError::Io {
            path: path.into(),
            source,
        }
    }
}
