//! Trust risks in team memories: text that an agent would read as instructions it should not
//! follow, or that a human reviewer cannot see.
//!
//! A team memory is loaded into every teammate's agent context, so a pull request that adds one
//! can steer many agents at once. These detectors look for the ways that is done: invisible
//! characters, text addressing the model to drop its instructions, fake chat-role markers,
//! instructions hidden in HTML comments, requests to run risky commands, fetch remote
//! instructions or send data out, long encoded blobs, and links to unexpected hosts. Ordinary
//! imperative prose ("always run the tests") is what memories are for and is not flagged.

use std::borrow::Cow;

use regex::bytes::Regex;

use super::normalise;
use crate::domain::memory::line_col;
use crate::domain::memory_index::is_hidden;

mod decode;
mod hidden;
mod links;
mod patterns;
mod triggers;
mod warnings;

pub use hidden::is_invisible;
pub use links::{host_allowed, host_of};

use decode::{base64_blobs, encoded_payloads};
use hidden::{hidden_characters, hidden_comments};
use links::links;
use patterns::{FEW_PATTERNS, OWNERS, PATTERN_RULES, PATTERN_SET, compiled, pattern_set};
use triggers::TRIGGERS;
use warnings::downgrade;

/// Invisible or direction-changing characters (bidi controls, zero-width, Unicode tags).
pub const HIDDEN_CHARACTER: &str = "trust-hidden-character";
/// Text telling the model to ignore, override or hide from its instructions or the user.
pub const INSTRUCTION_OVERRIDE: &str = "trust-instruction-override";
/// Fake chat-template or role markers (`<|im_start|>`, `[INST]`, `SYSTEM:`).
pub const ROLE_MARKER: &str = "trust-role-marker";
/// An HTML comment (invisible once rendered) that holds instructions.
pub const HIDDEN_COMMENT: &str = "trust-hidden-comment";
/// A request to run a risky command (pipe a download to a shell, destructive, reverse shell).
pub const COMMAND: &str = "trust-command";
/// A request to fetch a URL and follow what it says.
pub const REMOTE_INSTRUCTIONS: &str = "trust-remote-instructions";
/// A request to send secrets, code or the environment out of the machine.
pub const EXFILTRATION: &str = "trust-exfiltration";
/// A long base64 run that can hide a payload from a reviewer.
pub const BASE64_BLOB: &str = "trust-base64-blob";
/// A link to a host outside the allow-list, or a `javascript:`/`data:` link.
pub const EXTERNAL_LINK: &str = "trust-external-link";
/// A jailbreak framing: a banner of new instructions, a "developer mode" switched on, a
/// forgotten instruction, a special case for summaries, a fake configuration, a role to play.
pub const JAILBREAK: &str = "trust-jailbreak";
/// Encoded text (base64, rot13, hex) with an order to decode it and obey.
pub const ENCODED_PAYLOAD: &str = "trust-encoded-payload";
/// A risk that a memory quotes as an example (in code, a quote or a block quote, beside words
/// like "injection" or "attack"): reported, delivered inert, not withheld.
pub const QUOTED_ATTACK: &str = "trust-quoted-attack";
/// A download piped into a shell from a known installer's host (`sh.rustup.rs`), or from an
/// allowed host in a fenced block that says how to install: reported, not withheld.
pub const KNOWN_INSTALLER: &str = "trust-known-installer";

/// Hosts linked to without a warning when no allow-list is configured. An entry `*.example.com`
/// also allows every subdomain; a plain entry allows that host only.
pub const DEFAULT_ALLOWED_HOSTS: &[&str] = &[
    "github.com",
    "gitlab.com",
    "docs.rs",
    "crates.io",
    "doc.rust-lang.org",
    "developer.mozilla.org",
    "localhost",
    "127.0.0.1",
];

/// Base64 runs at least this long are reported.
pub const BASE64_MIN_CHARS: usize = 100;

/// One trust risk found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// The rule id (one of the constants of this module).
    pub rule: &'static str,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What was found, with a short, printable excerpt.
    pub message: String,
    /// The matched text (for a stable fingerprint; never printed as is).
    pub matched: String,
}

/// Finds every trust risk in `text`. `allowed_hosts` is the link allow-list.
///
/// The patterns run on the text and on its copy for matching ([`normalise::for_matching`]:
/// full-width letters, homoglyphs, words joined by `_` or a no-break space read as plain
/// words), so a spelling chosen to slip past them is found; a finding from the copy keeps
/// the original's line. A risk quoted as an example, or a known installer, is then
/// reported under its own warning rule ([`downgrade`]).
pub fn scan(text: &str, allowed_hosts: &[String]) -> Vec<Risk> {
    let mut risks = scan_once(text, allowed_hosts);
    if let Cow::Owned(copy) = normalise::for_matching(text) {
        // Links, blobs and hidden characters are judged on the bytes an agent receives.
        let found: Vec<Risk> = scan_once(&copy, &[])
            .into_iter()
            .filter(|r| PATTERN_RULES.iter().any(|p| p.0 == r.rule) || r.rule == HIDDEN_COMMENT)
            .filter(|r| !risks.iter().any(|k| k.rule == r.rule && k.line == r.line))
            .collect();
        risks.extend(found);
        risks.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
    }
    encoded_payloads(text, &mut risks);
    downgrade(text, allowed_hosts, &mut risks);
    risks
}

/// [`scan_with`] through the trigger words: the patterns `text` can match.
fn scan_once(text: &str, allowed_hosts: &[String]) -> Vec<Risk> {
    // Most memories hold none of the words a pattern needs: those cost one pass of the word
    // automaton and no pattern at all. The few patterns a text can match run on their own;
    // the set of all of them (a costly build) only runs once a text could match many.
    let wanted = match &*TRIGGERS {
        Some(triggers) => triggers.candidates(text.as_bytes()),
        None => u128::MAX,
    };
    let one_by_one = wanted.count_ones() <= FEW_PATTERNS && PATTERN_SET.get().is_none();
    scan_with(text, allowed_hosts, wanted, one_by_one)
}

/// [`scan`], running the patterns whose bit is set in `wanted` one by one, or (when not
/// `one_by_one`) every pattern the set finds, `wanted` or not (a superset: the same risks).
fn scan_with(text: &str, allowed_hosts: &[String], wanted: u128, one_by_one: bool) -> Vec<Risk> {
    let mut risks = Vec::new();
    hidden_characters(text, &mut risks);
    let mut run = |rule: &'static str, pattern: &Regex, what: &str| {
        for m in pattern.find_iter(text.as_bytes()) {
            let matched = String::from_utf8_lossy(m.as_bytes());
            risks.push(risk(text, rule, m.start(), &matched, what));
        }
    };
    let mut run_one = |r: usize, p: usize| {
        let (rule, _, what) = PATTERN_RULES[r];
        if let Some(pattern) = compiled(r, p) {
            run(rule, pattern, what);
        }
    };
    let set = match (wanted, one_by_one) {
        (0, _) | (_, true) => None,
        _ => pattern_set(),
    };
    match set {
        // One pass over the text says which patterns match; only those run on their own.
        Some(set) => {
            let mut matched = regex_automata::PatternSet::new(set.pattern_len());
            set.which_overlapping_matches(
                &regex_automata::Input::new(text.as_bytes()),
                &mut matched,
            );
            for at in matched.iter() {
                let (r, p) = OWNERS[at.as_usize()];
                run_one(r, p);
            }
        }
        None => {
            for (at, &(r, p)) in OWNERS.iter().enumerate() {
                if wanted & (1 << at) != 0 {
                    run_one(r, p);
                }
            }
        }
    }
    hidden_comments(text, &mut risks);
    base64_blobs(text, &mut risks);
    links(text, allowed_hosts, &mut risks);
    risks.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
    // Two patterns of one rule may match at the same spot; one report is enough.
    risks.dedup_by(|a, b| a.rule == b.rule && a.line == b.line);
    risks
}

fn risk(text: &str, rule: &'static str, start: usize, matched: &str, what: &str) -> Risk {
    let (line, column) = line_col(text.as_bytes(), start);
    Risk {
        rule,
        line,
        column,
        message: format!("{what}: \"{}\"", excerpt(matched)),
        matched: matched.to_string(),
    }
}

/// A short one-line rendering of matched text: white space folded, hidden and control
/// characters shown as `<U+XXXX>`, cut at 60 characters.
fn excerpt(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    for (count, c) in folded.chars().enumerate() {
        if count >= 60 {
            out.push('…');
            break;
        }
        if c.is_control() || is_hidden(c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
