//! `battles_query`'s cursors (SURFACE §6.6): opaque base64url tokens, HMAC-SHA256-signed over
//! the tool, a fingerprint of the call's filters, the last `(battle_time, battle_id)` of the
//! page and the issue time. Reading one refuses a forged or truncated token, one older than
//! 24 hours and one replayed with other filters, each with its own message. The key is
//! `services::CursorKey`'s; which filters a fingerprint covers is the tool's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::Millis;
use crate::services::CursorKey;

/// A cursor is refused this long after it was issued.
pub const MAX_AGE_MS: Millis = 24 * 3_600_000;
/// The format's version byte.
const VERSION: u8 = 1;
/// version, issued_at, battle_time, battle_id (32), fingerprint (16).
const BODY_LEN: usize = 1 + 8 + 8 + 32 + 16;
/// The body and its 32-byte MAC.
const TOKEN_LEN: usize = BODY_LEN + 32;
/// The longest encoded cursor (the schema's `maxLength`).
pub const MAX_CHARS: u64 = 200;

/// Where a page ended: the next page starts strictly after it (newest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// The last battle's time.
    pub battle_time: Millis,
    /// The last battle's id (64 hex).
    pub battle_id: String,
}

/// Why a cursor is refused; each is `bad_request` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorError {
    /// Not a cursor this server issued (bad encoding, length, version or signature).
    #[error("the cursor is not one Elixir issued")]
    Forged,
    /// Issued more than 24 hours ago.
    #[error("the cursor is more than 24 hours old")]
    Expired,
    /// Issued for other filters or another subject.
    #[error("the cursor was issued for other filters")]
    OtherFilters,
}

/// The fingerprint of a call's filters: the first 16 bytes of SHA-256 over the tool name and
/// the canonical filter text, NUL-separated.
pub fn fingerprint(tool: &str, filters: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(tool.as_bytes())
        .chain_update([0u8])
        .chain_update(filters.as_bytes())
        .finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

fn mac(key: &CursorKey, tool: &str, body: &[u8]) -> [u8; 32] {
    key.sign(&[tool.as_bytes(), &[0u8], body])
}

/// Issues the cursor of a page that ended at `at`, for `tool` and `fingerprint`, at `now`.
/// `None` when the battle id is not 64 hex (never for a recorded battle).
pub fn issue(
    key: &CursorKey,
    tool: &str,
    fingerprint: &[u8; 16],
    at: &Position,
    now: Millis,
) -> Option<String> {
    let id = hex::decode(&at.battle_id).ok().filter(|b| b.len() == 32)?;
    let mut body = Vec::with_capacity(TOKEN_LEN);
    body.push(VERSION);
    body.extend_from_slice(&now.to_be_bytes());
    body.extend_from_slice(&at.battle_time.to_be_bytes());
    body.extend_from_slice(&id);
    body.extend_from_slice(fingerprint);
    let tag = mac(key, tool, &body);
    body.extend_from_slice(&tag);
    Some(URL_SAFE_NO_PAD.encode(body))
}

fn int(bytes: &[u8]) -> Millis {
    let mut b = [0u8; 8];
    b.copy_from_slice(bytes);
    Millis::from_be_bytes(b)
}

/// Reads a cursor `tool` issued: checked signature first (so nothing of a forged token is
/// believed), then age at `now`, then the filters.
pub fn read(
    key: &CursorKey,
    tool: &str,
    fingerprint: &[u8; 16],
    token: &str,
    now: Millis,
) -> Result<Position, CursorError> {
    let raw = URL_SAFE_NO_PAD
        .decode(token.trim())
        .map_err(|_| CursorError::Forged)?;
    if raw.len() != TOKEN_LEN || raw[0] != VERSION {
        return Err(CursorError::Forged);
    }
    let (body, tag) = raw.split_at(BODY_LEN);
    if !bool::from(mac(key, tool, body).ct_eq(tag)) {
        return Err(CursorError::Forged);
    }
    let issued = int(&body[1..9]);
    if now - issued > MAX_AGE_MS {
        return Err(CursorError::Expired);
    }
    if body[49..65] != fingerprint[..] {
        return Err(CursorError::OtherFilters);
    }
    Ok(Position {
        battle_time: int(&body[9..17]),
        battle_id: hex::encode(&body[17..49]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NOW: Millis = 1_767_225_600_000;

    fn key() -> CursorKey {
        CursorKey::derive(b"a test secret of at least 32 bytes!!")
    }

    fn at() -> Position {
        Position {
            battle_time: NOW - 5_000,
            battle_id: "ab".repeat(32),
        }
    }

    #[test]
    fn a_cursor_reads_back_where_its_page_ended() {
        let fp = fingerprint("battles_query", "mode=all");
        let token = issue(&key(), "battles_query", &fp, &at(), NOW).unwrap();
        assert!(token.len() as u64 <= MAX_CHARS);
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(
            read(&key(), "battles_query", &fp, &token, NOW + 1),
            Ok(at())
        );
        // exactly 24 hours is still good; one millisecond more is not
        assert!(read(&key(), "battles_query", &fp, &token, NOW + MAX_AGE_MS).is_ok());
        assert_eq!(
            read(&key(), "battles_query", &fp, &token, NOW + MAX_AGE_MS + 1),
            Err(CursorError::Expired)
        );
    }

    #[test]
    fn forged_and_replayed_cursors_are_refused() {
        let fp = fingerprint("battles_query", "mode=all");
        let token = issue(&key(), "battles_query", &fp, &at(), NOW).unwrap();
        let other = fingerprint("battles_query", "mode=ladder");
        assert_eq!(
            read(&key(), "battles_query", &other, &token, NOW),
            Err(CursorError::OtherFilters)
        );
        // another tool, another key, garbage, a flipped byte
        assert_eq!(
            read(&key(), "elixir_timeline", &fp, &token, NOW),
            Err(CursorError::Forged)
        );
        let stranger = CursorKey::derive(b"another secret of at least 32 bytes");
        assert_eq!(
            read(&stranger, "battles_query", &fp, &token, NOW),
            Err(CursorError::Forged)
        );
        for bad in ["", "not a cursor!", "AAAA", &token[..token.len() - 2]] {
            assert_eq!(
                read(&key(), "battles_query", &fp, bad, NOW),
                Err(CursorError::Forged),
                "{bad}"
            );
        }
        let mut raw = URL_SAFE_NO_PAD.decode(&token).unwrap();
        raw[10] ^= 1;
        let tampered = URL_SAFE_NO_PAD.encode(raw);
        assert_eq!(
            read(&key(), "battles_query", &fp, &tampered, NOW),
            Err(CursorError::Forged)
        );
    }

    #[test]
    fn the_key_is_derived_never_the_secret() {
        let secret = b"a test secret of at least 32 bytes!!";
        let derived = CursorKey::derive(secret);
        assert_ne!(&derived.sign(&[]), &[0u8; 32]);
        assert_eq!(derived, CursorKey::derive(secret));
        assert_ne!(
            derived,
            CursorKey::derive(b"another secret of at least 32 bytes")
        );
        assert!(!format!("{derived:?}").contains("test secret"));
    }

    proptest! {
        #![proptest_config(testkit::prop::config())]

        #[test]
        fn any_position_round_trips(time in 0i64..4_000_000_000_000, id in proptest::array::uniform32(any::<u8>()), filters in ".{0,40}") {
            let fp = fingerprint("battles_query", &filters);
            let pos = Position { battle_time: time, battle_id: hex::encode(id) };
            let token = issue(&key(), "battles_query", &fp, &pos, NOW).unwrap();
            prop_assert_eq!(read(&key(), "battles_query", &fp, &token, NOW), Ok(pos));
        }

        #[test]
        fn any_mutation_of_an_issued_cursor_is_refused(
            time in 0i64..4_000_000_000_000,
            id in proptest::array::uniform32(any::<u8>()),
            at in any::<proptest::sample::Index>(),
            kind in 0u8..5,
            replacement in prop_oneof![
                proptest::sample::select(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".to_vec()).prop_map(char::from),
                any::<char>(),
            ],
        ) {
            let fp = fingerprint("battles_query", "mode=all");
            let pos = Position { battle_time: time, battle_id: hex::encode(id) };
            let token = issue(&key(), "battles_query", &fp, &pos, NOW).unwrap();
            let mut chars: Vec<char> = token.chars().collect();
            let i = at.index(chars.len());
            match kind {
                0 => chars[i] = replacement,
                1 => { chars.remove(i); }
                2 => chars.insert(i, replacement),
                3 => chars.truncate(i),
                _ => chars.push(replacement),
            }
            let mutated: String = chars.into_iter().collect();
            // whitespace around the token is trimmed (the schema refuses it at the door anyway):
            // the same signed bytes, not a mutation of them
            prop_assume!(mutated.trim() != token);
            let got = read(&key(), "battles_query", &fp, &mutated, NOW);
            prop_assert!(got.is_err(), "{mutated} read as {got:?}");
            prop_assert_eq!(&got, &read(&key(), "battles_query", &fp, &mutated, NOW));
        }

        #[test]
        fn any_text_is_refused_never_a_panic(text in prop_oneof![".{0,300}", "[A-Za-z0-9_-]{0,120}"]) {
            let fp = fingerprint("battles_query", "mode=all");
            prop_assert!(read(&key(), "battles_query", &fp, &text, NOW).is_err());
        }
    }
}
