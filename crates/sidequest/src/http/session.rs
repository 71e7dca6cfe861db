//! Browser sessions: login (with throttling, a cap on concurrent password hashing and one
//! answer for every failure), logout, `me`, and the [`Session`] extractor that authenticates
//! a request by its `sq_session` cookie and checks the CSRF token of every state-changing
//! request. Accounts themselves are created by the command line; sessions live in the store
//! so every instance shares them. The throttle's rules are `domain::login`'s.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Json;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_door::{client_address, limit_key};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;
use uuid::Uuid;

use crate::domain::fields::FieldErrors;
use crate::domain::time::iso8601;
use crate::domain::token::{SESSION_TTL_MS, digest};
use crate::domain::{Millis, User, login as throttle, password};
use crate::http::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use crate::store::{NewSession, SessionRecord};

/// The session cookie's name.
pub const COOKIE: &str = "sq_session";
/// The header that carries the CSRF token on state-changing requests.
pub const CSRF_HEADER: &str = "x-csrf-token";
pub use crate::domain::login::{LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS};
/// Bounds of the login fields (no account has a longer username; the password bound keeps
/// argon2's input sane).
pub const USERNAME_CHARS: usize = 64;
pub const PASSWORD_CHARS: usize = 1_024;

/// An authenticated request: the session's user, whose CSRF token was checked if the method
/// changes state. Extracting it is the first thing every protected handler does, so a
/// missing session is 401 before a wrong CSRF token is 403 before anything else.
#[derive(Debug, Clone)]
pub struct Session {
    pub user: User,
    /// SHA-256 (hex) of the cookie value: the session's key in the store.
    pub digest: String,
    pub expires_at: Millis,
}

/// Safe methods need no CSRF token.
fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The `sq_session` value of the request's cookies, if it has the shape of one (64 hex digits).
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    mcp_door::cookie(headers, COOKIE).filter(|v| is_hex64(v))
}

fn is_hex64(v: &str) -> bool {
    v.len() == 64
        && v.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The live session the request's `sq_session` cookie names, with its store key: `None` for
/// no cookie, an unknown or expired session, or a deactivated user. The REST extractor
/// ([`Session`]) and the web pages both authenticate through it.
pub async fn live_session(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<(String, SessionRecord)>, ApiError> {
    let Some(cookie) = session_cookie(headers) else {
        return Ok(None);
    };
    let key = digest(cookie);
    let store = &state.service.store;
    let Some(record) = store.session(&key).await? else {
        return Ok(None);
    };
    if state.service.clock.now_millis() >= record.expires_at {
        // Housekeeping only; the answer is "not signed in" either way.
        let _ = store.delete_session(&key).await;
        return Ok(None);
    }
    if !record.user.active {
        return Ok(None);
    }
    Ok(Some((key, record)))
}

/// Ends the session stored under `key` (its cookie's digest).
pub async fn end_session(state: &AppState, key: &str) -> Result<(), ApiError> {
    state.service.store.delete_session(key).await?;
    Ok(())
}

impl FromRequestParts<AppState> for Session {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let (key, record) = live_session(state, &parts.headers)
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        if changes_state(&parts.method) {
            let presented = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
            if !presented.is_some_and(|t| digest_eq(&digest(t), &record.csrf_digest)) {
                return Err(ApiError::Csrf);
            }
        }
        Ok(Session {
            user: record.user,
            digest: key,
            expires_at: record.expires_at,
        })
    }
}

/// Constant-time equality of two hex digests.
pub fn digest_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The client's address, per the deployment's [`mcp_door::AddressSource`]: the TCP peer
/// (the server is served with connect info), or the trusted proxy's header
/// (`--client-address-header`).
#[derive(Debug, Clone)]
pub struct ClientIp(pub String);

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        Ok(ClientIp(client_address(
            &state.address_source,
            &parts.headers,
            peer,
        )))
    }
}

/// Whether cookies must be `Secure`: the deployment's public URL is https, or this request
/// reached the proxy over https.
pub fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// The `Set-Cookie` value of the session cookie (`max_age_secs` 0 clears it).
pub fn set_cookie(value: &str, max_age_secs: i64, secure: bool) -> Result<HeaderValue, ApiError> {
    let mut cookie =
        format!("{COOKIE}={value}; Path=/; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax");
    if secure {
        cookie.push_str("; Secure");
    }
    HeaderValue::from_str(&cookie).map_err(|e| ApiError::Internal(e.to_string()))
}

/// What a client sees of a user.
pub fn user_json(u: &User) -> Value {
    json!({"id": u.id, "username": u.username, "display_name": u.display_name, "is_gm": u.is_gm})
}

/// The body of `POST /api/auth/login`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    pub username: String,
    pub password: String,
}

/// An argon2id hash of nothing anyone knows, verified against for unknown users (and users
/// without a password) so that every failure costs the same time. [`router`](super::router)
/// computes it at start-up, so the first unknown user is not slower than the rest.
pub(super) fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| password::hash("sidequest-no-such-user", [0x5a; 16]).unwrap_or_default())
}

/// Verifies off the async threads (argon2 is deliberately slow, and takes 19 MiB). The permit
/// of the hashing cap moves into the blocking task, so it is held until the hash is done even
/// if the request is dropped meanwhile.
async fn verify(
    permit: OwnedSemaphorePermit,
    password: String,
    hash: Option<String>,
) -> Result<bool, ApiError> {
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let known = hash.is_some();
        let phc = hash.unwrap_or_else(|| dummy_hash().to_owned());
        password::verify(&password, &phc) && known
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))
}

/// The throttle keys of a login from `ip`: an IPv6 client counts by its /64, so one subscriber
/// cannot rotate through the addresses it was handed.
fn login_keys(username: &str, ip: &str) -> [String; 2] {
    throttle::throttle_keys(username, &limit_key(ip))
}

/// A successful sign-in: the user, the new session's cookie value and its CSRF token (both
/// plaintext, handed to the browser once) and when the session expires.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub user: User,
    pub cookie: String,
    pub csrf: String,
    pub expires_at: Millis,
}

/// Checks a username and password under the login throttle and, if they match an active
/// account, opens a session. The REST login and the web sign-in form both call it, so both
/// have the same limits and the same single failure answer.
///
/// The order is what makes the limits hold under a burst: a hashing slot first (none free:
/// 429 `login_busy`, nothing recorded), then the failure reserved for both keys before the
/// password is checked (a key at the limit: 429 `too_many_attempts`, nothing recorded), then
/// the check; only the right password gives the reservation back.
pub async fn sign_in(
    state: &AppState,
    ip: &str,
    username: &str,
    password: String,
) -> ApiResult<SignedIn> {
    let mut e = FieldErrors::new();
    e.text("username", username, 1, USERNAME_CHARS);
    e.text("password", &password, 1, PASSWORD_CHARS);
    e.into_result()?;

    // Never queued: a burst beyond the cap is answered at once instead of piling up hashes
    // (and their memory) behind it.
    let permit = Arc::clone(&state.login_hashing)
        .try_acquire_owned()
        .map_err(|_| ApiError::LoginBusy)?;
    let store = &state.service.store;
    let now = state.service.clock.now_millis();
    let keys = login_keys(username, ip);
    let too_many = ApiError::TooManyAttempts {
        retry_after_secs: (LOGIN_WINDOW_MS / 1000) as u64,
    };
    let reserved = store
        .reserve_login_attempt(&keys, now, throttle::window_start(now), LOGIN_MAX_FAILURES)
        .await?;
    let Some(reservation) = reserved else {
        // Refused outright: no password check, nothing recorded.
        return Err(too_many);
    };

    let user = store.user_by_username(username).await?;
    // The same queries and the same argon2 work whether or not the user exists.
    let hash = store
        .password_hash(user.as_ref().map_or(Uuid::nil(), |u| u.id))
        .await?;
    let matched = verify(permit, password, hash).await?;
    let user = match user {
        Some(u) if matched && u.active => u,
        // The reserved rows stay: they are this failure, counted before the check.
        _ if throttle::reaches_limit(reservation.failures) => return Err(too_many),
        _ => return Err(ApiError::InvalidCredentials),
    };

    // The right password is no failure, and ends the username's run of failures; the
    // address's earlier ones stay, so one known account cannot reset an address that is
    // guessing at others.
    store
        .release_login_reservation(&reservation, &keys[0])
        .await?;
    let cookie = random_hex(state);
    let csrf = random_hex(state);
    let expires_at = now + SESSION_TTL_MS;
    store
        .create_session(&NewSession {
            digest: digest(&cookie),
            user_id: user.id,
            csrf_digest: digest(&csrf),
            created_at: now,
            expires_at,
        })
        .await?;
    Ok(SignedIn {
        user,
        cookie,
        csrf,
        expires_at,
    })
}

/// `POST /api/auth/login`: sets the session cookie and returns the CSRF token (once). The
/// rules are [`sign_in`]'s.
pub async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    ApiJson(body): ApiJson<LoginBody>,
) -> ApiResult<Response> {
    let signed = sign_in(&state, &ip, &body.username, body.password).await?;
    let mut response = Json(json!({
        "user": user_json(&signed.user),
        "csrf_token": signed.csrf,
        "expires_at": iso8601(signed.expires_at),
    }))
    .into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        set_cookie(
            &signed.cookie,
            SESSION_TTL_MS / 1000,
            secure(&state, &headers),
        )?,
    );
    Ok(response)
}

/// 32 random bytes as 64 hex digits.
fn random_hex(state: &AppState) -> String {
    let mut raw = [0u8; 32];
    state.service.random.fill(&mut raw);
    hex::encode(raw)
}

/// `POST /api/auth/logout`: ends this session and clears the cookie.
pub async fn logout(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
) -> ApiResult<Response> {
    state.service.store.delete_session(&session.digest).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        set_cookie("", 0, secure(&state, &headers))?,
    );
    Ok(response)
}

/// `GET /api/auth/me`: who is logged in.
pub async fn me(session: Session) -> Json<Value> {
    Json(json!({"user": user_json(&session.user), "expires_at": iso8601(session.expires_at)}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_session_cookie_among_others() {
        let v = "ab".repeat(32);
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("theme=dark; {COOKIE}={v}; x=1")).unwrap(),
        );
        assert_eq!(session_cookie(&h), Some(v.as_str()));
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("sq_session=short"));
        assert_eq!(session_cookie(&h), None);
        assert_eq!(session_cookie(&HeaderMap::new()), None);
    }

    #[test]
    fn digest_equality() {
        assert!(digest_eq("abc", "abc"));
        assert!(!digest_eq("abc", "abd"));
        assert!(!digest_eq("abc", "ab"));
    }

    #[test]
    fn login_keys_count_ipv6_by_its_slash_64() {
        assert_eq!(
            login_keys("alice", "198.51.100.7"),
            ["user:alice", "ip:198.51.100.7"]
        );
        let a = login_keys("alice", "2001:db8:1:2::1");
        assert_eq!(a[1], "ip:2001:db8:1:2::/64");
        assert_eq!(login_keys("bob", "2001:db8:1:2:ffff::9")[1], a[1]);
        assert_ne!(login_keys("alice", "2001:db8:1:3::1")[1], a[1]);
    }

    #[test]
    fn the_dummy_hash_is_a_real_argon2id_hash() {
        assert!(dummy_hash().starts_with("$argon2id$"));
    }
}
