//! teammem: a memory for coding agents that a whole team shares through git.
//!
//! The crate is layered so that dependencies point one way: [`cli`] (one file per command)
//! calls [`ops`] (the operations), which use the domain (memory files, index, scopes) and
//! [`git`] (one file per git operation). The domain never touches git or the command line.
//!
//! Every module below those layers is private to the crate. The public API is curated:
//! [`cli::main`], the few operations in [`ops`], the git operations in [`git`], and the
//! domain's parsers and limits in [`memory`], [`memory_index`], [`store`], [`gate`], [`scope`],
//! [`secrets`], [`recall`], [`recall_index`], [`hook_state`] and [`agent_config`] — exactly
//! what the binary, the tests, the benches and the fuzz targets drive.

// Every public item says what it is; nothing that can fail at run time unwraps (tests may).
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]
// `unsafe` only in `sys`, behind safe functions, each block with its proof.
#![deny(unsafe_code)]

pub mod cli;
pub(crate) mod domain;
pub mod git;
pub mod ops;
#[allow(unsafe_code)]
pub(crate) mod sys;

// The domain's public face, one module per concern, each exactly what the tests, benches and
// fuzz targets use. The domain's own modules stay inside the crate.

/// Memory files: parsing, rendering and their types.
pub mod memory {
    pub use crate::domain::memory::{MAX_FILE_BYTES, MemoryFile, MemoryType};
}

/// `MEMORY.md`, the memory index: its lines, its limits and how it is rendered.
pub mod memory_index {
    pub use crate::domain::memory_index::{
        IndexLine, MAX_BYTES, MAX_FILES, MAX_LINES, MAX_UNITS, WARNING, locale_cmp, render,
    };
}

/// Loading a scope's memories and writing its index.
pub mod store {
    pub use crate::domain::store::{load, load_index_entries, write_index};
}

/// What may enter team memory: the team index as the gate writes it, the transform every
/// door applies to what an agent reads, and the gate's verdict on one memory body.
pub mod gate {
    pub use crate::domain::gate::{data_block, for_agent, judge_body, team_index_md};
}

/// Scopes: where memory folders live and which switches turn team memory on.
pub mod scope {
    pub use crate::domain::scope::{
        Environment, INDEX_FILE, ScopeKind, TeamSwitches, sanitize_git_root,
    };
}

/// The secret scanner: findings in a text and their fingerprints.
pub mod secrets {
    pub use crate::domain::secrets::{fingerprint, scan_text};
}

/// Recall queries.
pub mod recall {
    pub use crate::domain::recall::scoring::Query;
}

/// What the agent hooks read: the client's input on stdin and the machine-local state files
/// they read back (session records, usage, the gate's answers kept for turns).
pub mod hook_state {
    pub use crate::domain::hook_input::HookInput;
    pub use crate::domain::recall::usage::{UsageBook, UseKind, Used, age_text, utc_text};
    pub use crate::ops::delivery::sessions::SessionRecord;
    pub use crate::ops::gate_cache::TurnVerdicts;
}

/// The client configuration files `install-agent` edits, as text.
pub mod agent_config {
    pub use crate::ops::install_agent::{AgentFile, edit_text};
}

/// The on-disk recall index: its format, checksum and token maps.
pub mod recall_index {
    pub use crate::domain::recall::index::{MAGIC, RecallIndex, checksum, encode, merge_tokens};
    pub use crate::domain::recall::scoring::TokenMap;
}
