//! Who is calling, from the headers alone (SURFACE §1.2): service keys (`svt_…`, SHA-256 at
//! rest, bound to one agent or integration door) checked here, and OAuth access tokens handed
//! to a pluggable [`AccessTokenVerifier`] (mcp-oauth provides the real one; until it is wired,
//! a door without a verifier refuses every non-key token as `invalid_token`). Every refusal is
//! counted per credential, address and day. Challenges name the door's RFC 9728 resource
//! metadata and the five standard scopes.

use std::sync::Arc;

use async_trait::async_trait;
use mcp_door::{AuthError, AuthRequest, Authenticator, Principal, bearer_token};
use uuid::Uuid;

use crate::domain::{
    Kind, STANDARD_SCOPES, canonical_scopes, credential_hint, digest, is_public_id, is_service_key,
    key_scopes,
};
use crate::services::{AgentRef, Caller, Credential, Services};
use crate::store::{Agent, Refusal, StoreError};

/// What an OAuth access token grants, as its verifier reads it from the grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub account_id: Uuid,
    /// Set for a token bound to an agent or integration door.
    pub agent_id: Option<Uuid>,
    pub scopes: Vec<String>,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// Unknown, expired or revoked → 401.
    #[error("invalid token")]
    Invalid,
    /// Live, but bound to another door → 403 `wrong_resource`.
    #[error("token bound to another resource")]
    WrongResource,
    /// The grant store cannot be reached → 503.
    #[error("verifier unavailable")]
    Unavailable,
    /// One of ours, but expired or revoked → 401, counted against the grant (so its owner sees
    /// a client still presenting it).
    #[error("token of grant {grant_id} refused")]
    Refused { grant_id: String },
}

/// Checks an OAuth access token presented at `door_url` (the door's absolute URL, the RFC 8707
/// `resource` the token must be bound to).
#[async_trait]
pub trait AccessTokenVerifier: Send + Sync + 'static {
    async fn verify(&self, token: &str, door_url: &str) -> Result<Grant, VerifyError>;
}

/// The authenticator of one kind of door.
pub struct DoorAuth {
    pub kind: Kind,
    pub services: Arc<Services>,
    pub verifier: Option<Arc<dyn AccessTokenVerifier>>,
}

const SUSPENDED: &str = "suspended";
/// The refusal-count credential of a refused token whose grant is known: `grant:<id>`.
pub const GRANT_CREDENTIAL: &str = "grant:";
const WRONG_RESOURCE: &str = "wrong_resource";

fn wrong_resource() -> AuthError {
    AuthError::Forbidden {
        code: WRONG_RESOURCE.into(),
        message: "This credential is valid at another Elixir door, not this one.".into(),
    }
}

fn unavailable(e: &StoreError) -> AuthError {
    tracing::warn!(error = %e, "credential lookup failed");
    AuthError::Unavailable
}

impl DoorAuth {
    /// The public id in `/a/<id>/mcp` or `/i/<id>/mcp`, when the path is this kind's door.
    fn public_id<'a>(&self, path: &'a str) -> Option<&'a str> {
        let prefix = self.kind.door_prefix()?;
        let rest = path
            .strip_prefix('/')?
            .strip_prefix(prefix)?
            .strip_prefix('/')?;
        let id = rest.strip_suffix("/mcp")?;
        is_public_id(id).then_some(id)
    }

    async fn identify(
        &self,
        request: &AuthRequest<'_>,
        token: &str,
    ) -> Result<Principal, AuthError> {
        if token.starts_with(crate::domain::SERVICE_KEY_PREFIX) {
            return self.service_key(request.path, token).await;
        }
        let Some(verifier) = &self.verifier else {
            return Err(AuthError::Invalid("no OAuth verifier configured".into()));
        };
        let door_url = format!("{}{}", self.services.settings.public_url, request.path);
        let grant = match verifier.verify(token, &door_url).await {
            Ok(g) => g,
            Err(VerifyError::Invalid) => return Err(AuthError::Invalid("unknown token".into())),
            Err(VerifyError::WrongResource) => return Err(wrong_resource()),
            Err(VerifyError::Unavailable) => return Err(AuthError::Unavailable),
            Err(VerifyError::Refused { grant_id }) => {
                return Err(AuthError::Invalid(format!("{GRANT_CREDENTIAL}{grant_id}")));
            }
        };
        let scopes = canonical_scopes(&grant.scopes);
        match self.kind {
            Kind::Person => {
                if grant.agent_id.is_some() {
                    return Err(wrong_resource());
                }
                self.person(grant.account_id, scopes, token).await
            }
            _ => {
                let Some(public_id) = self.public_id(request.path) else {
                    return Err(AuthError::Invalid("not a door path".into()));
                };
                let agent = self
                    .services
                    .store
                    .agent_by_public_id(public_id)
                    .await
                    .map_err(|e| unavailable(&e))?
                    .filter(|a| a.kind == self.kind)
                    .ok_or_else(|| AuthError::Invalid("unknown public id".into()))?;
                if grant.agent_id != Some(agent.id) {
                    return Err(wrong_resource());
                }
                self.agent(agent, scopes, Credential::OAuth, token).await
            }
        }
    }

    async fn service_key(&self, path: &str, token: &str) -> Result<Principal, AuthError> {
        if !is_service_key(token) {
            return Err(AuthError::Invalid("malformed service key".into()));
        }
        let agent = self
            .services
            .store
            .agent_by_key_digest(&digest(token))
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(|| AuthError::Invalid("unknown service key".into()))?;
        if agent.suspended {
            return Err(AuthError::Invalid(SUSPENDED.into()));
        }
        // A key valid elsewhere gets the same answer whether or not this door's public id
        // exists, so a key holder cannot enumerate doors.
        if self.kind != agent.kind || self.public_id(path) != Some(agent.public_id.as_str()) {
            return Err(wrong_resource());
        }
        let scopes = key_scopes(&agent.key_scopes);
        self.agent(agent, scopes, Credential::ServiceKey, token)
            .await
    }

    async fn person(
        &self,
        account_id: Uuid,
        scopes: Vec<String>,
        token: &str,
    ) -> Result<Principal, AuthError> {
        let account = self
            .services
            .store
            .account(account_id)
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(|| AuthError::Invalid("account gone".into()))?;
        let caller = Caller {
            kind: Kind::Person,
            account_id,
            agent: None,
            tier: account.tier,
            timezone: account.timezone,
            primary_player_tag: account.primary_player_tag,
            credential: Credential::OAuth,
        };
        Ok(Principal::new(
            Kind::Person.as_str(),
            format!("account:{account_id}"),
            format!("oauth:{}", credential_hint(token)),
        )
        .with_scopes(scopes)
        .with_ext(caller))
    }

    async fn agent(
        &self,
        agent: Agent,
        scopes: Vec<String>,
        credential: Credential,
        token: &str,
    ) -> Result<Principal, AuthError> {
        if agent.suspended {
            return Err(AuthError::Invalid(SUSPENDED.into()));
        }
        let owner = self
            .services
            .store
            .account(agent.owner_account_id)
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(|| AuthError::Invalid("owner gone".into()))?;
        let caller = Caller {
            kind: agent.kind,
            account_id: owner.id,
            agent: Some(AgentRef {
                id: agent.id,
                public_id: agent.public_id.clone(),
                name: agent.name.clone(),
            }),
            tier: owner.tier.for_agent(),
            timezone: agent.timezone.clone().unwrap_or_else(|| "UTC".into()),
            primary_player_tag: None,
            credential,
        };
        let prefix = match credential {
            Credential::ServiceKey => "svt",
            Credential::OAuth => "oauth",
        };
        Ok(Principal::new(
            agent.kind.as_str(),
            format!("agent:{}:account:{}", agent.id, owner.id),
            format!("{prefix}:{}", credential_hint(token)),
        )
        .with_scopes(scopes)
        .with_ext(caller))
    }

    async fn count_refusal(&self, request: &AuthRequest<'_>, hint: &str, error: &AuthError) {
        let reason = match error {
            AuthError::Missing => "missing".to_owned(),
            AuthError::Invalid(r) if r == SUSPENDED => SUSPENDED.to_owned(),
            AuthError::Invalid(_) => "invalid_token".to_owned(),
            AuthError::Forbidden { code, .. } => code.clone(),
            _ => return,
        };
        let hint = match error {
            AuthError::Invalid(r) if r.starts_with(GRANT_CREDENTIAL) => r.as_str(),
            _ => hint,
        };
        let now = self.services.now();
        let refusal = Refusal {
            credential_hint: hint.to_owned(),
            address: self
                .services
                .settings
                .client_address(request.headers, request.peer),
            day: crate::domain::iso(now)[..10].to_owned(),
            door: request.path.to_owned(),
            reason,
            at: now,
        };
        if let Err(e) = self.services.store.record_refusal(&refusal).await {
            tracing::warn!(error = %e, "refusal not counted");
        }
    }
}

#[async_trait]
impl Authenticator for DoorAuth {
    async fn authenticate(&self, request: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let (outcome, hint) = match bearer_token(request.headers) {
            Ok(token) => (self.identify(request, token).await, credential_hint(token)),
            Err(e) => (Err(e), "none".to_owned()),
        };
        if let Err(e) = &outcome {
            self.count_refusal(request, &hint, e).await;
        }
        outcome
    }

    fn challenge_at(&self, error: &AuthError, path: &str) -> String {
        let metadata = format!(
            "{}/.well-known/oauth-protected-resource{path}",
            self.services.settings.public_url
        );
        let description = match error {
            AuthError::Invalid(r) if r == SUSPENDED => ", error_description=\"suspended\"",
            AuthError::Forbidden { .. } => ", error_description=\"wrong_resource\"",
            _ => "",
        };
        format!(
            "Bearer error=\"invalid_token\"{description}, resource_metadata=\"{metadata}\", scope=\"{}\"",
            STANDARD_SCOPES.join(" ")
        )
    }

    /// The granted set plus the missing one, in canonical order, so a client can re-authorize
    /// with exactly that value.
    fn insufficient_scope_challenge(&self, scopes: &[String]) -> String {
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\"",
            canonical_scopes(scopes).join(" ")
        )
    }
}

/// A verifier for tests and local development: a fixed table of tokens and the door URL each
/// is bound to.
#[derive(Debug, Default)]
pub struct StaticVerifier {
    tokens: std::sync::Mutex<Vec<(String, String, Grant)>>,
}

impl StaticVerifier {
    /// Registers `token` as bound to `door_url` with `grant`.
    pub fn insert(&self, token: &str, door_url: &str, grant: Grant) {
        if let Ok(mut t) = self.tokens.lock() {
            t.push((token.to_owned(), door_url.to_owned(), grant));
        }
    }
}

#[async_trait]
impl AccessTokenVerifier for StaticVerifier {
    async fn verify(&self, token: &str, door_url: &str) -> Result<Grant, VerifyError> {
        let tokens = self.tokens.lock().map_err(|_| VerifyError::Unavailable)?;
        match tokens.iter().find(|(t, _, _)| t == token) {
            Some((_, url, grant)) if url == door_url => Ok(grant.clone()),
            Some(_) => Err(VerifyError::WrongResource),
            None => Err(VerifyError::Invalid),
        }
    }
}
