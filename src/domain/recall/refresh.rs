//! Gathering one scope for a query: the memories' statistics and the candidates that hold a
//! query term, either by reading every memory file ([`scan_files`], the reference) or through
//! the scope's recall index ([`scan_indexed_unproven`]: memories whose stamp is unchanged are
//! scored from the index, the others are read, and the index is refreshed when anything
//! changed); and the ranking of candidates ([`Ranking`], [`keep_best`]).
//!
//! Pure I/O of memory files and of the index file, with std only: no git, no CLI.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::index::{
    self, DocState, FileMeta, FolderMeta, Gathered, NumberedPostings, Postings, RecallIndex,
    RecallIndexHead, merge_sorted_tokens,
};
use super::scoring::{Analyzer, Collection, FIELDS, FieldUnits, Query};
use super::usage::Used;
use crate::domain::memory::{MAX_FILE_BYTES, MemoryFile, MemoryType};
use crate::domain::scope::ScopeKind;
use crate::domain::store::{self, Stamp, StoreError};
pub use ranking::{Candidate, IndexedMatches, Ranking, keep_best, range_in};

mod proof;
mod ranking;

use proof::listing_unchanged;
pub use proof::{KnownStamps, StampProof, index_holds};

/// What the index did for one recall (for tests and benchmarks; not printed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecallIndexReport {
    /// Memories scored from the index, without reading their files.
    pub from_index: usize,
    /// Memory files read (new, changed, or not yet settled).
    pub files_read: usize,
    /// Index files written.
    pub written: usize,
}

/// What gathering one scope found.
#[derive(Default)]
pub struct Found {
    /// The valid memories, as a collection.
    pub collection: Collection,
    /// Document frequency of each query term.
    pub df: Vec<u64>,
    /// The memories that hold a query term and were read (or are not in an index's bytes).
    pub candidates: Vec<Candidate>,
    /// The memories that hold a query term, scored from an index.
    pub indexed: Option<IndexedMatches>,
    /// Memory files listed.
    pub scanned: usize,
    /// What the index did.
    pub report: RecallIndexReport,
}

impl Found {
    /// What an index (of these bytes) gathered for a query: its statistics, and each memory
    /// that holds a query term, scored from the index.
    fn add_gathered(
        &mut self,
        bytes: &Arc<Vec<u8>>,
        view: &RecallIndex<'_>,
        gathered: Gathered,
        (order, scope): (usize, ScopeKind),
    ) {
        let entry = |j: usize| {
            let file = view.files.get(j)?;
            Some((file.rel, file.kind, file.stamp, file.lengths))
        };
        self.take_gathered(bytes, gathered, (order, scope), entry);
    }

    /// Keeps what a gather of the index `bytes` found: its statistics, and its matches as
    /// [`IndexedMatches`] (`entry` as there).
    pub fn take_gathered<'e>(
        &mut self,
        bytes: &Arc<Vec<u8>>,
        gathered: Gathered,
        order_scope: (usize, ScopeKind),
        entry: impl Fn(usize) -> Option<(&'e str, MemoryType, Stamp, [u32; FIELDS])>,
    ) {
        self.indexed = Some(IndexedMatches::new(
            bytes,
            &gathered,
            order_scope,
            entry,
            &mut self.candidates,
        ));
        self.collection = gathered.collection;
        self.df = gathered.df;
    }

    /// Nothing found yet, of `scanned` memories, for `query`'s terms.
    pub fn new(query: &Query, scanned: usize) -> Found {
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

/// Gathers one scope by reading every memory file (the reference).
pub fn scan_files(
    dir: &Path,
    query: &Query,
    order: usize,
    scope: ScopeKind,
) -> Result<Found, StoreError> {
    let paths = store::memory_paths(dir)?;
    let read = in_parallel(&paths, |part| {
        let mut analyzer = Analyzer::new();
        let mut files = FolderFiles::new(dir);
        part.iter()
            .filter_map(|rel| {
                read_and_analyse(&mut files, rel, query, &mut analyzer, (order, scope))
            })
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
    in_parts(items, work, |_| Vec::new())
        .into_iter()
        .flatten()
        .collect()
}

/// Splits `items` among a few threads ([`reader_chunk`]), runs `work` on each part, and gives
/// the parts' results in order; a part whose thread died gives `died(part)` instead.
pub fn in_parts<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&[T]) -> R + Sync,
    died: impl Fn(&[T]) -> R,
) -> Vec<R> {
    let chunk = reader_chunk(items.len());
    if items.len() <= chunk {
        return vec![work(items)];
    }
    let work = &work;
    std::thread::scope(|s| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| (part, s.spawn(move || work(part))))
            .collect();
        workers
            .into_iter()
            .map(|(part, w)| w.join().unwrap_or_else(|_| died(part)))
            .collect()
    })
}

/// Reads one memory file, at most one byte over the size limit, with the stamp of what was
/// read. The stamp gives the length, so a file is read in one call, without a second one to
/// find its end (a file growing meanwhile is read up to the length it had; its stamp then no
/// longer matches, and the next query reads it again).
pub fn read_stamped(path: &Path) -> Option<(Stamp, Vec<u8>)> {
    read_open(std::fs::File::open(path).ok()?)
}

/// [`read_stamped`] on a file already open.
fn read_open(mut file: std::fs::File) -> Option<(Stamp, Vec<u8>)> {
    use std::io::Read;
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

/// Reads memory files of one scope folder ([`read_stamped`]), each by its path below the
/// folder.
struct FolderFiles<'d> {
    dir: &'d Path,
}

impl<'d> FolderFiles<'d> {
    fn new(dir: &'d Path) -> FolderFiles<'d> {
        FolderFiles { dir }
    }

    /// [`read_stamped`] of `rel`, relative to the scope folder.
    fn read(&mut self, rel: &str) -> Option<(Stamp, Vec<u8>)> {
        read_stamped(&self.dir.join(rel))
    }
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
            used: Used::default(),
        }
    }
}

/// Reads, parses and analyses one file (the reference); `None` when it is not a valid memory.
fn read_and_analyse(
    files: &mut FolderFiles<'_>,
    rel: &str,
    query: &Query,
    analyzer: &mut Analyzer,
    (order, scope): (usize, ScopeKind),
) -> Option<ReadMemory> {
    let (stamp, bytes) = files.read(rel)?;
    let file = MemoryFile::parse(rel, &bytes).ok()?;
    let (lengths, units) = index::units_of(query, analyzer, &index::folded_fields(&file));
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
type IndexedDoc = (Stamp, DocState, MemoryType, [u32; FIELDS]);

/// What reading one file for the index gives: the memory (when valid) and its index entry
/// (`None`: it could not be read).
type ReadForIndex = (Option<ReadMemory>, Option<IndexedDoc>);

/// Reads one file for the index: analyses it as [`read_and_analyse`] would, and adds its terms
/// (as memory number `doc`) to `tokens`. The parsed file is not kept: a cold query that matches
/// every memory would hold thousands of them (their pages were a sixth of such a run), and only
/// the best few are shown, read again as the index's own candidates are ([`read_shown`]).
fn read_for_index(
    files: &mut FolderFiles<'_>,
    rel: &str,
    (query, analyzer): (&Query, &mut Analyzer),
    (order, scope): (usize, ScopeKind),
    doc: u32,
    postings: &mut NumberedPostings,
) -> ReadForIndex {
    let Some((stamp, bytes)) = files.read(rel) else {
        return (None, None);
    };
    let Ok(file) = MemoryFile::parse(rel, &bytes) else {
        return (
            None,
            Some((stamp, DocState::Skipped, MemoryType::User, [0; FIELDS])),
        );
    };
    let lengths = index::add_terms(analyzer, &index::folded_fields(&file), doc, postings);
    let units = index::units_added(query, analyzer, postings, doc);
    let entry = Some((stamp, DocState::Indexed, file.kind, lengths));
    let memory = ReadMemory {
        order,
        rel: rel.to_string(),
        scope,
        stamp,
        lengths,
        units,
        kind: file.kind,
        file: None,
    };
    (Some(memory), entry)
}

/// What reading files for the index gives: each file's entry (`None`: unreadable), in order;
/// the valid memories; and the terms of all, sorted bytewise.
type ReadAll = (
    Vec<Option<IndexedDoc>>,
    Vec<ReadMemory>,
    Vec<(String, Postings)>,
);

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
        let mut files = FolderFiles::new(dir);
        for &i in part {
            let (memory, entry) = read_for_index(
                &mut files,
                &paths[i],
                (query, &mut analyzer),
                (order, scope),
                i as u32,
                &mut postings,
            );
            entries.push(entry);
            read.extend(memory);
        }
        (entries, read, index::sorted_terms(analyzer, postings))
    };
    // A reader thread that died leaves its files unread: recorded as unreadable, so they are
    // read again next time (and this query falls back to the files).
    let parts = in_parts(to_read, work, |part| {
        (vec![None; part.len()], Vec::new(), Vec::new())
    });
    let mut entries = Vec::with_capacity(to_read.len());
    let mut read = Vec::new();
    let mut tokens: Vec<(String, Postings)> = Vec::new();
    for (part_entries, part_read, part_tokens) in parts {
        entries.extend(part_entries);
        read.extend(part_read);
        tokens.extend(part_tokens);
    }
    // Each part's terms came sorted: a stable sort merges the runs, and keeps a term's parts
    // in path order, so joining them keeps its postings ascending.
    tokens.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut joined: Vec<(String, Postings)> = Vec::with_capacity(tokens.len());
    for (token, postings) in tokens {
        match joined.last_mut() {
            Some((last, all)) if *last == token => all.extend(postings),
            _ => joined.push((token, postings)),
        }
    }
    (entries, read, joined)
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
    old: Option<&RecallIndex<'_>>,
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
pub fn read_shown(dir: &Path, rel: &str, stamp: Stamp) -> Option<MemoryFile> {
    let (now, bytes) = read_stamped(&dir.join(rel))?;
    if now != stamp {
        return None;
    }
    MemoryFile::parse(rel, &bytes).ok()
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Gathers one scope wholly from its index (every memory unchanged).
fn from_index(
    bytes: &Arc<Vec<u8>>,
    view: &RecallIndex<'_>,
    query: &Query,
    (order, scope): (usize, ScopeKind),
) -> Found {
    let mut found = Found::new(query, view.files.len());
    found.report.from_index = view.files.len();
    let gathered = view.gather(query, &vec![true; view.files.len()]);
    found.add_gathered(bytes, view, gathered, (order, scope));
    found
}

/// Gathers one scope through its index: the memories whose stamp is unchanged and settled
/// come from the index, the others are read as [`scan_files`] reads them; then the index is
/// rewritten if anything changed. The listing itself comes from the index while no folder's
/// stamp changed (a name added, removed or renamed changes its folder's times).
///
/// When every memory could come from the index, the gather is made from it at once, without
/// waiting for the stats that must confirm it: they are left running in the [`StampProof`]
/// returned, for the caller to check once it has done what it can with the gather (a failed
/// check means: gather again). `known`, the stamps a check took, is used instead of statting
/// again, with the index bytes they were compared with.
///
/// `vouched` says whether a watcher that has seen no change in `dir` since it proved the
/// index of this checksum ([`index_holds`]) vouches for it: then no stat is taken at all.
pub fn scan_indexed_unproven(
    dir: &Path,
    index_path: &Path,
    query: &Query,
    (order, scope): (usize, ScopeKind),
    (settle, budget): (Duration, usize),
    known: Option<KnownStamps>,
    vouched: &dyn Fn(u64) -> bool,
) -> Result<(Found, Option<StampProof>), StoreError> {
    if !dir.is_dir() {
        return Ok((scan_files(dir, query, order, scope)?, None));
    }
    let now = now_ns();
    let window = i64::try_from(settle.as_nanos()).unwrap_or(i64::MAX);
    let (old_bytes, known_parts) = match known {
        Some(known) => (Some(Arc::clone(&known.bytes)), Some(known)),
        None => (std::fs::read(index_path).ok().map(Arc::new), None),
    };
    let dir_text = dir.to_string_lossy();
    // The start of the index says whether the listing still holds and where the names and
    // stamps are: the stats that prove the index start before its checksum and the rest are
    // decoded (should the file turn out damaged, they are dropped unused).
    let head = old_bytes
        .as_deref()
        .and_then(|b| RecallIndexHead::read(b))
        .filter(|h| h.dir == dir_text);
    let listing_holds = head
        .as_ref()
        .is_some_and(|h| listing_unchanged(dir, h.symlinks, &h.folders));
    let mut early: Option<store::StampRun> = None;
    let mut vouched_for = false;
    if let (Some(h), Some(bytes), None) = (&head, &old_bytes, &known_parts) {
        if listing_holds && h.flags.iter().all(|f| f & 4 != 0) {
            vouched_for = vouched(h.sum());
            if !vouched_for {
                early = store::Names::within(bytes, h.names.clone(), h.count)
                    .map(|names| store::StampRun::start_expecting(dir, names, h.stamps_at));
            }
        }
    }
    let old = old_bytes
        .as_deref()
        .and_then(|b| RecallIndex::decode(b))
        .filter(|v| v.dir == dir_text);
    let known_stamps = match (&known_parts, &old) {
        (Some(known), Some(v)) => known.all(&v.files),
        _ => None,
    };

    // The head and the view read the same bytes, so the listing check made on the head holds
    // for the view.
    let unchanged_listing = old.as_ref().filter(|_| listing_holds);
    // The common case: the same names, every one settled, every stamp unchanged. Everything
    // then comes from the index: nothing is copied, read or written.
    let mut listed_stamps: Option<Vec<Option<Stamp>>> = None;
    if let (Some(v), Some(bytes)) = (
        unchanged_listing.filter(|v| v.files.iter().all(|f| f.settled)),
        &old_bytes,
    ) {
        // The watcher vouched for these very bytes (their checksum is checked by the decode
        // that gave `v`): nothing changed since it proved them.
        if vouched_for && known_stamps.is_none() {
            return Ok((from_index(bytes, v, query, (order, scope)), None));
        }
        match known_stamps.filter(|k| k.len() == v.files.len()) {
            None => {
                // The stats run while the caller uses the gather; it checks them afterwards.
                // (Started above already, unless these bytes came from an earlier check.)
                let run = early.take().or_else(|| {
                    let h = head.as_ref()?;
                    let names = store::Names::within(bytes, h.names.clone(), h.count)?;
                    Some(store::StampRun::start_expecting(dir, names, h.stamps_at))
                });
                if let Some(run) = run {
                    let proof = StampProof {
                        run,
                        known_from: Arc::clone(bytes),
                    };
                    return Ok((from_index(bytes, v, query, (order, scope)), Some(proof)));
                }
            }
            Some(stamps) => {
                if stamps
                    .iter()
                    .zip(&v.files)
                    .all(|(s, f)| *s == Some(f.stamp))
                {
                    return Ok((from_index(bytes, v, query, (order, scope)), None));
                }
                listed_stamps = Some(stamps);
            }
        }
    }
    drop(early);
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
    let mut stamps: Vec<Option<Stamp>> = vec![None; paths.len()];
    match listed_stamps {
        // Taken above for the same names, every one of which could be trusted.
        Some(taken) if could_trust.len() == paths.len() && taken.len() == paths.len() => {
            stamps = taken;
        }
        _ => {
            let names: Vec<&str> = could_trust.iter().map(|&i| paths[i].as_str()).collect();
            for (&i, stamp) in could_trust.iter().zip(store::stamps(dir, &names)) {
                stamps[i] = stamp;
            }
        }
    }
    // Trusted: same stamp as when indexed, and that stamp had settled.
    let mut trusted: Vec<Option<usize>> = vec![None; paths.len()];
    for &i in &could_trust {
        trusted[i] = was[i].filter(|&j| Some(old_files[j].stamp) == stamps[i]);
    }

    let mut found = Found::new(query, paths.len());
    if let (Some(old), Some(bytes)) = (&old, &old_bytes) {
        let mut use_doc = vec![false; old.files.len()];
        for &j in trusted.iter().flatten() {
            use_doc[j] = true;
            found.report.from_index += 1;
        }
        let gathered = old.gather(query, &use_doc);
        found.add_gathered(bytes, old, gathered, (order, scope));
    }

    let to_read: Vec<usize> = (0..paths.len()).filter(|&i| trusted[i].is_none()).collect();
    found.report.files_read = to_read.len();
    // At most `budget` files are indexed; the rest are analysed as without the index.
    let (to_index, to_scan) = to_read.split_at(to_read.len().min(budget));
    let (entries, read, mut added) =
        read_all_for_index(dir, &paths, to_index, query, (order, scope));
    let mut fresh: Vec<Option<IndexedDoc>> = vec![None; paths.len()];
    for (&i, entry) in to_index.iter().zip(entries) {
        fresh[i] = entry;
    }
    let scanned = in_parallel(to_scan, |part| {
        let mut analyzer = Analyzer::new();
        let mut files = FolderFiles::new(dir);
        part.iter()
            .filter_map(|&i| {
                read_and_analyse(&mut files, &paths[i], query, &mut analyzer, (order, scope))
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
        let tokens = merge_sorted_tokens(old.as_ref(), &renumber, std::mem::take(&mut added));
        let bytes = index::encode(&dir_text, symlinks, &folder_metas, &files, tokens);
        // The index is only a cache: a folder that cannot be written costs speed, not results.
        if old_bytes.as_deref().map(|b| &b[..]) != Some(&bytes[..])
            && store::write_cache(index_path, &bytes).is_ok()
        {
            found.report.written = 1;
        }
    }
    Ok((found, None))
}

#[cfg(test)]
mod tests;
