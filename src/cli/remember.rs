//! `teammem remember`

use std::io::Read;

use clap::Args;

use super::ScopeArg;
use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Write memories from JSON patches on standard input (what a memory extractor hands over).
///
/// Input: a JSON array of patches, one patch, or one patch per line. A patch:
/// {"type": "feedback", "name" (or "summary"): "...", "description": "...", "why": "...",
/// "how_to_apply": "...", "body": "...", "keywords": [...], "scope": "private|team|user"}.
/// Dropped, each with its reason: a summary under 12 characters (too-short), one ending in `?`
/// (question), one about the moment — today, now, currently, for this task, this session,
/// temporary, temporarily (about-the-moment), one the scope already has (duplicate), and an
/// invalid patch (invalid). Exit status 1 when a patch was refused by the secret guard.
#[derive(Debug, Args)]
pub struct RememberArgs {
    /// The scope for patches that do not name one.
    #[arg(long, value_enum, default_value = "private")]
    scope: ScopeArg,
    /// Print JSON: {written: [{patch, scope, id}], dropped: [{patch, summary, reason, detail}]}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem remember`; returns its exit status.
pub fn run(project: &Project, args: RememberArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| OpError::Usage(format!("cannot read standard input: {e}")))?;
    let patches = ops::remember::parse_patches(&input)?;
    let done = ops::remember::remember(project, &patches, args.scope.into())?;
    if json {
        super::print_json(&done)?;
    } else {
        for w in &done.written {
            status!("Remembered {}:{}", w.scope, w.id);
        }
        for d in &done.dropped {
            outln!("Dropped \"{}\" ({}): {}", d.summary, d.reason, d.detail);
        }
    }
    Ok(if done.dropped.iter().any(|d| d.reason == "secret") {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}
