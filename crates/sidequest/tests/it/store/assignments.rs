//! Store suite, assignments for humans: idempotent creation, the list of a GM or player, and
//! every consequence of an assignment. Run on both backends by `suite!` in `store.rs`.

use sidequest::domain::{Assignment, ConsequenceStatus};
use sidequest::store::{CreateOutcome, SharedStore, StoreError};
use uuid::Uuid;

use super::fixtures::*;

pub async fn create_assignment_once_is_idempotent(store: SharedStore) {
    let w = world(store, false).await;
    let s = &w.store;
    let a = new_assignment(&w.scenario, &w.gm, &w.player, false);

    assert_eq!(
        s.create_assignment_once(&a, "hash-1").await.unwrap(),
        CreateOutcome::Created
    );
    assert_eq!(s.assignment(a.id).await.unwrap(), Some(a.clone()));

    // A retry with a later clock gets the stored assignment back, not its own.
    let retry = Assignment {
        created_at: T0 + 500,
        updated_at: T0 + 500,
        ..a.clone()
    };
    assert_eq!(
        s.create_assignment_once(&retry, "hash-1").await.unwrap(),
        CreateOutcome::Existing(Box::new(a.clone()))
    );
    // The same id with other arguments.
    let other = Assignment {
        brief: "Something else.".into(),
        ..a.clone()
    };
    assert_eq!(
        s.create_assignment_once(&other, "hash-2").await.unwrap(),
        CreateOutcome::Conflict
    );
    assert_eq!(s.assignment(a.id).await.unwrap(), Some(a.clone()));

    // The existing assignment is returned as it is now, after play moved it on.
    committed(commit(s, a.id, &turn(1, 0), T0 + 100).await);
    match s.create_assignment_once(&a, "hash-1").await.unwrap() {
        CreateOutcome::Existing(now) => assert_eq!(now.version, 2),
        other => panic!("expected Existing, got {other:?}"),
    }

    // One created without a creation hash conflicts with any hashed create.
    assert_eq!(
        s.create_assignment_once(&w.assignment, "hash-1")
            .await
            .unwrap(),
        CreateOutcome::Conflict
    );

    // Unknown references are `NotFound`, and nothing is stored.
    let orphan = Assignment {
        id: Uuid::new_v4(),
        scenario_id: Uuid::new_v4(),
        ..a.clone()
    };
    let unknown = s.create_assignment_once(&orphan, "hash-3").await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(s.assignment(orphan.id).await.unwrap(), None);
}

pub async fn concurrent_identical_creates_make_one_assignment(store: SharedStore) {
    let w = world(store, false).await;
    let a = new_assignment(&w.scenario, &w.gm, &w.player, false);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (store, a) = (w.store.clone(), a.clone());
        tasks.spawn(async move { store.create_assignment_once(&a, "same").await });
    }
    let (mut created, mut existing) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Ok(CreateOutcome::Created) => created += 1,
            Ok(CreateOutcome::Existing(found)) => {
                assert_eq!(*found, a);
                existing += 1;
            }
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    assert_eq!((created, existing), (1, 7));
    let listed = w.store.assignments_of(w.player.id, 100).await.unwrap();
    assert_eq!(listed.iter().filter(|x| x.id == a.id).count(), 1);
    assert_eq!(listed.len(), 2, "the world's assignment and this one");
}

pub async fn assignments_of_a_gm_or_player(store: SharedStore) {
    let w = world(store, false).await;
    let s = &w.store;
    let other_player = s.create_user(&new_user("other", false)).await.unwrap();
    let stranger = s.create_user(&new_user("stranger", true)).await.unwrap();
    let at = |created_at: i64, player| Assignment {
        id: Uuid::new_v4(),
        created_at,
        updated_at: created_at,
        ..new_assignment(&w.scenario, &w.gm, player, false)
    };
    // The world's assignment is at T0.
    let a2 = at(T0 + 2, &w.player);
    let a1 = at(T0 + 1, &other_player);
    let a3 = at(T0 + 3, &other_player);
    let (b, c) = (at(T0 + 4, &w.player), at(T0 + 4, &w.player));
    for x in [&a2, &a1, &a3, &b, &c] {
        s.create_assignment(x).await.unwrap();
    }
    // The player is also the GM of one assignment (someone else plays it).
    let own = Assignment {
        id: Uuid::new_v4(),
        gm_id: w.player.id,
        player_id: other_player.id,
        created_at: T0 + 5,
        updated_at: T0 + 5,
        ..w.assignment.clone()
    };
    s.create_assignment(&own).await.unwrap();

    let ids = |list: Vec<Assignment>| list.into_iter().map(|x| x.id).collect::<Vec<_>>();
    // Same creation time: the larger id comes first.
    let (b_first, b_second) = if b.id > c.id {
        (b.id, c.id)
    } else {
        (c.id, b.id)
    };

    assert_eq!(
        ids(s.assignments_of(w.gm.id, 100).await.unwrap()),
        [b_first, b_second, a3.id, a2.id, a1.id, w.assignment.id],
        "the GM sees what they run, newest first"
    );
    assert_eq!(
        ids(s.assignments_of(w.player.id, 100).await.unwrap()),
        [own.id, b_first, b_second, a2.id, w.assignment.id],
        "the player sees what they play and what they run"
    );
    assert_eq!(
        ids(s.assignments_of(other_player.id, 100).await.unwrap()),
        [own.id, a3.id, a1.id]
    );
    assert_eq!(s.assignments_of(stranger.id, 100).await.unwrap(), []);

    assert_eq!(
        ids(s.assignments_of(w.gm.id, 2).await.unwrap()),
        [b_first, b_second]
    );
    assert_eq!(
        s.assignments_of(w.gm.id, 1).await.unwrap(),
        [if b_first == b.id { b } else { c }],
        "whole assignments"
    );
    assert_eq!(s.assignments_of(w.gm.id, 0).await.unwrap(), []);
}

pub async fn consequences_by_version_then_position(store: SharedStore) {
    let w = world(store, false).await;
    let (s, a) = (&w.store, w.assignment.id);
    assert_eq!(s.consequences(a).await.unwrap(), []);

    committed(commit(s, a, &turn(1, 3), T0 + 100).await); // version 2
    committed(commit(s, a, &turn(2, 0), T0 + 200).await); // version 3
    committed(commit(s, a, &turn(3, 2), T0 + 300).await); // version 4
    let other = new_assignment(&w.scenario, &w.gm, &w.player, false);
    s.create_assignment(&other).await.unwrap();
    committed(commit(s, other.id, &turn(1, 1), T0 + 400).await);

    let all = s.consequences(a).await.unwrap();
    let seen: Vec<(i64, &str)> = all
        .iter()
        .map(|c| (c.version, c.description.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (2, "clue 0 at v1"),
            (2, "clue 1 at v1"),
            (2, "clue 2 at v1"),
            (4, "clue 0 at v3"),
            (4, "clue 1 at v3"),
        ]
    );
    assert!(all.iter().all(|c| c.assignment_id == a));
    assert!(all.iter().all(|c| c.status == ConsequenceStatus::Pending));

    // Decisions show up; the order stays.
    let first = all[0].id;
    committed(
        review(
            s,
            a,
            &[first],
            ConsequenceStatus::Approved,
            "canon",
            T0 + 500,
        )
        .await,
    );
    let after = s.consequences(a).await.unwrap();
    assert_eq!(after[0].id, first);
    assert_eq!(after[0].status, ConsequenceStatus::Approved);
    assert_eq!(after[0].gm_note.as_deref(), Some("canon"));
    assert_eq!(after[0].decided_at, Some(T0 + 500));
    assert_eq!(after[1..], all[1..]);

    assert_eq!(s.consequences(other.id).await.unwrap().len(), 1);
    assert_eq!(s.consequences(Uuid::new_v4()).await.unwrap(), []);
}
