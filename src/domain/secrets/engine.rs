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

use super::judge::{self, Confidence};
use super::keywords::Keywords;
use super::plain::{self, PlainKeyword, Reach};
use super::rules::{Check, RULES, SecretRule};

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

/// A cheap look past a keyword before any window opens: an assignment needs `=`, `:`, `|` or
/// ` is ` right after its key, a URL password needs an `@`, a rule with a probe its byte.
/// Prose mentioning "token" or linking a page costs nothing more than this.
fn could_match(rule: &SecretRule, bytes: &[u8], after: usize, separators: &mut Separators) -> bool {
    let ahead = |n: usize| &bytes[after..(after + n).min(bytes.len())];
    if let Some((offset, byte)) = rule.probe {
        return bytes.get(after + offset) == Some(&byte);
    }
    match rule.check {
        Check::Assignment => {
            // A keyword may end with its own `=` or `:` (`value=`, `pass:`).
            after
                .checked_sub(1)
                .is_some_and(|i| matches!(bytes[i], b'=' | b':'))
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
/// mark (`=`, `:`, `(`, a quote), a non-ASCII byte (`é`, `は`, …) or a verb or joining word of
/// the prose rules (`is`, `was`, `as`, `als`, `es`, `est`, `ist`, `lautet`, `era`, `war`,
/// `como`, `comme`), within [`PROSE_REACH`] bytes on either side. Prose that only names
/// passwords opens no window. It runs on every "password" of a text, so it looks at 16 bytes
/// at a time ([`span_masks`]), all four masks in one pass (almost every call finds no mark and
/// needs all four), and only at the spaces followed by a verb's first letter further.
fn prose_nearby(bytes: &[u8], after: usize) -> bool {
    let span = &bytes[after.saturating_sub(PROSE_REACH)..(after + PROSE_REACH).min(bytes.len())];
    let [marks, high, spaces, firsts] = span_masks::<4, PROSE_WORDS>(
        span,
        &const {
            [
                Probe::of(b"=:(\"'`"),
                Probe::NON_ASCII,
                Probe::of(b" "),
                Probe::folded(b"iwacel"),
            ]
        },
    );
    marks.iter().chain(&high).any(|&w| w != 0)
        || set_bits(and(spaces, shift_down(firsts))).any(|at| prose_verb(&span[at + 1..]))
}

/// Whether `rest` (the text after a space) starts with a verb of the prose rule. Its first
/// letters are the ones [`prose_nearby`] looks for.
fn prose_verb(rest: &[u8]) -> bool {
    let word = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    match rest.first().map(u8::to_ascii_lowercase) {
        Some(b'i') => word(b"is ") || word(b"ist "),
        Some(b'w') => word(b"was ") || word(b"war "),
        Some(b'a') => word(b"as ") || word(b"als "),
        Some(b'c') => word(b"como ") || word(b"comme "),
        Some(b'e') => word(b"es ") || word(b"est ") || word(b"era "),
        Some(b'l') => word(b"lautet"),
        _ => false,
    }
}

/// The words of the masks around a password ([`prose_nearby`]): `2 * PROSE_REACH` bytes.
const PROSE_WORDS: usize = 3;
/// The words of the masks after a key ([`prose_secret_nearby`], [`first_separator`]): the
/// look ahead, the look behind and the separators' reach, with the words' 4 bytes.
const KEY_WORDS: usize = 1;
const _: () = assert!(
    2 * PROSE_REACH <= 64 * PROSE_WORDS
        && PROSE_SECRET_AHEAD <= 64 * KEY_WORDS
        && PROSE_SECRET_BEHIND <= 64 * KEY_WORDS
        && ASSIGNMENT_REACH + 4 <= 64 * KEY_WORDS
);

/// One bit per byte of a span of up to `64 * W` bytes: bit `i % 64` of word `i / 64`. Each
/// check takes as few words as its span needs: the words are combined, shifted and searched
/// one by one.
type SpanBits<const W: usize> = [u64; W];

/// Which bytes a [`span_masks`] mask marks: a table of the 256 byte values, built when the
/// program is compiled (the probes are constants).
#[derive(Clone, Copy)]
struct Probe {
    /// Whether each byte value is marked.
    marks: [bool; 256],
}

impl Probe {
    /// The bytes that are not ASCII.
    const NON_ASCII: Probe = Probe::build(b"", false, true);

    /// The bytes of `set`.
    const fn of(set: &'static [u8]) -> Probe {
        Probe::build(set, false, false)
    }

    /// The letters of `set` (lower case) in either case: a byte is compared with its ASCII
    /// `0x20` bit set.
    const fn folded(set: &'static [u8]) -> Probe {
        Probe::build(set, true, false)
    }

    const fn build(set: &'static [u8], folded: bool, high: bool) -> Probe {
        let mut marks = [false; 256];
        let mut b = 0;
        while b < 256 {
            let compared = if folded { b as u8 | 0x20 } else { b as u8 };
            let mut i = 0;
            while i < set.len() {
                if set[i] == compared {
                    marks[b] = true;
                }
                i += 1;
            }
            if high && b >= 0x80 {
                marks[b] = true;
            }
            b += 1;
        }
        Probe { marks }
    }
}

/// For each probe, the bytes of `span` it marks, in blocks of 16 bytes: the checks after
/// keywords look at a few dozen bytes each, and one pass making every probe's bits beats a
/// search started for each byte class. Bytes past `64 * W` are not looked at.
#[inline(always)]
fn span_masks<const N: usize, const W: usize>(
    span: &[u8],
    probes: &[Probe; N],
) -> [SpanBits<W>; N] {
    let span = &span[..span.len().min(64 * W)];
    let mut out = [[0u64; W]; N];
    let mut mark = |index: usize, block: &[u8; 16]| {
        for (bits, probe) in out.iter_mut().zip(probes) {
            bits[index / 4] |= u64::from(block_mask(block, probe)) << (16 * (index % 4));
        }
    };
    let mut chunks = span.chunks_exact(16);
    for (index, chunk) in (&mut chunks).enumerate() {
        if let Ok(block) = <&[u8; 16]>::try_from(chunk) {
            mark(index, block);
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // Zero bytes pad the last block: no probe marks them.
        let mut block = [0u8; 16];
        block[..rest.len()].copy_from_slice(rest);
        mark(span.len() / 16, &block);
    }
    out
}

/// Bit `i` set where bit `i + 1` of `bits` is: a mark on the byte after each byte.
fn shift_down<const W: usize>(bits: SpanBits<W>) -> SpanBits<W> {
    let mut out = [0u64; W];
    for (i, word) in out.iter_mut().enumerate() {
        *word = bits[i] >> 1 | bits.get(i + 1).map_or(0, |next| next << 63);
    }
    out
}

/// The bytes both masks mark.
fn and<const W: usize>(a: SpanBits<W>, b: SpanBits<W>) -> SpanBits<W> {
    let mut out = a;
    for (word, other) in out.iter_mut().zip(b) {
        *word &= other;
    }
    out
}

/// The positions of the set bits of `bits`, lowest first.
fn set_bits<const W: usize>(bits: SpanBits<W>) -> SetBits<W> {
    SetBits { bits, word: 0 }
}

/// The iterator of [`set_bits`]: a loop over the words of its own rather than a `flat_map`,
/// whose generic `try_fold` was 5% of a large scan's instructions (callgrind, 80 MB).
struct SetBits<const W: usize> {
    /// The bits not yet handed out.
    bits: SpanBits<W>,
    /// The first word that may still hold one.
    word: usize,
}

impl<const W: usize> Iterator for SetBits<W> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while let Some(word) = self.bits.get_mut(self.word) {
            if *word != 0 {
                let bit = word.trailing_zeros() as usize;
                *word &= *word - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
        }
        None
    }
}

/// Bit `i` is set when `probe` marks `block[i]`.
#[inline(always)]
fn block_mask(block: &[u8; 16], probe: &Probe) -> u32 {
    let mut flags = [0u8; 16];
    for (flag, &b) in flags.iter_mut().zip(block) {
        *flag = u8::from(probe.marks[usize::from(b)]);
    }
    // 16 flags fit in 32 bits.
    super::plain::pack_flags(&flags) as u32
}

/// How far after a prose secret's keyword its verb may be (a few words between), and how far
/// before it the joining word of a value given first (`use … as the api key`).
const PROSE_SECRET_AHEAD: usize = 64;
const PROSE_SECRET_BEHIND: usize = 40;

/// Whether a prose secret may stand around `after` (the end of a `secret`, `token`, `key`, …
/// keyword): `(` right after it, a verb or a non-ASCII byte (`für`, `é`) ahead, or `as`,
/// `als`, `como`, `comme` just before. Cheaper than [`prose_nearby`] and one-sided, since
/// it runs on every such keyword of a text (a memory's `keywords:` line included); like it,
/// it looks at 16 bytes at a time ([`span_masks`]) and only at the spaces before a listed
/// word's first letter.
fn prose_secret_nearby(bytes: &[u8], after: usize) -> bool {
    // A prose sentence is one line: the reach stops at its ends. It starts a byte early, at
    // the space a keyword such as `pass ` ends with.
    let from = after.saturating_sub(1);
    let ahead = &bytes[from..(from + PROSE_SECRET_AHEAD).min(bytes.len())];
    let [newlines, parens, high, spaces, firsts] = span_masks::<5, KEY_WORDS>(
        ahead,
        &const {
            [
                Probe::of(b"\n"),
                Probe::of(b"("),
                Probe::NON_ASCII,
                Probe::of(b" "),
                Probe::folded(b"iwel"),
            ]
        },
    );
    let end = set_bits(newlines).next().unwrap_or(ahead.len());
    let ahead = &ahead[..end];
    let first_before = |bits: SpanBits<KEY_WORDS>, limit: usize| {
        set_bits(bits).next().is_some_and(|at| at < limit)
    };
    if first_before(parens, end.min(PROSE_PAREN_REACH))
        || first_before(high, end)
        || set_bits(and(spaces, shift_down(firsts)))
            .take_while(|&at| at < end)
            .any(|at| prose_secret_verb(&ahead[at + 1..]))
    {
        return true;
    }
    let behind = &bytes[after.saturating_sub(PROSE_SECRET_BEHIND)..after];
    let [newlines, spaces, firsts] = span_masks::<3, KEY_WORDS>(
        behind,
        &const { [Probe::of(b"\n"), Probe::of(b" "), Probe::folded(b"ac")] },
    );
    let start = set_bits(newlines).last().map_or(0, |at| at + 1);
    set_bits(and(spaces, shift_down(firsts)))
        .filter(|&at| at >= start)
        .any(|at| prose_secret_joiner(&behind[at + 1..]))
}

/// Whether `w`, then a space, starts `rest`, in any case.
fn word_then_space(rest: &[u8], w: &[u8]) -> bool {
    rest.len() > w.len() && rest[..w.len()].eq_ignore_ascii_case(w) && rest[w.len()] == b' '
}

/// Whether `rest` (the text after a space, up to the line's end) starts with a verb of the
/// prose-secret rule. Its first letters are the ones [`prose_secret_nearby`] looks for.
fn prose_secret_verb(rest: &[u8]) -> bool {
    let word = |w: &[u8]| word_then_space(rest, w);
    match rest.first().map(u8::to_ascii_lowercase) {
        Some(b'i') => word(b"is") || word(b"ist"),
        Some(b'w') => word(b"was") || word(b"war"),
        Some(b'e') => word(b"es") || word(b"est") || word(b"era"),
        Some(b'l') => word(b"lautet") || rest[1..].starts_with(b"autet:"),
        _ => false,
    }
}

/// Whether `rest` (the text after a space, from the line's start) starts with the joining
/// word of a value given before its key (`as`, `als`, `como`, `comme`).
fn prose_secret_joiner(rest: &[u8]) -> bool {
    let word = |w: &[u8]| word_then_space(rest, w);
    match rest.first().map(u8::to_ascii_lowercase) {
        Some(b'a') => word(b"as") || word(b"als"),
        Some(b'c') => word(b"como") || word(b"comme"),
        _ => false,
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

/// The first separator starting in `bytes[from..to]` (see [`Separators`]), 16 bytes at a time
/// ([`span_masks`]), since this runs after every keyword of prose: a mark, or a space before
/// an `i` or a `w` that starts one of the words.
fn first_separator(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    // The words may end past `to`: a separator only has to start before it.
    let span = &bytes[from..(to + 4).min(bytes.len())];
    let before = to - from;
    let word_at = |at: usize| span[at..].starts_with(b" is ") || span[at..].starts_with(b" was ");
    if span.len() > 64 * KEY_WORDS {
        // Longer than any reach the rules use: a byte at a time.
        return (0..before)
            .find(|&at| b"=:|".contains(&span[at]) || word_at(at))
            .map(|at| from + at);
    }
    let [marks, spaces, firsts] = span_masks::<3, KEY_WORDS>(
        span,
        &const { [Probe::of(b"=:|"), Probe::of(b" "), Probe::of(b"iw")] },
    );
    let words = and(spaces, shift_down(firsts));
    let mut candidates = words;
    for (word, mark) in candidates.iter_mut().zip(marks) {
        *word |= mark;
    }
    set_bits(candidates)
        .take_while(|&at| at < before)
        .find(|&at| span[at] != b' ' || word_at(at))
        .map(|at| from + at)
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

/// The generic rule's index: a Markdown table's cell under a secret column is judged as its
/// assignment.
fn generic_rule() -> Option<usize> {
    static INDEX: OnceLock<Option<usize>> = OnceLock::new();
    *INDEX.get_or_init(|| RULES.iter().position(|r| r.id == "generic-secret"))
}

/// The cells of a Markdown table row, as byte ranges of `text` without their padding; `None`
/// when the line is not a row (it holds no `|`).
fn row_cells(text: &str, start: usize, end: usize) -> Option<Vec<(usize, usize)>> {
    let line = &text.as_bytes()[start..end];
    if !line.contains(&b'|') {
        return None;
    }
    let mut cells = Vec::new();
    let mut from = 0;
    for (at, &b) in line.iter().enumerate().chain([(line.len(), &b'|')]) {
        // `\|` is a pipe inside a cell.
        if b != b'|' || (at > 0 && at < line.len() && line[at - 1] == b'\\') {
            continue;
        }
        let mut s = from;
        let mut e = at;
        while s < e && line[s].is_ascii_whitespace() {
            s += 1;
        }
        while e > s && line[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        cells.push((start + s, start + e));
        from = at + 1;
    }
    // A row written with its outer pipes has an empty first and last cell.
    if line.trim_ascii_start().first() == Some(&b'|') {
        cells.remove(0);
    }
    if line.trim_ascii_end().last() == Some(&b'|') {
        cells.pop();
    }
    Some(cells)
}

/// Whether a row is a table's delimiter row (`|---|:--:|`).
fn is_delimiter_row(text: &str, cells: &[(usize, usize)]) -> bool {
    !cells.is_empty()
        && cells.iter().all(|&(s, e)| {
            let cell = text[s..e].trim_matches(':');
            !cell.is_empty() && cell.bytes().all(|b| b == b'-')
        })
}

/// The line holding byte `at`, without its line break: `(start, end)`.
fn line_around(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let mut end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |nl| at + nl);
    if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    (start, end)
}

/// The start of the line after the one ending at `end` (its line break may be `\r\n`), or the
/// text's length.
fn next_line(bytes: &[u8], end: usize) -> usize {
    memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |nl| end + nl + 1)
}

/// Secrets in the cells of a Markdown table column whose header names a secret (`| user |
/// password |` over `| grafana | …value… |`): each cell is judged as the value of an
/// assignment to its column's header. Only the lines holding `--` are looked at for a
/// delimiter row, so a text without tables costs one `memchr` search of its `busy` ranges (a
/// `|` is a busy byte: every one lies in them) and one `memmem` search.
fn table_cells(text: &str, busy: &[Range<usize>], out: &mut Vec<(RawFinding, Confidence)>) {
    let bytes = text.as_bytes();
    if !busy
        .iter()
        .any(|r| memchr::memchr(b'|', &bytes[r.clone()]).is_some())
    {
        return;
    }
    let Some(rule_index) = generic_rule() else {
        return;
    };
    let rule = &RULES[rule_index];
    // Lines before this byte are done with.
    let mut done = 0;
    for hit in memchr::memmem::find_iter(bytes, b"--") {
        if hit < done {
            continue;
        }
        let (start, end) = line_around(bytes, hit);
        done = next_line(bytes, end);
        let delimiter = start > 0
            && row_cells(text, start, end).is_some_and(|cells| is_delimiter_row(text, &cells));
        let header = if delimiter {
            let (s, e) = line_around(bytes, start - 1);
            row_cells(text, s, e)
        } else {
            None
        };
        let Some(header) = header else {
            continue;
        };
        let columns: Vec<Option<&str>> = header
            .iter()
            .map(|&(s, e)| {
                let name = text[s..e].trim_matches(['*', '_', '`']);
                (!name.is_empty() && name.len() <= 40).then_some(name)
            })
            .collect();
        let mut at = next_line(bytes, end);
        while at < bytes.len() {
            let (row_start, row_end) = line_around(bytes, at);
            let Some(row) = row_cells(text, row_start, row_end) else {
                break;
            };
            for (column, &(s, e)) in row.iter().enumerate() {
                if let Some(Some(key)) = columns.get(column) {
                    judge_cell(text, rule, rule_index, key, s, e, out);
                }
            }
            at = next_line(bytes, row_end);
        }
        done = done.max(at);
    }
}

/// Judges one table cell under the column `key` (see [`table_cells`]).
fn judge_cell(
    text: &str,
    rule: &SecretRule,
    rule_index: usize,
    key: &str,
    start: usize,
    end: usize,
    out: &mut Vec<(RawFinding, Confidence)>,
) {
    let bytes = text.as_bytes();
    let (mut s, mut e) = (start, end);
    let quoted = e > s + 1 && matches!(bytes[s], b'`' | b'"' | b'\'') && bytes[e - 1] == bytes[s];
    if quoted {
        s += 1;
        e -= 1;
    }
    let Some(value) = text.get(s..e) else {
        return;
    };
    if value.is_empty() || value.contains(char::is_whitespace) || value.len() > 200 {
        return;
    }
    let context = judge::JudgeContext {
        key,
        next: None,
        before: "",
        quoted,
        assigned: false,
        compared: false,
    };
    if let Some(confidence) = judge::judge(rule, value, &context) {
        out.push((
            RawFinding {
                rule: rule_index,
                start: s,
                end: e,
            },
            confidence,
        ));
    }
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

#[cfg(test)]
mod tests;
