//! The gate: trust rules, the labelled injection corpus, inert links at every door.

mod bad_files;
mod corpus;
mod inert;
mod names;
mod rules;
