//! `elixir demo`: records a generated clan of 30 players over the last 60 days into the
//! configured database, through the real recorder (schedule, leases, normalization, archive)
//! reading a fake Clash Royale API that serves the generated world on a loopback port and a
//! clock the demo walks through the days. It creates the demo account (leader tier, tracking
//! the clan comprehensively, its leader as primary) and an agent door bound to the clan, and
//! returns what `cli` prints: how to sign in and how to connect an MCP client.

use std::sync::Arc;

use cr_fake::{FakeCrApi, World, WorldConfig};
use mcp_door::{Clock, FakeClock};

use crate::access::kinds::{Kind, Random, Tier};
use crate::admin;
use crate::domain::{Millis, iso};
use crate::model::{ClanScope, Principal, Relationship, TrackClan, TrackPlayer};
use crate::recorder::{PollSettings, Poller};
use crate::store::SharedStore;
use crate::upstream::{BudgetConfig, UpstreamConfig};

/// The demo account's email (sign in with it; codes go to the mail outbox or SMTP).
pub const DEMO_EMAIL: &str = "demo@elixir.example";
/// Days recorded.
pub const DAYS: u32 = 60;
/// Players generated (one clan).
pub const PLAYERS: u32 = 30;
const STEP_MS: Millis = 6 * 3_600_000;
const DAY_MS: Millis = 24 * 3_600_000;

/// What the demo recorded.
#[derive(Debug, Clone)]
pub struct Demo {
    pub clan_tag: String,
    pub clan_name: String,
    pub primary_tag: String,
    pub battles: i64,
    pub players: i64,
    pub agent_public_id: String,
    pub service_key: String,
}

/// A failed demo.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DemoError {
    #[error(
        "the demo account {DEMO_EMAIL} exists already: the demo records once per database (start from a fresh --database-url)"
    )]
    AlreadyRecorded,
    #[error("generating the world: {0}")]
    World(String),
    #[error("the fake API: {0}")]
    Api(String),
    #[error(transparent)]
    Admin(#[from] admin::AdminError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Upstream(#[from] crate::upstream::UpstreamError),
}

/// Records the demo over `days` days (the CLI uses [`DAYS`]); `progress` gets one line per
/// day.
pub async fn record(
    days: u32,
    store: &SharedStore,
    clock: &dyn Clock,
    random: &dyn Random,
    archive_dir: &std::path::Path,
    mut progress: impl FnMut(String),
) -> Result<Demo, DemoError> {
    if store.account_by_email(DEMO_EMAIL).await?.is_some() {
        return Err(DemoError::AlreadyRecorded);
    }
    let now = clock.now_millis();
    let world = Arc::new(
        World::generate(WorldConfig::new(2026, PLAYERS, days, now))
            .map_err(|e| DemoError::World(e.to_string()))?,
    );
    let start = world.config().start_millis();
    let walk = FakeClock::new(start);
    let api = FakeCrApi::start(Arc::clone(&world), walk.clone())
        .await
        .map_err(|e| DemoError::Api(e.to_string()))?;
    let clan = world
        .clans()
        .first()
        .ok_or_else(|| DemoError::World("the world has no clan".into()))?
        .clone();
    let leader = world
        .members_at(0, start)
        .into_iter()
        .find(|m| m.role.as_str() == "leader")
        .and_then(|m| world.players().get(m.player as usize))
        .or_else(|| world.players().first())
        .map(|p| p.tag.clone())
        .ok_or_else(|| DemoError::World("the world has no player".into()))?;

    let account =
        admin::create_account(store, random, start, Some(DEMO_EMAIL), Tier::Leader).await?;
    store
        .track_clan(&TrackClan {
            account_id: account.id,
            principal: Principal::Person,
            clan_tag: clan.tag.clone(),
            scope: ClanScope::Comprehensive,
            max_of_scope: None,
            at: start,
        })
        .await?;
    store
        .track_player(&TrackPlayer {
            account_id: account.id,
            principal: Principal::Person,
            player_tag: leader.clone(),
            relationship: Relationship::Primary,
            max_players: None,
            at: start,
        })
        .await?;

    // A local fake needs no courtesy: the budget only has to keep up.
    let config = UpstreamConfig {
        base_url: api.base_url(),
        archive_dir: archive_dir.to_owned(),
        budget: BudgetConfig {
            recorder_milli_per_s: 1_000_000,
            recorder_burst: 100_000,
            ..BudgetConfig::default()
        },
        ..UpstreamConfig::new(FakeCrApi::TOKEN)
    };
    let walk_clock: Arc<dyn Clock> = Arc::new(walk.clone());
    let poller = Poller::over(
        &config,
        Arc::clone(store),
        walk_clock,
        "demo",
        PollSettings::default(),
    )?;
    for day in 0..days {
        let day_start = start + Millis::from(day) * DAY_MS;
        let mut at = day_start;
        while at < day_start + DAY_MS && at <= now {
            walk.set_millis(at);
            loop {
                let pass = poller.pass(500).await?;
                if pass.read + pass.failed == 0 || pass.throttled > 0 {
                    break;
                }
            }
            at += STEP_MS;
        }
        let counts = store.corpus_counts(at).await?;
        progress(format!(
            "day {:>2}/{days} {}: {} battles, {} players recorded",
            day + 1,
            &iso(day_start)[..10],
            counts.battles,
            counts.players_recorded
        ));
    }
    let issued =
        admin::create_agent(store, random, now, account.id, "demo agent", Kind::Agent).await?;
    store
        .set_agent_clan(issued.agent.id, Some(&clan.tag))
        .await?;
    let counts = store.corpus_counts(now).await?;
    Ok(Demo {
        clan_tag: clan.tag,
        clan_name: clan.name,
        primary_tag: leader,
        battles: counts.battles,
        players: counts.players_recorded,
        agent_public_id: issued.agent.public_id,
        service_key: issued.service_key,
    })
}
