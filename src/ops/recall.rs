//! Recall: the memories most relevant to a query, across the enabled scopes, each with its
//! freshness, who last changed it (team memories), and how often it was used.
//!
//! Speed comes from not parsing what cannot match: a file is parsed only when one of the
//! query's tokens occurs in its (folded) text, found with one Aho-Corasick pass.

use std::collections::HashMap;
use std::path::Path;

use aho_corasick::AhoCorasick;
use serde::Serialize;

use crate::domain::memory::{MAX_FILE_BYTES, MemoryFile, MemoryType};
use crate::domain::recall::{Document, Query, fold};
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::domain::usage::{self, UsageBook};
use crate::git::{file_history, repo, snapshot};

use super::cite::load_usage;
use super::{OpError, Project};

/// Default number of results.
pub const DEFAULT_MAX: usize = 5;
/// Default characters of body per result.
pub const DEFAULT_CHARS: usize = 1200;

/// One memory found.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// Its scope.
    pub scope: ScopeKind,
    /// Its id.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Its title.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The file.
    pub path: String,
    /// Its score (higher is more relevant).
    pub score: u32,
    /// Whole days since it last changed.
    pub age_days: i64,
    /// "today", "1 day old", "N days old".
    pub age: String,
    /// When it last changed, seconds since the Unix epoch.
    pub changed_at: i64,
    /// Where that time comes from: `commit` (the last commit that touched it) or `file-time`.
    pub changed_from: &'static str,
    /// Who made that commit (tracked memories only).
    pub changed_by: Option<String>,
    /// The body, cut to the character limit.
    pub body: String,
    /// Whether the body was cut.
    pub body_cut: bool,
    /// Times cited.
    pub usage_count: u64,
    /// When last cited, seconds since the Unix epoch.
    pub last_usage: Option<i64>,
}

/// What recall found.
#[derive(Debug, Clone, Serialize)]
pub struct Recalled {
    /// The query as given.
    pub query: String,
    /// Its tokens, folded.
    pub tokens: Vec<String>,
    /// Memories looked at.
    pub scanned: usize,
    /// The best matches, best first.
    pub hits: Vec<Hit>,
}

/// Finds the `max` memories of `scopes` that best match `query`; bodies are cut at `chars`.
pub fn recall(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
) -> Result<Recalled, OpError> {
    let parsed = Query::new(query);
    let mut recalled = Recalled {
        query: query.to_string(),
        tokens: parsed.tokens().to_vec(),
        scanned: 0,
        hits: Vec::new(),
    };
    if parsed.tokens().is_empty() || max == 0 {
        return Ok(recalled);
    }
    let finder = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(parsed.tokens())
        .map_err(|e| OpError::Usage(format!("cannot search for this query: {e}")))?;
    // (score, scope position, path) orders results: best first, then a stable tie-break.
    let mut scored: Vec<Scored> = Vec::new();
    for (order, &scope) in scopes.iter().enumerate() {
        let dir = project.check_scope_safe(scope)?;
        let paths = store::memory_paths(&dir)?;
        recalled.scanned += paths.len();
        // Reading thousands of small files is syscall-bound: share it out over a few threads.
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 4);
        let chunk = paths.len().div_ceil(threads).max(256);
        let found: Vec<Vec<Scored>> = std::thread::scope(|s| {
            let workers: Vec<_> = paths
                .chunks(chunk)
                .map(|part| {
                    let (dir, finder, parsed) = (&dir, &finder, &parsed);
                    s.spawn(move || score_files(dir, part, finder, parsed, order, scope))
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        scored.extend(found.into_iter().flatten());
    }
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| a.2.as_bytes().cmp(b.2.as_bytes()))
    });
    scored.truncate(max);

    let now = usage::now();
    let mut books: HashMap<ScopeKind, UsageBook> = HashMap::new();
    for (score, _, rel, scope, file) in scored {
        let dir = project.scope_dir(scope)?;
        let path = dir.join(&rel);
        let fresh = freshness(project, &dir, &rel)?;
        let book = books
            .entry(scope)
            .or_insert_with(|| load_usage(project, scope));
        let u = book.get(&rel);
        let (body, body_cut) = cut_body(&file.body, chars, &format!("{scope}:{rel}"));
        recalled.hits.push(Hit {
            scope,
            id: rel,
            kind: file.kind,
            name: file.name,
            description: file.description,
            path: path.display().to_string(),
            score,
            age_days: usage::days_between(fresh.time, now),
            age: usage::age_text(fresh.time, now),
            changed_at: fresh.time,
            changed_from: fresh.from,
            changed_by: fresh.by,
            body,
            body_cut,
            usage_count: u.usage_count,
            last_usage: u.last_usage,
        });
    }
    Ok(recalled)
}

/// One scored memory: score, scope position, path, scope, file.
type Scored = (u32, usize, String, ScopeKind, MemoryFile);

/// Reads, prefilters, parses and scores some files of one scope.
fn score_files(
    dir: &Path,
    rels: &[String],
    finder: &AhoCorasick,
    query: &Query,
    order: usize,
    scope: ScopeKind,
) -> Vec<Scored> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut bytes = Vec::with_capacity(MAX_FILE_BYTES + 1);
    for rel in rels {
        bytes.clear();
        let Ok(file) = std::fs::File::open(dir.join(rel)) else {
            continue;
        };
        if file
            .take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .is_err()
        {
            continue;
        }
        if !might_match(finder, &bytes) {
            continue;
        }
        let Ok(file) = MemoryFile::parse(rel, &bytes) else {
            continue;
        };
        let keywords = file.keywords.clone().unwrap_or_default();
        let score = query.score(&Document {
            title: &file.name,
            description: &file.description,
            keywords: &keywords,
            body: &file.body,
            kind: file.kind,
        });
        if score > 0 {
            out.push((score, order, rel.clone(), scope, file));
        }
    }
    out
}

/// Whether any query token can occur in the file: ASCII text is searched as it is (without
/// case); anything else is folded first, as the scorer folds it.
fn might_match(finder: &AhoCorasick, bytes: &[u8]) -> bool {
    if bytes.is_ascii() {
        return finder.is_match(bytes);
    }
    finder.is_match(&fold(&String::from_utf8_lossy(bytes)))
}

/// The body, cut to `chars` characters with a note saying how to read the rest.
pub fn cut_body(body: &str, chars: usize, id: &str) -> (String, bool) {
    let body = body.trim_end();
    match body.char_indices().nth(chars) {
        None => (body.to_string(), false),
        Some((at, _)) => {
            let rest = body[at..].chars().count();
            (
                format!(
                    "{}\n\n[cut: {rest} more characters — run `teammem show {id}`]",
                    body[..at].trim_end()
                ),
                true,
            )
        }
    }
}

struct Freshness {
    time: i64,
    from: &'static str,
    by: Option<String>,
}

/// When a memory last changed: the last commit that touched it when git tracks it and the work
/// tree holds that version; the file's modification time otherwise (a new or edited memory).
fn freshness(project: &Project, dir: &Path, rel: &str) -> Result<Freshness, OpError> {
    let path = dir.join(rel);
    if let Some(root) = project.repo.as_ref().map(|r| r.workdir.clone()) {
        if let Ok(inside) = dir.strip_prefix(&root) {
            let full = format!("{}/{rel}", inside.to_string_lossy().replace('\\', "/"));
            let repo = repo::open(&root)?;
            let head = file_history::head_blobs(&repo, std::slice::from_ref(&full))?;
            let bytes = std::fs::read(&path).map_err(|e| OpError::io(&path, e))?;
            if head.get(&full) == Some(&snapshot::blob_id(&bytes)?) {
                if let Some(change) =
                    file_history::last_changes(&repo, std::slice::from_ref(&full))?.remove(&full)
                {
                    return Ok(Freshness {
                        time: change.time,
                        from: "commit",
                        by: Some(change.author),
                    });
                }
            }
        }
    }
    let modified = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map_err(|e| OpError::io(&path, e))?;
    Ok(Freshness {
        time: modified
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        from: "file-time",
        by: None,
    })
}
