//! How sync reaches a remote — one home for the remote side of the git engine: the deadline,
//! the transport options, credentials, libgit2's timeouts, the git CLI runner and the
//! failures, with the same guarantees on both transports (libgit2's own, or the installed git
//! with `--transport git-cli`): one time budget, no prompts.

pub mod callbacks;
pub(crate) mod child;
pub mod credentials;
pub mod deadline;
pub mod failure;
pub mod git_cli;
pub mod options;

pub use deadline::Deadline;
pub use failure::{NetFailure, NetFailureKind, redact_url_credentials};
pub use git_cli::GitProgram;
pub use options::{NetworkOptions, Transport};
