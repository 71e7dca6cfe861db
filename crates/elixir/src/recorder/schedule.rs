//! What to poll when (SURFACE §7.1–7.2), pure: given what the record knows of a subject, the
//! current instant (`now`, Unix milliseconds from the injected clock) and a jitter drawn by
//! the caller's seeded RNG, the instant of the next read and the stable reason shown as
//! `cadence_reason` by elixir_coverage. Three cadences: the battle log's session clock (with
//! its overflow guard and demand), the profile's and the clan's. Claiming, reading and
//! storing are the worker's.
//!
//! Decisions where the contract is silent:
//! - The failure retries (15, 30, then 60 min for every later failure) and the 24 h hold
//!   after a 404 apply to every endpoint here, not only the battle log.
//! - The hold is exact (not jittered): a 404 holds the subject at least 24 h.
//! - Jitter scales the chosen delay, then the upper bounds (overflow guard, demand, at least
//!   daily) clamp it, so jitter never breaks a promise to read sooner; the upstream
//!   `max-age` then floors it, so jitter never reads a cached answer again.
//! - A new subject, like a player named in a call, is read at least hourly for 24 h.
//! - Clans: hourly while a member was seen within the last 24 h (after the 15 min phase of
//!   the last 30 min), 4 h beyond that.
//! - A next read that falls in the past (demand starting long after the last read) is due
//!   now.

use serde::Serialize;

use crate::domain::Millis;

/// One minute in milliseconds.
pub const MINUTE: Millis = 60_000;
/// One hour in milliseconds.
pub const HOUR: Millis = 60 * MINUTE;
/// One day in milliseconds.
pub const DAY: Millis = 24 * HOUR;

/// A productive battle-log read schedules the next this much later.
pub const SESSION_BASE: Millis = 30 * MINUTE;
/// The empty-read backoff's ceiling for players active in the last [`ACTIVE_WINDOW`].
pub const ACTIVE_CEILING: Millis = 2 * HOUR;
/// How recent a battle makes a player active for the backoff ceiling.
pub const ACTIVE_WINDOW: Millis = 3 * DAY;
/// Every battle log is read at least this often.
pub const AT_LEAST: Millis = DAY;
/// Demand (a new subject, a player named in a call) reads at least this often…
pub const DEMAND_EVERY: Millis = HOUR;
/// …for this long.
pub const DEMAND_WINDOW: Millis = DAY;
/// How long a 404 holds a subject.
pub const NOT_FOUND_HOLD: Millis = DAY;
/// The retries after the first, second and every later consecutive failure.
pub const RETRIES: [Millis; 3] = [15 * MINUTE, 30 * MINUTE, 60 * MINUTE];
/// About how many battles the upstream log holds (nothing assumes 25).
pub const LOG_CAPACITY: i64 = 30;
/// The largest jitter either way, as a fraction of the delay.
pub const MAX_JITTER: f64 = 0.1;

/// Why the next read is when it is; the wire name is `cadence_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// Never read: read at once.
    FirstRead,
    /// The last read answered 404: held 24 h.
    NotFoundHold,
    /// The last read failed: retry after 15, 30 or 60 min.
    RetryAfterFailure,
    /// The last battle-log read brought new battles: 30 min.
    SessionProductive,
    /// Empty battle-log reads: the interval doubled, up to 2 h (active) or 24 h.
    SessionBackoff,
    /// Sooner than the session clock: before half the fastest recent log-fill time.
    OverflowGuard,
    /// Sooner than the session clock: a new subject, read hourly for 24 h.
    NewSubject,
    /// Sooner than the session clock: named in a call, read hourly for 24 h.
    NamedInCall,
    /// Later than planned: upstream's `max-age` has not expired.
    UpstreamMaxAge,
    /// Profile of a player who battled in the last day: 8 h.
    PlayerActiveLastDay,
    /// Profile of a player who battled in the last week: daily.
    PlayerActiveLastWeek,
    /// Profile of a player idle for a week or more: 3 days.
    PlayerIdle,
    /// A clan member was seen in the last 30 min: 15 min.
    ClanMembersOnline,
    /// A clan member was seen in the last 24 h: hourly.
    ClanMembersRecent,
    /// No member seen for 24 h: 4 h.
    ClanIdle,
}

impl Reason {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::FirstRead => "first_read",
            Reason::NotFoundHold => "not_found_hold",
            Reason::RetryAfterFailure => "retry_after_failure",
            Reason::SessionProductive => "session_productive",
            Reason::SessionBackoff => "session_backoff",
            Reason::OverflowGuard => "overflow_guard",
            Reason::NewSubject => "new_subject",
            Reason::NamedInCall => "named_in_call",
            Reason::UpstreamMaxAge => "upstream_max_age",
            Reason::PlayerActiveLastDay => "player_active_last_day",
            Reason::PlayerActiveLastWeek => "player_active_last_week",
            Reason::PlayerIdle => "player_idle",
            Reason::ClanMembersOnline => "clan_members_online",
            Reason::ClanMembersRecent => "clan_members_recent",
            Reason::ClanIdle => "clan_idle",
        }
    }
}

/// The decision: when to read next, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Next {
    /// The instant (Unix milliseconds) from which the read is due.
    pub next_at: Millis,
    /// Why.
    pub reason: Reason,
}

/// A bad input to the schedule.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// Jitter outside [-0.1, 0.1] (or not a number).
    #[error("jitter {0} is outside [-0.1, 0.1]")]
    Jitter(f64),
}

/// A jitter fraction in [-0.1, 0.1], drawn by the caller from its seeded RNG.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jitter(f64);

impl Jitter {
    /// No jitter.
    pub const NONE: Jitter = Jitter(0.0);

    /// Checks the fraction is in [-0.1, 0.1].
    pub fn new(fraction: f64) -> Result<Jitter, ScheduleError> {
        if (-MAX_JITTER..=MAX_JITTER).contains(&fraction) {
            Ok(Jitter(fraction))
        } else {
            Err(ScheduleError::Jitter(fraction))
        }
    }

    /// The fraction.
    pub fn fraction(self) -> f64 {
        self.0
    }

    fn scale(self, delay: Millis) -> Millis {
        // delays are at most days, far inside f64's exact integers
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let scaled = (delay as f64 * (1.0 + self.0)).round() as Millis;
        scaled
    }
}

/// How the last read of a subject went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadResult {
    /// HTTP 200. (Whether a battle log brought new battles is
    /// [`BattleLogSubject::empty_reads`].)
    Success,
    /// Any other failure; `consecutive` counts this one (1 for a first failure).
    Failed {
        /// Consecutive failures, this one included.
        consecutive: u32,
    },
    /// HTTP 404: the subject is marked not found.
    NotFound,
}

/// The last read of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastRead {
    /// When it happened.
    pub at: Millis,
    /// How it went.
    pub result: ReadResult,
}

/// What the battle-log cadence reads about one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BattleLogSubject {
    /// The last read; `None` for a subject never read.
    pub last_read: Option<LastRead>,
    /// Consecutive successful reads without a new battle since the last productive one
    /// (0 when the last read brought new battles).
    pub empty_reads: u32,
    /// The newest recorded `battle_time`.
    pub last_battle_at: Option<Millis>,
    /// The fastest recent time the log took to fill (see [`log_fill_time`]).
    pub fastest_fill: Option<Millis>,
    /// When the player became a subject (tracked, or a comprehensive clan's member).
    pub added_at: Option<Millis>,
    /// When the player was last named in a call.
    pub named_at: Option<Millis>,
    /// When the last answer's upstream `max-age` expires.
    pub max_age_until: Option<Millis>,
}

/// What the profile cadence reads about one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfileSubject {
    /// The last `/players/{tag}` read.
    pub last_read: Option<LastRead>,
    /// The newest recorded `battle_time`.
    pub last_battle_at: Option<Millis>,
    /// When the last answer's upstream `max-age` expires.
    pub max_age_until: Option<Millis>,
}

/// What the clan cadence reads about one clan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClanSubject {
    /// The last `/clans/{tag}` read.
    pub last_read: Option<LastRead>,
    /// The newest `lastSeen` among the members.
    pub member_seen_at: Option<Millis>,
    /// When the last answer's upstream `max-age` expires.
    pub max_age_until: Option<Millis>,
}

/// The time a log of [`LOG_CAPACITY`] battles takes to fill at the pace of `battle_times`
/// (one read's battles, any order): their span stretched to 30 battles, `span × 30 ÷ (n − 1)`.
/// `None` for fewer than two battles or a zero span.
pub fn log_fill_time(battle_times: &[Millis]) -> Option<Millis> {
    let newest = battle_times.iter().max()?;
    let oldest = battle_times.iter().min()?;
    let gaps = i64::try_from(battle_times.len()).ok()? - 1;
    let span = newest - oldest;
    (gaps > 0 && span > 0).then(|| span.saturating_mul(LOG_CAPACITY) / gaps)
}

/// A plan before jitter and bounds: the delay from the last read, its reason, and the
/// upper bounds it must not pass.
struct Plan {
    from: Millis,
    delay: Millis,
    reason: Reason,
    jitter: bool,
}

/// The rules every endpoint shares: a first read at once, the 404 hold, failure retries.
fn common(last_read: Option<LastRead>, now: Millis) -> Result<LastRead, Plan> {
    let Some(last) = last_read else {
        return Err(Plan {
            from: now,
            delay: 0,
            reason: Reason::FirstRead,
            jitter: false,
        });
    };
    match last.result {
        ReadResult::Success => Ok(last),
        ReadResult::NotFound => Err(Plan {
            from: last.at,
            delay: NOT_FOUND_HOLD,
            reason: Reason::NotFoundHold,
            jitter: false,
        }),
        ReadResult::Failed { consecutive } => {
            let i = usize::try_from(consecutive.max(1) - 1).unwrap_or(usize::MAX);
            Err(Plan {
                from: last.at,
                delay: RETRIES[i.min(RETRIES.len() - 1)],
                reason: Reason::RetryAfterFailure,
                jitter: true,
            })
        }
    }
}

/// Jitter, then upper bounds, then the clock and the upstream `max-age`.
fn finish(
    plan: Plan,
    bounds: &[(Millis, Reason)],
    now: Millis,
    jitter: Jitter,
    max_age_until: Option<Millis>,
) -> Next {
    let (mut delay, mut reason) = (plan.delay, plan.reason);
    let tightest = bounds.iter().min_by_key(|(bound, _)| *bound).copied();
    if let Some((bound, why)) = tightest
        && bound < delay
    {
        (delay, reason) = (bound, why);
    }
    if plan.jitter {
        delay = jitter.scale(delay);
    }
    if let Some((bound, _)) = tightest {
        delay = delay.min(bound);
    }
    let mut next_at = plan.from.saturating_add(delay).max(now);
    if let Some(expires) = max_age_until
        && expires > next_at
    {
        (next_at, reason) = (expires, Reason::UpstreamMaxAge);
    }
    Next { next_at, reason }
}

/// When to read a player's battle log next (§7.2). First rule that applies: never read →
/// now; 404 → 24 h hold; failure → 15/30/60 min; else the session clock (30 min after a
/// productive read, doubled per empty read up to 2 h for a player active in the last
/// 3 days, else up to 24 h), brought forward by the overflow guard (half the fastest
/// fill time) and by demand (hourly for 24 h after being added or named), at least daily;
/// ±10% jitter; never before upstream `max-age` expires.
pub fn next_battlelog_read(subject: &BattleLogSubject, now: Millis, jitter: Jitter) -> Next {
    let last = match common(subject.last_read, now) {
        Ok(last) => last,
        Err(plan) => return finish(plan, &[], now, jitter, subject.max_age_until),
    };
    let active = subject
        .last_battle_at
        .is_some_and(|at| at >= now - ACTIVE_WINDOW);
    let plan = if subject.empty_reads == 0 {
        Plan {
            from: last.at,
            delay: SESSION_BASE,
            reason: Reason::SessionProductive,
            jitter: true,
        }
    } else {
        let ceiling = if active { ACTIVE_CEILING } else { AT_LEAST };
        let doubled = SESSION_BASE.saturating_mul(1 << subject.empty_reads.min(20));
        Plan {
            from: last.at,
            delay: doubled.min(ceiling),
            reason: Reason::SessionBackoff,
            jitter: true,
        }
    };
    let mut bounds = vec![(AT_LEAST, Reason::SessionBackoff)];
    if let Some(fill) = subject.fastest_fill.filter(|f| *f > 0) {
        bounds.push((fill / 2, Reason::OverflowGuard));
    }
    let demanded = |at: Option<Millis>| at.is_some_and(|at| now < at.saturating_add(DEMAND_WINDOW));
    if demanded(subject.named_at) {
        bounds.push((DEMAND_EVERY, Reason::NamedInCall));
    } else if demanded(subject.added_at) {
        bounds.push((DEMAND_EVERY, Reason::NewSubject));
    }
    finish(plan, &bounds, now, jitter, subject.max_age_until)
}

/// When to read a player's profile next (§7.1): 8 h if they battled in the last day, daily
/// if in the last week, else every 3 days; with the shared first-read, 404 and failure
/// rules, jitter and the `max-age` floor.
pub fn next_profile_read(subject: &ProfileSubject, now: Millis, jitter: Jitter) -> Next {
    let tiers = [
        (DAY, 8 * HOUR, Reason::PlayerActiveLastDay),
        (7 * DAY, DAY, Reason::PlayerActiveLastWeek),
    ];
    let idle = (3 * DAY, Reason::PlayerIdle);
    tiered(
        subject.last_read,
        subject.max_age_until,
        subject.last_battle_at,
        &tiers,
        idle,
        now,
        jitter,
    )
}

/// When to read a clan next (§7.1): 15 min while a member was seen in the last 30 min,
/// hourly while one was seen in the last 24 h, else 4 h; with the shared first-read, 404 and
/// failure rules, jitter and the `max-age` floor.
pub fn next_clan_read(subject: &ClanSubject, now: Millis, jitter: Jitter) -> Next {
    let tiers = [
        (30 * MINUTE, 15 * MINUTE, Reason::ClanMembersOnline),
        (DAY, HOUR, Reason::ClanMembersRecent),
    ];
    let idle = (4 * HOUR, Reason::ClanIdle);
    tiered(
        subject.last_read,
        subject.max_age_until,
        subject.member_seen_at,
        &tiers,
        idle,
        now,
        jitter,
    )
}

/// A tier of recent activity: (within, delay, reason): a subject active within `within` is
/// read `delay` after its last read, for `reason`.
type Tier = (Millis, Millis, Reason);

/// A read on tiers of recent activity: the delay of the first of `tiers` whose `within` the
/// time since `active_at` is, else `idle`; with the shared first-read, 404 and failure
/// rules, jitter and the `max-age` floor.
fn tiered(
    last_read: Option<LastRead>,
    max_age_until: Option<Millis>,
    active_at: Option<Millis>,
    tiers: &[Tier],
    idle: (Millis, Reason),
    now: Millis,
    jitter: Jitter,
) -> Next {
    let last = match common(last_read, now) {
        Ok(last) => last,
        Err(plan) => return finish(plan, &[], now, jitter, max_age_until),
    };
    let since = active_at.map(|at| now - at);
    let (delay, reason) = since
        .and_then(|s| tiers.iter().find(|t| s <= t.0))
        .map_or(idle, |t| (t.1, t.2));
    let plan = Plan {
        from: last.at,
        delay,
        reason,
        jitter: true,
    };
    finish(plan, &[], now, jitter, max_age_until)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::iso;

    /// 2026-09-18T10:00:00Z.
    const T0: Millis = 1_789_725_600_000;

    fn ok_at(at: Millis) -> Option<LastRead> {
        Some(LastRead {
            at,
            result: ReadResult::Success,
        })
    }

    fn log(empty_reads: u32) -> BattleLogSubject {
        BattleLogSubject {
            last_read: ok_at(T0),
            empty_reads,
            last_battle_at: Some(T0 - HOUR),
            ..BattleLogSubject::default()
        }
    }

    /// The next battle-log read of `subject` at [`T0`], without jitter.
    fn read_now(subject: &BattleLogSubject) -> Next {
        next_battlelog_read(subject, T0, Jitter::NONE)
    }

    fn at(next: Next) -> (String, &'static str) {
        (iso(next.next_at), next.reason.as_str())
    }

    #[test]
    fn jitter_is_checked() {
        assert!(Jitter::new(0.1).is_ok());
        assert!(Jitter::new(-0.1).is_ok());
        assert_eq!(Jitter::new(0.1001), Err(ScheduleError::Jitter(0.1001)));
        assert_eq!(
            Jitter::new(-0.5).unwrap_err().to_string(),
            "jitter -0.5 is outside [-0.1, 0.1]"
        );
        assert!(Jitter::new(f64::NAN).is_err());
        assert_eq!(Jitter::new(0.05).unwrap().fraction(), 0.05);
    }

    #[test]
    fn a_new_subject_is_read_at_once() {
        let fresh = BattleLogSubject {
            added_at: Some(T0),
            ..BattleLogSubject::default()
        };
        let jitter = Jitter::new(0.1).unwrap();
        assert_eq!(
            at(next_battlelog_read(&fresh, T0, jitter)),
            ("2026-09-18T10:00:00Z".into(), "first_read")
        );
        assert_eq!(
            next_profile_read(&ProfileSubject::default(), T0, jitter).reason,
            Reason::FirstRead
        );
        assert_eq!(
            next_clan_read(&ClanSubject::default(), T0, jitter).next_at,
            T0
        );
    }

    #[test]
    fn the_session_clock_doubles_on_empty_reads() {
        // productive: 30 min
        assert_eq!(
            at(read_now(&log(0))),
            ("2026-09-18T10:30:00Z".into(), "session_productive")
        );
        // active in the last 3 days: 60, 120, then 120 min for good
        let active: Vec<_> = (1..=5).map(|n| at(read_now(&log(n)))).collect();
        assert_eq!(
            active,
            [
                ("2026-09-18T11:00:00Z".to_owned(), "session_backoff"),
                ("2026-09-18T12:00:00Z".to_owned(), "session_backoff"),
                ("2026-09-18T12:00:00Z".to_owned(), "session_backoff"),
                ("2026-09-18T12:00:00Z".to_owned(), "session_backoff"),
                ("2026-09-18T12:00:00Z".to_owned(), "session_backoff"),
            ]
        );
        // idle for more than 3 days: 1, 2, 4, 8, 16 h, then the daily floor
        let idle = |n| BattleLogSubject {
            last_battle_at: Some(T0 - 3 * DAY - 1),
            ..log(n)
        };
        let delays: Vec<Millis> = (1..=7).map(|n| read_now(&idle(n)).next_at - T0).collect();
        assert_eq!(
            delays,
            [HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 16 * HOUR, DAY, DAY]
        );
        // never battled counts as idle; a huge count of empty reads stays daily
        let never = BattleLogSubject {
            last_battle_at: None,
            ..log(1_000)
        };
        assert_eq!(read_now(&never).next_at, T0 + DAY);
        // exactly 3 days ago is still active
        let edge = BattleLogSubject {
            last_battle_at: Some(T0 - 3 * DAY),
            ..log(4)
        };
        assert_eq!(read_now(&edge).next_at, T0 + 2 * HOUR);
    }

    #[test]
    fn jitter_spreads_the_delay_by_up_to_ten_percent() {
        let plus = Jitter::new(0.1).unwrap();
        let minus = Jitter::new(-0.1).unwrap();
        assert_eq!(
            next_battlelog_read(&log(0), T0, plus).next_at,
            T0 + 33 * MINUTE
        );
        assert_eq!(
            next_battlelog_read(&log(0), T0, minus).next_at,
            T0 + 27 * MINUTE
        );
        assert_eq!(
            next_battlelog_read(&log(2), T0, Jitter::new(0.05).unwrap()).next_at,
            T0 + 126 * MINUTE
        );
        // the daily floor holds whatever the jitter
        let idle = BattleLogSubject {
            last_battle_at: None,
            ..log(9)
        };
        assert_eq!(next_battlelog_read(&idle, T0, plus).next_at, T0 + DAY);
        assert_eq!(
            next_battlelog_read(&idle, T0, minus).next_at,
            T0 + DAY - 144 * MINUTE
        );
    }

    #[test]
    fn the_overflow_guard_reads_before_half_the_fastest_fill() {
        // 30 battles in 80 min: the next read within 40 min, even after empty reads
        let busy = BattleLogSubject {
            fastest_fill: Some(80 * MINUTE),
            ..log(2)
        };
        assert_eq!(
            at(read_now(&busy)),
            ("2026-09-18T10:40:00Z".into(), "overflow_guard")
        );
        // positive jitter cannot push it past the guard; negative jitter brings it forward
        assert_eq!(
            next_battlelog_read(&busy, T0, Jitter::new(0.1).unwrap()).next_at,
            T0 + 40 * MINUTE
        );
        assert_eq!(
            next_battlelog_read(&busy, T0, Jitter::new(-0.1).unwrap()).next_at,
            T0 + 36 * MINUTE
        );
        // a slow fill leaves the session clock alone
        let slow = BattleLogSubject {
            fastest_fill: Some(3 * DAY),
            ..log(0)
        };
        assert_eq!(read_now(&slow).reason, Reason::SessionProductive);
        // a nonsensical fill time is ignored rather than reading in a loop
        let zero = BattleLogSubject {
            fastest_fill: Some(0),
            ..log(0)
        };
        assert_eq!(read_now(&zero).next_at, T0 + 30 * MINUTE);
    }

    #[test]
    fn log_fill_time_stretches_a_reads_pace_to_thirty_battles() {
        // 11 battles 6 min apart: 60 min for 10 gaps, so 30 battles in 180 min
        let times: Vec<Millis> = (0..11).map(|i| T0 - i * 6 * MINUTE).collect();
        assert_eq!(log_fill_time(&times), Some(180 * MINUTE));
        // a full log of 30 spanning 29 h fills in 30 h
        let full: Vec<Millis> = (0..30).map(|i| T0 - i * HOUR).collect();
        assert_eq!(log_fill_time(&full), Some(30 * HOUR));
        assert_eq!(log_fill_time(&[T0]), None);
        assert_eq!(log_fill_time(&[]), None);
        assert_eq!(log_fill_time(&[T0, T0]), None);
    }

    #[test]
    fn demand_reads_hourly_for_a_day() {
        let named = BattleLogSubject {
            named_at: Some(T0 - 2 * HOUR),
            ..log(3)
        };
        assert_eq!(
            at(read_now(&named)),
            ("2026-09-18T11:00:00Z".into(), "named_in_call")
        );
        let added = BattleLogSubject {
            added_at: Some(T0 - 23 * HOUR),
            ..log(3)
        };
        assert_eq!(
            at(read_now(&added)),
            ("2026-09-18T11:00:00Z".into(), "new_subject")
        );
        // 24 h later the demand is over
        let over = BattleLogSubject {
            named_at: Some(T0 - DAY),
            ..log(3)
        };
        assert_eq!(read_now(&over).reason, Reason::SessionBackoff);
        // a productive session is already more often than hourly
        let productive = BattleLogSubject {
            named_at: Some(T0),
            ..log(0)
        };
        assert_eq!(read_now(&productive).reason, Reason::SessionProductive);
        // named long after the last read: due now
        let stale = BattleLogSubject {
            last_read: ok_at(T0 - 5 * HOUR),
            named_at: Some(T0),
            ..log(6)
        };
        assert_eq!(
            at(read_now(&stale)),
            ("2026-09-18T10:00:00Z".into(), "named_in_call")
        );
        // the overflow guard, when tighter, names itself
        let both = BattleLogSubject {
            fastest_fill: Some(60 * MINUTE),
            ..named
        };
        assert_eq!(read_now(&both).reason, Reason::OverflowGuard);
    }

    #[test]
    fn failures_retry_after_15_30_then_60_minutes() {
        let failed = |consecutive| BattleLogSubject {
            last_read: Some(LastRead {
                at: T0,
                result: ReadResult::Failed { consecutive },
            }),
            ..log(0)
        };
        let delays: Vec<(Millis, Reason)> = [1, 2, 3, 4, 40]
            .into_iter()
            .map(|n| {
                let next = read_now(&failed(n));
                (next.next_at - T0, next.reason)
            })
            .collect();
        assert_eq!(
            delays,
            [
                (15 * MINUTE, Reason::RetryAfterFailure),
                (30 * MINUTE, Reason::RetryAfterFailure),
                (60 * MINUTE, Reason::RetryAfterFailure),
                (60 * MINUTE, Reason::RetryAfterFailure),
                (60 * MINUTE, Reason::RetryAfterFailure),
            ]
        );
        // a zero count reads as a first failure; retries are jittered
        assert_eq!(read_now(&failed(0)).next_at, T0 + 15 * MINUTE);
        assert_eq!(
            next_battlelog_read(&failed(1), T0, Jitter::new(0.1).unwrap()).next_at,
            T0 + 16 * MINUTE + 30_000
        );
        // profiles and clans retry the same way
        let profile = ProfileSubject {
            last_read: failed(2).last_read,
            ..ProfileSubject::default()
        };
        assert_eq!(
            next_profile_read(&profile, T0, Jitter::NONE).next_at,
            T0 + 30 * MINUTE
        );
        let clan = ClanSubject {
            last_read: failed(3).last_read,
            ..ClanSubject::default()
        };
        assert_eq!(next_clan_read(&clan, T0, Jitter::NONE).next_at, T0 + HOUR);
    }

    #[test]
    fn a_404_holds_the_subject_a_day_unjittered() {
        let gone = BattleLogSubject {
            last_read: Some(LastRead {
                at: T0,
                result: ReadResult::NotFound,
            }),
            named_at: Some(T0),
            ..log(0)
        };
        for j in [-0.1, 0.0, 0.1] {
            assert_eq!(
                at(next_battlelog_read(
                    &gone,
                    T0 + HOUR,
                    Jitter::new(j).unwrap()
                )),
                ("2026-09-19T10:00:00Z".into(), "not_found_hold")
            );
        }
        let profile = ProfileSubject {
            last_read: gone.last_read,
            ..ProfileSubject::default()
        };
        assert_eq!(
            next_profile_read(&profile, T0, Jitter::NONE).next_at,
            T0 + DAY
        );
        // once the hold is over, the next decision is due now
        assert_eq!(
            next_battlelog_read(&gone, T0 + 2 * DAY, Jitter::NONE).next_at,
            T0 + 2 * DAY
        );
    }

    #[test]
    fn never_before_upstream_max_age_expires() {
        let cached = BattleLogSubject {
            max_age_until: Some(T0 + 45 * MINUTE),
            ..log(0)
        };
        assert_eq!(
            at(read_now(&cached)),
            ("2026-09-18T10:45:00Z".into(), "upstream_max_age")
        );
        // even a first read or a retry waits for it
        let first = BattleLogSubject {
            last_read: None,
            max_age_until: Some(T0 + MINUTE),
            ..BattleLogSubject::default()
        };
        assert_eq!(read_now(&first).reason, Reason::UpstreamMaxAge);
        // an expiry already past changes nothing
        let expired = BattleLogSubject {
            max_age_until: Some(T0 - MINUTE),
            ..log(0)
        };
        assert_eq!(read_now(&expired).reason, Reason::SessionProductive);
        let clan = ClanSubject {
            last_read: ok_at(T0),
            member_seen_at: Some(T0),
            max_age_until: Some(T0 + 20 * MINUTE),
        };
        assert_eq!(
            at(next_clan_read(&clan, T0, Jitter::new(-0.1).unwrap())),
            ("2026-09-18T10:20:00Z".into(), "upstream_max_age")
        );
    }

    #[test]
    fn profiles_follow_activity() {
        let profile = |last_battle_at| ProfileSubject {
            last_read: ok_at(T0),
            last_battle_at,
            max_age_until: None,
        };
        let cases = [
            (Some(T0 - HOUR), 8 * HOUR, "player_active_last_day"),
            (Some(T0 - DAY), 8 * HOUR, "player_active_last_day"),
            (Some(T0 - DAY - 1), DAY, "player_active_last_week"),
            (Some(T0 - 7 * DAY), DAY, "player_active_last_week"),
            (Some(T0 - 7 * DAY - 1), 3 * DAY, "player_idle"),
            (None, 3 * DAY, "player_idle"),
        ];
        for (last_battle_at, delay, reason) in cases {
            let next = next_profile_read(&profile(last_battle_at), T0, Jitter::NONE);
            assert_eq!((next.next_at - T0, next.reason.as_str()), (delay, reason));
        }
        assert_eq!(
            next_profile_read(&profile(Some(T0)), T0, Jitter::new(-0.1).unwrap()).next_at,
            T0 + 8 * HOUR - 48 * MINUTE
        );
    }

    #[test]
    fn clans_follow_their_members() {
        let clan = |member_seen_at| ClanSubject {
            last_read: ok_at(T0),
            member_seen_at,
            max_age_until: None,
        };
        let cases = [
            (Some(T0), 15 * MINUTE, "clan_members_online"),
            (Some(T0 - 30 * MINUTE), 15 * MINUTE, "clan_members_online"),
            (Some(T0 - 31 * MINUTE), HOUR, "clan_members_recent"),
            (Some(T0 - DAY), HOUR, "clan_members_recent"),
            (Some(T0 - DAY - 1), 4 * HOUR, "clan_idle"),
            (None, 4 * HOUR, "clan_idle"),
        ];
        for (seen, delay, reason) in cases {
            let next = next_clan_read(&clan(seen), T0, Jitter::NONE);
            assert_eq!((next.next_at - T0, next.reason.as_str()), (delay, reason));
        }
    }

    #[test]
    fn reasons_serialize_as_their_stable_names() {
        let next = read_now(&log(0));
        assert_eq!(
            serde_json::to_value(next).unwrap(),
            serde_json::json!({"next_at": T0 + 30 * MINUTE, "reason": "session_productive"})
        );
        for reason in [
            Reason::FirstRead,
            Reason::NotFoundHold,
            Reason::RetryAfterFailure,
            Reason::SessionProductive,
            Reason::SessionBackoff,
            Reason::OverflowGuard,
            Reason::NewSubject,
            Reason::NamedInCall,
            Reason::UpstreamMaxAge,
            Reason::PlayerActiveLastDay,
            Reason::PlayerActiveLastWeek,
            Reason::PlayerIdle,
            Reason::ClanMembersOnline,
            Reason::ClanMembersRecent,
            Reason::ClanIdle,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
    }
}
