//! The recall index: what ranking needs of every memory of a scope folder, in one file, so a
//! query reads that file and a stat of each memory instead of every memory.
//!
//! For each memory file it keeps the [`Stamp`] the file had when it was read, its state and
//! type, and its field lengths in terms; for the scope, the number of valid memories and the
//! sum of their field lengths (the BM25F averages); and for each term of the titles, keywords,
//! descriptions and bodies, the memories that hold it with its occurrences per field (an
//! inverted index: term → memories, whose length is the term's document frequency). A memory
//! whose stamp still matches is scored from the index; any other is read again. Scores from
//! the index equal scores from the files because both come from the same analysis of the same
//! fields ([`super::scoring::Analyzer`]) and the same arithmetic ([`Query::score`]).
//!
//! Layout (little-endian; varints are LEB128): [`MAGIC`], the body's length (u64), its
//! [`checksum`] (u64), then the body: the scope folder; whether the listing met a symlink; the
//! folders read with their stamps; the files, sorted bytewise, by column: their count, the
//! length of their names, each name ended by a NUL, each stamp ([`Stamp::BYTES`], fixed
//! width), each state byte, then each type with its four field lengths (what a freshness
//! check needs lies together, and its stats start before the rest is decoded: [`RecallIndexHead`]);
//! the totals (valid memories, four length sums), which must equal the
//! sums over the files; then the terms, sorted bytewise: their count, a table of u32 offsets
//! for binary search, and each term with its postings: per memory a varint of the gap from
//! the previous memory's number shifted left 4 bits, or-ed with the fields that hold the term
//! (bit `1 << field`), then one varint of units per such field.

use std::borrow::Cow;

use super::scoring::{Analyzer, Collection, Document, FIELDS, FieldUnits, FoldedFields, Query};
use crate::domain::memory::{MemoryFile, MemoryType};
use crate::domain::store::Stamp;

pub(crate) use super::scoring::TokenMap;
pub use bytes::checksum;
use bytes::{Reader, put_stamp, put_str, put_varint};

mod bytes;

/// The first bytes of an index file; the last byte is the format version.
pub const MAGIC: &[u8; 8] = b"TMRECAL\x03";

/// How a memory file stands in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocState {
    /// Never a result: unreadable, or not a valid memory.
    Skipped,
    /// Scored from the index.
    Indexed,
}

/// A folder as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderMeta<'a> {
    /// Relative to the scope folder; `""` for the scope folder itself.
    pub rel: &'a str,
    /// Its stamp, taken before it was listed.
    pub stamp: Stamp,
    /// Whether the stamp was old enough to be trusted ([`Stamp::settled`]).
    pub settled: bool,
}

/// A memory file as the index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta<'a> {
    /// Relative to the scope folder.
    pub rel: &'a str,
    /// Its stamp when it was read.
    pub stamp: Stamp,
    /// Whether the stamp was old enough to be trusted ([`Stamp::settled`]).
    pub settled: bool,
    /// Its state.
    pub state: DocState,
    /// Its type (meaningful when indexed).
    pub kind: MemoryType,
    /// Its field lengths in terms (meaningful when indexed).
    pub lengths: [u32; FIELDS],
}

/// Postings of one term: (memory number, units per field) in ascending memory number.
pub type Postings = Vec<(u32, FieldUnits)>;

/// Folds a parsed memory's fields as scoring reads them.
pub fn folded_fields(file: &MemoryFile) -> FoldedFields {
    let keywords = file.keywords.clone().unwrap_or_default();
    FoldedFields::of(&Document {
        title: &file.name,
        description: &file.description,
        keywords: &keywords,
        body: &file.body,
        kind: file.kind,
    })
}

/// Postings being built, indexed by the building analyzer's term numbers.
pub type NumberedPostings = Vec<Postings>;

/// Adds the terms of a memory's fields to `postings` as memory number `doc` (above any number
/// already there), with their units per field; returns its field lengths.
pub fn add_terms(
    analyzer: &mut Analyzer,
    fields: &FoldedFields,
    doc: u32,
    postings: &mut NumberedPostings,
) -> [u32; FIELDS] {
    analyzer.fields(fields, |field, t, units| {
        let t = t as usize;
        if postings.len() <= t {
            postings.resize_with(t + 1, Vec::new);
        }
        let units = units.min(u32::from(u16::MAX)) as u16;
        match postings[t].last_mut() {
            Some((last, per)) if *last == doc => per[field] = per[field].saturating_add(units),
            _ => {
                let mut per = [0; FIELDS];
                per[field] = units;
                let list = &mut postings[t];
                if list.len() == list.capacity() && list.len() >= 64 {
                    // A common term's list grows eightfold, not twofold: fewer copies (and
                    // fewer new pages written) while it grows; capacity never written costs
                    // no page.
                    list.reserve_exact(list.len() * 7);
                }
                list.push((doc, per));
            }
        }
    })
}

/// Postings built by `analyzer`, with their terms, sorted bytewise by term (the analyzer's
/// term texts are moved out, not copied: it is spent).
pub fn sorted_terms(analyzer: Analyzer, postings: NumberedPostings) -> Vec<(String, Postings)> {
    let mut out: Vec<(String, Postings)> = analyzer
        .into_terms()
        .into_iter()
        .zip(postings)
        .filter(|(_, p)| !p.is_empty())
        .map(|(t, p)| (String::from(t), p))
        .collect();
    out.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out
}

/// The occurrences of each query term in memory number `doc`, whose terms were just added to
/// `postings` ([`add_terms`]); `None` when it holds none of them.
pub fn units_added(
    query: &Query,
    analyzer: &mut Analyzer,
    postings: &NumberedPostings,
    doc: u32,
) -> Option<Vec<FieldUnits>> {
    let numbers = query.numbered(analyzer);
    let units: Vec<FieldUnits> = numbers
        .numbers()
        .iter()
        .map(|&n| match postings.get(n as usize).and_then(|p| p.last()) {
            Some(&(last, per)) if last == doc => per,
            _ => [0; FIELDS],
        })
        .collect();
    units
        .iter()
        .any(|u| u.iter().any(|&n| n > 0))
        .then_some(units)
}

/// The occurrences of each query term in a memory's fields, and its field lengths, without
/// indexing it: what [`add_terms`] and [`units_added`] give together.
pub fn units_of(
    query: &Query,
    analyzer: &mut Analyzer,
    fields: &FoldedFields,
) -> ([u32; FIELDS], Option<Vec<FieldUnits>>) {
    let numbers = query.numbered(analyzer);
    let mut units = vec![[0u16; FIELDS]; query.tokens().len()];
    let lengths = analyzer.fields(fields, |field, t, n| {
        if let Some(i) = numbers.position(t) {
            units[i][field] = units[i][field].saturating_add(n.min(u32::from(u16::MAX)) as u16);
        }
    });
    let any = units.iter().any(|u| u.iter().any(|&n| n > 0));
    (lengths, any.then_some(units))
}

/// What the index holds for one query over the memories in use: the collection they make,
/// each query term's document frequency among them, and each matching memory's occurrences.
#[derive(Debug, Clone, Default)]
pub struct Gathered {
    /// The memories in use, as a collection.
    pub collection: Collection,
    /// Document frequency of each query term.
    pub df: Vec<u64>,
    /// The position in [`RecallIndex::files`] of every memory in use that holds a query term,
    /// ascending.
    pub matches: Vec<usize>,
    /// The occurrences of each query term in each match: one run of `df.len()` per match, in
    /// the order of `matches` (one allocation for all, not one per match).
    pub units: Vec<FieldUnits>,
}

impl Gathered {
    /// The occurrences of each query term in match number `k`.
    pub fn units_of(&self, k: usize) -> &[FieldUnits] {
        let count = self.df.len();
        self.units.get(k * count..(k + 1) * count).unwrap_or(&[])
    }
}

/// Writes an index file's bytes. `tokens` must be sorted bytewise and distinct, and their
/// postings refer to positions in `files`.
pub fn encode<'t>(
    dir: &str,
    symlinks: bool,
    folders: &[FolderMeta<'_>],
    files: &[FileMeta<'_>],
    tokens: impl IntoIterator<Item = (Cow<'t, str>, Postings)>,
) -> Vec<u8> {
    // One buffer, written in place: the header's length and checksum are filled in last,
    // and the term records go straight after their offset table (no copy of either).
    let tokens: Vec<(Cow<'t, str>, Postings)> = tokens.into_iter().collect();
    let postings: usize = tokens.iter().map(|(_, p)| p.len()).sum();
    let mut body =
        Vec::with_capacity(HEADER + 80 * files.len() + 16 * tokens.len() + 3 * postings + 1024);
    body.extend_from_slice(MAGIC);
    body.extend_from_slice(&[0; HEADER - 8]);
    put_str(&mut body, dir);
    body.push(u8::from(symlinks));
    put_varint(&mut body, folders.len() as u64);
    for folder in folders {
        put_str(&mut body, folder.rel);
        put_stamp(&mut body, &folder.stamp);
        body.push(u8::from(folder.settled));
    }
    // The files by column: what a freshness check needs (names, stamps, whether each was
    // settled) lies together, where a check can start on it before the rest is decoded.
    put_varint(&mut body, files.len() as u64);
    let names_len: usize = files.iter().map(|f| f.rel.len() + 1).sum();
    put_varint(&mut body, names_len as u64);
    for file in files {
        // A name never holds a NUL (a file name cannot); one that did would fail the count of
        // names when decoded, and the index would be rebuilt.
        body.extend_from_slice(file.rel.as_bytes());
        body.push(0);
    }
    for file in files {
        body.extend_from_slice(&file.stamp.to_le_bytes());
    }
    for file in files {
        let state = match file.state {
            DocState::Skipped => 0,
            DocState::Indexed => 1,
        };
        body.push(state | if file.settled { 4 } else { 0 });
    }
    for file in files {
        body.push(kind_number(file.kind));
        for length in file.lengths {
            put_varint(&mut body, u64::from(length));
        }
    }
    let totals = totals(files);
    put_varint(&mut body, totals.docs);
    for sum in totals.lengths {
        put_varint(&mut body, sum);
    }
    put_varint(&mut body, tokens.len() as u64);
    let table = body.len();
    body.resize(table + 4 * tokens.len(), 0);
    let records = body.len();
    // A large index's records are written in two halves (by postings), the second on a
    // thread of its own; it is the biggest part of writing an index of 10,000 memories.
    let split = if postings >= PARALLEL_POSTINGS {
        let mut seen = 0;
        tokens
            .iter()
            .position(|(_, p)| {
                seen += p.len();
                seen * 2 >= postings
            })
            .map_or(tokens.len(), |k| k + 1)
    } else {
        tokens.len()
    };
    let mut tokens = tokens;
    let second = tokens.split_off(split);
    std::thread::scope(|scope| {
        let later = (!second.is_empty())
            .then(|| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || {
                        let mut part = Vec::with_capacity(3 * postings / 2 + 16 * second.len());
                        let offsets = put_records(&mut part, &second);
                        (part, offsets)
                    })
                    .ok()
            })
            .flatten();
        let mut offsets = put_records(&mut body, &tokens);
        let (part, more) = match later.map(|w| w.join()) {
            Some(Ok(done)) => done,
            // No thread, or it died: this one writes the second half too.
            _ => {
                let mut part = Vec::new();
                let more = put_records(&mut part, &second);
                (part, more)
            }
        };
        let base = body.len() - records;
        offsets.extend(more.into_iter().map(|o| o + base));
        body.extend_from_slice(&part);
        for (k, offset) in offsets.into_iter().enumerate() {
            body[table + 4 * k..table + 4 * k + 4].copy_from_slice(&(offset as u32).to_le_bytes());
        }
    });
    let length = (body.len() - HEADER) as u64;
    let sum = checksum(&body[HEADER..]);
    body[8..16].copy_from_slice(&length.to_le_bytes());
    body[16..24].copy_from_slice(&sum.to_le_bytes());
    body
}

/// An index file, read: folders and files decoded, tokens looked up on demand.
#[derive(Debug, Clone)]
pub struct RecallIndex<'a> {
    /// The scope folder it was built for.
    pub dir: &'a str,
    /// Whether the listing met a symlink.
    pub symlinks: bool,
    /// The folders read, with their stamps.
    pub folders: Vec<FolderMeta<'a>>,
    /// The files, sorted bytewise.
    pub files: Vec<FileMeta<'a>>,
    /// Where the term table starts in the bytes decoded ([`TermTable::at`]).
    pub terms_at: usize,
    terms: TermTable<'a>,
}

/// How many postings an index must hold before its records are written on two threads.
const PARALLEL_POSTINGS: usize = 100_000;

/// Writes each token's record (the token, then its postings) at the end of `out`; returns
/// where each record starts, counted from where `out` ended.
fn put_records(out: &mut Vec<u8>, tokens: &[(Cow<'_, str>, Postings)]) -> Vec<usize> {
    let start = out.len();
    let mut offsets = Vec::with_capacity(tokens.len());
    for (token, postings) in tokens {
        offsets.push(out.len() - start);
        put_str(out, token);
        put_varint(out, postings.len() as u64);
        let mut previous = 0u32;
        for &(doc, per) in postings {
            let bits = (0..FIELDS)
                .filter(|&f| per[f] > 0)
                .fold(0, |b, f| b | 1 << f);
            put_varint(out, (u64::from(doc - previous) << 4) | bits);
            for n in per.into_iter().filter(|&n| n > 0) {
                put_varint(out, u64::from(n));
            }
            previous = doc;
        }
    }
    offsets
}

/// The bytes before the body: [`MAGIC`], the body's length and its checksum.
const HEADER: usize = 24;

/// The start of an index file, read without checking its checksum: what a freshness check
/// needs (the folders, and where the files' names, stamps and flags lie), so that the stats
/// can start while the rest is checked and decoded ([`RecallIndex::decode`] reads the same, and
/// then refuses the whole file when the checksum does not match).
#[derive(Debug, Clone)]
pub struct RecallIndexHead<'a> {
    /// The scope folder it was built for.
    pub dir: &'a str,
    /// Whether the listing met a symlink.
    pub symlinks: bool,
    /// The folders read, with their stamps.
    pub folders: Vec<FolderMeta<'a>>,
    /// How many files.
    pub count: usize,
    /// Where the files' names lie: each ended by a NUL, in order.
    pub names: std::ops::Range<usize>,
    /// Where the files' stamps start ([`Stamp::BYTES`] each, in order).
    pub stamps_at: usize,
    /// Each file's flags (state, and whether its stamp was settled).
    pub flags: &'a [u8],
    /// The body's checksum as recorded.
    sum: u64,
    /// Where the files' types and lengths start.
    rest_at: usize,
}

impl<'a> RecallIndexHead<'a> {
    /// The body's checksum as recorded (what names this version of the index).
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// Reads the start of an index file; `None` when it is not one (or of another version),
    /// or the body's length is not the one recorded. Never panics, whatever the bytes.
    pub fn read(bytes: &'a [u8]) -> Option<RecallIndexHead<'a>> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let length = r.u64()?;
        let sum = r.u64()?;
        if (bytes.len() - HEADER) as u64 != length {
            return None;
        }
        let dir = r.str()?;
        let symlinks = r.u8()? != 0;
        let count = r.count()?;
        let mut folders = Vec::with_capacity(count);
        for _ in 0..count {
            folders.push(FolderMeta {
                rel: r.str()?,
                stamp: r.stamp()?,
                settled: r.u8()? != 0,
            });
        }
        let count = r.count()?;
        let names_len = r.count()?;
        let names = r.at..r.at.checked_add(names_len)?;
        r.take(names_len)?;
        let stamps_at = r.at;
        r.take(count.checked_mul(Stamp::BYTES)?)?;
        let flags = r.take(count)?;
        Some(RecallIndexHead {
            dir,
            symlinks,
            folders,
            count,
            names,
            stamps_at,
            flags,
            sum,
            rest_at: r.at,
        })
    }
}

/// The terms of an index file, looked up in its bytes: a sorted table of offsets, each to a
/// term and its postings.
#[derive(Debug, Clone, Copy)]
pub struct TermTable<'a> {
    offsets: &'a [u8],
    records: &'a [u8],
}

impl<'a> RecallIndex<'a> {
    /// Reads an index file; `None` when it is not one, or is truncated, corrupt or of
    /// another version (the caller then rebuilds it). Never panics, whatever the bytes.
    pub fn decode(bytes: &'a [u8]) -> Option<RecallIndex<'a>> {
        let head = RecallIndexHead::read(bytes)?;
        let body = &bytes[HEADER..];
        if checksum(body) != head.sum {
            return None;
        }
        let names = std::str::from_utf8(bytes.get(head.names.clone())?).ok()?;
        let mut at = 0;
        let mut files = Vec::with_capacity(head.count);
        let mut r = Reader {
            bytes,
            at: head.rest_at,
        };
        for (k, end) in memchr::memchr_iter(0, names.as_bytes()).enumerate() {
            let rel = names.get(at..end)?;
            at = end + 1;
            let stamp = Stamp::from_le_bytes(bytes.get(head.stamps_at + k * Stamp::BYTES..)?)?;
            let flags = *head.flags.get(k)?;
            let state = match flags & 3 {
                0 => DocState::Skipped,
                1 => DocState::Indexed,
                _ => return None,
            };
            let kind = *MemoryType::ALL.get(usize::from(r.u8()?))?;
            let mut lengths = [0; FIELDS];
            for length in &mut lengths {
                *length = u32::try_from(r.varint()?).ok()?;
            }
            files.push(FileMeta {
                rel,
                stamp,
                settled: flags & 4 != 0,
                state,
                kind,
                lengths,
            });
        }
        // Exactly the names counted, the last ended by the block's last byte.
        if files.len() != head.count || at != names.len() {
            return None;
        }
        let (dir, symlinks, folders) = (head.dir, head.symlinks, head.folders);
        // The totals are redundant with the files: a writer bug or a damaged body shows here.
        let mut recorded = Collection {
            docs: r.varint()?,
            ..Collection::default()
        };
        for sum in &mut recorded.lengths {
            *sum = r.varint()?;
        }
        if recorded != totals(&files) {
            return None;
        }
        let terms_at = r.at;
        let terms = TermTable::at(bytes, terms_at)?;
        Some(RecallIndex {
            dir,
            symlinks,
            folders,
            files,
            terms_at,
            terms,
        })
    }

    /// How many tokens the index holds.
    pub fn token_count(&self) -> usize {
        self.terms.token_count()
    }

    /// The postings of `token`, if any memory holds it.
    pub fn postings(&self, token: &str) -> Option<PostingsReader<'a>> {
        self.terms.postings(token)
    }

    /// Every token with its postings, in sorted order (stops early on a damaged record).
    pub fn tokens(&self) -> impl Iterator<Item = (&'a str, PostingsReader<'a>)> + '_ {
        self.terms.tokens()
    }

    /// Gathers what scoring `query` needs of the memories marked in `use_doc` (by position in
    /// [`RecallIndex::files`]; only indexed ones count).
    pub fn gather(&self, query: &Query, use_doc: &[bool]) -> Gathered {
        let files = &self.files;
        gather(&self.terms, query, files.len(), |doc| {
            let file = files.get(doc)?;
            (use_doc.get(doc).copied().unwrap_or(false) && file.state == DocState::Indexed)
                .then_some(file.lengths)
        })
    }
}

/// Gathers what scoring `query` needs of `docs` memories numbered as in `terms`' postings:
/// `used(doc)` gives the field lengths of a memory in use (`None`: not in use or not indexed).
pub fn gather(
    terms: &TermTable<'_>,
    query: &Query,
    docs: usize,
    used: impl Fn(usize) -> Option<[u32; FIELDS]>,
) -> Gathered {
    let mut collection = Collection::default();
    for doc in 0..docs {
        if let Some(lengths) = used(doc) {
            collection.add(lengths);
        }
    }
    let count = query.tokens().len();
    let mut df = vec![0; count];
    // Each memory's slot among the matches, in the order first seen, and its units there.
    let mut slot: Vec<u32> = vec![u32::MAX; docs];
    let mut seen: Vec<usize> = Vec::new();
    let mut units: Vec<FieldUnits> = Vec::new();
    for (i, term) in query.tokens().iter().enumerate() {
        for (doc, per) in terms.postings(term).into_iter().flatten() {
            let doc = doc as usize;
            if doc >= docs || used(doc).is_none() {
                continue;
            }
            df[i] += 1;
            if slot[doc] == u32::MAX {
                slot[doc] = seen.len() as u32;
                seen.push(doc);
                units.resize(units.len() + count, [0; FIELDS]);
            }
            if let Some(u) = units.get_mut(slot[doc] as usize * count + i) {
                *u = per;
            }
        }
    }
    // Postings ascend, so the first term's matches are in position order; later terms' new
    // matches come after them and need a sort.
    let mut matches = seen.clone();
    matches.sort_unstable();
    if matches != seen {
        let mut sorted = Vec::with_capacity(units.len());
        for &doc in &matches {
            let at = slot[doc] as usize * count;
            sorted.extend_from_slice(units.get(at..at + count).unwrap_or(&[]));
        }
        units = sorted;
    }
    Gathered {
        collection,
        df,
        matches,
        units,
    }
}

impl<'a> TermTable<'a> {
    /// The term table that starts at byte `at` of an index file's bytes (as
    /// [`RecallIndex::terms_at`] says); `None` when the bytes there do not hold one.
    pub fn at(bytes: &'a [u8], at: usize) -> Option<TermTable<'a>> {
        let mut r = Reader { bytes, at };
        let tokens = r.count()?;
        let offsets = r.take(tokens.checked_mul(4)?)?;
        let records = bytes.get(r.at..)?;
        Some(TermTable { offsets, records })
    }

    /// How many tokens the table holds.
    pub fn token_count(&self) -> usize {
        self.offsets.len() / 4
    }

    /// The `n`th token (in sorted order) and its postings.
    fn token_at(&self, n: usize) -> Option<(&'a str, PostingsReader<'a>)> {
        let at = self.offsets.get(n * 4..n * 4 + 4)?;
        let at = u32::from_le_bytes([at[0], at[1], at[2], at[3]]) as usize;
        let mut r = Reader {
            bytes: self.records,
            at,
        };
        let token = r.str()?;
        let left = r.count()?;
        Some((
            token,
            PostingsReader {
                reader: r,
                left,
                doc: 0,
            },
        ))
    }

    /// The postings of `token`, if any memory holds it.
    pub fn postings(&self, token: &str) -> Option<PostingsReader<'a>> {
        let (mut low, mut high) = (0, self.token_count());
        while low < high {
            let mid = low + (high - low) / 2;
            let (at, postings) = self.token_at(mid)?;
            match at.as_bytes().cmp(token.as_bytes()) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(postings),
            }
        }
        None
    }

    /// Every token with its postings, in sorted order (stops early on a damaged record).
    pub fn tokens(&self) -> impl Iterator<Item = (&'a str, PostingsReader<'a>)> + '_ {
        (0..self.token_count()).map_while(|n| self.token_at(n))
    }
}

/// One token's postings, decoded as they are read.
#[derive(Debug, Clone)]
pub struct PostingsReader<'a> {
    reader: Reader<'a>,
    left: usize,
    doc: u32,
}

impl Iterator for PostingsReader<'_> {
    type Item = (u32, FieldUnits);

    fn next(&mut self) -> Option<(u32, FieldUnits)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let posting = self.read();
        if posting.is_none() {
            self.left = 0;
        }
        posting
    }
}

impl PostingsReader<'_> {
    fn read(&mut self) -> Option<(u32, FieldUnits)> {
        let value = self.reader.varint()?;
        self.doc = self.doc.checked_add(u32::try_from(value >> 4).ok()?)?;
        let mut per = [0; FIELDS];
        for (f, n) in per.iter_mut().enumerate() {
            if value & (1 << f) != 0 {
                *n = u16::try_from(self.reader.varint()?).ok()?;
            }
        }
        Some((self.doc, per))
    }
}

/// Merges the tokens of an old index (postings renumbered by `renumber`, memories mapped to
/// `None` dropped) with the tokens of memories indexed afresh, into the sorted token list
/// [`encode`] takes.
pub fn merge_tokens<'a>(
    old: Option<&RecallIndex<'a>>,
    renumber: &[Option<u32>],
    fresh: TokenMap<Postings>,
) -> Vec<(Cow<'a, str>, Postings)> {
    let mut fresh: Vec<(String, Postings)> = fresh.into_iter().collect();
    fresh.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    merge_sorted_tokens(old, renumber, fresh)
}

/// [`merge_tokens`] with the fresh tokens already sorted bytewise (and distinct).
pub fn merge_sorted_tokens<'a>(
    old: Option<&RecallIndex<'a>>,
    renumber: &[Option<u32>],
    fresh: Vec<(String, Postings)>,
) -> Vec<(Cow<'a, str>, Postings)> {
    let mut fresh = fresh.into_iter().peekable();
    let mut out = Vec::new();
    if let Some(old) = old {
        for (token, postings) in old.tokens() {
            while let Some((f, _)) = fresh.peek() {
                if f.as_bytes() >= token.as_bytes() {
                    break;
                }
                if let Some((f, p)) = fresh.next() {
                    out.push((Cow::Owned(f), p));
                }
            }
            let kept: Postings = postings
                .filter_map(|(doc, per)| Some((renumber.get(doc as usize).copied()??, per)))
                .collect();
            let added = match fresh.peek() {
                Some((f, _)) if f == token => fresh.next().map(|(_, p)| p).unwrap_or_default(),
                _ => Vec::new(),
            };
            let mut all = Vec::with_capacity(kept.len() + added.len());
            let (mut a, mut b) = (kept.into_iter().peekable(), added.into_iter().peekable());
            loop {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
                    (Some(_), Some(_)) => b.next(),
                    (Some(_), None) => a.next(),
                    (None, _) => b.next(),
                };
                match next {
                    Some(p) => all.push(p),
                    None => break,
                }
            }
            if !all.is_empty() {
                out.push((Cow::Borrowed(token), all));
            }
        }
    }
    out.extend(fresh.map(|(f, p)| (Cow::Owned(f), p)));
    out
}

/// The collection the indexed files make.
fn totals(files: &[FileMeta<'_>]) -> Collection {
    let mut out = Collection::default();
    for file in files.iter().filter(|f| f.state == DocState::Indexed) {
        out.add(file.lengths);
    }
    out
}

fn kind_number(kind: MemoryType) -> u8 {
    MemoryType::ALL.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

#[cfg(test)]
mod tests;
