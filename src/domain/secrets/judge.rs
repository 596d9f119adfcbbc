//! Precision: deciding whether a regex match is a secret or a look-alike (a placeholder, a hash,
//! an environment reference, a redacted form, an identifier).

use crate::domain::secrets::rules::{Check, SecretRule};

mod formats;
mod generic;
mod keys;
mod lookalike;
mod prose;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use formats::base62_crc;
pub(crate) use formats::is_private_key;
use formats::{
    base62_checksum_ok, is_base64_jwt, is_base64_private_key, is_basic_auth, is_header_credential,
    is_url_password,
};
use generic::{is_call, is_generic_secret};
pub(crate) use lookalike::{continues, continues_before};
use lookalike::{entropy, is_placeholder};
use prose::{is_prose_password, is_prose_secret};

/// How sure a rule's match is a secret; `None` when it is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Confidence {
    /// A generic pattern judged by entropy.
    Generic,
    /// A provider's token shape.
    Shape,
    /// A token whose checksum verified.
    Verified,
}

/// What the judge knows about a match beyond its value.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JudgeContext<'a> {
    /// The assigned name (generic rule), the header's scheme, or empty.
    pub key: &'a str,
    /// The byte after the value.
    pub next: Option<u8>,
    /// The line before the match, at most 160 bytes (a vendor's name, an ARN).
    pub before: &'a str,
    /// Whether the value stands between a pair of quotes (a literal string in code or config).
    pub quoted: bool,
    /// Whether `=` assigns the value (`KEY=value`), not `:` or words.
    pub assigned: bool,
    /// Whether `==` or `!=` compares the key with the value (`password == "team10"`).
    pub compared: bool,
}

/// Judges one match of `rule`: `secret` is the captured value.
pub(crate) fn judge(rule: &SecretRule, secret: &str, context: &JudgeContext) -> Option<Confidence> {
    // Plain words in plain prose (no quote, no `=`, no mark after them) are not a secret,
    // except where a rule says they may be one; the keyword search skips plain prose on this
    // ground (`plain.rs`).
    let plain_around = !context.quoted
        && !context.assigned
        && !context.compared
        && context
            .next
            .is_none_or(|b| b.is_ascii_alphabetic() || b" \t\n\r.,".contains(&b));
    if !rule.plain_words && plain_around && super::plain::is_plain(secret) {
        return None;
    }
    let shape = |ok: bool| ok.then_some(Confidence::Shape);
    match rule.check {
        Check::Base62Crc if base62_checksum_ok(secret) => Some(Confidence::Verified),
        Check::Token | Check::Base62Crc => {
            shape(!is_placeholder(secret) && entropy(secret) >= rule.min_entropy)
        }
        Check::PrivateKey => shape(is_private_key(secret, rule.min_entropy)),
        Check::Base64Pem => shape(is_base64_private_key(secret, rule.min_entropy)),
        Check::Base64Jwt => shape(is_base64_jwt(secret, rule.min_entropy)),
        Check::UrlPassword => shape(is_url_password(secret, rule.min_entropy)),
        Check::UserPassword => shape(
            secret.len() >= 6 && !is_call(secret) && is_url_password(secret, rule.min_entropy),
        ),
        Check::BasicAuth => shape(is_basic_auth(secret)),
        Check::Header => shape(is_header_credential(context.key, secret, rule.min_entropy)),
        Check::Assignment | Check::Phrase => {
            is_generic_secret(secret, context, rule.min_entropy).then_some(Confidence::Generic)
        }
        Check::ProseSecret => {
            is_prose_secret(secret, context, rule.min_entropy).then_some(Confidence::Generic)
        }
        Check::Prose => {
            is_prose_password(secret, context, rule.min_entropy).then_some(Confidence::Generic)
        }
        Check::PaddedToken(run) => shape(
            secret
                .get(run..)
                .is_some_and(|rest| entropy(rest) >= rule.min_entropy),
        ),
    }
}
