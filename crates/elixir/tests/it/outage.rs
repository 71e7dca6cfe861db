//! The recorder through a database outage, without a restart, on both backends: PostgreSQL
//! stopped (the proxy cut) or silent (a black hole), SQLite locked by another connection.
//! While the fault lasts a pass fails promptly and reads nothing upstream, and a read already
//! in flight waits to be recorded instead of being lost or left leased; once the fault ends
//! the next pass reads every row that was due, none charged a failure, none skipped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use elixir::model::{Principal, Relationship, TrackPlayer};
use elixir::recorder::{PollSettings, Poller};
use elixir::store::SharedStore;
use elixir::upstream::{Upstream, UpstreamConfig};
use mcp_door::Clock;
use sqlkit::PoolSettings;
use testkit::cr_api::{FakeCrApi, World, WorldConfig};
use testkit::db::TempDir;
use testkit::proxy::Proxy;

use crate::support::{Server, T0, spawn};

const HOUR: i64 = 3_600_000;

/// A pass during the fault fails within this (the poller's store waits 1 s for PostgreSQL,
/// 300 ms for a SQLite lock; the rest is slack for a loaded machine).
const REFUSED_WITHIN: Duration = Duration::from_secs(4);

/// The pool of the recorder's own store: short waits, so a fault shows within a second.
const SHORT: PoolSettings = PoolSettings {
    max_connections: 4,
    acquire_timeout: Duration::from_secs(1),
    statement_timeout: Duration::from_millis(300),
    lock_timeout: Duration::from_millis(300),
    query_timeout: Duration::from_secs(1),
    sqlite_cache_kib: sqlkit::SQLITE_DEFAULT_CACHE_KIB,
};

/// A database fault a test stages and ends.
enum Fault {
    Proxy {
        proxy: Proxy,
        black_hole: bool,
    },
    Locked {
        url: String,
        holder: Option<sqlx::SqliteConnection>,
    },
}

impl Fault {
    fn name(&self) -> &'static str {
        match self {
            Fault::Proxy {
                black_hole: false, ..
            } => "postgres cut",
            Fault::Proxy {
                black_hole: true, ..
            } => "postgres black hole",
            Fault::Locked { .. } => "sqlite locked",
        }
    }

    async fn begin(&mut self) {
        match self {
            Fault::Proxy { proxy, black_hole } => {
                if *black_hole {
                    proxy.black_hole().await;
                } else {
                    proxy.cut().await;
                }
            }
            Fault::Locked { url, holder } => {
                use sqlx::{ConnectOptions, Executor};
                let options: sqlx::sqlite::SqliteConnectOptions = url.parse().unwrap();
                let mut conn = options
                    .busy_timeout(Duration::from_secs(10))
                    .connect()
                    .await
                    .unwrap();
                conn.execute("BEGIN EXCLUSIVE").await.unwrap();
                *holder = Some(conn);
            }
        }
    }

    async fn end(&mut self) {
        match self {
            Fault::Proxy { proxy, .. } => proxy.resume().await,
            Fault::Locked { holder, .. } => {
                use sqlx::{Connection, Executor};
                let mut conn = holder.take().unwrap();
                conn.execute("ROLLBACK").await.unwrap();
                conn.close().await.unwrap();
            }
        }
    }
}

struct Rig {
    server: Server,
    api: FakeCrApi,
    world: Arc<World>,
    /// The recorder, on its own store (the one the fault hits).
    poller: Arc<Poller>,
    _archive: TempDir,
}

/// A server on `url` (for setup and checks) and a recorder whose store goes through
/// `recorder_url` with [`SHORT`] waits.
async fn rig(url: &str, recorder_url: &str) -> Rig {
    let server = spawn(url).await;
    let world = Arc::new(World::generate(WorldConfig::new(11, 12, 3, T0 + 2 * 24 * HOUR)).unwrap());
    let api = FakeCrApi::start(Arc::clone(&world), server.clock.clone())
        .await
        .unwrap();
    let archive = TempDir::new("outage-archive");
    let store: SharedStore = elixir::store::connect(recorder_url, &SHORT).await.unwrap();
    let config = UpstreamConfig {
        base_url: api.base_url(),
        archive_dir: archive.path().to_owned(),
        ..UpstreamConfig::new(FakeCrApi::TOKEN)
    };
    let clock = Arc::new(server.clock.clone());
    let poller = Arc::new(Poller {
        upstream: Arc::new(Upstream::new(&config, Arc::clone(&store), clock.clone()).unwrap()),
        store,
        clock,
        owner: "outage".into(),
        settings: PollSettings::default(),
    });
    Rig {
        server,
        api,
        world,
        poller,
        _archive: archive,
    }
}

impl Rig {
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

    /// The rows due now (read on the server's own store, which the fault does not touch).
    async fn due(&self) -> usize {
        let now = self.server.clock.now_millis();
        self.server.store.due_polls(now, 1000).await.unwrap().len()
    }

    /// No row of `tags` is leased, and none was charged a failure.
    async fn all_released_none_failed(&self, tags: &[String], name: &str) {
        for tag in tags {
            for poll in self.server.store.polls_of(tag).await.unwrap() {
                assert_eq!(poll.lease_owner, None, "{name}: {tag} left leased");
                assert_eq!(poll.failures, 0, "{name}: {tag} charged a failure");
            }
        }
    }
}

/// Passes until one finds nothing due; how many rows they read.
async fn drain(poller: &Poller, name: &str) -> usize {
    let mut read = 0;
    for _ in 0..5 {
        let pass = poller
            .pass(50)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((pass.failed, pass.throttled), (0, 0), "{name}: {pass:?}");
        if pass.read == 0 {
            return read;
        }
        read += pass.read;
    }
    panic!("{name}: the schedule never drained");
}

async fn pauses_and_resumes(rig: Rig, mut fault: Fault) {
    let name = fault.name();
    // (two players: their four reads fit the recorder lane's budget at once)
    let tags = [rig.track(0).await, rig.track(1).await];
    let first = drain(&rig.poller, name).await;
    assert_eq!(first, 4, "{name}: a battle log and a profile per player");

    // 1. the fault begins between passes: a pass fails promptly, reads nothing upstream,
    //    changes nothing; after the fault the rows due are read, each once
    rig.server.clock.advance_millis(6 * HOUR);
    let due = rig.due().await;
    assert!(due > 0, "{name}: nothing due after six hours");
    let requests = rig.api.received().len();
    fault.begin().await;
    let started = Instant::now();
    let failed = rig.poller.pass(50).await;
    let took = started.elapsed();
    assert!(
        matches!(failed, Err(elixir::store::StoreError::Unavailable(_))),
        "{name}: {failed:?}"
    );
    assert!(
        took < REFUSED_WITHIN,
        "{name}: the pass failed after {took:?}"
    );
    assert_eq!(
        rig.api.received().len(),
        requests,
        "{name}: read upstream anyway"
    );
    assert_eq!(rig.due().await, due, "{name}: the schedule changed");
    fault.end().await;
    assert_eq!(
        drain(&rig.poller, name).await,
        due,
        "{name}: after the fault"
    );
    assert_eq!(rig.due().await, 0);
    rig.all_released_none_failed(&tags, name).await;

    // 2. the fault begins while a read is in flight: the pass waits to record it (or
    //    drops it unrecorded, due again), and once the fault ends every due row is read
    rig.server.clock.advance_millis(6 * HOUR);
    let due = rig.due().await;
    assert!(due > 0);
    rig.api.set_delay(Some(Duration::from_millis(400)));
    let requests = rig.api.received().len();
    let poller = Arc::clone(&rig.poller);
    let pass = tokio::spawn({
        let poller = Arc::clone(&poller);
        async move { poller.pass(50).await }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while rig.api.received().len() == requests {
        assert!(Instant::now() < deadline, "{name}: no read started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    fault.begin().await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    fault.end().await;
    rig.api.set_delay(None);
    let outcome = tokio::time::timeout(Duration::from_secs(20), pass)
        .await
        .expect("the pass ends once the fault does")
        .unwrap();
    let in_pass = match outcome {
        Ok(p) => {
            assert_eq!(p.failed, 0, "{name}: {p:?}");
            p.read
        }
        // a statement after the recorded read met the fault: the pass stopped there
        Err(elixir::store::StoreError::Unavailable(_)) => 0,
        Err(e) => panic!("{name}: {e}"),
    };
    let after = drain(&poller, name).await;
    assert!(
        in_pass + after >= due,
        "{name}: {due} due, {in_pass} read in the interrupted pass, {after} after"
    );
    assert_eq!(rig.due().await, 0, "{name}: a due row was skipped");
    rig.all_released_none_failed(&tags, name).await;
    eprintln!(
        "fault {name} (recorder): a pass during the fault failed after {took:?} reading \
         nothing; {due} rows due across a fault mid-read, {in_pass} read by the interrupted \
         pass and {after} by the next, none charged a failure"
    );
}

async fn postgres(black_hole: bool) {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let (proxy, via) = Proxy::in_front_of(&url, 5432).await;
    let rig = rig(&url, &via).await;
    pauses_and_resumes(rig, Fault::Proxy { proxy, black_hole }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorder_through_postgres_stopped_and_started() {
    postgres(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorder_through_a_postgres_black_hole() {
    postgres(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorder_through_a_locked_sqlite() {
    let dir = TempDir::new("outage-sqlite");
    let url = format!("sqlite://{}", dir.path().join("e.db").display());
    let rig = rig(&url, &url).await;
    pauses_and_resumes(
        rig,
        Fault::Locked {
            url: url.clone(),
            holder: None,
        },
    )
    .await;
}
