//! Precision: deciding whether a regex match is a secret or a look-alike (a placeholder, a hash,
//! an environment reference, a redacted form, an identifier).

use super::decode::{self, OpenSshKey};
use super::rules::{Check, SecretRule, Tail};

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
fn is_identifier_like(s: &str) -> bool {
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
    "method",
    "strategy",
    "scheme",
    "enabled",
    "required",
    "level",
    "timeout",
    "lifetime",
    "expiration",
    "algorithm",
    "alg",
    "host",
    "port",
    "server",
    "user",
    "username",
    "email",
    "owner",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "hint",
    "reset",
    "days",
    "hours",
    "minutes",
    "seconds",
    "interval",
    "period",
    "region",
    "account",
    "project",
    "sid",
    "fingerprint",
    "pattern",
    "regex",
    "description",
    "note",
    "notes",
];

/// Words that make a key-only name (`cache_key`, `sort_key`) something other than a secret.
const KEY_QUALIFIERS: &[&str] = &[
    "cache",
    "sort",
    "partition",
    "primary",
    "foreign",
    "idempotency",
    "dedup",
    "lookup",
    "object",
    "s3",
    "map",
    "dict",
    "index",
    "row",
    "column",
    "field",
    "translation",
    "i18n",
    "json",
    "yaml",
    "registry",
    "unique",
    "composite",
    "shard",
    "routing",
    "group",
    "cursor",
    "page",
    "next",
    "prev",
    "event",
    "message",
    "metric",
    "label",
    "tag",
    "feature",
    "flag",
    "setting",
    "option",
    "param",
    "query",
    "search",
    "storage",
    "bucket",
    "pub",
    "verify",
    "verification",
    "hot",
    "shortcut",
    "foreign",
    "join",
    "lock",
    "mutex",
    "natural",
    "surrogate",
    "hash",
    "sign",
    "dns",
    "ssh",
    "gpg",
    "pgp",
    "kms",
    "cmk",
];

/// Words that are names ending in `key` without being one.
const NOT_KEY_WORDS: &[&str] = &[
    "monkey", "hotkey", "turkey", "donkey", "jockey", "hockey", "whiskey", "passkey",
];

/// Spellings that name a secret whatever else the key says (`DB_PASSWORD`, `githubToken`).
const STRONG_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pwd",
    "secret",
    "token",
    "apikey",
    "authkey",
    "accesskey",
    "secretkey",
    "privatekey",
    "credential",
    "creds",
];

/// Whole words that name a secret (`pass`, `pat`, `pw`).
const STRONG_WORDS: &[&str] = &["pass", "pw", "pat", "cred", "psk"];

/// What a key name says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    /// It names a password, secret, token or credential.
    Strong,
    /// It only names a key (`service_key`): judged more strictly.
    KeyOnly,
}

/// Words of a declaration that may stand before the name it declares (`public const string
/// ApiKey`, `private static final String TOKEN`, `export let secret`): modifiers and the
/// common string types. They are not part of the key.
const DECLARATION_WORDS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "final",
    "const",
    "readonly",
    "var",
    "let",
    "val",
    "export",
    "declare",
    "string",
    "str",
    "lateinit",
    "override",
    "pub",
    "mut",
    "local",
    "global",
    "my",
    "our",
    "set",
    "def",
    "fileprivate",
    "volatile",
    "transient",
];

/// The declared name of a key that holds words before it: the key without its leading
/// declaration words (see [`DECLARATION_WORDS`]); the key itself when it holds no space.
fn declared_name(key: &str) -> &str {
    let mut rest = key.trim_start();
    while let Some((word, after)) = rest.split_once(' ') {
        if !DECLARATION_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word))
        {
            break;
        }
        rest = after.trim_start();
    }
    rest
}

/// The words of a key name, lowercased: split at every char that is not a letter or digit and
/// where a lowercase letter or digit meets a capital (`apiKey` → `api`, `key`).
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut after_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            after_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && after_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        after_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Words that, right before `key`, make it name a credential (`api key`, `access_key`).
const CREDENTIAL_KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "auth",
    "secret",
    "private",
    "client",
    "master",
    "signing",
    "encryption",
    "license",
    "service",
    "app",
    "consumer",
    "account",
    "admin",
    "deploy",
    "root",
    "session",
    "shared",
    "subscription",
    "webhook",
    "write",
    "ingest",
    "insert",
    "server",
    "sdk",
    "management",
    "mgmt",
    "personal",
    "user",
    "integration",
    "developer",
    "dev",
    "prod",
    "production",
    "live",
    "restricted",
    "storage",
    "primary",
    "secondary",
    "rest",
    "query",
];

/// Whether the words name a password (`DB_PASSWORD`, `Pwd`, `REACT_APP_AUTH_PASS`).
fn names_password(words: &[String]) -> bool {
    words.iter().any(|w| {
        matches!(w.as_str(), "pass" | "pw" | "pwd")
            || ["password", "passwd", "passphrase"]
                .iter()
                .any(|p| w.ends_with(p))
    })
}

/// Whether the words name a secret, and how surely.
fn key_kind(words: &[String]) -> Option<KeyKind> {
    let mut kind = None;
    for pair in words.windows(2) {
        if pair[1] == "key" && CREDENTIAL_KEY_QUALIFIERS.contains(&pair[0].as_str()) {
            return Some(KeyKind::Strong);
        }
        // SonarQube calls its token a login (`sonar.login`).
        if pair[0] == "sonar" && pair[1] == "login" {
            return Some(KeyKind::Strong);
        }
    }
    for w in words {
        if STRONG_WORDS.contains(&w.as_str()) || STRONG_SUFFIXES.iter().any(|s| w.ends_with(s)) {
            return Some(KeyKind::Strong);
        }
        if w.ends_with("key") && !NOT_KEY_WORDS.contains(&w.as_str()) {
            kind = Some(KeyKind::KeyOnly);
        }
    }
    kind
}

/// Vendors whose API keys are UUIDs: a UUID counts as a secret only beside one of these names.
const UUID_KEY_VENDORS: &[&str] = &[
    "heroku",
    "scw",
    "snyk",
    "sauce",
    "shortcut",
    "clubhouse",
    "pendo",
    "hubspot",
    "postmark",
    "sendbird",
    "squarespace",
    "kucoin",
    "messagebird",
    "opsgenie",
    "splunk",
    "loggly",
    "launchdarkly",
    "codecov",
    "pinecone",
    "scaleway",
    "railway",
    "mongodb",
    "atlas",
    "bunny",
    "honeybadger",
    "logentries",
    "insightops",
    "rapid7",
    "plaid",
    "pagerduty",
    "newrelic",
    "new_relic",
    "new-relic",
    "new relic",
    "octopus",
    "rollbar",
    "sumo",
    "contentful",
    "fastly",
    "azure",
    "okta",
    "auth0",
    "cloudflare",
    "datadog",
    "sentry",
    "bitbucket",
    "circleci",
    "travis",
    "netlify",
    "vercel",
    "linode",
    "hetzner",
    "vultr",
    "digitalocean",
    "twilio",
    "sendgrid",
    "mailgun",
    "mailchimp",
    "algolia",
    "segment",
    "mixpanel",
    "amplitude",
    "intercom",
    "zendesk",
    "freshdesk",
    "asana",
    "trello",
    "clickup",
    "airtable",
    "jira",
    "atlassian",
    "confluence",
    "gitlab",
    "github",
    "jenkins",
    "sonar",
    "artifactory",
    "jfrog",
    "nexus",
    "docker",
    "quay",
    "harbor",
    "grafana",
    "elastic",
    "databricks",
    "snowflake",
    "confluent",
    "kafka",
    "rabbitmq",
    "redis",
    "upstash",
    "supabase",
    "firebase",
    "neon",
    "planetscale",
    "cockroach",
    "fauna",
    "appwrite",
    "nhost",
    "hasura",
    "pusher",
    "ably",
    "pubnub",
    "stream",
    "agora",
    "twitch",
    "discord",
    "slack",
    "telegram",
    "zoom",
    "webex",
    "ringcentral",
    "vonage",
    "nexmo",
    "plivo",
    "bandwidth",
    "telnyx",
    "mapbox",
    "here",
    "tomtom",
    "shodan",
    "virustotal",
    "censys",
    "etherscan",
    "infura",
    "alchemy",
    "moralis",
    "coinbase",
    "binance",
    "kraken",
    "stripe",
    "braintree",
    "paypal",
    "adyen",
    "square",
    "mollie",
    "razorpay",
    "paystack",
    "flutterwave",
    "gocardless",
    "chargebee",
    "recurly",
    "paddle",
    "shopify",
    "bigcommerce",
    "woocommerce",
    "typeform",
    "calendly",
    "docusign",
    "dropbox",
    "box",
    "notion",
    "linear",
    "figma",
    "miro",
    "frame",
    "cloudinary",
    "imgix",
    "sanity",
    "storyblok",
    "prismic",
    "strapi",
    "ghost",
    "wordpress",
    "apify",
    "rapidapi",
    "serpapi",
    "openai",
    "anthropic",
    "cohere",
    "mistral",
    "groq",
    "together",
    "replicate",
    "huggingface",
    "deepgram",
    "assemblyai",
    "elevenlabs",
    "weaviate",
    "qdrant",
    "wandb",
    "langfuse",
    "langsmith",
    "posthog",
    "bugsnag",
    "raygun",
    "airbrake",
    "logdna",
    "logz",
    "papertrail",
    "honeycomb",
    "lightstep",
    "dynatrace",
    "appdynamics",
    "instana",
    "statuspage",
    "uptimerobot",
    "pingdom",
    "checkly",
    "browserstack",
    "saucelabs",
    "lambdatest",
    "percy",
    "chromatic",
    "applitools",
    "mailjet",
    "sparkpost",
    "mandrill",
    "mailersend",
    "resend",
    "loops",
    "customerio",
    "braze",
    "klaviyo",
    "onesignal",
    "expo",
    "keen",
    "heap",
    "fullstory",
    "logrocket",
    "hotjar",
    "optimizely",
    "split",
    "flagsmith",
    "unleash",
    "configcat",
    "statsig",
    "doppler",
    "infisical",
    "vault",
    "consul",
    "nomad",
    "terraform",
    "pulumi",
    "ibm",
    "oracle",
    "alibaba",
    "tencent",
    "huawei",
    "yandex",
];

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
fn is_standin(lower: &str) -> bool {
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
const HASH_PREFIXES: &[&str] = &[
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
fn is_call(value: &str) -> bool {
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
