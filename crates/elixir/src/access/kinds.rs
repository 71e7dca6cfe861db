//! Who may call, in Elixir's words, free of HTTP and SQL: the three principal kinds, tiers and
//! their allowances, the scopes, service keys (`svt_…`, SHA-256 at rest, their refusal-count
//! hints) and public ids, minted from the injected randomness. Authenticating with them is
//! `gate`'s, storing them the store's. Pure and unit-tested beside the code.

use std::fmt;

use sha2::{Digest, Sha256};

/// The three kinds of principal (SURFACE §1.1). There is no "service" kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Person,
    Agent,
    Integration,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Person, Kind::Agent, Kind::Integration];

    /// The wire name (`_meta` principal kind, mcp-door principal kind).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Person => "person",
            Kind::Agent => "agent",
            Kind::Integration => "integration",
        }
    }

    /// The one-letter marker of SURFACE.md (P / A / I).
    pub fn letter(self) -> &'static str {
        match self {
            Kind::Person => "P",
            Kind::Agent => "A",
            Kind::Integration => "I",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An account's tier (SURFACE §4.2). New accounts are members; the operator sets tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Member,
    Leader,
    Family,
    Partner,
    Admin,
}

impl Tier {
    pub const ALL: [Tier; 5] = [
        Tier::Member,
        Tier::Leader,
        Tier::Family,
        Tier::Partner,
        Tier::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Member => "member",
            Tier::Leader => "leader",
            Tier::Family => "family",
            Tier::Partner => "partner",
            Tier::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// Tool calls a day; `None` is unlimited.
    pub fn calls_per_day(self) -> Option<i64> {
        match self {
            Tier::Member => Some(500),
            Tier::Leader => Some(2_000),
            Tier::Family => Some(5_000),
            Tier::Partner => Some(15_000),
            Tier::Admin => None,
        }
    }

    /// Live fetches a day; `None` is unlimited.
    pub fn live_per_day(self) -> Option<i64> {
        match self {
            Tier::Member => Some(20),
            Tier::Leader => Some(100),
            Tier::Family => Some(250),
            Tier::Partner => Some(1_000),
            Tier::Admin => None,
        }
    }

    /// Agents an account may own (SURFACE §4.2); integrations and suspended agents count.
    /// `None` is unlimited.
    pub fn agents(self) -> Option<usize> {
        match self {
            Tier::Member => Some(3),
            Tier::Leader => Some(5),
            Tier::Family => Some(10),
            Tier::Partner => Some(25),
            Tier::Admin => None,
        }
    }

    /// Tracked players an account may hold (SURFACE §4.2); `None` is unlimited.
    pub fn tracked_players(self) -> Option<i64> {
        match self {
            Tier::Admin => None,
            _ => Some(50),
        }
    }

    /// Tracked clans of one scope, as (activity, comprehensive); `None` is unlimited.
    pub fn tracked_clans(self) -> (Option<i64>, Option<i64>) {
        match self {
            Tier::Member => (Some(1), Some(0)),
            Tier::Leader => (Some(1), Some(1)),
            Tier::Family => (Some(3), Some(3)),
            Tier::Partner => (Some(10), Some(5)),
            Tier::Admin => (None, None),
        }
    }

    /// Agents and integrations take the owner's tier, capped at leader (SURFACE §1.4).
    pub fn for_agent(self) -> Tier {
        self.min(Tier::Leader)
    }
}

/// The five standard capabilities, in canonical order (the 401 challenge advertises them).
pub const STANDARD_SCOPES: [&str; 5] = [
    "cr:read",
    "recordings:write",
    "collections:write",
    "account:write",
    "feedback:write",
];

/// Parses a stored, space-separated scope list; empty means every standard scope. Unknown
/// names and `account:email` (never a service-key capability) are dropped; the result is in
/// canonical order.
pub fn key_scopes(stored: &str) -> Vec<String> {
    let named: Vec<&str> = stored.split_whitespace().collect();
    STANDARD_SCOPES
        .iter()
        .filter(|s| named.is_empty() || named.contains(s))
        .map(|s| (*s).to_owned())
        .collect()
}

/// Puts scopes into canonical order, keeping only standard ones.
pub fn canonical_scopes(scopes: &[String]) -> Vec<String> {
    STANDARD_SCOPES
        .iter()
        .filter(|s| scopes.iter().any(|g| g == *s))
        .map(|s| (*s).to_owned())
        .collect()
}

/// The lifecycle of a feedback report: new → seen → planned → done | declined.
pub use mcp_door::{OsRandom, Random};

/// The prefix of every service key.
pub const SERVICE_KEY_PREFIX: &str = "svt_";

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url (RFC 4648 §5).
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(char::from(B64URL[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// A new service key: `svt_` + 43 base64url characters (32 random bytes). Shown once.
pub fn new_service_key(random: &dyn Random) -> String {
    let mut bytes = [0u8; 32];
    random.fill(&mut bytes);
    format!("{SERVICE_KEY_PREFIX}{}", base64url(&bytes))
}

/// Whether `token` has the shape of a service key (not whether it exists).
pub fn is_service_key(token: &str) -> bool {
    token.strip_prefix(SERVICE_KEY_PREFIX).is_some_and(|rest| {
        rest.len() == 43
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// SHA-256 hex of a presented secret: what is stored, and what is looked up.
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A non-secret handle of a presented credential for the refusal counts: the first 12 hex of
/// its digest, so an owner can match it against a key they hold without the key being kept.
pub fn credential_hint(secret: &str) -> String {
    digest(secret)[..12].to_owned()
}

/// Whether `text` is a valid public id: 8 to 16 of `[a-z0-9]`.
pub fn is_public_id(text: &str) -> bool {
    (8..=16).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A new 12-character public id.
pub fn new_public_id(random: &dyn Random) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 12];
    random.fill(&mut bytes);
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// A UUID from the injected randomness (v4 layout).
pub fn new_uuid(random: &dyn Random) -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    random.fill(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(u8);
    impl Random for Fixed {
        fn fill(&self, buf: &mut [u8]) {
            buf.fill(self.0);
        }
    }

    #[test]
    fn service_keys_have_the_documented_shape() {
        let key = new_service_key(&Fixed(0xff));
        assert_eq!(key.len(), 4 + 43);
        assert!(is_service_key(&key), "{key}");
        assert!(key.ends_with('8'), "{key}"); // 32 bytes: the last char carries 2 bits
        assert!(!is_service_key("svt_short"));
        assert!(!is_service_key(&format!("svt_{}", "a".repeat(42) + "=")));
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(base64url(b"Man"), "TWFu");
        assert_eq!(credential_hint(&key).len(), 12);
        assert!(digest(&key).starts_with(&credential_hint(&key)));
    }

    #[test]
    fn public_ids() {
        let id = new_public_id(&Fixed(7));
        assert!(is_public_id(&id), "{id}");
        assert!(!is_public_id("abc"));
        assert!(!is_public_id("ABCDEFGH"));
        assert!(!is_public_id("abcdefgh12345678x"));
        assert!(is_public_id("abcdefgh12345678"));
    }

    #[test]
    fn tiers_and_scopes() {
        assert_eq!(Tier::Admin.for_agent(), Tier::Leader);
        assert_eq!(Tier::Member.for_agent(), Tier::Member);
        assert_eq!(Tier::Admin.calls_per_day(), None);
        assert_eq!(key_scopes("").len(), 5);
        assert_eq!(
            key_scopes("feedback:write cr:read account:email"),
            ["cr:read", "feedback:write"]
        );
    }
}
