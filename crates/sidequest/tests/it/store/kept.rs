//! Store suite, the kept row: a turn sent with the version its token check read
//! (`Play::apply_held` with `checked_version`) is decided on the row this instance kept for that
//! version, without reading it, and answers exactly as a turn that reads: replays, reused
//! operation ids, stale rows on another instance and bursts. Run on both backends by
//! `suite!(url: …)` in `store.rs`; each test opens its database itself.

use std::sync::{Arc, Mutex};

use super::*;

type Seen = Arc<Mutex<Vec<Assignment>>>;

fn seen() -> Seen {
    Arc::new(Mutex::new(Vec::new()))
}

/// What the rule was shown since the last call, emptied.
fn shown(seen: &Seen) -> Vec<Assignment> {
    std::mem::take(&mut *seen.lock().unwrap())
}

/// Completes the assignment behind the store's back without moving its version: a change no
/// write of play makes, so the only way a turn can miss it is by deciding on a kept row.
async fn complete_behind_the_store(url: &str, assignment: Uuid) {
    let db = sqlkit::Db::open_checked(url, &mcp_door::DEFAULT_POOL)
        .await
        .unwrap();
    let done = sqlkit::sql("UPDATE assignments SET status = 'completed' WHERE id = $1")
        .bind(assignment)
        .execute(&db)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
}

pub async fn a_checked_turn_decides_on_the_kept_row(url: &str) {
    let w = world(open(url).await, false).await;
    let (s, a, seen) = (&w.store, w.assignment.id, seen());
    // Read, decided and written: the store keeps the row of version 2 it wrote.
    committed(commit(s, a, &turn(1, 1), T0 + 100).await);

    complete_behind_the_store(url, a).await;
    // Checked at version 2, the turn is decided on the kept (active) row, not the stored one.
    let receipt = committed(commit_checked(s, a, &turn(2, 0), T0 + 200, 2, &seen).await);
    assert_eq!(receipt.version, 3);
    let shown = shown(&seen);
    assert_eq!(shown.len(), 1, "decided once, on the kept row");
    assert_eq!(shown[0].status, PlayStatus::Active);
    assert_eq!(shown[0].version, 2);

    // A turn without a checked version reads the row, and sees what is stored.
    complete_behind_the_store(url, a).await;
    assert_eq!(
        refused(commit(s, a, &turn(3, 0), T0 + 300).await),
        DomainError::Completed
    );
}

pub async fn a_checked_turn_is_shown_the_row_the_database_holds(url: &str) {
    let w = world(open(url).await, false).await;
    let (s, a, seen) = (&w.store, w.assignment.id, seen());
    for i in 0..3 {
        let before = w.assignment_now().await;
        let receipt = committed(
            commit_checked(
                s,
                a,
                &turn(before.version, 2),
                T0 + 100 * i,
                before.version,
                &seen,
            )
            .await,
        );
        assert_eq!(receipt.version, before.version + 1);
        assert_eq!(shown(&seen), [before], "turn {i}");
    }
    // A review (not a turn: it reads) leaves the row the next checked turn is shown.
    let pending: Vec<Uuid> = s
        .consequences(a)
        .await
        .unwrap()
        .iter()
        .map(|c| c.id)
        .take(2)
        .collect();
    committed(
        review(
            s,
            a,
            &pending,
            ConsequenceStatus::Approved,
            "fine",
            T0 + 500,
        )
        .await,
    );
    let before = w.assignment_now().await;
    committed(
        commit_checked(
            s,
            a,
            &turn(before.version, 0),
            T0 + 600,
            before.version,
            &seen,
        )
        .await,
    );
    assert_eq!(shown(&seen), [before]);
    assert_eq!(w.versions(false).await, [2, 3, 4, 5, 6]);
}

pub async fn a_checked_retry_of_a_committed_turn_replays(url: &str) {
    let w = world(open(url).await, false).await;
    let (s, a, seen) = (&w.store, w.assignment.id, seen());
    let args = turn(1, 1);
    let first = committed(commit_checked(s, a, &args, T0 + 100, 1, &seen).await);
    assert_eq!(
        shown(&seen).len(),
        1,
        "nothing kept yet: read and decided once"
    );

    // The retry's token check reads version 2: the kept row has no receipt and refuses the
    // stale version; read again, the receipt is found and replayed.
    match commit_checked(s, a, &args, T0 + 200, 2, &seen).await {
        Ok(Applied::Replayed(receipt)) => assert_eq!(receipt, first),
        other => panic!("expected a replay, got {other:?}"),
    }
    let shown = shown(&seen);
    assert_eq!(shown.len(), 2, "the kept row, then the row read");
    assert_eq!(shown[0], shown[1]);
    assert_eq!(w.assignment_now().await.version, 2);
    assert_eq!(w.versions(false).await, [2]);
}

pub async fn a_checked_turn_reusing_an_operation_id_is_refused(url: &str) {
    let w = world(open(url).await, false).await;
    let (s, a, seen) = (&w.store, w.assignment.id, seen());
    let args = turn(1, 1);
    let first = committed(commit(s, a, &args, T0 + 100).await);

    // At the current version the kept row decides a write; the write's guard finds the
    // receipt and writes nothing; read again, the reuse is refused.
    let reused = TurnArgs {
        expected_version: 2,
        narration: "Something else happens.".into(),
        ..args.clone()
    };
    assert_eq!(
        refused(commit_checked(s, a, &reused, T0 + 200, 2, &seen).await),
        DomainError::OperationReused(args.operation_id)
    );
    assert_eq!(shown(&seen).len(), 2, "the kept row, then the row read");
    assert_eq!(w.assignment_now().await.version, 2);
    assert_eq!(w.versions(false).await, [2]);
    assert_eq!(s.receipt(a, args.operation_id).await.unwrap(), Some(first));
    assert_eq!(s.recent_consequences(a, 10).await.unwrap().len(), 1);
}

pub async fn a_row_kept_on_another_instance_goes_stale_and_writes_nothing(url: &str) {
    let (one, two) = (open(url).await, open(url).await);
    let w = world(one.clone(), false).await;
    let (a, seen) = (w.assignment.id, seen());
    committed(commit(&one, a, &turn(1, 0), T0 + 100).await); // one keeps version 2
    committed(commit(&two, a, &turn(2, 0), T0 + 200).await); // two keeps version 3

    // A token check on one that read version 2 before two's write: the kept row decides, the
    // write finds version 3 and writes nothing, the row read refuses the stale version.
    let stale = turn(2, 1);
    assert_eq!(
        refused(commit_checked(&one, a, &stale, T0 + 300, 2, &seen).await),
        DomainError::VersionConflict {
            expected: 2,
            current: 3
        }
    );
    assert_eq!(
        shown(&seen).iter().map(|r| r.version).collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(one.receipt(a, stale.operation_id).await.unwrap(), None);

    // one's kept row (2) is behind: it reads and commits, keeping the row it wrote (4); two's
    // (3) is behind now too: it reads as well.
    let now = w.assignment_now().await;
    committed(commit_checked(&one, a, &turn(3, 1), T0 + 400, 3, &seen).await);
    assert_eq!(shown(&seen), [now]);
    let now = w.assignment_now().await;
    committed(commit_checked(&two, a, &turn(4, 1), T0 + 500, 4, &seen).await);
    assert_eq!(
        shown(&seen),
        [now],
        "two's kept row (3) missed: read, decided once"
    );
    assert_eq!(w.versions(false).await, [2, 3, 4, 5]);
    assert_eq!(one.recent_consequences(a, 10).await.unwrap().len(), 2);
}

pub async fn concurrent_checked_turns_commit_exactly_once(url: &str) {
    let w = world(open(url).await, false).await;
    let a = w.assignment.id;
    committed(commit(&w.store, a, &turn(1, 0), T0).await); // kept: version 2

    // Sixteen different turns, each checked at version 2: one commits, fifteen are refused.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let store = w.store.clone();
        tasks.spawn(async move {
            commit_checked(&store, a, &turn(2, 1), T0 + 10 + i, 2, &seen()).await
        });
    }
    let (mut won, mut lost) = (0, 0);
    while let Some(joined) = tasks.join_next().await {
        match joined.unwrap() {
            Ok(Applied::Committed(receipt)) => {
                assert_eq!(receipt.version, 3);
                won += 1;
            }
            Err(ApplyError::Domain(DomainError::VersionConflict {
                expected: 2,
                current: 3,
            })) => lost += 1,
            other => panic!("unexpected outcome: {other:?}"),
        }
    }
    assert_eq!((won, lost), (1, 15));

    // Sixteen sends of one turn, checked at version 3: one commits, fifteen replay it.
    let args = turn(3, 2);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let (store, args) = (w.store.clone(), args.clone());
        tasks
            .spawn(async move { commit_checked(&store, a, &args, T0 + 100 + i, 3, &seen()).await });
    }
    let (committed, replayed) = committed_and_replayed(tasks).await;
    assert_eq!((committed.len(), replayed.len()), (1, 15));
    assert!(replayed.iter().all(|r| *r == committed[0]));
    assert_eq!(w.assignment_now().await.version, 4);
    assert_eq!(w.versions(false).await, [2, 3, 4]);
    assert_eq!(w.store.recent_consequences(a, 100).await.unwrap().len(), 3);
}
