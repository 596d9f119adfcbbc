//! Remember: what a memory extractor hands over (JSON patches) turned into memory files, with
//! the patches that should not become memories dropped, each with its reason.

use std::collections::HashSet;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::domain::memory::{self, MemoryFile, MemoryType};
use crate::domain::scope::ScopeKind;

use super::guard::TeamWriter;
use super::scope_write::write_memory;
use super::{OpError, Project};

/// Summaries shorter than this (in characters) say too little to be worth keeping.
pub const MIN_SUMMARY_CHARS: usize = 12;

/// One memory an extractor proposes.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Patch {
    /// `user`, `feedback`, `project` or `reference`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The title (`summary` is accepted for it).
    pub name: Option<String>,
    /// Same as `name`.
    pub summary: Option<String>,
    /// One line for the index (defaults to the summary).
    pub description: Option<String>,
    /// Why it matters.
    pub why: Option<String>,
    /// How to apply it.
    pub how_to_apply: Option<String>,
    /// Extra body text.
    pub body: Option<String>,
    /// Optional keywords.
    pub keywords: Option<Vec<String>>,
    /// `private`, `team` or `user` (default: the command's scope).
    pub scope: Option<String>,
}

/// A patch written.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// Position of the patch in the input (0-based).
    pub patch: usize,
    /// Its scope.
    pub scope: ScopeKind,
    /// Its id.
    pub id: String,
}

/// A patch dropped.
#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    /// Position of the patch in the input (0-based).
    pub patch: usize,
    /// Its summary, as given.
    pub summary: String,
    /// `too-short`, `question`, `about-the-moment`, `duplicate`, `invalid` or `secret`.
    pub reason: &'static str,
    /// The detail.
    pub detail: String,
}

/// What `remember` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Remembered {
    /// Memories written.
    pub written: Vec<Written>,
    /// Patches dropped, with reasons.
    pub dropped: Vec<Dropped>,
}

/// Reads patches: a JSON array, one JSON object, or one object per line.
pub fn parse_patches(text: &str) -> Result<Vec<Patch>, OpError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    if trimmed.starts_with('[') {
        return serde_json::from_str(trimmed).map_err(|e| {
            OpError::Usage(format!(
                "standard input is not a JSON array of patches: {e}"
            ))
        });
    }
    if let Ok(one) = serde_json::from_str::<Patch>(trimmed) {
        return Ok(vec![one]);
    }
    trimmed
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| {
                OpError::Usage(format!(
                    "line {} of standard input is not a JSON patch: {e}",
                    n + 1
                ))
            })
        })
        .collect()
}

/// Why a summary is about the moment rather than something lasting, if it is.
fn moment_word(text: &str) -> Option<String> {
    let pattern = Regex::new(
        r"(?i)\b(today|now|currently|for this task|this session|temporary|temporarily)\b",
    )
    .ok()?;
    pattern.find(text).map(|m| m.as_str().to_string())
}

/// Writes the patches that pass the filters into `default_scope` (or each patch's own scope).
pub fn remember(
    project: &Project,
    patches: &[Patch],
    default_scope: ScopeKind,
) -> Result<Remembered, OpError> {
    let mut out = Remembered::default();
    // Names and type:summary keys each scope holds, with this batch's added as it goes.
    let mut seen: std::collections::HashMap<ScopeKind, HashSet<String>> = Default::default();
    let mut touched = HashSet::new();
    for (i, patch) in patches.iter().enumerate() {
        let summary = patch
            .name
            .clone()
            .or_else(|| patch.summary.clone())
            .unwrap_or_default()
            .trim()
            .to_string();
        let drop = |reason: &'static str, detail: String| Dropped {
            patch: i,
            summary: summary.clone(),
            reason,
            detail,
        };
        let scope = match patch.scope.as_deref() {
            None => default_scope,
            Some(s) => match ScopeKind::parse(s) {
                Some(scope) => scope,
                None => {
                    out.dropped
                        .push(drop("invalid", format!("unknown scope `{s}`")));
                    continue;
                }
            },
        };
        let Some(kind) = patch.kind.as_deref().and_then(MemoryType::parse) else {
            out.dropped.push(drop(
                "invalid",
                "`type` must be one of user, feedback, project, reference".into(),
            ));
            continue;
        };
        let description = patch
            .description
            .clone()
            .unwrap_or_else(|| summary.clone())
            .trim()
            .to_string();
        if summary.contains(['\n', '\r']) || description.contains(['\n', '\r']) {
            out.dropped.push(drop(
                "invalid",
                "the summary and description must be one line each".into(),
            ));
            continue;
        }
        let chars = summary.chars().count();
        if chars < MIN_SUMMARY_CHARS {
            out.dropped.push(drop(
                "too-short",
                format!("the summary has {chars} characters; at least {MIN_SUMMARY_CHARS} say what the memory is"),
            ));
            continue;
        }
        if summary.ends_with('?') || summary.ends_with('？') {
            out.dropped.push(drop(
                "question",
                "the summary is a question; a memory states what was learned".into(),
            ));
            continue;
        }
        if let Some(word) = moment_word(&summary).or_else(|| moment_word(&description)) {
            out.dropped.push(drop(
                "about-the-moment",
                format!("`{word}` ties it to the moment; memories must stay true later"),
            ));
            continue;
        }
        let known = match seen.get_mut(&scope) {
            Some(k) => k,
            None => {
                let mut keys = HashSet::new();
                for m in project.load(scope)?.memories {
                    keys.insert(format!("name:{}", m.file.name.trim().to_lowercase()));
                    for e in m.file.entries() {
                        keys.insert(format!(
                            "{}:{}",
                            m.file.kind,
                            e.summary.trim().to_lowercase()
                        ));
                    }
                }
                seen.entry(scope).or_insert(keys)
            }
        };
        let name_key = format!("name:{}", summary.to_lowercase());
        let kind_key = format!("{kind}:{}", summary.to_lowercase());
        if known.contains(&name_key) || known.contains(&kind_key) {
            out.dropped.push(drop(
                "duplicate",
                format!("the {scope} scope already has a memory with this summary"),
            ));
            continue;
        }
        let given = |field: &Option<String>| {
            field
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let mut body = String::new();
        if let Some(text) = given(&patch.body) {
            body.push_str(&text);
            body.push_str("\n\n");
        }
        let mut reasons = String::new();
        if let Some(why) = given(&patch.why) {
            reasons.push_str(&format!("Why: {why}\n"));
        }
        if let Some(how) = given(&patch.how_to_apply) {
            reasons.push_str(&format!("How to apply: {how}\n"));
        }
        body.push_str(&reasons);
        if body.is_empty() {
            body = format!("{summary}\n");
        }
        let keywords = patch.keywords.clone().filter(|k| !k.is_empty());
        let file = MemoryFile::new(&summary, &description, kind, keywords, &body);
        let dir = project.check_scope_safe(scope)?;
        let slug = memory::slugify(&summary);
        let mut rel = format!("{kind}/{slug}.md");
        let mut n = 2;
        while std::fs::symlink_metadata(dir.join(&rel)).is_ok() {
            rel = format!("{kind}/{slug}-{n}.md");
            n += 1;
        }
        let text = match file.render_checked(&rel) {
            Ok(text) => text,
            Err(first) => {
                out.dropped.push(drop(
                    "invalid",
                    format!("it would not be a valid memory: {first}"),
                ));
                continue;
            }
        };
        match write_memory(project, scope, TeamWriter::Remember, &rel, &text) {
            Ok(_) => {}
            Err(OpError::Refused(why)) => {
                out.dropped.push(drop("secret", why));
                continue;
            }
            Err(e) => return Err(e),
        }
        known.insert(name_key);
        known.insert(kind_key);
        touched.insert(scope);
        out.written.push(Written {
            patch: i,
            scope,
            id: rel,
        });
    }
    for scope in touched {
        project.rebuild_index(scope)?;
    }
    Ok(out)
}
