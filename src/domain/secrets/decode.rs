//! Structure-aware decoding for the checks a regex cannot make: base64 bodies, the
//! `openssh-key-v1` container (to tell an unencrypted OpenSSH key from a passphrase-protected
//! one), `user:password` pairs inside base64 (`Authorization: Basic`, docker `auths.*.auth`) and
//! key blocks written inside quoted strings with `\n` escapes.
//!
//! Every function is total: any input gives an answer, never a panic.

/// The value of one base64 char (standard or URL-safe alphabet), `None` for any other byte.
fn sextet(b: u8) -> Option<u32> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    } as u32)
}

/// Decodes base64 (standard or URL-safe, padding optional). `None` when a byte is outside the
/// alphabet, padding is followed by data, or the length cannot be a base64 encoding.
pub(crate) fn base64(text: &[u8]) -> Option<Vec<u8>> {
    let data = match text.iter().position(|&b| b == b'=') {
        Some(pad) => {
            if text[pad..].iter().any(|&b| b != b'=') || text.len() - pad > 2 {
                return None;
            }
            &text[..pad]
        }
        None => text,
    };
    if data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &b in data {
        acc = (acc << 6) | sextet(b)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// What the `openssh-key-v1` container says about a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenSshKey {
    /// Cipher `none`: the private key is in the clear.
    Unencrypted,
    /// Any other cipher: the key is protected by a passphrase.
    Encrypted,
}

/// Reads one SSH wire-format string (`u32` big-endian length, then bytes) at `*at`.
fn ssh_string<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len_bytes = bytes.get(*at..at.checked_add(4)?)?;
    let len = u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
    let start = *at + 4;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    let value = bytes.get(start..end)?;
    *at = end;
    Some(value)
}

/// Parses the decoded body of an `-----BEGIN OPENSSH PRIVATE KEY-----` block: the
/// `openssh-key-v1\0` magic, then the cipher name, KDF name, KDF options, the number of keys
/// and the first public key, as OpenSSH's `PROTOCOL.key` lays them out. `None` when the bytes
/// are not such a container.
pub(crate) fn openssh_key(decoded: &[u8]) -> Option<OpenSshKey> {
    const MAGIC: &[u8] = b"openssh-key-v1\0";
    let rest = decoded.strip_prefix(MAGIC)?;
    let mut at = 0;
    let cipher = ssh_string(rest, &mut at)?;
    let kdf = ssh_string(rest, &mut at)?;
    ssh_string(rest, &mut at)?;
    let count = rest.get(at..at + 4)?;
    at += 4;
    if u32::from_be_bytes([count[0], count[1], count[2], count[3]]) == 0 {
        return None;
    }
    ssh_string(rest, &mut at)?;
    // The private section follows; a container whose public part parsed is real enough.
    match (cipher, kdf) {
        (b"none", b"none") => Some(OpenSshKey::Unencrypted),
        (b"none", _) => None,
        _ => Some(OpenSshKey::Encrypted),
    }
}

/// Decodes `text` as base64 of `user:password` (printable ASCII, a non-empty user and a
/// password of at least 3 chars); returns the password.
pub(crate) fn basic_credentials(text: &[u8]) -> Option<String> {
    let decoded = base64(text)?;
    if decoded.is_empty() || !decoded.iter().all(|&b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    let colon = decoded.iter().position(|&b| b == b':')?;
    let password = &decoded[colon + 1..];
    (colon > 0 && password.len() >= 3).then(|| String::from_utf8_lossy(password).into_owned())
}

/// A key block's text with the escapes of a quoted string (`\n`, `\r`, `\\n`, `\t`) turned
/// into the chars they stand for, so a key written inside JSON or an env string reads like a
/// key file.
pub(crate) fn unescape_newlines(block: &str) -> String {
    let mut out = String::with_capacity(block.len());
    let mut rest = block;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = rest[i..].trim_start_matches('\\');
        match after.as_bytes().first() {
            Some(b'n') => out.push('\n'),
            Some(b'r') => {}
            Some(b't') => out.push(' '),
            _ => {
                // A lone backslash (a shell line continuation): drop it.
                rest = after;
                continue;
            }
        }
        rest = &after[1..];
    }
    out.push_str(rest);
    out
}

/// The base64 body of a key block: the lines between its BEGIN and END lines, each stripped of
/// what quoting and indentation put around it (YAML indentation, `> ` quotes, `#` or `//`
/// comments, string quotes and commas), with `Key: value` header lines left out.
pub(crate) fn key_block_body(block: &str) -> String {
    let text = unescape_newlines(block);
    let mut body = String::new();
    for line in text.lines() {
        // `+` and `/` are base64 chars: only `// ` comments and ` +` concatenation are cut.
        let line = line.trim();
        let line = line.strip_prefix("// ").unwrap_or(line);
        let line = line.strip_suffix(" +").unwrap_or(line);
        let line = line
            .trim_start_matches(['>', '#', '*', ' ', '\t', '"', '\'', '|', '`'])
            .trim_end_matches(['"', '\'', ',', '\\', ' ', '\t', ';', '`']);
        if line.contains("-----") || line.contains(':') {
            continue;
        }
        body.extend(line.chars().filter(|c| !c.is_whitespace()));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_values() {
        assert_eq!(base64(b"aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(base64(b"aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            base64(b"YWRtaW46czNjcjN0").as_deref(),
            Some(&b"admin:s3cr3t"[..])
        );
        assert_eq!(base64(b"a=b"), None);
        assert_eq!(base64(b"abcde"), None);
        assert_eq!(base64(b"ab*d"), None);
    }

    #[test]
    fn basic_credentials_need_a_user_and_a_password() {
        assert_eq!(
            basic_credentials(b"YWRtaW46czNjcjN0").as_deref(),
            Some("s3cr3t")
        );
        // `:s3cr3t` has no user; `admin` has no colon.
        assert_eq!(basic_credentials(b"OnMzY3IzdA=="), None);
        assert_eq!(basic_credentials(b"YWRtaW4="), None);
    }

    #[test]
    fn escaped_newlines_become_lines() {
        assert_eq!(unescape_newlines(r"a\nb\\nc\r\nd"), "a\nb\nc\nd");
        assert_eq!(unescape_newlines("trailing\\"), "trailing");
    }

    #[test]
    fn key_bodies_lose_their_quoting() {
        let block = "-----BEGIN X-----\n  > \"QUJD\",\n  # REVG\n+/9A\n\"/+Rx\" +\nProc-Type: 4\n-----END X-----";
        assert_eq!(key_block_body(block), "QUJDREVG+/9A/+Rx");
    }
}
