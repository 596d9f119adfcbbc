//! `teammem recall`

use clap::Args;

use super::ScopeArg;
use crate::domain::gate;
use crate::domain::recall::usage;
use crate::ops::recall::RecallIndexUse;
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
/// Results pass the memory gate: a memory holding a secret, a trust error or an unreadable
/// frontmatter is left out and counted in one line; the rest is printed without hidden
/// characters and with markup escaped.
///
/// A recall index in each scope's state folder (never in the memory folder) spares reading
/// every memory: only new and changed files are read, and the results are the same.
#[derive(Debug, Args)]
pub struct RecallArgs {
    /// What to look for.
    query: String,
    /// At most this many results.
    #[arg(long, alias = "max", value_name = "N", default_value_t = ops::recall::DEFAULT_MAX)]
    limit: usize,
    /// Cut each body after this many characters (with a note).
    #[arg(long, alias = "chars", value_name = "N", default_value_t = ops::recall::DEFAULT_CHARS)]
    max_chars: usize,
    /// Only this scope.
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Print JSON: {query, tokens, scanned, hits: [{scope, id, type, name, description, path,
    /// score, age_days, age, changed_at, changed_from, changed_by, body, body_cut, usage_count,
    /// last_usage, references}], withheld, withheld_rules}; `references` is the line saying
    /// whether the paths the memory names hold at HEAD.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
    /// Read every memory file instead of the recall index (which is then neither read nor
    /// updated). The results are the same; this checks that, and measures the difference.
    #[arg(long)]
    no_index: bool,
}

/// Runs `teammem recall`; returns its exit status.
pub fn run(project: &Project, args: RecallArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let scopes = super::scopes(project, args.scope);
    let index = if args.no_index {
        RecallIndexUse::Off
    } else {
        RecallIndexUse::STANDARD
    };
    // What recall prints reaches agents too: the same gate as the session context. It runs
    // while the recall index's stats are still being checked (again should they fail).
    let mut policy = None;
    let (found, out) = ops::recall::recall_then(
        project,
        &scopes,
        &args.query,
        (args.limit, args.max_chars),
        index,
        |found| {
            let policy = policy.get_or_insert_with(|| ops::guard::policy(project).0);
            ops::guard::gate_recalled(policy, found)
        },
    )?;
    let rules: gate::BrokenRules = out.values().flatten().copied().collect();
    let withheld = out.len();
    let withheld_line = gate::withheld_line(withheld, &rules);
    if json {
        #[derive(serde::Serialize)]
        struct Gated<'a> {
            #[serde(flatten)]
            found: &'a ops::recall::Recalled,
            withheld: usize,
            withheld_rules: Vec<&'static str>,
        }
        super::print_json(&Gated {
            found: &found,
            withheld,
            withheld_rules: rules.iter().copied().collect(),
        })?;
        return Ok(EXIT_OK);
    }
    if let Some(line) = &withheld_line {
        outln!("{line}\n");
    }
    if found.hits.is_empty() {
        outln!("No memory matches \"{}\".", args.query);
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
        outln!(
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
        if let Some(line) = &hit.references {
            outln!("   {line}");
        }
        for line in hit.body.lines() {
            outln!("   {line}");
        }
        outln!();
    }
    Ok(EXIT_OK)
}
