//! Secret detection for memory text: provider token rules, private key blocks, credentials in
//! URLs and generic `password = value` assignments, judged for precision (entropy, placeholders,
//! hashes, references) and held as [`secrecy`] secrets so only redacted forms are ever shown.
//!
//! [`scan_text`] is the entry point; [`redact_text`] replaces every finding; [`SecretsIgnore`]
//! reads the team's list of accepted fingerprints. A line holding `teammem:allow` is skipped.

mod decode;
mod engine;
mod judge;
mod keywords;
mod plain;
mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;
use std::sync::OnceLock;

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};

use crate::domain::store::StoreError;

/// What replaces a secret in redacted text.
pub const REDACTED: &str = "[REDACTED_SECRET]";
/// The inline marker that silences findings on its line.
pub const ALLOW_MARKER: &str = "teammem:allow";
/// The file in the team folder listing accepted findings by fingerprint.
pub const IGNORE_FILE: &str = ".secretsignore";

/// A secret found in a text.
#[derive(Debug, Clone)]
pub struct SecretFinding {
    /// Stable rule id, e.g. `github-pat`.
    pub rule: &'static str,
    /// Human label, e.g. `GitHub personal access token`.
    pub label: &'static str,
    /// 1-based line of the secret's first char.
    pub line: usize,
    /// 1-based column of the secret's first char, counted in chars.
    pub column: usize,
    /// Start of the secret's byte range in the scanned text.
    pub start: usize,
    /// End of the secret's byte range in the scanned text.
    pub end: usize,
    /// The secret itself; never print it, show [`SecretFinding::redacted`].
    pub secret: SecretString,
}

impl SecretFinding {
    /// The secret as it may be shown: at most its first 4 and last 2 chars, and never more than
    /// a quarter of it, around `…`.
    pub fn redacted(&self) -> String {
        redact_value(self.secret.expose_secret())
    }

    /// The finding's fingerprint: the sha256 hex of the rule id, `:`, and the secret. It names a
    /// finding in `.secretsignore` without revealing the secret.
    pub fn fingerprint(&self) -> String {
        fingerprint(self.rule, self.secret.expose_secret())
    }
}

/// The fingerprint of `secret` found by rule `rule` (see `SecretFinding::fingerprint`).
pub fn fingerprint(rule: &str, secret: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(rule.as_bytes());
    hasher.update(b":");
    hasher.update(secret.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Shows at most the first 4 and last 2 chars of `value`, never more than a quarter of it.
fn redact_value(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let budget = chars.len() / 4;
    let head = budget.min(4);
    let tail = (budget - head).min(2);
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

fn scanner() -> &'static engine::Scanner {
    static SCANNER: OnceLock<engine::Scanner> = OnceLock::new();
    SCANNER.get_or_init(engine::Scanner::new)
}

/// Every secret in `text`, in order. Lines holding `teammem:allow` are skipped.
pub fn scan_text(text: &str) -> Vec<SecretFinding> {
    let raw = scanner().find(text);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    // Lines are counted incrementally: findings come sorted by position.
    let (mut pos, mut line, mut line_start) = (0usize, 1usize, 0usize);
    for f in raw {
        for (i, &b) in bytes[pos..f.start].iter().enumerate() {
            if b == b'\n' {
                line += 1;
                line_start = pos + i + 1;
            }
        }
        pos = f.start;
        let line_end = bytes[f.start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| f.start + n);
        if text[line_start..line_end].contains(ALLOW_MARKER) {
            continue;
        }
        let rule = &rules::RULES[f.rule];
        out.push(SecretFinding {
            rule: rule.id,
            label: rule.label,
            line,
            column: text[line_start..f.start].chars().count() + 1,
            start: f.start,
            end: f.end,
            secret: SecretString::from(text[f.start..f.end].to_string()),
        });
    }
    out
}

/// Decodes file bytes for scanning: UTF-16 with a byte-order mark is decoded, anything else is
/// read as UTF-8 with invalid bytes replaced. `None` when the bytes look binary (a NUL byte in
/// the first 8 KiB).
pub fn decode_text(bytes: &[u8]) -> Option<Cow<'_, str>> {
    let utf16 = |big: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if big {
                    u16::from_be_bytes([c[0], c[1]])
                } else {
                    u16::from_le_bytes([c[0], c[1]])
                }
            })
            .collect();
        Cow::Owned(String::from_utf16_lossy(&units))
    };
    match bytes {
        [0xFF, 0xFE, ..] => return Some(utf16(false)),
        [0xFE, 0xFF, ..] => return Some(utf16(true)),
        _ => {}
    }
    let head = &bytes[..bytes.len().min(8192)];
    // SIMD: the slice's own search is a plain loop, about a tenth of a scan's cost.
    if memchr::memchr(0, head).is_some() {
        return None;
    }
    // Validation alone is several times faster than the lossy decoder, and almost every file
    // is valid UTF-8.
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => Some(String::from_utf8_lossy(bytes)),
    }
}

/// Every secret in file bytes, or `None` when they look binary. Byte ranges refer to the
/// decoded text (see [`decode_text`]), which is the bytes themselves for valid UTF-8.
pub fn scan_bytes(bytes: &[u8]) -> Option<Vec<SecretFinding>> {
    decode_text(bytes).map(|text| scan_text(&text))
}

/// `text` with every finding replaced by `[REDACTED_SECRET]`, and every other place that
/// holds a found secret's value too: a password that also appears where no rule looks (a line
/// of its own, a sentence repeating it) must not survive the redaction of its assignment.
pub fn redact_text(text: &str) -> String {
    let findings = scan_text(text);
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(findings.len());
    for f in &findings {
        spans.push((f.start, f.end));
        let secret = f.secret.expose_secret();
        if secret.is_empty() {
            continue;
        }
        for at in memchr::memmem::find_iter(text.as_bytes(), secret.as_bytes()) {
            spans.push((at, at + secret.len()));
        }
    }
    spans.sort_unstable();
    // Overlapping spans become one; spans that only touch stay two, as findings side by side
    // always were.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    // Every span is on char boundaries: findings are, and a match of a whole UTF-8 string
    // starts and ends on one.
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (start, end) in merged {
        out.push_str(&text[pos..start]);
        out.push_str(REDACTED);
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

/// The `(id, label)` of every rule, in a stable order (for SARIF's rule list).
pub fn rules() -> impl Iterator<Item = (&'static str, &'static str)> {
    rules::RULES.iter().map(|r| (r.id, r.label))
}

/// The team's accepted findings: `.qwen/team-memory/.secretsignore`, one fingerprint a line,
/// `#` starting a comment.
#[derive(Debug, Clone, Default)]
pub struct SecretsIgnore {
    fingerprints: HashSet<String>,
}

impl SecretsIgnore {
    /// Reads the file's text; lines that are not a sha256 hex fingerprint are ignored.
    pub fn parse(text: &str) -> Self {
        let fingerprints = text
            .lines()
            .filter_map(|line| line.split('#').next()?.split_whitespace().next())
            .filter(|fp| fp.len() == 64 && fp.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_ascii_lowercase)
            .collect();
        SecretsIgnore { fingerprints }
    }

    /// Reads `<team_dir>/.secretsignore`; a missing file accepts nothing.
    pub fn load(team_dir: &Path) -> Result<Self, StoreError> {
        let path = team_dir.join(IGNORE_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(SecretsIgnore::parse(&String::from_utf8_lossy(&bytes))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SecretsIgnore::default()),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    /// Whether the finding was accepted.
    pub fn allows(&self, finding: &SecretFinding) -> bool {
        self.fingerprints.contains(&finding.fingerprint())
    }

    /// The findings that were not accepted.
    pub fn filter(&self, findings: Vec<SecretFinding>) -> Vec<SecretFinding> {
        if self.fingerprints.is_empty() {
            return findings;
        }
        findings.into_iter().filter(|f| !self.allows(f)).collect()
    }
}
