//! Metering (SURFACE §4): the hourly rate per principal (fixed UTC clock hour; `initialize`,
//! notifications and `ping` exempt) and the daily quota per paying account by tier (reset
//! 00:00 UTC; Help tools free), as the door's method gate. Counters live in the store, so they
//! hold across instances on PostgreSQL; an unreachable counter fails open and is logged.
//! `meta.quota` is computed here, once per call, from the counts the spends return: the daily
//! spend reads the day's live count in the same statement, and a call the quota does not meter
//! reads both day counts in one. What the gate counts travels with the request as typed
//! values in its extensions ([`HourUsed`], [`Billed`], [`QuotaSnapshot`]): the tool stage
//! reads the hourly count, the handler the snapshot and the billed counter (refunds).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::StatusCode;
use mcp_door::{Extensions, GateRefusal, GateRequest, GateStage, MethodGate};
use serde_json::{Value, json};

use crate::domain::{Millis, iso};
use crate::model::Window;
use crate::services::{Caller, Services};
use crate::store::{SharedStore, StoreError};

pub const HOUR_MS: Millis = 3_600_000;
pub const DAY_MS: Millis = 86_400_000;
/// JSON-RPC code of a spent quota or rate.
pub const QUOTA_RPC_CODE: i64 = -32029;

/// Start of the UTC clock hour holding `now`.
pub fn hour_start(now: Millis) -> Millis {
    now - now.rem_euclid(HOUR_MS)
}

/// Start of the UTC day holding `now`.
pub fn day_start(now: Millis) -> Millis {
    now - now.rem_euclid(DAY_MS)
}

/// Whole seconds until `end`, at least 1.
pub fn seconds_until(end: Millis, now: Millis) -> u64 {
    u64::try_from((end - now).max(1))
        .unwrap_or(1)
        .div_ceil(1000)
}

/// The hourly count after this request was admitted (set at the framed stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HourUsed(pub i64);

/// The daily counter a metered call was billed to, for its refund.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Billed {
    /// The counter's subject (`calls:<account id>`).
    pub subject: String,
    /// The start of the UTC day it was counted in.
    pub start: Millis,
}

/// The paying account's counts of the day: tool calls and live fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayUsed {
    pub calls: i64,
    pub live: i64,
}

/// `meta.quota` as of the gate's accounting of a resolved tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaSnapshot(pub Value);

/// The method gate metering every door.
pub struct Limiter {
    pub services: Arc<Services>,
    /// Tools that cost no daily quota (the Help tools).
    pub unmetered: HashSet<String>,
}

impl Limiter {
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
            Ok(None) => {
                let resets = start + HOUR_MS;
                let retry = seconds_until(resets, now);
                Err(GateRefusal {
                    status: StatusCode::TOO_MANY_REQUESTS,
                    retry_after_secs: Some(retry),
                    code: QUOTA_RPC_CODE,
                    message: format!(
                        "Hourly rate spent: {limit} requests per clock hour for this connection."
                    ),
                    data: Some(json!({
                        "code": "quota_exceeded",
                        "class": "budget",
                        "window": "hour",
                        "resets_at": iso(resets),
                        "retry_after_s": retry,
                        "hint": format!("Wait {retry} s (Retry-After) and repeat the same request; see elixir_docs({{\"page\": \"limits\", \"section\": \"hourly-rate\"}})."),
                        "request_id": r.request_id.to_string(),
                    })),
                })
            }
            Err(e) => {
                tracing::warn!(error = %e, "hourly counter unreachable; failing open");
                Ok(())
            }
        }
    }

    async fn daily(&self, r: &mut GateRequest<'_>, caller: &Caller) -> Result<(), GateRefusal> {
        let metered = r.tool.is_some_and(|t| !self.unmetered.contains(t));
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
                Ok(None) => {
                    let resets = start + DAY_MS;
                    return Err(GateRefusal {
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
                    });
                }
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
            GateStage::Framed => self.hourly(r, caller).await,
            GateStage::ToolResolved => self.daily(r, caller).await,
            _ => Ok(()),
        }
    }
}

/// The hourly count the gate left in a request's extensions, if it counted one.
pub fn hour_used(extensions: &Extensions) -> Option<i64> {
    extensions.get::<HourUsed>().map(|h| h.0)
}

/// One allowance: `{used, max, remaining}`, or `{used, unlimited: true}`.
fn allowance(used: i64, max: Option<i64>) -> Value {
    match max {
        Some(max) => json!({"used": used, "max": max, "remaining": (max - used).max(0)}),
        None => json!({"used": used, "unlimited": true}),
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

/// How long a refund the database could not take is retried, and the longest pause between
/// tries (a PostgreSQL outage the door answers with 503 while it lasts).
const REFUND_RETRY_FOR: Duration = Duration::from_secs(600);
const REFUND_RETRY_MAX_PAUSE: Duration = Duration::from_secs(5);

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
            tokio::spawn(retry_refund(Arc::clone(&services.store), billed.clone()));
        }
        Err(e) => tracing::warn!(error = %e, "refund not recorded"),
    }
}

/// Retries one refund, pausing longer each time, until it is recorded or
/// [`REFUND_RETRY_FOR`] has passed.
async fn retry_refund(store: SharedStore, billed: Billed) {
    let deadline = tokio::time::Instant::now() + REFUND_RETRY_FOR;
    let mut pause = Duration::from_millis(250);
    loop {
        tokio::time::sleep(pause).await;
        match store
            .refund(&billed.subject, Window::Day, billed.start)
            .await
        {
            Ok(()) => {
                tracing::info!(subject = %billed.subject, "deferred refund recorded");
                return;
            }
            Err(StoreError::Unavailable(_)) if tokio::time::Instant::now() < deadline => {
                pause = (pause * 2).min(REFUND_RETRY_MAX_PAUSE);
            }
            Err(e) => {
                tracing::warn!(error = %e, subject = %billed.subject, "refund not recorded");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_utc_clock_hours_and_days() {
        let t = 1_767_225_600_000 + 2 * HOUR_MS + 59 * 60_000 + 30_000; // 02:59:30Z
        assert_eq!(hour_start(t), 1_767_225_600_000 + 2 * HOUR_MS);
        assert_eq!(day_start(t), 1_767_225_600_000);
        assert_eq!(seconds_until(hour_start(t) + HOUR_MS, t), 30);
        assert_eq!(seconds_until(hour_start(t) + HOUR_MS, t + 29_001), 1);
        assert_eq!(seconds_until(5, 5), 1);
    }

    #[test]
    fn allowances_show_unlimited_instead_of_max() {
        assert_eq!(
            allowance(3, Some(500)),
            json!({"used": 3, "max": 500, "remaining": 497})
        );
        assert_eq!(allowance(3, None), json!({"used": 3, "unlimited": true}));
    }
}
