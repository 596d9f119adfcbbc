//! The judge of a generic `key = value` assignment, with the tests of the value it uses
//! (public prefixes, stand-in values, password hashes, calls, paths, routes, selectors).

use super::JudgeContext;
use super::formats::DEFAULT_PASSWORDS;
use super::keys::{
    KEY_QUALIFIERS, KeyKind, NOT_SECRET_KEYS, UUID_KEY_VENDORS, declared_name, key_kind, key_words,
    names_password,
};
use super::lookalike::{
    entropy, is_identifier_like, is_integrity, is_placeholder, is_reference, is_uuid, random_enough,
};

/// Prefixes of values that are public by design (publishable keys, project keys sent to
/// browsers), whatever key name they are assigned to.
const PUBLIC_PREFIXES: &[&str] = &[
    "pk_live_",
    "pk_test_",
    "pk.eyj",
    "phc_",
    "sb_publishable_",
    "pk-lf-",
    "pub-c-",
    "sub-c-",
    "mob-",
    "next_public_",
    "rzp_live_",
    "rzp_test_",
];

/// Values that name a kind of value rather than hold one (`password: "required"`).
const STANDIN_VALUES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "changeme",
    "required",
    "optional",
    "string",
    "hidden",
    "masked",
    "sensitive",
    "encrypted",
    "redacted",
    "unknown",
    "default",
    "empty",
    "nothing",
    "admin",
    "administrator",
    "root",
    "guest",
    "user",
    "username",
    "test",
    "testing",
    "tbd",
    "todo",
    "notset",
    "not-set",
    "unset",
    "foobar",
    "value",
    "mypassword",
    "yourpassword",
    "token",
    "apikey",
    "api_key",
    "mysecret",
    "my-secret",
    "supersecret",
    "super-secret",
    "disabled",
    "enabled",
    "inherit",
    "inherited",
    "generated",
    "automatic",
    "managed",
    "external",
    "keychain",
    "keyring",
    "environment",
    "prompt",
    "stdin",
    "rotating",
    "expired",
    "revoked",
    "bearer",
    "basic",
    "plaintext",
    "cleartext",
    "anonymous",
    "whatever",
    "sometoken",
    "somesecret",
    "secretkey",
    "secret_key",
    "access_token",
    "accesstoken",
    // Databases' image defaults (`POSTGRES_PASSWORD=postgres` in a compose file for tests).
    "postgres",
    "mysql",
    "mariadb",
    "mongo",
    "redis",
];

/// Whether `lower` (a lowercased value) is a stand-in, also when written in leetspeak
/// (`super$ecret`, `P@ssw0rd!`, `$uper-$ecret`): marks around it are dropped, the usual
/// substitutions undone and separators removed before the [`STANDIN_VALUES`] and
/// [`DEFAULT_PASSWORDS`] lists are asked. A chosen password that is a word with a mark
/// (`Prestigitariu$`, `busybox@`) is no stand-in: only the lists' words are.
pub(super) fn is_standin(lower: &str) -> bool {
    if STANDIN_VALUES.contains(&lower) || DEFAULT_PASSWORDS.contains(&lower) {
        return true;
    }
    let trimmed = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '$' && c != '@');
    let plain: String = trimmed
        .trim_start_matches('$')
        .chars()
        .filter_map(|c| match c {
            '$' | '5' => Some('s'),
            '@' | '4' => Some('a'),
            '0' => Some('o'),
            '3' => Some('e'),
            '1' | '!' => Some('i'),
            '7' => Some('t'),
            '-' | '_' | '.' | ' ' => None,
            c if c.is_ascii_alphabetic() => Some(c),
            _ => Some('#'),
        })
        .collect();
    let plain = plain.trim_end_matches('i');
    plain != lower && (STANDIN_VALUES.contains(&plain) || DEFAULT_PASSWORDS.contains(&plain))
}

/// Prefixes of password hashes (bcrypt, crypt(3), argon2, LDAP, Django).
pub(super) const HASH_PREFIXES: &[&str] = &[
    "$2a$",
    "$2b$",
    "$2y$",
    "$1$",
    "$5$",
    "$6$",
    "$apr1$",
    "$argon2",
    "$scrypt$",
    "$pbkdf2",
    "{ssha}",
    "{sha}",
    "{ssha512}",
    "pbkdf2_sha256$",
    "sha1$",
    "bcrypt$",
    "argon2$",
];

/// Whether the line before a match ends inside an ARN (`arn:aws:secretsmanager:…:secret:`),
/// whose parts look like key names without being any.
fn in_arn(before: &str) -> bool {
    let token = before
        .rsplit(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '=' | '(' | ','))
        .next()
        .unwrap_or("");
    token.to_ascii_lowercase().starts_with("arn:")
}

/// Whether `value` reads as a function or method call (`getPassword()`, `env("X")`): a
/// name, then arguments up to the end (`po8(5%cb…)hfq…` is a password with parentheses).
pub(super) fn is_call(value: &str) -> bool {
    value.find('(').is_some_and(|open| {
        // A Rust macro's `!` stands before its parenthesis (`parse_quote!(…)`).
        let name = value[..open].strip_suffix('!').unwrap_or(&value[..open]);
        // An open call cut at a space holds arguments (`getPassword(user`), not the `^`, `$`,
        // `%`, `@` or `~` of a random value (`to(eg-ugl16^678y1$by(shm!!*2…`).
        let open_call = !value[open..].contains(')')
            && !value[open + 1..]
                .bytes()
                .any(|b| matches!(b, b'^' | b'$' | b'%' | b'@' | b'~'));
        open > 0
            && !name.is_empty()
            && (value.ends_with(')') || open_call)
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':'))
            && name.bytes().any(|b| b.is_ascii_lowercase())
    })
}

/// Whether `value` is a number literal in code (`0x5eadbeef`, `0b1011`, `0o755`).
fn is_number_literal(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    [("0x", 16), ("0b", 2), ("0o", 8)]
        .iter()
        .any(|&(prefix, radix)| {
            lower.strip_prefix(prefix).is_some_and(|digits| {
                !digits.is_empty() && digits.chars().all(|c| c == '_' || c.is_digit(radix))
            })
        })
}

/// Whether `value` is a file path or a glob (`some/**/needle.txt`, `./certs/ca.pem`,
/// `src/*.rs`): a `/`-separated path whose last part has a short extension, or a glob's `*`.
fn is_path_like(value: &str) -> bool {
    let Some((dir, last)) = value.rsplit_once('/') else {
        return false;
    };
    let plain = |s: &str| {
        s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*' | b'/' | b'~')
        })
    };
    let extension = last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_lowercase())
    });
    plain(dir) && plain(last) && (extension || value.contains("/*") || value.contains("*/"))
}

/// Whether a quoted "value" is the stretch between two string literals, which a key inside
/// the first one seems to open (`passwordLabel:"Password:",rememberMeLabel:"Remember`):
/// `,` or `;` then a name.
fn is_between_literals(value: &str) -> bool {
    value.strip_prefix([',', ';']).is_some_and(|rest| {
        rest.trim_start()
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// Whether `value` names a web route's controller and action (`cms/sites/passwords#update`).
fn is_route_target(value: &str) -> bool {
    value.split_once('#').is_some_and(|(controller, action)| {
        controller.contains('/')
            && !action.is_empty()
            && controller
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'/' || b == b'_')
            && action.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    })
}

/// Whether `value` is a CSS selector or page anchor (`#add-password`, `.password-field`).
fn is_selector(value: &str) -> bool {
    value.strip_prefix(['#', '.']).is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_'))
    })
}

/// Whether a key's words name an API key or an auth-token header (`INTERNAL_API_KEY`,
/// `apikey`, `X-API-Key`, `X-Auth-Token`): a UUID given to one of these is a key, where a UUID
/// beside other names (`idempotency_key`, `request_id`, `tenant`) is an identifier.
fn names_an_api_key(words: &[String]) -> bool {
    match words {
        [.., last] if last == "apikey" => true,
        [.., api, key] if api == "api" && key == "key" => true,
        [x, .., kind, token] => {
            x == "x" && token == "token" && matches!(kind.as_str(), "auth" | "access" | "api")
        }
        _ => false,
    }
}

/// Judges a generic `key = value` assignment.
pub(crate) fn is_generic_secret(value: &str, context: &JudgeContext, min_entropy: f64) -> bool {
    let declared = declared_name(context.key);
    let key = declared.to_ascii_lowercase();
    let words = key_words(declared);
    let Some(kind) = key_kind(&words) else {
        return false;
    };
    let last_part = words.last().map_or("", String::as_str);
    if NOT_SECRET_KEYS.contains(&last_part)
        || key.contains("public")
        || key.contains("pubkey")
        || key.contains("publishable")
        || in_arn(context.before)
        || (kind == KeyKind::KeyOnly && words.iter().any(|w| KEY_QUALIFIERS.contains(&w.as_str())))
    {
        return false;
    }
    // A key right after `/` is a route's path (`put '/forgot-password' => "…#update"`).
    let route = !context.key.contains(' ')
        && (context.before == "/"
            || ["'/", "\"/", " /", "`/"]
                .iter()
                .any(|p| context.before.ends_with(p)));
    if matches!(context.next, Some(b'(' | b'[' | b'<')) || route {
        return false;
    }
    let value = value.trim_end_matches(['.', ':', '*', '!', '?']);
    if is_between_literals(value) || is_route_target(value) {
        return false;
    }
    let lower_value = value.to_ascii_lowercase();
    if is_uuid(value) {
        let before = context.before.to_ascii_lowercase();
        return UUID_KEY_VENDORS
            .iter()
            .any(|v| key.contains(v) || before.contains(v))
            || names_an_api_key(&words);
    }
    // Code that compares a password with a literal holds the password, however short.
    let compared = context.compared && context.quoted;
    if value.len() < if compared { 6 } else { 8 }
        || is_selector(value)
        || is_placeholder(value)
        || is_reference(value)
        // Inside quotes a parenthesis is part of the literal (`"vbb(#g4nk!…"`).
        || (!context.quoted && is_call(value))
        || value.contains("://")
        || is_integrity(value)
        || is_number_literal(value)
        || is_path_like(value)
        || PUBLIC_PREFIXES.iter().any(|p| lower_value.starts_with(p))
        || HASH_PREFIXES.iter().any(|p| lower_value.starts_with(p))
        || (value.bytes().all(|b| b.is_ascii_hexdigit()) && names_a_digest(&key))
    {
        return false;
    }
    if compared {
        return (names_password(&words) || last_part == "secret")
            && !is_standin(&lower_value)
            && !value.contains(['_', '.', '/'])
            && value
                .bytes()
                .any(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && entropy(value) >= 2.0;
    }
    // A quoted single word may be a chosen password; a quoted name (`SOME_PASSWORD`,
    // `prod-db-creds`, `token.json`) is not.
    let word = value
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let password_word = names_password(&words)
        && context.assigned
        && word
        && !is_standin(&lower_value)
        && value.len() >= 6;
    let quoted_word = context.quoted && kind == KeyKind::Strong && word;
    if password_word {
        return entropy(value) >= 2.3;
    }
    if is_identifier_like(value) && !quoted_word {
        return false;
    }
    if ["true", "false", "null", "none", "nil", "undefined"].contains(&lower_value.as_str()) {
        return false;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_letter = value.bytes().any(|b| b.is_ascii_alphabetic());
    let has_upper = value.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = value.bytes().any(|b| b.is_ascii_lowercase());
    let has_symbol = value.bytes().any(|b| b.is_ascii_punctuation());
    match kind {
        // A quoted literal under a password or secret name is one, even when a person chose
        // it (`"Prestigitariu$"`): only stand-ins are left out, leetspeak ones (`"super$ecret"`)
        // included.
        KeyKind::Strong if context.quoted => {
            !is_standin(&lower_value)
                && (has_digit || has_symbol || value.len() >= 8)
                && entropy(value) >= 2.5
        }
        KeyKind::Strong => {
            let mixed = (has_digit && has_letter)
                || (value.len() >= 16 && has_upper && has_lower)
                || (value.len() >= 10 && has_letter && has_symbol && (has_upper || has_digit));
            mixed && random_enough(value, min_entropy)
        }
        // A bare `key` names many things that are not secrets: ask for a long random value.
        KeyKind::KeyOnly => {
            value.len() >= 16 && has_digit && has_letter && entropy(value) >= min_entropy + 0.5
        }
    }
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
