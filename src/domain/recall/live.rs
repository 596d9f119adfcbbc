//! One scope's recall index held in memory by a long-lived process (the MCP server), so that a
//! query neither reads the index file nor stats every memory: the process is told which paths
//! changed ([`LiveScope::note_changed`], from a file watcher) and the next query looks at those
//! only. Without a watcher, or after it lost events, [`LiveScope::note_all_changed`] makes the
//! next query stat every memory, as a query through the index file does.
//!
//! The index decoded at open is kept as its bytes (terms are looked up in them, as in the
//! file) with an overlay of the memories read since; a large overlay is folded into a new
//! index, which is also written back to the index file for the next process. Scores are the
//! same as from the files because both come from the same analysis and arithmetic.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::index::{
    self, DocState, FileMeta, FolderMeta, Postings, RecallIndex, TermTable, merge_tokens,
};
use super::refresh::{Candidate, Found, in_parts, now_ns, range_in, read_shown, read_stamped};
use super::scoring::{Analyzer, Collection, FIELDS, FieldUnits, Query, TokenMap};
use crate::domain::memory::{MemoryFile, MemoryType};
use crate::domain::scope::ScopeKind;
use crate::domain::store::{self, Stamp, StoreError};

/// Overlay entries that make the next refresh fold the overlay into a new index.
const FOLD_AT: usize = 64;

/// Parsed files kept for showing again (the hits and the proximity pool of recent queries).
const SHOWN_CACHE: usize = 512;

/// What a live scope did since it was opened (for tests and benchmarks; not printed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveReport {
    /// Memory files whose stamp was taken to see whether they changed.
    pub stats: usize,
    /// Memory files read (changed, new, or shown and not cached).
    pub reads: usize,
    /// Folder listings.
    pub listings: usize,
    /// Index files written (folds).
    pub written: usize,
}

/// What is known of one memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Known {
    stamp: Stamp,
    settled: bool,
    state: DocState,
    kind: MemoryType,
    lengths: [u32; FIELDS],
}

impl Known {
    /// A listed file that could not be read: listed (it counts as scanned), read next time.
    fn unreadable() -> Known {
        Known {
            stamp: Stamp::default(),
            settled: false,
            state: DocState::Skipped,
            kind: MemoryType::User,
            lengths: [0; FIELDS],
        }
    }
}

/// A memory read since the base was decoded.
#[derive(Debug, Clone)]
enum Over {
    /// Removed (it is in the base).
    Gone,
    /// As read now: with its terms (the scope analyzer's numbers, ascending) and units.
    Here(Known, Vec<(u32, FieldUnits)>),
}

/// A folder listed: relative path, stamp before listing, and whether that stamp had settled.
type Folder = (String, Stamp, bool);

/// The index as decoded: its bytes (terms are looked up there), and its files.
#[derive(Debug, Default)]
struct Base {
    /// Shared with the matches of a query (their paths are read from here).
    bytes: Arc<Vec<u8>>,
    terms_at: usize,
    rels: Vec<Box<str>>,
    /// Where each path is in `bytes`.
    rel_at: Vec<Option<Range<usize>>>,
    known: Vec<Known>,
    /// Whether the overlay replaces the file (changed, or removed).
    masked: Vec<bool>,
}

impl Base {
    /// The base of a valid index file's bytes for `dir`; `None` when they are not one.
    fn decode(bytes: Vec<u8>, dir: &str) -> Option<(Base, Vec<Folder>, bool)> {
        let view = RecallIndex::decode(&bytes).filter(|v| v.dir == dir)?;
        let folders = view
            .folders
            .iter()
            .map(|f| (f.rel.to_string(), f.stamp, f.settled))
            .collect();
        let symlinks = view.symlinks;
        let rels = view.files.iter().map(|f| Box::from(f.rel)).collect();
        let rel_at = view.files.iter().map(|f| range_in(&bytes, f.rel)).collect();
        let known = view
            .files
            .iter()
            .map(|f| Known {
                stamp: f.stamp,
                settled: f.settled,
                state: f.state,
                kind: f.kind,
                lengths: f.lengths,
            })
            .collect::<Vec<_>>();
        let terms_at = view.terms_at;
        let masked = vec![false; known.len()];
        drop(view);
        let base = Base {
            bytes: Arc::new(bytes),
            terms_at,
            rels,
            rel_at,
            known,
            masked,
        };
        Some((base, folders, symlinks))
    }

    fn position(&self, rel: &str) -> Option<usize> {
        self.rels
            .binary_search_by(|r| r.as_bytes().cmp(rel.as_bytes()))
            .ok()
    }

    fn terms(&self) -> Option<TermTable<'_>> {
        TermTable::at(&self.bytes, self.terms_at)
    }
}

/// What the next query has to look at again.
#[derive(Debug, Default)]
struct Dirty {
    /// Every memory (no watcher, or it lost events).
    all: bool,
    /// Known memory files that changed (or were removed).
    files: BTreeSet<String>,
    /// Paths (relative) that are not known files: folders, new files. The scope is listed
    /// again, and the known files below these paths are checked.
    below: BTreeSet<String>,
}

impl Dirty {
    fn any(&self) -> bool {
        self.all || !self.files.is_empty() || !self.below.is_empty()
    }
}

/// One scope's recall index in memory, for a long-lived process.
#[derive(Debug)]
pub struct LiveScope {
    dir: PathBuf,
    /// The scope folder as the file watcher may name it (symlinks resolved).
    canonical: Option<PathBuf>,
    index_path: PathBuf,
    settle_ns: i64,
    base: Base,
    overlay: BTreeMap<String, Over>,
    folders: Vec<Folder>,
    symlinks: bool,
    dirty: Dirty,
    analyzer: Analyzer,
    shown: HashMap<String, (Stamp, MemoryFile)>,
    report: LiveReport,
}

impl LiveScope {
    /// Opens the scope folder `dir` with its index file at `index_path`: loads the index (when
    /// it is one for `dir`), checks every memory against it as a query through the index file
    /// does, and reads what changed. Stamps younger than `settle` are not trusted on a check.
    pub fn open(dir: &Path, index_path: &Path, settle: Duration) -> Result<LiveScope, StoreError> {
        let dir_text = dir.to_string_lossy().into_owned();
        let decoded = std::fs::read(index_path)
            .ok()
            .and_then(|bytes| Base::decode(bytes, &dir_text));
        let (base, folders, symlinks) = decoded.unwrap_or_default();
        let mut scope = LiveScope {
            dir: dir.to_path_buf(),
            canonical: std::fs::canonicalize(dir).ok(),
            index_path: index_path.to_path_buf(),
            settle_ns: i64::try_from(settle.as_nanos()).unwrap_or(i64::MAX),
            base,
            overlay: BTreeMap::new(),
            folders,
            symlinks,
            dirty: Dirty {
                all: true,
                ..Dirty::default()
            },
            analyzer: Analyzer::new(),
            shown: HashMap::new(),
            report: LiveReport::default(),
        };
        scope.refresh()?;
        Ok(scope)
    }

    /// What it did since it was opened.
    pub fn report(&self) -> LiveReport {
        self.report
    }

    /// The path relative to the scope folder, if `path` is inside it (`""`: the folder itself).
    pub fn relative(&self, path: &Path) -> Option<String> {
        let inside = path
            .strip_prefix(&self.dir)
            .ok()
            .or_else(|| path.strip_prefix(self.canonical.as_ref()?).ok())?;
        let mut rel = String::new();
        for part in inside.components() {
            match part {
                std::path::Component::Normal(name) => {
                    if !rel.is_empty() {
                        rel.push('/');
                    }
                    rel.push_str(&name.to_string_lossy());
                }
                std::path::Component::CurDir => {}
                // `..` could leave the folder: look at everything again.
                _ => return Some(String::new()),
            }
        }
        Some(rel)
    }

    /// A file or folder inside the scope changed (created, written, removed, renamed; `path`
    /// absolute, or relative to the scope folder): the next query looks at it again. A path
    /// outside the scope is ignored; false then.
    pub fn note_changed(&mut self, path: &Path) -> bool {
        let rel = if path.is_absolute() {
            self.relative(path)
        } else {
            self.relative(&self.dir.join(path))
        };
        let Some(rel) = rel else {
            return false;
        };
        self.shown.remove(&rel);
        if rel.is_empty() {
            self.dirty.all = true;
        } else if self.knows(&rel) {
            self.dirty.files.insert(rel);
        } else {
            self.dirty.below.insert(rel);
        }
        true
    }

    /// Anything may have changed (no watcher, or it lost events): the next query stats every
    /// memory, as a query through the index file does.
    pub fn note_all_changed(&mut self) {
        self.dirty.all = true;
    }

    /// Whether `rel` is a memory file as last seen.
    fn knows(&self, rel: &str) -> bool {
        match self.overlay.get(rel) {
            Some(Over::Here(..)) => true,
            Some(Over::Gone) => false,
            None => self.base.position(rel).is_some(),
        }
    }

    fn known(&self, rel: &str) -> Option<Known> {
        match self.overlay.get(rel) {
            Some(Over::Here(known, _)) => Some(*known),
            Some(Over::Gone) => None,
            None => self.base.position(rel).map(|j| self.base.known[j]),
        }
    }

    /// Every memory file as last seen, sorted bytewise, with what is known of it (so that a
    /// check of every memory does not look each one up again).
    fn names(&self) -> Vec<(String, Known)> {
        let mut out: Vec<(String, Known)> =
            Vec::with_capacity(self.base.rels.len() + self.overlay.len());
        let mut over = self.overlay.iter().peekable();
        for (j, rel) in self.base.rels.iter().enumerate() {
            while let Some((o, entry)) = over.peek() {
                if o.as_bytes() >= rel.as_bytes() {
                    break;
                }
                if let Over::Here(known, _) = entry {
                    out.push(((*o).clone(), *known));
                }
                over.next();
            }
            if over.peek().is_some_and(|(o, _)| o.as_str() == &**rel) {
                if let Some((o, Over::Here(known, _))) = over.next() {
                    out.push((o.clone(), *known));
                }
                continue;
            }
            if !self.base.masked[j] {
                out.push((rel.to_string(), self.base.known[j]));
            }
        }
        out.extend(over.filter_map(|(o, e)| match e {
            Over::Here(known, _) => Some((o.clone(), *known)),
            Over::Gone => None,
        }));
        out
    }

    /// Whether the names of the last listing still hold: no symlink met, and every folder
    /// listed has the settled stamp it had (a name added, removed or renamed changes it).
    fn listing_holds(&self) -> bool {
        if self.symlinks || self.folders.is_empty() {
            return false;
        }
        self.folders.iter().all(|(rel, stamp, settled)| {
            *settled && std::fs::metadata(self.dir.join(rel)).is_ok_and(|m| Stamp::of(&m) == *stamp)
        })
    }

    /// Looks again at what was noted: lists the scope when names may have changed, stats the
    /// files that may have changed, reads those that did.
    fn refresh(&mut self) -> Result<(), StoreError> {
        // A listing that met a symlink cannot be watched: its target changes elsewhere.
        if self.symlinks {
            self.dirty.all = true;
        }
        if !self.dirty.any() {
            return Ok(());
        }
        let dirty = std::mem::take(&mut self.dirty);
        let now = now_ns();
        let window = self.settle_ns;
        let relist = !dirty.below.is_empty() || (dirty.all && !self.listing_holds());
        // Each with what was known of it before this look (`None`: not known).
        let mut to_check: Vec<(String, Option<Known>)> = Vec::new();
        let mut to_read: Vec<String> = Vec::new();
        let mut gone: Vec<String> = Vec::new();
        if relist {
            let listing = if self.dir.is_dir() {
                self.report.listings += 1;
                match store::memory_listing(&self.dir) {
                    Ok(listing) => listing,
                    Err(e) => {
                        // Asked again by the next query, which lists the scope again.
                        self.dirty.all = true;
                        self.folders.clear();
                        return Err(e);
                    }
                }
            } else {
                store::Listing::default()
            };
            let under = |rel: &str| {
                dirty.all
                    || dirty.files.contains(rel)
                    || dirty.below.iter().any(|b| {
                        rel.strip_prefix(b.as_str())
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                    })
            };
            let before = self.names();
            let mut old = before.iter().peekable();
            for rel in &listing.paths {
                while let Some((o, _)) = old.peek() {
                    if o.as_bytes() >= rel.as_bytes() {
                        break;
                    }
                    gone.push(o.clone());
                    old.next();
                }
                if let Some((_, known)) = old.next_if(|(o, _)| o == rel) {
                    if under(rel) {
                        to_check.push((rel.clone(), Some(*known)));
                    }
                } else {
                    to_read.push(rel.clone());
                }
            }
            gone.extend(old.map(|(o, _)| o.clone()));
            self.folders = listing
                .folders
                .into_iter()
                .map(|(rel, stamp)| {
                    let settled = stamp.settled(now, window);
                    (rel, stamp, settled)
                })
                .collect();
            self.symlinks = listing.symlinks;
        } else if dirty.all {
            to_check = self
                .names()
                .into_iter()
                .map(|(rel, known)| (rel, Some(known)))
                .collect();
        } else {
            to_check = dirty
                .files
                .into_iter()
                .map(|rel| {
                    let known = self.known(&rel);
                    (rel, known)
                })
                .collect();
        }

        let names: Vec<&str> = to_check.iter().map(|(rel, _)| rel.as_str()).collect();
        self.report.stats += names.len();
        let stamps = store::stamps(&self.dir, &names);
        let mut vanished = false;
        for ((rel, known), stamp) in to_check.iter().zip(stamps) {
            match (stamp, *known) {
                (Some(now), Some(k)) if k.settled && k.stamp == now => {}
                (None, _) if !relist => vanished = true,
                _ => to_read.push(rel.clone()),
            }
        }
        if vanished {
            // A noted file that cannot be stat'ed was removed, or its folder was: the listing
            // says which.
            self.dirty.below.insert(String::new());
            self.dirty.all = true;
            return self.refresh();
        }
        for rel in &gone {
            self.shown.remove(rel);
            if self.base.position(rel).is_some() {
                self.overlay.insert(rel.clone(), Over::Gone);
            } else {
                self.overlay.remove(rel);
            }
        }
        to_read.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        self.read(&to_read, now);
        for rel in gone.iter().chain(&to_read) {
            if let Some(j) = self.base.position(rel) {
                self.base.masked[j] = true;
            }
        }
        if self.overlay.len() >= FOLD_AT || (self.base.rels.is_empty() && !self.overlay.is_empty())
        {
            self.fold();
        }
        Ok(())
    }

    /// Reads and analyses `rels` (over a few threads) into the overlay.
    fn read(&mut self, rels: &[String], now: i64) {
        if rels.is_empty() {
            return;
        }
        self.report.reads += rels.len();
        let dir = &self.dir;
        let window = self.settle_ns;
        type Read = (Known, Vec<(u32, FieldUnits)>);
        let parts = in_parts(
            rels,
            |part| {
                let mut analyzer = Analyzer::new();
                let read: Vec<Read> = part
                    .iter()
                    .map(|rel| read_one(dir, rel, &mut analyzer, now, window))
                    .collect();
                (analyzer, read)
            },
            |part| {
                let unread = part.iter().map(|_| (Known::unreadable(), Vec::new()));
                (Analyzer::new(), unread.collect())
            },
        );
        let mut at = 0;
        for (analyzer, read) in parts {
            for (known, terms) in read {
                // The part's term numbers, as this scope's analyzer numbers them.
                let mut terms: Vec<(u32, FieldUnits)> = terms
                    .into_iter()
                    .map(|(t, units)| (self.analyzer.number(analyzer.term(t)), units))
                    .collect();
                terms.sort_unstable_by_key(|(t, _)| *t);
                let rel = rels[at].clone();
                self.shown.remove(&rel);
                self.overlay.insert(rel, Over::Here(known, terms));
                at += 1;
            }
        }
    }

    /// Folds the overlay into a new index: written to the index file (a cache: a failure costs
    /// the next process speed, not results) and decoded as the new base.
    fn fold(&mut self) {
        let dir_text = self.dir.to_string_lossy().into_owned();
        let old = RecallIndex::decode(&self.base.bytes);
        let names = self.names();
        let mut files: Vec<FileMeta<'_>> = Vec::with_capacity(names.len());
        let mut renumber: Vec<Option<u32>> = vec![None; self.base.rels.len()];
        let mut fresh: TokenMap<Postings> = TokenMap::default();
        for (i, (rel, _)) in names.iter().enumerate() {
            let known = match self.overlay.get(rel) {
                Some(Over::Here(known, terms)) => {
                    for (t, units) in terms {
                        let term = self.analyzer.term(*t);
                        match fresh.get_mut(term) {
                            Some(p) => p.push((i as u32, *units)),
                            None => {
                                fresh.insert(term.to_string(), vec![(i as u32, *units)]);
                            }
                        }
                    }
                    *known
                }
                _ => match self.base.position(rel) {
                    Some(j) => {
                        renumber[j] = Some(i as u32);
                        self.base.known[j]
                    }
                    None => Known::unreadable(),
                },
            };
            files.push(FileMeta {
                rel,
                stamp: known.stamp,
                settled: known.settled,
                state: known.state,
                kind: known.kind,
                lengths: known.lengths,
            });
        }
        let tokens = merge_tokens(old.as_ref(), &renumber, fresh);
        let folders: Vec<FolderMeta<'_>> = self
            .folders
            .iter()
            .map(|(rel, stamp, settled)| FolderMeta {
                rel,
                stamp: *stamp,
                settled: *settled,
            })
            .collect();
        let bytes = index::encode(&dir_text, self.symlinks, &folders, &files, tokens);
        drop(old);
        if store::write_cache(&self.index_path, &bytes).is_ok() {
            self.report.written += 1;
        }
        if let Some((base, _, _)) = Base::decode(bytes, &dir_text) {
            self.base = base;
            self.overlay.clear();
        }
    }

    /// Gathers this scope for `query` as [`super::refresh::scan_indexed_unproven`] does, after
    /// looking at what was noted; the candidates' files are not read ([`LiveScope::shown`]).
    pub fn gather(
        &mut self,
        query: &Query,
        (order, scope): (usize, ScopeKind),
    ) -> Result<Found, StoreError> {
        self.refresh()?;
        let mut found = Found::new(query, 0);
        let base = &self.base;
        let live = |doc: usize| !base.masked.get(doc).copied().unwrap_or(true);
        found.scanned = (0..base.known.len()).filter(|&j| live(j)).count();
        if let Some(terms) = base.terms() {
            let gathered = index::gather(&terms, query, base.known.len(), |doc| {
                let known = base.known.get(doc)?;
                (live(doc) && known.state == DocState::Indexed).then_some(known.lengths)
            });
            let entry = |j: usize| {
                let known = base.known.get(j)?;
                // The path in the bytes; the copy when it is not there (then a candidate).
                let rel = base
                    .rel_at
                    .get(j)
                    .and_then(|r| base.bytes.get(r.clone()?))
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .or_else(|| base.rels.get(j).map(|r| &r[..]))?;
                Some((rel, known.kind, known.stamp, known.lengths))
            };
            found.take_gathered(&base.bytes, gathered, (order, scope), entry);
        }
        found.report.from_index = found.scanned;
        let numbers = query.numbered(&mut self.analyzer);
        let mut collection = Collection::default();
        for (rel, entry) in &self.overlay {
            let Over::Here(known, terms) = entry else {
                continue;
            };
            found.scanned += 1;
            if known.state != DocState::Indexed {
                continue;
            }
            collection.add(known.lengths);
            let units: Vec<FieldUnits> = numbers
                .numbers()
                .iter()
                .map(|n| match terms.binary_search_by_key(n, |(t, _)| *t) {
                    Ok(at) => terms[at].1,
                    Err(_) => [0; FIELDS],
                })
                .collect();
            if units.iter().all(|u| u.iter().all(|&n| n == 0)) {
                continue;
            }
            for (df, per) in found.df.iter_mut().zip(&units) {
                *df += u64::from(per.iter().any(|&n| n > 0));
            }
            found.candidates.push(Candidate::from_index(
                rel,
                (known.kind, known.stamp, known.lengths),
                units,
                (order, scope),
            ));
        }
        found.collection.merge(&collection);
        Ok(found)
    }

    /// The memory `rel` for showing, as it was scored (`stamp`): from the cache of files shown
    /// before, or read. `None` when the file changed since (a change not noted yet): it is
    /// noted, and the query should be asked again.
    pub fn shown(&mut self, rel: &str, stamp: Stamp) -> Option<MemoryFile> {
        if let Some((at, file)) = self.shown.get(rel) {
            if *at == stamp {
                return Some(file.clone());
            }
        }
        self.report.reads += 1;
        match read_shown(&self.dir, rel, stamp) {
            Some(file) => {
                if self.shown.len() >= SHOWN_CACHE {
                    self.shown.clear();
                }
                self.shown.insert(rel.to_string(), (stamp, file.clone()));
                Some(file)
            }
            None => {
                let path = self.dir.join(rel);
                self.note_changed(&path);
                None
            }
        }
    }
}

/// Reads one memory file and its terms (`analyzer`'s numbers), as the index records it.
fn read_one(
    dir: &Path,
    rel: &str,
    analyzer: &mut Analyzer,
    now: i64,
    window: i64,
) -> (Known, Vec<(u32, FieldUnits)>) {
    let Some((stamp, bytes)) = read_stamped(&dir.join(rel)) else {
        return (Known::unreadable(), Vec::new());
    };
    let settled = stamp.settled(now, window);
    let Ok(file) = MemoryFile::parse(rel, &bytes) else {
        return (
            Known {
                stamp,
                settled,
                ..Known::unreadable()
            },
            Vec::new(),
        );
    };
    let mut terms: Vec<(u32, FieldUnits)> = Vec::new();
    let mut slot: HashMap<u32, usize> = HashMap::new();
    let lengths = analyzer.fields(&index::folded_fields(&file), |field, t, units| {
        let units = units.min(u32::from(u16::MAX)) as u16;
        let at = *slot.entry(t).or_insert_with(|| {
            terms.push((t, [0; FIELDS]));
            terms.len() - 1
        });
        terms[at].1[field] = terms[at].1[field].saturating_add(units);
    });
    let known = Known {
        stamp,
        settled,
        state: DocState::Indexed,
        kind: file.kind,
        lengths,
    };
    (known, terms)
}
