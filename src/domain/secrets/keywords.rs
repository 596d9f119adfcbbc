//! The keyword search: every occurrence of every rule keyword (ASCII case-insensitive,
//! overlapping ones included), found by one dense Aho-Corasick DFA over byte classes.
//!
//! Built here rather than with a general library because two things decide a scan's speed:
//! building the automaton (a process scanning one memory pays for it whole; this build is a
//! few hundred microseconds) and the search loop, which walks one byte after another through a
//! chain of dependent table loads. The loop keeps its state in a register and walks four parts
//! of a text at once, so four such chains overlap in the CPU instead of one waiting on the
//! next.

/// A state id: the index of the state's first transition in [`Keywords::trans`] (premultiplied
/// by the number of byte classes, so a step is one add and one load).
type StateId = u32;

/// From this many bytes a text is walked in [`LANES`] parts at once.
const LANES_FROM: usize = 1024;
/// How many parts of a long text are walked together.
const LANES: usize = 4;

/// The compiled keywords.
#[derive(Debug, Clone)]
pub(crate) struct Keywords {
    /// The class of each byte: bytes that no keyword holds (in either case) share class 0.
    classes: [u8; 256],
    /// The number of classes, the length of one state's row.
    stride: usize,
    /// Every state's row of next states, ids premultiplied.
    trans: Vec<StateId>,
    /// Ids from here on are states where at least one keyword ends.
    first_match: StateId,
    /// For each match state (`(id - first_match) / stride`), the range of its keywords in
    /// [`Keywords::outputs`].
    match_ranges: Vec<(u32, u32)>,
    /// The keywords ending at each match state: the state's own keyword first, then those of
    /// its shorter suffixes.
    outputs: Vec<u32>,
    /// The longest keyword's length.
    max_len: usize,
}

/// No child in the trie yet.
const NONE: u32 = u32::MAX;

impl Keywords {
    /// Compiles `patterns`; a hit's pattern id is its index in `patterns`. Empty patterns are
    /// never reported.
    pub fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Keywords {
        let mut classes = [0u8; 256];
        let mut next_class = 1usize;
        for pattern in patterns {
            for &b in pattern.as_ref() {
                let folded = b.to_ascii_lowercase();
                if classes[usize::from(folded)] == 0 && next_class < 256 {
                    classes[usize::from(folded)] = next_class as u8;
                    next_class += 1;
                }
            }
        }
        for upper in b'A'..=b'Z' {
            classes[usize::from(upper)] = classes[usize::from(upper.to_ascii_lowercase())];
        }
        let stride = next_class;

        // The trie: node 0 is the root; `child[node * stride + class]`.
        let mut child: Vec<u32> = vec![NONE; stride];
        let mut own: Vec<Vec<u32>> = vec![Vec::new()];
        let mut max_len = 0;
        for (id, pattern) in patterns.iter().enumerate() {
            let pattern = pattern.as_ref();
            if pattern.is_empty() {
                continue;
            }
            max_len = max_len.max(pattern.len());
            let mut node = 0usize;
            for &b in pattern {
                let slot = node * stride + usize::from(classes[usize::from(b)]);
                if child[slot] == NONE {
                    child[slot] = own.len() as u32;
                    own.push(Vec::new());
                    child.extend(std::iter::repeat_n(NONE, stride));
                }
                node = child[slot] as usize;
            }
            own[node].push(id as u32);
        }
        let nodes = own.len();

        // Failure links in breadth-first order turn the trie into a DFA: a missing child
        // goes where the failure state goes, whose row is already complete.
        let mut delta = child;
        let mut fail = vec![0u32; nodes];
        let mut outputs: Vec<Vec<u32>> = own;
        let mut order = Vec::with_capacity(nodes);
        order.push(0u32);
        let mut head = 0;
        while head < order.len() {
            let node = order[head] as usize;
            head += 1;
            for class in 0..stride {
                let slot = node * stride + class;
                let next = delta[slot];
                let via_fail = if node == 0 {
                    0
                } else {
                    delta[fail[node] as usize * stride + class]
                };
                if next == NONE {
                    delta[slot] = via_fail;
                } else {
                    fail[next as usize] = via_fail;
                    let inherited = outputs[via_fail as usize].clone();
                    outputs[next as usize].extend(inherited);
                    order.push(next);
                }
            }
        }

        // Renumber: the states without a match first (the root first of all), so one compare
        // tells a match state; ids premultiplied.
        let mut rank = vec![0u32; nodes];
        let mut next_id = 0u32;
        for matching in [false, true] {
            for (node, out) in outputs.iter().enumerate() {
                if out.is_empty() != matching {
                    rank[node] = next_id;
                    next_id += 1;
                }
            }
        }
        let first_match = (nodes - outputs.iter().filter(|o| !o.is_empty()).count()) * stride;
        let mut trans = vec![0 as StateId; nodes * stride];
        let mut match_ranges = Vec::new();
        let mut flat = Vec::new();
        let mut by_rank = vec![0usize; nodes];
        for (node, &r) in rank.iter().enumerate() {
            by_rank[r as usize] = node;
        }
        for &node in &by_rank {
            let row = rank[node] as usize * stride;
            for class in 0..stride {
                trans[row + class] = rank[delta[node * stride + class] as usize] * stride as u32;
            }
            if !outputs[node].is_empty() {
                let from = flat.len() as u32;
                flat.extend_from_slice(&outputs[node]);
                match_ranges.push((from, flat.len() as u32));
            }
        }
        Keywords {
            classes,
            stride,
            trans,
            first_match: first_match as StateId,
            match_ranges,
            outputs: flat,
            max_len,
        }
    }

    /// Calls `on_hit(pattern, end)` for every keyword occurrence in `bytes`, in the order they
    /// end (for one end, the longest keyword first).
    pub fn each_hit(&self, bytes: &[u8], mut on_hit: impl FnMut(usize, usize)) {
        let mut report = |state: StateId, end: usize| {
            let index = (state - self.first_match) as usize / self.stride;
            if let Some(&(from, to)) = self.match_ranges.get(index) {
                for &pattern in &self.outputs[from as usize..to as usize] {
                    on_hit(pattern as usize, end);
                }
            }
        };
        if bytes.len() < LANES_FROM || self.max_len * LANES > bytes.len() {
            self.walk(0, bytes, 0, report);
            return;
        }
        // Each lane starts `max_len - 1` bytes before its part in the root state: by its part's
        // first byte it is in the state one walk from the text's start would be in.
        let part = bytes.len() / LANES;
        let mut states = [0 as StateId; LANES];
        for (lane, state) in states.iter_mut().enumerate().skip(1) {
            let from = lane * part - (self.max_len - 1).min(lane * part);
            *state = self.warm_up(&bytes[from..lane * part]);
        }
        // `(lane, state, i)` in the order of `i`: one list, sized for memory text's few hits a
        // kilobyte, so a text costs one allocation.
        let mut hits: Vec<(usize, StateId, usize)> = Vec::with_capacity(bytes.len() / 128);
        let [mut s0, mut s1, mut s2, mut s3] = states;
        let (a, rest) = bytes.split_at(part);
        let (b, rest) = rest.split_at(part);
        let (c, rest) = rest.split_at(part);
        let (d, tail) = rest.split_at(part);
        let first_match = self.first_match;
        for (i, (((&x0, &x1), &x2), &x3)) in a.iter().zip(b).zip(c).zip(d).enumerate() {
            s0 = self.step(s0, x0);
            s1 = self.step(s1, x1);
            s2 = self.step(s2, x2);
            s3 = self.step(s3, x3);
            // One test for all four: hits are rare, and the loop keeps its states in
            // registers only while the rare path stays out of it.
            if s0.max(s1).max(s2).max(s3) >= first_match {
                note([s0, s1, s2, s3], first_match, i, &mut hits);
            }
        }
        // Lane after lane, then the last part's few extra bytes: the order one walk reports.
        for lane in 0..LANES {
            for &(_, s, i) in hits.iter().filter(|h| h.0 == lane) {
                report(s, lane * part + i + 1);
            }
        }
        self.walk(s3, tail, LANES * part, report);
    }

    /// One transition.
    #[inline(always)]
    fn step(&self, state: StateId, byte: u8) -> StateId {
        self.trans[state as usize + usize::from(self.classes[usize::from(byte)])]
    }

    /// The state after `bytes` from the root, with no hits reported.
    fn warm_up(&self, bytes: &[u8]) -> StateId {
        bytes.iter().fold(0, |s, &b| self.step(s, b))
    }

    /// Walks `bytes` from `state`, calling `sink(match state, end)` with ends offset by
    /// `offset`.
    #[inline(always)]
    fn walk(
        &self,
        mut state: StateId,
        bytes: &[u8],
        offset: usize,
        mut sink: impl FnMut(StateId, usize),
    ) {
        for (i, &b) in bytes.iter().enumerate() {
            state = self.step(state, b);
            if state >= self.first_match {
                sink(state, offset + i + 1);
            }
        }
    }

    /// The automaton's size in bytes (its transition table).
    #[cfg(test)]
    pub fn table_bytes(&self) -> usize {
        self.trans.len() * std::mem::size_of::<StateId>()
    }
}

/// Notes the lanes that reached a match state after their byte `i`.
#[cold]
#[inline(never)]
fn note(
    states: [StateId; LANES],
    first_match: StateId,
    i: usize,
    hits: &mut Vec<(usize, StateId, usize)>,
) {
    for (lane, &s) in states.iter().enumerate() {
        if s >= first_match {
            hits.push((lane, s, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};
    use proptest::prelude::*;

    /// Every `(pattern, end)` the library's overlapping search finds, in our order.
    fn reference(patterns: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(patterns)
            .unwrap();
        let mut hits: Vec<(usize, usize, usize)> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.end(), usize::MAX - m.len(), m.pattern().as_usize()))
            .collect();
        hits.sort();
        hits.into_iter().map(|(end, _, p)| (p, end)).collect()
    }

    fn ours(patterns: &[&str], text: &[u8]) -> Vec<(usize, usize)> {
        let keywords = Keywords::new(patterns);
        let mut hits = Vec::new();
        keywords.each_hit(text, |p, end| hits.push((p, end)));
        // Within one end, order by length (longest first) as the reference does.
        hits.sort_by_key(|&(p, end)| (end, usize::MAX - patterns[p].len(), p));
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
    fn the_four_lanes_find_what_one_walk_finds_across_their_seams() {
        let patterns = ["token", "password to proceed", "key", "sk", "://"];
        let unit = "a token, https://x, the password to proceed, SK; key";
        for pad in 0..60 {
            let text = format!("{}{}", "x".repeat(pad), unit.repeat(40));
            assert_eq!(
                ours(&patterns, text.as_bytes()),
                reference(&patterns, text.as_bytes()),
                "pad {pad}"
            );
        }
    }

    #[test]
    fn the_rule_keywords_make_a_table_of_well_under_a_megabyte() {
        let patterns: Vec<String> = crate::domain::secrets::rules::RULES
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| k.to_ascii_lowercase()))
            .collect();
        let keywords = Keywords::new(&patterns);
        // The search touches few rows of it (the root and the first bytes of keywords), but a
        // table past a megabyte would start to crowd the caches.
        assert!(
            keywords.table_bytes() < 1 << 20,
            "{}",
            keywords.table_bytes()
        );
    }

    proptest! {
        #[test]
        fn same_hits_as_the_library(
            patterns in proptest::collection::vec("[abAB_:]{1,6}", 1..12),
            text in proptest::collection::vec(prop::sample::select(b"abAB_: x".to_vec()), 0..3000),
        ) {
            let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
            prop_assert_eq!(ours(&patterns, &text), reference(&patterns, &text));
        }
    }
}
