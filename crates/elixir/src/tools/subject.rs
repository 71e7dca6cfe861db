//! What the record-backed tools share about their subject: resolving the player a call is
//! about (SURFACE §1.4: explicit tag, the agent door's bound `on_behalf_of`, the person's
//! primary, else `no_subject` with the call that fixes it), and the recording state of a
//! subject as the tools show it (`{state, since, last_polled_at}`).

use elixir_record::Tag;
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::{Millis, iso, name_key};
use crate::mcp::blocks::{self, PlayerArg};
use crate::mcp::call::{ErrorCode, Fail, ToolCtx, ToolError};
use crate::model::{Poll, PollEndpoint};

/// The player a Player-family call is about.
pub async fn resolve_player(ctx: &ToolCtx, arg: &PlayerArg) -> Result<Tag, Fail> {
    if let Some(tag) = &arg.player_tag {
        return Ok(tag.clone());
    }
    let caller = &ctx.caller;
    if let (Some(agent), Some(external)) = (&caller.agent, &arg.on_behalf_of) {
        if let Some(identity) = ctx.services.store.identity(agent.id, external).await? {
            return Tag::parse(&identity.player_tag)
                .map_err(|e| Fail::Internal(format!("stored identity tag: {e}")));
        }
        let mut error = ToolError::new(
            ErrorCode::NoSubject,
            format!("{external:?} is not bound to a player on this door."),
            format!(
                "elixir_identify({{\"external_id\": {}, \"player_tag\": \"#…\"}}) binds it; or send player_tag.",
                json!(external)
            ),
        );
        if let Some(name) = &arg.display_name {
            error = error.with_candidates(candidates(ctx, name).await?);
        }
        return Err(Fail::Tool(error));
    }
    if caller.kind == Kind::Person
        && let Some(primary) = &caller.primary_player_tag
    {
        return Tag::parse(primary).map_err(|e| Fail::Internal(format!("stored primary: {e}")));
    }
    let hint = if caller.kind == Kind::Person {
        "elixir_track_player({\"player_tag\": \"#…\", \"relationship\": \"primary\"}) sets your primary; or send player_tag."
    } else {
        "elixir_identify({\"external_id\": \"…\", \"player_tag\": \"#…\"}) binds the end user; or send player_tag."
    };
    Err(Fail::Tool(ToolError::new(
        ErrorCode::NoSubject,
        "No player_tag was sent and this caller has no player to default to.",
        hint,
    )))
}

/// Door-clan members whose whole name matches `display_name` (trimmed, NFKC, case-insensitive).
async fn candidates(ctx: &ToolCtx, display_name: &str) -> Result<Vec<Value>, Fail> {
    let Some(clan) = ctx.caller.agent.as_ref().and_then(|a| a.clan_tag.clone()) else {
        return Ok(Vec::new());
    };
    let wanted = name_key(display_name);
    let members = ctx.services.store.memberships(&clan, i64::MAX).await?;
    Ok(members
        .iter()
        .filter(|m| m.left_observed_at.is_none() && name_key(&m.name) == wanted)
        .map(|m| json!({"tag": m.player_tag, "name": m.name, "role": m.role}))
        .collect())
}

/// The recording of a subject from its schedule rows: `active` while scheduled, `held` while
/// a 404 holds it; `None` when it is not recorded at all.
pub fn recording(polls: &[Poll], endpoint: PollEndpoint, now: Millis) -> Option<Value> {
    let row = polls.iter().find(|p| p.endpoint == endpoint)?;
    Some(json!({
        "state": if row.is_held(now) { "held" } else { "active" },
        "since": iso(row.created_at),
        "last_polled_at": row.last_read_at.map(iso),
    }))
}

/// The `first_read` of a newly tracked subject: queued for the recorder's next pass.
pub fn first_read(polls: &[Poll], endpoint: PollEndpoint, now: Millis) -> Value {
    let row = polls.iter().find(|p| p.endpoint == endpoint);
    match row.and_then(|r| r.last_read_at) {
        Some(read) => json!({"state": "fresh", "observed_at": iso(read)}),
        None => {
            let next = row.map_or(now, |r| r.next_at);
            json!({
                "state": "pending",
                "retry_after_s": ((next - now).max(0) / 1000).max(5),
                "observed_at": null,
            })
        }
    }
}

/// What the record knows of one player, read once per call: their row, their schedule rows,
/// and the span of their recorded battles. Reading it also marks the player as named in a call
/// (read at least hourly for 24 h, §7.2).
#[derive(Debug, Clone)]
pub struct PlayerFacts {
    pub tag: Tag,
    pub row: Option<crate::model::PlayerRow>,
    pub polls: Vec<Poll>,
    /// `(first, last)` recorded battle times.
    pub span: Option<(Millis, Millis)>,
}

impl PlayerFacts {
    /// Reads the facts of `tag`.
    pub async fn read(ctx: &ToolCtx, tag: &Tag) -> Result<PlayerFacts, Fail> {
        let store = &ctx.services.store;
        let subject = tag.to_string();
        let now = ctx.services.now();
        store
            .demand(&subject, now, now + crate::recorder::worker::DEMAND_MS)
            .await?;
        Ok(PlayerFacts {
            tag: tag.clone(),
            row: store.player(&subject).await?,
            polls: store.polls_of(&subject).await?,
            span: store.battle_span(&subject).await?,
        })
    }

    /// Whether anything at all is recorded (a profile or a battle).
    pub fn is_recorded(&self) -> bool {
        self.row.is_some() || self.span.is_some()
    }

    /// `not_recorded` for this player, with the call that starts a recording.
    pub fn not_recorded(&self) -> Fail {
        Fail::Tool(ToolError::new(
            ErrorCode::NotRecorded,
            format!("Nothing is recorded for {} yet.", self.tag),
            format!(
                "elixir_track_player({{\"player_tag\": \"{}\"}}) starts recording them.",
                self.tag
            ),
        ))
    }

    /// When the record of this player starts: the first battle or the first sighting.
    pub fn recorded_since(&self) -> Option<Millis> {
        let first_row = self.row.as_ref().map(|r| r.first_seen_at);
        match (self.span.map(|s| s.0), first_row) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The last read of one endpoint.
    pub fn last_read(&self, endpoint: PollEndpoint) -> Option<Millis> {
        self.polls
            .iter()
            .find(|p| p.endpoint == endpoint)
            .and_then(|p| p.last_read_at)
    }

    /// The subject-tool `meta` keys (§3.2): `recorded_since`, `recording_active_since`,
    /// `source_polls` (player and battlelog measured; the rest null) and `freshness_seconds`
    /// (the oldest of `needs`; null if one was never read).
    pub fn meta(&self, now: Millis, needs: &[PollEndpoint]) -> Vec<(&'static str, Value)> {
        let poll = |endpoint| match self.last_read(endpoint) {
            Some(at) => {
                json!({"observed_at": iso(at), "freshness_seconds": (now - at).max(0) / 1000})
            }
            None => Value::Null,
        };
        let mut freshness = Some(0i64);
        for endpoint in needs {
            freshness = match (freshness, self.last_read(*endpoint)) {
                (Some(worst), Some(at)) => Some(worst.max((now - at).max(0) / 1000)),
                _ => None,
            };
        }
        let mut keys = vec![
            (
                "source_polls",
                json!({
                    "player": poll(PollEndpoint::Player),
                    "battlelog": poll(PollEndpoint::Battlelog),
                    "clan": null, "currentriverrace": null, "riverracelog": null,
                    "cards": null, "board": null,
                }),
            ),
            ("freshness_seconds", json!(freshness)),
        ];
        if let Some(since) = self.recorded_since() {
            keys.push(("recorded_since", json!(iso(since))));
        }
        if let Some(active) = self.polls.iter().map(|p| p.created_at).min() {
            keys.push(("recording_active_since", json!(iso(active))));
        }
        keys
    }
}

/// The caller's daily live fetches, as the live lane spends them (§4.2: the payer's).
struct CallerAllowance<'a> {
    ctx: &'a ToolCtx,
}

#[async_trait::async_trait]
impl crate::recorder::live::LiveAllowance for CallerAllowance<'_> {
    async fn take(&self) -> Result<bool, crate::store::StoreError> {
        let caller = &self.ctx.caller;
        let now = self.ctx.services.now();
        let limit = caller.tier.live_per_day().unwrap_or(i64::MAX);
        let spent = self
            .ctx
            .services
            .store
            .spend(
                &caller.live_subject(),
                crate::model::Window::Day,
                crate::access::metering::day_start(now),
                limit,
            )
            .await?;
        Ok(spent.is_some())
    }

    async fn give_back(&self) {
        let now = self.ctx.services.now();
        if let Err(e) = self
            .ctx
            .services
            .store
            .refund(
                &self.ctx.caller.live_subject(),
                crate::model::Window::Day,
                crate::access::metering::day_start(now),
            )
            .await
        {
            tracing::warn!(error = %e, "live fetch refund failed");
        }
    }

    fn resets_at(&self) -> Millis {
        crate::access::metering::day_start(self.ctx.services.now()) + 86_400_000
    }
}

impl PlayerFacts {
    /// When the record of `endpoint` was last read for this player, scheduled or not: the
    /// profile's observation, or the newest battle-log read.
    pub async fn observed(
        &self,
        ctx: &ToolCtx,
        endpoint: PollEndpoint,
    ) -> Result<Option<Millis>, Fail> {
        let scheduled = self.last_read(endpoint);
        let recorded = match endpoint {
            PollEndpoint::Player => self.row.as_ref().and_then(|r| r.observed_at),
            PollEndpoint::Battlelog => ctx
                .services
                .store
                .log_read_before(self.tag.as_ref(), ctx.services.now() + 1)
                .await?
                .map(|r| r.read_at),
            PollEndpoint::Clan => None,
        };
        Ok(scheduled.max(recorded))
    }
}

/// `live: true` for one of the subject's endpoints: the lane's status after trying to make the
/// record live; the caller re-reads the record after it.
pub async fn go_live(
    ctx: &ToolCtx,
    tag: &Tag,
    endpoint: PollEndpoint,
    observed_at: Option<Millis>,
) -> Result<crate::recorder::live::LiveStatus, Fail> {
    Ok(ctx
        .services
        .live
        .refresh(endpoint, tag, observed_at, &CallerAllowance { ctx })
        .await?)
}

/// `live_pending`: a live read is under way and nothing is recorded yet.
pub fn live_pending(tag: &Tag, retry_after_s: i64) -> Fail {
    let mut error = ToolError::new(
        ErrorCode::LivePending,
        format!("The live read of {tag} is under way and nothing is recorded yet."),
        "Repeat the same call after retry_after_s.",
    );
    error.retry_after_s = Some(u64::try_from(retry_after_s.max(1)).unwrap_or(1));
    Fail::Tool(error)
}

/// The subject of a Player-tool call and what the record holds of them; `not_recorded` when
/// nothing is.
pub(crate) async fn recorded(ctx: &ToolCtx, a: &Map<String, Value>) -> Result<PlayerFacts, Fail> {
    let arg = blocks::player(a, ctx.caller.kind)?;
    let tag = resolve_player(ctx, &arg).await?;
    let facts = PlayerFacts::read(ctx, &tag).await?;
    if !facts.is_recorded() {
        return Err(facts.not_recorded());
    }
    Ok(facts)
}
