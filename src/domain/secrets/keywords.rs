//! The keyword search: every occurrence of every rule keyword (ASCII case-insensitive,
//! overlapping ones included), found by the `aho-corasick` crate's automaton.
//!
//! A thin wrapper: the scanner asks for each hit as `(pattern, end)`, in the order the hits
//! end and, for one end, the longest keyword first (the automaton's own order: a state's own
//! keyword, then those of its shorter suffixes).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// How many bytes a scanner searches with the NFA before it builds the DFA: a memory folder
/// never gets there; a scan of a large tree does, early.
const DFA_AFTER: usize = 1 << 20;

/// The compiled keywords: a contiguous NFA at first, the DFA once [`DFA_AFTER`] bytes were
/// searched. The NFA builds in a fraction of the DFA's time, which every process pays, and
/// searches memory-sized text as fast (thin-LTO release, median CPU of 20 alternating runs:
/// `check --staged` of 10 memories 22.5 -> 20.5 ms, session start with 1,000 memories 44.6 ->
/// 41.2 ms, scan of a 1,000-memory folder 26.9 -> 26.5 ms); the DFA searches a large tree
/// faster. Both report the same hits in the same order.
#[derive(Debug)]
pub(crate) struct Keywords {
    /// The keywords, for the DFA built later.
    patterns: Vec<Vec<u8>>,
    /// The NFA; `None` only if the keywords could not be compiled (too many for its state
    /// ids), which the unit tests rule out for the rules' keywords.
    nfa: Option<AhoCorasick>,
    /// The DFA, once built.
    dfa: OnceLock<Option<AhoCorasick>>,
    /// The bytes searched so far.
    searched: AtomicUsize,
    /// The longest keyword's length.
    max_len: usize,
}

impl Clone for Keywords {
    fn clone(&self) -> Keywords {
        Keywords {
            patterns: self.patterns.clone(),
            nfa: self.nfa.clone(),
            dfa: self.dfa.clone(),
            searched: AtomicUsize::new(self.searched.load(Ordering::Relaxed)),
            max_len: self.max_len,
        }
    }
}

/// The automaton of `kind` for `patterns` (see [`Keywords`]).
fn automaton(patterns: &[Vec<u8>], kind: AhoCorasickKind) -> Option<AhoCorasick> {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(patterns)
        .ok()
}

impl Keywords {
    /// Compiles `patterns`; a hit's pattern id is its index in `patterns`. Empty patterns are
    /// never reported.
    pub fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Keywords {
        let patterns: Vec<Vec<u8>> = patterns.iter().map(|p| p.as_ref().to_vec()).collect();
        Keywords {
            nfa: automaton(&patterns, AhoCorasickKind::ContiguousNFA),
            dfa: OnceLock::new(),
            searched: AtomicUsize::new(0),
            max_len: patterns.iter().map(Vec::len).max().unwrap_or(0),
            patterns,
        }
    }

    /// Calls `on_hit(pattern, end)` for every keyword occurrence in `bytes`, in the order they
    /// end (for one end, the longest keyword first).
    pub fn each_hit(&self, bytes: &[u8], mut on_hit: impl FnMut(usize, usize)) {
        let searched = self.searched.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len();
        let dfa = if searched >= DFA_AFTER {
            self.dfa
                .get_or_init(|| automaton(&self.patterns, AhoCorasickKind::DFA))
                .as_ref()
        } else {
            None
        };
        let Some(automaton) = dfa.or(self.nfa.as_ref()) else {
            return;
        };
        for hit in automaton.find_overlapping_iter(bytes) {
            if !hit.is_empty() {
                on_hit(hit.pattern().as_usize(), hit.end());
            }
        }
    }

    /// The longest keyword's length.
    pub fn max_len(&self) -> usize {
        self.max_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every `(pattern, end)` found, in the order they end and, for one end, the longest
    /// keyword first (the order [`Keywords::each_hit`] promises), a search per pattern.
    fn reference(patterns: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let lower = text.to_ascii_lowercase();
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for (p, pattern) in patterns.iter().enumerate() {
            let pattern = pattern.to_ascii_lowercase();
            if pattern.is_empty() || pattern.len() > lower.len() {
                continue;
            }
            for (start, window) in lower.windows(pattern.len()).enumerate() {
                if window == pattern.as_bytes() {
                    hits.push((start + pattern.len(), usize::MAX - pattern.len(), p));
                }
            }
        }
        hits.sort();
        hits.into_iter().map(|(end, _, p)| (p, end)).collect()
    }

    /// The hits in the order `each_hit` reports them (not sorted here: the order is part of
    /// what is tested).
    fn ours(patterns: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let keywords = Keywords::new(patterns);
        let mut hits = Vec::new();
        keywords.each_hit(text, |p, end| hits.push((p, end)));
        hits
    }

    #[test]
    fn finds_overlapping_keywords_in_any_case() {
        let patterns = [
            "key",
            "secret_access_key",
            "access",
            "ss",
            "pass",
            "password",
        ];
        let text = b"AWS SECRET_ACCESS_KEY and a Password, passkey";
        assert_eq!(ours(&patterns, text), reference(&patterns, text));
        assert!(ours(&patterns, text).contains(&(1, 21)));
    }

    #[test]
    fn the_rule_keywords_compile() {
        let patterns = rule_keywords();
        let keywords = Keywords::new(&patterns);
        assert!(keywords.nfa.is_some());
        // Past a megabyte the DFA takes over and finds the same.
        keywords.each_hit(&vec![b' '; DFA_AFTER], |_, _| {});
        let text = patterns.join(" ").to_ascii_uppercase();
        let mut hits = Vec::new();
        keywords.each_hit(text.as_bytes(), |p, end| hits.push((p, end)));
        assert!(matches!(keywords.dfa.get(), Some(Some(_))));
        let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
        assert_eq!(hits, reference(&refs, text.as_bytes()));
        assert!(patterns.iter().all(|p| !p.is_empty()));
        assert_eq!(
            keywords.max_len(),
            patterns.iter().map(String::len).max().unwrap()
        );
    }

    proptest! {
        #[test]
        fn same_hits_as_a_search_per_keyword(
            patterns in proptest::collection::vec("[abAB_:]{1,6}", 1..12),
            text in proptest::collection::vec(prop::sample::select(b"abAB_: x".to_vec()), 0..3000),
        ) {
            let mut patterns = patterns;
            patterns.sort_by_key(|p| p.to_ascii_lowercase());
            patterns.dedup_by_key(|p| p.to_ascii_lowercase());
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            prop_assert_eq!(ours(&patterns, &text), reference(&patterns, &text));
        }

        /// The rules' own keywords on text made of pieces of them in either case, with
        /// spaces, newlines, `=` and non-ASCII between.
        #[test]
        fn the_rule_keywords_give_the_same_hits_as_a_search_per_keyword(
            pieces in proptest::collection::vec(
                (any::<prop::sample::Index>(), any::<u8>(), 1..12usize, any::<bool>(), 0..6usize),
                0..600,
            ),
        ) {
            let patterns = rule_keywords();
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let mut text = Vec::new();
            for (which, from, len, upper, between) in pieces {
                let keyword = refs[which.index(refs.len())].as_bytes();
                let from = usize::from(from) % keyword.len();
                let piece = &keyword[from..(from + len).min(keyword.len())];
                text.extend(piece.iter().map(|b| if upper { b.to_ascii_uppercase() } else { *b }));
                text.extend_from_slice(["", " ", "\n", "=", "é", "x"][between].as_bytes());
            }
            prop_assert_eq!(ours(&refs, &text), reference(&refs, &text));
        }
    }

    /// Every rule keyword, lowercased, once (as the scanner compiles them).
    fn rule_keywords() -> Vec<String> {
        let mut patterns: Vec<String> = crate::domain::secrets::rules::RULES
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| k.to_ascii_lowercase()))
            .collect();
        patterns.sort();
        patterns.dedup();
        patterns
    }
}
