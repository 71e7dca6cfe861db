//! The accounts area: accounts, their agents and integrations, service keys (as digests) and
//! the settings people change on the account pages. [`AccountStore`] and its SQL. The reads
//! a door authenticates a call with are the door area's (`store/door.rs`).

use async_trait::async_trait;
use sqlkit::sql;
use uuid::Uuid;

use super::rows::{self, ACCOUNT_COLUMNS, AGENT_COLUMNS};
use super::sql_store::{SqlStore, StoreError, found};
use crate::access::kinds::Tier;
use crate::model::{Account, Agent};

/// Accounts, agents, keys and settings.
#[async_trait]
pub trait AccountStore: Send + Sync + 'static {
    /// Stores a new account; a taken email is [`StoreError::Conflict`].
    async fn create_account(&self, account: &Account) -> Result<(), StoreError>;
    /// The account with this id.
    async fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError>;
    /// The account with this (normalized) email.
    async fn account_by_email(&self, email: &str) -> Result<Option<Account>, StoreError>;
    /// Sets the account's time zone; an unknown account is [`StoreError::NotFound`].
    async fn set_account_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError>;
    /// Sets the account's tier; an unknown account is [`StoreError::NotFound`].
    async fn set_account_tier(&self, id: Uuid, tier: Tier) -> Result<(), StoreError>;

    /// Stores a new agent or integration; a taken public id or key digest is a conflict.
    async fn create_agent(&self, agent: &Agent) -> Result<(), StoreError>;
    /// The agent with this id.
    async fn agent(&self, id: Uuid) -> Result<Option<Agent>, StoreError>;
    /// The agent whose door carries this public id.
    async fn agent_by_public_id(&self, public_id: &str) -> Result<Option<Agent>, StoreError>;
    /// The account's agents and integrations, oldest first.
    async fn agents_of(&self, owner: Uuid) -> Result<Vec<Agent>, StoreError>;
    /// Replaces (or with `None` revokes) the agent's key.
    async fn set_agent_key(&self, id: Uuid, digest: Option<&str>) -> Result<(), StoreError>;
    /// Suspends or resumes the agent.
    async fn set_agent_suspended(&self, id: Uuid, suspended: bool) -> Result<(), StoreError>;
    /// Sets the agent's own time zone.
    async fn set_agent_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError>;
    /// Replaces the capabilities of the agent's service key (space-separated; empty = all five).
    async fn set_agent_key_scopes(&self, id: Uuid, scopes: &str) -> Result<(), StoreError>;
}

#[async_trait]
impl AccountStore for SqlStore {
    async fn create_account(&self, a: &Account) -> Result<(), StoreError> {
        sql(format!(
            "INSERT INTO accounts ({ACCOUNT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
        ))
        .bind(a.id)
        .bind(a.email.as_deref())
        .bind(a.tier.as_str())
        .bind(&a.timezone)
        .bind(a.primary_player_tag.as_deref())
        .bind(a.created_at)
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError> {
        sql(format!(
            "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::account)
        .transpose()
    }

    async fn account_by_email(&self, email: &str) -> Result<Option<Account>, StoreError> {
        sql(format!(
            "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = $1"
        ))
        .bind(email)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::account)
        .transpose()
    }

    async fn set_account_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError> {
        found(
            sql("UPDATE accounts SET timezone = $1 WHERE id = $2")
                .bind(timezone)
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }

    async fn set_account_tier(&self, id: Uuid, tier: Tier) -> Result<(), StoreError> {
        found(
            sql("UPDATE accounts SET tier = $1 WHERE id = $2")
                .bind(tier.as_str())
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }

    async fn create_agent(&self, a: &Agent) -> Result<(), StoreError> {
        sql(format!(
            "INSERT INTO agents ({AGENT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(a.id)
        .bind(&a.public_id)
        .bind(a.owner_account_id)
        .bind(&a.name)
        .bind(a.kind.as_str())
        .bind(a.suspended)
        .bind(a.key_digest.as_deref())
        .bind(&a.key_scopes)
        .bind(a.timezone.as_deref())
        .bind(a.created_at)
        .bind(a.clan_tag.as_deref())
        .execute(&self.db)
        .await?;
        Ok(())
    }

    async fn agent(&self, id: Uuid) -> Result<Option<Agent>, StoreError> {
        sql(format!("SELECT {AGENT_COLUMNS} FROM agents WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.db)
            .await?
            .as_ref()
            .map(rows::agent)
            .transpose()
    }

    async fn agent_by_public_id(&self, public_id: &str) -> Result<Option<Agent>, StoreError> {
        sql(format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE public_id = $1"
        ))
        .bind(public_id)
        .fetch_optional(&self.db)
        .await?
        .as_ref()
        .map(rows::agent)
        .transpose()
    }

    async fn agents_of(&self, owner: Uuid) -> Result<Vec<Agent>, StoreError> {
        sql(format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE owner_account_id = $1 \
             ORDER BY created_at, public_id"
        ))
        .bind(owner)
        .fetch_all(&self.db)
        .await?
        .iter()
        .map(rows::agent)
        .collect()
    }

    async fn set_agent_key(&self, id: Uuid, digest: Option<&str>) -> Result<(), StoreError> {
        found(
            sql("UPDATE agents SET key_digest = $1 WHERE id = $2")
                .bind(digest)
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }

    async fn set_agent_suspended(&self, id: Uuid, suspended: bool) -> Result<(), StoreError> {
        found(
            sql("UPDATE agents SET suspended = $1 WHERE id = $2")
                .bind(suspended)
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }

    async fn set_agent_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError> {
        found(
            sql("UPDATE agents SET timezone = $1 WHERE id = $2")
                .bind(timezone)
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }

    async fn set_agent_key_scopes(&self, id: Uuid, scopes: &str) -> Result<(), StoreError> {
        found(
            sql("UPDATE agents SET key_scopes = $1 WHERE id = $2")
                .bind(scopes)
                .bind(id)
                .execute(&self.db)
                .await?,
        )
    }
}
