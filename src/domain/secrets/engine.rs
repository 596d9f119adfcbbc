//! The scanning engine: one pass of the keyword automaton ([`Keywords`]) finds every rule
//! keyword; each rule's regex then runs only on the lines around its keywords (merged into
//! windows, so no byte is searched twice by the same rule). Both passes are linear in the
//! text's length, whatever the input.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::OnceLock;

use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::{Input, Span};

use crate::domain::secrets::judge::{self, Confidence};
use crate::domain::secrets::keywords::Keywords;
use crate::domain::secrets::plain::{self, PlainKeyword, Reach};
use crate::domain::secrets::rules::{Check, RULES, SecretRule};

mod nearby;
mod tables;

use nearby::{Separators, could_match};
use tables::table_cells;

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
    /// The automaton finding them.
    keywords: Keywords,
    /// For each keyword pattern, the rules it triggers.
    triggers: Vec<Vec<Trigger>>,
    /// The keywords of the rules whose secrets may be plain words: looked for in plain prose
    /// too.
    plain_keywords: Vec<PlainKeyword>,
}

impl Scanner {
    /// Builds the keyword automaton; each rule's regex compiles on first use.
    pub fn new() -> Scanner {
        let regexes = RULES.iter().map(|_| OnceLock::new()).collect();
        let mut patterns: Vec<String> = Vec::new();
        let mut triggers: Vec<Vec<Trigger>> = Vec::new();
        let mut slots: HashMap<String, usize> = HashMap::new();
        for (index, rule) in RULES.iter().enumerate() {
            for &keyword in rule.keywords {
                let folded = keyword.to_ascii_lowercase();
                let slot = *slots.entry(folded).or_insert_with_key(|folded| {
                    patterns.push(folded.clone());
                    triggers.push(Vec::new());
                    patterns.len() - 1
                });
                triggers[slot].push((index, rule.case_sensitive.then_some(keyword)));
            }
        }
        let plain_keywords = RULES
            .iter()
            .filter(|r| r.plain_words)
            .flat_map(|r| r.keywords.iter().filter_map(|k| PlainKeyword::new(k)))
            .collect();
        Scanner {
            regexes,
            keywords: Keywords::new(&patterns),
            patterns,
            triggers,
            plain_keywords,
        }
    }

    /// Whether every built-in pattern compiled.
    #[cfg(test)]
    pub fn complete(&self) -> bool {
        (0..RULES.len()).all(|r| self.regex(r).is_some())
    }

    /// The rule's regex, compiled on first use.
    fn regex(&self, rule: usize) -> Option<&Regex> {
        self.regexes[rule]
            .get_or_init(|| compile(RULES[rule].pattern))
            .as_ref()
    }

    /// Every accepted finding in `text`, without overlaps, sorted by position.
    pub fn find(&self, text: &str) -> Vec<RawFinding> {
        let mut candidates = Vec::new();
        let busy = plain::busy_ranges(text.as_bytes(), self.reach(), &self.plain_keywords);
        for (rule, start, end) in self.windows(text, &busy) {
            self.match_window(text, rule, start, end, &mut candidates);
        }
        table_cells(text, &busy, &mut candidates);
        resolve_overlaps(candidates)
    }

    /// How far from its keyword a match may lie.
    fn reach(&self) -> Reach {
        Reach {
            forward: FORWARD,
            back: BACK,
            keyword: self.keywords.max_len(),
        }
    }

    /// The text windows each rule's regex must search: `(rule, start, end)`; `busy` are the
    /// text's busy ranges (`plain::busy_ranges`).
    fn windows(&self, text: &str, busy: &[Range<usize>]) -> Vec<(usize, usize, usize)> {
        let bytes = text.as_bytes();
        // The window each triggered rule has open: `(rule, start, end)`. A text triggers few
        // rules, so a short list searched in turn beats a slot for every rule.
        let mut open: Vec<(usize, usize, usize)> = Vec::new();
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
                let fresh = || {
                    (
                        rule,
                        window_start(text, at),
                        window_end(text, at, limit, multiline),
                    )
                };
                match open.iter_mut().find(|w| w.0 == rule) {
                    Some((_, _, end)) if at <= *end => {
                        if limit > *end && (multiline || bytes.get(*end) != Some(&b'\n')) {
                            *end = window_end(text, *end, limit, multiline);
                        }
                    }
                    Some(window) => windows.push(std::mem::replace(window, fresh())),
                    None => open.push(fresh()),
                }
            }
        };
        self.each_hit_near_busy(bytes, busy, on_hit);
        windows.extend(open);
        windows
    }

    /// Calls `on_hit(pattern, end)` for every keyword occurrence a finding may come from, in
    /// order: those within `busy`, the ranges within a match's reach of a busy byte
    /// (`plain.rs`). Plain prose around the others holds no secret, so the automaton does not
    /// walk it.
    fn each_hit_near_busy(
        &self,
        bytes: &[u8],
        busy: &[Range<usize>],
        mut on_hit: impl FnMut(usize, usize),
    ) {
        let keyword = self.keywords.max_len();
        for range in busy.iter().cloned() {
            // From a keyword's length before the range, so that one ending in it is whole;
            // only those ending in it are reported (ranges are apart, but these starts may
            // reach into the range before).
            let from = range.start.saturating_sub(keyword.saturating_sub(1));
            self.keywords
                .each_hit(&bytes[from..range.end], |pattern, end| {
                    if from + end > range.start {
                        on_hit(pattern, from + end);
                    }
                });
        }
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
        let rule: &SecretRule = &RULES[index];
        let bytes = text.as_bytes();
        let window = &bytes[start..end];
        let mut at = 0;
        let mut caps: Captures = regex.create_captures();
        loop {
            regex.search_captures(&Input::new(window).range(at..), &mut caps);
            let Some(found) = caps.get_match() else { break };
            let whole = found.span();
            // Quoted and bare values are alternatives of their own group.
            let secret: Span = SECRET_GROUPS
                .iter()
                .find_map(|g| caps.get_group_by_name(g))
                .unwrap_or(whole);
            let (s, e) = (start + secret.start, start + secret.end);
            // The key; the prose rule's passphrase branch names it `k6` (a name is one group).
            let key_match = caps
                .get_group_by_name("k")
                .or_else(|| caps.get_group_by_name("k6"));
            let key = key_match
                .and_then(|k| text.get(start + k.start..start + k.end))
                .unwrap_or("");
            // `KEY=value` (env files, connection strings), as opposed to prose's `key: value`.
            let between = key_match.map_or(&[][..], |k| &window[k.end..secret.start.max(k.end)]);
            let assigned =
                between.contains(&b'=') && !between.windows(2).any(|w| w == b"==" || w == b"=>");
            // `password == "team10"`: code checks the value, so it is the password.
            let compared = between.windows(2).any(|w| w == b"==" || w == b"!=");
            let before = line_before(text, start + whole.start);
            let quote = s.checked_sub(1).map(|q| bytes[q]);
            // A typed declaration (`apiKey: string = "…"`) holds a secret only as a literal:
            // `token: Token = None` and `_TokenEater: TypeAlias = Callable[…]` are code.
            let typed =
                rule.check == Check::Assignment && s < e && declares_a_type(between, &bytes[s..e]);
            let literal = matches!(quote, Some(b'"' | b'\'' | b'`'));
            // A byte-level match may end inside a UTF-8 char (a length bound cut it): not a token.
            let accepted = s < e
                && (!typed || literal)
                && bounded(bytes, s, e, rule)
                && text.get(s..e).is_some_and(|value| {
                    let context = judge::JudgeContext {
                        key,
                        next: bytes.get(e).copied(),
                        before,
                        quoted: matches!(quote, Some(b'"' | b'\'' | b'`'))
                            && bytes.get(e).copied() == quote,
                        assigned,
                        compared,
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
            at = if !accepted && secret.start > whole.start {
                secret.start
            } else if whole.end > at {
                whole.end
            } else {
                next_char(window, at)
            };
            if at >= window.len() {
                break;
            }
        }
    }
}

/// Compiles one rule's pattern as a byte regex (`regex::bytes::Regex`'s settings), without the
/// literal prefilter: a window is one line around a keyword the automaton already found, so a
/// prefilter saves little there, and extracting its literals cost more than the searches it
/// sped up (callgrind, 1,000-memory team folder: 79.4 M instructions with it, 74.2 M without).
fn compile(pattern: &str) -> Option<Regex> {
    let config = meta::Regex::config()
        .utf8_empty(false)
        .nfa_size_limit(Some(10 * (1 << 20)))
        .hybrid_cache_capacity(2 * (1 << 20))
        .auto_prefilter(false);
    meta::Builder::new()
        .configure(config)
        .syntax(
            regex_automata::util::syntax::Config::new()
                .utf8(false)
                .unicode(false),
        )
        .build(&format!("(?-u){pattern}"))
        .ok()
}

/// The position after the byte at `at` (a byte regex may start its search anywhere).
fn next_char(window: &[u8], at: usize) -> usize {
    (at + 1).min(window.len())
}

/// The capture groups that may hold the secret, in the order they are tried.
const SECRET_GROUPS: [&str; 6] = ["s", "s2", "s3", "s4", "s5", "s6"];

/// How much of the line before a match the judge may look at (a vendor's name, an ARN).
const CONTEXT_BACK: usize = 160;

/// The text of the line holding `at`, before `at`, at most [`CONTEXT_BACK`] bytes.
fn line_before(text: &str, at: usize) -> &str {
    let bytes = text.as_bytes();
    let low = at.saturating_sub(CONTEXT_BACK);
    let mut start = match memchr::memrchr(b'\n', &bytes[low..at]) {
        Some(nl) => low + nl + 1,
        None => low,
    };
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..at).unwrap_or("")
}

/// Whether a generic match is a typed declaration or parameter rather than an assignment of
/// `value`: a type name between `:` and `=` (`apiKey: string = …`, not Go's `:=`), or a type
/// and a default written without spaces after the colon (`startToken:Token=None`). `between`
/// is what stands between the key and the value.
fn declares_a_type(between: &[u8], value: &[u8]) -> bool {
    let spaced = between
        .iter()
        .position(|&b| b == b':')
        .is_some_and(|colon| {
            let after = &between[colon + 1..];
            after
                .iter()
                .position(|&b| b == b'=')
                .is_some_and(|eq| after[..eq].iter().any(u8::is_ascii_alphabetic))
        });
    let name = |part: &[u8], extra: fn(&u8) -> bool| {
        !part.is_empty() && part.iter().all(|b| extra(b) || matches!(b, b'_' | b'.'))
    };
    let packed = between.trim_ascii_end().ends_with(b":")
        && value.iter().position(|&b| b == b'=').is_some_and(|eq| {
            let (kind, default) = (&value[..eq], &value[eq + 1..]);
            name(kind, u8::is_ascii_alphabetic)
                && name(default, u8::is_ascii_alphanumeric)
                && (default[0].is_ascii_uppercase() || default.iter().all(u8::is_ascii_digit))
        });
    spaced || packed
}

/// Refuses a match that is the middle of a longer token.
fn bounded(bytes: &[u8], start: usize, end: usize, rule: &SecretRule) -> bool {
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
    let mut start = match memchr::memrchr(b'\n', &bytes[low..at]) {
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
        match memchr::memchr(b'\n', &bytes[from..limit]) {
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
