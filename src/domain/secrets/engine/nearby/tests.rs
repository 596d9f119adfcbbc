//! Unit tests of the byte-wise looks (separators and prose near a keyword) against their
//! plain forms.

use super::*;
use proptest::prelude::*;

/// What `prose_nearby` answers, a byte at a time.
fn prose_nearby_bytewise(bytes: &[u8], after: usize) -> bool {
    let span = &bytes[after.saturating_sub(PROSE_REACH)..(after + PROSE_REACH).min(bytes.len())];
    let word =
        |rest: &[u8], w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    span.iter().any(|b| b"=:(\"'`".contains(b) || !b.is_ascii())
        || (0..span.len()).filter(|&i| span[i] == b' ').any(|i| {
            let rest = &span[i + 1..];
            [
                &b"is "[..],
                b"ist ",
                b"was ",
                b"war ",
                b"as ",
                b"als ",
                b"como ",
                b"comme ",
                b"es ",
                b"est ",
                b"era ",
                b"lautet",
            ]
            .iter()
            .any(|w| word(rest, w))
        })
}

/// What `prose_secret_nearby` answers, with a search per byte class.
fn prose_secret_nearby_bytewise(bytes: &[u8], after: usize) -> bool {
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

/// What `first_separator` answers, a byte at a time.
fn first_separator_bytewise(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    let reach = (to + 4).min(bytes.len());
    (from..to).find(|&i| {
        b"=:|".contains(&bytes[i])
            || bytes[i..reach].starts_with(b" is ")
            || bytes[i..reach].starts_with(b" was ")
    })
}

/// Text made of the bytes and words the checks look for, so that they are often found.
fn text() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop::sample::select(vec![
        &b" "[..],
        b"x",
        b"IS",
        b"is ",
        b" was ",
        b"war",
        b" As ",
        b"als",
        b" Como ",
        b"comm",
        b"e ",
        b"es",
        b"t ",
        b"era",
        b"lautet",
        b"Lautet:",
        b"\n",
        b" (",
        b"ist",
        b"=",
        b":",
        b"|",
        b"(",
        b"\"",
        b"`",
        b"'",
        "é".as_bytes(),
        b"password",
    ]);
    proptest::collection::vec(pieces, 0..120).prop_map(|p| p.concat())
}

proptest! {
    #[test]
    fn prose_nearby_answers_what_a_byte_at_a_time_look_answers(
        bytes in text(),
        at in 0usize..2000,
    ) {
        let after = at % (bytes.len() + 1);
        prop_assert_eq!(prose_nearby(&bytes, after), prose_nearby_bytewise(&bytes, after));
    }

    #[test]
    fn prose_secret_nearby_answers_what_a_search_per_byte_class_answers(
        bytes in text(),
        at in 0usize..2000,
    ) {
        let after = at % (bytes.len() + 1);
        prop_assert_eq!(
            prose_secret_nearby(&bytes, after),
            prose_secret_nearby_bytewise(&bytes, after)
        );
    }

    #[test]
    fn first_separator_is_the_first_a_byte_at_a_time_look_finds(
        bytes in text(),
        a in 0usize..2000,
        n in 0usize..400,
    ) {
        let from = a % (bytes.len() + 1);
        let to = (from + n).min(bytes.len());
        prop_assert_eq!(
            first_separator(&bytes, from, to),
            first_separator_bytewise(&bytes, from, to)
        );
    }
}

#[test]
fn a_separator_or_verb_across_a_block_edge_is_found() {
    // `" is "` starting at byte 14 of the first block, and a verb at the span's very end.
    let text = b"the api token is long";
    assert_eq!(first_separator(text, 0, text.len()), Some(13));
    let prose = format!("{}password was", "y".repeat(14));
    assert!(!prose_nearby(prose.as_bytes(), 22));
    let prose = format!("{}password was it", "y".repeat(14));
    assert!(prose_nearby(prose.as_bytes(), 22));
}
