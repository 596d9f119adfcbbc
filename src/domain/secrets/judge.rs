//! Precision: deciding whether a regex match is a secret or a look-alike (a placeholder, a hash,
//! an environment reference, a redacted form, an identifier).

use super::rules::{Check, Rule, Tail};

/// Shannon entropy of `s` in bits per char.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut total = 0u32;
    for b in s.bytes() {
        counts[b as usize] += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / total;
            -p * p.log2()
        })
        .sum()
}

/// Whether the byte before a token would continue it (`=` is only padding at the end).
pub(crate) fn continues_before(tail: Tail, b: u8) -> bool {
    b != b'=' && continues(tail, b)
}

/// Whether the byte continues a token of the given class.
pub(crate) fn continues(tail: Tail, b: u8) -> bool {
    match tail {
        Tail::Alnum => b.is_ascii_alphanumeric(),
        Tail::Url => b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
        Tail::Base64 => b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=',
        Tail::Free => false,
    }
}

/// Words and marks that show a value is a stand-in, not a secret.
const PLACEHOLDER_PARTS: &[&str] = &[
    "xxxx",
    "****",
    "....",
    "...",
    "\u{2026}",
    "•••",
    "example",
    "placeholder",
    "your",
    "changeme",
    "change_me",
    "redacted",
    "dummy",
    "sample",
    "insert",
    "replace",
    "fake",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "0123456789",
    "1234567890",
    "abcdefghij",
];

/// Whether `s` is a placeholder, a documentation example or a redacted form.
pub(crate) fn is_placeholder(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    // Short marks count only in one case (`xxxx`, `XXXX`): random bodies hold `eXxX` now and then.
    let found = |p: &&str| {
        if p.len() > 5 {
            lower.contains(p)
        } else {
            s.contains(p) || s.contains(&p.to_ascii_uppercase())
        }
    };
    if PLACEHOLDER_PARTS.iter().any(found) {
        return true;
    }
    if s.len() > 2 && s.starts_with('%') && s.ends_with('%') {
        return true;
    }
    longest_run(s) >= 6
}

/// The longest run of one repeated char.
fn longest_run(s: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    let mut last = None;
    for c in s.chars() {
        if Some(c) == last {
            run += 1;
        } else {
            run = 1;
            last = Some(c);
        }
        best = best.max(run);
    }
    best
}

/// Whether `s` refers to a secret kept elsewhere (an environment variable, a secret manager)
/// instead of holding one.
pub(crate) fn is_reference(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    const STARTS: &[&str] = &[
        "os.environ",
        "os.getenv",
        "getenv",
        "process.env",
        "env.",
        "env(",
        "env[",
        "secrets.",
        "vars.",
        "vault:",
        "ref+",
        "op://",
        "arn:",
        "projects/",
        "!vault",
        "system.getenv",
        "std::env",
        "import.meta.env",
        "config.",
        "settings.",
        "self.",
        "this.",
        "args.",
        "params.",
        "request.",
        "req.",
        "ctx.",
        "context.",
    ];
    let bytes = s.as_bytes();
    let shell_var = bytes.first() == Some(&b'$')
        && bytes
            .get(1)
            .is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'{' | b'('));
    let windows_var = bytes.len() > 2
        && bytes[0] == b'%'
        && bytes[bytes.len() - 1] == b'%'
        && bytes[1..bytes.len() - 1]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_');
    shell_var || windows_var || STARTS.iter().any(|p| lower.starts_with(p))
}

/// Whether `s` is an integrity or digest string (`sha512-…`, `sha256:…`).
pub(crate) fn is_integrity(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    [
        "sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha512:", "md5:", "md5-",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

/// Whether `s` is a UUID (8-4-4-4-12 hex).
pub(crate) fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `s` reads like a name rather than a random value: words joined by `-`, `_` or `.`
/// (`prod-db-credentials-v2`, `token.json`), camelCase words, or a file path.
fn is_identifier_like(s: &str) -> bool {
    if s.starts_with('/') || s.starts_with("./") || s.starts_with("~/") || s.starts_with("../") {
        return true;
    }
    let parts: Vec<&str> = s
        .split(['-', '_', '.', '/', ':'])
        .filter(|p| !p.is_empty())
        .collect();
    let wordish = |p: &&str| {
        let letters = p.trim_end_matches(|c: char| c.is_ascii_digit());
        (letters.len() + 2 >= p.len())
            && !letters.is_empty()
            && letters.bytes().all(|b| b.is_ascii_alphabetic())
            && (letters.bytes().all(|b| b.is_ascii_lowercase())
                || letters.bytes().all(|b| b.is_ascii_uppercase())
                || is_camel_words(letters))
    };
    parts.iter().all(wordish)
}

/// `getAccessToken`, `MyServiceName`: letters only, each capital starts a lowercase run of 2+.
fn is_camel_words(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b.is_ascii_uppercase() {
            if i > 0 && run < 2 {
                return false;
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    run >= 2
}

/// Key names that hold something about a secret, not the secret itself.
const NOT_SECRET_KEYS: &[&str] = &[
    "name",
    "id",
    "url",
    "uri",
    "path",
    "file",
    "dir",
    "len",
    "length",
    "count",
    "type",
    "format",
    "env",
    "var",
    "ttl",
    "expiry",
    "expires",
    "header",
    "field",
    "param",
    "prefix",
    "endpoint",
    "size",
    "limit",
    "mode",
    "policy",
    "version",
    "hash",
    "digest",
    "sha",
    "checksum",
    "ref",
    "arn",
    "key_id",
    "keyid",
    "label",
    "kind",
    "store",
    "manager",
    "provider",
    "source",
    "location",
    "rotation",
    "max",
    "min",
    "usage",
    "tokens",
    "secrets",
    "passwords",
    "credentials",
    "public",
];

/// Judges a generic `key = value` assignment: `key` is the assigned name, `next` the byte after
/// the value.
pub(crate) fn is_generic_secret(
    key: &str,
    value: &str,
    next: Option<u8>,
    min_entropy: f64,
) -> bool {
    let key = key.to_ascii_lowercase();
    let last_part = key.rsplit(['_', '-', '.']).next().unwrap_or(&key);
    if NOT_SECRET_KEYS.contains(&last_part)
        || key.contains("public")
        || key.contains("pubkey")
        || key.contains("publishable")
    {
        return false;
    }
    if matches!(next, Some(b'(' | b'.' | b'[' | b'<')) {
        return false;
    }
    let value = value.trim_end_matches(['.', ':', '*', '!', '?']);
    if value.len() < 8
        || is_placeholder(value)
        || is_reference(value)
        || value.contains("://")
        || is_integrity(value)
        || is_uuid(value)
        || (value.bytes().all(|b| b.is_ascii_hexdigit()) && names_a_digest(&key))
        || is_identifier_like(value)
    {
        return false;
    }
    let lower_value = value.to_ascii_lowercase();
    if ["true", "false", "null", "none", "nil", "undefined"].contains(&lower_value.as_str()) {
        return false;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let has_upper = value.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = value.bytes().any(|b| b.is_ascii_lowercase());
    let mixed = (has_digit && has_letter) || (value.len() >= 16 && has_upper && has_lower);
    mixed && entropy(value) >= min_entropy
}

/// Whether a key names a digest of something (`password_sha256`, `token_digest`, `commit`).
fn names_a_digest(key: &str) -> bool {
    [
        "sha",
        "hash",
        "digest",
        "checksum",
        "commit",
        "etag",
        "integrity",
        "md5",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// Common stand-in passwords in connection strings of examples and local setups.
const DEFAULT_PASSWORDS: &[&str] = &[
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
        || entropy(value) < min_entropy)
}

/// Judges a private key block: a real body has no placeholder marks and high entropy.
pub(crate) fn is_private_key(block: &str, min_entropy: f64) -> bool {
    let body: String = block
        .lines()
        .filter(|l| !l.starts_with("-----") && !l.contains(':'))
        .collect();
    let body = body.trim();
    body.len() >= 64 && !is_placeholder(body) && entropy(body) >= min_entropy
}

/// The base62 alphabet of GitHub's and npm's token checksums.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE), bit by bit: tokens are short, so a table buys nothing.
fn crc32(bytes: &[u8]) -> u32 {
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

/// Judges one match of `rule`: `secret` is the captured value, `key` the assigned name for the
/// generic rule, `next` the byte after the secret.
pub(crate) fn judge(rule: &Rule, secret: &str, key: &str, next: Option<u8>) -> Option<Confidence> {
    match rule.check {
        Check::Base62Crc if base62_checksum_ok(secret) => Some(Confidence::Verified),
        Check::Token | Check::Base62Crc => (!is_placeholder(secret)
            && entropy(secret) >= rule.min_entropy)
            .then_some(Confidence::Shape),
        Check::PrivateKey => is_private_key(secret, rule.min_entropy).then_some(Confidence::Shape),
        Check::UrlPassword => {
            is_url_password(secret, rule.min_entropy).then_some(Confidence::Shape)
        }
        Check::Assignment => {
            is_generic_secret(key, secret, next, rule.min_entropy).then_some(Confidence::Generic)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_uniform_and_constant_strings() {
        assert_eq!(entropy("aaaa"), 0.0);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
        assert_eq!(entropy(""), 0.0);
    }

    #[test]
    fn checksum_round_trips() {
        let random = "zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ";
        let token = format!("ghp_{random}{}", base62_crc(random));
        assert!(base62_checksum_ok(&token));
        let mut broken = token.clone();
        broken.replace_range(10..11, "Q");
        assert!(!base62_checksum_ok(&broken));
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn identifiers_are_not_random_values() {
        for id in [
            "prod-db-credentials-v2",
            "token.json",
            "getAccessToken",
            "MY_SERVICE_KEY",
            "/etc/secret/file",
        ] {
            assert!(is_identifier_like(id), "{id}");
        }
        for random in ["s3cR3t-V4lue-9xQ", "Zx81kPq0LmN3vB7w"] {
            assert!(!is_identifier_like(random), "{random}");
        }
    }
}
