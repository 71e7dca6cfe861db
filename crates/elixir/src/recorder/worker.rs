//! The recorder's reads of players, battle logs and clans (SURFACE §7.1–7.4): one pass takes
//! the due rows of the schedule, leases each (so two recorders never read one subject), reads
//! it through the recorder lane, stores what it means, notes coverage gaps, and sets the next
//! read by [`schedule`]'s rules. Jitter is a hash of the subject and the read's instant, so
//! reads spread evenly and a test under a fake clock sees the same decisions every run.

use std::time::Duration;

use elixir_record::coverage::{self, CountReading, GapKind, UnknownInterval};
use elixir_record::normalize::clan::ClanProfile;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::time::from_millis;
use elixir_record::{Battle, Tag};
use sha2::{Digest, Sha256};

use super::ingest::{clan_rows, new_battles, observer_name, player_rows};
use super::schedule::{
    self, BattleLogSubject, ClanSubject, Jitter, LastRead, Next, ProfileSubject, ReadResult,
};
use super::{Poller, RecorderError};
use crate::domain::Millis;
use crate::model::{CoverageGap, Poll, PollDone, PollEndpoint};
use crate::store::{BattleQuery, StoreError};
use crate::upstream::{Endpoint, Fetched, Lane, UpstreamError};

/// How long a read's lease holds before another recorder may take the row.
pub const READ_LEASE_MS: Millis = 5 * 60_000;
/// A subject named in a call is read at least hourly for this long (§7.2).
pub const DEMAND_MS: Millis = 24 * 3_600_000;

/// What one pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pass {
    /// Reads answered 200 and stored.
    pub read: usize,
    /// Reads that failed (404 included) and were rescheduled.
    pub failed: usize,
    /// Rows another recorder leased first.
    pub skipped: usize,
    /// Reads the budget refused; the pass stopped there.
    pub throttled: usize,
}

/// The API read behind a schedule row's endpoint.
fn upstream_endpoint(endpoint: PollEndpoint, tag: &Tag) -> Endpoint {
    match endpoint {
        PollEndpoint::Battlelog => Endpoint::Battlelog(tag.clone()),
        PollEndpoint::Player => Endpoint::Player(tag.clone()),
        PollEndpoint::Clan => Endpoint::Clan(tag.clone()),
    }
}

/// ±10% from a hash of the subject and the instant.
fn jitter(subject: &str, endpoint: PollEndpoint, at: Millis) -> Jitter {
    let digest = Sha256::new()
        .chain_update(subject.as_bytes())
        .chain_update(endpoint.as_str().as_bytes())
        .chain_update(at.to_be_bytes())
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let unit = (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64;
    Jitter::new(unit * 0.2 - 0.1).unwrap_or(Jitter::NONE)
}

/// The finished row of a read that failed with `result`.
fn failed(
    poll: &Poll,
    result: ReadResult,
    at: Millis,
    next: Next,
    status: Option<i64>,
) -> PollDone {
    PollDone {
        next_at: next.next_at,
        reason: next.reason.as_str().to_owned(),
        read_at: at,
        status,
        failures: match result {
            ReadResult::Failed { consecutive } => i64::from(consecutive),
            _ => poll.failures,
        },
        empty_reads: poll.empty_reads,
        held_until: (result == ReadResult::NotFound).then_some(next.next_at),
        not_found: result == ReadResult::NotFound,
        fastest_fill_ms: poll.fastest_fill_ms,
    }
}

impl Poller {
    /// One pass over the due schedule: at most `limit` rows, stopping at the first refusal of
    /// the budget (the row keeps its time and is read when the lane has a token).
    pub async fn pass(&self, limit: i64) -> Result<Pass, StoreError> {
        let now = self.clock.now_millis();
        let mut report = Pass::default();
        for poll in self.store.due_polls(now, limit).await? {
            let leased = self
                .store
                .lease_read(
                    poll.endpoint,
                    &poll.subject,
                    &self.owner,
                    now,
                    now + READ_LEASE_MS,
                )
                .await?;
            if !leased {
                report.skipped += 1;
                continue;
            }
            match self.read(&poll).await {
                Ok(done) => {
                    let ok = done.status == Some(200);
                    self.finish_when_back(&poll, &done, now + READ_LEASE_MS)
                        .await?;
                    if ok {
                        report.read += 1;
                    } else {
                        report.failed += 1;
                    }
                }
                Err(Interrupted::Throttled(until)) => {
                    // Nothing was sent: release the row at its old counters, due when the
                    // budget allows.
                    let done = PollDone {
                        reason: "upstream_paused".into(),
                        read_at: poll.last_read_at.unwrap_or(now),
                        ..unchanged(&poll, until.max(now))
                    };
                    self.store
                        .finish_read(poll.endpoint, &poll.subject, &self.owner, &done)
                        .await?;
                    report.throttled += 1;
                    break;
                }
                Err(Interrupted::Database(unchanged)) => {
                    // the database is back once the row is released: the pass goes on, and
                    // the row is read again on the next one
                    self.finish_when_back(&poll, &unchanged, now + READ_LEASE_MS)
                        .await?;
                }
            }
        }
        if report.read + report.failed > 0 {
            // Raw JSON is kept two hours for reprocessing (§7.5); the archive keeps it for good.
            self.store
                .purge_raw(self.clock.now_millis() - super::RAW_RETENTION_MS)
                .await?;
        }
        Ok(report)
    }

    /// Records `done` on `poll`'s row and releases the lease. While the database is
    /// unavailable the recorder pauses here, retrying, so the read it made is neither lost
    /// nor left leased (a leased row is not due for anyone until its lease ends); once the
    /// lease it holds ends (`lease_until`, by the recorder's clock) another recorder may take
    /// the row, and the failure is returned instead.
    async fn finish_when_back(
        &self,
        poll: &Poll,
        done: &PollDone,
        lease_until: Millis,
    ) -> Result<(), StoreError> {
        let mut pause = Duration::from_millis(100);
        loop {
            let finished = self
                .store
                .finish_read(poll.endpoint, &poll.subject, &self.owner, done)
                .await;
            match finished {
                Err(StoreError::Unavailable(e)) if self.clock.now_millis() < lease_until => {
                    tracing::warn!(subject = %poll.subject, error = %e, "database unavailable; the read waits to be recorded");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    /// Reads one row's subject; the row's next state, or why there is none.
    async fn read(&self, poll: &Poll) -> Result<PollDone, Interrupted> {
        let tag = match Tag::parse(&poll.subject) {
            Ok(tag) => tag,
            Err(e) => {
                tracing::error!(subject = %poll.subject, error = %e, "scheduled subject is no tag");
                let at = self.clock.now_millis();
                return Ok(failed(
                    poll,
                    ReadResult::NotFound,
                    at,
                    Next {
                        next_at: at + DEMAND_MS,
                        reason: schedule::Reason::NotFoundHold,
                    },
                    None,
                ));
            }
        };
        let fetched = self
            .upstream
            .fetch(Lane::Recorder, &upstream_endpoint(poll.endpoint, &tag))
            .await;
        let at = self.clock.now_millis();
        let jitter = jitter(&poll.subject, poll.endpoint, at);
        let (result, status) = match &fetched {
            Ok(_) => (ReadResult::Success, Some(200)),
            // the upstream's own bookkeeping (budget, raw payload) met the database down
            Err(UpstreamError::Store(StoreError::Unavailable(e))) => {
                tracing::warn!(subject = %poll.subject, error = %e, "database unavailable; the read is dropped");
                return Err(Interrupted::Database(unchanged(poll, at)));
            }
            Err(UpstreamError::Throttled { until, .. }) => {
                return Err(Interrupted::Throttled(*until));
            }
            Err(UpstreamError::CircuitOpen { probe_at }) => {
                return Err(Interrupted::Throttled(*probe_at));
            }
            Err(UpstreamError::Status { status: 404, .. }) => (ReadResult::NotFound, Some(404)),
            // 429, 503 and the circuit's 403s pause the budget: the subject did nothing
            // wrong, so it keeps its counters and is read when the pause ends.
            Err(UpstreamError::Status {
                retry_at: Some(until),
                ..
            }) => return Err(Interrupted::Throttled(*until)),
            Err(e) => {
                let consecutive = u32::try_from(poll.failures + 1).unwrap_or(u32::MAX);
                let status = match e {
                    UpstreamError::Status { status, .. } => Some(i64::from(*status)),
                    _ => None,
                };
                tracing::warn!(subject = %poll.subject, endpoint = poll.endpoint.as_str(), error = %e, "recorder read failed");
                (ReadResult::Failed { consecutive }, status)
            }
        };
        let fetched = match fetched {
            Ok(f) => f,
            Err(_) => {
                let next = self.next(poll, result, at, jitter, None, 0, None).await;
                return Ok(failed(poll, result, at, next, status));
            }
        };
        let stored = match poll.endpoint {
            PollEndpoint::Battlelog => self.store_log(&tag, &fetched).await,
            PollEndpoint::Player => self.store_profile(&tag, &fetched).await.map(|()| (0, None)),
            PollEndpoint::Clan => self.store_clan(&fetched).await.map(|seen| (0, seen)),
        };
        let max_age_until = fetched.max_age_ms.map(|age| fetched.fetched_at + age);
        match stored {
            Ok((new, extra)) => {
                let empty_reads = if poll.endpoint == PollEndpoint::Battlelog && new == 0 {
                    poll.empty_reads + 1
                } else {
                    0
                };
                let fill = match (poll.fastest_fill_ms, extra) {
                    (Some(a), Some(b)) if poll.endpoint == PollEndpoint::Battlelog => {
                        Some(a.min(b))
                    }
                    (a, b) if poll.endpoint == PollEndpoint::Battlelog => a.or(b),
                    (a, _) => a,
                };
                let mut row = poll.clone();
                row.fastest_fill_ms = fill;
                let next = self
                    .next(&row, result, at, jitter, max_age_until, empty_reads, extra)
                    .await;
                Ok(PollDone {
                    next_at: next.next_at,
                    reason: next.reason.as_str().to_owned(),
                    read_at: at,
                    status: Some(200),
                    failures: 0,
                    empty_reads,
                    held_until: None,
                    not_found: false,
                    fastest_fill_ms: fill,
                })
            }
            // The database, not the payload, failed: nothing of this read counts against the
            // subject, which is due again at once.
            Err(RecorderError::Store(StoreError::Unavailable(e))) => {
                tracing::warn!(subject = %poll.subject, error = %e, "database unavailable; the read is dropped");
                Err(Interrupted::Database(unchanged(poll, at)))
            }
            Err(e) => {
                // The payload is archived; a payload the rules refuse is a failure to retry.
                tracing::error!(subject = %poll.subject, error = %e, "recorder could not store a read");
                let consecutive = u32::try_from(poll.failures + 1).unwrap_or(u32::MAX);
                let result = ReadResult::Failed { consecutive };
                let next = self
                    .next(poll, result, at, jitter, max_age_until, 0, None)
                    .await;
                Ok(failed(poll, result, at, next, Some(200)))
            }
        }
    }

    /// Reads `tag`'s `endpoint` now in `lane` (the live lane's request) and stores it like a
    /// scheduled read; the schedule keeps its own cadence. Returns when it was observed.
    pub async fn read_now(
        &self,
        lane: Lane,
        endpoint: PollEndpoint,
        tag: &Tag,
    ) -> Result<Millis, UpstreamError> {
        let fetched = self
            .upstream
            .fetch(lane, &upstream_endpoint(endpoint, tag))
            .await?;
        let stored = match endpoint {
            PollEndpoint::Battlelog => self.store_log(tag, &fetched).await.map(|_| ()),
            PollEndpoint::Player => self.store_profile(tag, &fetched).await,
            PollEndpoint::Clan => self.store_clan(&fetched).await.map(|_| ()),
        };
        stored.map_err(|e| UpstreamError::Payload(e.to_string()))?;
        self.store
            .note_read(endpoint, tag.as_ref(), fetched.fetched_at)
            .await?;
        Ok(fetched.fetched_at)
    }

    /// The next read of `poll`'s subject by the cadence of its endpoint.
    #[allow(clippy::too_many_arguments)]
    async fn next(
        &self,
        poll: &Poll,
        result: ReadResult,
        at: Millis,
        jitter: Jitter,
        max_age_until: Option<Millis>,
        empty_reads: i64,
        member_seen_at: Option<Millis>,
    ) -> Next {
        let last = Some(LastRead { at, result });
        let last_battle_at = self
            .store
            .player(&poll.subject)
            .await
            .ok()
            .flatten()
            .and_then(|p| p.last_battle_at);
        match poll.endpoint {
            PollEndpoint::Battlelog => schedule::next_battlelog_read(
                &BattleLogSubject {
                    last_read: last,
                    empty_reads: u32::try_from(empty_reads).unwrap_or(u32::MAX),
                    last_battle_at,
                    fastest_fill: poll.fastest_fill_ms,
                    added_at: Some(poll.created_at),
                    named_at: poll.demand_until.map(|until| until - DEMAND_MS),
                    max_age_until,
                },
                at,
                jitter,
            ),
            PollEndpoint::Player => schedule::next_profile_read(
                &ProfileSubject {
                    last_read: last,
                    last_battle_at,
                    max_age_until,
                },
                at,
                jitter,
            ),
            PollEndpoint::Clan => schedule::next_clan_read(
                &ClanSubject {
                    last_read: last,
                    member_seen_at,
                    max_age_until,
                },
                at,
                jitter,
            ),
        }
    }

    /// Stores a battle log: `(new observations, fill time)`; notes a gap when every entry of a
    /// non-first read was new.
    async fn store_log(
        &self,
        tag: &Tag,
        fetched: &Fetched,
    ) -> Result<(i64, Option<Millis>), RecorderError> {
        let log = Battle::from_battlelog(&fetched.body)
            .map_err(|e| RecorderError::Payload(e.to_string()))?;
        for rejected in &log.rejected {
            tracing::warn!(player = %tag, index = rejected.index, error = %rejected.error, "battle entry rejected");
        }
        let rows = new_battles(tag, &log.battles)?;
        let name = observer_name(tag, &log.battles);
        let ingested = self
            .store
            .ingest_battles(tag.as_ref(), name, fetched.fetched_at, &rows)
            .await?;
        let times: Vec<_> = log.battles.iter().map(|b| b.battle_time).collect();
        if ingested.new_observations == rows.len() {
            let last = ingested.previous_newest.and_then(from_millis);
            if let Some(gap) = coverage::log_gap(last, &times) {
                self.note_gap(tag, &gap, fetched.fetched_at).await?;
            }
        }
        let millis: Vec<Millis> = times.iter().map(|t| t.as_millisecond()).collect();
        Ok((
            i64::try_from(ingested.new_observations).unwrap_or(i64::MAX),
            schedule::log_fill_time(&millis),
        ))
    }

    /// Stores a profile and its snapshot; notes a gap when `battleCount` rose by more than the
    /// battles recorded since the previous profile read.
    async fn store_profile(&self, tag: &Tag, fetched: &Fetched) -> Result<(), RecorderError> {
        let read = PlayerProfile::from_upstream(&fetched.body)
            .map_err(|e| RecorderError::Payload(e.to_string()))?;
        let subject = tag.to_string();
        let previous = self
            .store
            .snapshots(&subject, Millis::MIN, fetched.fetched_at)
            .await?
            .into_iter()
            .rev()
            .find(|s| s.battle_count.is_some());
        let (row, snapshot) = player_rows(&read.profile, fetched.fetched_at)?;
        self.store.put_player(&row, &snapshot).await?;
        if let (Some(prev), Some(count)) = (previous, read.profile.battle_count) {
            let recorded = self
                .store
                .count_battles(
                    &subject,
                    &BattleQuery {
                        from: Some(prev.observed_at),
                        to: Some(fetched.fetched_at),
                        ..BattleQuery::default()
                    },
                )
                .await?;
            let reading = |count: i64, at: Millis| {
                Some(CountReading {
                    battle_count: u64::try_from(count).ok()?,
                    observed_at: from_millis(at)?,
                })
            };
            if let (Some(before), Some(now)) = (
                reading(prev.battle_count.unwrap_or(0), prev.observed_at),
                reading(count, fetched.fetched_at),
            ) && let Some(gap) =
                coverage::battle_count_gap(Some(before), now, u64::try_from(recorded).unwrap_or(0))
            {
                self.note_gap(tag, &gap, fetched.fetched_at).await?;
            }
        }
        Ok(())
    }

    /// Stores a clan and its member list; a comprehensive clan's members join the schedule.
    /// Returns the newest `lastSeen` among the members (the clan cadence reads it).
    async fn store_clan(&self, fetched: &Fetched) -> Result<Option<Millis>, RecorderError> {
        let read = ClanProfile::from_upstream(&fetched.body)
            .map_err(|e| RecorderError::Payload(e.to_string()))?;
        let (row, members) = clan_rows(&read.profile, fetched.fetched_at)?;
        self.store
            .put_clan(&row, &members, fetched.fetched_at)
            .await?;
        let comprehensive = self
            .store
            .recorded_clans()
            .await?
            .iter()
            .any(|(tag, _, scope)| *tag == row.tag && scope == "comprehensive");
        if comprehensive {
            for m in &members {
                self.store
                    .schedule(
                        &[PollEndpoint::Battlelog, PollEndpoint::Player],
                        &m.player_tag,
                        fetched.fetched_at,
                        "first_read",
                    )
                    .await?;
            }
        }
        Ok(members.iter().filter_map(|m| m.last_seen_at).max())
    }

    async fn note_gap(
        &self,
        tag: &Tag,
        gap: &UnknownInterval,
        at: Millis,
    ) -> Result<(), StoreError> {
        let reason = match gap.kind {
            GapKind::LogOverflow => "log_overflow",
            GapKind::BattleCount => "battle_count",
            _ => "unknown",
        };
        tracing::debug!(subject = %tag, reason, "coverage gap");
        self.store
            .add_gap(&CoverageGap {
                subject: tag.to_string(),
                from_at: gap.from.as_millisecond(),
                to_at: gap.to.as_millisecond(),
                reason: reason.to_owned(),
                detected_at: at,
            })
            .await
    }
}

/// `poll`'s row as it was, due at `at`: a read that does not count.
fn unchanged(poll: &Poll, at: Millis) -> PollDone {
    PollDone {
        next_at: at,
        reason: poll.reason.clone(),
        read_at: poll.last_read_at.unwrap_or(at),
        status: poll.last_status,
        failures: poll.failures,
        empty_reads: poll.empty_reads,
        held_until: poll.held_until,
        not_found: poll.not_found,
        fastest_fill_ms: poll.fastest_fill_ms,
    }
}

/// Why a read ended without a result the subject earned.
#[derive(Debug, Clone, PartialEq)]
enum Interrupted {
    /// The budget refused before anything was sent; due again at this instant.
    Throttled(Millis),
    /// The database failed while the read was stored; the row as it was, due now.
    Database(PollDone),
}
