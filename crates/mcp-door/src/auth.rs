//! Principals and authentication: who is calling, decided from the headers alone before any
//! body byte is read. Products implement [`Authenticator`]; the door maps [`AuthError`] to
//! HTTP 401/403/503 with a `WWW-Authenticate` challenge. A product may answer a credential it
//! saw live before provisionally and confirm it later ([`Authenticator::confirm`]): the door
//! then confirms before anything runs for the caller and before anything is answered.

use std::any::Any;
use std::net::IpAddr;
use std::sync::Arc;

use async_trait::async_trait;
use http::HeaderMap;

/// An authenticated caller.
#[derive(Clone)]
pub struct Principal {
    /// The principal kind; tools can be visible to some kinds only.
    pub kind: String,
    /// Who acts (a user, an assignment, an agent), for logs and audit.
    pub subject: String,
    /// A stable, non-secret id of the credential (admission counts per credential).
    pub credential: String,
    /// Granted scopes; a tool's required scope must be among them.
    pub scopes: Vec<String>,
    ext: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Principal")
            .field("kind", &self.kind)
            .field("subject", &self.subject)
            .field("credential", &self.credential)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl Principal {
    pub fn new(
        kind: impl Into<String>,
        subject: impl Into<String>,
        credential: impl Into<String>,
    ) -> Self {
        Self {
            kind: kind.into(),
            subject: subject.into(),
            credential: credential.into(),
            scopes: Vec::new(),
            ext: None,
        }
    }

    pub fn with_scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = scopes;
        self
    }

    /// Attaches the product's own view of the caller (read back with [`Principal::ext`]).
    pub fn with_ext<T: Any + Send + Sync>(mut self, ext: T) -> Self {
        self.ext = Some(Arc::new(ext));
        self
    }

    /// The product's view of the caller, if it is a `T`.
    pub fn ext<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.ext.as_deref().and_then(|e| e.downcast_ref::<T>())
    }
}

/// What an authenticator sees of a request: headers, path and peer address, never the body.
#[derive(Debug)]
pub struct AuthRequest<'a> {
    pub headers: &'a HeaderMap,
    pub path: &'a str,
    pub peer: Option<IpAddr>,
}

/// Why a request was not authenticated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No usable `Authorization: Bearer` header → 401.
    #[error("missing bearer token")]
    Missing,
    /// The credential is unknown, expired, revoked, of the wrong kind or its owner is inactive → 401.
    /// The reason is a value, so a challenge can name it (see [`InvalidReason::Suspended`]).
    #[error("invalid token: {0}")]
    Invalid(InvalidReason),
    /// The credential is valid but not for this door → 403 with this error code.
    #[error("forbidden: {code}: {message}")]
    Forbidden { code: String, message: String },
    /// The credential store cannot be reached → 503.
    #[error("credential store unavailable")]
    Unavailable,
}

/// Why a presented credential was refused as `invalid_token` (401). Every reason gets the same
/// answer from the door; [`Authenticator::challenge_at`] may word its `WWW-Authenticate`
/// differently for some (Elixir adds `error_description="suspended"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidReason {
    /// The `Authorization` header is not one usable bearer (repeated, unreadable, characters
    /// outside RFC 6750 `b64token`), or the credential is not well formed.
    #[error("malformed")]
    Malformed,
    /// Not a credential this door knows: unknown, of another kind, or for no door here.
    #[error("unknown")]
    Unknown,
    /// It was valid and has expired.
    #[error("expired")]
    Expired,
    /// It was revoked, or the grant behind it otherwise ended.
    #[error("revoked")]
    Revoked,
    /// Its owner is inactive or gone, or no longer holds the role this door needs.
    #[error("inactive")]
    Inactive,
    /// The agent it belongs to is suspended by its owner.
    #[error("suspended")]
    Suspended,
}

/// Decides who is calling. Runs before the body is read.
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    async fn authenticate(&self, request: &AuthRequest<'_>) -> Result<Principal, AuthError>;

    /// Confirms a principal [`Authenticator::authenticate`] answered provisionally: from what
    /// the product knows of a credential it saw live before, without asking its store whether
    /// the credential is still live. The door confirms before it runs anything for the caller
    /// (every method, every tool but one declared [`crate::ToolDecl::confirming_caller`], whose
    /// handler confirms in its own statement, on a door without a method gate) and again
    /// before it answers, and answers a refusal here exactly as one from `authenticate`. It
    /// must give the same answer every time for one principal (keep the first), and answer at
    /// once for a principal `authenticate` already checked. By default every principal is
    /// checked when it is made.
    async fn confirm(&self, _principal: &Principal) -> Result<(), AuthError> {
        Ok(())
    }

    /// The `WWW-Authenticate` value sent with a 401 for `error`.
    fn challenge(&self, error: &AuthError) -> String {
        match error {
            AuthError::Missing => "Bearer".to_owned(),
            _ => "Bearer error=\"invalid_token\"".to_owned(),
        }
    }

    /// The `WWW-Authenticate` value sent with a 401 or 403 for `error` at the request path
    /// `path` (for challenges that name the door, e.g. RFC 9728 `resource_metadata`). The door
    /// calls this one; by default it is [`Authenticator::challenge`].
    fn challenge_at(&self, error: &AuthError, _path: &str) -> String {
        self.challenge(error)
    }

    /// The JSON-RPC error message of a 401 for `error` (`Missing` or `Invalid`). A product
    /// whose challenge names the credential its door needs ([`BearerRealm`]) says the same
    /// sentence here, so a client that shows only the body tells its user the same thing.
    fn unauthorized_message(&self, error: &AuthError) -> String {
        match error {
            AuthError::Missing => "Unauthorized: missing bearer token".to_owned(),
            _ => "Unauthorized: invalid, expired or revoked token".to_owned(),
        }
    }

    /// The `WWW-Authenticate` value sent with a 403 for a missing scope.
    fn insufficient_scope_challenge(&self, scopes: &[String]) -> String {
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\"",
            scopes.join(" ")
        )
    }
}

/// How a door without OAuth explains its 401 (RFC 6750 §3): a `realm` and two sentences that
/// name the credential the door needs, one for a request that sent none and one for a
/// credential that was refused. With no credential at all the challenge is the realm alone,
/// as RFC 6750 §3.1 asks ("SHOULD NOT include an error code or other error information"); a
/// refused one adds `error="invalid_token"` and its sentence as `error_description`. The
/// JSON-RPC body carries the sentence in both cases ([`Authenticator::unauthorized_message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerRealm {
    realm: String,
    missing: String,
    invalid: String,
}

impl BearerRealm {
    /// A realm and its two sentences. Characters a quoted `realm` or `error_description` may not
    /// carry (RFC 6750 §3: printable ASCII without `"` and `\`) are replaced by `?`, so the
    /// header is always well formed; keep the sentences plain ASCII.
    pub fn new(realm: &str, missing: &str, invalid: &str) -> Self {
        Self {
            realm: quotable(realm),
            missing: quotable(missing),
            invalid: quotable(invalid),
        }
    }

    /// The `WWW-Authenticate` value for `error`.
    pub fn challenge(&self, error: &AuthError) -> String {
        match error {
            AuthError::Missing => format!("Bearer realm=\"{}\"", self.realm),
            _ => format!(
                "Bearer realm=\"{}\", error=\"invalid_token\", error_description=\"{}\"",
                self.realm, self.invalid
            ),
        }
    }

    /// The sentence for `error`: the JSON-RPC error message of the 401, and for a refused
    /// credential also its `error_description`.
    pub fn message(&self, error: &AuthError) -> String {
        match error {
            AuthError::Missing => self.missing.clone(),
            _ => self.invalid.clone(),
        }
    }
}

/// `text` with every character outside RFC 6750's `error_description` set (%x20-21 / %x23-5B /
/// %x5D-7E) replaced by `?`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' ' | '!' | '#'..='[' | ']'..='~' => c,
            _ => '?',
        })
        .collect()
}

/// The bearer token of the request: exactly one `Authorization` header, scheme `Bearer`
/// (any case), a non-empty token of RFC 6750 `b64token` characters. Anything else is `Missing`
/// or `Invalid`; tokens in query strings or cookies are never looked at.
pub fn bearer_token(headers: &HeaderMap) -> Result<&str, AuthError> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let value = values.next().ok_or(AuthError::Missing)?;
    if values.next().is_some() {
        return Err(AuthError::Invalid(InvalidReason::Malformed));
    }
    let value = value
        .to_str()
        .map_err(|_| AuthError::Invalid(InvalidReason::Malformed))?;
    let (scheme, token) = value.split_once(' ').ok_or(AuthError::Missing)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Missing);
    }
    let token = token.trim();
    let ok = !token.is_empty()
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b));
    if ok {
        Ok(token)
    } else {
        Err(AuthError::Invalid(InvalidReason::Malformed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(http::header::AUTHORIZATION, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn bearer_parsing() {
        assert_eq!(bearer_token(&headers(&["Bearer abc_123"])), Ok("abc_123"));
        assert_eq!(bearer_token(&headers(&["bearer abc"])), Ok("abc"));
        assert_eq!(bearer_token(&headers(&[])), Err(AuthError::Missing));
        assert_eq!(
            bearer_token(&headers(&["Basic dXNlcjpwYXNz"])),
            Err(AuthError::Missing)
        );
        let malformed = Err(AuthError::Invalid(InvalidReason::Malformed));
        assert_eq!(bearer_token(&headers(&["Bearer "])), malformed);
        assert_eq!(bearer_token(&headers(&["Bearer a b"])), malformed);
        assert_eq!(bearer_token(&headers(&["Bearer a", "Bearer b"])), malformed);
    }

    #[test]
    fn a_realm_challenge_follows_rfc_6750() {
        let realm = BearerRealm::new("shop", "Send a shop key.", "The shop key was refused.");
        // no credential at all: the realm alone, no error code or description (§3.1)
        assert_eq!(
            realm.challenge(&AuthError::Missing),
            "Bearer realm=\"shop\""
        );
        assert_eq!(realm.message(&AuthError::Missing), "Send a shop key.");
        for reason in [InvalidReason::Malformed, InvalidReason::Expired] {
            let e = AuthError::Invalid(reason);
            assert_eq!(
                realm.challenge(&e),
                "Bearer realm=\"shop\", error=\"invalid_token\", \
                 error_description=\"The shop key was refused.\""
            );
            assert_eq!(realm.message(&e), "The shop key was refused.");
        }
    }

    #[test]
    fn a_realm_never_breaks_the_quoted_string() {
        let realm = BearerRealm::new("a\"b", "x", "say \"hi\" \\ naïve\u{7f}");
        assert_eq!(realm.challenge(&AuthError::Missing), "Bearer realm=\"a?b\"");
        assert_eq!(
            realm.message(&AuthError::Invalid(InvalidReason::Unknown)),
            "say ?hi? ? na?ve?"
        );
    }

    #[test]
    fn principal_ext_round_trips() {
        let p = Principal::new("player", "s", "c").with_ext(42_u32);
        assert_eq!(p.ext::<u32>(), Some(&42));
        assert_eq!(p.ext::<String>(), None);
    }
}
