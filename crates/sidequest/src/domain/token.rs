//! Play-token material: 160 random bits shown once, only the SHA-256 digest kept.

use sha2::{Digest, Sha256};

/// The prefix that marks a Sidequest play token (so a leaked one is recognisable).
pub const PLAY_TOKEN_PREFIX: &str = "sqp_";
/// A play token lives 14 days.
pub const PLAY_TOKEN_TTL_MS: i64 = 14 * 24 * 60 * 60 * 1000;

/// The prefix of an author personal token (for `/mcp`).
pub const AUTHOR_TOKEN_PREFIX: &str = "sqa_";
/// Author tokens live 90 days unless revoked.
pub const AUTHOR_TOKEN_TTL_MS: i64 = 90 * 24 * 60 * 60 * 1000;
/// A browser session lives 7 days.
pub const SESSION_TTL_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Formats 20 random bytes as an author token.
pub fn format_author_token(random: [u8; 20]) -> String {
    format!("{AUTHOR_TOKEN_PREFIX}{}", hex::encode(random))
}

/// Whether `token` has the exact shape of an author token.
pub fn is_author_token(token: &str) -> bool {
    token
        .strip_prefix(AUTHOR_TOKEN_PREFIX)
        .is_some_and(is_hex40)
}

fn is_hex40(rest: &str) -> bool {
    rest.len() == 40
        && rest
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Formats 20 random bytes as a play token.
pub fn format_play_token(random: [u8; 20]) -> String {
    format!("{PLAY_TOKEN_PREFIX}{}", hex::encode(random))
}

/// Whether `token` has the exact shape of a play token (prefix and 40 lowercase hex digits).
pub fn is_play_token(token: &str) -> bool {
    token.strip_prefix(PLAY_TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == 40
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The digest stored and looked up for a token.
pub fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shape_round_trips() {
        let t = format_play_token([0xab; 20]);
        assert_eq!(t.len(), 44);
        assert!(is_play_token(&t));
        assert!(!is_play_token(&t[..43]));
        assert!(!is_play_token(&t.to_uppercase()));
        assert!(!is_play_token(
            "sqa_abababababababababababababababababababab"
        ));
        assert_eq!(digest(&t).len(), 64);
    }

    #[test]
    fn the_digest_is_sha256_in_lowercase_hex() {
        // FIPS 180-2's first example.
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
