//! The gate: trust rules, the labelled injection corpus, inert links at every door.

mod corpus;
mod inert;
mod rules;
