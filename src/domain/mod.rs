//! The domain: memory files, the index, scopes and their folders. No git, no command line.

pub(crate) mod changes;
pub(crate) mod check;
pub(crate) mod check_config;
pub(crate) mod conflict;
pub(crate) mod consolidate;
pub(crate) mod frontmatter;
pub(crate) mod gate;
pub(crate) mod hook_input;
pub(crate) mod memory;
pub(crate) mod memory_diff;
pub(crate) mod memory_index;
pub(crate) mod recall;
pub(crate) mod references;
pub(crate) mod scope;
pub(crate) mod secrets;
pub(crate) mod store;
