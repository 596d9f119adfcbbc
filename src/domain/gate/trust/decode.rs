//! Encoded text: long base64 runs reported as blobs a reviewer cannot read, and encoded
//! payloads (base64, rot13) decoded and scanned again for the orders they hide.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::patterns::{PATTERN_RULES, ascii};
use super::{BASE64_BLOB, BASE64_MIN_CHARS, ENCODED_PAYLOAD, Risk, risk, scan_once};
use crate::domain::memory::line_col;

/// The shortest base64 run decoded and scanned again: 16 characters hold 12 bytes, about
/// three words of an order.
const DECODE_MIN_CHARS: usize = 16;

/// Encoded text is decoded and scanned again, with or without an order to decode it: each
/// base64 run that decodes to readable text, and the whole text read through rot13 when it
/// names rot13. An override, a command, an exfiltration or a jailbreak found inside is an
/// [`ENCODED_PAYLOAD`] error at the encoded text's place (a reviewer cannot read it, an agent
/// can).
pub(super) fn encoded_payloads(text: &str, risks: &mut Vec<Risk>) {
    let found_inside = |decoded: &str| -> Option<&'static str> {
        scan_once(decoded, &[])
            .into_iter()
            .map(|r| r.rule)
            .find(|rule| PATTERN_RULES.iter().any(|p| p.0 == *rule))
    };
    let mut add = |start: usize, matched: &str, what: String| {
        let mut found = risk(text, ENCODED_PAYLOAD, start, matched, &what);
        found.message = format!("{what} (decoded and scanned)");
        if !risks
            .iter()
            .any(|r| r.rule == ENCODED_PAYLOAD && r.line == found.line)
        {
            risks.push(found);
        }
    };
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let is_b64 = |b: u8| b.is_ascii_alphanumeric() || b"+/=_-".contains(&b);
        if !is_b64(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && is_b64(bytes[at]) {
            at += 1;
        }
        let run = &text[start..at];
        if run.len() < DECODE_MIN_CHARS || !run.bytes().any(|b| b.is_ascii_uppercase()) {
            continue;
        }
        if let Some(decoded) = base64_text(run)
            && let Some(rule) = found_inside(&decoded)
        {
            add(start, run, format!("base64 text that reads as `{rule}`"));
        }
    }
    let lower = text.to_ascii_lowercase();
    if ["rot13", "rot-13", "rot 13"]
        .iter()
        .any(|w| lower.contains(w))
    {
        let turned: String = text.chars().map(rot13).collect();
        if let Some(rule) = found_inside(&turned) {
            add(0, "rot13", format!("rot13 text that reads as `{rule}`"));
        }
    }
    risks.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
}

/// Rotates an ASCII letter by 13 places.
fn rot13(c: char) -> char {
    match c {
        'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
        'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
        _ => c,
    }
}

/// A base64 run (standard or URL-safe alphabet, padding optional) decoded, when it decodes
/// to readable UTF-8 text: random bytes and binary data give `None`.
fn base64_text(run: &str) -> Option<String> {
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(run.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in run.trim_end_matches('=').bytes() {
        acc = (acc << 6) | value(b)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    let readable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    (readable * 10 >= text.chars().count() * 9 && text.contains(' ')).then_some(text)
}

pub(super) static BASE64: LazyLock<Option<Regex>> =
    LazyLock::new(|| ascii(r"[A-Za-z0-9+/_-]{100,}={0,2}"));

/// Whether `text` holds a run of [`BASE64_MIN_CHARS`] characters of the base64 alphabet, which
/// every match of [`BASE64`] is: without one, the pattern is not built.
pub(super) fn may_hold_base64(text: &str) -> bool {
    let mut run = 0;
    text.bytes().any(|b| {
        run = match b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-') {
            true => run + 1,
            false => 0,
        };
        run >= BASE64_MIN_CHARS
    })
}

pub(super) fn base64_blobs(text: &str, risks: &mut Vec<Risk>) {
    if !may_hold_base64(text) {
        return;
    }
    let Some(base64) = &*BASE64 else { return };
    for m in base64.find_iter(text.as_bytes()) {
        let s = String::from_utf8_lossy(m.as_bytes());
        // Real encoded data mixes all three classes; a long word, path or hex digest does not.
        let mixed = s.bytes().any(|b| b.is_ascii_uppercase())
            && s.bytes().any(|b| b.is_ascii_lowercase())
            && s.bytes().any(|b| b.is_ascii_digit());
        if mixed && s.len() >= BASE64_MIN_CHARS {
            let (line, column) = line_col(text.as_bytes(), m.start());
            risks.push(Risk {
                rule: BASE64_BLOB,
                line,
                column,
                message: format!(
                    "{}-character base64 run can hide a payload from review",
                    s.len()
                ),
                matched: s.into_owned(),
            });
        }
    }
}
