//! Every repository configuration: discovery as git does it, the configuration matrix.

mod config_files;
mod configs;
mod discovery;
mod git_only;
mod git_only_branch;
mod git_only_branch_noop;
mod git_only_branch_race;
mod git_only_branch_signing;
mod git_only_check;
mod git_only_hardening;
mod git_only_range;
mod git_only_ref_updates;
mod matrix;
