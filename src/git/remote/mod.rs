//! How sync reaches a remote — one home for the remote side of the git engine: the deadline,
//! the transport options, credentials, libgit2's timeouts, the git CLI runner and the
//! failures, with the same guarantees on both transports (libgit2's own, or the installed git
//! with `--transport git-cli`): one time budget, no prompts.

pub(crate) mod advertise;
pub(crate) mod callbacks;
pub(crate) mod child;
pub(crate) mod credentials;
pub(crate) mod deadline;
pub(crate) mod failure;
pub(crate) mod git_cli;
pub(crate) mod options;
pub(crate) mod tls;

pub(crate) use advertise::Advertisement;
pub(crate) use deadline::Deadline;
pub(crate) use failure::{NetFailure, NetFailureKind};
pub(crate) use git_cli::GitProgram;
pub(crate) use options::{NetworkOptions, Transport};
