//! Store suite, authoring: scenario drafts and publishing, and the GM's private wiki. Run on
//! both backends by `suite!` in `store.rs`; the migration backfill has a test per backend here.

use std::path::PathBuf;

use sidequest::domain::wiki::{WikiPage, WikiWrite, WikiWriteOutcome};
use sidequest::domain::{Node, Scenario};
use sidequest::store::{NewScenario, SharedStore, StoreError};
use sqlx::migrate::Migrator;
use uuid::Uuid;

use super::fixtures::*;

fn sorted(mut nodes: Vec<Node>) -> Vec<Node> {
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    nodes
}

pub async fn drafts_and_publishing(store: SharedStore) {
    let w = world(store, false).await;
    let (s, id) = (&w.store, w.scenario.id);
    let v1 = sorted(scenario_nodes());
    assert_eq!(
        s.draft_nodes(id).await.unwrap(),
        v1,
        "create_scenario seeds the draft, in byte order"
    );

    // Edit the draft: replace one node, add one, delete one.
    let harbor = Node {
        title: "The Flooded Harbor".into(),
        published: false,
        public_text: "Water to the knees.".into(),
        gm_text: "The bell is under the pier.".into(),
        ..node("harbor", "scene", true)
    };
    s.put_draft_node(id, &harbor).await.unwrap();
    let attic = node("attic", "location", true);
    s.put_draft_node(id, &attic).await.unwrap();
    assert!(s.delete_draft_node(id, "cellar").await.unwrap());
    assert!(!s.delete_draft_node(id, "cellar").await.unwrap(), "gone");
    assert!(!s.delete_draft_node(id, "nowhere").await.unwrap());
    let mut draft: Vec<Node> = v1
        .iter()
        .filter(|n| n.id != "cellar")
        .map(|n| {
            if n.id == "harbor" {
                harbor.clone()
            } else {
                n.clone()
            }
        })
        .collect();
    draft.push(attic.clone());
    let draft = sorted(draft);
    assert_eq!(
        draft.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
        ["Mira", "attic", "docks", "harbor", "Über"]
    );
    assert_eq!(s.draft_nodes(id).await.unwrap(), draft);
    assert_eq!(s.nodes(id, 1).await.unwrap(), v1, "v1 is frozen");

    // Publishing freezes the draft as version 2.
    assert_eq!(s.publish_scenario(id).await.unwrap(), 2);
    assert_eq!(s.scenario(id).await.unwrap().unwrap().version, 2);
    assert_eq!(s.nodes(id, 2).await.unwrap(), draft);
    assert_eq!(s.nodes(id, 1).await.unwrap(), v1);
    assert_eq!(s.draft_nodes(id).await.unwrap(), draft, "the draft stays");
    assert_eq!(
        w.assignment_now().await.source_version,
        1,
        "assignments keep their version"
    );

    // Later edits touch only the draft, until the next publish.
    let docks = Node {
        title: "Docks at night".into(),
        ..node("docks", "scene", true)
    };
    s.put_draft_node(id, &docks).await.unwrap();
    assert_eq!(s.nodes(id, 2).await.unwrap(), draft);
    assert_eq!(s.publish_scenario(id).await.unwrap(), 3);
    let v3 = s.nodes(id, 3).await.unwrap();
    assert_eq!(v3.len(), 5);
    assert_eq!(v3[2], docks);
    assert_eq!(s.nodes(id, 2).await.unwrap(), draft);
    assert_eq!(s.nodes(id, 1).await.unwrap(), v1);

    let put = s.put_draft_node(Uuid::new_v4(), &attic).await;
    assert!(matches!(put, Err(StoreError::NotFound)), "{put:?}");
    let published = s.publish_scenario(Uuid::new_v4()).await;
    assert!(
        matches!(published, Err(StoreError::NotFound)),
        "{published:?}"
    );
    assert_eq!(s.draft_nodes(Uuid::new_v4()).await.unwrap(), []);
    assert!(!s.delete_draft_node(Uuid::new_v4(), "attic").await.unwrap());
}

pub async fn draft_scenarios(store: SharedStore) {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let other = store.create_user(&new_user("other", true)).await.unwrap();

    let id = Uuid::new_v4();
    let draft = store
        .create_draft_scenario(id, gm.id, "Żywe Srebro", T0 + 5)
        .await
        .unwrap();
    let expected = Scenario {
        id,
        owner_id: gm.id,
        title: "Żywe Srebro".into(),
        version: 0,
        created_at: T0 + 5,
    };
    assert_eq!(draft, expected);
    assert_eq!(store.scenario(id).await.unwrap(), Some(expected));
    assert_eq!(store.draft_nodes(id).await.unwrap(), []);
    assert_eq!(store.nodes(id, 0).await.unwrap(), []);

    store
        .put_draft_node(id, &node("gate", "scene", true))
        .await
        .unwrap();
    assert_eq!(store.publish_scenario(id).await.unwrap(), 1);
    assert_eq!(
        store.nodes(id, 1).await.unwrap(),
        [node("gate", "scene", true)]
    );

    // Same id again, or an unknown owner: refused, nothing stored.
    let dup = store.create_draft_scenario(id, gm.id, "Copy", T0 + 6).await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    let ghost = Uuid::new_v4();
    let unknown = store
        .create_draft_scenario(ghost, Uuid::new_v4(), "Ghost", T0)
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(store.scenario(ghost).await.unwrap(), None);

    // scenarios_of: the owner's only, oldest first (not in creation order).
    let older = store
        .create_scenario(&NewScenario {
            id: Uuid::new_v4(),
            owner_id: gm.id,
            title: "Older".into(),
            nodes: vec![],
            created_at: T0,
        })
        .await
        .unwrap();
    let theirs = store
        .create_draft_scenario(Uuid::new_v4(), other.id, "Theirs", T0 + 1)
        .await
        .unwrap();
    let titles = |list: Vec<Scenario>| list.into_iter().map(|x| x.title).collect::<Vec<_>>();
    assert_eq!(
        titles(store.scenarios_of(gm.id).await.unwrap()),
        ["Older", "Żywe Srebro"]
    );
    assert_eq!(store.scenarios_of(gm.id).await.unwrap()[0], older);
    assert_eq!(store.scenarios_of(other.id).await.unwrap(), [theirs]);
    assert_eq!(store.scenarios_of(Uuid::new_v4()).await.unwrap(), []);
}

fn write(slug: &str, title: &str, body: &str, expected_version: i64) -> WikiWrite {
    WikiWrite {
        slug: slug.into(),
        title: title.into(),
        body: body.into(),
        expected_version,
    }
}

fn written(outcome: WikiWriteOutcome) -> WikiPage {
    match outcome {
        WikiWriteOutcome::Written(page) => page,
        other => panic!("expected a write, got {other:?}"),
    }
}

pub async fn wiki_pages(store: SharedStore) {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let other = store.create_user(&new_user("other", true)).await.unwrap();
    let s = &store;

    let v1 = written(
        s.write_wiki_page(gm.id, &write("mira", "Mira", "Rings bells.", 0), T0)
            .await
            .unwrap(),
    );
    assert_eq!(
        v1,
        WikiPage {
            slug: "mira".into(),
            title: "Mira".into(),
            body: "Rings bells.".into(),
            version: 1,
            updated_at: T0,
        }
    );
    assert_eq!(s.wiki_page(gm.id, "mira").await.unwrap(), Some(v1.clone()));

    // Creating it again, or updating from a version it is not at, is a conflict.
    for expected in [0, 2, 7] {
        assert_eq!(
            s.write_wiki_page(gm.id, &write("mira", "X", "x", expected), T0 + 1)
                .await
                .unwrap(),
            WikiWriteOutcome::Conflict { current: 1 }
        );
    }
    assert_eq!(
        s.write_wiki_page(gm.id, &write("absent", "X", "x", 1), T0 + 1)
            .await
            .unwrap(),
        WikiWriteOutcome::Conflict { current: 0 }
    );
    assert_eq!(s.wiki_page(gm.id, "absent").await.unwrap(), None);

    let v2 = written(
        s.write_wiki_page(
            gm.id,
            &write("mira", "Mira the Ringer", "Rings the drowned bell.", 1),
            T0 + 10,
        )
        .await
        .unwrap(),
    );
    assert_eq!(
        v2,
        WikiPage {
            slug: "mira".into(),
            title: "Mira the Ringer".into(),
            body: "Rings the drowned bell.".into(),
            version: 2,
            updated_at: T0 + 10,
        }
    );
    let v3 = written(
        s.write_wiki_page(gm.id, &write("mira", "Mira", "", 2), T0 + 20)
            .await
            .unwrap(),
    );
    assert_eq!((v3.version, v3.body.as_str()), (3, ""));
    assert_eq!(s.wiki_page(gm.id, "mira").await.unwrap(), Some(v3.clone()));
    assert_eq!(
        s.wiki_history(gm.id, "mira").await.unwrap(),
        [v3.clone(), v2, v1.clone()],
        "every version, newest first"
    );
    assert_eq!(s.wiki_history(gm.id, "absent").await.unwrap(), []);

    // Listing is by slug (byte order), current versions only.
    let harbor = written(
        s.write_wiki_page(gm.id, &write("harbor", "Harbor", "Wet.", 0), T0 + 30)
            .await
            .unwrap(),
    );
    let dash = written(
        s.write_wiki_page(gm.id, &write("a-z", "Index", "All.", 0), T0 + 40)
            .await
            .unwrap(),
    );
    let under = written(
        s.write_wiki_page(gm.id, &write("a_b", "Under", "_", 0), T0 + 50)
            .await
            .unwrap(),
    );
    assert_eq!(
        s.wiki_pages(gm.id).await.unwrap(),
        [dash, under, harbor, v3.clone()]
    );

    // Pages are per owner: the same slug is another page, invisible to the first.
    assert_eq!(s.wiki_page(other.id, "mira").await.unwrap(), None);
    assert_eq!(s.wiki_history(other.id, "mira").await.unwrap(), []);
    assert_eq!(s.wiki_pages(other.id).await.unwrap(), []);
    assert_eq!(
        s.write_wiki_page(other.id, &write("mira", "Theirs", "t", 3), T0 + 60)
            .await
            .unwrap(),
        WikiWriteOutcome::Conflict { current: 0 },
        "another owner's version does not count"
    );
    let theirs = written(
        s.write_wiki_page(other.id, &write("mira", "Theirs", "t", 0), T0 + 60)
            .await
            .unwrap(),
    );
    assert_eq!(theirs.version, 1);
    assert_eq!(s.wiki_pages(other.id).await.unwrap(), [theirs]);
    assert_eq!(s.wiki_page(gm.id, "mira").await.unwrap(), Some(v3));
    assert_eq!(s.wiki_history(gm.id, "mira").await.unwrap().len(), 3);

    let unknown = s
        .write_wiki_page(Uuid::new_v4(), &write("x", "X", "x", 0), T0)
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

/// Eight writers at the same expected version: one writes, the rest see its version.
async fn race(store: &SharedStore, owner: Uuid, expected: i64) -> WikiPage {
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..8 {
        let store = store.clone();
        let w = write(
            "bell",
            &format!("Writer {i}"),
            &format!("body {i}"),
            expected,
        );
        tasks.spawn(async move { store.write_wiki_page(owner, &w, T0 + i).await });
    }
    let mut winners = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Ok(WikiWriteOutcome::Written(page)) => winners.push(page),
            Ok(WikiWriteOutcome::Conflict { current }) => assert_eq!(current, expected + 1),
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let winner = winners.remove(0);
    assert_eq!(winner.version, expected + 1);
    winner
}

pub async fn concurrent_wiki_writers_one_wins(store: SharedStore) {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let created = race(&store, gm.id, 0).await;
    assert_eq!(
        store.wiki_page(gm.id, "bell").await.unwrap(),
        Some(created.clone())
    );
    let updated = race(&store, gm.id, 1).await;
    assert_eq!(
        store.wiki_page(gm.id, "bell").await.unwrap(),
        Some(updated.clone())
    );
    assert_eq!(
        store.wiki_history(gm.id, "bell").await.unwrap(),
        [updated, created]
    );
}

// ---------------------------------------------------------------------------------------------
// Migration 0002 on a database that has scenarios already

/// A scenario stored under schema 0001 only: published twice, no draft.
const BEFORE_0002: &str = "
INSERT INTO users (id, username, display_name, password_hash, is_gm, active, created_at)
VALUES ('00000000-0000-4000-8000-000000000001', 'gm', 'GM', NULL, TRUE, TRUE, 1);
INSERT INTO scenarios (id, owner_id, title, version, created_at)
VALUES ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000001',
        'Old', 2, 1);
INSERT INTO scenario_nodes
    (scenario_id, version, node_id, kind, title, published, public_text, gm_text)
VALUES
    ('00000000-0000-4000-8000-0000000000a1', 1, 'harbor', 'scene', 'Harbor v1', TRUE, 'p1', 'g1'),
    ('00000000-0000-4000-8000-0000000000a1', 1, 'gone', 'note', 'Gone', FALSE, 'p', 'g'),
    ('00000000-0000-4000-8000-0000000000a1', 2, 'harbor', 'scene', 'Harbor v2', TRUE, 'p2', 'g2'),
    ('00000000-0000-4000-8000-0000000000a1', 2, 'Mira', 'npc', 'Mira', FALSE, 'pm', 'gm');
";

/// The migrator of `backend` cut down to 0001, to build a database as it was before 0002.
async fn migrator_0001(backend: &str) -> Migrator {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    let mut migrator = Migrator::new(dir).await.unwrap();
    migrator.migrations = migrator.migrations[..1].to_vec().into();
    assert_eq!(migrator.migrations[0].version, 1);
    migrator
}

async fn old_scenarios_become_editable(store: SharedStore) {
    let id: Uuid = "00000000-0000-4000-8000-0000000000a1".parse().unwrap();
    let latest = store.nodes(id, 2).await.unwrap();
    assert_eq!(
        latest.iter().map(|n| n.title.as_str()).collect::<Vec<_>>(),
        ["Mira", "Harbor v2"]
    );
    assert_eq!(store.draft_nodes(id).await.unwrap(), latest);
    assert_eq!(store.publish_scenario(id).await.unwrap(), 3);
    assert_eq!(store.nodes(id, 3).await.unwrap(), latest);
    assert_eq!(store.nodes(id, 1).await.unwrap().len(), 2);
}

#[tokio::test]
async fn sqlite_migration_0002_copies_latest_nodes_into_drafts() {
    use std::str::FromStr;
    let (_dir, url) = testkit::db::fresh_sqlite_url();
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
        .unwrap()
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    migrator_0001("sqlite").await.run(&pool).await.unwrap();
    sqlx::raw_sql(BEFORE_0002).execute(&pool).await.unwrap();
    pool.close().await;
    old_scenarios_become_editable(open(&url).await).await;
}

#[tokio::test]
async fn postgres_migration_0002_copies_latest_nodes_into_drafts() {
    let Some(url) = testkit::db::fresh_postgres().await else {
        eprintln!("skipped: TEST_DATABASE_URL not set");
        return;
    };
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    migrator_0001("postgres").await.run(&pool).await.unwrap();
    sqlx::raw_sql(BEFORE_0002).execute(&pool).await.unwrap();
    pool.close().await;
    old_scenarios_become_editable(open(&url).await).await;
}
