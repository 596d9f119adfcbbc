//! The recall index: what ranking needs of every memory of a scope folder, in one file, so a
//! query reads that file and a stat of each memory instead of every memory.
//!
//! For each memory file it keeps the [`Stamp`] the file had when it was read, its state and
//! type, and for each token of its title, keywords, description and body which of those fields
//! hold it (an inverted index: token → memories). A memory whose stamp still matches is scored
//! from the index; any other is read again. Scores from the index equal scores from the files
//! because a query token is found in a folded field exactly when it is one of that field's
//! tokens ([`super::recall::split_folded`]). Recall only parses a file when a query token
//! occurs in its raw text; a memory whose fields hold a token its raw text does not (one made by
//! YAML escapes) would be missed by that filter, so it is marked [`DocState::FromFile`] and
//! scored from its file each time, exactly as without the index.
//!
//! Layout (little-endian; varints are LEB128): [`MAGIC`], the body's length (u64), its
//! [`checksum`] (u64), then the body: the scope folder; whether the listing met a symlink; the
//! folders read with their stamps; the files, sorted bytewise, with stamp, state and type; then
//! the tokens, sorted bytewise: their count, a table of u32 offsets for binary search, and each
//! token with its postings, one varint per memory: the gap from the previous memory's number,
//! shifted left 4 bits, or-ed with the fields (`IN_*` bits of [`super::recall`]).

use std::borrow::Cow;
use std::collections::HashMap;

use super::memory::{MemoryFile, MemoryType};
use super::recall::{Document, FoldedFields, IN_BODY, Query, field_points, fold, for_each_token};
use super::store::Stamp;

/// The first bytes of an index file; the last byte is the format version.
pub const MAGIC: &[u8; 8] = b"TMRECAL\x01";

/// How a memory file stands in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocState {
    /// Never a result: unreadable, or not a valid memory.
    Skipped,
    /// Scored from the index.
    Indexed,
    /// Scored from its file on every query (its fields hold text its raw bytes do not).
    FromFile,
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
}

/// One memory file's text as the index sees it.
#[derive(Debug, Clone)]
pub struct MemoryText {
    /// Its state.
    pub state: DocState,
    /// Its type.
    pub kind: MemoryType,
    /// Its folded fields (indexed memories only).
    fields: Option<FoldedFields>,
}

impl MemoryText {
    /// Reads one memory file: `bytes` as read, `file` as parsed (`None`: not a valid memory).
    pub fn of(bytes: &[u8], file: Option<&MemoryFile>) -> MemoryText {
        let Some(file) = file else {
            return MemoryText {
                state: DocState::Skipped,
                kind: MemoryType::User,
                fields: None,
            };
        };
        let keywords = file.keywords.clone().unwrap_or_default();
        let fields = FoldedFields::of(&Document {
            title: &file.name,
            description: &file.description,
            keywords: &keywords,
            body: &file.body,
            kind: file.kind,
        });
        // What recall's prefilter searches: the raw bytes without ASCII case, or the folded text.
        let raw = if bytes.is_ascii() {
            String::from_utf8_lossy(bytes).to_ascii_lowercase()
        } else {
            fold(&String::from_utf8_lossy(bytes))
        };
        // A field found whole in the raw text holds no token the prefilter could miss. The
        // body is usually the raw text's end, checked without building a searcher.
        let seen = fields.each().iter().all(|(text, bit)| {
            (*bit == IN_BODY && raw.ends_with(text)) || raw.contains(text) || {
                let mut all = true;
                for_each_token(text, |t| all = all && raw.contains(t));
                all
            }
        });
        MemoryText {
            state: if seen {
                DocState::Indexed
            } else {
                DocState::FromFile
            },
            kind: file.kind,
            fields: seen.then_some(fields),
        }
    }

    /// Adds its tokens to `tokens` as memory number `doc` (which must be above any number
    /// already there), each once, with the fields (`IN_*` bits) that hold it; nothing unless
    /// it is indexed.
    pub fn add_tokens(&self, doc: u32, tokens: &mut TokenMap<Postings>) {
        let Some(fields) = &self.fields else {
            return;
        };
        for (text, bit) in fields.each() {
            for_each_token(text, |t| match tokens.get_mut(t) {
                Some(postings) => match postings.last_mut() {
                    Some((last, bits)) if *last == doc => *bits |= bit,
                    _ => postings.push((doc, bit)),
                },
                None => {
                    tokens.insert(t.to_string(), vec![(doc, bit)]);
                }
            });
        }
    }
}

/// The score of indexed memory number `doc` of type `kind` whose tokens were just added to
/// `tokens` ([`MemoryText::add_tokens`]), as [`Query::score`] gives for its file.
pub fn score_added(query: &Query, tokens: &TokenMap<Postings>, doc: u32, kind: MemoryType) -> u32 {
    let score = query
        .tokens()
        .iter()
        .filter_map(|q| match tokens.get(q.as_str())?.last() {
            Some(&(last, bits)) if last == doc => Some(field_points(bits)),
            _ => None,
        })
        .sum();
    query.with_type_boost(score, kind)
}

/// A fast hasher for token maps (FxHash's multiply-rotate): the keys are short and not
/// chosen by an attacker who could gain from collisions.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokenHasher(u64);

impl TokenHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for chunk in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }
}

/// Token maps built with [`TokenHasher`].
pub type TokenMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<TokenHasher>>;

/// Postings of one token: (memory number, fields) in ascending memory number.
pub type Postings = Vec<(u32, u8)>;

/// Writes an index file's bytes. `tokens` must be sorted bytewise and distinct, and their
/// postings refer to positions in `files`.
pub fn encode<'t>(
    dir: &str,
    symlinks: bool,
    folders: &[FolderMeta<'_>],
    files: &[FileMeta<'_>],
    tokens: impl IntoIterator<Item = (Cow<'t, str>, Postings)>,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(64 * files.len() + 1024);
    put_str(&mut body, dir);
    body.push(u8::from(symlinks));
    put_varint(&mut body, folders.len() as u64);
    for folder in folders {
        put_str(&mut body, folder.rel);
        put_stamp(&mut body, &folder.stamp);
        body.push(u8::from(folder.settled));
    }
    put_varint(&mut body, files.len() as u64);
    for file in files {
        put_str(&mut body, file.rel);
        put_stamp(&mut body, &file.stamp);
        let state = match file.state {
            DocState::Skipped => 0,
            DocState::Indexed => 1,
            DocState::FromFile => 2,
        };
        body.push(state | if file.settled { 4 } else { 0 });
        body.push(kind_number(file.kind));
    }
    let mut records = Vec::new();
    let mut offsets = Vec::new();
    for (token, postings) in tokens {
        offsets.push(records.len() as u32);
        put_str(&mut records, &token);
        put_varint(&mut records, postings.len() as u64);
        let mut previous = 0u32;
        for (doc, bits) in postings {
            put_varint(
                &mut records,
                (u64::from(doc - previous) << 4) | u64::from(bits & 0xF),
            );
            previous = doc;
        }
    }
    put_varint(&mut body, offsets.len() as u64);
    for offset in offsets {
        body.extend_from_slice(&offset.to_le_bytes());
    }
    body.extend_from_slice(&records);

    let mut out = Vec::with_capacity(body.len() + 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// An index file, read: folders and files decoded, tokens looked up on demand.
#[derive(Debug, Clone)]
pub struct IndexView<'a> {
    /// The scope folder it was built for.
    pub dir: &'a str,
    /// Whether the listing met a symlink.
    pub symlinks: bool,
    /// The folders read, with their stamps.
    pub folders: Vec<FolderMeta<'a>>,
    /// The files, sorted bytewise.
    pub files: Vec<FileMeta<'a>>,
    offsets: &'a [u8],
    records: &'a [u8],
}

impl<'a> IndexView<'a> {
    /// Reads an index file; `None` when it is not one, or is truncated, corrupt or of
    /// another version (the caller then rebuilds it). Never panics, whatever the bytes.
    pub fn decode(bytes: &'a [u8]) -> Option<IndexView<'a>> {
        let mut head = Reader { bytes, at: 0 };
        if head.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let length = head.u64()?;
        let sum = head.u64()?;
        let body = &bytes[head.at..];
        if body.len() as u64 != length || checksum(body) != sum {
            return None;
        }
        let mut r = Reader { bytes: body, at: 0 };
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
        let mut files = Vec::with_capacity(count);
        for _ in 0..count {
            let rel = r.str()?;
            let stamp = r.stamp()?;
            let flags = r.u8()?;
            let state = match flags & 3 {
                0 => DocState::Skipped,
                1 => DocState::Indexed,
                2 => DocState::FromFile,
                _ => return None,
            };
            files.push(FileMeta {
                rel,
                stamp,
                settled: flags & 4 != 0,
                state,
                kind: *MemoryType::ALL.get(usize::from(r.u8()?))?,
            });
        }
        let tokens = r.count()?;
        let offsets = r.take(tokens.checked_mul(4)?)?;
        let records = &body[r.at..];
        Some(IndexView {
            dir,
            symlinks,
            folders,
            files,
            offsets,
            records,
        })
    }

    /// How many tokens the index holds.
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

    /// Scores the memories marked in `use_doc` (by position in [`IndexView::files`]) for a
    /// query, as [`Query::score`] would score their files: (position, score) for each score
    /// above 0, in position order.
    pub fn score(&self, query: &Query, use_doc: &[bool]) -> Vec<(usize, u32)> {
        let mut points = vec![0u32; self.files.len()];
        for token in query.tokens() {
            for (doc, bits) in self.postings(token).into_iter().flatten() {
                let doc = doc as usize;
                if use_doc.get(doc).copied().unwrap_or(false) {
                    points[doc] += field_points(bits);
                }
            }
        }
        points
            .into_iter()
            .enumerate()
            .filter(|(_, p)| *p > 0)
            .map(|(doc, p)| (doc, query.with_type_boost(p, self.files[doc].kind)))
            .collect()
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
    type Item = (u32, u8);

    fn next(&mut self) -> Option<(u32, u8)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let Some(value) = self.reader.varint() else {
            self.left = 0;
            return None;
        };
        self.doc = self.doc.checked_add(u32::try_from(value >> 4).ok()?)?;
        Some((self.doc, (value & 0xF) as u8))
    }
}

/// Merges the tokens of an old index (postings renumbered by `renumber`, memories mapped to
/// `None` dropped) with the tokens of memories indexed afresh, into the sorted token list
/// [`encode`] takes.
pub fn merge_tokens<'a>(
    old: Option<&IndexView<'a>>,
    renumber: &[Option<u32>],
    fresh: TokenMap<Postings>,
) -> Vec<(Cow<'a, str>, Postings)> {
    let mut fresh: Vec<(String, Postings)> = fresh.into_iter().collect();
    fresh.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
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
                .filter_map(|(doc, bits)| Some((renumber.get(doc as usize).copied()??, bits)))
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

/// A 64-bit checksum of the index body: four lanes of multiply-xorshift over 8-byte words
/// (a few tenths of a millisecond per megabyte). Any change within one word always changes
/// it, since each step is a bijection of the lane; it guards against torn and damaged files,
/// not against forgery.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [K, K ^ 0x5555, K ^ 0xAAAA, K ^ 0xFFFF];
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        for (lane, word) in lanes.iter_mut().zip(chunk.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            *lane = mix(*lane ^ u64::from_le_bytes(w));
        }
    }
    let mut h = bytes.len() as u64;
    for lane in lanes {
        h = mix(h ^ lane);
    }
    for &byte in chunks.remainder() {
        h = mix(h ^ u64::from(byte));
    }
    h
}

fn mix(x: u64) -> u64 {
    let x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 31)
}

fn kind_number(kind: MemoryType) -> u8 {
    MemoryType::ALL.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_stamp(out: &mut Vec<u8>, stamp: &Stamp) {
    put_varint(out, stamp.size);
    out.extend_from_slice(&stamp.mtime_ns.to_le_bytes());
    out.extend_from_slice(&stamp.ctime_ns.to_le_bytes());
    put_varint(out, stamp.ino);
}

/// Bounds-checked reading: every read past the end is `None`, never a panic.
#[derive(Debug, Clone)]
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u64(&mut self) -> Option<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Some(u64::from_le_bytes(w))
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len() - self.at).then_some(n)
    }

    fn str(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.varint()?).ok()?;
        std::str::from_utf8(self.take(n)?).ok()
    }

    fn stamp(&mut self) -> Option<Stamp> {
        Some(Stamp {
            size: self.varint()?,
            mtime_ns: self.u64()? as i64,
            ctime_ns: self.u64()? as i64,
            ino: self.varint()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(n: u64) -> Stamp {
        Stamp {
            size: n,
            mtime_ns: n as i64 * 1000,
            ctime_ns: n as i64 * 1000 + 1,
            ino: n + 7,
        }
    }

    fn sample() -> Vec<u8> {
        let files = [
            FileMeta {
                rel: "feedback/a.md",
                stamp: stamp(1),
                settled: true,
                state: DocState::Indexed,
                kind: MemoryType::Feedback,
            },
            FileMeta {
                rel: "project/b.md",
                stamp: stamp(2),
                settled: false,
                state: DocState::FromFile,
                kind: MemoryType::Project,
            },
        ];
        let folders = [FolderMeta {
            rel: "",
            stamp: stamp(3),
            settled: true,
        }];
        let tokens = vec![
            (Cow::Borrowed("postgres"), vec![(0, 9)]),
            (Cow::Borrowed("数据"), vec![(0, 1), (1, 8)]),
        ];
        encode("/m", false, &folders, &files, tokens)
    }

    #[test]
    fn an_index_reads_back_as_written() {
        let bytes = sample();
        let view = IndexView::decode(&bytes).unwrap();
        assert_eq!(view.dir, "/m");
        assert_eq!(view.files.len(), 2);
        assert_eq!(view.files[1].rel, "project/b.md");
        assert_eq!(view.files[1].state, DocState::FromFile);
        assert!(!view.files[1].settled);
        assert_eq!(view.folders[0].stamp, stamp(3));
        assert_eq!(
            view.postings("数据").unwrap().collect::<Vec<_>>(),
            [(0, 1), (1, 8)]
        );
        assert!(view.postings("mysql").is_none());
        let query = Query::new("postgres");
        assert_eq!(view.score(&query, &[true, true]), [(0, 5)]);
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let bytes = sample();
        for n in 0..bytes.len() {
            assert!(IndexView::decode(&bytes[..n]).is_none(), "cut at {n}");
            let mut bad = bytes.clone();
            bad[n] ^= 0x20;
            assert!(IndexView::decode(&bad).is_none(), "byte {n} flipped");
        }
    }

    /// A body with a valid length and checksum around it: what a bug in the writer, or a
    /// collision, would hand the decoder.
    fn sealed(body: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&checksum(body).to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    /// Uses everything a query uses of an index, so that a panic anywhere shows.
    fn read_all(view: &IndexView<'_>) {
        let query = Query::new("postgres 数据 text");
        let _ = view.score(&query, &vec![true; view.files.len()]);
        for (_, postings) in view.tokens() {
            postings.for_each(drop);
        }
        let renumber: Vec<Option<u32>> = (0..view.files.len() as u32).map(Some).collect();
        let merged = merge_tokens(Some(view), &renumber, TokenMap::default());
        let _ = encode(view.dir, view.symlinks, &view.folders, &view.files, merged);
    }

    proptest::proptest! {
        #[test]
        fn no_bytes_make_the_decoder_panic(
            noise in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            at in 0usize..400,
            value in proptest::num::u8::ANY,
        ) {
            if let Some(view) = IndexView::decode(&sealed(&noise)) {
                read_all(&view);
            }
            // A real index with one body byte changed and the checksum made to match.
            let good = sample();
            let mut body = good[24..].to_vec();
            let at = at % body.len();
            body[at] = value;
            if let Some(view) = IndexView::decode(&sealed(&body)) {
                read_all(&view);
            }
        }
    }

    #[test]
    fn fields_only_yaml_escapes_produce_are_scored_from_the_file() {
        let plain =
            b"---\nname: Postgres tests\ndescription: Use it\ntype: project\n---\nBody text.\n";
        let file = MemoryFile::parse("project/p.md", plain).unwrap();
        let doc = MemoryText::of(plain, Some(&file));
        assert_eq!(doc.state, DocState::Indexed);
        let mut tokens = TokenMap::default();
        doc.add_tokens(3, &mut tokens);
        assert_eq!(tokens["postgres"], [(3, 1)]);
        assert_eq!(tokens["text"], [(3, 8)]);
        let query = Query::new("postgres text");
        assert_eq!(
            score_added(&query, &tokens, 3, file.kind),
            query.score(&Document {
                title: &file.name,
                description: &file.description,
                keywords: &[],
                body: &file.body,
                kind: file.kind,
            })
        );
        let escaped =
            b"---\nname: \"Post\\x67res tests\"\ndescription: Use it\ntype: project\n---\nBody.\n";
        let file = MemoryFile::parse("project/p.md", escaped).unwrap();
        assert_eq!(
            MemoryText::of(escaped, Some(&file)).state,
            DocState::FromFile
        );
    }
}
