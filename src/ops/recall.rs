//! Recall: the memories most relevant to a query, across the enabled scopes, each with its
//! freshness, who last changed it (team memories), and how often it was used.
//!
//! Speed comes from not reading what did not change: each scope's recall index
//! ([`crate::domain::recall::index`]) scores every memory whose stamp is unchanged, and only the
//! others are read. A file that is read is parsed only when one of the query's tokens occurs
//! in its (folded) text, found with one Aho-Corasick pass. [`RecallIndexUse::Off`] reads every file:
//! the reference the index is tested against.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::domain::memory::MemoryType;
use crate::domain::recall::index;
use crate::domain::recall::live::LiveScope;
use crate::domain::recall::refresh::{
    KnownStamps, Ranking, StampProof, keep_best, read_shown, scan_files, scan_indexed_unproven,
};
use crate::domain::recall::usage::{self, UsageBook, Used};
use crate::domain::recall::{Analyzer, PROXIMITY_CANDIDATES, Query, points};
use crate::domain::scope::ScopeKind;
use crate::domain::store::Stamp;
use crate::git::cli_repo::Opened;
use crate::git::history;
use crate::git::remote::Deadline;
use crate::git::snapshot;

use super::cite::load_usage;
use super::mcp::vouch;
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
    pub index: RecallIndexReport,
}

/// How long a file's times must lie in the past before the recall index trusts its stamp:
/// file times come from a coarse clock, and an edit within the same tick can leave them as
/// they were (git's "racy clean" problem; baseline diff uses the same window).
pub const SETTLE: Duration = Duration::from_secs(2);

/// The most files one query indexes. Every file a query reads is analysed in full anyway
/// (IDF and average lengths need every memory), so indexing it as well costs little more: the
/// first query over a scope of up to this many memories builds the whole index.
pub const INDEX_BUDGET: usize = 100_000;

pub use crate::domain::recall::refresh::RecallIndexReport;

/// Whether recall uses its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallIndexUse {
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

impl RecallIndexUse {
    /// The index as `teammem recall` uses it.
    pub const STANDARD: RecallIndexUse = RecallIndexUse::On {
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
    recall_with(project, scopes, query, max, chars, RecallIndexUse::STANDARD)
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
        &mut Source::Files(RecallIndexUse::STANDARD),
        Ages::FileTime,
        &mut |_| (),
    )
    .map(|(found, ())| found)
}

/// [`recall_unaged`] (`limits`: results and characters per body), and `then` done on what it
/// found while the stats that must confirm the answer are still being taken, as
/// [`recall_then`] does (see there for what `then` may change).
pub fn recall_unaged_then<T>(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    limits: (usize, usize),
    mut then: impl FnMut(&mut Recalled) -> T,
) -> Result<(Recalled, T), OpError> {
    recall_inner(
        project,
        scopes,
        query,
        limits,
        &mut Source::Files(RecallIndexUse::STANDARD),
        Ages::FileTime,
        &mut then,
    )
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
    Files(RecallIndexUse),
    /// A live index in memory.
    Live(&'a mut LiveRecall),
}

/// Where the hits' ages come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ages {
    /// The last commit that changed the memory when the work tree holds that version.
    History,
    /// [`Ages::History`] as far as history is walked by then; the file's time beyond.
    HistoryUntil(Instant),
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
    index: RecallIndexUse,
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
    index: RecallIndexUse,
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
    let mut files = Source::Files(RecallIndexUse::Off);
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
        index: RecallIndexReport::default(),
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
                (RecallIndexUse::On { settle, budget }, Some(file)) => {
                    let taken = known
                        .iter()
                        .position(|(s, _)| *s == scope)
                        .map(|at| known.swap_remove(at).1);
                    let at = (order, scope);
                    let vouched = |sum| vouch::vouched(&file, sum);
                    let (found, proof) = scan_indexed_unproven(
                        &dir,
                        &file,
                        &parsed,
                        at,
                        (settle, budget),
                        taken,
                        &vouched,
                    )?;
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
                        *index = RecallIndexUse::Off;
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
pub(crate) fn index_file(project: &Project, scope: ScopeKind, dir: &Path) -> Option<PathBuf> {
    if !cfg!(unix) {
        // Without inode numbers and ctime a stamp cannot see every edit.
        return None;
    }
    let folder = dir.file_name()?.to_string_lossy();
    let local = scope == ScopeKind::Private && project.layout.local_private;
    let name = format!("{}{folder}-recall.idx", if local { "local-" } else { "" });
    Some(project.layout.outside_state_dir(scope)?.join(name))
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

/// When each memory (scope folder, file, stamp of the version shown) last changed, as
/// [`recall`] tells it, walking git's history for these files alone until `deadline`: a
/// memory whose last commit is not found by then has its file time.
pub(crate) fn ages_from_history(
    project: &Project,
    memories: &[(&Path, &str, Stamp)],
    deadline: Instant,
) -> Result<Vec<Freshness>, OpError> {
    freshness(project, memories, Ages::HistoryUntil(deadline))
}

/// The last change of each memory inside the work tree (`inside`: index into `memories`, path
/// in the repository) whose work-tree file is the version HEAD holds (`None` where the walk
/// did not reach it): through libgit2, or through git in a repository libgit2 cannot open.
fn commit_ages(
    project: &Project,
    memories: &[(&Path, &str, Stamp)],
    inside: Vec<(usize, String)>,
    deadline: Option<Instant>,
) -> Result<Vec<(usize, Option<LastCommit>)>, OpError> {
    let paths = project.repo_paths()?;
    let names: Vec<String> = inside.iter().map(|(_, full)| full.clone()).collect();
    let committed: Vec<(usize, String)>;
    let mut changes: HashMap<String, LastCommit> = HashMap::new();
    match crate::git::cli_repo::open(paths)? {
        Opened::Git(cli) => {
            let budget = match deadline {
                Some(at) => Deadline::at(at),
                None => Deadline::after(GIT_HISTORY_BUDGET),
            };
            // Ages are told beside what is recalled: a git run that fails or runs out of time
            // leaves every memory its file time, never the recall without its answer.
            let (Ok(head), Ok(on_disk)) = (
                cli.head_blob_ids(&names, &budget),
                cli.file_ids(&names, &budget),
            ) else {
                return Ok(Vec::new());
            };
            committed = inside
                .into_iter()
                .zip(on_disk)
                .filter(|((_, full), id)| head.get(full) == Some(id))
                .map(|(named, _)| named)
                .collect();
            let names: Vec<String> = committed.iter().map(|(_, full)| full.clone()).collect();
            let dir = history::file::common_dir(&names);
            if let Ok(found) = cli.last_changes(&names, &dir, &budget) {
                changes = found
                    .into_iter()
                    .map(|(path, c)| (path, c.into()))
                    .collect();
            }
        }
        Opened::Libgit2(repo) => {
            let head = history::file::head_blobs(&repo, &names)?;
            let mut kept = Vec::new();
            for (i, full) in inside {
                let (dir, rel, _) = memories[i];
                let path = dir.join(rel);
                let bytes = std::fs::read(&path).map_err(|e| OpError::io(&path, e))?;
                if head.get(&full) == Some(&snapshot::blob_id(&bytes)?) {
                    kept.push((i, full));
                }
            }
            committed = kept;
            let names: Vec<String> = committed.iter().map(|(_, full)| full.clone()).collect();
            changes = history::file::last_changes_until(&repo, &names, deadline)?
                .into_iter()
                .map(|(path, c)| (path, c.into()))
                .collect();
        }
    }
    Ok(committed
        .into_iter()
        .map(|(i, full)| (i, changes.remove(&full)))
        .collect())
}

/// The last commit that changed a memory: its author time and author.
struct LastCommit {
    time: i64,
    author: String,
}

impl From<history::file::LastChange> for LastCommit {
    fn from(change: history::file::LastChange) -> Self {
        LastCommit {
            time: change.time,
            author: change.author,
        }
    }
}

impl From<crate::git::cli_repo::history::CliChange> for LastCommit {
    fn from(change: crate::git::cli_repo::history::CliChange) -> Self {
        LastCommit {
            time: change.time,
            author: change.author,
        }
    }
}

/// [`Freshness::from`] of a memory whose file is the version `HEAD` holds but whose last commit
/// a walk under a deadline did not reach: its age is not known (its file time is only when it
/// was checked out).
pub const NOT_REACHED: &str = "not-reached";

/// How long git may walk the history when no deadline is given (a repository libgit2 cannot
/// open).
pub(crate) const GIT_HISTORY_BUDGET: Duration = Duration::from_secs(60);

/// When a memory last changed, and who changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freshness {
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// `commit` (the last commit that touched it), `file-time`, or [`NOT_REACHED`].
    pub from: &'static str,
    /// Who made that commit (tracked memories only).
    pub by: Option<String>,
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
        Ages::History | Ages::HistoryUntil(_) => project.repo.as_ref().map(|r| r.workdir.clone()),
        Ages::FileTime => None,
    };
    let deadline = match ages {
        Ages::HistoryUntil(deadline) => Some(deadline),
        Ages::History | Ages::FileTime => None,
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
            for (i, last) in commit_ages(project, memories, inside, deadline)? {
                from_commits[i] = match last {
                    Some(last) => Some(Freshness {
                        time: last.time,
                        from: "commit",
                        by: Some(last.author),
                    }),
                    // The file is `HEAD`'s version, so its time is only when it was checked
                    // out: under a deadline its last commit was not reached, and its age is
                    // not known (never a false "today").
                    None if deadline.is_some() => Some(Freshness {
                        time: memories[i].2.mtime_ns.max(0) / 1_000_000_000,
                        from: NOT_REACHED,
                        by: None,
                    }),
                    None => None,
                };
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
mod tests;
