//! Digests and comparisons: SHA-256 of tokens and codes (what the store keeps), HMAC-SHA256
//! with the server secret for the short email codes and refresh successors, PKCE S256, and
//! constant-time equality. Generating secrets is [`crate::random`]'s.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Lowercase hex SHA-256 of `value`: the only form in which tokens and codes are stored.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// Lowercase hex HMAC-SHA256 of the parts (joined with a 0 byte) under `key`.
pub fn hmac_hex(key: &[u8], parts: &[&str]) -> String {
    hex::encode(hmac_bytes(key, parts))
}

pub(crate) fn hmac_bytes(key: &[u8], parts: &[&str]) -> [u8; 32] {
    // HMAC accepts keys of any length; the error branch cannot happen.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return [0; 32];
    };
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            mac.update(&[0]);
        }
        mac.update(part.as_bytes());
    }
    mac.finalize().into_bytes().into()
}

/// Equality that takes the same time wherever the inputs first differ.
pub fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Base64url without padding.
pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether `s` is a PKCE code challenge: 43 base64url characters (a SHA-256 digest).
pub fn is_s256_challenge(s: &str) -> bool {
    s.len() == 43
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The S256 code challenge of a PKCE verifier (what a client sends to the authorize page).
pub fn pkce_challenge(verifier: &str) -> String {
    b64url(&Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` (RFC 7636 §4.1: 43–128 unreserved characters) hashes to `challenge`.
pub fn pkce_s256_matches(verifier: &str, challenge: &str) -> bool {
    let shape = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    shape && constant_time_eq(&pkce_challenge(verifier), challenge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_known_vector() {
        // Computed independently (Python hashlib + base64.urlsafe_b64encode).
        let verifier = "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "ngF5GsXcbwljx6u133FFr3Xht9xooA_DuaX_3QwODtc";
        assert!(is_s256_challenge(challenge));
        assert!(pkce_s256_matches(verifier, challenge));
        assert!(!pkce_s256_matches(
            "dBjftJeZ4CVP-mJ92K27uhbUJU1p1r_wW1gFWFOEjXj",
            challenge
        ));
        assert!(!pkce_s256_matches("short", challenge));
    }

    #[test]
    fn digests_and_equality() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(hmac_hex(b"k", &["a", "bc"]), hmac_hex(b"k", &["ab", "c"]));
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "ab"));
    }
}
