//! Recall ranking: text folded and split into terms, and a BM25F score that ranks memories for a
//! query.
//!
//! Text is folded before it is split: compatibility forms are unified (NFKC: full-width `ＡＢＣ` is
//! `abc`), accents are dropped (`café` matches `cafe`) and case is ignored. Latin, Cyrillic and
//! other spaced scripts give one token per run of letters and digits of at least two characters;
//! Chinese, Japanese and Korean runs, written without spaces, give overlapping two-character
//! tokens (bigrams), so `数据库` is `数据` and `据库`.
//!
//! A token becomes a term unless it is a stop word (function words of English, Spanish,
//! Portuguese, French, German, Russian and Korean, and the two-character CJK pieces that hold a
//! Chinese or Japanese function character; the lists are `src/domain/recall/stopwords.txt`).
//! Latin words are stemmed with the English Snowball stemmer and Cyrillic words with the
//! Russian one, so `Researching` finds `research`; a word is stemmed the same way wherever it
//! is, so a query and a memory always agree.
//!
//! The score is BM25F: each term's occurrences are weighted by field (title, keywords,
//! description, body), each field normalised by its length against the scope's average, summed,
//! saturated, and multiplied by the term's rarity over the scope (IDF). An occurrence in address
//! position — a name right after a greeting (`Hey Mel`) or set off at a sentence's end
//! (`…, Mel!`) — counts a quarter: a memory that speaks *to* someone is less about them than one
//! that speaks *of* them. The best candidates then earn a proximity boost for query terms that
//! stand next to each other in a field. Type words and freshness only break ties.

use std::collections::HashMap;
#[cfg(test)]
use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::domain::memory::MemoryType;
#[cfg(test)]
use runs::runs_by_chars;
use runs::{Run, runs, runs_into};
pub use stop_words::is_stop_word;
use stop_words::{GREETINGS, stop_words};

mod runs;
mod stop_words;

/// The fields a memory is scored on, in the order every per-field array uses.
pub const FIELDS: usize = 4;
/// Position of the title in per-field arrays (title, keywords, description, body); the tests
/// index by it.
#[cfg(test)]
pub const TITLE: usize = 0;
/// Position of the body in per-field arrays; the tests index by it.
#[cfg(test)]
pub const BODY: usize = 3;

/// How much an occurrence in each field counts (BM25F field weights).
pub const FIELD_WEIGHT: [f64; FIELDS] = [2.0, 2.0, 1.5, 1.0];
/// How strongly each field's length is normalised (BM25F `b`; 0 = not at all).
pub const FIELD_B: [f64; FIELDS] = [0.5, 0.3, 0.5, 0.75];
/// Term-frequency saturation (BM25 `k1`).
pub const K1: f64 = 1.2;
/// The proximity boost per pair of query terms that are adjacent in a field, in IDF units.
pub const PROXIMITY_WEIGHT: f64 = 0.5;
/// How many of the best candidates are checked for proximity.
pub const PROXIMITY_CANDIDATES: usize = 40;
/// What one ordinary occurrence counts, in units (per-field term frequencies are kept in units).
pub const OCCURRENCE: u32 = 4;
/// What an occurrence in address position counts, in units.
pub const ADDRESSED: u32 = 1;
/// Spaced-script runs shorter than this are not tokens.
pub const MIN_WORD_CHARS: usize = 2;
/// A score is shown and compared as `round(BM25F × SCORE_SCALE)`: candidates closer than that
/// are a tie, broken by type, freshness, scope and path.
pub const SCORE_SCALE: f64 = 100.0;

/// The words that suggest a query is about a type of memory (Qwen Code's per-type lists).
pub fn type_keywords(kind: MemoryType) -> &'static [&'static str] {
    match kind {
        MemoryType::User => &[
            "user",
            "preference",
            "preferences",
            "background",
            "role",
            "terse",
        ],
        MemoryType::Feedback => &["feedback", "rule", "rules", "avoid", "style", "summary"],
        MemoryType::Project => &[
            "project", "goal", "goals", "incident", "deadline", "release",
        ],
        MemoryType::Reference => &["reference", "dashboard", "ticket", "docs", "doc", "link"],
    }
}

/// Folds text for matching: NFKC compatibility forms, no accents, lowercase.
pub fn fold(text: &str) -> String {
    // NFKD splits accents off their letters; NFC afterwards puts Hangul syllables back together.
    let bare: String = text.nfkd().filter(|c| !is_combining_mark(*c)).collect();
    bare.nfc().flat_map(char::to_lowercase).collect()
}

/// [`fold`], with a shortcut for ASCII text (most memories), which only needs lowercasing.
pub fn fold_fast(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        fold(text)
    }
}

/// True for the scripts written without spaces between words: Han, Hiragana, Katakana, Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana extensions
        | 0x3400..=0x4DBF    // Han extension A
        | 0x4E00..=0x9FFF    // Han
        | 0xF900..=0xFAFF    // Han compatibility
        | 0x1100..=0x11FF    // Hangul jamo
        | 0x3130..=0x318F    // Hangul compatibility jamo
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x20000..=0x2FA1F  // Han extensions B and beyond
    )
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

    fn write_u128(&mut self, value: u128) {
        self.add(value as u64);
        self.add((value >> 64) as u64);
    }
}

/// Token maps built with `TokenHasher`.
pub type TokenMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<TokenHasher>>;

/// A word's entry in the analyzer's cache.
#[derive(Debug, Clone, Copy)]
struct WordEntry {
    /// Its term's number, [`NO_TERM`] for a stop word.
    term: u32,
    /// Whether a name right after it is spoken to (a greeting, `thank you`'s `you`, …).
    greeting: bool,
    thank: bool,
    you: bool,
}

/// The term number of a stop word.
const NO_TERM: u32 = u32::MAX;

/// Splits text into terms, caching stems and numbering terms: one per thread or per query.
/// Term numbers are this analyzer's own; [`Analyzer::term`] gives a number's text.
pub struct Analyzer {
    english: Stemmer,
    russian: Stemmer,
    /// Words of up to [`SHORT_WORD`] bytes (nearly all), keyed by their bytes and length.
    short_words: HashMap<u128, WordEntry, std::hash::BuildHasherDefault<TokenHasher>>,
    /// Longer words.
    words: TokenMap<WordEntry>,
    terms: Vec<Box<str>>,
    numbers: TokenMap<u32>,
    runs: Vec<Run>,
    /// The short words seen last, by a hash of their key: most words of a memory were seen
    /// in the memories before it, and one compare here is cheaper than the map's probe.
    recent: Vec<(u128, WordEntry)>,
}

/// How many slots [`Analyzer`]'s `recent` words have (a power of two).
const RECENT_SLOTS: usize = 1024;

/// The slot of a short word's key among the `recent` words.
fn recent_slot(key: u128) -> usize {
    let mixed = ((key as u64) ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - RECENT_SLOTS.trailing_zeros())) as usize
}

impl Default for Analyzer {
    fn default() -> Analyzer {
        Analyzer::new()
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("terms", &self.terms.len())
            .finish_non_exhaustive()
    }
}

impl Analyzer {
    /// An analyzer with an empty cache.
    pub fn new() -> Analyzer {
        Analyzer {
            english: Stemmer::create(Algorithm::English),
            russian: Stemmer::create(Algorithm::Russian),
            short_words: HashMap::default(),
            words: TokenMap::default(),
            terms: Vec::new(),
            numbers: TokenMap::default(),
            runs: Vec::new(),
            // Key 0 is no word's (a key holds its word's length), so the slots start empty.
            recent: vec![
                (
                    0,
                    WordEntry {
                        term: NO_TERM,
                        greeting: false,
                        thank: false,
                        you: false,
                    }
                );
                RECENT_SLOTS
            ],
        }
    }

    /// The number of a term (numbered on first sight).
    pub fn number(&mut self, term: &str) -> u32 {
        if let Some(&n) = self.numbers.get(term) {
            return n;
        }
        let n = self.terms.len() as u32;
        self.terms.push(term.into());
        self.numbers.insert(term.to_string(), n);
        n
    }

    /// The texts of the terms, by number (the analyzer is spent).
    pub fn into_terms(self) -> Vec<Box<str>> {
        self.terms
    }

    /// The text of term number `n`.
    pub fn term(&self, n: u32) -> &str {
        self.terms.get(n as usize).map_or("", |t| t)
    }

    /// The cache entry of a folded word token.
    fn word(&mut self, token: &str) -> WordEntry {
        let short = short_key(token);
        if let Some(key) = short {
            let (seen, entry) = self.recent[recent_slot(key)];
            if seen == key {
                return entry;
            }
        }
        let cached = match short {
            Some(key) => self.short_words.get(&key),
            None => self.words.get(token),
        };
        if let Some(&entry) = cached {
            if let Some(key) = short {
                self.recent[recent_slot(key)] = (key, entry);
            }
            return entry;
        }
        let term = if is_stop_word(token) {
            NO_TERM
        } else {
            let stemmed = stem(&self.english, &self.russian, token);
            self.number(&stemmed)
        };
        let entry = WordEntry {
            term,
            greeting: GREETINGS.contains(&token),
            thank: token == "thank",
            you: token == "you",
        };
        match short {
            Some(key) => {
                self.recent[recent_slot(key)] = (key, entry);
                self.short_words.insert(key, entry)
            }
            None => self.words.insert(token.to_string(), entry),
        };
        entry
    }

    /// Calls `each(term number, units)` for every term of folded text, in order, repeats
    /// included; returns how many there were (the field's length).
    pub fn terms(&mut self, folded: &str, mut each: impl FnMut(u32, u32)) -> u32 {
        let stops = stop_words();
        let mut runs = std::mem::take(&mut self.runs);
        runs_into(folded, &mut runs);
        let ascii = folded.is_ascii();
        let mut count = 0;
        // What the two words before this one were, for address position.
        let (mut greeting, mut thank_you, mut thank) = (false, false, false);
        for (i, run) in runs.iter().enumerate() {
            let text = &folded[run.start..run.end];
            if run.cjk {
                (greeting, thank_you, thank) = (false, false, false);
                if stops.words.contains(text) {
                    continue;
                }
                let mut chars = text.char_indices().peekable();
                let Some(&(_, first)) = chars.peek() else {
                    continue;
                };
                if text.len() == first.len_utf8() {
                    if !stops.cjk.contains(&first) {
                        each(self.number(text), OCCURRENCE);
                        count += 1;
                    }
                    continue;
                }
                let pieces: Vec<(usize, char)> = chars.collect();
                for pair in pieces.windows(2) {
                    if stops.cjk.contains(&pair[0].1) || stops.cjk.contains(&pair[1].1) {
                        continue;
                    }
                    let end = pair[1].0 + pair[1].1.len_utf8();
                    each(self.number(&text[pair[0].0..end]), OCCURRENCE);
                    count += 1;
                }
                continue;
            }
            let short = if ascii || text.is_ascii() {
                text.len() < MIN_WORD_CHARS
            } else {
                text.chars().nth(MIN_WORD_CHARS - 1).is_none()
            };
            if short {
                (greeting, thank_you, thank) = (false, false, false);
                continue;
            }
            let entry = self.word(text);
            if entry.term != NO_TERM {
                let spoken_to = ((greeting || thank_you)
                    && only_spaces_or_commas(folded, &runs, i))
                    // Set off only when a space, `!` or `?` follows, and not when one space
                    // and the next word follow (most words: no call).
                    || (match folded.as_bytes().get(run.end) {
                        Some(b'!' | b'?') => true,
                        Some(b' ') => runs.get(i + 1).is_none_or(|next| next.start != run.end + 1),
                        _ => false,
                    } && set_off(folded, &runs, i));
                each(entry.term, if spoken_to { ADDRESSED } else { OCCURRENCE });
                count += 1;
            }
            greeting = entry.greeting;
            thank_you = entry.you && thank;
            thank = entry.thank;
        }
        self.runs = runs;
        count
    }

    /// The term numbers of a field's folded text, in order (for the proximity boost).
    pub fn positions(&mut self, folded: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.terms(folded, |t, _| out.push(t));
        out
    }

    /// Calls `each(field, term number, units)` for every term of a memory's fields; returns
    /// each field's length in terms.
    pub fn fields(
        &mut self,
        fields: &FoldedFields,
        mut each: impl FnMut(usize, u32, u32),
    ) -> [u32; FIELDS] {
        let mut lengths = [0; FIELDS];
        for (field, text) in fields.each().into_iter().enumerate() {
            lengths[field] = self.terms(text, |t, u| each(field, t, u));
        }
        lengths
    }
}

/// The longest word (in bytes) kept in [`Analyzer`]'s short-word cache.
const SHORT_WORD: usize = 15;

/// A word of at most [`SHORT_WORD`] bytes as one number: its bytes, then its length in the last
/// byte (so that two words share a key only when they are equal). Looking it up compares two
/// machine words instead of calling `memcmp` on a string kept elsewhere: the word cache is
/// consulted for every word of every memory when the recall index is built.
fn short_key(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    let len = bytes.len();
    if len > SHORT_WORD {
        return None;
    }
    // The bytes little-endian, read as two overlapping loads of 8 (or 4) bytes where the
    // word is long enough (a copy of a variable length is a call to `memcpy`).
    let low_high = |n: usize| -> (u64, u64) {
        let load = |at: usize| {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&bytes[at..at + n]);
            u64::from_le_bytes(w)
        };
        let shift = 8 * (2 * n - len) as u32;
        (load(0), load(len - n).checked_shr(shift).unwrap_or(0))
    };
    let value = match len {
        8.. => {
            let (low, high) = low_high(8);
            u128::from(low) | u128::from(high) << 64
        }
        4.. => {
            let (low, high) = low_high(4);
            u128::from(low | high << 32)
        }
        _ => bytes
            .iter()
            .enumerate()
            .fold(0, |key, (k, &b)| key | u128::from(b) << (8 * k)),
    };
    Some(value | (len as u128) << 120)
}

/// Whether only spaces and commas separate run `i` from the one before (`hey, mel`).
fn only_spaces_or_commas(folded: &str, runs: &[Run], i: usize) -> bool {
    i > 0
        && folded[runs[i - 1].end..runs[i].start]
            .bytes()
            .all(|b| b == b' ' || b == b',')
}

/// Whether run `i` stands alone between a comma and a `!` or `?` (`great job, mel!`).
fn set_off(folded: &str, runs: &[Run], i: usize) -> bool {
    // Bytes, not characters: the marks are ASCII, and no byte of another character equals one.
    if i == 0 {
        return false;
    }
    let bytes = folded.as_bytes();
    let after_end = runs.get(i + 1).map_or(bytes.len(), |r| r.start);
    let after = bytes[runs[i].end..after_end].iter().find(|&&b| b != b' ');
    matches!(after, Some(b'!' | b'?'))
        && bytes[runs[i - 1].end..runs[i].start]
            .iter()
            .rev()
            .find(|&&b| b != b' ')
            == Some(&b',')
}

/// The stem of a folded word: English Snowball for Latin letters, Russian for Cyrillic; words
/// with digits or of other scripts, and very short words, are kept as they are.
fn stem(english: &Stemmer, russian: &Stemmer, word: &str) -> Box<str> {
    if word.len() < 4 {
        return word.into();
    }
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        return english.stem(word).into();
    }
    if word
        .chars()
        .all(|c| ('\u{0430}'..='\u{044f}').contains(&c) || c == 'ё')
    {
        return russian.stem(word).into();
    }
    word.into()
}

/// What scoring needs of a memory.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    /// The title.
    pub title: &'a str,
    /// The description.
    pub description: &'a str,
    /// The keywords.
    pub keywords: &'a [String],
    /// The body.
    pub body: &'a str,
    /// The type.
    pub kind: MemoryType,
}

/// A document's fields, folded as scoring reads them.
#[derive(Debug, Clone)]
pub struct FoldedFields {
    /// The title.
    pub title: String,
    /// The keywords, one a line.
    pub keywords: String,
    /// The description.
    pub description: String,
    /// The body.
    pub body: String,
}

impl FoldedFields {
    /// Folds a document's fields.
    pub fn of(doc: &Document<'_>) -> FoldedFields {
        FoldedFields {
            title: fold_fast(doc.title),
            keywords: fold_fast(&doc.keywords.join("\n")),
            description: fold_fast(doc.description),
            body: fold_fast(doc.body),
        }
    }

    /// The fields in the order of per-field arrays ([`TITLE`] … [`BODY`]).
    pub fn each(&self) -> [&str; FIELDS] {
        [&self.title, &self.keywords, &self.description, &self.body]
    }
}

/// Per-field occurrences of one term in one memory, in units ([`OCCURRENCE`], [`ADDRESSED`]).
pub type FieldUnits = [u16; FIELDS];

/// What a scope (or several) holds, for the BM25F statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Collection {
    /// Valid memories.
    pub docs: u64,
    /// The sum of their field lengths, in terms.
    pub lengths: [u64; FIELDS],
}

impl Collection {
    /// Adds a memory of these field lengths.
    pub fn add(&mut self, lengths: [u32; FIELDS]) {
        self.docs += 1;
        for (sum, len) in self.lengths.iter_mut().zip(lengths) {
            *sum += u64::from(len);
        }
    }

    /// Adds another collection.
    pub fn merge(&mut self, other: &Collection) {
        self.docs += other.docs;
        for (sum, len) in self.lengths.iter_mut().zip(other.lengths) {
            *sum += len;
        }
    }
}

/// The statistics a query is scored with: each term's IDF and each field's average length.
#[derive(Debug, Clone)]
pub struct Stats {
    idf: Vec<f64>,
    average: [f64; FIELDS],
}

/// A query, analysed once and scored against many documents.
#[derive(Debug, Clone)]
pub struct Query {
    /// Distinct terms, in the order they first appear.
    terms: Vec<String>,
    /// The query's terms in order, as positions in `terms` (for proximity pairs).
    sequence: Vec<usize>,
    /// How many query tokens are type words of each type ([`MemoryType::ALL`] order).
    types: [u32; 4],
}

impl Query {
    /// Analyses a query.
    pub fn new(text: &str) -> Query {
        let folded = fold(text);
        let mut analyzer = Analyzer::new();
        let mut numbers: Vec<u32> = Vec::new();
        let mut sequence = Vec::new();
        // Each term number's position among `numbers` (the analyzer numbers terms densely from
        // 0): a lookup, not a scan, so that a pasted log of 100,000 words is not quadratic.
        let mut positions: Vec<usize> = Vec::new();
        analyzer.terms(&folded, |t, _| {
            let slot = t as usize;
            if positions.len() <= slot {
                positions.resize(slot + 1, usize::MAX);
            }
            if positions[slot] == usize::MAX {
                positions[slot] = numbers.len();
                numbers.push(t);
            }
            sequence.push(positions[slot]);
        });
        let terms = numbers
            .iter()
            .map(|&n| analyzer.term(n).to_string())
            .collect();
        let mut types = [0; 4];
        for run in runs(&folded) {
            let word = &folded[run.start..run.end];
            for (n, kind) in MemoryType::ALL.iter().enumerate() {
                types[n] += u32::from(type_keywords(*kind).contains(&word));
            }
        }
        Query {
            terms,
            sequence,
            types,
        }
    }

    /// The query's distinct terms (folded, stop words dropped, stemmed).
    pub fn tokens(&self) -> &[String] {
        &self.terms
    }

    /// The position of `term` among [`Query::tokens`].
    pub fn position(&self, term: &str) -> Option<usize> {
        self.terms.iter().position(|t| t == term)
    }

    /// The query's terms as `analyzer` numbers them: term number → position among
    /// [`Query::tokens`], for `Analyzer::terms`' callbacks.
    pub fn numbered(&self, analyzer: &mut Analyzer) -> QueryNumbers {
        QueryNumbers(self.terms.iter().map(|t| analyzer.number(t)).collect())
    }

    /// How many of the query's words are type words of `kind`: the first tie-break.
    pub fn type_affinity(&self, kind: MemoryType) -> u32 {
        MemoryType::ALL
            .iter()
            .position(|k| *k == kind)
            .map_or(0, |n| self.types[n])
    }

    /// The statistics for this query over `collection`, where `df[i]` memories hold term `i`.
    pub fn stats(&self, collection: &Collection, df: &[u64]) -> Stats {
        let n = collection.docs as f64;
        let idf = (0..self.terms.len())
            .map(|i| {
                let df = df.get(i).copied().unwrap_or(0) as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut average = [1.0; FIELDS];
        for (avg, sum) in average.iter_mut().zip(collection.lengths) {
            if collection.docs > 0 && sum > 0 {
                *avg = sum as f64 / n;
            }
        }
        Stats { idf, average }
    }

    /// The BM25F score of a memory of these field lengths where term `i` occurs `units[i]`.
    pub fn score(&self, stats: &Stats, lengths: [u32; FIELDS], units: &[FieldUnits]) -> f64 {
        let mut score = 0.0;
        for (i, per_field) in units.iter().enumerate().take(self.terms.len()) {
            let mut tf = 0.0;
            for f in 0..FIELDS {
                if per_field[f] == 0 {
                    continue;
                }
                let occurrences = f64::from(per_field[f]) / f64::from(OCCURRENCE);
                let norm = 1.0 - FIELD_B[f] + FIELD_B[f] * f64::from(lengths[f]) / stats.average[f];
                tf += FIELD_WEIGHT[f] * occurrences / norm;
            }
            if tf > 0.0 {
                score += stats.idf[i] * tf * (K1 + 1.0) / (K1 + tf);
            }
        }
        score
    }

    /// The proximity boost of a memory: for each pair of consecutive query terms, the smaller
    /// of their IDFs when they stand next to each other in some field (either order), half of
    /// it when one term lies between them.
    pub fn proximity(&self, stats: &Stats, analyzer: &mut Analyzer, fields: &FoldedFields) -> f64 {
        let pairs: Vec<(usize, usize)> = self
            .sequence
            .windows(2)
            .map(|w| (w[0], w[1]))
            .filter(|(a, b)| a != b)
            .collect();
        if pairs.is_empty() {
            return 0.0;
        }
        let mut best = vec![0.0f64; pairs.len()];
        let numbers = self.numbered(analyzer);
        for text in fields.each() {
            let terms: Vec<Option<usize>> = analyzer
                .positions(text)
                .iter()
                .map(|&t| numbers.position(t))
                .collect();
            for (p, &(a, b)) in pairs.iter().enumerate() {
                for (at, term) in terms.iter().enumerate() {
                    let other = match *term {
                        Some(t) if t == a => b,
                        Some(t) if t == b => a,
                        _ => continue,
                    };
                    let near = |d: usize| terms.get(at + d).copied().flatten() == Some(other);
                    if near(1) {
                        best[p] = 1.0;
                    } else if near(2) {
                        best[p] = best[p].max(0.5);
                    }
                }
            }
        }
        pairs
            .iter()
            .zip(best)
            .map(|(&(a, b), near)| near * PROXIMITY_WEIGHT * stats.idf[a].min(stats.idf[b]))
            .sum()
    }
}

/// A query's terms as one analyzer numbers them.
#[derive(Debug, Clone)]
pub struct QueryNumbers(Vec<u32>);

impl QueryNumbers {
    /// The term numbers, in the order of the query's terms.
    pub fn numbers(&self) -> &[u32] {
        &self.0
    }

    /// The position among the query's terms of term number `n`.
    pub fn position(&self, n: u32) -> Option<usize> {
        self.0.iter().position(|&x| x == n)
    }
}

/// A BM25F score as shown and compared: scaled and rounded (see [`SCORE_SCALE`]).
pub fn points(score: f64) -> u32 {
    let scaled = (score * SCORE_SCALE).round();
    if scaled.is_finite() && scaled > 0.0 {
        scaled.min(f64::from(u32::MAX)) as u32
    } else {
        0
    }
}

/// The distinct terms of a text, in the order they first appear (the analyzer's tests).
#[cfg(test)]
pub fn tokenize(text: &str) -> Vec<String> {
    let mut analyzer = Analyzer::new();
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    analyzer.terms(&fold(text), |t, _| {
        if seen.insert(t) {
            order.push(t);
        }
    });
    order
        .iter()
        .map(|&t| analyzer.term(t).to_string())
        .collect()
}

#[cfg(test)]
mod tests;
