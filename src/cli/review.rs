//! `teammem review`

use clap::{Args, ValueEnum};

use crate::ops::{self, EXIT_OK, OpError, Project};

/// Show what BASE..HEAD changes in the team memory, for a pull request comment.
///
/// Each memory added, removed, modified or renamed (renames found by content similarity), its
/// frontmatter changes as `field: old → new`, its body changes as a word-level diff, the risks
/// `teammem check --range BASE..HEAD` finds in it, and who changed it when. The old side is the
/// merge base of BASE and HEAD, as a pull request page shows it. Output is deterministic.
/// Exit status 0 whatever the risks (use `check` to fail a build); 2 on a usage or git error.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The range, e.g. origin/main..HEAD.
    #[arg(value_name = "BASE..HEAD")]
    range: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Markdown)]
    format: ReviewFormat,
}

/// How the review is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// Markdown for a pull request comment.
    Markdown,
    /// {base, head, merge_base, head_commit, summary, memories, other_files, other_risks}.
    Json,
}

/// Runs `teammem review`; returns its exit status.
pub fn run(project: &Project, args: ReviewArgs) -> Result<u8, OpError> {
    let review = ops::review::review(project, &args.range)?;
    match args.format {
        ReviewFormat::Markdown => print!("{}", ops::review_format::markdown(&review)),
        ReviewFormat::Json => super::print_json(&review)?,
    }
    Ok(EXIT_OK)
}
