//! The tracking and record areas of the store on both backends: slot allowances that hold
//! under a parallel burst, primaries, nicknames, write-once identities, schedule leases that
//! two recorders never both win, idempotent battle ingest (one battle seen from both logs is
//! one row with two observations, and the second sighting fills only what was missing), and
//! clan stints.

use std::sync::Arc;

use elixir::access::kinds::Tier;
use elixir::model::{
    Account, BattleSide, ClanRow, ClanScope, MemberSeen, NewBattle, PollDone, PollEndpoint,
    Principal, Relationship, TrackClan, TrackPlayer, TrackResult,
};
use elixir::store::{self, BattleQuery, Bound, Identity, SharedStore};
use serde_json::json;
use uuid::Uuid;

use crate::on_both_backends;

const T: i64 = 1_790_000_000_000;

async fn open(url: &str) -> SharedStore {
    let store = store::connect(url, &elixir::app::ServeConfig::default().server.db)
        .await
        .unwrap();
    store.migrate().await.unwrap();
    store
}

async fn account(store: &SharedStore) -> Uuid {
    let id = Uuid::new_v4();
    store
        .create_account(&Account {
            id,
            email: Some(format!("{id}@example.test")),
            tier: Tier::Member,
            timezone: "UTC".into(),
            primary_player_tag: None,
            created_at: T,
        })
        .await
        .unwrap();
    id
}

fn track(account: Uuid, tag: &str, relationship: Relationship, max: Option<i64>) -> TrackPlayer {
    TrackPlayer {
        account_id: account,
        principal: Principal::Person,
        player_tag: tag.into(),
        relationship,
        max_players: max,
        at: T,
    }
}

/// Tag `n` in the tag alphabet.
fn tag(n: usize) -> String {
    const ALPHABET: &[u8] = b"0289PYLQGRJCUV";
    let mut body = String::new();
    let mut n = n + ALPHABET.len() * ALPHABET.len();
    while n > 0 {
        body.push(ALPHABET[n % ALPHABET.len()] as char);
        n /= ALPHABET.len();
    }
    format!("#{body}")
}

async fn slots_hold_at_the_bound_and_under_a_burst(url: &str) {
    let store = open(url).await;
    let id = account(&store).await;
    for n in 0..3 {
        let r = store
            .track_player(&track(id, &tag(n), Relationship::Watching, Some(3)))
            .await
            .unwrap();
        assert_eq!(r, TrackResult::Changed { demoted: None });
    }
    // One past the bound.
    let r = store
        .track_player(&track(id, &tag(3), Relationship::Watching, Some(3)))
        .await
        .unwrap();
    assert_eq!(r, TrackResult::NoSlot);
    // Re-adding an existing one takes no slot.
    let r = store
        .track_player(&track(id, &tag(0), Relationship::Watching, Some(3)))
        .await
        .unwrap();
    assert_eq!(r, TrackResult::Unchanged);

    // A burst of 40 distinct tags against an allowance of 10 on a fresh account.
    let burst = account(&store).await;
    let mut calls = Vec::new();
    for n in 0..40 {
        let store = Arc::clone(&store);
        calls.push(tokio::spawn(async move {
            store
                .track_player(&track(
                    burst,
                    &tag(100 + n),
                    Relationship::Watching,
                    Some(10),
                ))
                .await
        }));
    }
    let mut changed = 0;
    let mut refused = 0;
    for call in calls {
        match call.await.unwrap() {
            Ok(TrackResult::Changed { .. }) => changed += 1,
            Ok(TrackResult::NoSlot) => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((changed, refused), (10, 30));
    assert_eq!(store.slot_use(burst).await.unwrap().players, 10);
}

async fn a_new_primary_demotes_the_old_one(url: &str) {
    let store = open(url).await;
    let id = account(&store).await;
    store
        .track_player(&track(id, &tag(1), Relationship::Primary, None))
        .await
        .unwrap();
    assert_eq!(
        store.account(id).await.unwrap().unwrap().primary_player_tag,
        Some(tag(1))
    );
    let r = store
        .track_player(&track(id, &tag(2), Relationship::Primary, None))
        .await
        .unwrap();
    assert_eq!(
        r,
        TrackResult::Changed {
            demoted: Some(tag(1))
        }
    );
    let list = store.tracked_players(id, Principal::Person).await.unwrap();
    let rel: Vec<_> = list
        .iter()
        .map(|p| (p.player_tag.clone(), p.relationship))
        .collect();
    assert_eq!(
        rel,
        vec![(tag(2), Relationship::Primary), (tag(1), Relationship::Alt)]
    );
    // An agent's list is its own.
    let agent = Principal::Agent(Uuid::new_v4());
    assert!(store.tracked_players(id, agent).await.unwrap().is_empty());
    // Removing the primary clears the account's primary and unschedules the player.
    assert_eq!(store.polls_of(&tag(2)).await.unwrap().len(), 2);
    assert!(
        store
            .untrack_player(id, Principal::Person, &tag(2))
            .await
            .unwrap()
    );
    assert!(
        !store
            .untrack_player(id, Principal::Person, &tag(2))
            .await
            .unwrap()
    );
    assert_eq!(
        store.account(id).await.unwrap().unwrap().primary_player_tag,
        None
    );
    assert!(store.polls_of(&tag(2)).await.unwrap().is_empty());
    assert_eq!(store.polls_of(&tag(1)).await.unwrap().len(), 2);
    // Notify toggles report whether they changed.
    assert_eq!(
        store
            .set_player_notify(id, Principal::Person, &tag(1), false)
            .await
            .unwrap(),
        Some(true)
    );
    assert_eq!(
        store
            .set_player_notify(id, Principal::Person, &tag(1), false)
            .await
            .unwrap(),
        Some(false)
    );
    assert_eq!(
        store
            .set_player_notify(id, Principal::Person, &tag(9), false)
            .await
            .unwrap(),
        None
    );
}

async fn clan_slots_count_per_scope(url: &str) {
    let store = open(url).await;
    let id = account(&store).await;
    let clan = |t: &str, scope, max| TrackClan {
        account_id: id,
        principal: Principal::Person,
        clan_tag: t.into(),
        scope,
        max_of_scope: max,
        at: T,
    };
    assert_eq!(
        store
            .track_clan(&clan("#9YJUPU9", ClanScope::Activity, Some(1)))
            .await
            .unwrap(),
        TrackResult::Changed { demoted: None }
    );
    assert_eq!(
        store
            .track_clan(&clan("#9YJUPU8", ClanScope::Activity, Some(1)))
            .await
            .unwrap(),
        TrackResult::NoSlot
    );
    assert_eq!(
        store
            .track_clan(&clan("#9YJUPU9", ClanScope::Activity, Some(1)))
            .await
            .unwrap(),
        TrackResult::Unchanged
    );
    let used = store.slot_use(id).await.unwrap();
    assert_eq!((used.clans_activity, used.clans_comprehensive), (1, 0));
    // Another account tracks the same clan comprehensively: the widest scope wins.
    let other = account(&store).await;
    store
        .track_clan(&TrackClan {
            account_id: other,
            principal: Principal::Person,
            clan_tag: "#9YJUPU9".into(),
            scope: ClanScope::Comprehensive,
            max_of_scope: None,
            at: T,
        })
        .await
        .unwrap();
    assert_eq!(
        store.recorded_clans().await.unwrap(),
        vec![("#9YJUPU9".to_owned(), None, "comprehensive".to_owned())]
    );
    store
        .untrack_clan(other, Principal::Person, "#9YJUPU9")
        .await
        .unwrap();
    assert_eq!(store.polls_of("#9YJUPU9").await.unwrap().len(), 1);
    assert!(
        store
            .untrack_clan(id, Principal::Person, "#9YJUPU9")
            .await
            .unwrap()
    );
    assert!(store.polls_of("#9YJUPU9").await.unwrap().is_empty());
}

async fn nicknames_and_identities(url: &str) {
    let store = open(url).await;
    let id = account(&store).await;
    let p = Principal::Person;
    assert_eq!(
        store
            .set_nickname(id, p, &tag(1), Some("Bob"), T)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .set_nickname(id, p, &tag(1), Some("Rob"), T)
            .await
            .unwrap(),
        Some("Bob".into())
    );
    assert_eq!(
        store.nicknames(id, p).await.unwrap(),
        vec![(tag(1), "Rob".to_owned())]
    );
    assert_eq!(
        store.set_nickname(id, p, &tag(1), None, T).await.unwrap(),
        Some("Rob".into())
    );
    assert!(store.nicknames(id, p).await.unwrap().is_empty());

    let agent = store_agent(&store, id).await;
    let identity = |player: &str, name: Option<&str>| Identity {
        external_id: "discord:42".into(),
        player_tag: player.into(),
        display_name: name.map(str::to_owned),
        bound_at: T,
    };
    assert!(matches!(
        store
            .bind_identity(agent, &identity(&tag(1), None))
            .await
            .unwrap(),
        Bound::Created(_)
    ));
    match store
        .bind_identity(agent, &identity(&tag(1), Some("Ann")))
        .await
        .unwrap()
    {
        Bound::Existing(i) => assert_eq!(i.display_name.as_deref(), Some("Ann")),
        other => panic!("{other:?}"),
    }
    match store
        .bind_identity(agent, &identity(&tag(2), None))
        .await
        .unwrap()
    {
        Bound::Conflict(i) => assert_eq!(i.player_tag, tag(1)),
        other => panic!("{other:?}"),
    }
    let (page, total) = store.identities(agent, 10, 0).await.unwrap();
    assert_eq!((page.len(), total), (1, 1));
    let (page, total) = store.identities(agent, 10, 5).await.unwrap();
    assert_eq!((page.len(), total), (0, 1));
    assert!(store.identity(agent, "discord:43").await.unwrap().is_none());
}

async fn store_agent(store: &SharedStore, owner: Uuid) -> Uuid {
    let issued = elixir::admin::create_agent(
        store,
        &elixir::access::kinds::OsRandom,
        T,
        owner,
        "bot",
        elixir::access::kinds::Kind::Agent,
    )
    .await
    .unwrap();
    store
        .set_agent_clan(issued.agent.id, Some("#9YJUPU9"))
        .await
        .unwrap();
    assert_eq!(
        store
            .agent(issued.agent.id)
            .await
            .unwrap()
            .unwrap()
            .clan_tag
            .as_deref(),
        Some("#9YJUPU9")
    );
    issued.agent.id
}

async fn two_recorders_never_lease_one_subject(url: &str) {
    let store = open(url).await;
    let id = account(&store).await;
    for n in 0..20 {
        store
            .track_player(&track(id, &tag(n), Relationship::Watching, None))
            .await
            .unwrap();
    }
    let due = store.due_polls(T, 100).await.unwrap();
    assert_eq!(due.len(), 40);
    let mut calls = Vec::new();
    for owner in ["a", "b", "c", "d"] {
        let store = Arc::clone(&store);
        let due = due.clone();
        calls.push(tokio::spawn(async move {
            let mut won = Vec::new();
            for p in &due {
                if store
                    .lease_read(p.endpoint, &p.subject, owner, T, T + 60_000)
                    .await
                    .unwrap()
                {
                    won.push((p.endpoint, p.subject.clone()));
                }
            }
            won
        }));
    }
    let mut all = Vec::new();
    for call in calls {
        all.extend(call.await.unwrap());
    }
    assert_eq!(all.len(), 40, "every row leased exactly once");
    all.sort_by(|a, b| (a.0.as_str(), &a.1).cmp(&(b.0.as_str(), &b.1)));
    all.dedup();
    assert_eq!(all.len(), 40);
    assert!(store.due_polls(T, 100).await.unwrap().is_empty());
    // Finishing releases the lease and sets the next read.
    let first = &due[0];
    let owner = {
        let polls = store.polls_of(&first.subject).await.unwrap();
        polls
            .iter()
            .find(|p| p.endpoint == first.endpoint)
            .unwrap()
            .lease_owner
            .clone()
            .unwrap()
    };
    store
        .finish_read(
            first.endpoint,
            &first.subject,
            &owner,
            &PollDone {
                next_at: T + 1_800_000,
                reason: "productive".into(),
                read_at: T,
                status: Some(200),
                failures: 0,
                empty_reads: 0,
                held_until: None,
                not_found: false,
                fastest_fill_ms: None,
            },
        )
        .await
        .unwrap();
    let polls = store.polls_of(&first.subject).await.unwrap();
    let row = polls.iter().find(|p| p.endpoint == first.endpoint).unwrap();
    assert_eq!(
        (row.next_at, row.lease_owner.as_deref()),
        (T + 1_800_000, None)
    );
    assert_eq!(row.reason, "productive");
    let _ = PollEndpoint::Battlelog;
}

fn battle(
    id: &str,
    time: i64,
    observer: &str,
    opponent: &str,
    body: serde_json::Value,
) -> NewBattle {
    NewBattle {
        battle_id: id.into(),
        battle_time: time,
        battle_type: "PvP".into(),
        mode: "ladder".into(),
        game_mode_id: Some(72_000_006),
        body: body.to_string(),
        views: Vec::new(),
        observer: BattleSide {
            player_tag: observer.into(),
            side: "team".into(),
            outcome: Some("win".into()),
            crowns: Some(3),
            trophy_change: Some(30),
            deck_hash: Some("ab".repeat(32)),
            opponent_tag: Some(opponent.into()),
            clan_tag: None,
        },
        games: Vec::new(),
    }
}

async fn ingest_is_idempotent_and_one_battle_is_one_row(url: &str) {
    let store = open(url).await;
    let (a, b) = (tag(1), tag(2));
    let from_a = vec![
        battle(
            "b1",
            T,
            &a,
            &b,
            json!({"battle_id": "b1", "arena": null,
                   "team": [{"tag": a, "king_tower_hp": null}], "opponent": [{"tag": b}]}),
        ),
        battle("b2", T + 60_000, &a, "#QQQ", json!({"battle_id": "b2"})),
    ];
    let first = store
        .ingest_battles(&a, Some("Ann"), T + 100_000, &from_a)
        .await
        .unwrap();
    assert_eq!(
        (
            first.new_battles,
            first.new_observations,
            first.previous_newest
        ),
        (2, 2, None)
    );
    // The same log again: nothing new.
    let again = store
        .ingest_battles(&a, Some("Ann"), T + 200_000, &from_a)
        .await
        .unwrap();
    assert_eq!(
        (
            again.new_battles,
            again.new_observations,
            again.previous_newest
        ),
        (0, 0, Some(T + 60_000))
    );
    // b1 from b's log: one more observation of the same battle, which fills what was null.
    let mut from_b = battle(
        "b1",
        T,
        &b,
        &a,
        json!({"battle_id": "b1", "arena": {"id": 54000000, "name": "Legendary Arena"},
               "team": [{"tag": b, "crowns": 0}], "opponent": [{"tag": a, "king_tower_hp": 4824}]}),
    );
    from_b.observer.side = "team".into();
    from_b.observer.outcome = Some("loss".into());
    let third = store
        .ingest_battles(&b, Some("Bob"), T + 300_000, &[from_b])
        .await
        .unwrap();
    assert_eq!((third.new_battles, third.new_observations), (0, 1));
    let a_view = store.battles(&a, &BattleQuery::default()).await.unwrap();
    assert_eq!(
        a_view
            .iter()
            .map(|x| x.battle_id.as_str())
            .collect::<Vec<_>>(),
        vec!["b2", "b1"],
        "newest first"
    );
    let b_view = store.battles(&b, &BattleQuery::default()).await.unwrap();
    assert_eq!(b_view.len(), 1);
    assert_eq!(b_view[0].side.outcome.as_deref(), Some("loss"));
    let body: serde_json::Value = serde_json::from_str(&b_view[0].body).unwrap();
    assert_eq!(body["arena"]["id"], 54000000, "a missing field is filled");
    assert_eq!(
        body["team"][0]["king_tower_hp"], 4824,
        "matched by tag across sides"
    );
    assert_eq!(body["opponent"][0]["crowns"], 0);
    assert_eq!(store.corpus_counts(T + 400_000).await.unwrap().battles, 2);
    // Filters and the cursor.
    let q = BattleQuery {
        before: Some((T + 60_000, "b2".into())),
        ..BattleQuery::default()
    };
    let older = store.battles(&a, &q).await.unwrap();
    assert_eq!(older.len(), 1);
    assert_eq!(older[0].battle_id, "b1");
    let q = BattleQuery {
        opponent_tag: Some(b.clone()),
        modes: Some(vec!["ladder".into()]),
        ..BattleQuery::default()
    };
    assert_eq!(store.count_battles(&a, &q).await.unwrap(), 1);
    let q = BattleQuery {
        modes: Some(vec![]),
        ..BattleQuery::default()
    };
    assert_eq!(store.count_battles(&a, &q).await.unwrap(), 0);
    assert_eq!(store.battle_span(&a).await.unwrap(), Some((T, T + 60_000)));
    assert_eq!(store.player(&a).await.unwrap().unwrap().name, "Ann");
    assert_eq!(store.search_players("an", 10).await.unwrap().len(), 1);
    assert_eq!(
        store.log_reads(&a, T, T + 1_000_000).await.unwrap().len(),
        2
    );
}

/// Eight logs stored at once (as several instances' recorders would), every one holding the
/// same 16 battles and 4 of its own: each shared battle is one row with eight observations,
/// and no writer fails (no deadlock, no duplicate) whichever inserts a battle first.
async fn logs_stored_at_once_share_their_battles(url: &str) {
    let store = open(url).await;
    let shared: Vec<String> = (0..16).map(|i| format!("shared-{i:02}")).collect();
    let mut writers = tokio::task::JoinSet::new();
    for p in 0..8 {
        let store = store.clone();
        let shared = shared.clone();
        writers.spawn(async move {
            let me = tag(10 + p);
            // each log lists the shared battles in an order of its own
            let mut log: Vec<NewBattle> = shared
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    let body = json!({"battle_id": id, "team": [{"tag": me}]});
                    battle(id, T + i as i64 * 1_000, &me, "#QQQ", body)
                })
                .collect();
            log.rotate_left(p * 2);
            for own in 0..4 {
                let id = format!("own-{p}-{own}");
                let body = json!({"battle_id": id});
                log.push(battle(&id, T + 100_000 + own as i64, &me, "#QQQ", body));
            }
            store.ingest_battles(&me, None, T + 500_000, &log).await
        });
    }
    let mut new_battles = 0;
    for done in writers.join_all().await {
        let ingested = done.unwrap();
        assert_eq!(ingested.new_observations, 20);
        new_battles += ingested.new_battles;
    }
    assert_eq!(
        new_battles,
        16 + 8 * 4,
        "each battle is new to exactly one log"
    );
    assert_eq!(
        store.corpus_counts(T + 600_000).await.unwrap().battles,
        16 + 8 * 4
    );
    for p in 0..8 {
        let q = BattleQuery::default();
        assert_eq!(store.count_battles(&tag(10 + p), &q).await.unwrap(), 20);
    }
}

async fn clan_stints_open_and_close(url: &str) {
    let store = open(url).await;
    let row = ClanRow {
        tag: "#9YJUPU9".into(),
        name: "Clan".into(),
        profile: None,
        observed_at: Some(T),
        first_seen_at: T,
    };
    let seen = |tags: &[usize]| {
        tags.iter()
            .map(|n| MemberSeen {
                player_tag: tag(*n),
                name: format!("p{n}"),
                role: Some("member".into()),
                last_seen_at: Some(T),
            })
            .collect::<Vec<_>>()
    };
    let (joined, left) = store.put_clan(&row, &seen(&[1, 2]), T).await.unwrap();
    assert_eq!((joined.len(), left.len()), (2, 0));
    let (joined, left) = store.put_clan(&row, &seen(&[2, 3]), T + 10).await.unwrap();
    assert_eq!((joined, left), (vec![tag(3)], vec![tag(1)]));
    let stints = store.memberships("#9YJUPU9", T).await.unwrap();
    assert_eq!(stints.len(), 3);
    let gone = stints.iter().find(|m| m.player_tag == tag(1)).unwrap();
    assert_eq!(gone.left_observed_at, Some(T + 10));
    // Coming back opens a new stint.
    store
        .put_clan(&row, &seen(&[1, 2, 3]), T + 20)
        .await
        .unwrap();
    let back = store.clans_of(&tag(1)).await.unwrap();
    assert_eq!(back[0].joined_observed_at, T + 20);
    assert_eq!(store.clan("#9YJUPU9").await.unwrap().unwrap().name, "Clan");
}

on_both_backends!(
    slots_hold_at_the_bound_and_under_a_burst,
    a_new_primary_demotes_the_old_one,
    clan_slots_count_per_scope,
    nicknames_and_identities,
    two_recorders_never_lease_one_subject,
    ingest_is_idempotent_and_one_battle_is_one_row,
    logs_stored_at_once_share_their_battles,
    clan_stints_open_and_close,
);
