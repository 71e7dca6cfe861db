//! Metering's vocabulary, free of I/O (SURFACE §4): the UTC clock hour and day the counters
//! are kept in, the JSON-RPC code of a spent window, what the gate learns of a request and
//! leaves in its extensions as typed values ([`HourUsed`], [`Billed`], [`QuotaSnapshot`],
//! [`CatalogueStamp`], and the framed stage's own decision), and one allowance of
//! `meta.quota`. Counting is the gate's (`access::gate`), the counters the store's.

use mcp_door::Extensions;
use serde_json::{Value, json};

use crate::domain::Millis;

/// One UTC clock hour, in milliseconds.
pub const HOUR_MS: Millis = 3_600_000;
/// One UTC day, in milliseconds.
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
pub(crate) enum Framed {
    /// Hour and day (spent or read) counted.
    Counted,
    /// The hour was spent; the day is full since the day starting at this instant.
    DayFull(Millis),
}

/// The door reached the tool stage of a call the framed stage metered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resolved;

/// The hourly count the gate left in a request's extensions, if it counted one.
pub fn hour_used(extensions: &Extensions) -> Option<i64> {
    extensions.get::<HourUsed>().map(|h| h.0)
}

/// One allowance: `{used, max, remaining}`, or `{used, unlimited: true}`.
pub fn allowance(used: i64, max: Option<i64>) -> Value {
    match max {
        Some(max) => json!({"used": used, "max": max, "remaining": (max - used).max(0)}),
        None => json!({"used": used, "unlimited": true}),
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
