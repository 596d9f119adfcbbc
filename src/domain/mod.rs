//! The domain: memory files, the index, scopes and their folders. No git, no command line.

pub mod changes;
pub mod check;
pub mod conflict;
pub mod consolidate;
pub mod frontmatter;
pub mod gate;
pub mod index;
pub mod index_merge;
pub mod memory;
pub mod memory_diff;
pub mod recall;
pub mod recall_index;
pub mod recall_refresh;
pub mod scope;
pub mod secrets;
pub mod store;
pub mod trust;
pub mod usage;
