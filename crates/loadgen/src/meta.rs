//! `loadgen meta`: the benchmark of Elixir's heavy tools (docs/benchmarks.md, "Elixir meta
//! tools"). It fills a fresh database from cr-fake's generated world — every tracked player's
//! battle history from their own log (by default every opponent is tracked too, so each battle
//! arrives from both logs; `--opponents synthetic` keeps cr-fake's mix), each player's whole
//! history at once (a backfill) or in time order as a recorder reads it (`--order time`: each
//! player's log once per `--log-hours`); their profiles and the clans' member lists — through
//! the store's own ingest path, measuring ingest battles/s (on PostgreSQL with an `ANALYZE`
//! every 50 players, outside the measured time, as autovacuum would); then calls
//! `battles_meta_decks` and `battles_meta_cards` through the tool handlers (the spec, the
//! budget, the rollup; no HTTP) over the whole season's corpus and over one clan, and reports
//! p50/p95 and the process's peak RSS as JSON.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use clap::Args;
use cr_fake::render::{battle_json, clan_json, player_json};
use cr_fake::{World, WorldConfig};
use elixir::access::kinds::{Kind, OsRandom, Tier};
use elixir::app::{AppState, ServeConfig};
use elixir::mcp::call::{Fail, ToolCtx};
use elixir::recorder::ingest::{clan_rows, new_battles, observer_name, player_rows};
use elixir::services::{Caller, Credential};
use elixir::store::SharedStore;
use elixir_record::normalize::clan::ClanProfile;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::{Battle, Tag};
use mcp_door::FakeClock;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::procfs;

/// 2026-01-01T00:00:00Z: the world ends here, inside the season that began 2025-12-01 10:00Z.
const END: i64 = 1_767_225_600_000;
/// 2025-12-01T10:00:00Z: the season's start (the tools' default window).
const SEASON_START: i64 = 1_764_583_200_000;
/// Battles per battles_query page (compact).
const PAGE: usize = 50;
/// The battles_query page the deep-cursor case reads, or the last one.
const DEEP_PAGE: usize = 20;

#[derive(Debug, Args)]
pub struct MetaArgs {
    /// The database to fill (`sqlite://file.db` or `postgres://…`); it should be empty.
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// Tracked players of the generated world.
    #[arg(long, default_value_t = 2000)]
    players: u32,
    /// Tracked clans of the generated world (cr-fake's default, one per 45 players, when 0).
    #[arg(long, default_value_t = 200)]
    clans: u32,
    /// Days of history before 2026-01-01T00:00Z.
    #[arg(long, default_value_t = 31)]
    days: u32,
    /// The world's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Battles per ingest call (one transaction) at the most.
    #[arg(long, default_value_t = 250)]
    chunk: usize,
    /// The order battles reach the store: `player` (each player's whole history at once, a
    /// backfill) or `time` (as a recorder reads logs: every player's log read once per
    /// `--log-hours`, the history in time order).
    #[arg(long, value_enum, default_value_t = FillOrder::Player)]
    order: FillOrder,
    /// With `--order player`: logs stored at once (each ingest call its own transaction on
    /// its own pooled connection, as the recorders of several instances share a PostgreSQL;
    /// keep it at most `--pool`). Above 1 the measured time is each round's wall time, the
    /// logs' rendering and parsing included. SQLite has one writer: keep 1 there.
    #[arg(long, default_value_t = 1)]
    writers: usize,
    /// With `--order time`: the hours between two reads of one player's log.
    #[arg(long, default_value_t = 24)]
    log_hours: u32,
    /// Who the opponents are: `tracked` (every opponent and 2v2 partner is one of the
    /// world's tracked players, so each battle arrives from both logs and the ingest
    /// dedupes it, as the benchmark asks) or `synthetic` (cr-fake's default mix: most
    /// opponents have no log; every figure recorded before this flag).
    #[arg(long, value_enum, default_value_t = Opponents::Tracked)]
    opponents: Opponents,
    /// Calls per measured case.
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Pool size.
    #[arg(long, default_value_t = 4)]
    pool: u32,
    /// The heavy-query budget, in milliseconds (the server's default: 18000).
    #[arg(long, default_value_t = 18_000)]
    budget_ms: u64,
    /// Skip the fill (measure the queries on a database filled before).
    #[arg(long)]
    no_fill: bool,
}

/// Whether the world's opponents have logs of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Opponents {
    Tracked,
    Synthetic,
}

/// How the fill hands battles to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FillOrder {
    Time,
    Player,
}

impl FillOrder {
    fn as_str(self) -> &'static str {
        match self {
            Self::Time => "time",
            Self::Player => "player",
        }
    }
}

/// What the fill's ingest calls stored, and the seconds spent in them (rendering and parsing
/// the logs excluded).
#[derive(Debug, Default)]
struct Ingest {
    observations: usize,
    battles: usize,
    seconds: f64,
    calls: usize,
    /// PostgreSQL: a connection for the `ANALYZE` that autovacuum would run as the tables
    /// grow (see [`Ingest::maintain`]).
    analyzer: Option<sqlkit::Db>,
}

impl Ingest {
    /// One log read of `player`: `battles` (world indices, ascending), parsed, then stored in
    /// calls of at most `chunk`, read at `read_at`.
    async fn log(
        &mut self,
        world: &World,
        store: &SharedStore,
        player: u32,
        battles: &[u32],
        chunk: usize,
        read_at: i64,
    ) -> anyhow::Result<()> {
        if battles.is_empty() {
            return Ok(());
        }
        let p = &world.players()[player as usize];
        let tag = Tag::parse(&p.tag).map_err(|e| anyhow!("{e}"))?;
        let parsed: Vec<Battle> = battles
            .iter()
            .map(|&b| &world.battles()[b as usize])
            .filter_map(|b| battle_json(world, b, player))
            .map(|j| Battle::from_upstream(&j).map_err(|e| anyhow!("{e}")))
            .collect::<Result<_, _>>()?;
        let rows = new_battles(&tag, &parsed)?;
        let name = observer_name(&tag, &parsed);
        let timed = Instant::now();
        for part in rows.chunks(chunk.max(1)) {
            let done = store.ingest_battles(&p.tag, name, read_at, part).await?;
            self.observations += done.new_observations;
            self.battles += done.new_battles;
            self.calls += 1;
        }
        self.seconds += timed.elapsed().as_secs_f64();
        Ok(())
    }

    /// On PostgreSQL, `ANALYZE` (outside the measured time), as autovacuum does on a
    /// production server when a table has grown by a tenth: this machine's server runs with
    /// `autovacuum = off`, and a plan cached while the tables were nearly empty (a sequential
    /// scan of the observations) otherwise stays in use for the whole fill.
    async fn maintain(&self) -> anyhow::Result<()> {
        if let Some(db) = &self.analyzer {
            sqlkit::sql("ANALYZE").execute(db).await?;
        }
        Ok(())
    }

    fn progress(&self, label: &str) {
        eprintln!(
            "{label}: {} observations, {} battles, {:.0} battles/s",
            self.observations,
            self.battles,
            self.battles as f64 / self.seconds.max(1e-9)
        );
    }
}

/// Every player's whole history in one log (a backfill), player after player, in rounds of
/// 50 players with the `ANALYZE` between rounds. With `writers` above 1, that many logs are in
/// flight at once (each ingest call its own transaction on its own pooled connection, as the
/// recorders of several instances share one PostgreSQL), and a round's measured time is its
/// wall time, the rendering and parsing of its logs included.
async fn fill_by_player(
    world: &World,
    store: &SharedStore,
    chunk: usize,
    writers: usize,
    mut ingest: Ingest,
) -> anyhow::Result<Ingest> {
    const ROUND: u32 = 50;
    let players = u32::try_from(world.players().len())?;
    let mut from = 0;
    while from < players {
        let to = (from + ROUND).min(players);
        if writers <= 1 {
            for index in from..to {
                ingest
                    .log(world, store, index, world.battles_of(index), chunk, END)
                    .await?;
            }
        } else {
            let next = AtomicU32::new(from);
            let lane = || async {
                let mut lane = Ingest::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= to {
                        return Ok::<_, anyhow::Error>(lane);
                    }
                    lane.log(world, store, index, world.battles_of(index), chunk, END)
                        .await?;
                }
            };
            let timed = Instant::now();
            let lanes = futures::future::try_join_all((0..writers).map(|_| lane())).await?;
            ingest.seconds += timed.elapsed().as_secs_f64();
            for lane in lanes {
                ingest.observations += lane.observations;
                ingest.battles += lane.battles;
                ingest.calls += lane.calls;
            }
        }
        if to % 200 == 0 {
            ingest.progress(&format!("{to} players"));
        }
        ingest.maintain().await?;
        from = to;
    }
    Ok(ingest)
}

/// The history as a recorder meets it: rounds of `log_hours`, each reading every player's
/// battles of that stretch, oldest round first.
async fn fill_by_time(
    world: &World,
    store: &SharedStore,
    chunk: usize,
    log_hours: u32,
    mut ingest: Ingest,
) -> anyhow::Result<Ingest> {
    let step = i64::from(log_hours.max(1)) * 3_600_000;
    let start = world.config().start_millis();
    // each player's next unread battle (an index into battles_of)
    let mut next = vec![0usize; world.players().len()];
    let mut round_end = start + step;
    while round_end < END + step {
        let read_at = round_end.min(END);
        for (i, cursor) in next.iter_mut().enumerate() {
            let index = u32::try_from(i)?;
            let all = world.battles_of(index);
            let upto = *cursor
                + all[*cursor..]
                    .iter()
                    .take_while(|&&b| world.battles()[b as usize].time_millis() < read_at)
                    .count();
            ingest
                .log(world, store, index, &all[*cursor..upto], chunk, read_at)
                .await?;
            *cursor = upto;
        }
        ingest.progress(&format!("read at {}", elixir::domain::iso(read_at)));
        ingest.maintain().await?;
        round_end += step;
    }
    Ok(ingest)
}

/// Nearest-rank percentile of sorted milliseconds.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

pub async fn run(args: MetaArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut world_config = WorldConfig::new(args.seed, args.players, args.days, END);
    if args.clans > 0 {
        world_config = world_config.with_clans(args.clans);
    }
    if args.opponents == Opponents::Tracked {
        world_config = world_config.with_tracked_opponents();
    }
    let world = World::generate(world_config).map_err(|e| anyhow!("{e}"))?;
    let generated_s = started.elapsed().as_secs_f64();
    eprintln!(
        "world: {} players, {} clans, {} battles in {generated_s:.1} s",
        world.players().len(),
        world.clans().len(),
        world.battles().len()
    );
    let mut config = ServeConfig::default();
    config.server.database_url = args.database_url.clone();
    config.server.db.max_connections = args.pool;
    config.server.db.statement_timeout = Duration::from_secs(120);
    let store = elixir::store::connect(&args.database_url, &config.server.db)
        .await
        .context("connect")?;
    store.migrate().await.context("migrate")?;
    let start = world.config().start_millis();

    let mut fill = json!(null);
    if !args.no_fill {
        let t = Instant::now();
        for i in 0..world.clans().len() {
            let index = u32::try_from(i)?;
            let Some(json) = clan_json(&world, index, start) else {
                continue;
            };
            let read = ClanProfile::from_upstream(json.to_string().as_bytes())?;
            let (row, members) = clan_rows(&read.profile, start)?;
            store.put_clan(&row, &members, start).await?;
        }
        let analyzer = match sqlkit::backend_of(&args.database_url) {
            sqlkit::Backend::Postgres => Some(
                sqlkit::Db::open(&args.database_url, &config.server.db)
                    .await
                    .context("connect the analyzer")?,
            ),
            sqlkit::Backend::Sqlite => None,
        };
        let ingest = Ingest {
            analyzer,
            ..Ingest::default()
        };
        let ingest = match args.order {
            FillOrder::Player => {
                fill_by_player(&world, &store, args.chunk, args.writers, ingest).await?
            }
            FillOrder::Time => {
                fill_by_time(&world, &store, args.chunk, args.log_hours, ingest).await?
            }
        };
        for i in 0..world.players().len() {
            let index = u32::try_from(i)?;
            let profile = player_json(&world, index, END).context("profile")?;
            let read = PlayerProfile::from_upstream(profile.to_string().as_bytes())?;
            let (row, snapshot) = player_rows(&read.profile, END)?;
            store.put_player(&row, &snapshot).await?;
        }
        let Ingest {
            observations,
            battles: new_battles_total,
            seconds: ingest_s,
            calls,
            ..
        } = ingest;
        fill = json!({
            "battles": new_battles_total,
            "observations": observations,
            "ingest_seconds": round(ingest_s),
            "battles_per_s": round(new_battles_total as f64 / ingest_s),
            "observations_per_s": round(observations as f64 / ingest_s),
            "order": args.order.as_str(),
            "writers": args.writers,
            "opponents": format!("{:?}", args.opponents).to_lowercase(),
            "ingest_calls": calls,
            "fill_seconds": round(t.elapsed().as_secs_f64()),
        });
        eprintln!("fill: {fill}");
    }

    config.settings.heavy_query_budget = Duration::from_millis(args.budget_ms);
    let state = AppState::new(
        Arc::clone(&store),
        &config,
        Arc::new(FakeClock::new(END)),
        Arc::new(OsRandom),
    )
    .await?;
    let caller = Caller {
        kind: Kind::Person,
        account_id: Uuid::nil(),
        agent: None,
        tier: Tier::Admin,
        timezone: "UTC".into(),
        primary_player_tag: None,
        credential: Credential::OAuth,
        pending_responses: 0,
    };
    let specs = elixir::tools::registry();
    // the clan with the most members, as recorded
    let clan = world
        .clans()
        .iter()
        .enumerate()
        .max_by_key(|(i, _)| {
            world
                .memberships()
                .iter()
                .filter(|m| m.clan as usize == *i && m.covers(start))
                .count()
        })
        .map(|(_, c)| c.tag.clone())
        .context("no clan")?;
    // the tracked player with the most battles in the season
    let busy = world
        .players()
        .iter()
        .enumerate()
        .max_by_key(|(i, _)| {
            world
                .battles_of(u32::try_from(*i).unwrap_or(0))
                .iter()
                .filter(|&&b| world.battles()[b as usize].time_millis() >= SEASON_START)
                .count()
        })
        .map(|(_, p)| p.tag.clone())
        .context("no player")?;
    let bench = Bench {
        state: &state,
        caller: &caller,
        specs: &specs,
        runs: args.runs,
    };
    let mut cases = Vec::new();
    for tool in ["battles_meta_decks", "battles_meta_cards"] {
        for (label, segment) in [
            ("season corpus", json!("corpus")),
            ("season one clan", json!({"clan_tag": clan})),
        ] {
            cases.push(bench.case(tool, label, json!({"segment": segment})).await?);
        }
    }
    let player = json!({"player_tag": busy});
    for tool in ["players_summary", "battles_performance", "battles_decks"] {
        cases.push(bench.case(tool, "busy player", player.clone()).await?);
    }
    // compact: a full-size page of 25 is over the result cap (docs/elixir.md, "Not yet")
    let first = json!({"player_tag": busy, "limit": PAGE, "verbosity": "compact"});
    cases.push(
        bench
            .case("battles_query", "first page", first.clone())
            .await?,
    );
    let (depth, cursor) = bench.walk(&first, DEEP_PAGE).await?;
    let mut deep = first.clone();
    deep["cursor"] = json!(cursor);
    let mut case = bench
        .case("battles_query", &format!("page {depth} (cursor)"), deep)
        .await?;
    case["battles_before_page"] = json!((depth - 1) * PAGE);
    cases.push(case);
    let pid = std::process::id();
    let report = json!({
        "backend": if args.database_url.starts_with("postgres") { "postgres" } else { "sqlite" },
        "world": {
            "players": world.players().len(),
            "busy_player": busy,
            "clans": world.clans().len(),
            "battles_generated": world.battles().len(),
            "days": args.days,
            "generate_seconds": round(generated_s),
        },
        "fill": fill,
        "queries": cases,
        "peak_rss_mb": procfs::status_kb(pid, "VmHWM").map(|kb| round(kb as f64 / 1024.0)),
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// The tool calls of the measured cases: one caller, the tools' handlers.
struct Bench<'a> {
    state: &'a AppState,
    caller: &'a Caller,
    specs: &'a [elixir::mcp::spec::ToolSpec],
    runs: usize,
}

impl Bench<'_> {
    fn ctx(&self) -> ToolCtx {
        ToolCtx {
            catalogue: None,
            services: Arc::clone(&self.state.services),
            caller: self.caller.clone(),
            request_id: Uuid::nil(),
        }
    }

    fn spec(&self, tool: &str) -> anyhow::Result<&elixir::mcp::spec::ToolSpec> {
        self.specs
            .iter()
            .find(|s| s.name == tool)
            .with_context(|| format!("{tool} is not registered"))
    }

    /// One call's answer as a client sees its structured content.
    async fn answer(&self, tool: &str, arguments: &Value) -> anyhow::Result<Value> {
        let map = arguments.as_object().cloned().unwrap_or_default();
        match (self.spec(tool)?.handler)(self.ctx(), map).await {
            Ok(success) => {
                let meta = elixir::mcp::call::base_meta(&self.state.services, Uuid::nil());
                elixir::mcp::call::success_body(success, meta, "x")
                    .map_err(|e| anyhow!("{tool}: {e}"))
            }
            Err(Fail::Tool(e)) => Err(anyhow!("{tool}: {}", e.to_json())),
            Err(other) => Err(anyhow!("{tool}: {other:?}")),
        }
    }

    /// Follows battles_query's cursor from `first` to page `pages` (or the last page):
    /// `(the page reached, its cursor)`.
    async fn walk(&self, first: &Value, pages: usize) -> anyhow::Result<(usize, String)> {
        let mut arguments = first.clone();
        let mut reached = None;
        for page in 2..=pages {
            let answer = self.answer("battles_query", &arguments).await?;
            let Some(cursor) = answer["next_cursor"].as_str() else {
                break;
            };
            reached = Some((page, cursor.to_owned()));
            arguments["cursor"] = json!(cursor);
        }
        reached.context("the busy player's battles fill one page only")
    }

    /// `runs` timed calls of `tool` with `arguments` after one unmeasured warm-up:
    /// p50/p95/max, and the answer's population and total when it has them.
    async fn case(&self, tool: &str, label: &str, arguments: Value) -> anyhow::Result<Value> {
        let spec = self.spec(tool)?;
        let map = arguments.as_object().cloned().unwrap_or_default();
        let mut ms = Vec::with_capacity(self.runs);
        let mut timeouts = 0usize;
        // one unmeasured call warms the caches, as a server's first minutes would
        let answer = self.answer(tool, &arguments).await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) if e.to_string().contains("query_timeout") => {
                eprintln!("{tool} {label}: query_timeout on the warm-up call");
                timeouts += 1;
                Value::Null
            }
            Err(e) => return Err(e),
        };
        for _ in 0..self.runs {
            let t = Instant::now();
            let outcome = (spec.handler)(self.ctx(), map.clone()).await;
            let elapsed = t.elapsed().as_secs_f64() * 1000.0;
            match outcome {
                Ok(_) => ms.push(elapsed),
                // a spent budget is a result of the benchmark, not a failure of it
                Err(Fail::Tool(e)) if e.code.as_str() == "query_timeout" => {
                    timeouts += 1;
                    ms.push(elapsed);
                    eprintln!("{tool} {label}: query_timeout after {elapsed:.0} ms");
                    if timeouts >= 3 {
                        break;
                    }
                }
                Err(Fail::Tool(e)) => return Err(anyhow!("{tool} {label}: {}", e.to_json())),
                Err(other) => return Err(anyhow!("{tool} {label}: {other:?}")),
            }
        }
        ms.sort_by(f64::total_cmp);
        let case = json!({
            "tool": tool,
            "case": label,
            "p50_ms": round(percentile(&ms, 50.0)),
            "p95_ms": round(percentile(&ms, 95.0)),
            "max_ms": round(ms.last().copied().unwrap_or(0.0)),
            "query_timeouts": timeouts,
            "population": answer["population"],
            "total": answer["total"],
        });
        eprintln!("{case}");
        Ok(case)
    }
}
