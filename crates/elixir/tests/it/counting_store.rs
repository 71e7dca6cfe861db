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
use elixir::model::{
    ClanRow, CorpusCounts, CoverageGap, Ingested, LogRead, MemberSeen, Membership, NewBattle,
    PlayerRow, PlayerSnapshot, Poll, PollDone, PollEndpoint, Principal, RecordedBattle, SlotUse,
    TrackClan, TrackPlayer, TrackResult, TrackedClan, TrackedPlayer,
};
use elixir::store::{
    AccountStore, BattleQuery, BattleTally, Bound, DeckDetail, DoorStore, Identity, LedgerStore,
    Lifecycle, MetaQuery, MetaReads, MetaRows, Meter, Metered, MeteringStore, PlayerReads,
    PollStore, RecordStore, SharedStore, StoreError, TrackingStore, UpstreamTally,
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
}

#[async_trait]
impl DoorStore for CountingStore {
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

    async fn meter(&self, meter: &Meter<'_>) -> Result<Metered, StoreError> {
        self.note("meter");
        self.inner.meter(meter).await
    }

    async fn refund(&self, subject: &str, window: Window, start: Millis) -> Result<(), StoreError> {
        self.note("refund");
        self.inner.refund(subject, window, start).await
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

    async fn insert_audits(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        self.note("insert_audits");
        self.inner.insert_audits(entries).await
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
    async fn update_budget(
        &self,
        at: Millis,
        update: &mut (dyn for<'s> FnMut(Option<&'s str>) -> String + Send),
    ) -> Result<(), StoreError> {
        self.note("update_budget");
        self.inner.update_budget(at, update).await
    }

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

#[async_trait]
impl TrackingStore for CountingStore {
    async fn track_player(&self, request: &TrackPlayer) -> Result<TrackResult, StoreError> {
        self.note("track_player");
        self.inner.track_player(request).await
    }

    async fn untrack_player(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError> {
        self.note("untrack_player");
        self.inner.untrack_player(account, principal, tag).await
    }

    async fn set_player_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError> {
        self.note("set_player_notify");
        self.inner
            .set_player_notify(account, principal, tag, notify)
            .await
    }

    async fn tracked_players(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedPlayer>, StoreError> {
        self.note("tracked_players");
        self.inner.tracked_players(account, principal).await
    }

    async fn track_clan(&self, request: &TrackClan) -> Result<TrackResult, StoreError> {
        self.note("track_clan");
        self.inner.track_clan(request).await
    }

    async fn untrack_clan(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
    ) -> Result<bool, StoreError> {
        self.note("untrack_clan");
        self.inner.untrack_clan(account, principal, tag).await
    }

    async fn set_clan_notify(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        notify: bool,
    ) -> Result<Option<bool>, StoreError> {
        self.note("set_clan_notify");
        self.inner
            .set_clan_notify(account, principal, tag, notify)
            .await
    }

    async fn tracked_clans(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<TrackedClan>, StoreError> {
        self.note("tracked_clans");
        self.inner.tracked_clans(account, principal).await
    }

    async fn slot_use(&self, account: Uuid) -> Result<SlotUse, StoreError> {
        self.note("slot_use");
        self.inner.slot_use(account).await
    }

    async fn set_nickname(
        &self,
        account: Uuid,
        principal: Principal,
        tag: &str,
        nickname: Option<&str>,
        at: Millis,
    ) -> Result<Option<String>, StoreError> {
        self.note("set_nickname");
        self.inner
            .set_nickname(account, principal, tag, nickname, at)
            .await
    }

    async fn nicknames(
        &self,
        account: Uuid,
        principal: Principal,
    ) -> Result<Vec<(String, String)>, StoreError> {
        self.note("nicknames");
        self.inner.nicknames(account, principal).await
    }

    async fn bind_identity(&self, agent: Uuid, identity: &Identity) -> Result<Bound, StoreError> {
        self.note("bind_identity");
        self.inner.bind_identity(agent, identity).await
    }

    async fn identity(
        &self,
        agent: Uuid,
        external_id: &str,
    ) -> Result<Option<Identity>, StoreError> {
        self.note("identity");
        self.inner.identity(agent, external_id).await
    }

    async fn identities(
        &self,
        agent: Uuid,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Identity>, i64), StoreError> {
        self.note("identities");
        self.inner.identities(agent, limit, offset).await
    }

    async fn set_agent_clan(&self, agent: Uuid, clan_tag: Option<&str>) -> Result<(), StoreError> {
        self.note("set_agent_clan");
        self.inner.set_agent_clan(agent, clan_tag).await
    }
}

#[async_trait]
impl RecordStore for CountingStore {
    async fn note_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        at: Millis,
    ) -> Result<(), StoreError> {
        self.note("note_read");
        self.inner.note_read(endpoint, subject, at).await
    }

    async fn due_polls(&self, now: Millis, limit: i64) -> Result<Vec<Poll>, StoreError> {
        self.note("due_polls");
        self.inner.due_polls(now, limit).await
    }

    async fn lease_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        now: Millis,
        until: Millis,
    ) -> Result<bool, StoreError> {
        self.note("lease_read");
        self.inner
            .lease_read(endpoint, subject, owner, now, until)
            .await
    }

    async fn finish_read(
        &self,
        endpoint: PollEndpoint,
        subject: &str,
        owner: &str,
        done: &PollDone,
    ) -> Result<(), StoreError> {
        self.note("finish_read");
        self.inner.finish_read(endpoint, subject, owner, done).await
    }

    async fn polls_of(&self, subject: &str) -> Result<Vec<Poll>, StoreError> {
        self.note("polls_of");
        self.inner.polls_of(subject).await
    }

    async fn schedule(
        &self,
        endpoints: &[PollEndpoint],
        subject: &str,
        at: Millis,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.note("schedule");
        self.inner.schedule(endpoints, subject, at, reason).await
    }

    async fn demand(&self, subject: &str, at: Millis, until: Millis) -> Result<(), StoreError> {
        self.note("demand");
        self.inner.demand(subject, at, until).await
    }

    async fn ingest_battles(
        &self,
        player: &str,
        player_name: Option<&str>,
        read_at: Millis,
        battles: &[NewBattle],
    ) -> Result<Ingested, StoreError> {
        self.note("ingest_battles");
        self.inner
            .ingest_battles(player, player_name, read_at, battles)
            .await
    }

    async fn put_player(
        &self,
        row: &PlayerRow,
        snapshot: &PlayerSnapshot,
    ) -> Result<(), StoreError> {
        self.note("put_player");
        self.inner.put_player(row, snapshot).await
    }

    async fn player(&self, tag: &str) -> Result<Option<PlayerRow>, StoreError> {
        self.note("player");
        self.inner.player(tag).await
    }

    async fn search_players(&self, query: &str, limit: i64) -> Result<Vec<PlayerRow>, StoreError> {
        self.note("search_players");
        self.inner.search_players(query, limit).await
    }

    async fn put_clan(
        &self,
        row: &ClanRow,
        members: &[MemberSeen],
        at: Millis,
    ) -> Result<(Vec<String>, Vec<String>), StoreError> {
        self.note("put_clan");
        self.inner.put_clan(row, members, at).await
    }

    async fn clan(&self, tag: &str) -> Result<Option<ClanRow>, StoreError> {
        self.note("clan");
        self.inner.clan(tag).await
    }

    async fn memberships(
        &self,
        clan: &str,
        left_since: Millis,
    ) -> Result<Vec<Membership>, StoreError> {
        self.note("memberships");
        self.inner.memberships(clan, left_since).await
    }

    async fn clans_of(&self, player: &str) -> Result<Vec<Membership>, StoreError> {
        self.note("clans_of");
        self.inner.clans_of(player).await
    }

    async fn add_gap(&self, gap: &CoverageGap) -> Result<(), StoreError> {
        self.note("add_gap");
        self.inner.add_gap(gap).await
    }

    async fn gaps(
        &self,
        subject: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<CoverageGap>, StoreError> {
        self.note("gaps");
        self.inner.gaps(subject, from, to).await
    }

    async fn log_reads(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<LogRead>, StoreError> {
        self.note("log_reads");
        self.inner.log_reads(player, from, to).await
    }

    async fn battles(
        &self,
        player: &str,
        query: &BattleQuery,
    ) -> Result<Vec<RecordedBattle>, StoreError> {
        self.note("battles");
        self.inner.battles(player, query).await
    }

    async fn count_battles(&self, player: &str, query: &BattleQuery) -> Result<i64, StoreError> {
        self.note("count_battles");
        self.inner.count_battles(player, query).await
    }

    async fn battle_span(&self, player: &str) -> Result<Option<(Millis, Millis)>, StoreError> {
        self.note("battle_span");
        self.inner.battle_span(player).await
    }

    async fn snapshots(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<Vec<PlayerSnapshot>, StoreError> {
        self.note("snapshots");
        self.inner.snapshots(player, from, to).await
    }

    async fn corpus_counts(&self, now: Millis) -> Result<CorpusCounts, StoreError> {
        self.note("corpus_counts");
        self.inner.corpus_counts(now).await
    }

    async fn recorded_clans(&self) -> Result<Vec<(String, Option<String>, String)>, StoreError> {
        self.note("recorded_clans");
        self.inner.recorded_clans().await
    }
}

#[async_trait]
impl PlayerReads for CountingStore {
    async fn battle_tally(
        &self,
        player: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError> {
        self.note("battle_tally");
        self.inner.battle_tally(player, from, to).await
    }

    async fn clan_battle_tally(
        &self,
        clan: &str,
        from: Millis,
        to: Millis,
    ) -> Result<BattleTally, StoreError> {
        self.note("clan_battle_tally");
        self.inner.clan_battle_tally(clan, from, to).await
    }

    async fn log_read_before(
        &self,
        player: &str,
        at: Millis,
    ) -> Result<Option<LogRead>, StoreError> {
        self.note("log_read_before");
        self.inner.log_read_before(player, at).await
    }

    async fn log_read_from(&self, player: &str, at: Millis) -> Result<Option<LogRead>, StoreError> {
        self.note("log_read_from");
        self.inner.log_read_from(player, at).await
    }

    async fn players_by_tags(&self, tags: &[String]) -> Result<Vec<PlayerRow>, StoreError> {
        self.note("players_by_tags");
        self.inner.players_by_tags(tags).await
    }

    async fn upstream_tally(
        &self,
        day_from: Millis,
        hour_from: Millis,
    ) -> Result<UpstreamTally, StoreError> {
        self.note("upstream_tally");
        self.inner.upstream_tally(day_from, hour_from).await
    }
}

#[async_trait]
impl MetaReads for CountingStore {
    async fn meta_rows(
        &self,
        query: &MetaQuery,
        budget: std::time::Duration,
    ) -> Result<MetaRows, StoreError> {
        self.note("meta_rows");
        self.inner.meta_rows(query, budget).await
    }

    async fn deck_details(&self, hashes: &[String]) -> Result<Vec<DeckDetail>, StoreError> {
        self.note("deck_details");
        self.inner.deck_details(hashes).await
    }
}
