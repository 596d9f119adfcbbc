//! Recall: the memories most relevant to a query, across the enabled scopes, each with its
//! freshness, who last changed it (team memories), and how often it was used.
//!
//! Speed comes from not reading what did not change: each scope's recall index
//! ([`crate::domain::recall::index`]) scores every memory whose stamp is unchanged, and only the
//! others are read. A file that is read is parsed only when one of the query's tokens occurs
//! in its (folded) text, found with one Aho-Corasick pass. [`IndexUse::Off`] reads every file:
//! the reference the index is tested against.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::domain::memory::MemoryType;
use crate::domain::recall::index;
use crate::domain::recall::live::LiveScope;
use crate::domain::recall::refresh::{
    KnownStamps, Ranking, StampProof, keep_best, read_shown, scan_files, scan_indexed_unproven,
};
use crate::domain::recall::usage::{self, UsageBook, Used};
use crate::domain::recall::{Analyzer, PROXIMITY_CANDIDATES, Query, points};
use crate::domain::scope::{Layout, ScopeKind};
use crate::domain::store::Stamp;
use crate::git::{file_history, snapshot};

use super::cite::load_usage;
use super::{OpError, Project, references};

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
    /// Whether the paths it names hold at HEAD, in one line ([`references::references_line`]).
    pub references: Option<String>,
}

/// What recall found.
#[derive(Debug, Clone, Serialize)]
pub struct Recalled {
    /// The query as given.
    pub query: String,
    /// Its terms: folded, stop words dropped, stemmed.
    pub tokens: Vec<String>,
    /// Memories looked at.
    pub scanned: usize,
    /// The best matches, best first.
    pub hits: Vec<Hit>,
    /// What the index did.
    #[serde(skip)]
    pub index: IndexReport,
}

/// How long a file's times must lie in the past before the recall index trusts its stamp:
/// file times come from a coarse clock, and an edit within the same tick can leave them as
/// they were (git's "racy clean" problem; baseline diff uses the same window).
pub const SETTLE: Duration = Duration::from_secs(2);

/// The most files one query indexes. Every file a query reads is analysed in full anyway
/// (IDF and average lengths need every memory), so indexing it as well costs little more: the
/// first query over a scope of up to this many memories builds the whole index.
pub const INDEX_BUDGET: usize = 100_000;

pub use crate::domain::recall::refresh::IndexReport;

/// Whether recall uses its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUse {
    /// Read every memory file: the reference the index must always agree with.
    Off,
    /// Score unchanged memories from the index, read the others, and refresh the index.
    On {
        /// Stamps younger than this are not trusted (see [`SETTLE`]).
        settle: Duration,
        /// The most files indexed by one query (see [`INDEX_BUDGET`]); the others are
        /// analysed as without the index, and indexed by the next queries.
        budget: usize,
    },
}

impl IndexUse {
    /// The index as `teammem recall` uses it.
    pub const STANDARD: IndexUse = IndexUse::On {
        settle: SETTLE,
        budget: INDEX_BUDGET,
    };
}

/// Finds the `max` memories of `scopes` that best match `query`; bodies are cut at `chars`.
pub fn recall(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
) -> Result<Recalled, OpError> {
    recall_with(project, scopes, query, max, chars, IndexUse::STANDARD)
}

/// [`recall`] for a caller that tells each hit's age itself (the MCP server keeps its own
/// per-HEAD cache of last commits): the hits' ages are their files' modification times, and
/// git's history is never walked — that walk is most of a warm query's cost in a team scope.
pub fn recall_unaged(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
) -> Result<Recalled, OpError> {
    recall_inner(
        project,
        scopes,
        query,
        (max, chars),
        &mut Source::Files(IndexUse::STANDARD),
        Ages::FileTime,
        &mut |_| (),
    )
    .map(|(found, ())| found)
}

/// The recall indexes of a few scopes held in memory by a long-lived process (the MCP
/// server): a query on it answers exactly as [`recall_unaged`] does, without reading any index
/// file or statting any memory that was not noted as changed; only the memories it shows are
/// read (and those shown before come from a cache). The process tells it what changed:
/// [`LiveRecall::note_changed`] for each path a file watcher reports, and
/// [`LiveRecall::note_all_changed`] when there is no watcher or it lost events.
#[derive(Debug, Default)]
pub struct LiveRecall {
    scopes: Vec<(ScopeKind, LiveScope)>,
    settle: Option<Duration>,
}

impl LiveRecall {
    /// Opens the recall indexes of `scopes` (loading each scope's index file, or building it),
    /// checking every memory once, as a query through the index file does.
    pub fn open(project: &Project, scopes: &[ScopeKind]) -> Result<LiveRecall, OpError> {
        LiveRecall::open_with(project, scopes, SETTLE)
    }

    /// [`LiveRecall::open`], trusting stamps older than `settle` (see [`SETTLE`]).
    pub fn open_with(
        project: &Project,
        scopes: &[ScopeKind],
        settle: Duration,
    ) -> Result<LiveRecall, OpError> {
        let mut live = LiveRecall {
            scopes: Vec::new(),
            settle: Some(settle),
        };
        for &scope in scopes {
            live.scope(project, scope)?;
        }
        Ok(live)
    }

    /// The live index of `scope`, opened on first use; `None` where a scope cannot have an
    /// index (no inode numbers to stamp files with): queried from the files instead.
    fn scope(&mut self, project: &Project, scope: ScopeKind) -> Result<Option<usize>, OpError> {
        if let Some(at) = self.scopes.iter().position(|(s, _)| *s == scope) {
            return Ok(Some(at));
        }
        let dir = project.check_scope_safe(scope)?;
        let Some(file) = index_file(project, scope, &dir) else {
            return Ok(None);
        };
        let settle = self.settle.unwrap_or(SETTLE);
        self.scopes
            .push((scope, LiveScope::open(&dir, &file, settle)?));
        Ok(Some(self.scopes.len() - 1))
    }

    /// A file or folder changed (created, written, removed or renamed; an absolute path): the
    /// next query looks at it again in the scope that holds it. Paths outside every open
    /// scope are ignored. Returns whether a scope holds it.
    pub fn note_changed(&mut self, path: &Path) -> bool {
        let mut held = false;
        for (_, live) in &mut self.scopes {
            held |= live.note_changed(path);
        }
        held
    }

    /// Anything may have changed (no watcher, or it overflowed): the next query stats every
    /// memory of every open scope, as [`recall_unaged`] does.
    pub fn note_all_changed(&mut self) {
        for (_, live) in &mut self.scopes {
            live.note_all_changed();
        }
    }

    /// What the open scopes did since they were opened, summed (tests and benchmarks).
    pub fn report(&self) -> LiveReport {
        let mut sum = LiveReport::default();
        for (_, live) in &self.scopes {
            let r = live.report();
            sum.stats += r.stats;
            sum.reads += r.reads;
            sum.listings += r.listings;
            sum.written += r.written;
        }
        sum
    }
}

pub use crate::domain::recall::live::LiveReport;

/// [`recall_unaged`] through a [`LiveRecall`]: the same answer, from memory (see there). A
/// scope not open yet is opened.
pub fn recall_live(
    project: &Project,
    live: &mut LiveRecall,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
) -> Result<Recalled, OpError> {
    recall_inner(
        project,
        scopes,
        query,
        (max, chars),
        &mut Source::Live(live),
        Ages::FileTime,
        &mut |_| (),
    )
    .map(|(found, ())| found)
}

/// Where a query's memories come from.
enum Source<'a> {
    /// The files, through the index file or not.
    Files(IndexUse),
    /// A live index in memory.
    Live(&'a mut LiveRecall),
}

/// Where the hits' ages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ages {
    /// The last commit that changed the memory when the work tree holds that version.
    History,
    /// The file's modification time only.
    FileTime,
}

/// [`recall`], with or without the index.
pub fn recall_with(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
    index: IndexUse,
) -> Result<Recalled, OpError> {
    recall_then(project, scopes, query, (max, chars), index, |_| ()).map(|(found, ())| found)
}

/// [`recall_with`] (`limits`: results and characters per body), and `then` done on what it
/// found. When the answer comes wholly from the recall index, `then` runs while the stats
/// that must confirm that no memory changed are still being taken on other threads (a
/// memory gate's work overlaps them); should they find a change, the query is answered again
/// from what changed and `then` runs again on that answer. So `then` must change nothing but
/// the [`Recalled`] it is given, and what it returns: the pair returned is the confirmed one.
pub fn recall_then<T>(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    limits: (usize, usize),
    index: IndexUse,
    mut then: impl FnMut(&mut Recalled) -> T,
) -> Result<(Recalled, T), OpError> {
    recall_inner(
        project,
        scopes,
        query,
        limits,
        &mut Source::Files(index),
        Ages::History,
        &mut then,
    )
}

/// How many times a live query is asked again when a memory it shows changed under it (a
/// change the watcher has not reported yet) before it reads the files instead.
const LIVE_RETRIES: usize = 3;

fn recall_inner<T>(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    limits: (usize, usize),
    source: &mut Source<'_>,
    ages: Ages,
    then: &mut dyn FnMut(&mut Recalled) -> T,
) -> Result<(Recalled, T), OpError> {
    // Stamps taken by a check that failed (or that held, in a scope beside one that failed):
    // the next attempt uses them instead of statting every memory again.
    let mut known: Vec<(ScopeKind, KnownStamps)> = Vec::new();
    for _ in 0..LIVE_RETRIES {
        let Some((mut found, proofs)) =
            recall_once(project, scopes, query, limits, source, ages, &mut known)?
        else {
            continue;
        };
        let extra = then(&mut found);
        let mut holds = true;
        for (scope, proof) in proofs {
            let checked = proof.check();
            holds &= checked.is_ok();
            known.push((scope, checked.unwrap_or_else(|stamps| stamps)));
        }
        if holds {
            return Ok((found, extra));
        }
    }
    // Memories kept changing under the query: read every file.
    let mut files = Source::Files(IndexUse::Off);
    match recall_once(
        project,
        scopes,
        query,
        limits,
        &mut files,
        ages,
        &mut Vec::new(),
    )? {
        Some((mut found, _)) => {
            let extra = then(&mut found);
            Ok((found, extra))
        }
        None => Err(OpError::Usage(
            "recall: memories kept changing while they were read — try again".into(),
        )),
    }
}

/// An answer whose index gathers are not confirmed yet: each scope's proof to check.
type Unconfirmed = (Recalled, Vec<(ScopeKind, StampProof)>);

/// One attempt of a query; `None` when a memory scored from an index changed before it was
/// shown (the query is then asked again). A scope answered wholly from its index comes with
/// the proof still running ([`scan_indexed_unproven`]); `known` are stamps an earlier attempt
/// took, used (and taken out) instead of new stats.
fn recall_once(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    (max, chars): (usize, usize),
    source: &mut Source<'_>,
    ages: Ages,
    known: &mut Vec<(ScopeKind, KnownStamps)>,
) -> Result<Option<Unconfirmed>, OpError> {
    let parsed = Query::new(query);
    let mut recalled = Recalled {
        query: query.to_string(),
        tokens: parsed.tokens().to_vec(),
        scanned: 0,
        hits: Vec::new(),
        index: IndexReport::default(),
    };
    let mut proofs = Vec::new();
    if parsed.tokens().is_empty() || max == 0 {
        return Ok(Some((recalled, proofs)));
    }
    // Every scope first gathers its statistics and matches; scores need all of them, as
    // IDF and average lengths are taken over every scope queried.
    let mut ranking = Ranking::new(&parsed);
    for (order, &scope) in scopes.iter().enumerate() {
        let dir = project.check_scope_safe(scope)?;
        let found = match source {
            Source::Live(live) => match live.scope(project, scope)? {
                Some(at) => live.scopes[at].1.gather(&parsed, (order, scope))?,
                None => scan_files(&dir, &parsed, order, scope)?,
            },
            Source::Files(index) => match (*index, index_file(project, scope, &dir)) {
                (IndexUse::On { settle, budget }, Some(file)) => {
                    let taken = known
                        .iter()
                        .position(|(s, _)| *s == scope)
                        .map(|at| known.swap_remove(at).1);
                    let at = (order, scope);
                    let (found, proof) =
                        scan_indexed_unproven(&dir, &file, &parsed, at, (settle, budget), taken)?;
                    proofs.extend(proof.map(|p| (scope, p)));
                    found
                }
                _ => scan_files(&dir, &parsed, order, scope)?,
            },
        };
        recalled.scanned += found.scanned;
        recalled.index.from_index += found.report.from_index;
        recalled.index.files_read += found.report.files_read;
        recalled.index.written += found.report.written;
        ranking.add(found);
    }
    // The best few earn the proximity boost; only they are read (those scored from the index).
    let pool = PROXIMITY_CANDIDATES.max(max);
    // Usage breaks ties between equal scores: the memory read or cited lately, then often.
    let books: HashMap<ScopeKind, UsageBook> = scopes
        .iter()
        .map(|&scope| (scope, load_usage(project, scope)))
        .collect();
    let used = |order: usize, rel: &str| {
        scopes
            .get(order)
            .and_then(|scope| books.get(scope))
            .and_then(|book| book.memories.get(rel))
            .map_or(Used::default(), Used::of)
    };
    let (stats, mut candidates) = ranking.best(&parsed, pool, &used);
    let mut analyzer = Analyzer::new();
    for c in &mut candidates {
        if c.file.is_none() {
            // Scored from the index: only the memories shown or boosted are read. One that
            // changed since its stat (a write racing this run) sends the query to the files.
            let file = match source {
                Source::Live(live) => match live.scope(project, c.scope)? {
                    Some(at) => live.scopes[at].1.shown(&c.rel, c.stamp),
                    None => read_shown(&project.scope_dir(c.scope)?, &c.rel, c.stamp),
                },
                Source::Files(_) => read_shown(&project.scope_dir(c.scope)?, &c.rel, c.stamp),
            };
            match file {
                Some(file) => c.file = Some(Box::new(file)),
                None => {
                    if let Source::Files(index) = source {
                        // The index file's stamps are no longer the files': read them all.
                        *index = IndexUse::Off;
                    }
                    return Ok(None);
                }
            }
        }
        if let Some(file) = &c.file {
            let fields = index::folded_fields(file);
            c.points = points(c.score + parsed.proximity(&stats, &mut analyzer, &fields));
        }
    }
    keep_best(&mut candidates, max);

    let mut shown = Vec::with_capacity(candidates.len());
    for found in candidates {
        if let Some(file) = found.file {
            shown.push((
                project.scope_dir(found.scope)?,
                found.scope,
                found.rel,
                found.points,
                file,
                found.stamp,
            ));
        }
    }
    let places: Vec<(&Path, &str, Stamp)> = shown
        .iter()
        .map(|(dir, _, rel, _, _, stamp)| (dir.as_path(), rel.as_str(), *stamp))
        .collect();
    let fresh = freshness(project, &places, ages)?;
    let texts: Vec<(ScopeKind, String)> = shown
        .iter()
        .map(|(_, scope, _, _, file, _)| (*scope, references::memory_text(file)))
        .collect();
    let pairs: Vec<(ScopeKind, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
    let mut reference_lines = references::references_lines(project, &pairs).into_iter();
    let now = usage::now();
    for ((dir, scope, rel, score, file, _), fresh) in shown.into_iter().zip(fresh) {
        let file = *file;
        let path = dir.join(&rel);
        let u = books.get(&scope).map(|b| b.get(&rel)).unwrap_or_default();
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
            references: reference_lines.next().flatten(),
        });
    }
    Ok(Some((recalled, proofs)))
}

/// Where a scope's recall index lives: in its state folder, beside (never inside) the memory
/// folder, so it is never committed, synced or shown in a pull request. With
/// `QWEN_CODE_MEMORY_LOCAL=1` the private state folder is `.qwen/` in the work tree; the
/// index goes to the usual per-project folder under `<base>` instead, so that a cache never
/// shows up in `git status`.
fn index_file(project: &Project, scope: ScopeKind, dir: &Path) -> Option<PathBuf> {
    if !cfg!(unix) {
        // Without inode numbers and ctime a stamp cannot see every edit.
        return None;
    }
    let folder = dir.file_name()?.to_string_lossy();
    let local = scope == ScopeKind::Private && project.layout.local_private;
    let outside = Layout {
        local_private: false,
        ..project.layout.clone()
    };
    let name = format!("{}{folder}-recall.idx", if local { "local-" } else { "" });
    Some(outside.state_dir(scope)?.join(name))
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

/// When each memory (scope folder, file) last changed: the last commit that touched it when git
/// tracks it and the work tree holds that version; the file's modification time otherwise (a
/// new or edited memory). The repository is opened once and its history walked once for all.
fn freshness(
    project: &Project,
    memories: &[(&Path, &str, Stamp)],
    ages: Ages,
) -> Result<Vec<Freshness>, OpError> {
    let mut from_commits: Vec<Option<Freshness>> = memories.iter().map(|_| None).collect();
    let root = match ages {
        Ages::History => project.repo.as_ref().map(|r| r.workdir.clone()),
        Ages::FileTime => None,
    };
    if let Some(root) = root {
        // Each memory inside the work tree, by its path in the repository.
        let inside: Vec<(usize, String)> = memories
            .iter()
            .enumerate()
            .filter_map(|(i, (dir, rel, _))| {
                let folder = dir.strip_prefix(&root).ok()?;
                let folder = folder.to_string_lossy().replace('\\', "/");
                Some((i, format!("{folder}/{rel}")))
            })
            .collect();
        if !inside.is_empty() {
            let repo = project.open_repository()?;
            let names: Vec<String> = inside.iter().map(|(_, full)| full.clone()).collect();
            let head = file_history::head_blobs(&repo, &names)?;
            let mut committed = Vec::new();
            for (i, full) in inside {
                let (dir, rel, _) = memories[i];
                let path = dir.join(rel);
                let bytes = std::fs::read(&path).map_err(|e| OpError::io(&path, e))?;
                if head.get(&full) == Some(&snapshot::blob_id(&bytes)?) {
                    committed.push((i, full));
                }
            }
            let names: Vec<String> = committed.iter().map(|(_, full)| full.clone()).collect();
            let changes = file_history::last_changes(&repo, &names)?;
            for (i, full) in committed {
                if let Some(change) = changes.get(&full) {
                    from_commits[i] = Some(Freshness {
                        time: change.time,
                        from: "commit",
                        by: Some(change.author.clone()),
                    });
                }
            }
        }
    }
    let mut out = Vec::with_capacity(memories.len());
    for ((_, _, stamp), known) in memories.iter().zip(from_commits) {
        if let Some(fresh) = known {
            out.push(fresh);
            continue;
        }
        // The modification time of the version scored and shown, whole seconds (0 before 1970).
        out.push(Freshness {
            time: stamp.mtime_ns.max(0) / 1_000_000_000,
            from: "file-time",
            by: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::recall::index::{DocState, FileMeta, IndexView};
    use crate::domain::scope::Environment;
    use std::fs;
    use std::time::SystemTime;

    /// Stamps older than this are trusted in these tests; [`settle`] waits it out, so every
    /// edit the test makes lands in a later file-time tick than the stamps it must change.
    const TEST_SETTLE: Duration = Duration::from_millis(50);

    fn settle() {
        std::thread::sleep(TEST_SETTLE + Duration::from_millis(20));
    }

    const WORDS: &[&str] = &[
        "postgres",
        "migration",
        "deploy",
        "cache",
        "schema",
        "release",
        "feedback",
        "rule",
        "goal",
        "Postgres",
        "POSTGRESQL",
        "café",
        "résumé",
        "ＡＢＣ",
        "abc",
        "go",
        "x1",
        "数据库",
        "迁移",
        "使用真实数据库",
        "库",
        "数",
        "テスト",
        "ｶﾀｶﾅ",
        "İstanbul",
        "x",
        "42",
        "deploy-cache",
        "tests.",
        "(schema)",
    ];

    /// A small deterministic generator (no test may depend on the clock or on chance).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % n
        }

        fn words(&mut self, n: usize) -> String {
            (0..n)
                .map(|_| WORDS[self.next(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        }
    }

    const TYPES: [&str; 4] = ["user", "feedback", "project", "reference"];

    /// Memory number `i`: mostly valid memories of every type, with keywords now and then,
    /// a few written with YAML escapes (fields whose text the raw bytes do not hold), a few
    /// with CRLF line ends, and a few invalid files.
    fn memory(rng: &mut Lcg, i: usize) -> (String, String) {
        let kind = TYPES[i % 4];
        let rel = format!("{kind}/m{i:04}.md");
        let (title, description, body) = (rng.words(3), rng.words(5), rng.words(30));
        let text = match i % 23 {
            5 => format!("no frontmatter at all {body}\n"),
            7 => format!(
                "---\nname: {title}\ndescription: {description}\ntype: nonsense\n---\n{body}\n"
            ),
            11 => format!(
                "---\nname: \"Post\\x67res {i}\"\ndescription: \"caf\\u00e9 {description}\"\ntype: {kind}\n---\n{body}\n"
            ),
            13 => format!(
                "---\r\nname: {title} {i}\r\ndescription: {description}\r\ntype: {kind}\r\n---\r\n{body}\r\nWhy: measured.\r\n"
            ),
            17 => format!(
                "---\nname: {title} {i}\ndescription: {description}\ntype: {kind}\nkeywords: [{}, {}]\n---\n{body}\n",
                rng.words(1),
                rng.words(1)
            ),
            _ => format!(
                "---\nname: {title} {i}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"
            ),
        };
        (rel, text)
    }

    const QUERIES: &[&str] = &[
        "postgres",
        "postgres migration",
        "deploy cache schema",
        "Postgres feedback rule",
        "cafe resume",
        "abc",
        "数据库 迁移",
        "真实的数据",
        "库",
        "テスト",
        "カタカナ",
        "istanbul stanbul",
        "release goal project",
        "postgresql",
        "zebra",
        "42 x1",
        "when did the postgres migrations deploy",
        "Hey Postgres, deploying migrated caches!",
        "schema cache",
    ];

    struct Fixture {
        _tmp: tempfile::TempDir,
        project: Project,
        dir: PathBuf,
    }

    fn fixture(n: usize) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let env = Environment {
            base_dir: Some(tmp.path().join("base")),
            ..Default::default()
        };
        let project = Project::open_with(tmp.path(), env).unwrap();
        let dir = project.scope_dir(ScopeKind::User).unwrap();
        let mut rng = Lcg(7);
        for i in 0..n {
            let (rel, text) = memory(&mut rng, i);
            write(&dir, &rel, &text);
        }
        Fixture {
            _tmp: tmp,
            project,
            dir,
        }
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Rewrites a file in place with other words of the same length ("zebra" is queried).
    fn edit_keeping_size(path: &Path) {
        let text = fs::read_to_string(path).unwrap();
        let edited = [
            ("postgres", "zebra!!!"),
            ("deploy", "zebra!"),
            ("cache", "zebra"),
            ("schema", "zebra!"),
        ]
        .iter()
        .find(|(from, _)| text.contains(from))
        .map(|(from, to)| text.replacen(from, to, 1))
        .unwrap_or_else(|| text.replacen("name:", "Name:", 1));
        assert_eq!(edited.len(), text.len());
        assert_ne!(edited, text);
        fs::write(path, edited).unwrap();
    }

    fn set_mtime(path: &Path, time: SystemTime) {
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    fn index_path(f: &Fixture) -> PathBuf {
        index_file(&f.project, ScopeKind::User, &f.dir).unwrap()
    }

    /// Runs every query with and without the index, over the whole ranking, and checks that
    /// both print the same; returns what the index did, summed over the queries.
    fn same_as_reference(f: &Fixture) -> IndexReport {
        same_as_reference_with(f, INDEX_BUDGET)
    }

    /// [`same_as_reference`], indexing at most `budget` files per query.
    fn same_as_reference_with(f: &Fixture, budget: usize) -> IndexReport {
        let mut report = IndexReport::default();
        // The whole ranking, then the top 3 (the index keeps only each scope's best).
        for (query, max) in QUERIES.iter().flat_map(|q| [(q, 100_000), (q, 3)]) {
            let run =
                |index| recall_with(&f.project, &[ScopeKind::User], query, max, 80, index).unwrap();
            let reference = run(IndexUse::Off);
            let indexed = run(IndexUse::On {
                settle: TEST_SETTLE,
                budget,
            });
            let ranking = |r: &Recalled| -> Vec<String> {
                r.hits
                    .iter()
                    .map(|h| format!("{}:{} {}", h.scope, h.id, h.score))
                    .collect()
            };
            assert_eq!(ranking(&indexed), ranking(&reference), "query {query:?}");
            assert!(
                serde_json::to_value(&indexed).unwrap()
                    == serde_json::to_value(&reference).unwrap(),
                "query {query:?}: same ranking, different output"
            );
            if max > 3 {
                report.from_index += indexed.index.from_index;
                report.files_read += indexed.index.files_read;
                report.written += indexed.index.written;
            }
        }
        report
    }

    /// The queries that have tokens (a query without any reads nothing).
    fn searching() -> usize {
        QUERIES
            .iter()
            .filter(|q| !Query::new(q).tokens().is_empty())
            .count()
    }

    #[test]
    fn the_index_ranks_exactly_as_reading_every_file_through_edits_and_damage() {
        let f = fixture(200);
        settle();
        // Cold: the first query builds the index.
        let cold = same_as_reference(&f);
        assert_eq!(cold.written, 1);
        // Warm: nothing read, YAML-escaped fields included (the index holds parsed fields).
        let warm = same_as_reference(&f);
        assert_eq!(warm.written, 0);
        assert_eq!(warm.files_read, 0);
        assert_eq!(warm.from_index, 200 * searching());

        // Edits that change the size, additions (one in a new folder), deletions, renames.
        let mut rng = Lcg(99);
        for i in [1, 2, 3, 50, 51] {
            let (rel, _) = memory(&mut rng, i);
            let path = f.dir.join(&rel);
            let text = fs::read_to_string(&path).unwrap();
            fs::write(
                &path,
                text.replace("---\n", "---\n\n").replacen(
                    "\n\n",
                    "\npostgres migration 数据库\n",
                    1,
                ),
            )
            .unwrap();
        }
        for i in 200..203 {
            let (rel, text) = memory(&mut rng, i);
            write(&f.dir, &rel, &text);
        }
        write(
            &f.dir,
            "project/deeper/nested.md",
            "---\nname: Nested postgres\ndescription: deploy\ntype: project\n---\ncache\n",
        );
        for rel in ["user/m0000.md", "feedback/m0009.md", "project/m0010.md"] {
            fs::remove_file(f.dir.join(rel)).unwrap();
        }
        fs::rename(f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")).unwrap();
        fs::rename(
            f.dir.join("reference/m0003.md"),
            f.dir.join("feedback/m0003.md"),
        )
        .unwrap();
        // Same size, and the mtime kept to the second (only its nanoseconds and ctime move).
        let same_size = f.dir.join("project/m0006.md");
        let modified = fs::metadata(&same_size).unwrap().modified().unwrap();
        let since = modified.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        edit_keeping_size(&same_size);
        let nanos = if since.subsec_nanos() == 123 {
            456
        } else {
            123
        };
        set_mtime(
            &same_size,
            SystemTime::UNIX_EPOCH + Duration::new(since.as_secs(), nanos),
        );
        // Same size and the very same mtime: only ctime tells (a CRLF file, too).
        for rel in ["feedback/m0021.md", "feedback/m0013.md"] {
            let put_back = f.dir.join(rel);
            let modified = fs::metadata(&put_back).unwrap().modified().unwrap();
            edit_keeping_size(&put_back);
            set_mtime(&put_back, modified);
            assert_eq!(
                fs::metadata(&put_back).unwrap().modified().unwrap(),
                modified
            );
        }

        // The same-size edits wrote "zebra": only a reader that saw them finds it.
        let zebra = recall_with(
            &f.project,
            &[ScopeKind::User],
            "zebra",
            100,
            80,
            IndexUse::Off,
        )
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect::<Vec<_>>();
        assert_eq!(
            zebra,
            ["feedback/m0013.md", "feedback/m0021.md", "project/m0006.md"]
        );

        // Right after the edits (stamps too young to trust) and once they settled.
        let fresh = same_as_reference(&f);
        assert!(fresh.files_read > 0);
        settle();
        same_as_reference(&f);
        let warm = same_as_reference(&f);
        assert_eq!(warm.written, 0);
        assert_eq!(warm.files_read, 0);

        // A damaged index is never trusted: it is rebuilt, and the answers stay right.
        let path = index_path(&f);
        let good = fs::read(&path).unwrap();
        let mut flipped = good.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0x01;
        let damaged: Vec<Vec<u8>> = vec![
            flipped,
            good[..good.len() / 2].to_vec(),
            good[..good.len() - 1].to_vec(),
            good[..8].to_vec(),
            Vec::new(),
            b"not an index at all".to_vec(),
            [&good[..], b"trailing"].concat(),
        ];
        for bad in damaged {
            fs::write(&path, &bad).unwrap();
            let report = same_as_reference(&f);
            assert!(report.written >= 1);
            assert!(IndexView::decode(&fs::read(&path).unwrap()).is_some());
        }
        // An index that cannot be written (a folder in its place) costs speed, not answers.
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        let report = same_as_reference(&f);
        assert_eq!(report.written, 0);
    }

    /// A warm answer comes from the index while other threads stat the memories; an edit in
    /// place they find sends the query (and the work done on its answer) round once more,
    /// and the answer is the one the files give.
    #[test]
    fn an_edit_found_by_the_stats_beside_a_warm_answer_is_answered_again() {
        // More memories than one part of stats, so that worker threads take some.
        let f = fixture(900);
        settle();
        let standard = IndexUse::On {
            settle: TEST_SETTLE,
            budget: INDEX_BUDGET,
        };
        let run = |query: &str, index| {
            let mut rounds = 0;
            let (found, seen) = recall_then(
                &f.project,
                &[ScopeKind::User],
                query,
                (100, 80),
                index,
                |found| {
                    rounds += 1;
                    found.hits.len()
                },
            )
            .unwrap();
            assert_eq!(seen, found.hits.len());
            (found, rounds)
        };
        run("zebra", standard);
        let (warm, rounds) = run("zebra", standard);
        assert_eq!((warm.index.files_read, rounds), (0, 1));
        assert!(warm.hits.is_empty());

        // Same size and the same mtime: only ctime tells. Near the end, in a worker's part.
        let late = f.dir.join("reference/m0891.md");
        let modified = fs::metadata(&late).unwrap().modified().unwrap();
        edit_keeping_size(&late);
        set_mtime(&late, modified);
        let (seen, rounds) = run("zebra", standard);
        assert_eq!(rounds, 2);
        let ids: Vec<&str> = seen.hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["reference/m0891.md"]);
        let (reference, _) = run("zebra", IndexUse::Off);
        assert_eq!(
            serde_json::to_value(&seen).unwrap(),
            serde_json::to_value(&reference).unwrap()
        );
        // Once the edit settled, one more query rewrites the index; the next trusts it.
        settle();
        run("zebra", standard);
        let (again, rounds) = run("zebra", standard);
        assert_eq!((again.index.files_read, rounds), (0, 1));
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&reference).unwrap()
        );
    }

    #[test]
    fn a_large_scope_is_indexed_over_several_queries_with_the_same_answers() {
        let f = fixture(120);
        settle();
        // Queries indexing at most 25 files each: the first few fill the index.
        let first = same_as_reference_with(&f, 25);
        assert!(first.written >= 2);
        let bytes = fs::read(index_path(&f)).unwrap();
        let view = IndexView::decode(&bytes).unwrap();
        assert!(
            view.files
                .iter()
                .all(|m| m.settled || m.state == DocState::Skipped)
        );
        let warm = same_as_reference_with(&f, 25);
        assert_eq!(warm.written, 0);
        assert_eq!(warm.files_read, 0);
    }

    #[test]
    fn recalls_racing_to_write_the_index_all_answer_right_and_leave_it_whole() {
        let f = fixture(150);
        settle();
        let reference: Vec<serde_json::Value> = QUERIES
            .iter()
            .map(|q| {
                let r = recall_with(&f.project, &[ScopeKind::User], q, 50, 80, IndexUse::Off);
                serde_json::to_value(r.unwrap()).unwrap()
            })
            .collect();
        for round in 0..3 {
            // Each round starts without an index (or with one about to change), and four
            // recalls build and rewrite it at once.
            if round == 1 {
                fs::remove_file(index_path(&f)).unwrap();
            }
            if round == 2 {
                fs::remove_file(f.dir.join("user/m0000.md")).unwrap();
            }
            let expected: Vec<serde_json::Value> = if round == 2 {
                QUERIES
                    .iter()
                    .map(|q| {
                        let r =
                            recall_with(&f.project, &[ScopeKind::User], q, 50, 80, IndexUse::Off);
                        serde_json::to_value(r.unwrap()).unwrap()
                    })
                    .collect()
            } else {
                reference.clone()
            };
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for (q, want) in QUERIES.iter().zip(&expected) {
                            let index = IndexUse::On {
                                settle: TEST_SETTLE,
                                budget: 40,
                            };
                            let r = recall_with(&f.project, &[ScopeKind::User], q, 50, 80, index);
                            assert_eq!(&serde_json::to_value(r.unwrap()).unwrap(), want);
                        }
                    });
                }
            });
            assert!(IndexView::decode(&fs::read(index_path(&f)).unwrap()).is_some());
        }
    }

    #[test]
    fn an_index_built_for_another_folder_is_not_used() {
        let f = fixture(40);
        settle();
        same_as_reference(&f);
        let path = index_path(&f);
        let bytes = fs::read(&path).unwrap();
        let view = IndexView::decode(&bytes).unwrap();
        assert_eq!(view.dir, f.dir.to_string_lossy());
        // Same files, another folder name recorded: rebuilt, not trusted.
        let files: Vec<FileMeta<'_>> = view.files.clone();
        let other = index::encode("/elsewhere", false, &view.folders, &files, Vec::new());
        fs::write(&path, other).unwrap();
        let report = same_as_reference(&f);
        assert!(report.written >= 1);
    }

    /// Every query through the live handle answers as [`recall_unaged`] does (the whole ranking
    /// and the top 3, compared as the JSON a client gets).
    fn live_same_as_unaged(f: &Fixture, live: &mut LiveRecall) {
        for (query, max) in QUERIES.iter().flat_map(|q| [(q, 100_000), (q, 3)]) {
            let scopes = [ScopeKind::User];
            let want = recall_unaged(&f.project, &scopes, query, max, 80).unwrap();
            let got = recall_live(&f.project, live, &scopes, query, max, 80).unwrap();
            assert_eq!(
                serde_json::to_value(&got).unwrap(),
                serde_json::to_value(&want).unwrap(),
                "query {query:?}, max {max}"
            );
        }
    }

    #[test]
    fn a_symlinked_memory_whose_target_changes_unnoted_is_seen_by_the_next_live_query() {
        let f = fixture(40);
        // A link to another memory of the scope (one pointing outside is refused).
        let target = f.dir.join("reference/target.md");
        let linked = |body: &str| {
            fs::write(
                &target,
                format!("---\nname: linked\ndescription: a linked note\ntype: user\n---\n{body}\n"),
            )
            .unwrap();
        };
        linked("postgres once");
        std::os::unix::fs::symlink(&target, f.dir.join("user/linked.md")).unwrap();
        settle();
        let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
        live_same_as_unaged(&f, &mut live);
        // The target changes and nothing is noted (a watcher would name the target, never the
        // link); settled, so only the symlink rule sends the handle to look again.
        linked("zebra postgres migration deploy cache schema, a longer body than before");
        settle();
        live_same_as_unaged(&f, &mut live);
        let found = recall_live(&f.project, &mut live, &[ScopeKind::User], "zebra", 5, 80).unwrap();
        let found = serde_json::to_string(&found).unwrap();
        assert!(found.contains("linked.md"), "{found}");
    }

    #[test]
    fn a_live_handle_answers_as_the_files_do_through_noted_edits_and_touches_nothing_else() {
        let f = fixture(200);
        settle();
        let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
        let opened = live.report();
        assert_eq!(opened.stats + opened.reads, 200, "{opened:?}");
        live_same_as_unaged(&f, &mut live);
        // Warm, nothing noted: no memory statted, listed or read (the shown ones are cached).
        let before = live.report();
        live_same_as_unaged(&f, &mut live);
        let after = live.report();
        assert_eq!(after, before);

        // Edits that change the size, additions (one in a new folder), deletions, renames,
        // each noted as a watcher reports it.
        let mut changed: Vec<PathBuf> = Vec::new();
        let mut rng = Lcg(99);
        for i in [1, 2, 3, 50, 51] {
            let (rel, _) = memory(&mut rng, i);
            let path = f.dir.join(&rel);
            let text = fs::read_to_string(&path).unwrap();
            fs::write(
                &path,
                text.replacen("\n\n", "\npostgres migration 数据库\n", 1),
            )
            .unwrap();
            changed.push(path);
        }
        for i in 200..203 {
            let (rel, text) = memory(&mut rng, i);
            write(&f.dir, &rel, &text);
            changed.push(f.dir.join(rel));
        }
        write(
            &f.dir,
            "project/deeper/nested.md",
            "---\nname: Nested postgres\ndescription: deploy\ntype: project\n---\ncache\n",
        );
        changed.push(f.dir.join("project/deeper"));
        for rel in ["user/m0000.md", "feedback/m0009.md", "project/m0010.md"] {
            fs::remove_file(f.dir.join(rel)).unwrap();
            changed.push(f.dir.join(rel));
        }
        fs::rename(f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")).unwrap();
        changed.extend([f.dir.join("user/m0004.md"), f.dir.join("user/a-first.md")]);
        fs::rename(
            f.dir.join("reference/m0003.md"),
            f.dir.join("feedback/m0003.md"),
        )
        .unwrap();
        changed.extend([
            f.dir.join("reference/m0003.md"),
            f.dir.join("feedback/m0003.md"),
        ]);
        // Same size and the very same mtime: the watcher still reports it.
        let put_back = f.dir.join("feedback/m0021.md");
        let modified = fs::metadata(&put_back).unwrap().modified().unwrap();
        edit_keeping_size(&put_back);
        set_mtime(&put_back, modified);
        changed.push(put_back);
        for path in &changed {
            assert!(live.note_changed(path), "{}", path.display());
        }
        assert!(!live.note_changed(Path::new("/somewhere/else.md")));
        live_same_as_unaged(&f, &mut live);
        let noted = live.report();
        assert!(noted.stats - after.stats <= changed.len(), "{noted:?}");
        settle();
        live_same_as_unaged(&f, &mut live);

        // A folder renamed away and another put in its place: noted as the folders.
        fs::rename(f.dir.join("project"), f.dir.join("old-project")).unwrap();
        fs::create_dir(f.dir.join("project")).unwrap();
        write(
            &f.dir,
            "project/m0006.md",
            "---\nname: Replaced postgres\ndescription: deploy cache\ntype: project\n---\nzebra\n",
        );
        live.note_changed(&f.dir.join("project"));
        live.note_changed(&f.dir.join("old-project"));
        live_same_as_unaged(&f, &mut live);

        // Changes nobody reported, then the watcher overflowed: everything is looked at.
        fs::remove_file(f.dir.join("user/m0008.md")).unwrap();
        write(
            &f.dir,
            "feedback/unreported.md",
            "---\nname: Unreported postgres\ndescription: zebra\ntype: feedback\n---\ncache\n",
        );
        edit_keeping_size(&f.dir.join("feedback/m0013.md"));
        settle();
        live.note_all_changed();
        live_same_as_unaged(&f, &mut live);
        live_same_as_unaged(&f, &mut live);

        // A new process opens what the handle wrote back, and answers the same.
        let mut again = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
        live_same_as_unaged(&f, &mut again);
    }

    #[test]
    fn a_live_handle_can_be_shared_by_a_server_s_threads() {
        // The MCP server keeps it behind a lock that its tasks take from any thread.
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<LiveRecall>();
        shareable::<std::sync::Mutex<LiveRecall>>();
    }

    #[test]
    fn a_live_handle_over_a_scope_without_memories_sees_its_first_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Environment {
            base_dir: Some(tmp.path().join("base")),
            ..Default::default()
        };
        let project = Project::open_with(tmp.path(), env).unwrap();
        let dir = project.scope_dir(ScopeKind::User).unwrap();
        let f = Fixture {
            _tmp: tmp,
            project,
            dir: dir.clone(),
        };
        let mut live = LiveRecall::open_with(&f.project, &[ScopeKind::User], TEST_SETTLE).unwrap();
        live_same_as_unaged(&f, &mut live);
        // The scope folder itself appears, with a memory in a folder of its own.
        let mut rng = Lcg(3);
        for i in 0..30 {
            let (rel, text) = memory(&mut rng, i);
            write(&dir, &rel, &text);
        }
        live.note_changed(&dir);
        live_same_as_unaged(&f, &mut live);
    }
}
