//! The recorder against the fake Clash Royale API, under the test's clock, on both backends:
//! tracked players are read once per due row and stored idempotently (one battle seen in two
//! logs is one row), the next read follows the cadence, a 404 holds the subject, 429 and 503
//! pause without charging the subject a failure, a long silence shows as a coverage gap, and
//! two recorders on one database never read one subject twice.

use std::collections::HashSet;
use std::sync::Arc;

use elixir::model::{PollEndpoint, Principal, Relationship, TrackPlayer};
use elixir::recorder::{PollSettings, Poller};
use elixir::store::{BattleQuery, SharedStore};
use elixir::upstream::{Upstream, UpstreamConfig};
use mcp_door::Clock;
use testkit::cr_api::{FakeCrApi, World, WorldConfig};
use testkit::db::TempDir;

use crate::on_both_backends;
use crate::support::{Server, T0, spawn};

const HOUR: i64 = 3_600_000;

struct Rig {
    server: Server,
    api: FakeCrApi,
    world: Arc<World>,
    _archive: TempDir,
    archive_path: std::path::PathBuf,
}

async fn rig(url: &str, players: u32) -> Rig {
    let server = spawn(url).await;
    let world =
        Arc::new(World::generate(WorldConfig::new(11, players, 3, T0 + 2 * 24 * HOUR)).unwrap());
    let api = FakeCrApi::start(Arc::clone(&world), server.clock.clone())
        .await
        .unwrap();
    let archive = TempDir::new("recorder");
    let archive_path = archive.path().to_owned();
    Rig {
        server,
        api,
        world,
        _archive: archive,
        archive_path,
    }
}

impl Rig {
    fn poller(&self, store: &SharedStore, owner: &str) -> Poller {
        let config = UpstreamConfig {
            base_url: self.api.base_url(),
            archive_dir: self.archive_path.clone(),
            ..UpstreamConfig::new(FakeCrApi::TOKEN)
        };
        Poller {
            upstream: Arc::new(
                Upstream::new(
                    &config,
                    Arc::clone(store),
                    Arc::new(self.server.clock.clone()),
                )
                .unwrap(),
            ),
            store: Arc::clone(store),
            clock: Arc::new(self.server.clock.clone()),
            owner: owner.into(),
            settings: PollSettings::default(),
        }
    }

    async fn track(&self, index: usize) -> String {
        let tag = self.world.players()[index].tag.clone();
        self.server
            .store
            .track_player(&TrackPlayer {
                account_id: self.server.person.id,
                principal: Principal::Person,
                player_tag: tag.clone(),
                relationship: Relationship::Watching,
                max_players: None,
                at: self.server.clock.now_millis(),
            })
            .await
            .unwrap();
        tag
    }

    /// The battle ids the fake's log of `tag` shows at the clock's now.
    fn log_ids(&self, tag: &str) -> Vec<String> {
        let index = self.world.player_index(tag).unwrap();
        let now = self.server.clock.now_millis();
        let json = testkit::cr_api::render::battlelog_json(&self.world, index, now);
        elixir_record::Battle::from_battlelog(json.to_string().as_bytes())
            .unwrap()
            .battles
            .into_iter()
            .map(|b| b.battle_id)
            .collect()
    }
}

async fn tracked_players_are_read_and_stored_once(url: &str) {
    let rig = rig(url, 12).await;
    let store = &rig.server.store;
    // Two players who met: the first battle of player 0 against a generated tracked player.
    let a = rig.track(0).await;
    let b = rig.track(1).await;
    let poller = rig.poller(store, "r1");
    let pass = poller.pass(50).await.unwrap();
    assert_eq!(
        (pass.read, pass.failed, pass.throttled),
        (4, 0, 0),
        "{pass:?}"
    );
    let mut expected: HashSet<String> = rig.log_ids(&a).into_iter().collect();
    assert_eq!(
        store
            .count_battles(&a, &BattleQuery::default())
            .await
            .unwrap(),
        expected.len() as i64
    );
    expected.extend(rig.log_ids(&b));
    assert_eq!(
        store
            .corpus_counts(rig.server.clock.now_millis())
            .await
            .unwrap()
            .battles,
        expected.len() as i64,
        "a battle in both logs is one row"
    );
    assert!(store.player(&a).await.unwrap().unwrap().profile.is_some());
    // Nothing is due right after: the next reads follow the cadence.
    let now = rig.server.clock.now_millis();
    for poll in store.polls_of(&a).await.unwrap() {
        assert!(poll.next_at > now, "{poll:?}");
        assert_eq!(poll.last_status, Some(200));
        assert!(!poll.reason.is_empty());
    }
    assert_eq!(poller.pass(50).await.unwrap().read, 0);
    // Hours later the logs are read again; what was stored is not stored twice.
    rig.server.clock.advance_millis(6 * HOUR);
    let again = poller.pass(50).await.unwrap();
    assert!(again.read >= 2, "{again:?}");
    let mut all: HashSet<String> = expected;
    all.extend(rig.log_ids(&a));
    all.extend(rig.log_ids(&b));
    assert_eq!(
        store
            .corpus_counts(rig.server.clock.now_millis())
            .await
            .unwrap()
            .battles,
        all.len() as i64
    );
}

async fn failures_holds_and_pauses(url: &str) {
    let rig = rig(url, 6).await;
    let store = &rig.server.store;
    let a = rig.track(0).await;
    let poller = rig.poller(store, "r1");
    // 429: the budget pauses; the subject keeps its counters and stays due after the pause.
    rig.api.throttle(Some(30));
    let pass = poller.pass(50).await.unwrap();
    assert_eq!((pass.read, pass.throttled), (0, 1), "{pass:?}");
    let polls = store.polls_of(&a).await.unwrap();
    assert!(polls.iter().all(|p| p.failures == 0), "{polls:?}");
    let paused = polls.iter().map(|p| p.next_at).max().unwrap();
    assert!(
        paused >= rig.server.clock.now_millis() + 30_000 - 1_000,
        "{polls:?}"
    );
    rig.api.clear_fault();
    rig.server.clock.advance_millis(31_000);
    assert_eq!(poller.pass(50).await.unwrap().read, 2);
    // A 404 holds the subject for a day and marks it not found.
    let b = rig.track(1).await;
    rig.api.not_found_for(&b);
    rig.server.clock.advance_millis(10_000);
    let pass = poller.pass(50).await.unwrap();
    assert_eq!(pass.failed, 2, "{pass:?}");
    let held = store.polls_of(&b).await.unwrap();
    let now = rig.server.clock.now_millis();
    assert!(
        held.iter()
            .all(|p| p.not_found && p.held_until.unwrap() >= now + 23 * HOUR),
        "{held:?}"
    );
    // 503 maintenance pauses too.
    rig.api.found_again(&b);
    rig.api.maintenance();
    rig.server.clock.advance_millis(25 * HOUR);
    let pass = poller.pass(50).await.unwrap();
    assert_eq!(pass.throttled, 1, "{pass:?}");
}

async fn a_long_silence_is_a_coverage_gap(url: &str) {
    let rig = rig(url, 8).await;
    let store = &rig.server.store;
    // The most active player fills 30 battles fastest.
    let index = (0..rig.world.players().len())
        .max_by_key(|i| rig.world.battles_of(*i as u32).len())
        .unwrap();
    let tag = rig.track(index).await;
    let poller = rig.poller(store, "r1");
    poller.pass(50).await.unwrap();
    // Two days without a read: the next log is all new.
    rig.server.clock.advance_millis(2 * 24 * HOUR);
    poller.pass(50).await.unwrap();
    let gaps = store
        .gaps(&tag, T0 - 10 * 24 * HOUR, T0 + 10 * 24 * HOUR)
        .await
        .unwrap();
    // Both rules see it: every entry of the log was new, and battleCount rose by more than
    // the battles recorded between the two profile reads.
    let reasons: Vec<&str> = gaps.iter().map(|g| g.reason.as_str()).collect();
    assert_eq!(reasons, vec!["log_overflow", "battle_count"], "{gaps:?}");
    assert!(gaps.iter().all(|g| g.from_at < g.to_at));
    let overflow = &gaps[0];
    let recorded = store.battles(&tag, &BattleQuery::default()).await.unwrap();
    assert!(
        !recorded
            .iter()
            .any(|b| b.battle_time > overflow.from_at && b.battle_time < overflow.to_at),
        "the unknown interval is open between the last recorded battle and the oldest fetched"
    );
}

async fn two_recorders_never_read_one_subject_twice(url: &str) {
    let rig = rig(url, 20).await;
    let store = &rig.server.store;
    for i in 0..10 {
        rig.track(i).await;
    }
    let second = {
        let s = elixir::store::connect(url, &elixir::app::ServeConfig::default().server.db)
            .await
            .unwrap();
        s.migrate().await.unwrap();
        s
    };
    let one = rig.poller(store, "r1");
    let two = rig.poller(&second, "r2");
    let (x, y) = tokio::join!(one.pass(50), two.pass(50));
    let (x, y) = (x.unwrap(), y.unwrap());
    let received = rig.api.received();
    let paths: Vec<String> = received.iter().map(|r| r.path.clone()).collect();
    let unique: HashSet<&String> = paths.iter().collect();
    assert_eq!(paths.len(), unique.len(), "a subject read twice: {paths:?}");
    // Each budget's burst limits a pass; together they read without overlap.
    assert_eq!(x.read + y.read, paths.len(), "{x:?} {y:?}");
    let _ = PollEndpoint::Battlelog;
}

/// Two instances on one database spend one budget: with the clock still, the recorder lane's
/// burst of five is all the two of them get, in a parallel burst of twenty reads.
async fn the_budget_is_shared_by_instances(url: &str) {
    let rig = rig(url, 2).await;
    let second = elixir::store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    let one = rig.poller(&rig.server.store, "a").upstream;
    let two = rig.poller(&second, "b").upstream;
    let mut reads = Vec::new();
    for i in 0..20 {
        let upstream = if i % 2 == 0 {
            Arc::clone(&one)
        } else {
            Arc::clone(&two)
        };
        reads.push(tokio::spawn(async move {
            upstream
                .fetch(
                    elixir::upstream::Lane::Recorder,
                    &elixir::upstream::Endpoint::Cards,
                )
                .await
        }));
    }
    let mut admitted = 0;
    let mut refused = 0;
    for read in reads {
        match read.await.unwrap() {
            Ok(_) => admitted += 1,
            Err(elixir::upstream::UpstreamError::Throttled { .. }) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((admitted, refused), (5, 15));
    assert_eq!(rig.api.requests("/v1/cards"), 5, "nothing refused was sent");
}

on_both_backends!(
    the_budget_is_shared_by_instances,
    tracked_players_are_read_and_stored_once,
    failures_holds_and_pauses,
    a_long_silence_is_a_coverage_gap,
    two_recorders_never_read_one_subject_twice,
);

/// A battle read from two logs: when the logs agree on it, the second log's views hold the
/// first log's body exactly, so the store's re-sighting compares strings instead of parsing
/// both bodies (store/record.rs); for every mode the world plays (2v2 partners and duels
/// included). The fake reports the arena of the log's owner, so some logs disagree.
#[test]
fn a_second_log_shows_the_first_logs_body_among_its_views() {
    use elixir_record::{Battle, Tag};
    use std::collections::HashMap;
    let world =
        World::generate(WorldConfig::new(11, 40, 3, T0 + 2 * 24 * HOUR).with_tracked_opponents())
            .unwrap();
    let now = T0 + 2 * 24 * HOUR;
    // battle id -> (first observer, body)
    let mut first: HashMap<String, (Tag, String)> = HashMap::new();
    let (mut agreed, mut matched) = (0, 0);
    for (index, player) in world.players().iter().enumerate() {
        let json = testkit::cr_api::render::battlelog_json(&world, index as u32, now);
        let log = Battle::from_battlelog(json.to_string().as_bytes()).unwrap();
        let observer = Tag::parse(&player.tag).unwrap();
        let rows = elixir::recorder::ingest::new_battles(&observer, &log.battles).unwrap();
        for (battle, b) in log.battles.iter().zip(rows) {
            assert!(
                !b.views.contains(&b.body),
                "a view is another participant's"
            );
            let Some((by, body)) = first.get(&b.battle_id) else {
                first.insert(b.battle_id.clone(), (observer.clone(), b.body));
                continue;
            };
            let stored: Battle = serde_json::from_str(body).unwrap();
            if stored == battle.clone().turned_to(by) {
                agreed += 1;
                matched += usize::from(b.views.contains(body));
            } else {
                assert!(!b.views.contains(body));
            }
        }
    }
    assert!(agreed > 100, "the world's logs share battles: {agreed}");
    assert_eq!(matched, agreed, "every agreeing re-sighting matches a view");
}
