//! Folded text cut into runs: letters and digits of a spaced script, or CJK runs; the fast
//! path classes ASCII bytes 64 at a time.

use super::is_cjk;

/// One run of a folded text: letters and digits of a spaced script, or a CJK run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) cjk: bool,
}

/// Which bytes are ASCII letters and digits (a table lookup is fewer instructions than the
/// three range checks).
static ASCII_WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// Puts the runs of folded text, in order, into `out`.
pub(super) fn runs_into(folded: &str, out: &mut Vec<Run>) {
    out.clear();
    if !folded.is_ascii() {
        runs_by_chars(folded, out);
        return;
    }
    // Most memories: words are runs of ASCII letters and digits, and there is no CJK. The
    // bytes are classed 64 at a time into a mask whose bit changes are the runs' edges.
    let bytes = folded.as_bytes();
    let mut start = None;
    for (block, chunk) in bytes.chunks(64).enumerate() {
        let at = block * 64;
        let mask = word_mask(chunk);
        // A run open from the block before continues at bit 0 when that byte is a letter.
        let before = u64::from(start.is_some());
        let mut edges = mask ^ ((mask << 1) | before);
        while edges != 0 {
            let bit = edges.trailing_zeros() as usize;
            edges &= edges - 1;
            match start.take() {
                None => start = Some(at + bit),
                Some(from) => out.push(Run {
                    start: from,
                    end: at + bit,
                    cjk: false,
                }),
            }
        }
    }
    if let Some(from) = start {
        out.push(Run {
            start: from,
            end: bytes.len(),
            cjk: false,
        });
    }
}

/// Bit `k` set when byte `k` of `chunk` (at most 64 ASCII bytes) is a letter or digit
/// ([`ASCII_WORD`]), eight bytes at a time: a byte `b < 128` is at least `lo` exactly when
/// `b + 128 - lo` has its high bit set, and no such sum carries into the next byte.
fn word_mask(chunk: &[u8]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let at_least = |x: u64, lo: u8| x.wrapping_add(ONES * u64::from(128 - lo));
    let mut mask = 0u64;
    let mut words = chunk.chunks_exact(8);
    for (k, word) in (&mut words).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w);
        // `x | 0x20` puts A–Z onto a–z, and nothing else there.
        let lower = x | (ONES * 0x20);
        let digit = at_least(x, b'0') & !at_least(x, b'9' + 1);
        let letter = at_least(lower, b'a') & !at_least(lower, b'z' + 1);
        let high = (digit | letter) & HIGH;
        // The eight high bits, gathered into one byte in order.
        let byte = (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= byte << (8 * k);
    }
    let done = chunk.len() - words.remainder().len();
    for (k, &b) in words.remainder().iter().enumerate() {
        mask |= u64::from(ASCII_WORD[usize::from(b)]) << (done + k);
    }
    mask
}

/// [`runs_into`] for any text, character by character (for ASCII text it gives what the
/// ASCII path gives; the tests check that).
pub(super) fn runs_by_chars(folded: &str, out: &mut Vec<Run>) {
    let mut open: Option<Run> = None;
    for (at, c) in folded.char_indices() {
        let kind = if is_cjk(c) {
            Some(true)
        } else if c.is_alphanumeric() {
            Some(false)
        } else {
            None
        };
        match (open.as_mut(), kind) {
            (Some(run), Some(cjk)) if run.cjk == cjk => run.end = at + c.len_utf8(),
            (_, kind) => {
                out.extend(open.take());
                open = kind.map(|cjk| Run {
                    start: at,
                    end: at + c.len_utf8(),
                    cjk,
                });
            }
        }
    }
    out.extend(open);
}

/// The runs of folded text, in order.
pub(super) fn runs(folded: &str) -> Vec<Run> {
    let mut out = Vec::new();
    runs_into(folded, &mut out);
    out
}
