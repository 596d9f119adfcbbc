//! The operations: what each command does, independent of how its arguments were spelled.
//!
//! An operation returns data (reports, listings) and an [`OpError`] on failure; the command line
//! turns both into text and an exit status.

pub(crate) mod add;
pub(crate) mod baseline;
pub(crate) mod catalog;
pub(crate) mod check;
pub(crate) mod cite;
pub(crate) mod context;
pub(crate) mod context_blocks;
pub(crate) mod delivery;
pub(crate) mod demo;
pub(crate) mod dream;
pub(crate) mod forget;
pub(crate) mod gate_cache;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod init;
pub(crate) mod install_agent;
pub(crate) mod install_mcp;
pub(crate) mod mcp;
pub(crate) mod memory_index;
pub(crate) mod pending;
pub(crate) mod project;
pub(crate) mod prompt_context;
pub(crate) mod quarantine;
pub(crate) mod recall;
pub(crate) mod references;
pub(crate) mod remember;
pub(crate) mod resolve;
pub(crate) mod review;
pub(crate) mod scan;
pub(crate) mod scope_write;
pub(crate) mod session_start;
pub(crate) mod share;
pub(crate) mod stale;
pub(crate) mod sync;
pub(crate) mod validate;

// The public face of the operations layer: what the tests and the benches drive directly.
pub use hooks::hook_script;
pub use project::Project;
pub use quarantine::TeamMemoryIndexGate;
pub use recall::{LiveRecall, LiveReport, Recalled, recall_live, recall_unaged};
pub use scan::scan;

use std::path::PathBuf;

use crate::domain::store::StoreError;
use crate::git::GitError;

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: findings, a stale index, invalid memories, or a refused write.
pub(crate) const EXIT_FINDINGS: u8 = 1;
/// Exit status: bad usage or an I/O or git error.
pub(crate) const EXIT_ERROR: u8 = 2;

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
