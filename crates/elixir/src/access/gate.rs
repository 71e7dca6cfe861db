//! The door's two checks of a request, from the bearer arriving to the tool stage: who is
//! calling ([`DoorAuth`], the door's `Authenticator`) and how much they may still do
//! ([`Limiter`], its `MethodGate`).
//!
//! **Who** (SURFACE §1.2), from the headers alone: service keys (`svt_…`, SHA-256 at rest,
//! bound to one agent or integration door) checked here, and OAuth access tokens handed to a
//! pluggable [`AccessTokenVerifier`] ([`OAuthVerifier`] over mcp-oauth in `serve`,
//! [`StaticVerifier`] in tests; a door without one refuses every non-key token as
//! `invalid_token`). The caller is found in one door read of the store: the agent with its
//! owner, or the person's account, and the replies waiting in its feedback ledger (carried on
//! to `meta`). Every refusal is counted per credential, address (IPv6 by its /64) and day,
//! under what `access::refusals` names. Challenges name the door's RFC 9728 resource metadata
//! and the five standard scopes.
//!
//! **How much** (SURFACE §4): the hourly rate per principal (fixed UTC clock hour;
//! `initialize`, notifications and `ping` exempt) and the daily quota per paying account by
//! tier (reset 00:00 UTC; Help tools free). Counters live in the store, so they hold across
//! instances on PostgreSQL; an unreachable counter fails open and is logged. A `tools/call`
//! the door will resolve (a tool of the registry, visible to the caller's kind, within its
//! scopes) is metered in one statement when it is framed: the hour and the day together
//! ([`DoorStore::meter`](crate::store::DoorStore::meter)), with the day's live count and the
//! card catalogue's stamp read beside them. What the day decided is answered at the tool
//! stage, as when the two were counted apart: a full day refuses there, after the door's own
//! checks. A call the door refuses between the stages anyway (arguments not an object, a
//! header mismatch) gets its day back when its audit record settles (`access::refunds`).
//! Every other request spends only its hour. `meta.quota` is computed here, once per call,
//! from the counts the statement returns. What the gate counts travels with the request as
//! typed values in its extensions (`access::metering`): the call reads the snapshot, the
//! stamp and the billed counter ([`refund`]).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use http::StatusCode;
use mcp_door::{
    AuthError, AuthRequest, Authenticator, Extensions, GateRefusal, GateRequest, GateStage,
    InvalidReason, MethodGate, Principal, bearer_token,
};
use mcp_oauth::{AuthServer, TokenError};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::access::door_path;
use crate::access::kinds::{
    Kind, SERVICE_KEY_PREFIX, STANDARD_SCOPES, canonical_scopes, credential_hint, digest,
    is_service_key, key_scopes,
};
use crate::access::metering::{
    Billed, CatalogueStamp, DAY_MS, DayUsed, Framed, HOUR_MS, HourUsed, QUOTA_RPC_CODE,
    QuotaSnapshot, Resolved, allowance, day_start, hour_start, hour_used, seconds_until,
};
use crate::access::refunds;
use crate::access::refusals::{Counted, Reason, Refused};
use crate::domain::{Millis, iso};
use crate::model::{DoorAccount, DoorAgent, Refusal, Window};
use crate::services::{AgentRef, Caller, Credential, Services};
use crate::store::{Meter, StoreError};

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

/// The doors' [`AccessTokenVerifier`] over mcp-oauth: scopes come from the grant on every call.
pub struct OAuthVerifier {
    pub oauth: Arc<AuthServer>,
}

#[async_trait]
impl AccessTokenVerifier for OAuthVerifier {
    async fn verify(&self, token: &str, door_url: &str) -> Result<Grant, VerifyError> {
        match self.oauth.verify_access_token(token, door_url).await {
            Ok(grant) => {
                let account_id =
                    Uuid::parse_str(&grant.account_id).map_err(|_| VerifyError::Invalid)?;
                let agent_id = if grant.personal {
                    None
                } else {
                    Some(Uuid::parse_str(&grant.subject.id).map_err(|_| VerifyError::Invalid)?)
                };
                Ok(Grant {
                    grant_id: grant.grant_id,
                    account_id,
                    agent_id,
                    scopes: grant.scopes,
                })
            }
            Err(TokenError::WrongResource { grant_id }) => {
                Err(VerifyError::WrongResource { grant_id })
            }
            Err(TokenError::Unavailable) => Err(VerifyError::Unavailable),
            Err(e) => match e.grant_id() {
                // Counted against the grant, so its owner sees a client presenting stale tokens.
                Some(grant_id) => Err(VerifyError::Refused {
                    grant_id: grant_id.to_owned(),
                }),
                None => Err(VerifyError::Invalid),
            },
        }
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

/// The authenticator of one kind of door.
pub struct DoorAuth {
    pub kind: Kind,
    pub services: Arc<Services>,
    pub verifier: Option<Arc<dyn AccessTokenVerifier>>,
}

impl DoorAuth {
    /// The public id in `/a/<id>/mcp` or `/i/<id>/mcp`, when the path is this kind's door.
    fn public_id<'a>(&self, path: &'a str) -> Option<&'a str> {
        door_path::public_id_for(self.kind, path)
    }

    async fn identify(&self, request: &AuthRequest<'_>, token: &str) -> Result<Principal, Refused> {
        if token.starts_with(SERVICE_KEY_PREFIX) {
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
            day: iso(now)[..10].to_owned(),
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

    /// The granted set plus    /// The granted set plus the missing one, in canonical order, so a client can re-authorize
    /// with exactly that value.
    fn insufficient_scope_challenge(&self, scopes: &[String]) -> String {
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\"",
            canonical_scopes(scopes).join(" ")
        )
    }
}

/// What the gate knows of a tool before the door resolves it: whether the call will reach
/// the tool stage, and whether it spends the day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolTerms {
    /// Costs daily quota (every tool but the Help tools).
    pub metered: bool,
    /// The scope the door requires.
    pub scope: &'static str,
    /// The kinds the tool is visible to.
    pub kinds: Vec<Kind>,
}

impl ToolTerms {
    /// Whether the door resolves a call of this tool by `kind` holding `scopes`.
    fn reached_by(&self, kind: Kind, scopes: &[String]) -> bool {
        self.kinds.contains(&kind) && scopes.iter().any(|s| s == self.scope)
    }
}

/// The method gate metering every door.
pub struct Limiter {
    pub services: Arc<Services>,
    /// The registry's tools by name, as the gate needs them.
    pub tools: HashMap<String, ToolTerms>,
}

impl Limiter {
    /// A tool call the door will resolve: hour and day in one statement.
    async fn meter_call(
        &self,
        r: &mut GateRequest<'_>,
        caller: &Caller,
        metered: bool,
    ) -> Result<(), GateRefusal> {
        let now = self.services.now();
        let (hour, day) = (hour_start(now), day_start(now));
        let hour_limit = self.services.settings.hourly_rate;
        let (hour_subject, calls_subject, live_subject) = (
            caller.hour_subject(),
            caller.calls_subject(),
            caller.live_subject(),
        );
        let meter = Meter {
            hour_subject: &hour_subject,
            hour_start: hour,
            hour_limit,
            calls_subject: &calls_subject,
            live_subject: &live_subject,
            day_start: day,
            day_limit: metered.then(|| caller.tier.calls_per_day().unwrap_or(i64::MAX)),
        };
        let counted = match self.services.store.meter(&meter).await {
            Ok(m) => m,
            Err(e) => {
                // Failing open: the tool stage tries the day on its own.
                tracing::warn!(error = %e, "usage counters unreachable; failing open");
                return Ok(());
            }
        };
        let Some(hour_used) = counted.hour else {
            return Err(hour_refusal(r, hour_limit, hour, now));
        };
        r.extensions.insert(HourUsed(hour_used));
        r.extensions.insert(CatalogueStamp(counted.catalogue_at));
        let Some(calls) = counted.calls else {
            r.extensions.insert(Framed::DayFull(day));
            return Ok(());
        };
        if metered {
            r.extensions.insert(Billed {
                subject: calls_subject,
                start: day,
            });
        }
        r.extensions.insert(Framed::Counted);
        let used = DayUsed {
            calls,
            live: counted.live,
        };
        match quota(&self.services, caller, Some(hour_used), Some(used)).await {
            Ok(q) => {
                r.extensions.insert(QuotaSnapshot(q));
            }
            Err(e) => tracing::warn!(error = %e, "quota snapshot unavailable"),
        }
        Ok(())
    }

    async fn hourly(&self, r: &mut GateRequest<'_>, caller: &Caller) -> Result<(), GateRefusal> {
        if matches!(r.method, "initialize" | "ping") {
            return Ok(());
        }
        let now = self.services.now();
        let start = hour_start(now);
        let limit = self.services.settings.hourly_rate;
        match self
            .services
            .store
            .spend(&caller.hour_subject(), Window::Hour, start, limit)
            .await
        {
            Ok(Some(used)) => {
                r.extensions.insert(HourUsed(used));
                Ok(())
            }
            Ok(None) => Err(hour_refusal(r, limit, start, now)),
            Err(e) => {
                tracing::warn!(error = %e, "hourly counter unreachable; failing open");
                Ok(())
            }
        }
    }

    async fn daily(&self, r: &mut GateRequest<'_>, caller: &Caller) -> Result<(), GateRefusal> {
        let metered = r
            .tool
            .and_then(|t| self.tools.get(t))
            .is_none_or(|t| t.metered);
        let now = self.services.now();
        let start = day_start(now);
        let subject = caller.calls_subject();
        let used = if metered {
            let limit = caller.tier.calls_per_day().unwrap_or(i64::MAX);
            match self
                .services
                .store
                .spend_reading(&subject, &caller.live_subject(), Window::Day, start, limit)
                .await
            {
                Ok(Some((calls, live))) => {
                    r.extensions.insert(Billed {
                        subject: subject.clone(),
                        start,
                    });
                    Some(DayUsed { calls, live })
                }
                Ok(None) => return Err(day_refusal(r, caller, limit, start)),
                Err(e) => {
                    tracing::warn!(error = %e, "daily counter unreachable; failing open");
                    None
                }
            }
        } else {
            None
        };
        let hour_used = hour_used(r.extensions);
        match quota(&self.services, caller, hour_used, used).await {
            Ok(q) => {
                r.extensions.insert(QuotaSnapshot(q));
            }
            Err(e) => tracing::warn!(error = %e, "quota snapshot unavailable"),
        }
        Ok(())
    }
}

#[async_trait]
impl MethodGate for Limiter {
    async fn check(&self, r: &mut GateRequest<'_>) -> Result<(), GateRefusal> {
        let principal = r.principal;
        let Some(caller) = principal.ext::<Caller>() else {
            return Ok(());
        };
        match r.stage {
            GateStage::Framed => {
                if r.method == "tools/call"
                    && let Some(terms) = r.tool.and_then(|t| self.tools.get(t))
                    && terms.reached_by(caller.kind, &principal.scopes)
                {
                    return self.meter_call(r, caller, terms.metered).await;
                }
                self.hourly(r, caller).await
            }
            GateStage::ToolResolved => match r.extensions.get::<Framed>().copied() {
                Some(Framed::DayFull(start)) => {
                    let limit = caller.tier.calls_per_day().unwrap_or(i64::MAX);
                    Err(day_refusal(r, caller, limit, start))
                }
                Some(Framed::Counted) => {
                    r.extensions.insert(Resolved);
                    Ok(())
                }
                // Not metered when framed (the counters failed open): the day on its own.
                None => self.daily(r, caller).await,
            },
            _ => Ok(()),
        }
    }
}

/// The refusal of a spent hour.
fn hour_refusal(r: &GateRequest<'_>, limit: i64, start: Millis, now: Millis) -> GateRefusal {
    let resets = start + HOUR_MS;
    let retry = seconds_until(resets, now);
    GateRefusal {
        status: StatusCode::TOO_MANY_REQUESTS,
        retry_after_secs: Some(retry),
        code: QUOTA_RPC_CODE,
        message: format!("Hourly rate spent: {limit} requests per clock hour for this connection."),
        data: Some(json!({
            "code": "quota_exceeded",
            "class": "budget",
            "window": "hour",
            "resets_at": iso(resets),
            "retry_after_s": retry,
            "hint": format!("Wait {retry} s (Retry-After) and repeat the same request; see elixir_docs({{\"page\": \"limits\", \"section\": \"hourly-rate\"}})."),
            "request_id": r.request_id.to_string(),
        })),
    }
}

/// The refusal of a spent day (the day starting at `start`).
fn day_refusal(r: &GateRequest<'_>, caller: &Caller, limit: i64, start: Millis) -> GateRefusal {
    let resets = start + DAY_MS;
    GateRefusal {
        status: StatusCode::OK,
        retry_after_secs: None,
        code: QUOTA_RPC_CODE,
        message: format!(
            "Daily quota spent: {limit} tool calls a day on the {} tier.",
            caller.tier.as_str()
        ),
        data: Some(json!({
            "code": "quota_exceeded",
            "class": "budget",
            "window": "day",
            "resets_at": iso(resets),
            "hint": "Help tools stay free: elixir_docs({\"page\": \"limits\", \"section\": \"daily-quota\"}). Other tools answer again after resets_at (00:00 UTC).",
            "request_id": r.request_id.to_string(),
        })),
    }
}

/// Takes a refunded call back off the daily counter it was billed to (the [`Billed`] the
/// gate left in the request's extensions; an unbilled call has nothing to refund). A refund
/// the database cannot take now (`Unavailable`: the call failed because the database went
/// away after the gate billed it) is retried in the background until the database answers,
/// so an outage never charges for the calls it failed. A refund whose statement met the
/// fault in flight has an unknown outcome; retrying it may take one call too many back
/// (never below zero): the caller's favour, not the operator's.
pub async fn refund(services: &Services, extensions: &Extensions) {
    let Some(billed) = extensions.get::<Billed>() else {
        return;
    };
    match services
        .store
        .refund(&billed.subject, Window::Day, billed.start)
        .await
    {
        Ok(()) => {}
        Err(StoreError::Unavailable(e)) => {
            tracing::warn!(error = %e, "refund deferred until the database answers");
            // Detached on purpose: it holds no request and ends by itself; a shutdown that
            // drops it leaves the call charged, as before.
            tokio::spawn(refunds::retry(Arc::clone(&services.store), billed.clone()));
        }
        Err(e) => tracing::warn!(error = %e, "refund not recorded"),
    }
}

/// `meta.quota` for `caller` now. Counts not passed in are read from the store (the two day
/// counts in one statement).
pub async fn quota(
    services: &Services,
    caller: &Caller,
    hour_used: Option<i64>,
    day_used: Option<DayUsed>,
) -> Result<Value, StoreError> {
    let now = services.now();
    let (hour, day) = (hour_start(now), day_start(now));
    let store = &services.store;
    let hour_used = match hour_used {
        Some(n) => n,
        None => {
            store
                .usage(&caller.hour_subject(), Window::Hour, hour)
                .await?
        }
    };
    let day_used = match day_used {
        Some(d) => d,
        None => {
            let (calls, live) = store
                .usage_of_both(
                    &caller.calls_subject(),
                    &caller.live_subject(),
                    Window::Day,
                    day,
                )
                .await?;
            DayUsed { calls, live }
        }
    };
    let limit = services.settings.hourly_rate;
    let mut hour_block = allowance(hour_used, Some(limit));
    hour_block["resets_at"] = json!(iso(hour + HOUR_MS));
    Ok(json!({
        "calls": allowance(day_used.calls, caller.tier.calls_per_day()),
        "live": allowance(day_used.live, caller.tier.live_per_day()),
        "hour": hour_block,
        "resets_at": iso(day + DAY_MS),
    }))
}
