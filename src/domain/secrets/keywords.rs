//! The keyword search: every occurrence of every rule keyword (ASCII case-insensitive,
//! overlapping ones included), found by one dense Aho-Corasick DFA over byte classes.
//!
//! Built here rather than with a general library because two things decide a scan's speed:
//! building the automaton (a process scanning one memory pays for it whole; this build is a
//! few hundred microseconds) and the search loop, which walks one byte after another through a
//! chain of dependent table loads. The loop keeps its state in a register and walks four parts
//! of a text at once, so four such chains overlap in the CPU instead of one waiting on the
//! next; it indexes a table of a fixed size that every state's row fits in, without a bounds
//! check (nor the register holding the length), it leaves the loop at each hit, so the loop
//! holds only its states, text pointers and tables (two of the pointers still wait on the
//! stack), and one OR of the four states tells a match.

/// A state id: the index of the state's first transition in [`Keywords::trans`] (premultiplied
/// by the number of byte classes, so a step is one add and one load).
type StateId = u32;

/// From this many bytes a text is walked in [`LANES`] parts at once: each part after the
/// first starts by walking the longest keyword's length before it, a few dozen bytes, while
/// one walk waits on each load in turn (two in five of a team folder's memories are under a
/// kilobyte).
const LANES_FROM: usize = 256;
/// How many parts of a long text are walked together.
const LANES: usize = 4;
/// The entries of the table the four lanes index unchecked (2 MiB of address space, of
/// which only the automaton's rows are ever written or read: the rest stays unmapped zero
/// pages). An automaton larger than this (the rules' is about 30% of it) is walked in one
/// lane, with checked indexing.
const LANE_TABLE: usize = 1 << 19;

/// The compiled keywords.
#[derive(Debug, Clone)]
pub(crate) struct Keywords {
    /// The class of each byte: bytes that no keyword holds (in either case) share class 0.
    classes: [u8; 256],
    /// The number of classes, the length of one state's row.
    stride: usize,
    /// Every state's row of next states, ids premultiplied.
    trans: Vec<StateId>,
    /// Ids from here on are states where at least one keyword ends: a power of two above
    /// every other state's id, so an OR of states tells whether one of them is a match state.
    first_match: StateId,
    /// For each match state (`(id - first_match) / stride`), the range of its keywords in
    /// [`Keywords::outputs`].
    match_ranges: Vec<(u32, u32)>,
    /// The keywords ending at each match state: the state's own keyword first, then those of
    /// its shorter suffixes.
    outputs: Vec<u32>,
    /// The longest keyword's length.
    max_len: usize,
    /// Whether every state's row lies inside the first [`LANE_TABLE`] entries.
    fits_lanes: bool,
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
        // goes where the failure state goes, whose row is already complete (the root's
        // failure row is all root). Row by row, over copies of the failure row, so the loop
        // over classes has no index to check: this build is part of every process's start.
        let mut delta = child;
        let mut fail = vec![0u32; nodes];
        let mut outputs: Vec<Vec<u32>> = own;
        let mut order = Vec::with_capacity(nodes);
        order.push(0u32);
        let mut head = 0;
        let mut fail_row = vec![0u32; stride];
        let mut children: Vec<(u32, u32)> = Vec::with_capacity(stride);
        while let Some(&node) = order.get(head) {
            let node = node as usize;
            head += 1;
            if node != 0 {
                let from = fail[node] as usize * stride;
                fail_row.copy_from_slice(&delta[from..from + stride]);
            }
            for (slot, &via_fail) in delta[node * stride..(node + 1) * stride]
                .iter_mut()
                .zip(&fail_row)
            {
                if *slot == NONE {
                    *slot = via_fail;
                } else {
                    children.push((*slot, via_fail));
                }
            }
            for (next, via_fail) in children.drain(..) {
                fail[next as usize] = via_fail;
                let inherited = outputs[via_fail as usize].clone();
                outputs[next as usize].extend(inherited);
                order.push(next);
            }
        }

        // Renumber, ids premultiplied: the states without a match first (the root first of
        // all), the match states from the next power of two on.
        let matching = outputs.iter().filter(|o| !o.is_empty()).count();
        let first_match = ((nodes - matching) * stride).next_power_of_two();
        let mut id = vec![0u32; nodes];
        let (mut plain, mut matched) = (0usize, 0usize);
        for (node, out) in outputs.iter().enumerate() {
            if out.is_empty() {
                id[node] = (plain * stride) as u32;
                plain += 1;
            } else {
                id[node] = (first_match + matched * stride) as u32;
                matched += 1;
            }
        }
        // Zeroed memory comes from the system untouched: the gap below `first_match` and the
        // rest of the lanes' table cost nothing until written.
        let mut trans = vec![0 as StateId; (first_match + matching * stride).max(LANE_TABLE)];
        let mut match_ranges = vec![(0u32, 0u32); matching];
        let mut flat = Vec::new();
        for (node, out) in outputs.iter().enumerate() {
            let row = id[node] as usize;
            for (to, &next) in trans[row..row + stride]
                .iter_mut()
                .zip(&delta[node * stride..(node + 1) * stride])
            {
                *to = id[next as usize];
            }
            if !out.is_empty() {
                let from = flat.len() as u32;
                flat.extend_from_slice(out);
                match_ranges[(row - first_match) / stride] = (from, flat.len() as u32);
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
            fits_lanes: first_match + matching * stride <= LANE_TABLE,
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
        let table = match self.trans.get(..LANE_TABLE) {
            Some(table) if self.fits_lanes => <&[StateId; LANE_TABLE]>::try_from(table).ok(),
            _ => None,
        };
        let Some(table) =
            table.filter(|_| bytes.len() >= LANES_FROM && self.max_len * LANES <= bytes.len())
        else {
            self.walk(0, bytes, 0, report);
            return;
        };
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
        let (a, rest) = bytes.split_at(part);
        let (b, rest) = rest.split_at(part);
        let (c, rest) = rest.split_at(part);
        let (d, tail) = rest.split_at(part);
        let s3 = lanes(
            table,
            &self.classes,
            [a, b, c, d],
            states,
            self.first_match,
            &mut hits,
        );
        // Lane after lane, then the last part's few extra bytes: the order one walk reports.
        for lane in 0..LANES {
            for &(_, s, i) in hits.iter().filter(|h| h.0 == lane) {
                report(s, lane * part + i + 1);
            }
        }
        self.walk(s3, tail, LANES * part, report);
    }

    /// The longest keyword's length.
    pub fn max_len(&self) -> usize {
        self.max_len
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

    /// The automaton's size in bytes: its transition table up to the last state's row.
    #[cfg(test)]
    pub fn table_bytes(&self) -> usize {
        (self.first_match as usize + self.match_ranges.len() * self.stride)
            * std::mem::size_of::<StateId>()
    }
}

/// Walks the four parts of a text together from `states`, noting in `hits` where a lane
/// reached a match state; the last lane's state at its end. A function of its own, so that
/// nothing but the loop's own values competes for registers.
#[inline(never)]
fn lanes(
    table: &[StateId; LANE_TABLE],
    classes: &[u8; 256],
    [a, b, c, d]: [&[u8]; LANES],
    states: [StateId; LANES],
    first_match: StateId,
    hits: &mut Vec<(usize, StateId, usize)>,
) -> StateId {
    let [mut s0, mut s1, mut s2, mut s3] = states.map(|s| s as usize);
    let part = a.len().min(b.len()).min(c.len()).min(d.len());
    let step = |state: usize, byte: u8| {
        let at = state + usize::from(classes[usize::from(byte)]);
        debug_assert!(at < LANE_TABLE);
        // SAFETY: `at < LANE_TABLE`, the table's length. Every state here is the id of a
        // state of the automaton: the lanes start from the root (0) or from `warm_up`'s
        // result, and every entry of the table is such an id (the rows' entries are the ids
        // of next states, and the entries no row holds are 0, the root). An id is the index
        // of its state's row, and a class is below `stride`, a row's length, so `at` lies in
        // a row; `each_hit` calls this only when `fits_lanes` holds, which says every row
        // ends at or below `LANE_TABLE`.
        unsafe { *table.get_unchecked(at) as usize }
    };
    let threshold = first_match as usize;
    // The walk stops at each hit and starts again after it: in the loop, only the states,
    // the text pointers and the tables are live (not `hits` nor `first_match`), so fewer
    // values wait on the stack.
    let mut from = 0;
    while from < part {
        let mut hit = None;
        let lanes = a[from..part]
            .iter()
            .zip(&b[from..part])
            .zip(&c[from..part])
            .zip(&d[from..part]);
        for (i, (((&x0, &x1), &x2), &x3)) in lanes.enumerate() {
            s0 = step(s0, x0);
            s1 = step(s1, x1);
            s2 = step(s2, x2);
            s3 = step(s3, x3);
            // One test for all four (no id reaches `first_match`, a power of two, unless it
            // is a match state): hits are rare.
            if s0 | s1 | s2 | s3 >= threshold {
                hit = Some(from + i);
                break;
            }
        }
        let Some(i) = hit else { break };
        note([s0, s1, s2, s3].map(|s| s as StateId), first_match, i, hits);
        from = i + 1;
    }
    s3 as StateId
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
        // And it fits the four lanes' masked table, with room for more rules.
        assert!(keywords.fits_lanes);
        assert!(
            keywords.table_bytes() * 2 <= LANE_TABLE * std::mem::size_of::<StateId>(),
            "{} of {} bytes",
            keywords.table_bytes(),
            LANE_TABLE * std::mem::size_of::<StateId>()
        );
    }

    #[test]
    fn an_automaton_too_big_for_the_lanes_table_is_walked_in_one_lane() {
        // 1,200 distinct keywords of 40 bytes (a seeded xorshift over 62 byte values, so few
        // share a prefix): well past the lanes' table.
        let alphabet: Vec<char> = ('!'..='~').filter(|c| !c.is_ascii_uppercase()).collect();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let patterns: Vec<String> = (0..1200)
            .map(|_| {
                (0..40)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        alphabet[(state % alphabet.len() as u64) as usize]
                    })
                    .collect()
            })
            .collect();
        let keywords = Keywords::new(&patterns);
        assert!(!keywords.fits_lanes, "{}", keywords.table_bytes());
        let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let text = format!("{} some text {}", patterns[3], patterns[1199]).repeat(40);
        let found = ours(&refs, text.as_bytes());
        assert_eq!(found, reference(&refs, text.as_bytes()));
        assert!(found.contains(&(3, patterns[3].len())));
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

        /// The rules' own automaton (the one the lanes index unchecked) on text made of pieces
        /// of its keywords in either case, with spaces, newlines, `=` and non-ASCII between,
        /// from a few bytes (one walk) to several kilobytes (four lanes, their seams, a tail).
        #[test]
        fn the_rule_keywords_give_the_same_hits_as_the_library(
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
