//! The scanning engine: one Aho-Corasick pass finds every rule keyword; each rule's regex then
//! runs only on the lines around its keywords (merged into windows, so no byte is searched twice
//! by the same rule). Both passes are linear in the text's length, whatever the input.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::{contiguous, noncontiguous};
use aho_corasick::{Anchored, MatchKind, dfa};
use regex::bytes::Regex;

use super::judge::{self, Confidence};
use super::rules::{Check, RULES, Rule};

/// From how many bytes scanned the keyword DFA is built instead of searching with the
/// contiguous NFA. Building the DFA takes about 1 ms (nearly all of a sync's secret scan of one
/// new memory, measured with perf), the NFA a third of that; the NFA searches keyword-dense
/// memory text at about 160 MB/s, the DFA at 350 MB/s, so the DFA pays off after about 300 KB.
const DFA_FROM: usize = 256 * 1024;

/// How far before a keyword a single-line match may start.
const BACK: usize = 256;
/// How far after a keyword a single-line match may end.
const FORWARD: usize = 1024;
/// How far after its keyword a multi-line match (a key block) may end.
const MULTILINE_FORWARD: usize = 64 * 1024;

/// How far after a generic keyword its `=` or `:` may be (the rest of the key name, closing
/// quotes or emphasis, and spaces, as the generic rule's regex allows).
const ASSIGNMENT_REACH: usize = 56;
/// How far after `://` a URL's `@` may be (user and password, as the URL rule allows).
const URL_REACH: usize = 320;

/// One accepted match, before line numbers are counted.
#[derive(Debug, Clone)]
pub(crate) struct RawFinding {
    /// Index into [`RULES`].
    pub rule: usize,
    /// Byte range of the secret.
    pub start: usize,
    /// End of the byte range.
    pub end: usize,
}

/// A keyword's rules, and the exact spelling when the rule wants exact case.
type Trigger = (usize, Option<&'static str>);

/// The compiled rules.
pub(crate) struct Scanner {
    /// One regex per rule, compiled the first time its keyword occurs (most texts need only a
    /// few rules, and compiling all of them would cost more than scanning a team folder).
    /// `None` only if a built-in pattern failed to compile, which the unit tests rule out.
    regexes: Vec<OnceLock<Option<Regex>>>,
    /// All keywords, lowercased; matched ASCII case-insensitively.
    patterns: Vec<String>,
    /// The keyword automaton for small inputs: a contiguous NFA, built in a third of the DFA's
    /// time (a sync scanning one new memory would otherwise build a DFA to search a few hundred
    /// bytes). `None` if it could not be built.
    small: OnceLock<Option<contiguous::NFA>>,
    /// The DFA, faster per byte, built once the bytes scanned pass [`DFA_FROM`].
    large: OnceLock<Option<dfa::DFA>>,
    /// The automaton both are built from, built once.
    trie: OnceLock<Option<noncontiguous::NFA>>,
    /// Whether a thread has started building the DFA: the others keep searching with the NFA
    /// meanwhile instead of waiting for it.
    building: AtomicBool,
    /// Bytes scanned so far by this scanner.
    scanned: AtomicUsize,
    /// For each keyword pattern, the rules it triggers.
    triggers: Vec<Vec<Trigger>>,
}

/// The keyword automaton one text is searched with.
enum Keywords<'a> {
    Nfa(&'a contiguous::NFA),
    Dfa(&'a dfa::DFA),
}

impl Scanner {
    /// Builds the keyword automaton; each rule's regex compiles on first use.
    pub fn new() -> Scanner {
        let regexes = RULES.iter().map(|_| OnceLock::new()).collect();
        let mut patterns: Vec<String> = Vec::new();
        let mut triggers: Vec<Vec<Trigger>> = Vec::new();
        for (index, rule) in RULES.iter().enumerate() {
            for &keyword in rule.keywords {
                let folded = keyword.to_ascii_lowercase();
                let slot = match patterns.iter().position(|p| *p == folded) {
                    Some(slot) => slot,
                    None => {
                        patterns.push(folded);
                        triggers.push(Vec::new());
                        patterns.len() - 1
                    }
                };
                triggers[slot].push((index, rule.case_sensitive.then_some(keyword)));
            }
        }
        Scanner {
            regexes,
            patterns,
            small: OnceLock::new(),
            large: OnceLock::new(),
            trie: OnceLock::new(),
            building: AtomicBool::new(false),
            scanned: AtomicUsize::new(0),
            triggers,
        }
    }

    /// The keyword automaton for a text of `len` bytes: the DFA once this scanner has seen
    /// enough bytes to pay for building it, else the contiguous NFA. Both hold the same
    /// patterns in the same order, so a hit's pattern id means the same in either. While one
    /// thread builds the DFA, the others go on with the NFA.
    fn keywords(&self, len: usize) -> Option<Keywords<'_>> {
        let scanned = self.scanned.fetch_add(len, Ordering::Relaxed) + len;
        if scanned >= DFA_FROM {
            if let Some(Some(dfa)) = self.large.get() {
                return Some(Keywords::Dfa(dfa));
            }
            // The NFA is not built yet only when the first texts were large: then waiting for
            // the DFA is the faster way.
            if !self.building.swap(true, Ordering::AcqRel) || self.small.get().is_none() {
                let built = self.large.get_or_init(|| {
                    let trie = self.trie()?;
                    dfa::Builder::new().build_from_noncontiguous(trie).ok()
                });
                if let Some(dfa) = built {
                    return Some(Keywords::Dfa(dfa));
                }
            }
        }
        self.small
            .get_or_init(|| {
                let trie = self.trie()?;
                contiguous::Builder::new()
                    .build_from_noncontiguous(trie)
                    .ok()
            })
            .as_ref()
            .map(Keywords::Nfa)
    }

    /// The keywords' trie with its failure links, which the NFA and the DFA are both made
    /// from (building it is a third of building the DFA).
    fn trie(&self) -> Option<&noncontiguous::NFA> {
        self.trie
            .get_or_init(|| {
                noncontiguous::Builder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(&self.patterns)
                    .ok()
            })
            .as_ref()
    }

    /// Whether every built-in pattern compiled.
    #[cfg(test)]
    pub fn complete(&self) -> bool {
        (0..RULES.len()).all(|r| self.regex(r).is_some())
            && self.keywords(0).is_some()
            && self.keywords(DFA_FROM).is_some()
    }

    /// The rule's regex, compiled on first use.
    fn regex(&self, rule: usize) -> Option<&Regex> {
        self.regexes[rule]
            .get_or_init(|| Regex::new(&format!("(?-u){}", RULES[rule].pattern)).ok())
            .as_ref()
    }

    /// Every accepted finding in `text`, without overlaps, sorted by position.
    pub fn find(&self, text: &str) -> Vec<RawFinding> {
        let mut candidates = Vec::new();
        for (rule, start, end) in self.windows(text) {
            self.match_window(text, rule, start, end, &mut candidates);
        }
        resolve_overlaps(candidates)
    }

    /// The text windows each rule's regex must search: `(rule, start, end)`.
    fn windows(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let Some(keywords) = self.keywords(text.len()) else {
            return (0..RULES.len()).map(|r| (r, 0, text.len())).collect();
        };
        let bytes = text.as_bytes();
        let mut open: Vec<Option<(usize, usize)>> = vec![None; RULES.len()];
        let mut windows = Vec::new();
        let mut separators = Separators::default();
        let on_hit = |pattern: usize, hit_end: usize| {
            let at = hit_end - self.patterns[pattern].len();
            for &(rule, exact) in &self.triggers[pattern] {
                if exact.is_some_and(|k| &bytes[at..hit_end] != k.as_bytes())
                    || !could_match(&RULES[rule], bytes, hit_end, &mut separators)
                {
                    continue;
                }
                let multiline = RULES[rule].multiline;
                let reach = if multiline {
                    MULTILINE_FORWARD
                } else {
                    FORWARD
                };
                let limit = (at + reach).min(bytes.len());
                match &mut open[rule] {
                    Some((_, end)) if at <= *end => {
                        if limit > *end && (multiline || bytes.get(*end) != Some(&b'\n')) {
                            *end = window_end(text, *end, limit, multiline);
                        }
                    }
                    slot => {
                        if let Some((start, end)) = slot.take() {
                            windows.push((rule, start, end));
                        }
                        *slot = Some((
                            window_start(text, at),
                            window_end(text, at, limit, multiline),
                        ));
                    }
                }
            }
        };
        match keywords {
            Keywords::Nfa(nfa) => each_hit(nfa, bytes, on_hit),
            Keywords::Dfa(dfa) => each_hit(dfa, bytes, on_hit),
        }
        for (rule, slot) in open.into_iter().enumerate() {
            if let Some((start, end)) = slot {
                windows.push((rule, start, end));
            }
        }
        windows
    }

    /// Runs one rule's regex on one window and keeps the matches its judge accepts.
    fn match_window(
        &self,
        text: &str,
        index: usize,
        start: usize,
        end: usize,
        out: &mut Vec<(RawFinding, Confidence)>,
    ) {
        let Some(regex) = self.regex(index) else {
            return;
        };
        let rule: &Rule = &RULES[index];
        let bytes = text.as_bytes();
        let window = &bytes[start..end];
        let mut at = 0;
        while let Some(caps) = regex.captures_at(window, at) {
            let Some(whole) = caps.get(0) else { break };
            // Quoted and bare values are alternatives of their own group.
            let secret = SECRET_GROUPS
                .iter()
                .find_map(|g| caps.name(g))
                .unwrap_or(whole);
            let (s, e) = (start + secret.start(), start + secret.end());
            let key = caps
                .name("k")
                .and_then(|k| text.get(start + k.start()..start + k.end()))
                .unwrap_or("");
            // `KEY=value` (env files, connection strings), as opposed to prose's `key: value`.
            let assigned = caps.name("k").is_some_and(|k| {
                let between = &window[k.end()..secret.start().max(k.end())];
                between.contains(&b'=') && !between.windows(2).any(|w| w == b"==" || w == b"=>")
            });
            let before = line_before(text, start + whole.start());
            // A byte-level match may end inside a UTF-8 char (a length bound cut it): not a token.
            let accepted = s < e
                && bounded(bytes, s, e, rule)
                && text.get(s..e).is_some_and(|value| {
                    let quote = s.checked_sub(1).map(|q| bytes[q]);
                    let context = judge::Context {
                        key,
                        next: bytes.get(e).copied(),
                        before,
                        quoted: matches!(quote, Some(b'"' | b'\'' | b'`'))
                            && bytes.get(e).copied() == quote,
                        assigned,
                    };
                    judge::judge(rule, value, &context)
                        .map(|confidence| {
                            out.push((
                                RawFinding {
                                    rule: index,
                                    start: s,
                                    end: e,
                                },
                                confidence,
                            ));
                        })
                        .is_some()
                });
            // A refused `key = value` may hide the next assignment inside its value: search
            // again from the value, which is always past where this match started.
            at = if !accepted && secret.start() > whole.start() {
                secret.start()
            } else if whole.end() > at {
                whole.end()
            } else {
                next_char(window, at)
            };
            if at >= window.len() {
                break;
            }
        }
    }
}

/// Calls `on_hit(pattern, end)` for every keyword occurrence in `bytes`, overlapping ones
/// included, in the order they end. A plain loop over the automaton's transitions: the
/// library's overlapping iterator spends a quarter more time per byte keeping its state
/// between calls (measured on 60 MB of memory text).
fn each_hit<A: Automaton>(automaton: &A, bytes: &[u8], mut on_hit: impl FnMut(usize, usize)) {
    let Ok(mut sid) = automaton.start_state(Anchored::No) else {
        return;
    };
    for (i, &byte) in bytes.iter().enumerate() {
        sid = automaton.next_state(Anchored::No, sid, byte);
        if automaton.is_special(sid) && automaton.is_match(sid) {
            for m in 0..automaton.match_len(sid) {
                on_hit(automaton.match_pattern(sid, m).as_usize(), i + 1);
            }
        }
    }
}

/// The position after the byte at `at` (a byte regex may start its search anywhere).
fn next_char(window: &[u8], at: usize) -> usize {
    (at + 1).min(window.len())
}

/// The capture groups that may hold the secret, in the order they are tried.
const SECRET_GROUPS: [&str; 4] = ["s", "s2", "s3", "s4"];

/// How much of the line before a match the judge may look at (a vendor's name, an ARN).
const CONTEXT_BACK: usize = 160;

/// The text of the line holding `at`, before `at`, at most [`CONTEXT_BACK`] bytes.
fn line_before(text: &str, at: usize) -> &str {
    let bytes = text.as_bytes();
    let low = at.saturating_sub(CONTEXT_BACK);
    let mut start = match bytes[low..at].iter().rposition(|&b| b == b'\n') {
        Some(nl) => low + nl + 1,
        None => low,
    };
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..at).unwrap_or("")
}

/// A cheap look past a keyword before any window opens: an assignment needs `=`, `:`, `|` or
/// ` is ` right after its key, a URL password needs an `@`, a rule with a probe its byte.
/// Prose mentioning "token" or linking a page costs nothing more than this.
fn could_match(rule: &Rule, bytes: &[u8], after: usize, separators: &mut Separators) -> bool {
    let ahead = |n: usize| &bytes[after..(after + n).min(bytes.len())];
    if let Some((offset, byte)) = rule.probe {
        return bytes.get(after + offset) == Some(&byte);
    }
    match rule.check {
        Check::Assignment => {
            // A keyword may end with its own `=` (`value=`).
            after.checked_sub(1).is_some_and(|i| bytes[i] == b'=')
                || separators.within(bytes, after, ASSIGNMENT_REACH)
        }
        Check::UrlPassword => ahead(URL_REACH).contains(&b'@'),
        _ => true,
    }
}

/// Where the next separator of a key from its value is (`=`, `:`, `|`, or the word `is` or
/// `was` between blanks), remembered across the keyword hits of one text: they come in
/// order and often close together (prose says "token", "secret" and "password" a lot), so
/// each byte is looked at about once.
#[derive(Debug, Default)]
struct Separators {
    /// The range searched last.
    from: usize,
    to: usize,
    /// The first separator in `from..to`, if any.
    found: Option<usize>,
}

impl Separators {
    /// Whether a separator starts in `after..after + reach`.
    fn within(&mut self, bytes: &[u8], after: usize, reach: usize) -> bool {
        let limit = (after + reach).min(bytes.len());
        if (self.from..=self.to).contains(&after) {
            match self.found {
                Some(at) if at >= after => return at < limit,
                Some(_) => {}
                None if limit <= self.to => return false,
                None => {
                    let start = self.to;
                    self.found = first_separator(bytes, start, limit);
                    self.to = limit;
                    return self.found.is_some();
                }
            }
        }
        self.from = after;
        self.to = limit;
        self.found = first_separator(bytes, after, limit);
        self.found.is_some()
    }
}

/// The first separator starting in `bytes[from..to]` (see [`Separators`]): SIMD searches,
/// since this runs after every keyword of prose.
fn first_separator(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let mark = memchr::memchr3(b'=', b':', b'|', &bytes[from..to]).map(|i| from + i);
    // The words may end past `to`: a separator only has to start before it.
    let reach = (to + 4).min(bytes.len());
    // Built once: a searcher's setup costs more than searching 56 bytes.
    static WORDS: OnceLock<[memchr::memmem::Finder<'static>; 2]> = OnceLock::new();
    let [is, was] = WORDS.get_or_init(|| {
        [
            memchr::memmem::Finder::new(b" is "),
            memchr::memmem::Finder::new(b" was "),
        ]
    });
    let word = |finder: &memchr::memmem::Finder<'_>| {
        finder
            .find(&bytes[from..reach])
            .map(|i| from + i)
            .filter(|&i| i < to)
    };
    [mark, word(is), word(was)].into_iter().flatten().min()
}

/// Refuses a match that is the middle of a longer token.
fn bounded(bytes: &[u8], start: usize, end: usize, rule: &Rule) -> bool {
    let before = start > 0
        && judge::continues_before(rule.tail, bytes[start - 1])
        && judge::continues(rule.tail, bytes[start]);
    let after = end < bytes.len()
        && judge::continues(rule.tail, bytes[end])
        && judge::continues(rule.tail, bytes[end - 1]);
    !before && !after
}

/// The start of the line holding `at`, but no more than [`BACK`] bytes before it.
fn window_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let low = at.saturating_sub(BACK);
    let mut start = match bytes[low..at].iter().rposition(|&b| b == b'\n') {
        Some(nl) => low + nl + 1,
        None => low,
    };
    while !text.is_char_boundary(start) {
        start += 1;
    }
    start
}

/// The end of the line holding `from` (or `limit` for multi-line rules), but no further than
/// `limit`.
fn window_end(text: &str, from: usize, limit: usize, multiline: bool) -> usize {
    let bytes = text.as_bytes();
    let mut end = if multiline {
        limit
    } else {
        match bytes[from..limit].iter().position(|&b| b == b'\n') {
            Some(nl) => from + nl,
            None => limit,
        }
    };
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// Keeps the best of overlapping findings: a verified token over a token shape over a generic
/// assignment, then the longer match.
fn resolve_overlaps(mut candidates: Vec<(RawFinding, Confidence)>) -> Vec<RawFinding> {
    candidates.sort_by(|(a, ca), (b, cb)| {
        cb.cmp(ca)
            .then((b.end - b.start).cmp(&(a.end - a.start)))
            .then(a.start.cmp(&b.start))
            .then(a.rule.cmp(&b.rule))
    });
    let mut taken: BTreeMap<usize, RawFinding> = BTreeMap::new();
    for (finding, _) in candidates {
        let clash_before = taken
            .range(..=finding.start)
            .next_back()
            .is_some_and(|(_, f)| f.end > finding.start);
        let clash_after = taken.range(finding.start..finding.end).next().is_some();
        if !clash_before && !clash_after {
            taken.insert(finding.start, finding);
        }
    }
    taken.into_values().collect()
}
