//! `teammem check` and `review`: the pre-commit hook, ranges, baselines, CI formats.

mod all_parallel;
mod baseline;
mod cli;
mod hooks;
mod range_parallel;
mod review;
