//! The store suite: every behaviour of `Store`, written once and run against SQLite and
//! PostgreSQL, each test on a fresh database. The PostgreSQL half runs when
//! `TEST_DATABASE_URL` is set (and must, under `REQUIRE_SERVICES=1`).

mod accounts;
mod assignments;
mod authoring;
mod fixtures;
mod kept;

use serde_json::json;
use sidequest::domain::play::{DomainError, FinishArgs, TurnArgs};
use sidequest::domain::{
    Assignment, Category, ConsequenceStatus, EventKind, JournalEvent, Language, Mode, Node,
    OperationKind, PlayStatus, PlayTokenGrant, Receipt, Scenario, User,
};
use sidequest::store::{
    self, Applied, ApplyError, Load, NewScenario, NewUser, SharedStore, StoreError,
};
use uuid::Uuid;

use accounts::*;
use assignments::*;
use authoring::*;
use fixtures::*;
use kept::*;

/// Generates one `#[tokio::test]` per suite function for each backend.
macro_rules! suite {
    ($($test:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let (_dir, url) = testkit::db::fresh_sqlite_url();
                    super::$test(super::open(&url).await).await;
                }
            )+
        }

        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let Some(url) = testkit::db::fresh_postgres().await else {
                        eprintln!("skipped: TEST_DATABASE_URL not set");
                        return;
                    };
                    super::$test(super::open(&url).await).await;
                }
            )+
        }
    };
    // Suite functions that open the database themselves (two instances of one database, or
    // a statement behind the store's back), given its URL.
    (url: $($test:ident),+ $(,)?) => {
        mod sqlite_url {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let (_dir, url) = testkit::db::fresh_sqlite_url();
                    super::$test(&url).await;
                }
            )+
        }

        mod postgres_url {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let Some(url) = testkit::db::fresh_postgres().await else {
                        eprintln!("skipped: TEST_DATABASE_URL not set");
                        return;
                    };
                    super::$test(&url).await;
                }
            )+
        }
    };
}

suite!(
    migrate_is_idempotent,
    users,
    scenarios_and_nodes,
    assignment_round_trip,
    play_tokens,
    turn_writes_everything,
    replay_returns_the_receipt_and_writes_nothing,
    same_operation_with_changed_args_is_refused,
    stale_version_is_refused_and_writes_nothing,
    finish_then_turn,
    auto_approve_approves_consequences,
    review_decides_only_this_assignments_consequences,
    journal_pages_and_player_view,
    unknown_assignment_is_not_found,
    concurrent_turns_commit_exactly_once,
    concurrent_retries_of_one_turn_commit_once_and_replay,
    // accounts.rs
    password_hashes,
    sessions,
    login_reservations,
    login_reservation_burst,
    author_tokens,
    // assignments.rs
    create_assignment_once_is_idempotent,
    concurrent_identical_creates_make_one_assignment,
    assignments_of_a_gm_or_player,
    consequences_by_version_then_position,
    // authoring.rs
    drafts_and_publishing,
    draft_scenarios,
    wiki_pages,
    concurrent_wiki_writers_one_wins,
);

suite!(url:
    // kept.rs
    a_checked_turn_decides_on_the_kept_row,
    a_checked_turn_is_shown_the_row_the_database_holds,
    a_checked_retry_of_a_committed_turn_replays,
    a_checked_turn_reusing_an_operation_id_is_refused,
    a_row_kept_on_another_instance_goes_stale_and_writes_nothing,
    concurrent_checked_turns_commit_exactly_once,
);

// ---------------------------------------------------------------------------------------------
// The suite

async fn migrate_is_idempotent(store: SharedStore) {
    let w = world(store, false).await;
    w.store.migrate().await.unwrap();
    w.store.ping().await.unwrap();
    assert_eq!(w.assignment_now().await, w.assignment);
}

async fn users(store: SharedStore) {
    let new = new_user("alice", true);
    let alice = store.create_user(&new).await.unwrap();
    let expected = User {
        id: new.id,
        username: "alice".into(),
        display_name: "alice Żółć".into(),
        is_gm: true,
        active: true,
        created_at: T0,
    };
    assert_eq!(alice, expected);
    assert_eq!(
        store.user_by_username("alice").await.unwrap(),
        Some(expected.clone())
    );
    assert_eq!(
        store.user_by_id(new.id).await.unwrap(),
        Some(expected.clone())
    );

    let taken = store.create_user(&new_user("alice", false)).await;
    assert!(matches!(taken, Err(StoreError::Conflict(_))), "{taken:?}");
    let same_id = store
        .create_user(&NewUser {
            username: "alice2".into(),
            ..new.clone()
        })
        .await;
    assert!(
        matches!(same_id, Err(StoreError::Conflict(_))),
        "{same_id:?}"
    );

    let bob = store.create_user(&new_user("bob", false)).await.unwrap();
    assert!(!bob.is_gm);
    store.set_user_active(alice.id, false).await.unwrap();
    assert!(!store.user_by_id(alice.id).await.unwrap().unwrap().active);
    assert!(
        store.user_by_id(bob.id).await.unwrap().unwrap().active,
        "only alice changes"
    );
    store.set_user_active(alice.id, true).await.unwrap();
    assert!(
        store
            .user_by_username("alice")
            .await
            .unwrap()
            .unwrap()
            .active
    );

    let unknown = store.set_user_active(Uuid::new_v4(), false).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(store.user_by_username("nobody").await.unwrap(), None);
    assert_eq!(
        store.user_by_username("Alice").await.unwrap(),
        None,
        "usernames are exact"
    );
    assert_eq!(store.user_by_id(Uuid::new_v4()).await.unwrap(), None);
}

async fn scenarios_and_nodes(store: SharedStore) {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let other = store.create_user(&new_user("other", true)).await.unwrap();
    let title = "The Drowned Bell";
    // The newer one is created first: lookup by title must still find the oldest.
    let newer = NewScenario {
        id: Uuid::new_v4(),
        owner_id: gm.id,
        title: title.into(),
        nodes: vec![node("harbor", "scene", true)],
        created_at: T0 + 10,
    };
    let older = NewScenario {
        id: Uuid::new_v4(),
        owner_id: gm.id,
        title: title.into(),
        nodes: scenario_nodes(),
        created_at: T0,
    };
    store.create_scenario(&newer).await.unwrap();
    let created = store.create_scenario(&older).await.unwrap();
    let expected = Scenario {
        id: older.id,
        owner_id: gm.id,
        title: title.into(),
        version: 1,
        created_at: T0,
    };
    assert_eq!(created, expected);
    assert_eq!(
        store.scenario(older.id).await.unwrap(),
        Some(expected.clone())
    );
    assert_eq!(
        store.scenario_by_title(gm.id, title).await.unwrap(),
        Some(expected)
    );
    assert_eq!(store.scenario_by_title(gm.id, "Other").await.unwrap(), None);
    assert_eq!(
        store.scenario_by_title(other.id, title).await.unwrap(),
        None
    );
    assert_eq!(store.scenario(Uuid::new_v4()).await.unwrap(), None);

    let mut sorted = scenario_nodes();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(
        sorted.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
        ["Mira", "cellar", "docks", "harbor", "Über"]
    );
    assert_eq!(store.nodes(older.id, 1).await.unwrap(), sorted);
    assert_eq!(store.nodes(older.id, 2).await.unwrap(), Vec::<Node>::new());
    assert_eq!(
        store.nodes(newer.id, 1).await.unwrap(),
        vec![node("harbor", "scene", true)]
    );

    // A refused scenario leaves none of its nodes behind.
    let again = NewScenario {
        title: "Copy".into(),
        ..older.clone()
    };
    let dup = store.create_scenario(&again).await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    assert_eq!(store.nodes(older.id, 1).await.unwrap().len(), 5);
    assert_eq!(store.scenario_by_title(gm.id, "Copy").await.unwrap(), None);
}

async fn assignment_round_trip(store: SharedStore) {
    let w = world(store, false).await;
    assert_eq!(w.assignment_now().await, w.assignment);

    let full = Assignment {
        id: Uuid::new_v4(),
        mode: Mode::Solo,
        language: Language::Pl,
        character: "Zofia, latarniczka".into(),
        published_node_ids: vec!["docks".into(), "Über".into()],
        auto_approve: true,
        status: PlayStatus::Completed,
        version: 7,
        memory: "# Pamięć\n- dzwon".into(),
        current_scene: Some("docks".into()),
        summary: Some("She rang it herself.".into()),
        created_at: T0 + 1,
        updated_at: T0 + 2,
        ..new_assignment(&w.scenario, &w.gm, &w.player, true)
    };
    w.store.create_assignment(&full).await.unwrap();
    assert_eq!(
        w.store.assignment(full.id).await.unwrap(),
        Some(full.clone())
    );

    let dup = w
        .store
        .create_assignment(&Assignment {
            brief: "x".into(),
            ..full.clone()
        })
        .await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    assert_eq!(w.store.assignment(full.id).await.unwrap(), Some(full));
    assert_eq!(w.store.assignment(Uuid::new_v4()).await.unwrap(), None);
}

async fn play_tokens(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let live = PlayTokenGrant {
        assignment_id: a,
        player_id: w.player.id,
        gm_id: w.gm.id,
        expires_at: T0 + DAY,
        revoked: false,
        player_active: true,
        gm_active: true,
        language: Language::En,
        scenario_id: w.assignment.scenario_id,
        source_version: w.assignment.source_version,
        version: w.assignment.version,
    };

    assert_eq!(s.live_play_token_expiry(a, T0).await.unwrap(), None);
    s.issue_play_token(a, "d1", T0, T0 + DAY).await.unwrap();
    assert_eq!(s.play_token("d1").await.unwrap(), Some(live.clone()));
    // on a held connection: the same grant, the same one statement
    assert_eq!(s.play_token_held("d1").await.unwrap().0, Some(live.clone()));
    assert_eq!(
        s.live_play_token_expiry(a, T0).await.unwrap(),
        Some(T0 + DAY)
    );

    // A new token revokes the earlier one.
    s.issue_play_token(a, "d2", T0 + 1, T0 + 1 + DAY)
        .await
        .unwrap();
    assert!(s.play_token("d1").await.unwrap().unwrap().revoked);
    let d2 = PlayTokenGrant {
        expires_at: T0 + 1 + DAY,
        ..live.clone()
    };
    assert_eq!(s.play_token("d2").await.unwrap(), Some(d2.clone()));

    // A refused issue (digest taken) revokes nothing: it is one transaction.
    let dup = s.issue_play_token(a, "d2", T0 + 2, T0 + 2 + DAY).await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    assert_eq!(s.play_token("d2").await.unwrap(), Some(d2));
    let unknown = s.issue_play_token(Uuid::new_v4(), "d9", T0, T0 + DAY).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(s.play_token("d9").await.unwrap(), None);

    assert_eq!(
        s.live_play_token_expiry(a, T0 + 2).await.unwrap(),
        Some(T0 + 1 + DAY)
    );
    assert_eq!(s.revoke_play_tokens(a, T0 + 3).await.unwrap(), 1);
    assert_eq!(s.revoke_play_tokens(a, T0 + 4).await.unwrap(), 0);
    assert_eq!(s.live_play_token_expiry(a, T0 + 4).await.unwrap(), None);
    assert!(s.play_token("d2").await.unwrap().unwrap().revoked);

    // An expired token is not live any more.
    s.issue_play_token(a, "d3", T0 + 5, T0 + 6).await.unwrap();
    assert_eq!(
        s.live_play_token_expiry(a, T0 + 5).await.unwrap(),
        Some(T0 + 6)
    );
    assert_eq!(s.live_play_token_expiry(a, T0 + 6).await.unwrap(), None);
    assert_eq!(s.revoke_play_tokens(a, T0 + 7).await.unwrap(), 0);

    // The grant reports the activity of both people.
    s.issue_play_token(a, "d4", T0 + 8, T0 + 8 + DAY)
        .await
        .unwrap();
    let d4 = PlayTokenGrant {
        expires_at: T0 + 8 + DAY,
        ..live
    };
    s.set_user_active(w.player.id, false).await.unwrap();
    let grant = s.play_token("d4").await.unwrap().unwrap();
    assert_eq!(
        grant,
        PlayTokenGrant {
            player_active: false,
            ..d4.clone()
        }
    );
    s.set_user_active(w.gm.id, false).await.unwrap();
    let grant = s.play_token("d4").await.unwrap().unwrap();
    assert_eq!(
        grant,
        PlayTokenGrant {
            player_active: false,
            gm_active: false,
            ..d4.clone()
        }
    );
    s.set_user_active(w.player.id, true).await.unwrap();
    let grant = s.play_token("d4").await.unwrap().unwrap();
    assert_eq!(
        grant,
        PlayTokenGrant {
            gm_active: false,
            ..d4
        }
    );

    assert_eq!(s.play_token("nope").await.unwrap(), None);
}

async fn turn_writes_everything(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let args = turn(1, 2);
    let receipt = committed(commit(s, a, &args, T0 + 100).await);

    let ids: Vec<Uuid> = receipt.result["consequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_eq!(
        receipt,
        Receipt {
            assignment_id: a,
            operation_id: args.operation_id,
            kind: OperationKind::Turn,
            args_hash: args.normalized_hash(),
            result: json!({
                "session_id": a.to_string(),
                "version": 2,
                "consequences": [
                    {"id": ids[0].to_string(), "status": "pending", "category": "discovery",
                     "description": "clue 0 at v1"},
                    {"id": ids[1].to_string(), "status": "pending", "category": "discovery",
                     "description": "clue 1 at v1"},
                ],
            }),
            version: 2,
            created_at: T0 + 100,
        }
    );
    assert_eq!(
        s.receipt(a, args.operation_id).await.unwrap(),
        Some(receipt.clone())
    );
    assert_eq!(s.receipt(a, Uuid::new_v4()).await.unwrap(), None);

    assert_eq!(
        w.assignment_now().await,
        Assignment {
            version: 2,
            memory: "- searched the harbor at v1".into(),
            current_scene: Some("harbor".into()),
            updated_at: T0 + 100,
            ..w.assignment.clone()
        }
    );
    let turn_event = JournalEvent {
        version: 2,
        kind: EventKind::Turn,
        operation_id: Some(args.operation_id),
        player_action: Some("I search the harbor (1).".into()),
        narration: Some("Gulls scatter; the tide is out (1).".into()),
        summary: None,
        gm_private: None,
        scene: Some("harbor".into()),
        created_at: T0 + 100,
    };
    assert_eq!(s.journal(a, true).await.unwrap(), vec![turn_event.clone()]);
    assert_eq!(s.journal(a, false).await.unwrap(), vec![turn_event]);

    let consequences = s.recent_consequences(a, 10).await.unwrap();
    assert_eq!(consequences.len(), 2);
    for (c, (id, description)) in consequences
        .iter()
        .zip([(ids[1], "clue 1 at v1"), (ids[0], "clue 0 at v1")])
    {
        assert_eq!(c.id, id, "newest first: the later one of the turn leads");
        assert_eq!(c.assignment_id, a);
        assert_eq!(c.version, 2);
        assert_eq!(c.category, Category::Discovery);
        assert_eq!(c.description, description);
        assert_eq!(c.status, ConsequenceStatus::Pending);
        assert_eq!(c.gm_note, None);
        assert_eq!(c.created_at, T0 + 100);
        assert_eq!(c.decided_at, None);
    }
    assert_eq!(s.pending_count(a).await.unwrap(), 2);

    // A second turn's consequences come before the first turn's.
    let second = committed(commit(s, a, &turn(2, 1), T0 + 200).await);
    assert_eq!(second.version, 3);
    let newest: Vec<String> = s
        .recent_consequences(a, 2)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.description)
        .collect();
    assert_eq!(newest, ["clue 0 at v2", "clue 1 at v1"]);
    assert_eq!(s.pending_count(a).await.unwrap(), 3);
    assert_eq!(w.versions(false).await, [2, 3]);
}

async fn replay_returns_the_receipt_and_writes_nothing(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let args = turn(1, 2);
    let first = committed(commit(s, a, &args, T0 + 100).await);
    let after = w.assignment_now().await;

    // Fresh consequence ids and a later clock: the replay must still answer the original.
    let again = replayed(commit(s, a, &args, T0 + 999).await);
    assert_eq!(again, first);
    assert_eq!(w.assignment_now().await, after);
    assert_eq!(w.versions(false).await, [2]);
    assert_eq!(s.recent_consequences(a, 10).await.unwrap().len(), 2);
    assert_eq!(s.receipt(a, args.operation_id).await.unwrap(), Some(first));
}

async fn same_operation_with_changed_args_is_refused(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let args = turn(1, 1);
    let first = committed(commit(s, a, &args, T0 + 100).await);

    let changed = TurnArgs {
        narration: "Something else happens.".into(),
        ..args.clone()
    };
    assert_eq!(
        refused(commit(s, a, &changed, T0 + 200).await),
        DomainError::OperationReused(args.operation_id)
    );
    // The same id used for another kind of operation is refused as well.
    let as_finish = FinishArgs {
        operation_id: args.operation_id,
        expected_version: 2,
        summary: "x".into(),
    };
    assert_eq!(
        refused(finish(s, a, &as_finish, T0 + 300).await),
        DomainError::OperationReused(args.operation_id)
    );
    assert_eq!(w.assignment_now().await.version, 2);
    assert_eq!(s.receipt(a, args.operation_id).await.unwrap(), Some(first));
    assert_eq!(w.versions(false).await, [2]);
}

async fn stale_version_is_refused_and_writes_nothing(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    committed(commit(s, a, &turn(1, 1), T0 + 100).await);
    let after = w.assignment_now().await;

    let stale = turn(1, 2);
    assert_eq!(
        refused(commit(s, a, &stale, T0 + 200).await),
        DomainError::VersionConflict {
            expected: 1,
            current: 2
        }
    );
    let ahead = turn(3, 0);
    assert_eq!(
        refused(commit(s, a, &ahead, T0 + 300).await),
        DomainError::VersionConflict {
            expected: 3,
            current: 2
        }
    );
    assert_eq!(w.assignment_now().await, after);
    assert_eq!(w.versions(false).await, [2]);
    assert_eq!(s.recent_consequences(a, 10).await.unwrap().len(), 1);
    assert_eq!(s.receipt(a, stale.operation_id).await.unwrap(), None);
    assert_eq!(s.receipt(a, ahead.operation_id).await.unwrap(), None);

    // The refusal did not burn the operation id: retried at the right version it commits.
    let retried = TurnArgs {
        expected_version: 2,
        ..stale
    };
    assert_eq!(committed(commit(s, a, &retried, T0 + 400).await).version, 3);
}

async fn finish_then_turn(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let first_turn = turn(1, 1);
    let turn_receipt = committed(commit(s, a, &first_turn, T0 + 100).await);

    let args = FinishArgs {
        operation_id: Uuid::new_v4(),
        expected_version: 2,
        summary: "The bell rang at dawn.".into(),
    };
    let receipt = committed(finish(s, a, &args, T0 + 200).await);
    assert_eq!(receipt.kind, OperationKind::Finish);
    assert_eq!(receipt.version, 3);
    assert_eq!(receipt.result["pending_consequences"], 1);
    assert_eq!(receipt.result["status"], "completed");

    let before = w.assignment_now().await;
    assert_eq!(
        before,
        Assignment {
            status: PlayStatus::Completed,
            version: 3,
            memory: "- searched the harbor at v1".into(),
            current_scene: Some("harbor".into()),
            summary: Some("The bell rang at dawn.".into()),
            updated_at: T0 + 200,
            ..w.assignment.clone()
        }
    );
    let journal = s.journal(a, true).await.unwrap();
    assert_eq!(
        journal.last(),
        Some(&JournalEvent {
            version: 3,
            kind: EventKind::Finish,
            operation_id: Some(args.operation_id),
            player_action: None,
            narration: None,
            summary: Some("The bell rang at dawn.".into()),
            gm_private: None,
            scene: Some("harbor".into()),
            created_at: T0 + 200,
        })
    );

    assert_eq!(
        refused(commit(s, a, &turn(3, 0), T0 + 300).await),
        DomainError::Completed
    );
    // Retries of what was committed before still answer with their receipts.
    assert_eq!(
        replayed(commit(s, a, &first_turn, T0 + 400).await),
        turn_receipt
    );
    assert_eq!(replayed(finish(s, a, &args, T0 + 500).await), receipt);
    assert_eq!(w.assignment_now().await, before);
    assert_eq!(w.versions(true).await, [2, 3]);
}

async fn auto_approve_approves_consequences(store: SharedStore) {
    let w = world(store, true).await;
    let (s, a) = (&w.store, w.assignment.id);
    let receipt = committed(commit(s, a, &turn(1, 2), T0 + 100).await);
    assert_eq!(receipt.result["consequences"][0]["status"], "approved");
    let consequences = s.recent_consequences(a, 10).await.unwrap();
    assert_eq!(consequences.len(), 2);
    for c in consequences {
        assert_eq!(c.status, ConsequenceStatus::Approved);
        assert_eq!(c.decided_at, Some(T0 + 100));
    }
    assert_eq!(s.pending_count(a).await.unwrap(), 0);
}

async fn review_decides_only_this_assignments_consequences(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    let other = new_assignment(&w.scenario, &w.gm, &w.player, false);
    s.create_assignment(&other).await.unwrap();

    committed(commit(s, a, &turn(1, 2), T0 + 100).await);
    committed(commit(s, other.id, &turn(1, 1), T0 + 100).await);
    let ours = s.recent_consequences(a, 10).await.unwrap();
    let (c1, c0) = (ours[0].id, ours[1].id);
    let theirs = s.recent_consequences(other.id, 10).await.unwrap()[0].id;

    let ids = [c0, theirs, Uuid::new_v4(), c0];
    let receipt = committed(
        review(
            s,
            a,
            &ids,
            ConsequenceStatus::Rejected,
            "not canon",
            T0 + 300,
        )
        .await,
    );
    assert_eq!(receipt.result, json!({ "seen": [c0.to_string()] }));
    assert_eq!(receipt.version, 3);
    assert_eq!(
        s.receipt(a, receipt.operation_id).await.unwrap(),
        Some(receipt)
    );

    let ours = s.recent_consequences(a, 10).await.unwrap();
    assert_eq!(ours[1].id, c0);
    assert_eq!(ours[1].status, ConsequenceStatus::Rejected);
    assert_eq!(ours[1].gm_note.as_deref(), Some("not canon"));
    assert_eq!(ours[1].decided_at, Some(T0 + 300));
    assert_eq!(ours[0].id, c1);
    assert_eq!(ours[0].status, ConsequenceStatus::Pending);
    assert_eq!(s.pending_count(a).await.unwrap(), 1);
    assert_eq!(s.pending_count(other.id).await.unwrap(), 1);

    let gm_journal = s.journal(a, false).await.unwrap();
    assert_eq!(gm_journal.len(), 2);
    assert_eq!(gm_journal[1].kind, EventKind::Review);
    assert_eq!(gm_journal[1].gm_private.as_deref(), Some("reviewed 1"));
    assert_eq!(w.versions(true).await, [2]);
}

async fn journal_pages_and_player_view(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    for v in 1..=3 {
        committed(commit(s, a, &turn(v, 1), T0 + v).await); // versions 2, 3, 4
    }
    committed(review(s, a, &[], ConsequenceStatus::Approved, "", T0 + 4).await); // 5
    committed(commit(s, a, &turn(5, 0), T0 + 5).await); // 6
    let args = FinishArgs {
        operation_id: Uuid::new_v4(),
        expected_version: 6,
        summary: "x".into(),
    };
    committed(finish(s, a, &args, T0 + 6).await); // 7

    let page = |player_view: bool, offset: i64, limit: i64| async move {
        let (total, events) = s.journal_page(a, player_view, offset, limit).await.unwrap();
        (total, events.iter().map(|e| e.version).collect::<Vec<_>>())
    };
    assert_eq!(page(false, 0, 2).await, (6, vec![2, 3]));
    assert_eq!(page(false, 2, 2).await, (6, vec![4, 5]));
    assert_eq!(page(false, 4, 10).await, (6, vec![6, 7]));
    assert_eq!(page(false, 0, 0).await, (6, vec![]));
    assert_eq!(page(true, 0, 10).await, (5, vec![2, 3, 4, 6, 7]));
    assert_eq!(page(true, 2, 2).await, (5, vec![4, 6]));
    assert_eq!(page(true, 10, 5).await, (5, vec![]));

    let recent = |player_view: bool, n: i64| async move {
        let events = s.recent_journal(a, player_view, n).await.unwrap();
        events.iter().map(|e| e.version).collect::<Vec<_>>()
    };
    assert_eq!(recent(true, 3).await, [4, 6, 7]);
    assert_eq!(recent(false, 3).await, [5, 6, 7]);
    assert_eq!(recent(false, 100).await, [2, 3, 4, 5, 6, 7]);

    // get_play_context's snapshot: the same rows the separate reads give, on one connection
    let source = (w.assignment.scenario_id, w.assignment.source_version);
    let snap = s
        .context_snapshot(None, a, 3, 2, Some(source))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(snap.assignment, s.assignment(a).await.unwrap().unwrap());
    assert_eq!(snap.nodes, Some(s.nodes(source.0, source.1).await.unwrap()));
    let scenario = s.scenario(w.assignment.scenario_id).await.unwrap().unwrap();
    assert_eq!(
        snap.scenario_title.as_deref(),
        Some(scenario.title.as_str())
    );
    assert_eq!(snap.events, s.recent_journal(a, true, 3).await.unwrap());
    assert_eq!(
        snap.consequences,
        s.recent_consequences(a, 2).await.unwrap()
    );
    assert_eq!(snap.consequences.len(), 2);
    // on the connection a token check held, the same answer
    let (_, held) = s.play_token_held("none").await.unwrap();
    let on_held = s
        .context_snapshot(held, a, 3, 2, Some(source))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(on_held, snap);
    let all = s
        .context_snapshot(None, a, 100, 100, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(all.nodes, None);
    assert_eq!(
        all.events.iter().map(|e| e.version).collect::<Vec<_>>(),
        [2, 3, 4, 6, 7]
    );
    assert_eq!(
        all.consequences,
        s.recent_consequences(a, 100).await.unwrap()
    );
    let none = s
        .context_snapshot(None, a, 0, 0, None)
        .await
        .unwrap()
        .unwrap();
    assert!(none.events.is_empty() && none.consequences.is_empty());

    // read_play_journal's snapshot: the page, its total and the version they were read at
    let version = s.assignment(a).await.unwrap().unwrap().version;
    for (player_view, offset, limit) in [(true, 0, 10), (true, 2, 2), (false, 4, 10), (true, 10, 5)]
    {
        let (_, held) = s.play_token_held("none").await.unwrap();
        let snap = s
            .journal_snapshot(held, a, player_view, offset, limit)
            .await
            .unwrap()
            .unwrap();
        let (total, entries) = s.journal_page(a, player_view, offset, limit).await.unwrap();
        assert_eq!(
            (snap.version, snap.total, snap.entries),
            (version, total, entries)
        );
    }
    // search_play_memory's: the assignment and the whole journal of the view
    let (found, journal) = s.search_snapshot(None, a, true).await.unwrap().unwrap();
    assert_eq!(found, s.assignment(a).await.unwrap().unwrap());
    assert_eq!(journal, s.journal(a, true).await.unwrap());

    assert_eq!(w.versions(true).await, [2, 3, 4, 6, 7]);
    assert_eq!(w.versions(false).await, [2, 3, 4, 5, 6, 7]);
    let kinds: Vec<EventKind> = s
        .journal(a, true)
        .await
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert!(kinds.iter().all(|k| k.player_visible()), "{kinds:?}");
}

async fn unknown_assignment_is_not_found(store: SharedStore) {
    assert_eq!(
        store
            .context_snapshot(None, Uuid::new_v4(), 5, 5, None)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .journal_snapshot(None, Uuid::new_v4(), true, 0, 10)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .search_snapshot(None, Uuid::new_v4(), true)
            .await
            .unwrap(),
        None
    );
    let applied = store
        .apply(
            Uuid::new_v4(),
            Uuid::new_v4(),
            Load::NOTHING,
            Box::new(|_| panic!("decide must not run without an assignment")),
        )
        .await;
    assert_eq!(refused(applied), DomainError::NotFound);
}

async fn concurrent_turns_commit_exactly_once(store: SharedStore) {
    let w = world(store, false).await;
    let (a, start) = (w.assignment.id, w.assignment.version);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let store = w.store.clone();
        tasks.spawn(async move { commit(&store, a, &turn(start, 1), T0 + i).await });
    }
    let (mut commits, mut conflicts) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Ok(Applied::Committed(receipt)) => {
                assert_eq!(receipt.version, start + 1);
                commits += 1;
            }
            Err(ApplyError::Domain(DomainError::VersionConflict { expected, current })) => {
                assert_eq!((expected, current), (start, start + 1));
                conflicts += 1;
            }
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    assert_eq!((commits, conflicts), (1, 15));
    assert_eq!(w.assignment_now().await.version, start + 1);
    assert_eq!(w.versions(false).await, [start + 1]);
    assert_eq!(w.store.recent_consequences(a, 100).await.unwrap().len(), 1);
}

/// Sixteen concurrent sends of one turn (one operation id, the same arguments): the losers of
/// the write read again and find the winner's receipt, so one commits and fifteen replay it.
async fn concurrent_retries_of_one_turn_commit_once_and_replay(store: SharedStore) {
    let w = world(store, false).await;
    let (a, start) = (w.assignment.id, w.assignment.version);
    let args = turn(start, 2);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let (store, args) = (w.store.clone(), args.clone());
        tasks.spawn(async move { commit(&store, a, &args, T0 + i).await });
    }
    let (committed, replayed) = committed_and_replayed(tasks).await;
    assert_eq!((committed.len(), replayed.len()), (1, 15));
    assert_eq!(committed[0].version, start + 1);
    assert!(replayed.iter().all(|r| *r == committed[0]));
    assert_eq!(w.assignment_now().await.version, start + 1);
    assert_eq!(w.versions(false).await, [start + 1]);
    assert_eq!(w.store.recent_consequences(a, 100).await.unwrap().len(), 2);
}

// ---------------------------------------------------------------------------------------------
// SQLite only

#[tokio::test]
async fn sqlite_in_memory_keeps_its_data() {
    let store = open("sqlite::memory:").await;
    let alice = store.create_user(&new_user("alice", false)).await.unwrap();
    assert_eq!(store.user_by_username("alice").await.unwrap(), Some(alice));
}

#[tokio::test]
async fn unsupported_url_is_refused() {
    let err = store::connect("mysql://localhost/x", &mcp_door::DEFAULT_POOL)
        .await
        .err();
    assert!(matches!(err, Some(StoreError::Internal(_))), "{err:?}");
}
