//! SecretRule-by-rule tests: generated positives for every rule, hard negatives, placeholders, CRLF,
//! non-ASCII neighbours, overlaps and the adversarial inputs.

use secrecy::ExposeSecret;

use super::engine::Scanner;
use super::rules::{RULES, alphabet};
use super::*;

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Expands a rule's sample template; returns the text and the secret's byte range in it.
fn expand(template: &str, rng: &mut Rng) -> (String, std::ops::Range<usize>) {
    let mut out = String::new();
    let mut secret_start = None;
    let mut secret_end = None;
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("[[") {
            secret_start = Some(out.len());
            rest = r;
        } else if let Some(r) = rest.strip_prefix("]]") {
            secret_end = Some(out.len());
            rest = r;
        } else if rest.starts_with('{')
            && rest.contains('}')
            && rest[1..].starts_with(|c: char| c.is_ascii_alphabetic())
        {
            let close = rest.find('}').unwrap();
            let (name, len) = rest[1..close].split_once(':').unwrap();
            let chars: Vec<char> = alphabet(name)
                .unwrap_or_else(|| panic!("alphabet {name}"))
                .chars()
                .collect();
            for _ in 0..len.parse::<usize>().unwrap() {
                out.push(chars[rng.below(chars.len())]);
            }
            rest = &rest[close + 1..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    let range = secret_start.unwrap_or(0)..secret_end.unwrap_or(out.len());
    (out, range)
}

fn ids(findings: &[SecretFinding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule).collect()
}

#[test]
fn every_rule_compiles() {
    assert!(Scanner::new().complete());
}

#[test]
fn the_keyword_nfa_and_dfa_find_the_same_secrets() {
    let mut rng = Rng(0x5EED_1234_ABCD_0002);
    let mut text = String::new();
    for rule in RULES {
        let (sample, _) = expand(rule.sample, &mut rng);
        text.push_str(&format!("- note: {sample}\n"));
    }
    let spans = |found: Vec<engine::RawFinding>| -> Vec<(usize, usize, usize)> {
        found.iter().map(|f| (f.rule, f.start, f.end)).collect()
    };
    // A fresh scanner searches with the NFA; one that has searched a megabyte, with the DFA:
    // both find the same.
    let small = spans(Scanner::new().find(&text));
    let large_scanner = Scanner::new();
    assert!(large_scanner.find(&" ".repeat(1 << 20)).is_empty());
    let large = spans(large_scanner.find(&text));
    assert!(small.len() >= RULES.len() / 2, "{small:?}");
    assert_eq!(small, large);
}

#[test]
fn rule_ids_are_unique_and_at_least_sixty_provider_rules() {
    let mut seen = std::collections::HashSet::new();
    for rule in RULES {
        assert!(seen.insert(rule.id), "duplicate rule id {}", rule.id);
        assert!(!rule.keywords.is_empty(), "{} has no keyword", rule.id);
    }
    let providers = RULES
        .iter()
        .filter(|r| matches!(r.check, rules::Check::Token | rules::Check::Base62Crc))
        .count();
    assert!(providers >= 60, "only {providers} provider rules");
}

#[test]
fn every_rule_finds_generated_tokens_in_memory_text() {
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let contexts: &[(&str, &str)] = &[
        ("", ""),
        ("Deploy notes: the key is ", " — rotate it monthly.\n"),
        ("- `", "`\n"),
        ("Ünïcödé prefix → ", " ← suffix 日本語\n"),
        ("line one\r\nexport TOKEN_VALUE=\"", "\"\r\nline three\r\n"),
    ];
    for rule in RULES {
        for round in 0..20 {
            let (sample, range) = expand(rule.sample, &mut rng);
            let (before, after) = contexts[round % contexts.len()];
            let text = format!("{before}{sample}{after}");
            let findings = scan_text(&text);
            let want = &sample[range.clone()];
            let found = findings.iter().find(|f| f.secret.expose_secret() == want);
            let Some(found) = found else {
                panic!(
                    "{} missed {want:?} in {text:?}; found {:?}",
                    rule.id,
                    ids(&findings)
                );
            };
            assert_eq!(found.rule, rule.id, "{want:?} in {text:?}");
            assert_eq!(&text[found.start..found.end], want);
        }
    }
}

#[test]
fn line_and_column_are_one_based_and_count_chars() {
    let text = "first line\r\nsecond: héllo ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5\n";
    let f = &scan_text(text)[0];
    assert_eq!(f.rule, "github-pat");
    assert_eq!((f.line, f.column), (2, 15));
    assert_eq!(
        &text[f.start..f.end],
        "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
    );
}

#[test]
fn placeholders_and_look_alikes_are_not_secrets() {
    let negatives = [
        "token = <your-token>",
        "GITHUB_TOKEN=${GITHUB_TOKEN}",
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        "set PASSWORD=%DB_PASSWORD%",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "api_key = \"****************\"",
        "OPENAI_API_KEY=YOUR_API_KEY",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "the key looks like sk-…abcd in the dashboard",
        "the key looks like sk-...abcd in the dashboard",
        "ghp_…b2 was revoked",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed the token refresh",
        "\"integrity\": \"sha512-Vx8RvBjM9jTTMSDbBcYwYUmgSZPYfbM8VoKvKJwQx7nI3SNF1fgy0cHkMr1G1ZYwRUDA0aHY4JgdCu6y4nyMIw==\"",
        "request id 123e4567-e89b-12d3-a456-426614174000 failed; token = 123e4567-e89b-12d3-a456-426614174000",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy@ci",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE4rQ9Lq3mQ1zYH0bqRj3tV8cXg2xPz5kHf7nW1eL0aB6sD9uY3iR2oT8pV4wN7mK5jC1hG0fE9dA3bZ2yX6vU==\n-----END PUBLIC KEY-----",
        "password = os.environ[\"DB_PASSWORD\"]",
        "token = process.env.API_TOKEN",
        "api_key = os.getenv('STRIPE_KEY')",
        "password: hunter",
        "The token refresh happens every 15 minutes; secrets live in Vault.",
        "secret_name = prod-db-credentials-v2",
        "max_tokens = 4096",
        "token_url = https://auth.example.com/oauth/token",
        "password = getPassword()",
        "password_hash = 5f4dcc3b5aa765d61d8327deb882cf99",
        "DATABASE_URL=postgres://postgres:postgres@localhost:5432/dev",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
        "see https://docs.example.com/guide and http://localhost:8080/x",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "Use the Asia region; AKIA ids start with four letters.",
        "eyJhbGciOiJIUzI1NiJ9 is just a header",
        "npm_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk_live_0000000000000000000000000000",
        "token: short-lived",
        "credentials: stored-in-1password",
    ];
    for text in negatives {
        let findings = scan_text(text);
        assert!(findings.is_empty(), "{text:?} gave {:?}", ids(&findings));
    }
}

#[test]
fn a_specific_rule_wins_over_the_generic_assignment() {
    let text = "GITHUB_TOKEN=ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5\n";
    assert_eq!(ids(&scan_text(text)), ["github-pat"]);
}

#[test]
fn generic_assignments_are_found_by_entropy() {
    for text in [
        "db_password = \"Xk9#mP2$vL8qR4wZ\"",
        "client_secret: 7f3kQ9zLm2VbX8pWn4Rt",
        "**API key:** Qm9yN2xkLzEyMzQ1Njc4OTA",
        "export SERVICE_TOKEN=a8F3kLm9Qz2Xw7Pv",
    ] {
        assert_eq!(ids(&scan_text(text)), ["generic-secret"], "{text:?}");
    }
}

#[test]
fn url_credentials_keep_user_and_host_out_of_the_secret() {
    let text = "DATABASE_URL=postgres://app:Zq8vN3kL1pX7@db.internal:5432/app";
    let f = &scan_text(text)[0];
    assert_eq!(f.rule, "url-credentials");
    assert_eq!(f.secret.expose_secret(), "Zq8vN3kL1pX7");
}

#[test]
fn allow_marker_silences_its_line_only() {
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
    let text = format!("a {token} <!-- teammem:allow -->\nb {token}\n");
    let findings = scan_text(&text);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].line, 2);
}

#[test]
fn checksummed_tokens_pass_even_with_low_entropy_bodies() {
    let random = "aaaaabbbbbcccccdddddeeeeefffff";
    let token = format!("ghp_{random}{}", judge::base62_crc(random));
    assert_eq!(ids(&scan_text(&token)), ["github-pat"]);
}

#[test]
fn redaction_shows_at_most_four_and_two_chars_and_a_quarter() {
    for len in 0..120 {
        let value: String = (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let shown = redact_value(&value);
        let kept = shown.chars().count() - 1;
        assert!(kept <= len / 4 && kept <= 6, "{len}: {shown}");
    }
    assert_eq!(
        redact_value("ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"),
        "ghp_…M5"
    );
}

#[test]
fn redact_text_replaces_every_finding() {
    let text = "a ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5 b\nAKIAQ3RZ7XJ2LMNPK4ST c\n";
    assert_eq!(
        redact_text(text),
        "a [REDACTED_SECRET] b\n[REDACTED_SECRET] c\n"
    );
}

#[test]
fn redact_text_hides_a_found_value_wherever_else_it_appears() {
    // The value of an assignment, repeated on a line where no rule looks (proptest found it).
    let text = "password=passwordpassword\r\npasswordpassword";
    let redacted = redact_text(text);
    assert!(!redacted.contains("passwordpassword"), "{redacted}");
    assert!(redacted.starts_with("password="), "{redacted}");
    assert_eq!(
        redacted.matches("[REDACTED_SECRET]").count(),
        2,
        "{redacted}"
    );
}

#[test]
fn fingerprints_are_sha256_of_rule_and_secret_and_silence_via_secretsignore() {
    let f = &scan_text("ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5")[0];
    let fp = f.fingerprint();
    assert_eq!(fp.len(), 64);
    assert_eq!(
        fp,
        fingerprint("github-pat", "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5")
    );
    let ignore = SecretsIgnore::parse(&format!(
        "# accepted test fixture\n{}  # fixture\n",
        fp.to_uppercase()
    ));
    assert!(ignore.allows(f));
    assert!(!SecretsIgnore::parse("").allows(f));
}

#[test]
fn adversarial_inputs_scan_quickly_and_find_nothing() {
    let inputs = [
        format!("sk-{}", "a-".repeat(50_000)),
        "sk-".repeat(50_000),
        "password=".repeat(30_000),
        format!("-----BEGIN RSA PRIVATE KEY-----{}", "A".repeat(200_000)),
        "ghp_".repeat(40_000),
        format!("https://{}", "a:".repeat(50_000)),
        format!("token = {}", "x".repeat(200_000)),
        format!("| token |\n{}", "|--|\n".repeat(40_000)),
        format!(
            "| password | key |\n|---|---|\n{}",
            "| `` | \\| |\n".repeat(40_000)
        ),
        "--|".repeat(60_000),
        format!("| token |\r\n{}", "|--|\r\n".repeat(40_000)),
        "|-|\r\n|--|\r\n\r\n".repeat(30_000),
    ];
    scan_text("warm up");
    for input in &inputs {
        // Correctness only: timing belongs in benches; the engine is linear by construction.
        let findings = scan_text(input);
        assert!(findings.is_empty(), "{:?}", ids(&findings));
    }
}

#[test]
fn binary_bytes_are_skipped_and_utf16_is_decoded() {
    assert!(scan_bytes(b"\x7fELF\x00\x01ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5").is_none());
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "key ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    assert_eq!(ids(&scan_bytes(&utf16).unwrap()), ["github-pat"]);
    let latin1 = b"caf\xe9 ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
    assert_eq!(ids(&scan_bytes(latin1).unwrap()), ["github-pat"]);
}

#[test]
fn debug_output_never_shows_the_secret() {
    let f = &scan_text("ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5")[0];
    assert!(!format!("{f:?}").contains("aB3dE5gH7jK9mN1pQ3sT5"));
}

#[test]
fn every_private_key_block_kind_is_found_and_public_keys_are_not() {
    let mut rng = Rng(42);
    for kind in ["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""] {
        let (body, _) = expand("{b64:64}\n{b64:64}\n{b64:30}", &mut rng);
        let text = format!(
            "```\n-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----\n```\n"
        );
        assert_eq!(ids(&scan_text(&text)), ["private-key"], "{kind}");
        let public = text.replace("PRIVATE", "PUBLIC");
        assert!(scan_text(&public).is_empty(), "{kind}");
    }
    let (body, _) = expand("{b64:64}\n{b64:64}\n={b64:4}", &mut rng);
    let pgp = format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----\n"
    );
    assert_eq!(ids(&scan_text(&pgp)), ["private-key"]);
}

#[test]
fn aws_secret_key_is_found_beside_its_key_id() {
    let mut rng = Rng(7);
    let (id, _) = expand("AKIA{b32:16}", &mut rng);
    let (secret, _) = expand("{b64:40}", &mut rng);
    for text in [
        format!("{id} {secret}"),
        format!("{id},{secret}"),
        format!("| {id} | {secret} |"),
    ] {
        let found: Vec<(&str, String)> = scan_text(&text)
            .into_iter()
            .map(|f| (f.rule, f.secret.expose_secret().to_string()))
            .collect();
        assert_eq!(
            found,
            [
                ("aws-access-key-id", id.clone()),
                ("aws-secret-access-key", secret.clone())
            ],
            "{text}"
        );
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Text made of fragments that exercise the rules' edges, with arbitrary chars between.
    fn texty() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("ghp_".to_string()),
            Just("sk-".to_string()),
            Just("password".to_string()),
            Just("=".to_string()),
            Just(": ".to_string()),
            Just("://".to_string()),
            Just("@".to_string()),
            Just("-----BEGIN RSA PRIVATE KEY-----\n".to_string()),
            Just("\r\n".to_string()),
            Just("teammem:allow".to_string()),
            "[A-Za-z0-9_-]{1,40}",
            "\\PC{1,8}",
        ];
        prop::collection::vec(fragment, 0..60).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn scanning_never_panics_and_ranges_are_char_aligned(text in texty()) {
            for f in scan_text(&text) {
                prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
                prop_assert_eq!(&text[f.start..f.end], f.secret.expose_secret());
                let shown = f.redacted();
                prop_assert!(shown.chars().count() - 1 <= f.secret.expose_secret().chars().count() / 4);
            }
        }

        #[test]
        fn redacted_text_holds_none_of_the_secrets(text in texty()) {
            let redacted = redact_text(&text);
            for f in scan_text(&text) {
                prop_assert!(!redacted.contains(f.secret.expose_secret()));
            }
        }

        #[test]
        fn any_bytes_are_read_safely(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = scan_bytes(&bytes);
        }

        #[test]
        fn the_decoders_take_any_input(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = decode::base64(&bytes);
            let _ = decode::basic_credentials(&bytes);
            let _ = decode::openssh_key(&bytes);
            let mut container = b"openssh-key-v1\0".to_vec();
            container.extend(&bytes);
            let _ = decode::openssh_key(&container);
            let _ = decode::key_block_body(&text);
            let _ = decode::unescape_newlines(&text);
            let _ = judge::is_private_key(&format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{text}"), 4.0);
        }
    }
}

/// An `openssh-key-v1` block as `ssh-keygen` writes it for an ed25519 key, from `seed`:
/// `cipher` `none` for an unencrypted key, `aes256-ctr` (with a bcrypt KDF) for a
/// passphrase-protected one.
fn openssh_block(seed: u64, cipher: &str) -> String {
    fn string(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend((bytes.len() as u32).to_be_bytes());
        out.extend(bytes);
    }
    let mut rng = Rng(seed);
    let mut random = |n: usize| -> Vec<u8> { (0..n).map(|_| rng.next() as u8).collect() };
    let public_key = random(32);
    let mut public = Vec::new();
    string(&mut public, b"ssh-ed25519");
    string(&mut public, &public_key);
    let mut private = random(4).repeat(2);
    string(&mut private, b"ssh-ed25519");
    string(&mut private, &public_key);
    string(&mut private, &[random(32), public_key.clone()].concat());
    string(&mut private, b"deploy@ci");
    let mut blob = b"openssh-key-v1\0".to_vec();
    string(&mut blob, cipher.as_bytes());
    let kdf: &[u8] = if cipher == "none" { b"none" } else { b"bcrypt" };
    string(&mut blob, kdf);
    string(
        &mut blob,
        if cipher == "none" {
            b""
        } else {
            b"\0\0\0\x10salt-salt-salt-\0\0\0\x10"
        },
    );
    blob.extend(1u32.to_be_bytes());
    string(&mut blob, &public);
    string(&mut blob, &private);
    let body = base64_encode(&blob);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(70)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        lines.join("\n")
    )
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn unencrypted_openssh_keys_are_found_bare_fenced_indented_and_quoted() {
    for seed in 1..6 {
        let key = openssh_block(seed, "none");
        let indented: String = key.lines().map(|l| format!("    {l}\n")).collect();
        let quoted: String = key.lines().map(|l| format!("> {l}\n")).collect();
        for text in [
            key.clone(),
            format!("Notes:\n\n```\n{key}\n```\n"),
            format!("ssh:\n  deploy_key: |\n{indented}"),
            quoted,
        ] {
            assert_eq!(ids(&scan_text(&text)), ["private-key"], "{text}");
        }
    }
}

#[test]
fn passphrase_protected_openssh_keys_are_not_secrets() {
    for seed in 1..6 {
        let key = openssh_block(seed, "aes256-ctr");
        assert!(scan_text(&key).is_empty(), "{key}");
    }
}

#[test]
fn key_blocks_inside_strings_with_escaped_newlines_are_found() {
    let mut rng = Rng(99);
    let (body, _) = expand(
        "MIIE{b64:60}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}",
        &mut rng,
    );
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
    let escaped = pem.replace('\n', "\\n");
    for text in [
        format!(
            "{{\"type\": \"service_account\", \"private_key\": \"{escaped}\", \"client_email\": \"ci@x.iam.gserviceaccount.com\"}}"
        ),
        format!("PRIVATE_KEY=\"{escaped}\""),
        format!(
            "signing_key: '{}'",
            openssh_block(3, "none").replace('\n', "\\n")
        ),
    ] {
        assert_eq!(ids(&scan_text(&text)), ["private-key"], "{text}");
    }
    let encoded = base64_encode(pem.as_bytes());
    assert_eq!(
        ids(&scan_text(&format!("client-key-data: {encoded}"))),
        ["base64-private-key"]
    );
}

#[test]
fn authorization_headers_are_found_raw_in_curl_and_in_config() {
    let token = "9f8aQ2xLm4Tz7RkV3bNc1Wq";
    let basic = base64_encode(b"deploy:Sg7kPq2xLm9vW");
    for text in [
        format!("curl -H \"Authorization: Bearer {token}\" https://api.internal"),
        format!("Authorization: SSWS 00{token}Ab12Cd34"),
        format!("headers:\n  Authorization: \"token {token}\""),
        format!("{{\"headers\": {{\"Authorization\": \"Basic {basic}\"}}}}"),
        format!("fetch(u, {{ headers: {{ Authorization: `Bearer {token}` }} }})"),
    ] {
        assert_eq!(ids(&scan_text(&text)), ["authorization-header"], "{text}");
    }
    for text in [
        "curl -H \"Authorization: Bearer $API_TOKEN\" https://x",
        "Authorization: Bearer <your-token>",
        "Authorization: Basic anVzdC1hLW5hbWU=",
        "Bearer tokens expire after an hour.",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
}

#[test]
fn base64_user_and_password_in_registry_configs_is_found() {
    let auth = base64_encode(b"robot$builder:Zq8vN3kL1pX7mW");
    for text in [
        format!("{{\"auths\": {{\"ghcr.io\": {{\"auth\": \"{auth}\"}}}}}}"),
        format!("//npm.corp/:_auth={auth}"),
    ] {
        assert_eq!(ids(&scan_text(&text)), ["basic-auth-credentials"], "{text}");
    }
    let no_colon = base64_encode(b"just a name here");
    assert!(scan_text(&format!("{{\"auth\": \"{no_colon}\"}}")).is_empty());
}

#[test]
fn key_names_are_read_as_words_whatever_their_spelling() {
    for text in [
        "service_key: 7Hq2LmZ9xK4vB8nR3tY6",
        "Secret access key: Zx8kQ2mLp9Vt4Rb7Nc1Wq3Ej6Hy5Ua0Gs8Df2Kp",
        "ts_authkey = q7Hq2LmZ9xK4vB8nR3tY6",
        "AZURE_DEVOPS_PAT=q2w3e4r5t6y7u2i3o4p5a6s7d2f3g4h5j6k7l2z3x4c5v6b7n2m3",
        "fbApiKey: \"171e84fd57f430fc59afa8fad3dbda2a\"",
        "The staging database password is Xk9mP2vL8qR4wZ7t for now.",
        "| DB_PASSWORD | s3cr3t=Xk9mP2v |",
    ] {
        assert_eq!(ids(&scan_text(text)), ["generic-secret"], "{text}");
    }
    for text in [
        "cache_key = user-42-profile-v3abc",
        "sort_key: 2026-01-01T10:00:00Z#a1b2c3",
        "passwordLabel: Password1Label",
        "monkey: Xk9mP2vL8qR4wZ7tQ",
        "pattern = a1b2c3d4e5f6g7h8",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
}

#[test]
fn passwords_keep_their_symbols_and_env_words() {
    for (text, secret) in [
        ("DB_PASSWORD=Xk9=mP2vL8=qR4", "Xk9=mP2vL8=qR4"),
        ("password: \"p@ss=w0rd;Q!9x\"", "p@ss=w0rd;Q!9x"),
        ("\"smtpPassword\": \"a:b=c;d9X!\"", "a:b=c;d9X!"),
        ("REACT_APP_AUTH_PASSWORD=whiteduke", "whiteduke"),
        (
            "<add key=\"FromEmailPassword\" value=\"Prestigitariu$\"/>",
            "Prestigitariu$",
        ),
        ("if password == \"team10xy\":", "team10xy"),
    ] {
        let found = scan_text(text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "password: required",
        "\"password\": \"string\"",
        "password: $2b$12$KIXQJ3h1m9L0pQ8rS7tU6uV5wX4yZ3aB2cD1eF0gH9iJ8kL7mN6oP",
        "PASSWORD=changeme",
        "password = getPassword(user)",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
}

#[test]
fn urls_with_an_empty_user_keep_their_password() {
    for scheme in ["redis", "postgres", "amqp", "mongodb+srv"] {
        let text = format!("URL={scheme}://:S3cretRedisPw9@cache.internal:6379/0");
        let found = scan_text(&text);
        assert_eq!(ids(&found), ["url-credentials"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), "S3cretRedisPw9");
    }
}

#[test]
fn uuids_are_keys_only_beside_a_vendor_that_issues_uuid_keys() {
    let uuid = "3f9a1c2e-7b4d-4e8a-9c1f-2d3e4f5a6b7c";
    for text in [
        format!("HEROKU_API_KEY={uuid}"),
        format!("snyk_token: \"{uuid}\""),
        format!("The Postmark server token is {uuid}."),
    ] {
        assert_eq!(ids(&scan_text(&text)), ["generic-secret"], "{text}");
    }
    for text in [
        format!("tenant_id = {uuid}"),
        format!("token = {uuid}"),
        format!("request {uuid} failed"),
        format!("idempotency_key: {uuid}"),
    ] {
        assert!(scan_text(&text).is_empty(), "{text}");
    }
}

#[test]
fn arns_publishable_keys_and_public_keys_are_not_secrets() {
    for text in [
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        "SecretId: arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing-api-key-Q1w2E3",
        "stripe_key: pk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "api_key = pk_test_51HxYzQwErTyUiOpAsDfGhJkLzXcVbNm",
        "posthog_key: phc_Zq8vN3kL1pX7mWq2Lm9Xk4Rt7Bv3Nc8Hy5Ua0Gs8Df",
        "PublicKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
    assert_eq!(
        ids(&scan_text(
            "[Interface]\nPrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\n"
        )),
        ["wireguard-private-key"]
    );
}

#[test]
fn keys_in_backticks_tables_cjk_and_german_prose_are_assignments() {
    for (text, id) in [
        (
            "Set `AWS_SECRET_ACCESS_KEY` to `S8XE0QTH/OKRgAyc+4eRT5/t6FP0zu1YYaWczbuO` in your shell.",
            "prose-assignment",
        ),
        (
            "Set `HEROKU_API_KEY` to `8ee7fa8d-a3ff-49a9-86c8-7fa5a4106c4e` first.",
            "prose-assignment",
        ),
        (
            "| staging | `TWILIO_AUTH_TOKEN` | `522ff71c09b95ecb35b06ce77ea15df1` |",
            "generic-secret",
        ),
        (
            "The github webhook secret is 163dd97601d81309edf24256c70c3d993937cc97",
            "generic-secret",
        ),
        (
            "Der cloudflare api token lautet: 5LMF0JaH9L9gWeabXL4yVwPEigquNNSJkLzdTJmF",
            "generic-secret",
        ),
        (
            "zendesk api token：pZuQBkTjWKytTtd8G7Vg3lB125MTA9J7OjKd1dlq",
            "cjk-assignment",
        ),
        (
            "ステージングの smtp password：Kx9#mQ2vL8qR4wZ7 です。",
            "cjk-assignment",
        ),
        (
            "const azureDevopsPat = 'z5msv5denq4wd7d3jbroaai2no6zx4oaq3bgx6x4mjgfcm4gkfz4';",
            "generic-secret",
        ),
        (
            "buildConfigField 'String' , 'API_KEY' , '\"951bc382db9cfee29c68634761dd6e19\"'",
            "build-config-field",
        ),
    ] {
        assert_eq!(ids(&scan_text(text)), [id], "{text}");
    }
    for text in [
        "Set `LOG_LEVEL` to `debug` in your shell.",
        "Set `API_TOKEN` to `${API_TOKEN}` before the deploy.",
        "| staging | `TOKEN_TTL` | `3600` |",
        "The token for staging is rotated every Friday.",
        "预发环境的 token 是：请向运维申请",
        "buildConfigField 'String', 'API_URL', '\"https://api.example.com/v1\"'",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn passwords_starting_with_a_dollar_or_holding_parentheses_are_values() {
    for (text, secret) in [
        (
            "django_secret_key=$g#=yx0o15zv4xjm@!)x=@-1lqs=-1@+np32q$8c@3vvdr!l_y",
            "$g#=yx0o15zv4xjm@!)x=@-1lqs=-1@+np32q$8c@3vvdr!l_y",
        ),
        ("SMTP_PASS = \"$Zephcrr5wJLUxF@\"", "$Zephcrr5wJLUxF@"),
        (
            "loaded django_secret_key=po8(5%cbwd5)hfqv_u+4gdarvc8&pyhen for tenant acme",
            "po8(5%cbwd5)hfqv_u+4gdarvc8&pyhen",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "password = $DB_PASSWORD",
        "token: $github_token",
        "Connect-VIServer $host -user $user -password $ESXipass",
        "let accountKey = Buffer.from(\"accountKey\", \"base64\");",
        "this.addPassword = \"#add-password\";",
        "echo 'export DATABASE_PASSWORD=\"'$PRECOMPILE_PASSWORD'\"' >> .env",
        "DB_PASSWORD=postgres",
        "password = os.getenv(\"DB_PASSWORD\")",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn credential_lines_of_clients_and_files_are_found() {
    for (text, id, secret) in [
        (
            "mysql -h db -u root -p'AGh2!WinterM08Y1S=' shop",
            "cli-password-argument",
            "AGh2!WinterM08Y1S=",
        ),
        (
            "mysqldump -uroot -pQ7vLm2Xk9RtB4wZp app > dump.sql",
            "cli-password-argument",
            "Q7vLm2Xk9RtB4wZp",
        ),
        (
            "db.khwda.internal:5432:app:app_rw:vga5qh3z3X4lixKVH7yi",
            "pgpass-password",
            "vga5qh3z3X4lixKVH7yi",
        ),
        (
            "*:*:*:replicator:Zq8vN3kL1pX7mWq2",
            "pgpass-password",
            "Zq8vN3kL1pX7mWq2",
        ),
        (
            "new System.Net.NetworkCredential(\"cidownload\", \"AP7JaG9ToerxBc6gWP5LcU2CNpb\");",
            "dotnet-credential",
            "AP7JaG9ToerxBc6gWP5LcU2CNpb",
        ),
        (
            "new DirectoryEntry(\"LDAP://EXAMPLE.COM\",\n    \"ADMIN@EXAMPLE.COM\",\n    \"Rrhh1234xQ\");",
            "dotnet-credential",
            "Rrhh1234xQ",
        ),
        (
            "variable \"corp_okta_api_token\" {\n  default = \"004EWTpRQT_HJtG_nL-agxacgzYHjxPcF99kJsFzWg\"\n}",
            "okta-api-token",
            "004EWTpRQT_HJtG_nL-agxacgzYHjxPcF99kJsFzWg",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(ids(&found), [id], "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "mysql -h db -u root -p shop",
        "mysql -u app -p$MYSQL_PASSWORD app",
        "mysql --port=3306 -h db app",
        "localhost:5432:app:app:*",
        "new NetworkCredential(user, password)",
        "okta_org_url: https://dev-00000000.okta.com",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn prefixed_tokens_with_runs_or_shared_prefixes_are_found() {
    let bearer = "AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F";
    assert_eq!(
        ids(&scan_text(&format!("TWITTER_BEARER_TOKEN={bearer}"))),
        ["x-bearer-token"]
    );
    assert_eq!(
        ids(&scan_text(
            "token→pk_12642892_VL9ELAMG74BP0CCQN8ZG3U7KT6AX9SOQ"
        )),
        ["clickup-api-token"]
    );
    for text in [
        "padding: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "STRIPE_PUBLISHABLE_KEY=pk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn passwords_in_prose_other_languages_and_build_scripts_are_found() {
    let pw = "Kq7vR2mXp9Lw";
    for text in [
        format!("The password for the staging db is {pw} until Friday."),
        format!("password for the db is {pw}"),
        format!("The default password for the user \"ops-user\" is \"{pw}\"."),
        format!("Use {pw} as the password for the staging box."),
        format!("`{pw}` is the admin password."),
        format!("the db password ({pw}) must rotate monthly"),
        format!("la contraseña de la base de datos es \"{pw}\""),
        format!("le mot de passe de prod est : {pw}"),
        format!("a senha do banco é {pw}"),
        format!("Das Passwort für die Datenbank ist {pw}"),
        format!("本番のパスワードは{pw}です"),
        format!("    password '{pw}'"),
        format!("    password(\"{pw}\")"),
        format!("    password.set(\"{pw}\")"),
    ] {
        let found = scan_text(&text);
        assert_eq!(ids(&found), ["prose-password"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), pw, "{text}");
    }
    // A quoted literal in prose may be short and a word; a bare one must look random.
    let found = scan_text("The password for the user 'pyne-user' is 'pyne7x'.");
    assert_eq!(found[0].secret.expose_secret(), "pyne7x");
    for text in [
        "The password is stored in Vault.",
        "The password for the staging db is in 1Password.",
        "password for the db is rotated weekly",
        "The password manager we use is Bitwarden2024.",
        "Use the password manager for the staging box.",
        "the password (see 1Password) is kept there",
        "La contraseña es obligatoria",
        "Le mot de passe est incorrect",
        "A senha é obrigatória",
        "Das Passwort ist falsch",
        "パスワードは必須です",
        "The password for user 'postgres' is 'changeme'.",
        "    password 'changeme'",
        "    password project.findProperty(\"repoPassword\")",
        "    password System.getenv(\"REPO_PASSWORD\")",
        "check_password(user_input)",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
}

#[test]
fn compared_literals_and_passphrases_are_passwords() {
    for (text, secret) in [
        (
            "if username == \"jojoba\" and password == \"team10\":",
            "team10",
        ),
        ("if creds.Secret != \"open-sesame\" {", "open-sesame"),
        ("if user == 'a@b.io' and password =='logmein':", "logmein"),
        (
            "nextauth_secret=/sUPzFNG5nOzI+oLK+SdtV8HBm7vhSnWzqaNU0YcZW0=",
            "/sUPzFNG5nOzI+oLK+SdtV8HBm7vhSnWzqaNU0YcZW0=",
        ),
        (
            "djangoSecretKey := \"vbb(#g4nk!&wj%$any!-=kf#*=$1q6pm\"",
            "vbb(#g4nk!&wj%$any!-=kf#*=$1q6pm",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(ids(&found), ["generic-secret"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for (text, secret) in [
        ("password = 'open sesame'", "open sesame"),
        (
            "db_password: \"correct horse battery staple\"",
            "correct horse battery staple",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(ids(&found), ["prose-password"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "if password == \"\":",
        "if password != confirm_password:",
        "if (type == \"password\") {",
        "if token == \"Bearer\":",
        "if token != \"expired_token\":",
        "password = 'Enter your password'",
        "password: \"not set yet\"",
        "db_password: \"See the vault\"",
        "passwordHint: \"favourite color\"",
        "password_label: \"login code\"",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
}

#[test]
fn typed_sequences_routes_and_the_gap_between_literals_are_not_secrets() {
    for text in [
        "license_key: a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8NRAL",
        "--set newrelic-pixie.apiKey=px-api-a1b2c3d4-e5f6-g7h8-i8j0-k0l3m3n4o0p5",
        "--set pixie-chart.deployKey=px-dep-d4c3b2a1-f6e5-h8g7-j1i8-p5o0n5m3l2k1",
        "secret_access_key = 'abcdefg12346+FJQCK'",
        "put '/forgot-password' => \"cms/sites/passwords#update\", as: 'update_password'",
        "passwordLabel:\"Password:\",rememberMeLabel:\"Remember me:\"",
        "REACT_APP_FORGOT_PASSWORD=$REACT_APP_BASE_URL/classroom/#/forgot_password",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
    // A comment before a key is no route, and a hash after a word is no controller#action.
    for text in [
        "//mapboxgl.accessToken = 'tk.eyJ1IjoiYWNtZSIsImEiOiJjbDl4In0.Zq8vN3kL1pX7mW4tR6yB'",
        "JWT:\n  secret: \"development#product\"",
        "curl https://api.particle.io/v1/devices -d access_token=38bb7b318cc6898c80317decb34525844bc9db55",
    ] {
        assert_eq!(scan_text(text).len(), 1, "{text}");
    }
}

#[test]
fn secrets_in_prose_with_words_before_the_verb_or_the_value_first_are_found() {
    let tok = "Zq8vN3kL1pX7mW4tR6yBc2Hd9Jf5";
    for text in [
        format!("The jwt secret for the staging cluster is {tok} until Friday."),
        format!("El api key de pruebas es {tok}"),
        format!("La clé smtp pass de préproduction est {tok}"),
        format!("Der dd app key für Staging lautet: {tok}"),
        format!("La chiave api token di prova è {tok}"),
        format!("Use {tok} as the deploy token until the rotation."),
        format!("Usa {tok} como jwt secret hasta el viernes."),
        format!("Utiliser {tok} comme redis password."),
        format!("Bitte {tok} als dd app key verwenden."),
        format!("FYI the cloudflare api token ({tok}) expires next month"),
        format!("El azure devops pat de pruebas es {tok}"),
        format!("the smtp pass is {tok}"),
        format!("La clé smtp pass est {tok}"),
    ] {
        let found = scan_text(&text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), tok, "{text}");
    }
    // A base64 secret may start with `/`; a CJK copula may follow a key of several words.
    let aws = "/fklKAtMMo6cYUMl46pclEDrBR5Db4QYVIy8ak6J";
    let found = scan_text(&format!("El aws secret access key de pruebas es {aws}"));
    assert_eq!(found[0].secret.expose_secret(), aws);
    let found = scan_text(&format!("secret key base为 {tok}，下周轮换。"));
    assert_eq!(ids(&found), ["cjk-assignment"]);
    for text in [
        "The token rotation policy for staging is 90d-2024Q1x".to_string(),
        "The api key name for prod is deploy-key-v2-2024".to_string(),
        "The secret for staging is stored in Vault under ops/db".to_string(),
        "El token de pruebas es obligatorio desde 2024".to_string(),
        "the cache key for users is user:1234:profile:v2".to_string(),
        "the key fingerprint for the host is SHA256:Zq8vN3kL1pX7mW4tR6yBc2Hd9Jf5".to_string(),
        "the commit for the token fix is 3f9a2c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b".to_string(),
        "the public key for staging is Zq8vN3kL1pX7mW4tR6yBc2Hd9Jf5".to_string(),
        "Use EXAMPLEKEY1234567890ab as the api key in the docs.".to_string(),
        "the api key (see the vault entry) expires next month".to_string(),
        "Use the deploy key as the fallback.".to_string(),
        "Set Kubernetes1234 as the key namespace.".to_string(),
    ] {
        assert!(scan_text(&text).is_empty(), "{text}");
    }
}

#[test]
fn leetspeak_stand_ins_arns_and_config_key_names_are_not_secrets() {
    for text in [
        "password = 'super$ecret'",
        "\"password\": \"$super$ecret\",",
        "db_password: \"P@ssw0rd!\"",
        "IAMUserChangePassword = \"arn:aws:iam::aws:policy/IAMUserChangePassword\"",
    ] {
        assert!(scan_text(text).is_empty(), "{text}");
    }
    // A chosen password with a mark is still one; the `key="…"` of a config entry is a name.
    for (text, secret) in [
        ("password = 'busybox@'", "busybox@"),
        ("password = 'Pr0d$ecret-2024'", "Pr0d$ecret-2024"),
        (
            "<add key=\"ConnectionString_B2B\" value=\"Server=db,1433;User ID=b2b;Password=#gets0m3;Trusted_Connection=False\" />",
            "#gets0m3",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
}

#[test]
fn vendor_tokens_with_a_prefix_are_found_in_prose_without_a_keyword() {
    for (text, rule) in [
        (
            "Ops said to use ddp_J7NScUykT8C8UBkkpdhiG37LeXSyYV4g6snR for the nightly job.",
            "deno-deploy-token",
        ),
        (
            "部署时使用 dnkey-AHMMVAFIBF7M2EZMFJLCDRJRCH-ZPKCXFWHX4NZMBYVA3HNO4RUFTSGDBY37WPE3OGZXXISKQBDLQKH 这个值。",
            "defined-networking-key",
        ),
        (
            "Wir nutzen sgp_MjaddCnYysNa9ZwsjEJri9fVJsSheACjTJWYyL4ZkQTrXM4MFwg7drHilZO0fkXY im CI.",
            "segment-public-api-token",
        ),
        (
            "crawler uses fc-4cf43b7e467331322b30e6b270860e80 now",
            "firecrawl-api-key",
        ),
        (
            "scanner: hawk.9gHZAd5qE2uM3oOdRrit.cZlwY5z7a46t92gbuCpA",
            "stackhawk-api-key",
        ),
        (
            "the AppSync key da2-u5wz1nfrt3332ylvzdufku8bmn rotates monthly",
            "aws-appsync-api-key",
        ),
        (
            "flags: sdk-4462ebfc-5f91-4ef0-9cfb-ac6e7687a66e (staging)",
            "launchdarkly-key",
        ),
        (
            "seller token amzn.mws.76b67451-80b6-4386-969c-803601a5ba50",
            "amazon-mws-token",
        ),
        (
            "bank link: access-production-558298e2-14b0-44d7-9acd-8acde5f6db1d",
            "plaid-access-token",
        ),
        (
            "kubeadm join 10.0.0.5:6443 --token 58m0r3.pzfqrjlbyi35hgyz --discovery-token-unsafe-skip-ca-verification",
            "kubernetes-bootstrap-token",
        ),
        (
            "the airtable api key is keyTxQ5i8OfvC9MMW",
            "airtable-api-key",
        ),
    ] {
        assert_eq!(ids(&scan_text(text)), [rule], "{text}");
    }
    for text in [
        "request api-4462ebfc-0000-0000-0000-000000000000 failed",
        "kubeadm join 10.0.0.5:6443 --token abcdef.0123456789abcdef",
        "see RFC-1234 and fc-00000000000000000000000000000000",
        "the airtable base key is keyword-based",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn a_uuid_key_beside_a_uuid_vendor_is_found_and_an_id_is_not() {
    assert_eq!(
        ids(&scan_text(
            "SAUCE_ACCESS_KEY=cd60d071-da24-4f70-b57e-c6d92fb33a7e"
        )),
        ["generic-secret"]
    );
    assert!(scan_text("SAUCE_USERNAME=cd60d071-da24-4f70-b57e-c6d92fb33a7e").is_empty());
}

#[test]
fn typed_declarations_in_code_hold_their_value() {
    let secret = "Xk8vR2mQ9tLp4wZs7nB3cF6hJ1dG5yKa";
    for text in [
        format!("const apiKey: string = '{secret}';"),
        format!("private readonly clientSecret: string = \"{secret}\";"),
        format!("var apiToken string = \"{secret}\""),
        format!("val apiKey: String = \"{secret}\""),
        format!("let apiSecret: String = \"{secret}\""),
        format!("const API_KEY: &str = \"{secret}\";"),
        format!("static DB_PASSWORD: &'static str = \"{secret}\";"),
        format!("public const string ApiKey = \"{secret}\";"),
        format!("API_KEY: str = \"{secret}\""),
        format!("smtp:\n  pass: {secret}"),
        format!("API_TOKEN := {secret}"),
    ] {
        let found = scan_text(&text);
        assert_eq!(ids(&found), ["generic-secret"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "const tokenType: string = \"Bearer\";",
        "const apiKey: string = process.env.API_KEY;",
        "maxTokens: number = 4096",
        "public const string PasswordField = \"password\";",
        "offendingToken:Token=None, deadEndConfigs:ATNConfigSet=None, ctx:ParserRuleContext=None):",
        "_TokenEater: TypeAlias = Callable[[int, str, _Coord, _Coord, str], object]",
        "            - pass: BatchedProviderA -> 1",
    ] {
        let found = scan_text(text);
        assert!(found.is_empty(), "{text} gave {:?}", ids(&found));
    }
}

#[test]
fn markdown_table_cells_under_a_secret_column_are_judged_as_its_values() {
    let a = "Kq8vR2mQ9tLp4wZs";
    let b = "Zs7nB3cF6hJ1dG5yKaXk8vR2mQ9tLp4w";
    let text = format!(
        "| service | user | password |\n|---|---|---|\n| grafana | admin | {a} |\n| ci | bot | `{b}` |\n\nafter the table: {a}x is prose\n"
    );
    let found = scan_text(&text);
    let secrets: Vec<&str> = found.iter().map(|f| f.secret.expose_secret()).collect();
    assert_eq!(secrets, [a, b], "{text}");
    assert_eq!((found[0].line, found[1].line), (3, 4));
    // The same table with CRLF line breaks, and one that ends the text without a break.
    let crlf = text.replace('\n', "\r\n");
    let found = scan_text(&crlf);
    let secrets: Vec<&str> = found.iter().map(|f| f.secret.expose_secret()).collect();
    assert_eq!(secrets, [a, b], "{crlf:?}");
    let last = format!("| token |\r\n|---|\r\n| {b} |");
    assert_eq!(ids(&scan_text(&last)), ["generic-secret"]);
    for text in [
        "| Token | Meaning |\n|--|--|\n| `glpat-` | GitLab personal access token prefix |\n| `ghp_` | GitHub |",
        "| key | default |\n| --- | ---: |\n| max_tokens | 4096 |\n| cache_key | user:1234:profile |",
        "| user | password |\n|---|---|\n| admin | ******** |\n| ops | <see vault> |\n| ci | ${CI_PASSWORD} |",
        "| password | notes |\n|---|---|\n| required | rotate yearly |",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn registry_logins_and_redis_cli_passwords_on_a_command_line_are_found() {
    for (text, secret) in [
        (
            "docker login -u deploy -p Xk8vR2mQ9tLp4wZs7nB3 registry.corp.io",
            "Xk8vR2mQ9tLp4wZs7nB3",
        ),
        (
            "podman login quay.io -u bot -p 'Xk8vR2mQ9tLp4wZs7nB3'",
            "Xk8vR2mQ9tLp4wZs7nB3",
        ),
        (
            "redis-cli -h cache.internal -a Xk8vR2mQ9tLp4wZs7nB3 ping",
            "Xk8vR2mQ9tLp4wZs7nB3",
        ),
        (
            "echo \"Xk8vR2mQ9tLp4wZs7nB3cF6h\" | docker login ghcr.io -u ops --password-stdin",
            "Xk8vR2mQ9tLp4wZs7nB3cF6h",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "echo $CR_PAT | docker login ghcr.io -u ops --password-stdin",
        "echo \"${{ secrets.GITHUB_TOKEN }}\" | docker login ghcr.io -u ops --password-stdin",
        "docker login -u deploy -p $REGISTRY_PASSWORD registry.corp.io",
        "redis-cli -a \"$REDIS_PASSWORD\" ping",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn short_random_values_are_judged_by_what_their_length_allows() {
    // 8 to 11 random chars rarely reach 3.0 bits per char (all 8 would have to differ).
    for (text, secret) in [
        ("DB_PASSWORD=Ps9YddVP", "Ps9YddVP"),
        ("A senha do banco é Ps9YddVPD7s", "Ps9YddVPD7s"),
        ("smtp_pass: k7Qk2mQx9", "k7Qk2mQx9"),
        ("db_password: abcQ=def123xyZ", "abcQ=def123xyZ"),
        ("DB_PASSWORD: Xk9=mP2vL8=qR4", "Xk9=mP2vL8=qR4"),
        (
            "El django secret key de pruebas es to(eg-ugl16dflho1n^678y1$by(shm!!*2ym_&ryya6!%xcu-",
            "to(eg-ugl16dflho1n^678y1$by(shm!!*2ym_&ryya6!%xcu-",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(found.len(), 1, "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "let mut base: Url = \"moz://foo:bar@servo/baz\".parse().unwrap();",
        "const SHORT_PAT: &'static str = \"some/**/needle.txt\";",
        "static uint32_t token_next = 0x5eadbeef;",
        "let boxed_pat: Box<Pat> = parse_quote!(Some(false) | None);",
        "GENERATE[html/man3/EVP_BytesToKey.html]=man3/EVP_BytesToKey.pod",
        "DB_PASSWORD=aaaabbbb",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn a_key_body_holding_a_mixed_case_x_run_is_still_a_key() {
    let block = "-----BEGIN PRIVATE KEY-----\nPE0auGV6JxcRBWaM6krM/cMPOIWJXEbHLNMbQzbx7QbUpM5CzEUxKk9KoN679drZ\n4V8W2JtWq2OBPy0/eUcW8e/R3fGM10wB6EqSxXXx2cOCMWlsmUlucyk7TkLQzAsU\nC3ag/0eEiKV4s1cl/6wyEWnpM6KhcEYvW2+/llKijjLnUhnWD7U6R8OVndw8H1Tv\nLUp1BgpbshXl9vRJvKz1UwRSSVL3J8amadzx3p6u0RNLnjHkcUoiQGGZ9ihUkgJd\nC3QrXcjNXP9Kkhhw+zVs6jUdDw8OvCuYrfgmmwqLfZU/Uv8JH9WHSsb/aKb8M3oz\nPXBpfQk4a3E/peNt1Dd/MAgJQUA+hjXFO2reQiRTDeTtUJAd/ZFn9uanp97Kt74K\nfmMXbjXu35Lm8ewq\n-----END PRIVATE KEY-----";
    assert_eq!(ids(&scan_text(block)), ["private-key"]);
    let json = format!("{{\"private_key\": \"{}\\n\"}}", block.replace('\n', "\\n"));
    assert_eq!(ids(&scan_text(&json)), ["private-key"], "{json}");
    let stand_in = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n-----END PRIVATE KEY-----";
    assert!(scan_text(stand_in).is_empty());
}

#[test]
fn a_value_before_a_key_phrase_of_four_words_is_found() {
    let text = "Use Yi5-QqKbZzoVHq6GvBH-nfgk1e1rPZZSp07/ey6 as the azure devops client secret until Friday.";
    let found = scan_text(text);
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(
        found[0].secret.expose_secret(),
        "Yi5-QqKbZzoVHq6GvBH-nfgk1e1rPZZSp07/ey6"
    );
    assert!(
        scan_text("Use the staging cluster name as the new deploy key label prefix.").is_empty()
    );
    let text = "- Utiliser dzFEtmS6r5M8ZwlPpjyipqr+dnjf0S+L1+wT9NE comme internal pat.";
    assert_eq!(ids(&scan_text(text)), ["prose-secret"], "{text}");
}

#[test]
fn a_base64_encoded_jwt_and_a_twitter_user_token_are_found() {
    let text = "apiVersion: v1\nkind: Secret\ndata:\n  token: ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lKamFTMWliM1FpTENKcFlYUWlPakUzTXpBd01EQXdNREI5LlFtM3ZYOGtMcDJSdFo3eVdjNE5mSDFkSjZzQTl1RTBnVGJZeEtvUGk1Vnc=\n";
    assert_eq!(ids(&scan_text(text)), ["jwt-base64"], "{text}");
    for text in [
        "data: ZXlKaGJHY2lPaUpJVXpJMU5pSjkgaXMgYSBoZWFkZXIgb25seSwgbm8gY2xhaW1zIGhlcmUgYXQgYWxs",
        "data: ZXlKaGJHY2lPaUpJVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0o5LmV5SnpkV0lpT2lKamFTMWliM1FpZlEueHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
    let text = "twitter access token 1364879021374265344-Qm3vX8kLp2RtZ7yWc4NfH1dJ6sA9uE0gTbYxKoPi";
    assert_eq!(ids(&scan_text(text)), ["twitter-access-token"], "{text}");
    assert!(
        scan_text("see twitter.com/teammem/status/1364879021374265344 for the thread").is_empty()
    );
}

/// The keyword search skips plain prose (`plain.rs`): what can stand in it is still found,
/// deep inside long plain paragraphs, and plain words after a flag are not a password.
#[test]
fn secrets_inside_long_plain_prose_are_found() {
    let prose = "We rotate the token and the secret key every week and tell the team. ".repeat(40);
    let cases = [
        ("machine build login ci password sunshine", "netrc-password"),
        (
            "aws secret access key vydnthykvkzqqywmmryymujhsiwgdwhqjpuffxlq",
            "aws-secret-access-key",
        ),
        ("DB_PASSWORD=whiteduke", "generic-secret"),
        ("the password is Xk9vTq2mWz", "generic-secret"),
    ];
    for (line, rule) in cases {
        for text in [
            format!("{prose}\n{line}\n{prose}"),
            format!("{line}\n{prose}"),
            format!("{prose}{line}"),
        ] {
            assert_eq!(ids(&scan_text(&text)), vec![rule], "{line}");
        }
    }
    assert!(scan_text(&prose).is_empty());
    let flags = "use the --username and --password options instead of via the URL.";
    assert!(scan_text(flags).is_empty());
    // A long gap between the Jenkins prompt and its password stays within one window.
    let jenkins = format!(
        "{prose}\nPlease use the following password to proceed to installation:\n\n{}\n",
        "ba7a85747a647a2b80e1e7569f4068bd"
    );
    assert_eq!(ids(&scan_text(&jenkins)), vec!["jenkins-initial-password"]);
}

/// `curl -u` with no user (a token as the password) or with the password quoted apart from
/// the user; a uid:gid pair and a variable are not passwords.
#[test]
fn a_curl_user_password_with_no_user_or_quoted_alone_is_found() {
    for (text, secret) in [
        (
            r#"curl -u ":Xk9vTq2mWzR4" https://registry.example.com/v2/"#,
            "Xk9vTq2mWzR4",
        ),
        (
            "curl --user kevin:'Xk9vTq2m!Wz' https://ci.example.com/api/json",
            "Xk9vTq2m!Wz",
        ),
        (
            "curl -u :Xk9vTq2mWzR4 https://registry.example.com/v2/",
            "Xk9vTq2mWzR4",
        ),
    ] {
        let found = scan_text(text);
        assert_eq!(ids(&found), ["curl-user-password"], "{text}");
        assert_eq!(found[0].secret.expose_secret(), secret, "{text}");
    }
    for text in [
        "docker run -u 1000:1000 image",
        r#"curl -u ":$REGISTRY_TOKEN" https://registry.example.com/v2/"#,
        "curl -u \"$USER:$PASSWORD\" https://ci.example.com/",
    ] {
        assert!(
            scan_text(text).is_empty(),
            "{text} gave {:?}",
            ids(&scan_text(text))
        );
    }
}

#[test]
fn a_uuid_under_an_api_key_name_or_header_is_a_key_and_under_an_id_name_is_not() {
    let u = "cd60d071-da24-4f70-b57e-c6d92fb33a7e";
    for text in [
        format!("curl -H \"X-API-Key: {u}\" https://jobs.internal/v2"),
        format!("INTERNAL_API_KEY={u}"),
        format!("headers: {{\"x-auth-token\": \"{u}\"}}"),
        format!("billing:\n  apiKey: {u}"),
    ] {
        assert_eq!(scan_text(&text).len(), 1, "{text}");
    }
    for text in [
        format!("curl -H \"Idempotency-Key: {u}\" https://api.internal/charges"),
        format!("X-Request-Id: {u}"),
        format!("idempotency_key: {u}"),
        format!("partition_key = {u}"),
        format!("auth_token_id = {u}"),
    ] {
        assert!(scan_text(&text).is_empty(), "{text}");
    }
}

#[test]
fn vendor_tokens_added_in_session_14_are_found_and_their_placeholders_are_not() {
    let found = |text: &str| ids(&scan_text(text));
    assert_eq!(
        found("sv_licenseKey \"cfxk_yQ3nW8rT1vB6mK2pL9sD_Xa4Fh7\""),
        ["cfxre-server-key"]
    );
    assert!(found("sv_licenseKey \"cfxk_xxxxxxxxxxxxxxxxxxxx_xxxxx\"").is_empty());
    assert_eq!(
        found(
            "curl 'https://graph.facebook.com/debug_token?access_token=911602140448729%7CAY-lRJZq9BoDLobvAiP25L7RcMg'"
        ),
        ["facebook-app-token"]
    );
    assert!(found("facebook page id 911602140448729 | owner: marketing").is_empty());
    assert_eq!(
        found("DEVIN_TOKEN=cog_l5osrifmypvazi4j3yko52gj6jfj7qprsmy4lrcf27jas4szffha"),
        ["devin-service-user-token"]
    );
    assert!(found("apk_release_path = build/outputs/apk/app-release.apk").is_empty());
    assert_eq!(found("key id LTAI5tQm8xRv2Nw7"), ["alibaba-access-key-id"]);
}
