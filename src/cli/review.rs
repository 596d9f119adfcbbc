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
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Keep the markdown within this many characters (GitHub's comment limit is 65536): sections
    /// past it are shown without their body or left out, and a closing note says so. At least
    /// 2000. Not for --format json.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2000..))]
    max_chars: Option<u64>,
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
    let format = if args.json {
        ReviewFormat::Json
    } else {
        args.format
    };
    if args.max_chars.is_some() && format == ReviewFormat::Json {
        return Err(OpError::Usage(
            "--max-chars cuts the markdown review; drop it with --format json".into(),
        ));
    }
    let review = ops::review::review(project, &args.range)?;
    let max_chars = args
        .max_chars
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    match format {
        ReviewFormat::Markdown => out!(
            "{}",
            super::shown(&ops::review::format::markdown_within(&review, max_chars))
        ),
        ReviewFormat::Json => super::print_json(&review)?,
    }
    Ok(EXIT_OK)
}
