//! The shape of a value: how random it is, where a token ends, and the look-alikes that are
//! not secrets (placeholders, references to a secret kept elsewhere, digests, UUIDs, names).

use crate::domain::secrets::rules::Tail;

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

/// Whether `value` is as random as a secret should be: its entropy reaches `min_entropy`, or,
/// for a value of 8 chars or more too short to reach it by chance, `log2(len) - 0.6` bits per
/// char. A value of `n` chars has at most `log2(n)` bits per char (all chars distinct), so a
/// fixed 3.0 refuses about 40% of random 8- or 9-char passwords; the shortened bar under 1%.
pub(crate) fn random_enough(value: &str, min_entropy: f64) -> bool {
    let bar = if value.len() >= 8 {
        min_entropy.min((value.len() as f64).log2() - 0.6)
    } else {
        min_entropy
    };
    entropy(value) >= bar
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
    if PLACEHOLDER_PARTS.iter().any(found) || is_angle_placeholder(s) {
        return true;
    }
    if s.len() > 2 && s.starts_with('%') && s.ends_with('%') {
        return true;
    }
    longest_run(s) >= 6 || is_keyboard_sequence(lower.as_bytes())
}

/// Whether `b` (lowercased) holds a stand-in run typed in order: 7 chars that each step by one the same
/// way (`abcdefg`, `1234567`, `gfedcba`), or 8 whose every other char does (`a1b2c3d4`,
/// `d4c3b2a1`). Random tokens hold neither (about one in 10^5 for a 40-char hex token, far
/// fewer for base62).
fn is_keyboard_sequence(b: &[u8]) -> bool {
    let steps = |gap: usize, need: usize, up: bool| {
        let mut run = 0;
        for i in gap..b.len() {
            let (x, y) = if up {
                (b[i - gap], b[i])
            } else {
                (b[i], b[i - gap])
            };
            let step =
                x.is_ascii_alphanumeric() && y.is_ascii_alphanumeric() && y.wrapping_sub(x) == 1;
            run = if step { run + 1 } else { 0 };
            if run + gap >= need {
                return true;
            }
        }
        false
    };
    [true, false]
        .into_iter()
        .any(|up| steps(1, 7, up) || steps(2, 8, up))
}

/// Whether `s` holds a `<name>` stand-in (`<your-token>`, `<PASSWORD>`) or starts or ends
/// with an angle bracket; a random password may hold `<` or `>` anywhere else.
fn is_angle_placeholder(s: &str) -> bool {
    if s.starts_with('<') || s.ends_with('>') {
        return true;
    }
    s.find('<').is_some_and(|open| {
        s[open + 1..].find('>').is_some_and(|len| {
            let inner = &s[open + 1..open + 1 + len];
            !inner.is_empty()
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b' ' | b'.'))
        })
    })
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
    let s = s.trim_matches('\'');
    let lower = lower.trim_matches('\'');
    let bytes = s.as_bytes();
    let shell_var = bytes.first() == Some(&b'$') && is_shell_variable(&s[1..]);
    let windows_var = bytes.len() > 2
        && bytes[0] == b'%'
        && bytes[bytes.len() - 1] == b'%'
        && bytes[1..bytes.len() - 1]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_');
    shell_var || windows_var || STARTS.iter().any(|p| lower.starts_with(p))
}

/// Whether `rest` (what follows a `$`) reads as a shell variable: `{…}`, `(…)`, or a name
/// in one case or without digits (`DB_PASSWORD`, `token`, `$ESXipass`) followed by nothing
/// or a path. A password that only starts with `$` (`$g#=yx0o…`, `$lCdHc25Winter`) has
/// symbols, or mixed case and digits, after it.
fn is_shell_variable(rest: &str) -> bool {
    if rest.starts_with(['{', '(']) {
        return true;
    }
    let name_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let (name, after) = rest.split_at(name_len);
    let first_ok = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let one_case = !(name.bytes().any(|b| b.is_ascii_uppercase())
        && name.bytes().any(|b| b.is_ascii_lowercase()));
    let path_after = after.is_empty()
        || (after.starts_with(['/', '.', ':', '}', '"', '\''])
            && after
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-:}\"'$#?&=".contains(&b)));
    let has_digit = name.bytes().any(|b| b.is_ascii_digit());
    first_ok && (one_case || !has_digit || name.len() < 8) && path_after
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
pub(super) fn is_identifier_like(s: &str) -> bool {
    // Base64 may start with `/` too: a path holds no `+` and ends in no `=`.
    let base64ish = s.contains('+') || s.ends_with('=');
    // A leading `/` before one long random run is base64 (`/fklKAtMMo6cYUMl46pclEDr…`).
    let random_run = s.len() >= 30
        && !s.as_bytes()[1..]
            .iter()
            .any(|b| matches!(b, b'/' | b'.' | b'_'))
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase());
    if (s.starts_with('/') || s.starts_with("./") || s.starts_with("~/") || s.starts_with("../"))
        && !base64ish
        && !random_run
    {
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
    // A short part beside a word is an abbreviation or a version (`ConnectionString_B2B`,
    // `deploy-key-v2`, `S3_Bucket`), not a run of random chars.
    let short = |p: &&str| p.len() <= 3 && p.bytes().all(|b| b.is_ascii_alphanumeric());
    let long_word = parts
        .iter()
        .any(|p| p.len() >= 4 && wordish(p) && p.bytes().all(|b| b.is_ascii_alphabetic()));
    parts.iter().all(|p| wordish(p) || (long_word && short(p)))
}

/// `getAccessToken`, `MyServiceName`: letters only, each capital starts a lowercase run of 2+
/// (a last lone capital is a variant's letter: `BatchedProviderA`).
fn is_camel_words(s: &str) -> bool {
    let mut bytes = s.as_bytes();
    if let [head @ .., before, last] = bytes
        && last.is_ascii_uppercase()
        && before.is_ascii_lowercase()
    {
        bytes = &bytes[..head.len() + 1];
    }
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
