//! Any bytes through the secret scanner, raw and under a table header (its table pass), and
//! through its decoders: as an OpenSSH key block's body (base64 of
//! an `openssh-key-v1` container, so the container parser is reached), as a JSON string with
//! `\n` escapes, as base64 `user:password` after `"auth":` and as a base64 PEM block. Scanning
//! never panics and every finding's range holds its secret.
#![no_main]

use libfuzzer_sys::fuzz_target;
use secrecy::ExposeSecret;
use teammem::secrets;

fn base64(bytes: &[u8]) -> String {
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

fn check(text: &str) {
    for f in secrets::scan_text(text) {
        assert_eq!(&text[f.start..f.end], f.secret.expose_secret());
    }
}

fuzz_target!(|bytes: &[u8]| {
    let mut container = b"openssh-key-v1\0".to_vec();
    container.extend(bytes);
    let body = base64(&container);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(70)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    let block = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
        lines.join("\n")
    );
    check(&block);
    check(&format!("{{\"private_key\": \"{}\"}}", block.replace('\n', "\\n")));
    let text = String::from_utf8_lossy(bytes);
    check(&text);
    // Under a table header, so the table pass reads the bytes as rows (CRLF included).
    check(&format!("| user | password |\r\n|---|---|\r\n{text}"));
    check(&format!("-----BEGIN PRIVATE KEY-----\n{text}\n-----END PRIVATE KEY-----"));
    check(&format!("{{\"auths\": {{\"r\": {{\"auth\": \"{}\"}}}}}}", base64(bytes)));
    check(&format!("Authorization: Basic {}", base64(bytes)));
    check(&format!("client-key-data: LS0tLS1CRUdJTi{}", base64(bytes)));
});
