//! git's staging index (`.git/index`): what teammem reads of it and how it changes the team
//! folder's entries without touching any other.
//!
//! - [`read`]: one folder's entries straight from the file, without loading the whole index.
//! - [`splice`]: the team folder's run of entries replaced in the file's bytes.
//! - [`update`]: the new index built beside `.git/index` and put in place under git's lock.

pub(crate) mod read;
pub(crate) mod splice;
pub(crate) mod update;
