//! The upstream budget (SURFACE §7.3): one token bucket of 1.0 request/s over all upstream
//! traffic, split into a recorder lane (0.9/s, burst 5) and a live lane (0.1/s, banking up to
//! 30 tokens); live may borrow from an idle recorder lane, never the reverse. And the reaction
//! to the API's HTTP status, never its `reason`: 429 pauses both lanes until `Retry-After` (60 s
//! without one), 503 pauses 5 minutes doubling up to 30, five consecutive 403s open the circuit
//! (a probe every 15 minutes; live reads are refused while it is open). Pure: every method
//! takes the instant, so tests drive it with a fake clock. The state is serializable: the
//! caller keeps it in one database row shared by every instance and owns the lock and clock.

use crate::domain::Millis;

/// One token, in the buckets' fixed-point units (a millionth of a token each).
const UNIT: i64 = 1_000_000;

/// The two lanes of the upstream budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Scheduled reads.
    Recorder,
    /// `live: true` and `live_fetch`.
    Live,
}

impl Lane {
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Recorder => "recorder",
            Lane::Live => "live",
        }
    }
}

/// How a request was let through; recorded on its receipt as `admission`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A token of the request's own lane.
    Own(Lane),
    /// A live request on a token of the idle recorder lane.
    Borrowed,
    /// The one request that tests whether an open circuit can close.
    Probe,
}

impl Admission {
    pub fn as_str(self) -> &'static str {
        match self {
            Admission::Own(lane) => lane.as_str(),
            Admission::Borrowed => "live_borrowed",
            Admission::Probe => "probe",
        }
    }
}

/// Why the budget refused a request now, and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Both lanes pause after a 429 or a 503.
    Paused { until: Millis, cause: PauseCause },
    /// The lane has no token; one is there at `until`.
    Empty { until: Millis },
    /// Five consecutive 403s; the next probe may go at `probe_at` (recorder lane only).
    CircuitOpen { probe_at: Millis },
}

impl Refusal {
    /// The earliest instant worth asking again.
    pub fn until(self) -> Millis {
        match self {
            Refusal::Paused { until, .. } | Refusal::Empty { until } => until,
            Refusal::CircuitOpen { probe_at } => probe_at,
        }
    }
}

/// What paused both lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PauseCause {
    /// HTTP 429.
    Throttled,
    /// HTTP 503 (maintenance).
    Maintenance,
}

impl PauseCause {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseCause::Throttled => "throttled (429)",
            PauseCause::Maintenance => "maintenance (503)",
        }
    }
}

/// What an answer did to the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// Nothing changed.
    None,
    /// Both lanes pause until this instant.
    Paused { until: Millis, cause: PauseCause },
    /// A 403 short of opening the circuit.
    Forbidden { streak: u32 },
    /// The fifth consecutive 403: the operator must be alerted.
    CircuitOpened { probe_at: Millis },
    /// A probe met another 403.
    CircuitStillOpen { probe_at: Millis },
    /// A probe got an answer other than 403.
    CircuitClosed,
}

/// The numbers of §7.3; tests may shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Recorder lane refill, in thousandths of a token per second (900 = 0.9/s).
    pub recorder_milli_per_s: i64,
    /// Recorder lane capacity, in tokens.
    pub recorder_burst: i64,
    /// Live lane refill, in thousandths of a token per second (100 = 0.1/s).
    pub live_milli_per_s: i64,
    /// Live lane capacity, in tokens (30 = 300 s banked).
    pub live_bank: i64,
    /// The 429 pause when the answer carries no `Retry-After`.
    pub default_retry_after_ms: Millis,
    /// The first 503 pause, doubled on each consecutive 503 up to `maintenance_max_ms`.
    pub maintenance_first_ms: Millis,
    pub maintenance_max_ms: Millis,
    /// Consecutive 403s that open the circuit.
    pub circuit_after: u32,
    /// How often an open circuit lets a probe through.
    pub probe_every_ms: Millis,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            recorder_milli_per_s: 900,
            recorder_burst: 5,
            live_milli_per_s: 100,
            live_bank: 30,
            default_retry_after_ms: 60_000,
            maintenance_first_ms: 5 * 60_000,
            maintenance_max_ms: 30 * 60_000,
            circuit_after: 5,
            probe_every_ms: 15 * 60_000,
        }
    }
}

/// One lane's bucket, in fixed-point units; a rate in thousandths of a token per second is
/// exactly that many units per millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Bucket {
    level: i64,
    capacity: i64,
    per_ms: i64,
    at: Millis,
}

impl Bucket {
    /// A full bucket.
    fn new(tokens: i64, milli_per_s: i64, now: Millis) -> Self {
        let capacity = tokens.saturating_mul(UNIT);
        Self {
            level: capacity,
            capacity,
            per_ms: milli_per_s.max(1),
            at: now,
        }
    }

    fn refill(&mut self, now: Millis) {
        if now > self.at {
            let gained = (now - self.at).saturating_mul(self.per_ms);
            self.level = self.level.saturating_add(gained).min(self.capacity);
            self.at = now;
        }
    }

    fn has_token(&self) -> bool {
        self.level >= UNIT
    }

    fn full(&self) -> bool {
        self.level >= self.capacity
    }

    fn take(&mut self) {
        self.level -= UNIT;
    }

    /// When the bucket next holds a whole token.
    fn token_at(&self) -> Millis {
        let missing = (UNIT - self.level).max(0);
        self.at + (missing + self.per_ms - 1) / self.per_ms
    }
}

/// The budget's state: a pure machine, kept in one database row that every instance updates
/// under a row lock (`upstream::Upstream`), so the §7.3 numbers hold across instances.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    /// The instance's configuration, never stored: each update runs under the caller's.
    #[serde(skip)]
    config: BudgetConfig,
    recorder: Bucket,
    live: Bucket,
    paused_until: Millis,
    pause_cause: PauseCause,
    /// The length of the last 503 pause, while 503s keep coming.
    maintenance_ms: Option<Millis>,
    forbidden_streak: u32,
    /// When open: the instant the next probe may go.
    circuit: Option<Millis>,
    /// A probe is out; no other request passes until its answer.
    probing: bool,
}

impl Budget {
    /// Both lanes start full.
    pub fn new(config: BudgetConfig, now: Millis) -> Self {
        Self {
            recorder: Bucket::new(config.recorder_burst, config.recorder_milli_per_s, now),
            live: Bucket::new(config.live_bank, config.live_milli_per_s, now),
            config,
            paused_until: 0,
            pause_cause: PauseCause::Throttled,
            maintenance_ms: None,
            forbidden_streak: 0,
            circuit: None,
            probing: false,
        }
    }

    /// The state stored as JSON, or a fresh budget when there is none (or it is unreadable),
    /// under `config`.
    pub fn restore(stored: Option<&str>, config: BudgetConfig, now: Millis) -> Self {
        match stored.and_then(|s| serde_json::from_str::<Budget>(s).ok()) {
            Some(mut b) => {
                b.config = config;
                b
            }
            None => Budget::new(config, now),
        }
    }

    /// The state as the database keeps it.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether the circuit is open (live reads answer `live_unavailable`).
    pub fn circuit_open(&self) -> bool {
        self.circuit.is_some()
    }

    /// Spends a token of `lane` at `now`, or says why not and until when.
    pub fn acquire(&mut self, lane: Lane, now: Millis) -> Result<Admission, Refusal> {
        self.recorder.refill(now);
        self.live.refill(now);
        if now < self.paused_until {
            return Err(Refusal::Paused {
                until: self.paused_until,
                cause: self.pause_cause,
            });
        }
        if let Some(probe_at) = self.circuit {
            if lane == Lane::Live || self.probing || now < probe_at {
                return Err(Refusal::CircuitOpen { probe_at });
            }
            if !self.recorder.has_token() {
                return Err(Refusal::Empty {
                    until: self.recorder.token_at(),
                });
            }
            self.recorder.take();
            self.probing = true;
            self.circuit = Some(now + self.config.probe_every_ms);
            return Ok(Admission::Probe);
        }
        match lane {
            Lane::Recorder if self.recorder.has_token() => {
                self.recorder.take();
                Ok(Admission::Own(Lane::Recorder))
            }
            Lane::Recorder => Err(Refusal::Empty {
                until: self.recorder.token_at(),
            }),
            Lane::Live if self.live.has_token() => {
                self.live.take();
                Ok(Admission::Own(Lane::Live))
            }
            // An idle recorder lane is a full one: nothing scheduled has needed it lately.
            Lane::Live if self.recorder.full() => {
                self.recorder.take();
                Ok(Admission::Borrowed)
            }
            Lane::Live => Err(Refusal::Empty {
                until: self.live.token_at(),
            }),
        }
    }

    /// Reacts to an HTTP answer. `retry_after_ms` is the parsed `Retry-After`, if any.
    pub fn observe(
        &mut self,
        status: u16,
        retry_after_ms: Option<Millis>,
        now: Millis,
    ) -> Reaction {
        self.probing = false;
        if status == 403 {
            self.forbidden_streak = self.forbidden_streak.saturating_add(1);
            if self.forbidden_streak < self.config.circuit_after {
                return Reaction::Forbidden {
                    streak: self.forbidden_streak,
                };
            }
            let probe_at = now + self.config.probe_every_ms;
            let was_open = self.circuit.is_some();
            self.circuit = Some(probe_at);
            return if was_open {
                Reaction::CircuitStillOpen { probe_at }
            } else {
                Reaction::CircuitOpened { probe_at }
            };
        }
        self.forbidden_streak = 0;
        let closed = self.circuit.take().is_some();
        if status != 503 {
            self.maintenance_ms = None;
        }
        let pause = match status {
            429 => Some((
                retry_after_ms
                    .filter(|ms| *ms >= 0)
                    .unwrap_or(self.config.default_retry_after_ms),
                PauseCause::Throttled,
            )),
            503 => {
                let length = match self.maintenance_ms {
                    Some(last) => last.saturating_mul(2).min(self.config.maintenance_max_ms),
                    None => self.config.maintenance_first_ms,
                };
                self.maintenance_ms = Some(length);
                Some((length, PauseCause::Maintenance))
            }
            _ => None,
        };
        match pause {
            Some((length, cause)) => {
                let until = now.saturating_add(length);
                if until > self.paused_until {
                    self.paused_until = until;
                    self.pause_cause = cause;
                }
                Reaction::Paused {
                    until: self.paused_until,
                    cause: self.pause_cause,
                }
            }
            None if closed => Reaction::CircuitClosed,
            None => Reaction::None,
        }
    }

    /// A request that got no HTTP answer (connection refused, timeout): a probe is no longer
    /// out, and nothing else changes.
    pub fn observe_no_answer(&mut self) {
        self.probing = false;
    }
}

/// `Retry-After` in delay-seconds, as milliseconds; an HTTP-date or garbage is `None` (the
/// 60-second default then applies).
pub fn parse_retry_after(value: &str) -> Option<Millis> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .map(|s| Millis::from(s) * 1000)
}

#[cfg(test)]
mod tests {
    use mcp_door::{Clock, FakeClock};

    use super::*;

    /// 2026-01-01T00:00:00Z.
    const T0: Millis = 1_767_225_600_000;

    fn setup() -> (Budget, FakeClock) {
        let clock = FakeClock::new(T0);
        (
            Budget::new(BudgetConfig::default(), clock.now_millis()),
            clock,
        )
    }

    fn take(b: &mut Budget, lane: Lane, clock: &FakeClock) -> Result<Admission, Refusal> {
        b.acquire(lane, clock.now_millis())
    }

    #[test]
    fn recorder_lane_bursts_five_then_refills_at_0_9_per_second() {
        let (mut b, clock) = setup();
        for _ in 0..5 {
            assert_eq!(
                take(&mut b, Lane::Recorder, &clock),
                Ok(Admission::Own(Lane::Recorder))
            );
        }
        // one token takes 1/0.9 s = 1111.1 ms
        assert_eq!(
            take(&mut b, Lane::Recorder, &clock),
            Err(Refusal::Empty { until: T0 + 1112 })
        );
        clock.advance_millis(1111);
        assert!(take(&mut b, Lane::Recorder, &clock).is_err());
        clock.advance_millis(1);
        assert!(take(&mut b, Lane::Recorder, &clock).is_ok());
        // sustained: 9 more in 10 s
        let mut granted = 0;
        for _ in 0..100 {
            clock.advance_millis(100);
            if take(&mut b, Lane::Recorder, &clock).is_ok() {
                granted += 1;
            }
        }
        assert_eq!(granted, 9);
    }

    #[test]
    fn live_lane_banks_thirty_and_borrows_only_from_an_idle_recorder() {
        let (mut b, clock) = setup();
        for _ in 0..30 {
            assert_eq!(
                take(&mut b, Lane::Live, &clock),
                Ok(Admission::Own(Lane::Live))
            );
        }
        // the recorder lane is full (idle): live borrows one token of it
        assert_eq!(take(&mut b, Lane::Live, &clock), Ok(Admission::Borrowed));
        // now the recorder lane is no longer full: no more borrowing
        assert_eq!(
            take(&mut b, Lane::Live, &clock),
            Err(Refusal::Empty { until: T0 + 10_000 })
        );
        // the recorder still has its other four
        for _ in 0..4 {
            assert!(take(&mut b, Lane::Recorder, &clock).is_ok());
        }
        clock.advance_millis(10_000);
        assert_eq!(
            take(&mut b, Lane::Live, &clock),
            Ok(Admission::Own(Lane::Live))
        );
    }

    #[test]
    fn the_recorder_never_borrows_from_live() {
        let (mut b, clock) = setup();
        for _ in 0..5 {
            take(&mut b, Lane::Recorder, &clock).unwrap();
        }
        // 30 live tokens banked, yet the recorder waits for its own
        assert!(matches!(
            take(&mut b, Lane::Recorder, &clock),
            Err(Refusal::Empty { .. })
        ));
        assert_eq!(
            take(&mut b, Lane::Live, &clock),
            Ok(Admission::Own(Lane::Live))
        );
    }

    #[test]
    fn greedy_callers_never_exceed_one_request_per_second_plus_the_banks() {
        let (mut b, clock) = setup();
        let mut granted = 0i64;
        let seconds = 600;
        for _ in 0..seconds * 10 {
            clock.advance_millis(100);
            for lane in [Lane::Live, Lane::Recorder, Lane::Live] {
                if take(&mut b, lane, &clock).is_ok() {
                    granted += 1;
                }
            }
        }
        assert!(granted <= 35 + seconds, "{granted}");
        assert!(granted >= 35 + seconds - 3, "{granted}");
    }

    #[test]
    fn a_429_pauses_both_lanes_until_retry_after() {
        let (mut b, clock) = setup();
        take(&mut b, Lane::Recorder, &clock).unwrap();
        let until = T0 + 120_000;
        assert_eq!(
            b.observe(429, Some(120_000), clock.now_millis()),
            Reaction::Paused {
                until,
                cause: PauseCause::Throttled
            }
        );
        let paused = Err(Refusal::Paused {
            until,
            cause: PauseCause::Throttled,
        });
        assert_eq!(take(&mut b, Lane::Recorder, &clock), paused);
        assert_eq!(take(&mut b, Lane::Live, &clock), paused);
        clock.advance_millis(119_999);
        assert_eq!(take(&mut b, Lane::Live, &clock), paused);
        clock.advance_millis(1);
        assert!(take(&mut b, Lane::Recorder, &clock).is_ok());
        assert!(take(&mut b, Lane::Live, &clock).is_ok());
        // without Retry-After: 60 s
        let now = clock.now_millis();
        assert_eq!(
            b.observe(429, None, now),
            Reaction::Paused {
                until: now + 60_000,
                cause: PauseCause::Throttled
            }
        );
        clock.advance_millis(59_999);
        assert!(take(&mut b, Lane::Recorder, &clock).is_err());
        clock.advance_millis(1);
        assert!(take(&mut b, Lane::Recorder, &clock).is_ok());
    }

    #[test]
    fn a_503_pauses_five_minutes_doubling_to_thirty_until_an_answer_resets_it() {
        let (mut b, clock) = setup();
        let mut lengths = Vec::new();
        for _ in 0..5 {
            let now = clock.now_millis();
            match b.observe(503, Some(1_000), now) {
                Reaction::Paused {
                    until,
                    cause: PauseCause::Maintenance,
                } => {
                    lengths.push((until - now) / 60_000);
                    assert!(take(&mut b, Lane::Recorder, &clock).is_err());
                    clock.set_millis(until);
                    assert!(take(&mut b, Lane::Recorder, &clock).is_ok());
                }
                other => panic!("{other:?}"),
            }
        }
        // Retry-After is not what a 503 follows
        assert_eq!(lengths, [5, 10, 20, 30, 30]);
        assert_eq!(b.observe(200, None, clock.now_millis()), Reaction::None);
        let now = clock.now_millis();
        assert_eq!(
            b.observe(503, None, now),
            Reaction::Paused {
                until: now + 5 * 60_000,
                cause: PauseCause::Maintenance
            }
        );
    }

    #[test]
    fn five_consecutive_403s_open_the_circuit_and_a_probe_closes_it() {
        let (mut b, clock) = setup();
        // four 403s then any other answer: the streak restarts
        for streak in 1..=4 {
            assert_eq!(
                b.observe(403, None, clock.now_millis()),
                Reaction::Forbidden { streak }
            );
        }
        assert_eq!(b.observe(404, None, clock.now_millis()), Reaction::None);
        for streak in 1..=4 {
            assert_eq!(
                b.observe(403, None, clock.now_millis()),
                Reaction::Forbidden { streak }
            );
        }
        let probe_at = T0 + 15 * 60_000;
        assert_eq!(
            b.observe(403, None, clock.now_millis()),
            Reaction::CircuitOpened { probe_at }
        );
        assert!(b.circuit_open());
        assert_eq!(
            take(&mut b, Lane::Live, &clock),
            Err(Refusal::CircuitOpen { probe_at })
        );
        assert_eq!(
            take(&mut b, Lane::Recorder, &clock),
            Err(Refusal::CircuitOpen { probe_at })
        );
        clock.set_millis(probe_at);
        assert_eq!(take(&mut b, Lane::Recorder, &clock), Ok(Admission::Probe));
        // one probe at a time; live stays refused
        let next = probe_at + 15 * 60_000;
        assert_eq!(
            take(&mut b, Lane::Recorder, &clock),
            Err(Refusal::CircuitOpen { probe_at: next })
        );
        assert_eq!(
            b.observe(403, None, clock.now_millis()),
            Reaction::CircuitStillOpen { probe_at: next }
        );
        clock.set_millis(next);
        assert_eq!(take(&mut b, Lane::Recorder, &clock), Ok(Admission::Probe));
        assert_eq!(
            b.observe(200, None, clock.now_millis()),
            Reaction::CircuitClosed
        );
        assert!(!b.circuit_open());
        assert_eq!(
            take(&mut b, Lane::Live, &clock),
            Ok(Admission::Own(Lane::Live))
        );
        // a probe that got no answer frees the next probe slot
        for _ in 0..5 {
            b.observe(403, None, clock.now_millis());
        }
        clock.advance_millis(15 * 60_000);
        assert_eq!(take(&mut b, Lane::Recorder, &clock), Ok(Admission::Probe));
        b.observe_no_answer();
        clock.advance_millis(15 * 60_000);
        assert_eq!(take(&mut b, Lane::Recorder, &clock), Ok(Admission::Probe));
    }

    #[test]
    fn admissions_and_retry_after_values() {
        assert_eq!(Admission::Own(Lane::Recorder).as_str(), "recorder");
        assert_eq!(Admission::Own(Lane::Live).as_str(), "live");
        assert_eq!(Admission::Borrowed.as_str(), "live_borrowed");
        assert_eq!(Admission::Probe.as_str(), "probe");
        assert_eq!(parse_retry_after(" 120 "), Some(120_000));
        assert_eq!(parse_retry_after("0"), Some(0));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-5"), None);
    }
}
