//! git's staging index (`.git/index`): what teammem reads of it and how it changes the team
//! folder's entries without touching any other.
//!
//! - [`entries`]: the one parser of the index file format (header, entries of versions 2 to 4,
//!   extensions), which both of the next two walk the file with.
//! - [`read`]: one folder's entries straight from the file, without loading the whole index.
//! - [`splice`]: the team folder's run of entries replaced in the file's bytes.
//! - [`git_cli`]: the same update through the git CLI, for the index forms libgit2 cannot read
//!   (split and sparse indexes).
//! - [`update`]: the new index built beside `.git/index` and put in place under git's lock.
//!
//! A file's stat data (what is written into an entry) is [`crate::domain::store::FileStamp`].

pub(crate) mod entries;
pub(crate) mod git_cli;
pub(crate) mod read;
pub(crate) mod splice;
pub(crate) mod update;
