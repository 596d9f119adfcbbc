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
    let mut tokens = Tokens::default();
    for c in fold(text).chars() {
        if is_cjk(c) {
            tokens.end_word();
            tokens.cjk.push(c);
        } else if c.is_alphanumeric() {
            tokens.end_cjk();
            tokens.word.push(c);
            tokens.word_chars += 1;
        } else {
            tokens.end_word();
            tokens.end_cjk();
        }
    }
    tokens.end_word();
    tokens.end_cjk();
    tokens.out
}

/// The tokenizer's state: the run being read and the tokens so far.
#[derive(Default)]
struct Tokens {
    seen: HashSet<String>,
    out: Vec<String>,
    word: String,
    word_chars: usize,
    cjk: Vec<char>,
}

impl Tokens {
    fn push(&mut self, token: String) {
        if self.seen.insert(token.clone()) {
            self.out.push(token);
        }
    }

    fn end_word(&mut self) {
        let word = std::mem::take(&mut self.word);
        if self.word_chars >= MIN_WORD_CHARS {
            self.push(word);
        }
        self.word_chars = 0;
    }

    fn end_cjk(&mut self) {
        let run = std::mem::take(&mut self.cjk);
        match run.len() {
            0 => {}
            1 => self.push(run[0].to_string()),
            _ => {
                for pair in run.windows(2) {
                    self.push(pair.iter().collect());
                }
            }
        }
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
        let title = fold_fast(doc.title);
        let description = fold_fast(doc.description);
        let keywords = fold_fast(&doc.keywords.join("\n"));
        let body = fold_fast(doc.body);
        let mut score = 0;
        for token in &self.tokens {
            if has_token(&title, token) {
                score += TITLE_POINTS;
            }
            if has_token(&keywords, token) {
                score += KEYWORD_POINTS;
            }
            if has_token(&description, token) {
                score += DESCRIPTION_POINTS;
            }
            if has_token(&body, token) {
                score += BODY_POINTS;
            }
        }
        if score == 0 {
            return 0;
        }
        let words = type_keywords(doc.kind);
        let boost = self
            .tokens
            .iter()
            .filter(|t| words.contains(&t.as_str()))
            .count() as u32;
        score + boost.min(MAX_TYPE_BOOST)
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
