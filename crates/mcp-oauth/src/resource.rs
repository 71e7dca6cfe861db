//! The resource-server side, for the product's doors: verifying an access token for a door
//! (scopes read from the grant on every call), the `WWW-Authenticate` challenges, refusal
//! counting per credential, address and day, and `/oauth/userinfo`'s logic.

use http::{HeaderMap, StatusCode};
use mcp_door::{AuthError, AuthRequest, InvalidReason, Principal, bearer_token};

use crate::crypto::sha256_hex;
use crate::directory::Subject;
use crate::scopes;
use crate::server::AuthServer;
use crate::store::{GrantRecord, RefusalCount, StoreError};

const DAY_MS: i64 = 24 * 3600 * 1000;
/// `last_used_at` is written at most this often per grant.
const TOUCH_EVERY_MS: i64 = 60 * 60 * 1000;

/// What a door learns from a valid access token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GrantView {
    pub grant_id: String,
    /// The account that consented.
    pub account_id: String,
    /// Who the grant is for (the account itself on a personal door, an agent, ...).
    pub subject: Subject,
    /// The subject is the consenting account.
    pub personal: bool,
    /// The grant's scopes now, in canonical order.
    pub scopes: Vec<String>,
    pub client_id: String,
    pub client_name: String,
    /// The door the token is bound to.
    pub resource: String,
}

impl GrantView {
    fn from_record(g: GrantRecord) -> Self {
        Self {
            grant_id: g.id,
            account_id: g.subject.account_id,
            subject: Subject {
                kind: g.subject.subject_kind,
                id: g.subject.subject_id,
            },
            personal: g.subject.personal,
            scopes: g.scopes,
            client_id: g.client_id,
            client_name: g.client_name,
            resource: g.resource,
        }
    }

    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// Why a presented access token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// No usable `Authorization: Bearer` header (query strings and cookies are never read).
    #[error("no bearer token")]
    Missing,
    /// Not a token we issued (or malformed).
    #[error("invalid token")]
    Invalid,
    /// It was ours and has expired.
    #[error("token expired")]
    Expired { grant_id: String },
    /// Its grant was revoked.
    #[error("grant revoked")]
    Revoked { grant_id: String },
    /// Valid, but bound to another door.
    #[error("token bound to another resource")]
    WrongResource { grant_id: String },
    /// The store could not be read.
    #[error("credential store unavailable")]
    Unavailable,
}

impl TokenError {
    /// The grant behind the refused token, when it was one of ours: the credential refusals
    /// are counted against (and shown to that grant's account).
    pub fn grant_id(&self) -> Option<&str> {
        match self {
            Self::Expired { grant_id }
            | Self::Revoked { grant_id }
            | Self::WrongResource { grant_id } => Some(grant_id),
            _ => None,
        }
    }

    /// A stable reason for refusal counts and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Invalid => "invalid",
            Self::Expired { .. } => "expired",
            Self::Revoked { .. } => "revoked",
            Self::WrongResource { .. } => "wrong_resource",
            Self::Unavailable => "unavailable",
        }
    }

    /// 401 for anything unusable, 403 for a token of another door, 503 when the store is down.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::WrongResource { .. } => StatusCode::FORBIDDEN,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::UNAUTHORIZED,
        }
    }

    /// The same refusal in mcp-door's terms, for an `Authenticator`.
    pub fn to_auth_error(&self) -> AuthError {
        match self {
            Self::Missing => AuthError::Missing,
            Self::WrongResource { .. } => AuthError::Forbidden {
                code: "wrong_resource".into(),
                message: "This credential is valid at another door.".into(),
            },
            Self::Unavailable => AuthError::Unavailable,
            Self::Expired { .. } => AuthError::Invalid(InvalidReason::Expired),
            Self::Revoked { .. } => AuthError::Invalid(InvalidReason::Revoked),
            Self::Invalid => AuthError::Invalid(InvalidReason::Unknown),
        }
    }
}

impl AuthServer {
    /// Verifies `token` for the door `door_resource` (its exact URL). The scopes are the
    /// grant's at this moment, so edits and revocations apply on the next call.
    pub async fn verify_access_token(
        &self,
        token: &str,
        door_resource: &str,
    ) -> Result<GrantView, TokenError> {
        let grant = self.live_grant(token).await?;
        if grant.resource != door_resource {
            return Err(TokenError::WrongResource { grant_id: grant.id });
        }
        Ok(GrantView::from_record(grant))
    }

    /// [`AuthServer::verify_access_token`] on the request's `Authorization: Bearer` header.
    pub async fn verify_bearer(
        &self,
        headers: &HeaderMap,
        door_resource: &str,
    ) -> Result<GrantView, TokenError> {
        let token = bearer_token(headers).map_err(|e| match e {
            AuthError::Missing => TokenError::Missing,
            _ => TokenError::Invalid,
        })?;
        self.verify_access_token(token, door_resource).await
    }

    /// An `mcp_door::Authenticator` body for the door `door_resource`: verifies the bearer
    /// token, counts a refusal (against the grant when the token was ours, else `"unknown"`;
    /// a missing token is not counted) and returns a [`Principal`] whose kind and subject are
    /// the grant's subject, whose credential is the grant id and whose scopes are the grant's
    /// now, with the [`GrantView`] attached as its `ext`.
    pub async fn authenticate_door(
        &self,
        request: &AuthRequest<'_>,
        door_resource: &str,
    ) -> Result<Principal, AuthError> {
        match self.verify_bearer(request.headers, door_resource).await {
            Ok(grant) => Ok(Principal::new(
                grant.subject.kind.clone(),
                grant.subject.id.clone(),
                grant.grant_id.clone(),
            )
            .with_scopes(grant.scopes.clone())
            .with_ext(grant)),
            Err(err) => {
                if !matches!(err, TokenError::Missing | TokenError::Unavailable) {
                    let peer = request.peer.map(|ip| std::net::SocketAddr::new(ip, 0));
                    let address = self.client_address(request.headers, peer);
                    let credential = err.grant_id().unwrap_or("unknown");
                    if let Err(e) = self
                        .record_refusal(credential, &address, err.reason())
                        .await
                    {
                        tracing::warn!(error = %e, "could not count a refused credential");
                    }
                }
                Err(err.to_auth_error())
            }
        }
    }

    /// [`AuthServer::challenge`] for an `mcp_door::AuthError` (what an `Authenticator`'s
    /// `challenge` receives).
    pub fn door_challenge(&self, door_resource: &str, error: &AuthError) -> String {
        let token_error = match error {
            AuthError::Missing => TokenError::Missing,
            _ => TokenError::Invalid,
        };
        self.challenge(door_resource, &token_error)
    }

    /// The token's live grant, whatever its door.
    pub(crate) async fn live_grant(&self, token: &str) -> Result<GrantRecord, TokenError> {
        if !token.starts_with(&self.config.access_prefix) || token.len() > 200 {
            return Err(TokenError::Invalid);
        }
        let now = self.now();
        let found = self
            .store
            .access_token(&sha256_hex(token))
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "access-token lookup failed");
                TokenError::Unavailable
            })?;
        let Some((access, grant)) = found else {
            return Err(TokenError::Invalid);
        };
        if grant.revoked_at.is_some() {
            return Err(TokenError::Revoked { grant_id: grant.id });
        }
        if now >= access.expires_at {
            return Err(TokenError::Expired { grant_id: grant.id });
        }
        if now - grant.last_used_at >= TOUCH_EVERY_MS
            && let Err(e) = self.store.touch_grant(&grant.id, now).await
        {
            tracing::warn!(error = %e, "could not record grant use");
        }
        Ok(grant)
    }

    /// The `WWW-Authenticate` value of a 401 at `door_resource`: where its metadata is and
    /// the default scopes (never an unasked one), plus `error="invalid_token"` when a token
    /// was presented.
    pub fn challenge(&self, door_resource: &str, error: &TokenError) -> String {
        let mut parts = Vec::new();
        if !matches!(error, TokenError::Missing) {
            parts.push("error=\"invalid_token\"".to_owned());
        }
        parts.push(format!(
            "resource_metadata=\"{}\"",
            self.config.resource_metadata_url(door_resource)
        ));
        parts.push(format!(
            "scope=\"{}\"",
            scopes::join(&self.config.default_scopes)
        ));
        format!("Bearer {}", parts.join(", "))
    }

    /// The `WWW-Authenticate` value of a 403 for a missing scope: `scope` is the granted set
    /// plus the missing one, in canonical order, so a client can re-authorize with exactly it.
    pub fn insufficient_scope_challenge(
        &self,
        door_resource: &str,
        granted: &[String],
        missing: &str,
    ) -> String {
        let mut wanted = granted.to_vec();
        wanted.push(missing.to_owned());
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\"",
            scopes::join(&scopes::canonical(&self.config, &wanted)),
            self.config.resource_metadata_url(door_resource)
        )
    }

    /// Counts one refused presentation of `credential` (a grant id, a product key id, or
    /// `"unknown"`) from `address` today.
    pub async fn record_refusal(
        &self,
        credential: &str,
        address: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        let now = self.now();
        self.store
            .count_refusal(credential, address, now.div_euclid(DAY_MS), reason, now)
            .await
    }

    /// Refusal counts of `credential` over the last `days` days (today included), newest
    /// first.
    pub async fn refusals(
        &self,
        credential: &str,
        days: i64,
    ) -> Result<Vec<RefusalCount>, StoreError> {
        let today = self.now().div_euclid(DAY_MS);
        self.store
            .refusals(credential, today - days.max(1) + 1)
            .await
    }

    /// `/oauth/userinfo`: `(status, body, www-authenticate)`.
    pub(crate) async fn userinfo(
        &self,
        headers: &HeaderMap,
    ) -> (StatusCode, serde_json::Value, Option<String>) {
        let invalid = |description: &str| {
            (
                StatusCode::UNAUTHORIZED,
                serde_json::json!({"error": "invalid_token", "error_description": description}),
                Some("Bearer error=\"invalid_token\"".to_owned()),
            )
        };
        let Ok(token) = bearer_token(headers) else {
            return invalid("A bearer access token is required.");
        };
        let grant = match self.live_grant(token).await {
            Ok(grant) => grant,
            Err(TokenError::Unavailable) => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::json!({"error": "temporarily_unavailable"}),
                    None,
                );
            }
            Err(_) => return invalid("The access token is invalid, expired or revoked."),
        };
        if !grant.subject.personal {
            return invalid("Only a personal connection's token can read the account.");
        }
        let email_scope = &self.config.email_scope;
        if !grant.scopes.contains(email_scope) {
            return (
                StatusCode::FORBIDDEN,
                serde_json::json!({
                    "error": "insufficient_scope",
                    "error_description": format!("The grant lacks {email_scope}."),
                }),
                Some(format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{email_scope}\""
                )),
            );
        }
        let account = match self.accounts.account(&grant.subject.account_id).await {
            Ok(account) => account,
            Err(e) => {
                tracing::error!(error = %e, "account directory failed");
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::json!({"error": "temporarily_unavailable"}),
                    None,
                );
            }
        };
        let Some(account) = account else {
            return invalid("The account no longer exists.");
        };
        match account.email {
            Some(email) => (
                StatusCode::OK,
                serde_json::json!({
                    "sub": account.id,
                    "email": email,
                    "email_verified": true,
                    "kind": grant.subject.subject_kind,
                }),
                None,
            ),
            None => (
                StatusCode::NOT_FOUND,
                serde_json::json!({
                    "error": "email_unavailable",
                    "error_description": "No address is on file for this account; the next consent records it.",
                }),
                None,
            ),
        }
    }
}
