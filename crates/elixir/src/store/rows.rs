//! The column lists and row decoders both schemas agree on: each entity's columns written
//! once as a `const` (statements splice them in with `format!`), and each row read back into
//! its entity from `crate::model`. The statements themselves are the area files'.

use sqlkit::Cols;

use super::sql_store::StoreError;
use crate::access::kinds::{Kind, Tier};
use crate::domain::FeedbackStatus;
use crate::model::{
    Account, Agent, AuditEntry, Feedback, RawPayload, Receipt, RefusalCount, StoredCatalogue,
};

/// The columns of `accounts`, in [`Account`]'s order.
pub(super) const ACCOUNT_COLUMNS: &str =
    "id, email, tier, timezone, primary_player_tag, created_at";
/// The columns of `agents`, in [`Agent`]'s order.
pub(super) const AGENT_COLUMNS: &str = "id, public_id, owner_account_id, name, kind, suspended, \
     key_digest, key_scopes, timezone, created_at, clan_tag";
/// The columns of `feedback`, in [`Feedback`]'s order.
pub(super) const FEEDBACK_COLUMNS: &str = "id, account_id, agent_id, principal_kind, \
     on_behalf_of, category, message, context, request_id, status, response, responded_at, \
     shipped_in, related_tools, created_at, delivered_at";
/// The condition on a `feedback` row whose operator response waits to be delivered (its
/// columns are feedback's alone, so it needs no table name in a join).
pub(super) const RESPONSE_PENDING: &str = "response IS NOT NULL AND delivered_at IS NULL";
/// The columns of `audit`, in [`AuditEntry`]'s order.
pub(super) const AUDIT_COLUMNS: &str = "request_id, account_id, agent_id, door, tool, arguments, \
     response, error_code, duration_ms, created_at";
/// The columns of `refusals` an owner sees ([`RefusalCount`]).
pub(super) const REFUSAL_COLUMNS: &str = "credential_hint, address, day, door, reason, count";
/// The columns of `upstream_receipts`, in [`Receipt`]'s order.
pub(super) const RECEIPT_COLUMNS: &str =
    "endpoint, subject, fetched_at, status, payload_sha256, admission";
/// The columns of `upstream_raw`, in [`RawPayload`]'s order.
pub(super) const RAW_COLUMNS: &str = "payload_sha256, endpoint, subject, body, fetched_at";

fn stored<T>(text: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| StoreError::Internal(format!("stored {what} {text:?} is unknown")))
}

/// A JSON value as stored in a TEXT column.
pub(super) fn json_text<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(format!("encoding JSON: {e}")))
}

pub(super) fn account(r: &impl Cols) -> Result<Account, StoreError> {
    account_at(r, "")
}

/// The account whose columns carry `prefix` (a join's side, as `store/door.rs` names it).
pub(super) fn account_at(r: &impl Cols, prefix: &str) -> Result<Account, StoreError> {
    let col = |name: &str| format!("{prefix}{name}");
    Ok(Account {
        id: r.uuid(&col("id"))?,
        email: r.opt_text(&col("email"))?,
        tier: stored(&r.text(&col("tier"))?, Tier::parse, "tier")?,
        timezone: r.text(&col("timezone"))?,
        primary_player_tag: r.opt_text(&col("primary_player_tag"))?,
        created_at: r.int(&col("created_at"))?,
    })
}

pub(super) fn agent(r: &impl Cols) -> Result<Agent, StoreError> {
    Ok(Agent {
        id: r.uuid("id")?,
        public_id: r.text("public_id")?,
        owner_account_id: r.uuid("owner_account_id")?,
        name: r.text("name")?,
        kind: stored(&r.text("kind")?, Kind::parse, "agent kind")?,
        suspended: r.flag("suspended")?,
        key_digest: r.opt_text("key_digest")?,
        key_scopes: r.text("key_scopes")?,
        timezone: r.opt_text("timezone")?,
        created_at: r.int("created_at")?,
        clan_tag: r.opt_text("clan_tag")?,
    })
}

pub(super) fn feedback(r: &impl Cols) -> Result<Feedback, StoreError> {
    let related: Vec<String> = serde_json::from_str(&r.text("related_tools")?)
        .map_err(|e| StoreError::Internal(format!("stored related_tools: {e}")))?;
    Ok(Feedback {
        id: r.int("id")?,
        account_id: r.uuid("account_id")?,
        agent_id: r.opt_uuid("agent_id")?,
        principal_kind: stored(&r.text("principal_kind")?, Kind::parse, "principal kind")?,
        on_behalf_of: r.opt_text("on_behalf_of")?,
        category: r.text("category")?,
        message: r.text("message")?,
        context: r.opt_text("context")?,
        request_id: r.opt_uuid("request_id")?,
        status: stored(&r.text("status")?, FeedbackStatus::parse, "feedback status")?,
        response: r.opt_text("response")?,
        responded_at: r.opt_int("responded_at")?,
        shipped_in: r.opt_text("shipped_in")?,
        related_tools: related,
        created_at: r.int("created_at")?,
        delivered_at: r.opt_int("delivered_at")?,
    })
}

pub(super) fn audit(r: &impl Cols) -> Result<AuditEntry, StoreError> {
    Ok(AuditEntry {
        request_id: r.uuid("request_id")?,
        account_id: r.opt_uuid("account_id")?,
        agent_id: r.opt_uuid("agent_id")?,
        door: r.text("door")?,
        tool: r.opt_text("tool")?,
        arguments: r.opt_text("arguments")?,
        response: r.opt_text("response")?,
        error_code: r.opt_text("error_code")?,
        duration_ms: r.int("duration_ms")?,
        created_at: r.int("created_at")?,
    })
}

pub(super) fn refusal(r: &impl Cols) -> Result<RefusalCount, StoreError> {
    Ok(RefusalCount {
        credential_hint: r.text("credential_hint")?,
        address: r.text("address")?,
        day: r.text("day")?,
        door: r.text("door")?,
        reason: r.text("reason")?,
        count: r.int("count")?,
    })
}

pub(super) fn receipt(r: &impl Cols) -> Result<Receipt, StoreError> {
    Ok(Receipt {
        endpoint: r.text("endpoint")?,
        subject: r.opt_text("subject")?,
        fetched_at: r.int("fetched_at")?,
        status: r.opt_int("status")?,
        payload_sha256: r.opt_text("payload_sha256")?,
        admission: r.text("admission")?,
    })
}

pub(super) fn raw(r: &impl Cols) -> Result<RawPayload, StoreError> {
    Ok(RawPayload {
        payload_sha256: r.text("payload_sha256")?,
        endpoint: r.text("endpoint")?,
        subject: r.opt_text("subject")?,
        body: r.text("body")?,
        fetched_at: r.int("fetched_at")?,
    })
}

pub(super) fn catalogue(r: &impl Cols) -> Result<StoredCatalogue, StoreError> {
    let catalogue = serde_json::from_str(&r.text("catalogue")?)
        .map_err(|e| StoreError::Internal(format!("stored cards catalogue: {e}")))?;
    Ok(StoredCatalogue {
        catalogue,
        payload_sha256: r.text("payload_sha256")?,
        observed_at: r.int("observed_at")?,
    })
}
