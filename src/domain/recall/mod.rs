//! Recall: which memories answer a query, one concern per file, in the order a query meets them.
//!
//! - [`scoring`]: text folded into terms, and the BM25F score that ranks memories.
//! - [`index`]: the on-disk recall index of a scope (postings, field lengths, file stamps).
//! - [`refresh`]: proving the on-disk index fresh against the folder (stamps), reading it, and
//!   rebuilding what changed.
//! - [`live`]: the same index held in memory by a long-lived process (`teammem mcp`).
//! - [`usage`]: how often each memory was surfaced, read and cited, kept locally for tie-breaks
//!   and `teammem stale`.

pub(crate) mod index;
pub(crate) mod live;
pub(crate) mod refresh;
pub(crate) mod scoring;
pub(crate) mod usage;

pub(crate) use scoring::*;
