//! Plain prose: the stretches of a text that the keyword search may skip.
//!
//! A byte is *plain* when it is an ASCII letter (a capital only where a word starts: not right
//! after another letter), a space, a tab, a line end, or a `.` or `,` followed by blank space
//! or the end of the text. Every other byte is *busy*: digits, every other mark, bytes that
//! are not ASCII, a capital inside a word; so is a run of [`LONG_RUN`] letters or more.
//!
//! No secret is made of plain bytes alone: the judge refuses one ([`is_plain`]), except for
//! the rules whose values may be plain words (a `.netrc` password), whose keywords count as
//! busy wherever they stand. A rule's match lies within [`Reach`] of its keyword, so a keyword
//! with no busy byte that near cannot start a finding, and the keyword search walks only the
//! parts of a text within that reach of a busy byte ([`busy_ranges`]). Memory prose is mostly
//! plain; a line of code or a frontmatter is busy at once.

use std::ops::Range;

/// The bytes looked at together.
const CHUNK: usize = 64;

/// A run of this many letters is busy: a token of letters only (an AWS secret key can be 40),
/// not a word of prose.
pub(crate) const LONG_RUN: u32 = 16;

/// How far a match may stand from the keyword that opened its window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach {
    /// How far after a keyword's start a match may end.
    pub forward: usize,
    /// How far before a keyword a match may start.
    pub back: usize,
    /// The longest keyword.
    pub keyword: usize,
}

/// Whether `secret` is made of plain bytes alone (see the module's text): no digit, no mark
/// but a `.` or `,` before blank space or at its end, no capital after a letter, no run of
/// [`LONG_RUN`] letters. Stricter than a look at the text around it (a capital first in the
/// secret may follow a letter there), so that every secret the keyword search could miss is
/// one of these.
pub(crate) fn is_plain(secret: &str) -> bool {
    let bytes = secret.as_bytes();
    let mut run = 0u32;
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        let plain = match b {
            b'a'..=b'z' => true,
            b'A'..=b'Z' => i == 0 || !bytes[i - 1].is_ascii_alphabetic(),
            b' ' | b'\t' | b'\n' | b'\r' => true,
            b'.' | b',' => next.is_none_or(is_blank),
            _ => false,
        };
        run = if b.is_ascii_alphabetic() { run + 1 } else { 0 };
        if !plain || run >= LONG_RUN {
            return false;
        }
    }
    true
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The byte classes of one chunk, one bit per byte (bit `i` for byte `i`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Masks {
    letters: u64,
    upper: u64,
    blank: u64,
    stops: u64,
}

/// The masks of 64 bytes: each class as one flag byte per byte (comparisons the compiler
/// runs 16 bytes at a time), then packed into bits ([`pack_flags`]). Four times faster than
/// setting bits a byte at a time, which was a tenth of a memory folder's scan.
fn masks(chunk: &[u8; CHUNK]) -> Masks {
    let mut letters = [0u8; CHUNK];
    let mut upper = [0u8; CHUNK];
    let mut blank = [0u8; CHUNK];
    let mut stops = [0u8; CHUNK];
    for (i, &b) in chunk.iter().enumerate() {
        letters[i] = u8::from((b | 0x20).wrapping_sub(b'a') < 26);
        upper[i] = u8::from(b.wrapping_sub(b'A') < 26);
        blank[i] = u8::from((b == b' ') | (b == b'\t') | (b == b'\n') | (b == b'\r'));
        stops[i] = u8::from((b == b'.') | (b == b','));
    }
    Masks {
        letters: pack_flags(&letters),
        upper: pack_flags(&upper),
        blank: pack_flags(&blank),
        stops: pack_flags(&stops),
    }
}

/// Bit `i` set where `flags[i]` is 1; `flags` holds only 0s and 1s, at most 64 of them, a
/// multiple of 8 (a shorter tail is not looked at). Eight flags at a time: a multiplication
/// gathers the low bit of each of eight bytes into the top byte.
pub(super) fn pack_flags(flags: &[u8]) -> u64 {
    let mut bits = 0u64;
    for (k, eight) in flags.chunks_exact(8).enumerate() {
        if let Ok(word) = <[u8; 8]>::try_from(eight) {
            let gathered = u64::from_le_bytes(word).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            bits |= gathered << (8 * k);
        }
    }
    bits
}

/// Walks chunk after chunk, telling which hold a busy byte.
#[derive(Debug, Default)]
struct Busy {
    /// The letters ending the chunks so far (a run may go on in the next).
    run: u32,
    /// Whether the last byte so far is a letter.
    letter: bool,
}

impl Busy {
    /// Whether the chunk with these masks holds a busy byte, and whether the chunk before it
    /// does too (a long run of letters began there); `next_blank` tells whether the byte after
    /// it is blank space or the text's end.
    fn chunk(&mut self, m: Masks, next_blank: bool) -> (bool, bool) {
        let after_letter = m.letters << 1 | u64::from(self.letter);
        let words = m.letters & !(m.upper & after_letter);
        let stops = m.stops & (m.blank >> 1 | u64::from(next_blank) << 63);
        let plain = words | m.blank | stops;
        // Bit `i` of `long` is set when the `LONG_RUN` letters from byte `i` on are all in
        // this chunk.
        let mut long = m.letters;
        let mut width = 1;
        while width < LONG_RUN {
            long &= long >> width;
            width *= 2;
        }
        let leading = (!m.letters).trailing_zeros();
        let across = self.run > 0 && self.run + leading >= LONG_RUN;
        let busy = plain != u64::MAX || long != 0 || across;
        self.run = if m.letters == u64::MAX {
            self.run.saturating_add(CHUNK as u32)
        } else {
            (!m.letters).leading_zeros()
        };
        self.letter = m.letters >> 63 == 1;
        (busy, across)
    }
}

/// Which chunks of `bytes` hold a busy byte (or begin a long run of letters).
fn busy_chunks(bytes: &[u8]) -> Vec<bool> {
    let chunks = bytes.len().div_ceil(CHUNK);
    let mut busy = vec![false; chunks];
    let mut state = Busy::default();
    for index in 0..chunks {
        let start = index * CHUNK;
        let next_blank = bytes.get(start + CHUNK).is_none_or(|&b| is_blank(b));
        let m = match <&[u8; CHUNK]>::try_from(&bytes[start..(start + CHUNK).min(bytes.len())]) {
            Ok(chunk) => masks(chunk),
            Err(_) => {
                // The last, short chunk, padded with spaces: plain, and blank after a stop.
                let mut padded = [b' '; CHUNK];
                padded[..bytes.len() - start].copy_from_slice(&bytes[start..]);
                masks(&padded)
            }
        };
        let (here, before) = state.chunk(m, next_blank);
        busy[index] = here;
        if before && index > 0 {
            busy[index - 1] = true;
        }
    }
    busy
}

/// A keyword that may stand in plain prose, looked for wherever it stands: by its rest after
/// the first letter (lowercase), so that a capital first letter is found too.
#[derive(Debug, Clone)]
pub(crate) struct PlainKeyword {
    rest: memchr::memmem::Finder<'static>,
}

impl PlainKeyword {
    /// `None` for a keyword of one letter or none, which every text holds anyway.
    pub(crate) fn new(keyword: &str) -> Option<PlainKeyword> {
        let lower = keyword.to_ascii_lowercase();
        let rest = lower.as_bytes().get(1..).filter(|r| !r.is_empty())?;
        Some(PlainKeyword {
            rest: memchr::memmem::Finder::new(rest).into_owned(),
        })
    }
}

/// The ranges of `bytes` the keyword search must walk, in order and apart: every byte within
/// `reach` of a busy byte or of an occurrence of one of `keywords` (a keyword written in plain
/// bytes has its first letter in either case and the rest in lowercase, so looking for the
/// rest finds it).
pub(crate) fn busy_ranges(
    bytes: &[u8],
    reach: Reach,
    keywords: &[PlainKeyword],
) -> Vec<Range<usize>> {
    let mut busy = busy_chunks(bytes);
    let chunks = busy.len();
    for keyword in keywords {
        for at in keyword.rest.find_iter(bytes) {
            if let Some(flag) = busy.get_mut(at.saturating_sub(1) / CHUNK) {
                *flag = true;
            }
        }
    }
    // A chunk's bytes may close a match that began `forward` before, or open one whose
    // keyword ends up to `back` and a keyword's length after.
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for index in (0..chunks).filter(|&i| busy[i]) {
        let start = (index * CHUNK).saturating_sub(reach.forward);
        let end = ((index + 1) * CHUNK + reach.back + reach.keyword).min(bytes.len());
        match ranges.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => ranges.push(start..end),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether each byte is busy, by the module's definition, a byte at a time.
    fn busy_bytes(bytes: &[u8]) -> Vec<bool> {
        let mut run = 0u32;
        let mut out = vec![false; bytes.len()];
        for (i, &b) in bytes.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| bytes[p]);
            let next = bytes.get(i + 1).copied();
            let plain = match b {
                b'a'..=b'z' => true,
                b'A'..=b'Z' => !prev.is_some_and(|p| p.is_ascii_alphabetic()),
                b' ' | b'\t' | b'\n' | b'\r' => true,
                b'.' | b',' => next.is_none_or(is_blank),
                _ => false,
            };
            run = if b.is_ascii_alphabetic() { run + 1 } else { 0 };
            out[i] = !plain;
            if run >= LONG_RUN {
                for flag in &mut out[i + 1 - LONG_RUN as usize..=i] {
                    *flag = true;
                }
            }
        }
        out
    }

    fn machine() -> [PlainKeyword; 1] {
        [PlainKeyword::new("machine").unwrap()]
    }

    const REACH: Reach = Reach {
        forward: 100,
        back: 30,
        keyword: 5,
    };

    fn texty() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => Just(b"word ".to_vec()),
            2 => Just(b"Prose. ".to_vec()),
            1 => Just(b"x, y\n".to_vec()),
            1 => "[a-zA-Z .,\n]{1,20}".prop_map(String::into_bytes),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
            1 => Just(b"machine ".to_vec()),
            1 => Just(b"abcdefghijklmnopqr".to_vec()),
        ];
        proptest::collection::vec(piece, 0..120).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn every_byte_near_a_busy_byte_or_keyword_is_in_a_range(text in texty()) {
            let ranges = busy_ranges(&text, REACH, &machine());
            let covered = |at: usize| ranges.iter().any(|r| r.contains(&at));
            for w in ranges.windows(2) {
                prop_assert!(w[0].end < w[1].start);
            }
            let mut points: Vec<usize> = busy_bytes(&text)
                .iter()
                .enumerate()
                .filter_map(|(i, &b)| b.then_some(i))
                .collect();
            points.extend(memchr::memmem::find_iter(&text, b"achine").map(|at| at.saturating_sub(1)));
            for p in points {
                let low = p.saturating_sub(REACH.forward);
                let high = (p + REACH.back + REACH.keyword).min(text.len());
                for at in low..high {
                    prop_assert!(covered(at), "byte {at} near busy byte {p} is not walked");
                }
            }
        }

        #[test]
        fn a_plain_secret_has_no_busy_byte(text in "[a-zA-Z .,\n0-9_]{1,40}") {
            if is_plain(&text) {
                prop_assert!(busy_bytes(text.as_bytes()).iter().all(|&b| !b));
            }
        }
    }

    #[test]
    fn prose_is_plain_and_code_is_busy() {
        let prose = b"Rotate the token. Then tell the team, and move on\n";
        assert!(busy_ranges(prose, REACH, &[]).is_empty());
        for busy in [
            &b"the token is x9"[..],
            b"api_key",
            b"PASSWORD",
            b"caf\xc3\xa9",
            b"a.b",
            b"aBc",
        ] {
            assert!(
                !busy_ranges(busy, REACH, &[]).is_empty(),
                "{}",
                String::from_utf8_lossy(busy)
            );
        }
        assert!(!busy_ranges(b"abcdefghijklmnop", REACH, &[]).is_empty());
        assert!(busy_ranges(b"abcdefghijklmno", REACH, &[]).is_empty());
        assert!(
            !busy_ranges(b"machine host login me password hunter", REACH, &machine()).is_empty()
        );
        assert!(busy_ranges(b"machine host login me password hunter", REACH, &[]).is_empty());
        assert!(is_plain("hunter") && is_plain("Hunter") && is_plain("two words."));
        assert!(
            !is_plain("hunter2")
                && !is_plain("huNter")
                && !is_plain("a.b")
                && !is_plain("abcdefghijklmnop")
        );
    }
}
