//! A store that counts: [`CountingStore`] wraps the server's store and notes the name of every
//! store method a request calls (each of them one database statement on the path it is used
//! for), so a test can hold the statement budget of a call. What the budget is, and why, is
//! the test's (`cards::statements`) and `docs/elixir.md`'s.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use elixir::access::kinds::Tier;
use elixir::domain::{FeedbackStatus, Millis};
use elixir::model::{
    Account, Agent, AuditEntry, DoorAccount, DoorAgent, Feedback, FeedbackQuery, FeedbackReply,
    Ledger, NewFeedback, PollClaim, RawPayload, Receipt, Refusal, RefusalCount, StoredCatalogue,
    Window,
};
use elixir::store::{
    AccountStore, LedgerStore, Lifecycle, MeteringStore, PollStore, SharedStore, StoreError,
};
use uuid::Uuid;

/// The server's store, counting the calls made through it.
pub struct CountingStore {
    inner: SharedStore,
    calls: Mutex<Vec<&'static str>>,
}

impl CountingStore {
    pub fn wrap(inner: SharedStore) -> Arc<Self> {
        Arc::new(Self {
            inner,
            calls: Mutex::new(Vec::new()),
        })
    }

    fn note(&self, method: &'static str) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(method);
    }

    /// The methods called since the last take, in order; starts counting afresh.
    pub fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[async_trait]
impl Lifecycle for CountingStore {
    async fn migrate(&self) -> Result<(), StoreError> {
        self.note("migrate");
        self.inner.migrate().await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.note("ping");
        self.inner.ping().await
    }

    // No statement: the pool's gauges.
    fn pool_use(&self) -> mcp_door::PoolUse {
        self.inner.pool_use()
    }
}

#[async_trait]
impl AccountStore for CountingStore {
    async fn create_account(&self, account: &Account) -> Result<(), StoreError> {
        self.note("create_account");
        self.inner.create_account(account).await
    }

    async fn account(&self, id: Uuid) -> Result<Option<Account>, StoreError> {
        self.note("account");
        self.inner.account(id).await
    }

    async fn account_by_email(&self, email: &str) -> Result<Option<Account>, StoreError> {
        self.note("account_by_email");
        self.inner.account_by_email(email).await
    }

    async fn set_account_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError> {
        self.note("set_account_timezone");
        self.inner.set_account_timezone(id, timezone).await
    }

    async fn set_account_tier(&self, id: Uuid, tier: Tier) -> Result<(), StoreError> {
        self.note("set_account_tier");
        self.inner.set_account_tier(id, tier).await
    }

    async fn create_agent(&self, agent: &Agent) -> Result<(), StoreError> {
        self.note("create_agent");
        self.inner.create_agent(agent).await
    }

    async fn agent(&self, id: Uuid) -> Result<Option<Agent>, StoreError> {
        self.note("agent");
        self.inner.agent(id).await
    }

    async fn agent_by_public_id(&self, public_id: &str) -> Result<Option<Agent>, StoreError> {
        self.note("agent_by_public_id");
        self.inner.agent_by_public_id(public_id).await
    }

    async fn agents_of(&self, owner: Uuid) -> Result<Vec<Agent>, StoreError> {
        self.note("agents_of");
        self.inner.agents_of(owner).await
    }

    async fn set_agent_key(&self, id: Uuid, digest: Option<&str>) -> Result<(), StoreError> {
        self.note("set_agent_key");
        self.inner.set_agent_key(id, digest).await
    }

    async fn set_agent_suspended(&self, id: Uuid, suspended: bool) -> Result<(), StoreError> {
        self.note("set_agent_suspended");
        self.inner.set_agent_suspended(id, suspended).await
    }

    async fn set_agent_timezone(&self, id: Uuid, timezone: &str) -> Result<(), StoreError> {
        self.note("set_agent_timezone");
        self.inner.set_agent_timezone(id, timezone).await
    }

    async fn set_agent_key_scopes(&self, id: Uuid, scopes: &str) -> Result<(), StoreError> {
        self.note("set_agent_key_scopes");
        self.inner.set_agent_key_scopes(id, scopes).await
    }

    async fn door_agent_by_key_digest(
        &self,
        digest: &str,
    ) -> Result<Option<DoorAgent>, StoreError> {
        self.note("door_agent_by_key_digest");
        self.inner.door_agent_by_key_digest(digest).await
    }

    async fn door_agent_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<DoorAgent>, StoreError> {
        self.note("door_agent_by_public_id");
        self.inner.door_agent_by_public_id(public_id).await
    }

    async fn door_account(&self, id: Uuid) -> Result<Option<DoorAccount>, StoreError> {
        self.note("door_account");
        self.inner.door_account(id).await
    }
}

#[async_trait]
impl MeteringStore for CountingStore {
    async fn spend(
        &self,
        subject: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.note("spend");
        self.inner.spend(subject, window, start, limit).await
    }

    async fn spend_reading(
        &self,
        subject: &str,
        beside: &str,
        window: Window,
        start: Millis,
        limit: i64,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        self.note("spend_reading");
        self.inner
            .spend_reading(subject, beside, window, start, limit)
            .await
    }

    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError> {
        self.note("refund");
        self.inner.refund(subject, window, start).await
    }

    async fn usage(&self, subject: &str, window: Window, start: Millis) -> Result<i64, StoreError> {
        self.note("usage");
        self.inner.usage(subject, window, start).await
    }

    async fn usage_of_both(
        &self,
        first: &str,
        second: &str,
        window: Window,
        start: Millis,
    ) -> Result<(i64, i64), StoreError> {
        self.note("usage_of_both");
        self.inner.usage_of_both(first, second, window, start).await
    }
}

#[async_trait]
impl LedgerStore for CountingStore {
    async fn record_refusal(&self, refusal: &Refusal) -> Result<(), StoreError> {
        self.note("record_refusal");
        self.inner.record_refusal(refusal).await
    }

    async fn refusals(&self, day: &str) -> Result<Vec<RefusalCount>, StoreError> {
        self.note("refusals");
        self.inner.refusals(day).await
    }

    async fn refusals_of(
        &self,
        credentials: &[String],
        since_day: &str,
    ) -> Result<Vec<RefusalCount>, StoreError> {
        self.note("refusals_of");
        self.inner.refusals_of(credentials, since_day).await
    }

    async fn purge_refusals(&self, before_day: &str) -> Result<u64, StoreError> {
        self.note("purge_refusals");
        self.inner.purge_refusals(before_day).await
    }

    async fn insert_audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        self.note("insert_audit");
        self.inner.insert_audit(entry).await
    }

    async fn audit(&self, request_id: Uuid) -> Result<Option<AuditEntry>, StoreError> {
        self.note("audit");
        self.inner.audit(request_id).await
    }

    async fn recent_audit(
        &self,
        account_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.note("recent_audit");
        self.inner.recent_audit(account_id, limit).await
    }

    async fn recent_agent_audit(
        &self,
        agent_id: Uuid,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.note("recent_agent_audit");
        self.inner.recent_agent_audit(agent_id, limit).await
    }

    async fn insert_feedback(&self, feedback: &NewFeedback) -> Result<Feedback, StoreError> {
        self.note("insert_feedback");
        self.inner.insert_feedback(feedback).await
    }

    async fn feedback(&self, id: i64) -> Result<Option<Feedback>, StoreError> {
        self.note("feedback");
        self.inner.feedback(id).await
    }

    async fn feedback_page(
        &self,
        query: &FeedbackQuery,
    ) -> Result<(Vec<Feedback>, i64), StoreError> {
        self.note("feedback_page");
        self.inner.feedback_page(query).await
    }

    async fn mark_delivered(&self, ids: &[i64], at: Millis) -> Result<(), StoreError> {
        self.note("mark_delivered");
        self.inner.mark_delivered(ids, at).await
    }

    async fn pending_responses(&self, ledger: Ledger) -> Result<i64, StoreError> {
        self.note("pending_responses");
        self.inner.pending_responses(ledger).await
    }

    async fn all_feedback(
        &self,
        status: Option<FeedbackStatus>,
        limit: i64,
    ) -> Result<Vec<Feedback>, StoreError> {
        self.note("all_feedback");
        self.inner.all_feedback(status, limit).await
    }

    async fn reply_feedback(&self, reply: &FeedbackReply) -> Result<Feedback, StoreError> {
        self.note("reply_feedback");
        self.inner.reply_feedback(reply).await
    }
}

#[async_trait]
impl PollStore for CountingStore {
    async fn record_fetch(
        &self,
        receipt: &Receipt,
        raw: Option<&RawPayload>,
    ) -> Result<(), StoreError> {
        self.note("record_fetch");
        self.inner.record_fetch(receipt, raw).await
    }

    async fn receipts(&self, endpoint: &str, limit: i64) -> Result<Vec<Receipt>, StoreError> {
        self.note("receipts");
        self.inner.receipts(endpoint, limit).await
    }

    async fn raw_payload(&self, sha256: &str) -> Result<Option<RawPayload>, StoreError> {
        self.note("raw_payload");
        self.inner.raw_payload(sha256).await
    }

    async fn purge_raw(&self, before: Millis) -> Result<u64, StoreError> {
        self.note("purge_raw");
        self.inner.purge_raw(before).await
    }

    async fn put_cards_catalogue(&self, catalogue: &StoredCatalogue) -> Result<(), StoreError> {
        self.note("put_cards_catalogue");
        self.inner.put_cards_catalogue(catalogue).await
    }

    async fn cards_catalogue(&self) -> Result<Option<StoredCatalogue>, StoreError> {
        self.note("cards_catalogue");
        self.inner.cards_catalogue().await
    }

    async fn claim_poll(&self, claim: &PollClaim) -> Result<bool, StoreError> {
        self.note("claim_poll");
        self.inner.claim_poll(claim).await
    }

    async fn finish_poll(
        &self,
        job: &str,
        slot: &str,
        owner: &str,
        at: Millis,
    ) -> Result<(), StoreError> {
        self.note("finish_poll");
        self.inner.finish_poll(job, slot, owner, at).await
    }
}
