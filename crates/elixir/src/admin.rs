//! Operator actions over the store, shared by the CLI and the tests: accounts, agents and
//! their service keys, feedback replies. No HTTP here.

use uuid::Uuid;

use crate::access::kinds::{Kind, Random, Tier, digest, new_public_id, new_service_key, new_uuid};
use crate::domain::{FeedbackStatus, Millis};
use crate::model::{Account, Agent, Feedback, FeedbackReply};
use crate::store::{SharedStore, StoreError};

/// An operator action that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// A tier allowance is used up (SURFACE §4.2); the message is for the account holder.
    #[error("{0}")]
    Allowance(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Creates an account (member unless `tier` says otherwise), timezone UTC.
pub async fn create_account(
    store: &SharedStore,
    random: &dyn Random,
    now: Millis,
    email: Option<&str>,
    tier: Tier,
) -> Result<Account, AdminError> {
    let email = email.map(|e| e.trim().to_lowercase());
    if let Some(e) = &email
        && (!e.contains('@') || e.len() > 254)
    {
        return Err(AdminError::Invalid(format!(
            "{e:?} is not an email address"
        )));
    }
    let account = Account {
        id: new_uuid(random),
        email,
        tier,
        timezone: "UTC".into(),
        primary_player_tag: None,
        created_at: now,
    };
    store.create_account(&account).await?;
    Ok(account)
}

/// A created agent and its service key (shown once).
#[derive(Debug, Clone)]
pub struct IssuedAgent {
    pub agent: Agent,
    pub service_key: String,
}

/// Creates an agent or integration for `owner` with a fresh public id and service key.
///
/// The owner's tier allowance (SURFACE §4.2) counts every agent the owner has: integrations
/// and suspended ones included (nothing deletes an agent). Over it: [`AdminError::Allowance`],
/// nothing created. The count and the insert are not one transaction, so two simultaneous
/// creations at the edge can both pass.
pub async fn create_agent(
    store: &SharedStore,
    random: &dyn Random,
    now: Millis,
    owner: Uuid,
    name: &str,
    kind: Kind,
) -> Result<IssuedAgent, AdminError> {
    if kind == Kind::Person {
        return Err(AdminError::Invalid(
            "an agent is of kind agent or integration".into(),
        ));
    }
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(AdminError::Invalid(
            "the name must have 1 to 80 characters".into(),
        ));
    }
    let Some(account) = store.account(owner).await? else {
        return Err(AdminError::NotFound(format!("account {owner}")));
    };
    if let Some(allowed) = account.tier.agents() {
        let owned = store.agents_of(owner).await?.len();
        if owned >= allowed {
            return Err(AdminError::Allowance(format!(
                "The {tier} tier allows {allowed} agents (integrations and suspended agents \
                 count); this account has {owned}. No agent was created. A higher tier allows \
                 more; the operator sets tiers.",
                tier = account.tier.as_str(),
            )));
        }
    }
    let service_key = new_service_key(random);
    let agent = Agent {
        id: new_uuid(random),
        public_id: new_public_id(random),
        owner_account_id: owner,
        name: name.to_owned(),
        kind,
        suspended: false,
        key_digest: Some(digest(&service_key)),
        key_scopes: String::new(),
        timezone: None,
        created_at: now,
        clan_tag: None,
    };
    store.create_agent(&agent).await?;
    Ok(IssuedAgent { agent, service_key })
}

async fn agent_by_public_id(store: &SharedStore, public_id: &str) -> Result<Agent, AdminError> {
    store
        .agent_by_public_id(public_id)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("agent {public_id}")))
}

/// Replaces the agent's key; the public id, identities and read pointers stay. Returns the new key.
pub async fn rotate_key(
    store: &SharedStore,
    random: &dyn Random,
    public_id: &str,
) -> Result<String, AdminError> {
    let agent = agent_by_public_id(store, public_id).await?;
    let key = new_service_key(random);
    store.set_agent_key(agent.id, Some(&digest(&key))).await?;
    Ok(key)
}

/// Revokes the agent's key (OAuth grants to the door are unaffected).
pub async fn revoke_key(store: &SharedStore, public_id: &str) -> Result<(), AdminError> {
    let agent = agent_by_public_id(store, public_id).await?;
    Ok(store.set_agent_key(agent.id, None).await?)
}

/// Replaces the capabilities of the agent's service key: standard scopes only, never empty
/// (every standard scope is stored as the empty list, "all five").
pub async fn set_key_scopes(
    store: &SharedStore,
    public_id: &str,
    scopes: &[String],
) -> Result<(), AdminError> {
    if scopes.is_empty()
        || scopes
            .iter()
            .any(|s| !crate::access::kinds::STANDARD_SCOPES.contains(&s.as_str()))
    {
        return Err(AdminError::Invalid(
            "a key carries one or more of the five standard capabilities".into(),
        ));
    }
    let agent = agent_by_public_id(store, public_id).await?;
    let canonical = crate::access::kinds::canonical_scopes(scopes);
    let stored = if canonical.len() == crate::access::kinds::STANDARD_SCOPES.len() {
        String::new()
    } else {
        canonical.join(" ")
    };
    Ok(store.set_agent_key_scopes(agent.id, &stored).await?)
}

/// Suspends or resumes the agent: a suspended agent's credentials answer 401 "suspended".
pub async fn set_suspended(
    store: &SharedStore,
    public_id: &str,
    suspended: bool,
) -> Result<(), AdminError> {
    let agent = agent_by_public_id(store, public_id).await?;
    Ok(store.set_agent_suspended(agent.id, suspended).await?)
}

/// The operator's reply to a report: a status, optionally a response (delivered on the
/// reporter's next `elixir_my_feedback` page) and the release it shipped in.
pub async fn reply_feedback(
    store: &SharedStore,
    now: Millis,
    id: i64,
    status: FeedbackStatus,
    message: Option<&str>,
    shipped_in: Option<&str>,
) -> Result<Feedback, AdminError> {
    if status == FeedbackStatus::New {
        return Err(AdminError::Invalid(
            "a reply moves a report out of new (seen, planned, done or declined)".into(),
        ));
    }
    if message.is_some_and(|m| m.trim().is_empty() || m.chars().count() > 4000) {
        return Err(AdminError::Invalid(
            "the reply must have 1 to 4000 characters".into(),
        ));
    }
    match store
        .reply_feedback(&FeedbackReply {
            id,
            status,
            response: message.map(str::to_owned),
            shipped_in: shipped_in.map(str::to_owned),
            related_tools: None,
            at: now,
        })
        .await
    {
        Err(StoreError::NotFound) => Err(AdminError::NotFound(format!("feedback {id}"))),
        other => Ok(other?),
    }
}
