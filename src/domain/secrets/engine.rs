//! The scanning engine: one pass of the keyword automaton ([`Keywords`]) finds every rule
//! keyword; each rule's regex then runs only on the lines around its keywords (merged into
//! windows, so no byte is searched twice by the same rule). Both passes are linear in the
//! text's length, whatever the input.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::{Input, Span};

use super::judge::{self, Confidence};
use super::keywords::Keywords;
use super::rules::{Check, RULES, Rule};

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
        Scanner {
            regexes,
            keywords: Keywords::new(&patterns),
            patterns,
            triggers,
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
        for (rule, start, end) in self.windows(text) {
            self.match_window(text, rule, start, end, &mut candidates);
        }
        resolve_overlaps(candidates)
    }

    /// The text windows each rule's regex must search: `(rule, start, end)`.
    fn windows(&self, text: &str) -> Vec<(usize, usize, usize)> {
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
        self.keywords.each_hit(bytes, on_hit);
        windows.extend(open);
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
        Check::Prose => prose_nearby(bytes, after),
        Check::ProseSecret => prose_secret_nearby(bytes, after),
        _ => true,
    }
}

/// How far after a prose secret's keyword its value's opening parenthesis may be (the rest of
/// the key word, a space).
const PROSE_PAREN_REACH: usize = 24;

/// How far around a prose keyword its value, verb or quotes may be.
const PROSE_REACH: usize = 80;

/// Whether a prose password may stand around `after` (the end of a "password" keyword): a
/// mark (`=`, `:`, `(`, a quote) or what [`prose_verb_nearby`] looks for, within
/// [`PROSE_REACH`] bytes on either side. Prose that only names passwords opens no window. It runs on every
/// "password" of a text, so it uses SIMD searches and looks at the byte after each space.
fn prose_nearby(bytes: &[u8], after: usize) -> bool {
    let span = &bytes[after.saturating_sub(PROSE_REACH)..(after + PROSE_REACH).min(bytes.len())];
    memchr::memchr3(b'=', b':', b'(', span).is_some()
        || memchr::memchr3(b'"', b'\'', b'`', span).is_some()
        || prose_verb_nearby(bytes, after)
}

/// Whether a verb or joining word of the prose rules (`is`, `was`, `as`, `als`, `es`, `est`,
/// `ist`, `lautet`, `era`, `war`, `como`, `comme`) or a non-ASCII byte (`é`, `für`) stands
/// within [`PROSE_REACH`] bytes on either side of `after`.
fn prose_verb_nearby(bytes: &[u8], after: usize) -> bool {
    let span = &bytes[after.saturating_sub(PROSE_REACH)..(after + PROSE_REACH).min(bytes.len())];
    if !span.is_ascii() {
        return true;
    }
    let word =
        |rest: &[u8], w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    memchr::memchr_iter(b' ', span).any(|i| {
        let rest = &span[i + 1..];
        match rest.first().map(u8::to_ascii_lowercase) {
            Some(b'i') => word(rest, b"is ") || word(rest, b"ist "),
            Some(b'w') => word(rest, b"was ") || word(rest, b"war "),
            Some(b'a') => word(rest, b"as ") || word(rest, b"als "),
            Some(b'c') => word(rest, b"como ") || word(rest, b"comme "),
            Some(b'e') => word(rest, b"es ") || word(rest, b"est ") || word(rest, b"era "),
            Some(b'l') => word(rest, b"lautet"),
            _ => false,
        }
    })
}

/// How far after a prose secret's keyword its verb may be (a few words between), and how far
/// before it the joining word of a value given first (`use … as the api key`).
const PROSE_SECRET_AHEAD: usize = 64;
const PROSE_SECRET_BEHIND: usize = 40;

/// Whether a prose secret may stand around `after` (the end of a `secret`, `token`, `key`, …
/// keyword): `(` right after it, a verb or a non-ASCII byte (`für`, `é`) ahead, or `as`,
/// `als`, `como`, `comme` just before. Cheaper than [`prose_verb_nearby`] and one-sided, since
/// it runs on every such keyword of a text (a memory's `keywords:` line included).
fn prose_secret_nearby(bytes: &[u8], after: usize) -> bool {
    // A prose sentence is one line: the reach stops at its ends. It starts a byte early, at
    // the space a keyword such as `pass ` ends with.
    let from = after.saturating_sub(1);
    let ahead = &bytes[from..(from + PROSE_SECRET_AHEAD).min(bytes.len())];
    let ahead = &ahead[..memchr::memchr(b'\n', ahead).unwrap_or(ahead.len())];
    let behind = &bytes[after.saturating_sub(PROSE_SECRET_BEHIND)..after];
    let behind = &behind[memchr::memrchr(b'\n', behind).map_or(0, |i| i + 1)..];
    let paren = &ahead[..ahead.len().min(PROSE_PAREN_REACH)];
    if memchr::memchr(b'(', paren).is_some() || !ahead.is_ascii() {
        return true;
    }
    let word = |rest: &[u8], w: &[u8]| {
        rest.len() > w.len() && rest[..w.len()].eq_ignore_ascii_case(w) && rest[w.len()] == b' '
    };
    let verb = memchr::memchr_iter(b' ', ahead).any(|i| {
        let rest = &ahead[i + 1..];
        match rest.first().map(u8::to_ascii_lowercase) {
            Some(b'i') => word(rest, b"is") || word(rest, b"ist"),
            Some(b'w') => word(rest, b"was") || word(rest, b"war"),
            Some(b'e') => word(rest, b"es") || word(rest, b"est") || word(rest, b"era"),
            Some(b'l') => word(rest, b"lautet") || rest[1..].starts_with(b"autet:"),
            _ => false,
        }
    });
    verb || memchr::memchr_iter(b' ', behind).any(|i| {
        let rest = &behind[i + 1..];
        match rest.first().map(u8::to_ascii_lowercase) {
            Some(b'a') => word(rest, b"as") || word(rest, b"als"),
            Some(b'c') => word(rest, b"como") || word(rest, b"comme"),
            _ => false,
        }
    })
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
