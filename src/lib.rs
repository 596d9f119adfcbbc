//! teammem: a memory for coding agents that a whole team shares through git.
//!
//! The crate is layered so that dependencies point one way: [`cli`] (one file per command)
//! calls [`ops`] (the operations), which use [`domain`] (memory files, index, scopes) and
//! [`git`] (one file per git operation). The domain never touches git or the command line.

// Every public item says what it is; nothing that can fail at run time unwraps (tests may).
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod cli;
pub mod domain;
pub mod git;
pub mod ops;
