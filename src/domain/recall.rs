//! Recall scoring: Unicode-aware tokens and a lexical score that ranks memories for a query.
//!
//! Text is folded before it is split: compatibility forms are unified (NFKC: full-width `ＡＢＣ` is
//! `abc`), accents are dropped (`café` matches `cafe`) and case is ignored. Latin, Cyrillic and
//! other spaced scripts give one token per run of letters and digits of at least three
//! characters; Chinese, Japanese and Korean runs, written without spaces, give overlapping
//! two-character tokens (bigrams), so `数据库` is `数据` and `据库`.
//!
//! A memory scores only through the query's tokens: 4 per token in its title, 3 in its
//! keywords, 3 in its description, 1 in its body. Merely having a body scores nothing. Type
//! keywords (the lists Qwen Code uses for the same purpose) add at most 2, and only to a memory
//! that already matched.

use std::collections::HashSet;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::memory::MemoryType;

/// Points for a query token found in the title.
pub const TITLE_POINTS: u32 = 4;
/// Points for a query token found among the keywords.
pub const KEYWORD_POINTS: u32 = 3;
/// Points for a query token found in the description.
pub const DESCRIPTION_POINTS: u32 = 3;
/// Points for a query token found in the body.
pub const BODY_POINTS: u32 = 1;
/// The most a type keyword boost adds.
pub const MAX_TYPE_BOOST: u32 = 2;
/// Latin (and other spaced-script) runs shorter than this are not tokens.
pub const MIN_WORD_CHARS: usize = 3;

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

/// The distinct tokens of a text, in the order they first appear.
pub fn tokenize(text: &str) -> Vec<String> {
    split_folded(&fold(text))
}

/// The distinct tokens of text that is already folded, in the order they first appear: a
/// query token `t` is one of them exactly when [`has_token`] finds `t` in that text, which is
/// what lets the recall index store tokens instead of text.
pub fn split_folded(folded: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for_each_token(folded, |token| {
        if seen.insert(token) {
            out.push(token.to_string());
        }
    });
    out
}

/// Calls `each` with every token of already folded text, repeats included, in order, as
/// slices of the text (no allocation): runs of at least [`MIN_WORD_CHARS`] letters and digits,
/// and the two-character pieces of CJK runs (a lone CJK character is a token by itself).
pub fn for_each_token<'t>(folded: &'t str, mut each: impl FnMut(&'t str)) {
    if folded.is_ascii() {
        // Most memories: words are runs of ASCII letters and digits, and there is no CJK.
        let bytes = folded.as_bytes();
        let mut start = None;
        for (at, b) in bytes.iter().enumerate() {
            match (b.is_ascii_alphanumeric(), start) {
                (true, None) => start = Some(at),
                (false, Some(s)) => {
                    if at - s >= MIN_WORD_CHARS {
                        each(&folded[s..at]);
                    }
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            if bytes.len() - s >= MIN_WORD_CHARS {
                each(&folded[s..]);
            }
        }
        return;
    }
    // The word being read: its start, and its length in characters.
    let mut word: Option<(usize, usize)> = None;
    // The CJK run being read: the start of its last character, and its length.
    let mut cjk: Option<(usize, usize)> = None;
    for (at, c) in folded.char_indices() {
        let (ends_word, ends_cjk) = if is_cjk(c) {
            (true, false)
        } else if c.is_alphanumeric() {
            (false, true)
        } else {
            (true, true)
        };
        if ends_word {
            if let Some((start, chars)) = word.take() {
                if chars >= MIN_WORD_CHARS {
                    each(&folded[start..at]);
                }
            }
        }
        if ends_cjk {
            if let Some((last, 1)) = cjk.take() {
                each(&folded[last..at]);
            }
        }
        if is_cjk(c) {
            cjk = match cjk {
                Some((last, n)) => {
                    each(&folded[last..at + c.len_utf8()]);
                    Some((at, n + 1))
                }
                None => Some((at, 1)),
            };
        } else if c.is_alphanumeric() {
            word = match word {
                Some((start, n)) => Some((start, n + 1)),
                None => Some((at, 1)),
            };
        }
    }
    if let Some((start, chars)) = word {
        if chars >= MIN_WORD_CHARS {
            each(&folded[start..]);
        }
    }
    if let Some((last, 1)) = cjk {
        each(&folded[last..]);
    }
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

/// A query, tokenized once and scored against many documents.
#[derive(Debug, Clone)]
pub struct Query {
    tokens: Vec<String>,
}

impl Query {
    /// Tokenizes a query.
    pub fn new(text: &str) -> Query {
        Query {
            tokens: tokenize(text),
        }
    }

    /// The query's tokens (folded).
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The document's score; 0 means it does not match.
    pub fn score(&self, doc: &Document<'_>) -> u32 {
        if self.tokens.is_empty() {
            return 0;
        }
        let fields = FoldedFields::of(doc);
        let score = self
            .tokens
            .iter()
            .map(|token| field_points(fields.found(token)))
            .sum();
        self.with_type_boost(score, doc.kind)
    }

    /// A match score plus the type boost of `kind`; 0 stays 0 (type words never make a match).
    pub fn with_type_boost(&self, score: u32, kind: MemoryType) -> u32 {
        if score == 0 {
            return 0;
        }
        let words = type_keywords(kind);
        let boost = self
            .tokens
            .iter()
            .filter(|t| words.contains(&t.as_str()))
            .count() as u32;
        score + boost.min(MAX_TYPE_BOOST)
    }
}

/// A token found in the title.
pub const IN_TITLE: u8 = 1;
/// A token found among the keywords.
pub const IN_KEYWORDS: u8 = 2;
/// A token found in the description.
pub const IN_DESCRIPTION: u8 = 4;
/// A token found in the body.
pub const IN_BODY: u8 = 8;

/// The points a token earns for the fields it was found in (a set of `IN_*` bits).
pub fn field_points(found: u8) -> u32 {
    let mut points = 0;
    if found & IN_TITLE != 0 {
        points += TITLE_POINTS;
    }
    if found & IN_KEYWORDS != 0 {
        points += KEYWORD_POINTS;
    }
    if found & IN_DESCRIPTION != 0 {
        points += DESCRIPTION_POINTS;
    }
    if found & IN_BODY != 0 {
        points += BODY_POINTS;
    }
    points
}

/// A document's fields, folded as scoring compares them.
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

    /// The fields (`IN_*` bits) that hold `token` as a token.
    pub fn found(&self, token: &str) -> u8 {
        let mut found = 0;
        for (text, bit) in self.each() {
            if has_token(text, token) {
                found |= bit;
            }
        }
        found
    }

    /// Each field with its `IN_*` bit.
    pub fn each(&self) -> [(&str, u8); 4] {
        [
            (&self.title, IN_TITLE),
            (&self.keywords, IN_KEYWORDS),
            (&self.description, IN_DESCRIPTION),
            (&self.body, IN_BODY),
        ]
    }
}

/// [`fold`], with a shortcut for ASCII text (most memories), which only needs lowercasing.
pub fn fold_fast(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        fold(text)
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// Whether folded `text` holds `token` as one of its tokens (what [`tokenize`] would give),
/// without splitting the whole text: an occurrence counts when it is not part of a longer word.
/// A two-character CJK token counts anywhere (it is a bigram of the run it sits in).
pub fn has_token(text: &str, token: &str) -> bool {
    let Some(first) = token.chars().next() else {
        return false;
    };
    let cjk = is_cjk(first);
    if cjk && token.chars().count() >= 2 {
        return text.contains(token);
    }
    let joins = |c: char| if cjk { is_cjk(c) } else { is_word_char(c) };
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(joins) && !after.is_some_and(joins)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(title: &'a str, body: &'a str, kind: MemoryType) -> Document<'a> {
        Document {
            title,
            description: "",
            keywords: &[],
            body,
            kind,
        }
    }

    #[test]
    fn tokens_fold_case_accents_and_width() {
        assert_eq!(tokenize("Café RÉSUMÉ ＡＢＣ go"), ["cafe", "resume", "abc"]);
    }

    #[test]
    fn token_search_agrees_with_tokenize() {
        for text in ["Postgres, postgresql", "abc漢字 x 库", "café-bar", "数据库"] {
            let folded = fold(text);
            let tokens = tokenize(text);
            for probe in [
                "postgres",
                "postgresql",
                "gres",
                "abc",
                "漢字",
                "库",
                "cafe",
                "bar",
                "数据",
                "据库",
                "数",
            ] {
                assert_eq!(
                    has_token(&folded, probe),
                    tokens.iter().any(|t| t == probe),
                    "{text:?} / {probe:?}"
                );
            }
        }
    }

    proptest::proptest! {
        /// The recall index stores a field's tokens instead of its text: that is exact only
        /// if a query token is found in folded text precisely when it is one of its tokens.
        #[test]
        fn a_token_is_found_exactly_when_the_text_has_it(
            text in proptest::collection::vec(0..PIECES.len(), 0..14),
            query in proptest::collection::vec(0..PIECES.len(), 0..8),
        ) {
            let text: String = text.iter().map(|&i| PIECES[i]).collect();
            let query: String = query.iter().map(|&i| PIECES[i]).collect();
            let folded = fold_fast(&text);
            let tokens = split_folded(&folded);
            for probe in tokenize(&query).iter().chain(&tokens) {
                proptest::prop_assert_eq!(
                    has_token(&folded, probe),
                    tokens.contains(probe),
                    "text {:?}, token {:?}", text, probe
                );
            }
        }
    }

    /// Pieces of text that stress folding and splitting: case, accents (precomposed and
    /// combining), full and half width, letters that lowercase to two characters, CJK runs
    /// with the non-letter characters of their blocks, Hangul jamo that compose, digits.
    const PIECES: &[&str] = &[
        "a",
        "b",
        "ab",
        "abc",
        "Post",
        "gres",
        " ",
        "-",
        ".",
        "\n",
        "1",
        "42",
        "é",
        "É",
        "e\u{301}",
        "数",
        "据",
        "库",
        "数据",
        "ｶ",
        "ﾀ",
        "・",
        "ー",
        "İ",
        "ß",
        "Ａ",
        "ＢＣ",
        "가",
        "\u{1100}",
        "\u{1161}",
        "ǅ",
        "½",
        "①",
        "ﬁ",
        "Σ",
        "ς",
        "_",
        "'",
        "x\u{200b}y",
    ];

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(
            tokenize("使用数据库test"),
            ["使用", "用数", "数据", "据库", "test"]
        );
        assert_eq!(tokenize("库"), ["库"]);
    }

    #[test]
    fn title_beats_body_and_type_words_alone_score_nothing() {
        let q = Query::new("postgres feedback");
        let in_title = q.score(&doc("Postgres in tests", "", MemoryType::Project));
        let in_body = q.score(&doc("Tests", "use postgres", MemoryType::Project));
        assert!(in_title > in_body && in_body > 0);
        assert_eq!(
            q.score(&doc("Style", "nothing here", MemoryType::Feedback)),
            0
        );
        let boosted = q.score(&doc("Tests", "use postgres", MemoryType::Feedback));
        assert_eq!(boosted, in_body + 1);
    }
}
