//! The `meta` object every tool answer carries (SURFACE §3.2): the fixed four keys, `quota`
//! (the gate's snapshot, or read now) and `feedback_responses_pending` when a reply waits (the
//! count read with the caller's account when it was authenticated, or counted again after a
//! call that delivered replies). The data keys only a tool knows (`freshness_seconds`,
//! `source_polls`) are the tool's; the closed key set is the envelope's.

use mcp_door::Extensions;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::access::{gate, metering};
use crate::domain::iso;
use crate::mcp::envelope::{CONTRACT_VERSION, DISCLAIMER};
use crate::services::{Caller, Services};

/// Where `feedback_responses_pending` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replies {
    /// The count read with the caller's account ([`Caller::pending_responses`]): nothing in
    /// this call delivered a reply, so it is as exact as a count read now.
    AsAuthenticated,
    /// This call delivered replies: count the waiting ones again.
    Delivered,
}

/// `meta` for a finished call: the fixed four, `quota` (the gate's snapshot in the request's
/// `extensions`, or read now) and `feedback_responses_pending` when a reply waits.
pub async fn meta(
    services: &Services,
    caller: &Caller,
    request_id: Uuid,
    extensions: &Extensions,
    replies: Replies,
) -> Value {
    let mut meta = base_meta(services, request_id);
    let quota = match extensions.get::<metering::QuotaSnapshot>() {
        Some(q) => Some(q.0.clone()),
        None => {
            let hour_used = metering::hour_used(extensions);
            gate::quota(services, caller, hour_used, None).await.ok()
        }
    };
    if let Some(q) = quota {
        meta["quota"] = q;
    }
    let pending = match replies {
        Replies::AsAuthenticated => Ok(caller.pending_responses),
        Replies::Delivered => services.store.pending_responses(caller.ledger()).await,
    };
    match pending {
        Ok(n) if n > 0 => meta["feedback_responses_pending"] = json!(n),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "pending responses unavailable"),
    }
    meta
}

/// The four keys every `meta` carries.
pub fn base_meta(services: &Services, request_id: Uuid) -> Value {
    json!({
        "as_of": iso(services.now()),
        "request_id": request_id.to_string(),
        "disclaimer": DISCLAIMER,
        "contract_version": CONTRACT_VERSION,
    })
}
