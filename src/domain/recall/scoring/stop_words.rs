//! The words that are not terms, from `src/domain/recall/stopwords.txt`, and the greetings
//! after which a name is the one spoken to.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::fold_fast;

/// The stop lists, folded.
pub(super) struct StopWords {
    pub(super) words: HashSet<String>,
    /// Chinese and Japanese function characters: a CJK piece holding one is not a term.
    pub(super) cjk: HashSet<char>,
}

pub(super) fn stop_words() -> &'static StopWords {
    static LISTS: OnceLock<StopWords> = OnceLock::new();
    LISTS.get_or_init(|| {
        let mut words = HashSet::new();
        let mut cjk = HashSet::new();
        let mut in_cjk = false;
        for line in include_str!("../stopwords.txt").lines() {
            if let Some(section) = line.strip_prefix('#') {
                in_cjk = section.trim() == "cjk";
                continue;
            }
            for word in line.split_whitespace() {
                // Most are ASCII: folding those is lowercasing (this runs in every process).
                let word = fold_fast(word);
                if in_cjk {
                    cjk.extend(word.chars());
                } else {
                    words.insert(word);
                }
            }
        }
        StopWords { words, cjk }
    })
}

/// Whether a folded token is a stop word.
pub fn is_stop_word(token: &str) -> bool {
    stop_words().words.contains(token)
}

/// Words after which a name is the one spoken to (`Hey Mel`, `thanks, Ana`), folded.
pub(super) const GREETINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "hiya",
    "yo",
    "dear",
    "thanks",
    "thx",
    "congrats",
    "congratulations",
    "bye",
    "goodbye",
    "morning",
    "evening",
    "welcome",
    "hola",
    "gracias",
    "adios",
    "ola",
    "oi",
    "obrigado",
    "obrigada",
    "bonjour",
    "salut",
    "merci",
    "coucou",
    "hallo",
    "danke",
    "ciao",
    "привет",
    "спасибо",
];
