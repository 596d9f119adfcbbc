//! Unit tests of the judge: entropy, the token checksums (CRC-32, base62) and names not read as
//! random values.

use super::formats::*;
use super::lookalike::*;

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
