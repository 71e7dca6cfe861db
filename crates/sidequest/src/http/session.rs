//! Browser sessions: login (with throttling and one answer for every failure), logout, `me`,
//! and the [`Session`] extractor that authenticates a request by its `sq_session` cookie and
//! checks the CSRF token of every state-changing request. Accounts themselves are created by
//! the command line; sessions live in the store so every instance shares them.

use std::net::SocketAddr;
use std::sync::OnceLock;

use axum::Json;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use mcp_door::client_address;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::app::AppState;
use crate::domain::fields::FieldErrors;
use crate::domain::token::{SESSION_TTL_MS, digest};
use crate::domain::{Millis, User, password};
use crate::http::error::{ApiError, ApiJson, ApiResult};
use crate::store::NewSession;

/// The session cookie's name.
pub const COOKIE: &str = "sq_session";
/// The header that carries the CSRF token on state-changing requests.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// Failed logins are counted over this window, per username and per client address.
pub const LOGIN_WINDOW_MS: Millis = 15 * 60 * 1000;
/// At this many failures in the window for either key, logins are refused with 429.
pub const LOGIN_MAX_FAILURES: i64 = 10;
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
fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|v| is_hex64(v))
}

fn is_hex64(v: &str) -> bool {
    v.len() == 64
        && v.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl FromRequestParts<AppState> for Session {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let cookie = session_cookie(&parts.headers).ok_or(ApiError::Unauthenticated)?;
        let key = digest(cookie);
        let store = &state.service.store;
        let record = store
            .session(&key)
            .await?
            .ok_or(ApiError::Unauthenticated)?;
        if state.service.clock.now_millis() >= record.expires_at {
            // Housekeeping only; the answer is 401 either way.
            let _ = store.delete_session(&key).await;
            return Err(ApiError::Unauthenticated);
        }
        if !record.user.active {
            return Err(ApiError::Unauthenticated);
        }
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
fn digest_eq(a: &str, b: &str) -> bool {
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
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    state.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

fn set_cookie(value: &str, max_age_secs: i64, secure: bool) -> Result<HeaderValue, ApiError> {
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

/// Verifies off the async threads (argon2 is deliberately slow).
async fn verify(password: String, hash: Option<String>) -> Result<bool, ApiError> {
    tokio::task::spawn_blocking(move || {
        let known = hash.is_some();
        let phc = hash.unwrap_or_else(|| dummy_hash().to_owned());
        password::verify(&password, &phc) && known
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))
}

/// `POST /api/auth/login`: sets the session cookie and returns the CSRF token (once).
pub async fn login(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    ApiJson(body): ApiJson<LoginBody>,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    e.text("username", &body.username, 1, USERNAME_CHARS);
    e.text("password", &body.password, 1, PASSWORD_CHARS);
    e.into_result()?;

    let store = &state.service.store;
    let now = state.service.clock.now_millis();
    // A failure counts while it is less than the window old.
    let since = now - LOGIN_WINDOW_MS + 1;
    let keys = [format!("user:{}", body.username), format!("ip:{ip}")];
    let mut worst = 0;
    for key in &keys {
        worst = worst.max(store.login_failures_since(key, since).await?);
    }
    let too_many = ApiError::TooManyAttempts {
        retry_after_secs: (LOGIN_WINDOW_MS / 1000) as u64,
    };
    if worst >= LOGIN_MAX_FAILURES {
        // Refused outright: no password check, nothing recorded.
        return Err(too_many);
    }

    let user = store.user_by_username(&body.username).await?;
    // The same queries and the same argon2 work whether or not the user exists.
    let hash = store
        .password_hash(user.as_ref().map_or(Uuid::nil(), |u| u.id))
        .await?;
    let matched = verify(body.password, hash).await?;
    let user = match user {
        Some(u) if matched && u.active => u,
        _ => {
            for key in &keys {
                store.record_login_failure(key, now).await?;
            }
            return Err(if worst + 1 >= LOGIN_MAX_FAILURES {
                too_many
            } else {
                ApiError::InvalidCredentials
            });
        }
    };

    // The right password ends the username's run of failures; the address's stays, so one
    // known account cannot reset an address that is guessing at others.
    store.clear_login_failures(&keys[0]).await?;
    let cookie = random_hex(&state);
    let csrf = random_hex(&state);
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
    let mut response =
        Json(json!({"user": user_json(&user), "csrf_token": csrf, "expires_at": expires_at}))
            .into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        set_cookie(&cookie, SESSION_TTL_MS / 1000, secure(&state, &headers))?,
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
    Json(json!({"user": user_json(&session.user), "expires_at": session.expires_at}))
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
    fn the_dummy_hash_is_a_real_argon2id_hash() {
        assert!(dummy_hash().starts_with("$argon2id$"));
    }
}
