//! Metering (SURFACE §4): the hourly rate per principal (fixed UTC clock hour; `initialize`,
//! notifications and `ping` exempt) and the daily quota per paying account by tier (reset
//! 00:00 UTC; Help tools free), as the door's method gate. Counters live in the store, so they
//! hold across instances on PostgreSQL; an unreachable counter fails open and is logged.
//!
//! A `tools/call` the door will resolve (a tool of the registry, visible to the caller's kind,
//! within its scopes) is metered in one statement when it is framed: the hour and the day
//! together ([`DoorStore::meter`](crate::store::DoorStore::meter)), with the day's live
//! count and the card catalogue's stamp read beside them. What the day decided is answered at
//! the tool stage, as when the two were counted apart: a full day refuses there, after the
//! door's own checks. A call the door refuses between the stages anyway (arguments not an
//! object, a header mismatch) gets its day back when its audit record settles ([`settle`]).
//! Every other request spends only its hour. `meta.quota` is computed here, once per call,
//! from the counts the statement returns. What the gate counts travels with the request as
//! typed values in its extensions ([`HourUsed`], [`Billed`], [`QuotaSnapshot`],
//! [`CatalogueStamp`]): the handler reads the snapshot, the stamp and the billed counter
//! (refunds).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::StatusCode;
use mcp_door::{Extensions, GateRefusal, GateRequest, GateStage, MethodGate};
use serde_json::{Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso};
use crate::model::Window;
use crate::services::{Caller, Services};
use crate::store::{Meter, SharedStore, StoreError};

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

/// The stored card catalogue's `observed_at` as the call's metering statement read it
/// (`None`: never read), so an in-process copy of that catalogue can be served without a
/// read of its own, on every instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueStamp(pub Option<Millis>);

/// What the framed stage decided of a call it metered in one statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framed {
    /// Hour and day (spent or read) counted.
    Counted,
    /// The hour was spent; the day is full since the day starting at this instant.
    DayFull(Millis),
}

/// The door reached the tool stage of a call the framed stage metered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resolved;

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

/// Settles a finished request's metering: a call whose day the framed stage spent but that
/// the door refused before the tool stage (arguments not an object, a header mismatch) gets
/// it back, as if only its hour had been counted. The refund runs in a task of its own (the
/// audit hook that calls this cannot wait).
pub fn settle(services: &Arc<Services>, extensions: &Extensions) {
    if extensions.get::<Framed>() == Some(&Framed::Counted)
        && extensions.get::<Resolved>().is_none()
        && let Some(billed) = extensions.get::<Billed>().cloned()
    {
        let services = Arc::clone(services);
        tokio::spawn(async move {
            if let Err(e) = services
                .store
                .refund(&billed.subject, Window::Day, billed.start)
                .await
            {
                tracing::warn!(error = %e, "refund of an unresolved call not recorded");
            }
        });
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
