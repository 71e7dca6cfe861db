//! Who is calling, from the headers alone (SURFACE §1.2): service keys (`svt_…`, SHA-256 at
//! rest, bound to one agent or integration door) checked here, and OAuth access tokens handed
//! to a pluggable [`AccessTokenVerifier`] (mcp-oauth provides the real one; until it is wired,
//! a door without a verifier refuses every non-key token as `invalid_token`). The caller is
//! found in one store read: the agent with its owner, or the person's account, and the
//! replies waiting in its feedback ledger (carried on to `meta`). Every refusal is
//! counted per credential, address (IPv6 by its /64) and day: a credential Elixir knows (a
//! service key of an existing agent, a token of a known grant) under its own name, every
//! credential it does not know under one `unknown` bucket, so unauthenticated traffic adds at
//! most one row per address and day ([`Refused`] carries which). Challenges name the door's
//! RFC 9728 resource metadata and the five standard scopes.

use std::sync::Arc;

use async_trait::async_trait;
use mcp_door::{AuthError, AuthRequest, Authenticator, InvalidReason, Principal, bearer_token};
use uuid::Uuid;

use crate::access::door_path;
use crate::access::kinds::{
    Kind, STANDARD_SCOPES, canonical_scopes, credential_hint, digest, is_service_key, key_scopes,
};
use crate::domain::Millis;
use crate::model::{DoorAccount, DoorAgent, Refusal};
use crate::services::{AgentRef, Caller, Credential, Services};
use crate::store::{Store, StoreError};

/// What an OAuth access token grants, as its verifier reads it from the grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The grant's id: the credential a refusal of its tokens is counted under.
    pub grant_id: String,
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
    /// Live, but bound to another door → 403 `wrong_resource`, counted against the grant.
    #[error("token of grant {grant_id} bound to another resource")]
    WrongResource { grant_id: String },
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

/// The refusal-count credential of a refused token whose grant is known: `grant:<id>`.
pub const GRANT_CREDENTIAL: &str = "grant:";
/// The refusal-count credential of every presented credential Elixir does not know.
pub const UNKNOWN_CREDENTIAL: &str = "unknown";
/// The refusal-count credential of a request without a usable bearer.
pub const NO_CREDENTIAL: &str = "none";
const WRONG_RESOURCE: &str = "wrong_resource";

/// How many UTC days of refusal counts are kept: today and the seven before (the pages show
/// seven; one more day covers an owner in a time zone behind UTC).
pub const REFUSAL_RETENTION_DAYS: i64 = 8;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// Deletes the refusal counts older than [`REFUSAL_RETENTION_DAYS`] at `now`; returns how
/// many rows went.
pub async fn purge_refusals(store: &dyn Store, now: Millis) -> Result<u64, StoreError> {
    let oldest_kept = crate::domain::iso(now - (REFUSAL_RETENTION_DAYS - 1) * DAY_MS);
    store.purge_refusals(&oldest_kept[..10]).await
}

/// Whom a refused presentation is counted against.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Counted {
    /// No usable `Authorization: Bearer` header.
    Nothing,
    /// A credential Elixir does not know: one bucket for all of them.
    Unknown,
    /// The service key of an existing agent, by its hint.
    Key(String),
    /// A token of a known grant, by the grant's id.
    Grant(String),
}

impl Counted {
    /// The `credential_hint` of the refusal row.
    fn credential(&self) -> String {
        match self {
            Self::Nothing => NO_CREDENTIAL.to_owned(),
            Self::Unknown => UNKNOWN_CREDENTIAL.to_owned(),
            Self::Key(hint) => hint.clone(),
            Self::Grant(id) => format!("{GRANT_CREDENTIAL}{id}"),
        }
    }
}

/// Why a presentation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Missing,
    /// 401 `invalid_token`, for this reason.
    Invalid(InvalidReason),
    Suspended,
    WrongResource,
    /// The store could not answer: 503, not counted.
    Unavailable,
}

/// A refusal as the door decides it: the answer, and what it is counted under.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Refused {
    counted: Counted,
    reason: Reason,
}

impl Refused {
    fn new(counted: &Counted, reason: Reason) -> Self {
        Self {
            counted: counted.clone(),
            reason,
        }
    }

    fn unknown(reason: InvalidReason) -> Self {
        Self::new(&Counted::Unknown, Reason::Invalid(reason))
    }

    fn unavailable(e: &StoreError) -> Self {
        tracing::warn!(error = %e, "credential lookup failed");
        Self::new(&Counted::Unknown, Reason::Unavailable)
    }

    /// What the door answers.
    fn error(&self) -> AuthError {
        match self.reason {
            Reason::Missing => AuthError::Missing,
            Reason::Invalid(reason) => AuthError::Invalid(reason),
            Reason::Suspended => AuthError::Invalid(InvalidReason::Suspended),
            Reason::WrongResource => AuthError::Forbidden {
                code: WRONG_RESOURCE.into(),
                message: "This credential is valid at another Elixir door, not this one.".into(),
            },
            Reason::Unavailable => AuthError::Unavailable,
        }
    }

    /// The reason of the refusal row; `None`: not counted.
    fn counted_reason(&self) -> Option<&'static str> {
        match self.reason {
            Reason::Missing => Some("missing"),
            Reason::Invalid(_) => Some("invalid_token"),
            Reason::Suspended => Some("suspended"),
            Reason::WrongResource => Some(WRONG_RESOURCE),
            Reason::Unavailable => None,
        }
    }
}

impl DoorAuth {
    /// The public id in `/a/<id>/mcp` or `/i/<id>/mcp`, when the path is this kind's door.
    fn public_id<'a>(&self, path: &'a str) -> Option<&'a str> {
        door_path::public_id_for(self.kind, path)
    }

    async fn identify(&self, request: &AuthRequest<'_>, token: &str) -> Result<Principal, Refused> {
        if token.starts_with(crate::access::kinds::SERVICE_KEY_PREFIX) {
            return self.service_key(request.path, token).await;
        }
        let Some(verifier) = &self.verifier else {
            return Err(Refused::unknown(InvalidReason::Unknown));
        };
        let door_url = format!("{}{}", self.services.settings.public_url, request.path);
        let grant = match verifier.verify(token, &door_url).await {
            Ok(g) => g,
            Err(VerifyError::Invalid) => return Err(Refused::unknown(InvalidReason::Unknown)),
            Err(VerifyError::WrongResource { grant_id }) => {
                return Err(Refused::new(
                    &Counted::Grant(grant_id),
                    Reason::WrongResource,
                ));
            }
            Err(VerifyError::Unavailable) => {
                return Err(Refused::new(&Counted::Unknown, Reason::Unavailable));
            }
            Err(VerifyError::Refused { grant_id }) => {
                return Err(Refused::new(
                    &Counted::Grant(grant_id),
                    Reason::Invalid(InvalidReason::Revoked),
                ));
            }
        };
        // From here the token is a live grant's: every refusal is counted against it.
        let counted = Counted::Grant(grant.grant_id.clone());
        let scopes = canonical_scopes(&grant.scopes);
        match self.kind {
            Kind::Person => {
                if grant.agent_id.is_some() {
                    return Err(Refused::new(&counted, Reason::WrongResource));
                }
                self.person(grant.account_id, scopes, token, &counted).await
            }
            _ => {
                let Some(public_id) = self.public_id(request.path) else {
                    return Err(Refused::new(
                        &counted,
                        Reason::Invalid(InvalidReason::Unknown),
                    ));
                };
                let door = self
                    .services
                    .store
                    .door_agent_by_public_id(public_id)
                    .await
                    .map_err(|e| Refused::unavailable(&e))?
                    .filter(|d| d.agent.kind == self.kind)
                    .ok_or_else(|| {
                        Refused::new(&counted, Reason::Invalid(InvalidReason::Unknown))
                    })?;
                if grant.agent_id != Some(door.agent.id) {
                    return Err(Refused::new(&counted, Reason::WrongResource));
                }
                self.agent(door, scopes, Credential::OAuth, token, &counted)
            }
        }
    }

    async fn service_key(&self, path: &str, token: &str) -> Result<Principal, Refused> {
        if !is_service_key(token) {
            return Err(Refused::unknown(InvalidReason::Malformed));
        }
        let door = self
            .services
            .store
            .door_agent_by_key_digest(&digest(token))
            .await
            .map_err(|e| Refused::unavailable(&e))?
            .ok_or_else(|| Refused::unknown(InvalidReason::Unknown))?;
        // The key of an existing agent: counted under its own hint, which its owner sees.
        let counted = Counted::Key(credential_hint(token));
        let agent = &door.agent;
        if agent.suspended {
            return Err(Refused::new(&counted, Reason::Suspended));
        }
        // A key valid elsewhere gets the same answer whether or not this door's public id
        // exists, so a key holder cannot enumerate doors.
        if self.kind != agent.kind || self.public_id(path) != Some(agent.public_id.as_str()) {
            return Err(Refused::new(&counted, Reason::WrongResource));
        }
        let scopes = key_scopes(&agent.key_scopes);
        self.agent(door, scopes, Credential::ServiceKey, token, &counted)
    }

    async fn person(
        &self,
        account_id: Uuid,
        scopes: Vec<String>,
        token: &str,
        counted: &Counted,
    ) -> Result<Principal, Refused> {
        let DoorAccount {
            account,
            pending_responses,
        } = self
            .services
            .store
            .door_account(account_id)
            .await
            .map_err(|e| Refused::unavailable(&e))?
            .ok_or_else(|| Refused::new(counted, Reason::Invalid(InvalidReason::Inactive)))?;
        let caller = Caller {
            kind: Kind::Person,
            account_id,
            agent: None,
            tier: account.tier,
            timezone: account.timezone,
            primary_player_tag: account.primary_player_tag,
            credential: Credential::OAuth,
            pending_responses,
        };
        Ok(Principal::new(
            Kind::Person.as_str(),
            format!("account:{account_id}"),
            format!("oauth:{}", credential_hint(token)),
        )
        .with_scopes(scopes)
        .with_ext(caller))
    }

    /// The principal of an agent door, from the door read that found the agent (its owner
    /// came with it).
    fn agent(
        &self,
        door: DoorAgent,
        scopes: Vec<String>,
        credential: Credential,
        token: &str,
        counted: &Counted,
    ) -> Result<Principal, Refused> {
        let DoorAgent {
            agent,
            owner,
            pending_responses,
        } = door;
        if agent.suspended {
            return Err(Refused::new(counted, Reason::Suspended));
        }
        let owner =
            owner.ok_or_else(|| Refused::new(counted, Reason::Invalid(InvalidReason::Inactive)))?;
        let caller = Caller {
            kind: agent.kind,
            account_id: owner.id,
            agent: Some(AgentRef {
                id: agent.id,
                public_id: agent.public_id.clone(),
                name: agent.name.clone(),
                clan_tag: agent.clan_tag.clone(),
            }),
            tier: owner.tier.for_agent(),
            timezone: agent.timezone.clone().unwrap_or_else(|| "UTC".into()),
            primary_player_tag: None,
            credential,
            pending_responses,
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

    async fn count_refusal(&self, request: &AuthRequest<'_>, refused: &Refused) {
        let Some(reason) = refused.counted_reason() else {
            return;
        };
        let now = self.services.now();
        let address = self
            .services
            .settings
            .client_address(request.headers, request.peer);
        let refusal = Refusal {
            credential_hint: refused.counted.credential(),
            address: mcp_door::limit_key(&address),
            day: crate::domain::iso(now)[..10].to_owned(),
            door: request.path.to_owned(),
            reason: reason.to_owned(),
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
        let token = match bearer_token(request.headers) {
            Ok(token) => token,
            Err(e) => {
                let reason = match e {
                    AuthError::Missing => Reason::Missing,
                    _ => Reason::Invalid(InvalidReason::Malformed),
                };
                let refused = Refused::new(&Counted::Nothing, reason);
                self.count_refusal(request, &refused).await;
                return Err(e);
            }
        };
        match self.identify(request, token).await {
            Ok(principal) => Ok(principal),
            Err(refused) => {
                self.count_refusal(request, &refused).await;
                Err(refused.error())
            }
        }
    }

    fn challenge_at(&self, error: &AuthError, path: &str) -> String {
        let metadata = format!(
            "{}/.well-known/oauth-protected-resource{path}",
            self.services.settings.public_url
        );
        let description = match error {
            AuthError::Invalid(InvalidReason::Suspended) => ", error_description=\"suspended\"",
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
            Some((_, _, grant)) => Err(VerifyError::WrongResource {
                grant_id: grant.grant_id.clone(),
            }),
            None => Err(VerifyError::Invalid),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_what_it_is_counted_under() {
        assert_eq!(Counted::Nothing.credential(), "none");
        assert_eq!(Counted::Unknown.credential(), "unknown");
        assert_eq!(
            Counted::Key("0123456789ab".into()).credential(),
            "0123456789ab"
        );
        assert_eq!(Counted::Grant("g1".into()).credential(), "grant:g1");
        let key = Counted::Key("0123456789ab".into());
        let cases = [
            (Reason::Missing, AuthError::Missing, Some("missing")),
            (
                Reason::Invalid(InvalidReason::Inactive),
                AuthError::Invalid(InvalidReason::Inactive),
                Some("invalid_token"),
            ),
            // the challenge reads the suspension from the error mcp-door hands it, as a variant
            (
                Reason::Suspended,
                AuthError::Invalid(InvalidReason::Suspended),
                Some("suspended"),
            ),
            (Reason::Unavailable, AuthError::Unavailable, None),
        ];
        for (reason, error, counted) in cases {
            let refused = Refused::new(&key, reason);
            assert_eq!(refused.error(), error);
            assert_eq!(refused.counted_reason(), counted);
        }
        let wrong = Refused::new(&key, Reason::WrongResource);
        assert!(
            matches!(wrong.error(), AuthError::Forbidden { code, .. } if code == "wrong_resource")
        );
        assert_eq!(wrong.counted_reason(), Some("wrong_resource"));
    }
}
