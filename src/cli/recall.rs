//! `teammem recall`

use clap::Args;

use super::ScopeArg;
use crate::domain::usage;
use crate::ops::recall::IndexUse;
use crate::ops::{self, EXIT_OK, OpError, Project};

/// Find the memories most relevant to a query, across the enabled scopes.
///
/// Ranked by BM25F: rare words count more than common ones, a match in a short field more than
/// in a long one, the title and keywords more than the body; stop words are ignored and words
/// stemmed (English and Russian Snowball), so "researching" finds "research". Text is compared
/// without case or accents, full-width forms folded; Chinese, Japanese and Korean are matched by
/// two-character pieces; other words need at least 2 characters. Ties are broken by type words
/// (like "feedback" or "deadline"), then freshness, scope and path. Each result says how old it is (from the last commit that touched it when git tracks
/// it, else the file time) and, for tracked memories, who changed it last.
///
/// A recall index in each scope's state folder (never in the memory folder) spares reading
/// every memory: only new and changed files are read, and the results are the same.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// What to look for.
    query: String,
    /// At most this many results.
    #[arg(long, default_value_t = ops::recall::DEFAULT_MAX)]
    max: usize,
    /// Cut each body after this many characters (with a note).
    #[arg(long, default_value_t = ops::recall::DEFAULT_CHARS)]
    chars: usize,
    /// Only this scope.
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: {query, tokens, scanned, hits: [{scope, id, type, name, description, path,
    /// score, age_days, age, changed_at, changed_from, changed_by, body, body_cut, usage_count,
    /// last_usage}]}.
    #[arg(long)]
    json: bool,
    /// Read every memory file instead of the recall index (which is then neither read nor
    /// updated). The results are the same; this checks that, and measures the difference.
    #[arg(long)]
    no_index: bool,
}

/// Runs `teammem recall`; returns its exit status.
pub fn run(project: &Project, args: RecallArgs) -> Result<u8, OpError> {
    let scopes = super::scopes(project, args.scope);
    let index = if args.no_index {
        IndexUse::Off
    } else {
        IndexUse::STANDARD
    };
    let found =
        ops::recall::recall_with(project, &scopes, &args.query, args.max, args.chars, index)?;
    if args.json {
        super::print_json(&found)?;
        return Ok(EXIT_OK);
    }
    if found.hits.is_empty() {
        println!("No memory matches \"{}\".", args.query);
        return Ok(EXIT_OK);
    }
    for (n, hit) in found.hits.iter().enumerate() {
        let who = hit
            .changed_by
            .as_ref()
            .map(|w| format!(", last changed by {w}"))
            .unwrap_or_default();
        let used = match hit.last_usage {
            Some(t) => format!(
                "; cited {} time{}, last {}",
                hit.usage_count,
                if hit.usage_count == 1 { "" } else { "s" },
                usage::utc_text(t)
            ),
            None => String::new(),
        };
        println!(
            "{}. {}:{} — {} ({}, score {})\n   {}\n   {}{who}{used}\n",
            n + 1,
            hit.scope,
            hit.id,
            hit.name,
            hit.kind,
            hit.score,
            hit.description,
            hit.age
        );
        for line in hit.body.lines() {
            println!("   {line}");
        }
        println!();
    }
    Ok(EXIT_OK)
}
