//! Cheap looks past a keyword before any window opens: whether an assignment's separator or
//! a prose secret's verb and quotes stand near enough, searched 16 bytes at a time through
//! byte masks.

use super::{ASSIGNMENT_REACH, URL_REACH};
use crate::domain::secrets::rules::{Check, SecretRule};

/// A cheap look past a keyword before any window opens: an assignment needs `=`, `:`, `|` or
/// ` is ` right after its key, a URL password needs an `@`, a rule with a probe its byte.
/// Prose mentioning "token" or linking a page costs nothing more than this.
pub(super) fn could_match(
    rule: &SecretRule,
    bytes: &[u8],
    after: usize,
    separators: &mut Separators,
) -> bool {
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
pub(super) struct Separators {
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

#[cfg(test)]
mod tests;
