//! Judges of credentials with a structure to check: URL passwords, private key blocks,
//! base64-wrapped keys and JWTs, basic auth, `Authorization` headers, and the base62 checksum
//! of GitHub and npm tokens.

use super::lookalike::{
    entropy, is_identifier_like, is_placeholder, is_reference, is_uuid, random_enough,
};
use crate::domain::secrets::decode::{self, OpenSshKey};

/// Common stand-in passwords in connection strings of examples and local setups.
pub(super) const DEFAULT_PASSWORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "changeme",
    "root",
    "admin",
    "user",
    "postgres",
    "mysql",
    "guest",
    "test",
    "x-oauth-basic",
    "token",
    "pat",
    "redis",
    "mongo",
    "example",
];

/// Judges the password of `scheme://user:password@host`.
pub(crate) fn is_url_password(value: &str, min_entropy: f64) -> bool {
    let lower = value.to_ascii_lowercase();
    !(DEFAULT_PASSWORDS.contains(&lower.as_str())
        || is_placeholder(value)
        || is_reference(value)
        || value.bytes().all(|b| b.is_ascii_digit())
        || !random_enough(value, min_entropy))
}

/// Marks that show a key block's body is a stand-in (`...`, `<key>`, `xxxx`). A real body
/// may hold long runs of `A` (zero bytes), so the generic run check does not apply, and `x`
/// counts only in one case: a random base64 body of 1,600 chars holds a mixed-case `xXXx`
/// about once in 700 keys.
fn is_key_placeholder(body: &str) -> bool {
    if body.contains("xxxx") || body.contains("XXXX") {
        return true;
    }
    let lower = body.to_ascii_lowercase();
    [
        "...",
        "\u{2026}",
        "<",
        ">",
        "{{",
        "${",
        "example",
        "redacted",
        "placeholder",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Judges a private key block: its body (quoting, indentation and `\n` escapes removed) must
/// be a real one. An OpenSSH block is decoded: an unencrypted `openssh-key-v1` container is a
/// secret whatever its entropy (its zero bytes lower it), a passphrase-protected one is not;
/// a body that does not decode is judged by entropy, like any other block.
pub(crate) fn is_private_key(block: &str, min_entropy: f64) -> bool {
    let body = decode::key_block_body(block);
    if body.len() < 64 || is_key_placeholder(&body) {
        return false;
    }
    if block.contains("OPENSSH PRIVATE KEY") {
        let container = decode::base64(body.as_bytes()).and_then(|d| decode::openssh_key(&d));
        if let Some(kind) = container {
            return kind == OpenSshKey::Unencrypted;
        }
    }
    entropy(&body) >= min_entropy
}

/// Judges base64 that may hold a PEM private key block (`client-key-data: LS0tLS1CRUdJTi…`).
pub(crate) fn is_base64_private_key(value: &str, min_entropy: f64) -> bool {
    let Some(decoded) = decode::base64(value.as_bytes()) else {
        return false;
    };
    let text = String::from_utf8_lossy(&decoded);
    text.contains("PRIVATE KEY") && is_private_key(&text, min_entropy)
}

/// Judges base64 that may hold a JSON Web Token: it must decode to `eyJ….eyJ….…`, three
/// base64url parts whose signature is not a stand-in.
pub(crate) fn is_base64_jwt(value: &str, min_entropy: f64) -> bool {
    let Some(decoded) = decode::base64(value.as_bytes()) else {
        return false;
    };
    let Ok(token) = std::str::from_utf8(&decoded) else {
        return false;
    };
    let token = token.trim_end();
    let parts: Vec<&str> = token.split('.').collect();
    let url = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[1].starts_with("eyJ")
        && parts.iter().all(|p| url(p))
        && parts[2].len() >= 16
        && !is_placeholder(parts[2])
        && entropy(parts[2]) >= min_entropy - 0.5
}

/// Judges base64 of `user:password`: it must decode, and the password must not be a stand-in.
pub(crate) fn is_basic_auth(value: &str) -> bool {
    decode::basic_credentials(value.as_bytes()).is_some_and(|password| {
        let lower = password.to_ascii_lowercase();
        !(DEFAULT_PASSWORDS.contains(&lower.as_str())
            || is_placeholder(&password)
            || is_reference(&password))
    })
}

/// Judges the credentials of an `Authorization` header; `scheme` is `Bearer`, `Basic`, `SSWS`,
/// … or empty when the header holds a bare token.
pub(crate) fn is_header_credential(scheme: &str, value: &str, min_entropy: f64) -> bool {
    let value = value.trim_end_matches(['.', ',', ';', ')']);
    if scheme.eq_ignore_ascii_case("basic") {
        return is_basic_auth(value);
    }
    let min_len = if scheme.is_empty() { 16 } else { 12 };
    if value.len() < min_len
        || is_placeholder(value)
        || is_reference(value)
        || is_identifier_like(value)
        || is_uuid(value) && scheme.is_empty()
    {
        return false;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let has_upper = value.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = value.bytes().any(|b| b.is_ascii_lowercase());
    ((has_digit && has_letter) || (value.len() >= 20 && has_upper && has_lower))
        && entropy(value) >= min_entropy
}

/// The base62 alphabet of GitHub's and npm's token checksums.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE), bit by bit: tokens are short, so a table buys nothing.
pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// The 6-char base62 checksum GitHub and npm append to a token's 30 random chars.
pub(crate) fn base62_crc(random: &str) -> String {
    let mut n = crc32(random.as_bytes());
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a `ghp_`/`npm_`-style token (4-char prefix, 30 random, 6 checksum) checks out.
pub(crate) fn base62_checksum_ok(token: &str) -> bool {
    let Some(rest) = token.get(4..) else {
        return false;
    };
    if rest.len() != 36 || !rest.is_ascii() {
        return false;
    }
    let (random, sum) = rest.split_at(30);
    base62_crc(random) == sum
}
