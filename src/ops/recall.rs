//! Recall: the memories most relevant to a query, across the enabled scopes, each with its
//! freshness, who last changed it (team memories), and how often it was used.
//!
//! Speed comes from not reading what did not change: each scope's recall index
//! ([`crate::domain::recall_index`]) scores every memory whose stamp is unchanged, and only the
//! others are read. A file that is read is parsed only when one of the query's tokens occurs
//! in its (folded) text, found with one Aho-Corasick pass. [`IndexUse::Off`] reads every file:
//! the reference the index is tested against.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::domain::memory::{MAX_FILE_BYTES, MemoryFile, MemoryType};
use crate::domain::recall::{
    Analyzer, Collection, FIELDS, FieldUnits, PROXIMITY_CANDIDATES, Query, TokenMap, points,
};
use crate::domain::recall_index::{
    self, DocState, FileMeta, FolderMeta, IndexView, NumberedPostings, Postings, merge_tokens,
};
use crate::domain::scope::{Layout, ScopeKind};
use crate::domain::store::{self, Stamp};
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

/// What the index did for one recall (for tests and benchmarks; not printed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Memories scored from the index, without reading their files.
    pub from_index: usize,
    /// Memory files read (new, changed, or not yet settled).
    pub files_read: usize,
    /// Index files written.
    pub written: usize,
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

/// [`recall`], with or without the index.
pub fn recall_with(
    project: &Project,
    scopes: &[ScopeKind],
    query: &str,
    max: usize,
    chars: usize,
    index: IndexUse,
) -> Result<Recalled, OpError> {
    let parsed = Query::new(query);
    let mut recalled = Recalled {
        query: query.to_string(),
        tokens: parsed.tokens().to_vec(),
        scanned: 0,
        hits: Vec::new(),
        index: IndexReport::default(),
    };
    if parsed.tokens().is_empty() || max == 0 {
        return Ok(recalled);
    }
    // Every scope first gathers its statistics and candidates; scores need all of them, as
    // IDF and average lengths are taken over every scope queried.
    let mut collection = Collection::default();
    let mut df = vec![0u64; parsed.tokens().len()];
    let mut candidates: Vec<Candidate> = Vec::new();
    for (order, &scope) in scopes.iter().enumerate() {
        let dir = project.check_scope_safe(scope)?;
        let found = match (index, index_file(project, scope, &dir)) {
            (IndexUse::On { settle, budget }, Some(file)) => {
                scan_indexed(&dir, &file, &parsed, (order, scope), (settle, budget))?
            }
            _ => scan_files(&dir, &parsed, order, scope)?,
        };
        recalled.scanned += found.scanned;
        recalled.index.from_index += found.report.from_index;
        recalled.index.files_read += found.report.files_read;
        recalled.index.written += found.report.written;
        collection.merge(&found.collection);
        for (sum, n) in df.iter_mut().zip(&found.df) {
            *sum += n;
        }
        if candidates.is_empty() {
            candidates = found.candidates;
        } else {
            candidates.extend(found.candidates);
        }
    }
    let stats = parsed.stats(&collection, &df);
    for c in &mut candidates {
        c.score = parsed.score(&stats, c.lengths, &c.units);
        c.points = points(c.score);
        c.affinity = parsed.type_affinity(c.kind);
    }
    candidates.retain(|c| c.points > 0);
    // The best few earn the proximity boost; only they are read (those scored from the index).
    let pool = PROXIMITY_CANDIDATES.max(max);
    keep_best(&mut candidates, pool);
    let mut analyzer = Analyzer::new();
    for c in &mut candidates {
        if c.file.is_none() {
            // Scored from the index: only the memories shown or boosted are read. One that
            // changed since its stat (a write racing this run) sends the query to the files.
            let dir = project.scope_dir(c.scope)?;
            match read_shown(&dir, &c.rel, c.stamp) {
                Some(file) => c.file = Some(Box::new(file)),
                None => return recall_with(project, scopes, query, max, chars, IndexUse::Off),
            }
        }
        if let Some(file) = &c.file {
            let fields = recall_index::folded_fields(file);
            c.points = points(c.score + parsed.proximity(&stats, &mut analyzer, &fields));
        }
    }
    keep_best(&mut candidates, max);

    let now = usage::now();
    let mut books: HashMap<ScopeKind, UsageBook> = HashMap::new();
    for found in candidates {
        let Some(file) = found.file.map(|f| *f) else {
            continue;
        };
        let dir = project.scope_dir(found.scope)?;
        let (scope, rel, score) = (found.scope, found.rel, found.points);
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

/// One memory that holds a query term.
struct Candidate {
    /// The scope's position in the query's scope list.
    order: usize,
    rel: String,
    scope: ScopeKind,
    kind: MemoryType,
    /// The parsed file; `None` when it was scored from the index (read when needed).
    /// (Boxed: a query matching every memory moves thousands of candidates.)
    file: Option<Box<MemoryFile>>,
    /// Its stamp when scored (from the index: the file must still have it when read).
    stamp: Stamp,
    /// Its field lengths in terms.
    lengths: [u32; FIELDS],
    /// Occurrences of each query term, per field.
    units: Vec<FieldUnits>,
    /// BM25F, once every scope is gathered.
    score: f64,
    /// The score as shown and compared.
    points: u32,
    /// Type words of its type in the query (the first tie-break).
    affinity: u32,
}

impl Candidate {
    /// The day it was last written (the freshness tie-break: newer first). Whole days, so
    /// that files a clone or a checkout wrote seconds apart tie and fall through to the path.
    fn day(&self) -> i64 {
        self.stamp.mtime_ns.div_euclid(86_400 * 1_000_000_000)
    }
}

/// The ranking: score, then type words, freshness, scope position and path.
fn rank(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.points
        .cmp(&a.points)
        .then(b.affinity.cmp(&a.affinity))
        .then(b.day().cmp(&a.day()))
        .then(a.order.cmp(&b.order))
        .then_with(|| a.rel.as_bytes().cmp(b.rel.as_bytes()))
}

/// Keeps the best `max` candidates, best first. Positions are selected, not candidates, so
/// that a query matching every memory does not move thousands of them around.
fn keep_best(candidates: &mut Vec<Candidate>, max: usize) {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    let by_rank = |a: &usize, b: &usize| rank(&candidates[*a], &candidates[*b]);
    if order.len() > max {
        if max == 0 {
            order.clear();
        } else {
            order.select_nth_unstable_by(max, by_rank);
            order.truncate(max);
        }
    }
    let mut keep = vec![false; candidates.len()];
    for i in order {
        keep[i] = true;
    }
    let mut at = 0;
    candidates.retain(|_| {
        at += 1;
        keep[at - 1]
    });
    candidates.sort_by(rank);
}

/// What gathering one scope found.
#[derive(Default)]
struct Found {
    collection: Collection,
    df: Vec<u64>,
    candidates: Vec<Candidate>,
    scanned: usize,
    report: IndexReport,
}

impl Found {
    fn new(query: &Query, scanned: usize) -> Found {
        Found {
            df: vec![0; query.tokens().len()],
            scanned,
            ..Found::default()
        }
    }

    /// Counts one valid memory that was read, and keeps it when it holds a query term.
    fn add_read(&mut self, mut read: ReadMemory) {
        self.collection.add(read.lengths);
        let Some(units) = read.units.take() else {
            return;
        };
        for (df, per) in self.df.iter_mut().zip(&units) {
            *df += u64::from(per.iter().any(|&n| n > 0));
        }
        self.candidates.push(read.candidate(units));
    }
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

/// Gathers one scope by reading every memory file (the reference).
fn scan_files(dir: &Path, query: &Query, order: usize, scope: ScopeKind) -> Result<Found, OpError> {
    let paths = store::memory_paths(dir)?;
    let read = in_parallel(&paths, |part| {
        let mut analyzer = Analyzer::new();
        part.iter()
            .filter_map(|rel| read_and_analyse(dir, rel, query, &mut analyzer, (order, scope)))
            .map(drop_unmatched)
            .collect()
    });
    let mut found = Found::new(query, paths.len());
    found.report.files_read = paths.len();
    for memory in read {
        found.add_read(memory);
    }
    Ok(found)
}

/// How many of `len` files each reader thread takes: at most four threads, at least 256 files
/// each (fewer are not worth a thread).
fn reader_chunk(len: usize) -> usize {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    len.div_ceil(threads).max(256)
}

/// Runs `work` over `items` split among a few threads (reading and statting thousands of
/// small files is syscall-bound), joining the results back in order.
fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    let chunk = reader_chunk(items.len());
    if items.len() <= chunk {
        return work(items);
    }
    let work = &work;
    std::thread::scope(|s| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || work(part)))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

/// Reads one memory file, at most one byte over the size limit, with the stamp of what was
/// read. The stamp gives the length, so a file is read in one call, without a second one to
/// find its end (a file growing meanwhile is read up to the length it had; its stamp then no
/// longer matches, and the next query reads it again).
fn read_stamped(path: &Path) -> Option<(Stamp, Vec<u8>)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let stamp = Stamp::of(&file.metadata().ok()?);
    let limit = MAX_FILE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if stamp.size > 0 && stamp.size < limit {
        bytes.resize(stamp.size as usize, 0);
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        bytes.truncate(filled);
        return Some((stamp, bytes));
    }
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some((stamp, bytes))
}

/// A valid memory, read and analysed.
struct ReadMemory {
    order: usize,
    rel: String,
    scope: ScopeKind,
    stamp: Stamp,
    lengths: [u32; FIELDS],
    /// Occurrences of each query term; `None` when it holds none.
    units: Option<Vec<FieldUnits>>,
    /// Kept only when it holds a query term.
    kind: MemoryType,
    file: Option<Box<MemoryFile>>,
}

impl ReadMemory {
    fn candidate(self, units: Vec<FieldUnits>) -> Candidate {
        Candidate {
            order: self.order,
            kind: self.kind,
            rel: self.rel,
            scope: self.scope,
            file: self.file,
            stamp: self.stamp,
            lengths: self.lengths,
            units,
            score: 0.0,
            points: 0,
            affinity: 0,
        }
    }
}

/// Reads, parses and analyses one file (the reference); `None` when it is not a valid memory.
fn read_and_analyse(
    dir: &Path,
    rel: &str,
    query: &Query,
    analyzer: &mut Analyzer,
    (order, scope): (usize, ScopeKind),
) -> Option<ReadMemory> {
    let (stamp, bytes) = read_stamped(&dir.join(rel))?;
    let file = MemoryFile::parse(rel, &bytes).ok()?;
    let (lengths, units) =
        recall_index::units_of(query, analyzer, &recall_index::folded_fields(&file));
    Some(ReadMemory {
        order,
        rel: rel.to_string(),
        scope,
        stamp,
        lengths,
        units,
        kind: file.kind,
        file: Some(Box::new(file)),
    })
}

/// A file's index entry as read: stamp, state, type and field lengths.
type Entry = (Stamp, DocState, MemoryType, [u32; FIELDS]);

/// What reading one file for the index gives: the memory (when valid) and its index entry
/// (`None`: it could not be read).
type ReadForIndex = (Option<ReadMemory>, Option<Entry>);

/// Reads one file for the index: analyses it as [`read_and_analyse`] would, and adds its terms
/// (as memory number `doc`) to `tokens`.
fn read_for_index(
    dir: &Path,
    rel: &str,
    (query, analyzer): (&Query, &mut Analyzer),
    (order, scope): (usize, ScopeKind),
    doc: u32,
    postings: &mut NumberedPostings,
) -> ReadForIndex {
    let Some((stamp, bytes)) = read_stamped(&dir.join(rel)) else {
        return (None, None);
    };
    let Ok(file) = MemoryFile::parse(rel, &bytes) else {
        return (
            None,
            Some((stamp, DocState::Skipped, MemoryType::User, [0; FIELDS])),
        );
    };
    let lengths =
        recall_index::add_terms(analyzer, &recall_index::folded_fields(&file), doc, postings);
    let units = recall_index::units_added(query, analyzer, postings, doc);
    let entry = Some((stamp, DocState::Indexed, file.kind, lengths));
    let memory = ReadMemory {
        order,
        rel: rel.to_string(),
        scope,
        stamp,
        lengths,
        units,
        kind: file.kind,
        file: Some(Box::new(file)),
    };
    (Some(memory), entry)
}

/// What reading files for the index gives: each file's entry (`None`: unreadable), in order;
/// the valid memories; and the terms of all.
type ReadAll = (Vec<Option<Entry>>, Vec<ReadMemory>, TokenMap<Postings>);

/// Reads the files `to_read` (positions in `paths`) for the index, over a few threads; their
/// terms are numbered by position in `paths`.
fn read_all_for_index(
    dir: &Path,
    paths: &[String],
    to_read: &[usize],
    query: &Query,
    (order, scope): (usize, ScopeKind),
) -> ReadAll {
    let work = |part: &[usize]| {
        let mut analyzer = Analyzer::new();
        let mut postings = NumberedPostings::new();
        let mut read = Vec::new();
        let mut entries = Vec::with_capacity(part.len());
        for &i in part {
            let (memory, entry) = read_for_index(
                dir,
                &paths[i],
                (query, &mut analyzer),
                (order, scope),
                i as u32,
                &mut postings,
            );
            entries.push(entry);
            read.extend(memory.map(drop_unmatched));
        }
        (entries, read, recall_index::by_term(&analyzer, postings))
    };
    let chunk = reader_chunk(to_read.len());
    if to_read.len() <= chunk {
        return work(to_read);
    }
    let parts: Vec<ReadAll> = std::thread::scope(|s| {
        let workers: Vec<_> = to_read
            .chunks(chunk)
            .map(|part| s.spawn(move || work(part)))
            .collect();
        workers
            .into_iter()
            .zip(to_read.chunks(chunk))
            // A reader thread that died leaves its files unread: recorded as unreadable, so
            // they are read again next time (and this query falls back to the files).
            .map(|(w, part)| {
                w.join()
                    .unwrap_or_else(|_| (vec![None; part.len()], Vec::new(), TokenMap::default()))
            })
            .collect()
    });
    let mut entries = Vec::with_capacity(to_read.len());
    let mut read = Vec::new();
    let mut tokens: TokenMap<Postings> = TokenMap::default();
    // Parts come in path order, so appending keeps every term's postings ascending.
    for (part_entries, part_read, part_tokens) in parts {
        entries.extend(part_entries);
        read.extend(part_read);
        if tokens.is_empty() {
            tokens = part_tokens;
            continue;
        }
        for (token, postings) in part_tokens {
            tokens.entry(token).or_default().extend(postings);
        }
    }
    (entries, read, tokens)
}

/// A memory that holds no query term is kept only for the statistics: its parsed file goes.
fn drop_unmatched(mut memory: ReadMemory) -> ReadMemory {
    if memory.units.is_none() {
        memory.file = None;
    }
    memory
}

/// Whether the index as it now stands says something the old one does not: a name added or
/// removed, or an entry changed whose new stamp can be trusted. An entry whose stamp is too
/// young to trust (a memory edited seconds ago) is read again by every query anyway, so it is
/// not worth rewriting the whole index for: that waits until it settles.
fn worth_writing(
    old: Option<&IndexView<'_>>,
    symlinks: bool,
    folders: &[FolderMeta<'_>],
    files: &[FileMeta<'_>],
) -> bool {
    let Some(old) = old else {
        return true;
    };
    let same_names = old.symlinks == symlinks
        && old.folders.len() == folders.len()
        && old.files.len() == files.len()
        && old.folders.iter().zip(folders).all(|(a, b)| a.rel == b.rel)
        && old.files.iter().zip(files).all(|(a, b)| a.rel == b.rel);
    !same_names
        || old
            .folders
            .iter()
            .zip(folders)
            .any(|(a, b)| a != b && b.settled)
        || old
            .files
            .iter()
            .zip(files)
            .any(|(a, b)| a != b && b.settled)
}

/// Reads a memory scored from the index, for showing it; `None` when its stamp is no longer
/// the one it was scored with.
fn read_shown(dir: &Path, rel: &str, stamp: Stamp) -> Option<MemoryFile> {
    let (now, bytes) = read_stamped(&dir.join(rel))?;
    if now != stamp {
        return None;
    }
    MemoryFile::parse(rel, &bytes).ok()
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Gathers one scope through its index: the memories whose stamp is unchanged and settled
/// come from the index, the others are read as [`scan_files`] reads them; then the index is
/// rewritten if anything changed. The listing itself comes from the index while no folder's
/// stamp changed (a name added, removed or renamed changes its folder's times).
fn scan_indexed(
    dir: &Path,
    index_path: &Path,
    query: &Query,
    (order, scope): (usize, ScopeKind),
    (settle, budget): (Duration, usize),
) -> Result<Found, OpError> {
    if !dir.is_dir() {
        return scan_files(dir, query, order, scope);
    }
    let now = now_ns();
    let window = i64::try_from(settle.as_nanos()).unwrap_or(i64::MAX);
    let old_bytes = std::fs::read(index_path).ok();
    let dir_text = dir.to_string_lossy();
    let old = old_bytes
        .as_deref()
        .and_then(IndexView::decode)
        .filter(|v| v.dir == dir_text);

    let unchanged_listing = old.as_ref().filter(|v| {
        !v.symlinks
            && !v.folders.is_empty()
            && v.folders.iter().all(|f| {
                f.settled
                    && std::fs::metadata(dir.join(f.rel)).is_ok_and(|m| Stamp::of(&m) == f.stamp)
            })
    });
    let (paths, folders, symlinks): (Vec<String>, Vec<(String, Stamp, bool)>, bool) =
        match unchanged_listing {
            Some(v) => (
                v.files.iter().map(|f| f.rel.to_string()).collect(),
                v.folders
                    .iter()
                    .map(|f| (f.rel.to_string(), f.stamp, f.settled))
                    .collect(),
                false,
            ),
            None => {
                let listing = store::memory_listing(dir)?;
                let folders = listing
                    .folders
                    .into_iter()
                    .map(|(rel, stamp)| {
                        let settled = stamp.settled(now, window);
                        (rel, stamp, settled)
                    })
                    .collect();
                (listing.paths, folders, listing.symlinks)
            }
        };
    // Each listed file's entry in the old index, matched by path (both are sorted bytewise).
    let old_files = old.as_ref().map_or(&[][..], |v| &v.files[..]);
    let mut was: Vec<Option<usize>> = vec![None; paths.len()];
    let mut j = 0;
    for (i, rel) in paths.iter().enumerate() {
        while j < old_files.len() && old_files[j].rel.as_bytes() < rel.as_bytes() {
            j += 1;
        }
        if j < old_files.len() && old_files[j].rel == rel {
            was[i] = Some(j);
        }
    }
    // Only an entry that could be trusted is worth a stat: the other files are read anyway
    // (and stamped as they are read).
    let could_trust: Vec<usize> = (0..paths.len())
        .filter(|&i| was[i].is_some_and(|j| old_files[j].settled))
        .collect();
    let names: Vec<&str> = could_trust.iter().map(|&i| paths[i].as_str()).collect();
    let mut stamps: Vec<Option<Stamp>> = vec![None; paths.len()];
    for (&i, stamp) in could_trust.iter().zip(store::stamps(dir, &names)) {
        stamps[i] = stamp;
    }
    // Trusted: same stamp as when indexed, and that stamp had settled.
    let mut trusted: Vec<Option<usize>> = vec![None; paths.len()];
    for &i in &could_trust {
        trusted[i] = was[i].filter(|&j| Some(old_files[j].stamp) == stamps[i]);
    }

    let mut found = Found::new(query, paths.len());
    if let Some(old) = &old {
        let mut use_doc = vec![false; old.files.len()];
        for &j in trusted.iter().flatten() {
            use_doc[j] = true;
            found.report.from_index += 1;
        }
        let gathered = old.gather(query, &use_doc);
        found.collection = gathered.collection;
        found.df = gathered.df;
        for (j, units) in gathered.matches {
            let file = &old.files[j];
            found.candidates.push(Candidate {
                order,
                rel: file.rel.to_string(),
                scope,
                kind: file.kind,
                file: None,
                stamp: file.stamp,
                lengths: file.lengths,
                units,
                score: 0.0,
                points: 0,
                affinity: 0,
            });
        }
    }

    let to_read: Vec<usize> = (0..paths.len()).filter(|&i| trusted[i].is_none()).collect();
    found.report.files_read = to_read.len();
    // At most `budget` files are indexed; the rest are analysed as without the index.
    let (to_index, to_scan) = to_read.split_at(to_read.len().min(budget));
    let (entries, read, mut added) =
        read_all_for_index(dir, &paths, to_index, query, (order, scope));
    let mut fresh: Vec<Option<Entry>> = vec![None; paths.len()];
    for (&i, entry) in to_index.iter().zip(entries) {
        fresh[i] = entry;
    }
    let scanned = in_parallel(to_scan, |part| {
        let mut analyzer = Analyzer::new();
        part.iter()
            .filter_map(|&i| {
                read_and_analyse(dir, &paths[i], query, &mut analyzer, (order, scope))
                    .map(drop_unmatched)
            })
            .collect()
    });
    for memory in read.into_iter().chain(scanned) {
        found.add_read(memory);
    }

    // The index as it now stands; written only when it says something new.
    let files: Vec<FileMeta<'_>> = paths
        .iter()
        .enumerate()
        .map(|(i, rel)| match (&fresh[i], trusted[i]) {
            (Some((stamp, state, kind, lengths)), _) => FileMeta {
                rel,
                stamp: *stamp,
                settled: stamp.settled(now, window),
                state: *state,
                kind: *kind,
                lengths: *lengths,
            },
            (None, Some(j)) => FileMeta {
                rel,
                ..old_files[j]
            },
            // Unreadable, or not indexed yet: listed (it counts as scanned), read next time.
            (None, None) => FileMeta {
                rel,
                stamp: stamps[i].unwrap_or_default(),
                settled: false,
                state: DocState::Skipped,
                kind: MemoryType::User,
                lengths: [0; FIELDS],
            },
        })
        .collect();
    let folder_metas: Vec<FolderMeta<'_>> = folders
        .iter()
        .map(|(rel, stamp, settled)| FolderMeta {
            rel,
            stamp: *stamp,
            settled: *settled,
        })
        .collect();
    if worth_writing(old.as_ref(), symlinks, &folder_metas, &files) {
        let mut renumber: Vec<Option<u32>> = vec![None; old_files.len()];
        for (i, t) in trusted.iter().enumerate() {
            if let Some(j) = *t {
                if fresh[i].is_none() {
                    renumber[j] = Some(i as u32);
                }
            }
        }
        let tokens = merge_tokens(old.as_ref(), &renumber, std::mem::take(&mut added));
        let bytes = recall_index::encode(&dir_text, symlinks, &folder_metas, &files, tokens);
        // The index is only a cache: a folder that cannot be written costs speed, not results.
        if old_bytes.as_deref() != Some(&bytes[..])
            && store::write_cache(index_path, &bytes).is_ok()
        {
            found.report.written = 1;
        }
    }
    Ok(found)
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

#[cfg(test)]
mod tests {
    use super::*;
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
        let other = recall_index::encode("/elsewhere", false, &view.folders, &files, Vec::new());
        fs::write(&path, other).unwrap();
        let report = same_as_reference(&f);
        assert!(report.written >= 1);
    }
}
