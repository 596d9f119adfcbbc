//! Judges of secrets given in prose: a password or a secret named in a sentence or a build
//! script, told apart from a sentence about passwords.

use super::JudgeContext;
use super::formats::DEFAULT_PASSWORDS;
use super::generic::{HASH_PREFIXES, is_call, is_generic_secret, is_standin};
use super::keys::{NOT_SECRET_KEYS, key_words};
use super::lookalike::{
    entropy, is_identifier_like, is_integrity, is_placeholder, is_reference, is_uuid, random_enough,
};

/// Words that make a quoted phrase under a password name a note or a label, not a
/// passphrase (`"not set"`, `"see the vault"`, `"Enter your password"`).
const NOT_PASSPHRASE_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passphrase",
    "secret",
    "token",
    "key",
    "your",
    "my",
    "our",
    "the",
    "enter",
    "type",
    "here",
    "not",
    "set",
    "none",
    "see",
    "ask",
    "use",
    "same",
    "as",
    "from",
    "in",
    "is",
    "are",
    "be",
    "must",
    "should",
    "required",
    "optional",
    "hidden",
    "empty",
    "blank",
    "default",
    "change",
    "please",
    "provided",
    "stored",
    "vault",
    "env",
    "environment",
    "with",
    "for",
    "of",
    "to",
    "at",
    "least",
    "characters",
    "chars",
    "invalid",
    "wrong",
    "incorrect",
    "confirm",
    "new",
    "old",
    "current",
    "forgot",
    "reset",
    "show",
    "hide",
    "this",
    "that",
];

/// Whether `value` is a passphrase of plain words (`open sesame`, `correct horse battery
/// staple`): two to six lowercase words of letters, one of four letters or more, none of
/// them a word of labels and notes.
fn is_passphrase(value: &str) -> bool {
    let words: Vec<&str> = value.split(' ').collect();
    (2..=6).contains(&words.len())
        && value.len() >= 10
        && words
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
        && words.iter().any(|w| w.len() >= 4)
        && !words.iter().any(|w| NOT_PASSPHRASE_WORDS.contains(w))
}

/// Words that, right after "password", make a phrase about passwords rather than one
/// (`the password manager is …`, `password policy: …`).
const NOT_PROSE_NOUNS: &[&str] = &[
    "manager",
    "managers",
    "policy",
    "reset",
    "hash",
    "hashes",
    "rotation",
    "field",
    "prompt",
    "change",
    "length",
    "strength",
    "rules",
    "requirements",
    "complexity",
    "vault",
    "store",
    "file",
    "hint",
    "expiry",
    "history",
    "recovery",
    "protected",
    "login",
    "less",
    "auth",
];

/// Judges a password given in prose or a build script ([`Check::Prose`]): a quoted literal
/// of 6 chars or more that is no stand-in, name or path, or a bare value that looks random.
pub(crate) fn is_prose_password(value: &str, context: &JudgeContext, min_entropy: f64) -> bool {
    // The rule's regex bounds no length (bounded repeats cost lazy-DFA states): a key runs
    // at most a few words to its verb, a value at most 200 chars.
    if context.key.len() > 64 || value.len() > 200 {
        return false;
    }
    // Prose joins its key to the verb with words; a key holding `=` ran into an assigned
    // value (`ChangePassword = "arn:aws:iam::…"` is no `password …: value`).
    if context.key.contains('=') {
        return false;
    }
    let second = context.key.split_whitespace().nth(1).unwrap_or("");
    if NOT_PROSE_NOUNS.contains(&second.to_ascii_lowercase().as_str())
        || NOT_SECRET_KEYS.contains(&second.to_ascii_lowercase().as_str())
    {
        return false;
    }
    // `passwordHint: "first pet name"`: a one-word key ends in what it names.
    if !context.key.contains(' ')
        && key_words(context.key).last().is_some_and(|w| {
            NOT_SECRET_KEYS.contains(&w.as_str()) || NOT_PROSE_NOUNS.contains(&w.as_str())
        })
    {
        return false;
    }
    if value.contains(' ') {
        return context.quoted && is_passphrase(value);
    }
    let value = value.trim_end_matches(['.', ':', '*', '!', '?']);
    let lower = value.to_ascii_lowercase();
    if value.len() < 6
        || is_placeholder(value)
        || is_reference(value)
        || is_call(value)
        || is_uuid(value)
        || value.contains("://")
        || is_integrity(value)
        || HASH_PREFIXES.iter().any(|p| lower.starts_with(p))
        || is_standin(&lower)
        || NOT_PASSPHRASE_WORDS.contains(&lower.as_str())
        || DEFAULT_PASSWORDS.contains(&lower.as_str())
    {
        return false;
    }
    if context.quoted {
        return !value.contains(['_', '/'])
            && !value.ends_with(".com")
            && value
                .bytes()
                .any(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && entropy(value) >= 2.0;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let has_symbol = value.bytes().any(|b| b.is_ascii_punctuation());
    !is_identifier_like(value)
        && value.len() >= 8
        && ((has_digit && has_letter) || (value.len() >= 10 && has_letter && has_symbol))
        && random_enough(value, min_entropy)
}

/// Words that, after a prose key phrase, make it name something about the secret rather than
/// the secret (`the token rotation policy is …`, `the api key name for prod is …`).
const PROSE_TAIL_NOUNS: &[&str] = &[
    "name",
    "names",
    "id",
    "ids",
    "url",
    "uri",
    "path",
    "file",
    "prefix",
    "suffix",
    "endpoint",
    "length",
    "format",
    "type",
    "expiry",
    "expires",
    "expiration",
    "hint",
    "fingerprint",
    "hash",
    "checksum",
    "digest",
    "header",
    "field",
    "version",
    "label",
    "size",
    "limit",
    "ttl",
    "lifetime",
    "count",
    "scope",
    "scopes",
    "parameter",
    "param",
    "variable",
    "var",
    "policy",
    "rotation",
    "manager",
    "store",
    "vault",
    "format",
    "owner",
    "issuer",
    "audience",
    "algorithm",
    "public",
    "pub",
    "placeholder",
    "example",
    "sample",
    "dummy",
    "fake",
    "test",
    "mock",
];

/// Judges a secret given in prose ([`Check::ProseSecret`]): the key phrase up to its last
/// secret word is judged like an assignment's key, the words after it must not name a
/// property of the secret, and the value must look random (it is judged as a bare value even
/// when quoted: prose quotes names and labels as often as secrets).
pub(crate) fn is_prose_secret(value: &str, context: &JudgeContext, min_entropy: f64) -> bool {
    // The rule's regex bounds no length (bounded repeats cost NFA and lazy-DFA states).
    if context.key.len() > 120
        || value.len() > 200
        || value.len() < 10
        || context
            .key
            .contains(['=', ':', '"', '\'', '`', '(', ')', '<', '>', '|'])
    {
        return false;
    }
    let phrase: Vec<&str> = context.key.split(' ').filter(|w| !w.is_empty()).collect();
    let secret_word = |w: &&str| {
        // A phrase may end its sentence (`… comme internal pat.`).
        let w = w
            .trim_end_matches(['.', ',', ';', '!', '?'])
            .to_ascii_lowercase();
        w == "pat"
            || ["pass", "pwd", "secret", "token", "key", "cred"]
                .iter()
                .any(|k| w.contains(k))
    };
    let Some(last) = phrase.iter().rposition(secret_word) else {
        return false;
    };
    if phrase.len() > last + 6 {
        return false;
    }
    let tail = phrase[last + 1..].join(" ");
    if key_words(&tail)
        .iter()
        .any(|w| PROSE_TAIL_NOUNS.contains(&w.as_str()) || NOT_PROSE_NOUNS.contains(&w.as_str()))
    {
        return false;
    }
    let head_end = phrase[..=last].iter().map(|w| w.len() + 1).sum::<usize>() - 1;
    let head = context.key.trim_start_matches(' ');
    let head = head.get(..head_end.min(head.len())).unwrap_or(head);
    if is_standin(&value.trim_end_matches(['.', '!', '?']).to_ascii_lowercase()) {
        return false;
    }
    let bare = JudgeContext {
        key: head,
        quoted: false,
        assigned: false,
        compared: false,
        ..*context
    };
    is_generic_secret(value, &bare, min_entropy)
}
