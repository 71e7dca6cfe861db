//! Store suite, people at a browser and authoring tools: password hashes, sessions, login
//! reservations (their window and a burst of them) and author tokens. Run on both backends by `suite!` in `store.rs`.

use std::collections::BTreeMap;

use sidequest::domain::User;
use sidequest::domain::login::LOGIN_MAX_FAILURES;
use sidequest::store::{
    AuthorGrant, AuthorTokenInfo, LoginReservation, NewAuthorToken, NewSession, SessionRecord,
    SharedStore, StoreError,
};
use uuid::Uuid;

use super::fixtures::*;

pub async fn password_hashes(store: SharedStore) {
    let alice = store.create_user(&new_user("alice", true)).await.unwrap();
    let bob = store.create_user(&new_user("bob", false)).await.unwrap();
    let created = new_user("x", false).password_hash;
    assert_eq!(store.password_hash(alice.id).await.unwrap(), created);

    let changed = "$argon2id$v=19$m=19456,t=2,p=1$bmV3$bmV3aGFzaA";
    store
        .set_password_hash(alice.id, Some(changed))
        .await
        .unwrap();
    assert_eq!(
        store.password_hash(alice.id).await.unwrap().as_deref(),
        Some(changed)
    );
    assert_eq!(
        store.password_hash(bob.id).await.unwrap(),
        created,
        "only alice changes"
    );

    store.set_password_hash(bob.id, None).await.unwrap();
    assert_eq!(store.password_hash(bob.id).await.unwrap(), None);

    let unknown = store.set_password_hash(Uuid::new_v4(), Some(changed)).await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(store.password_hash(Uuid::new_v4()).await.unwrap(), None);
}

fn new_session(digest: &str, user: &User, created_at: i64) -> NewSession {
    NewSession {
        digest: digest.into(),
        user_id: user.id,
        csrf_digest: format!("csrf-of-{digest}"),
        created_at,
        expires_at: created_at + DAY,
    }
}

pub async fn sessions(store: SharedStore) {
    let alice = store.create_user(&new_user("alice", true)).await.unwrap();
    let bob = store.create_user(&new_user("bob", false)).await.unwrap();

    store
        .create_session(&new_session("a1", &alice, T0))
        .await
        .unwrap();
    let a1 = SessionRecord {
        user: alice.clone(),
        csrf_digest: "csrf-of-a1".into(),
        expires_at: T0 + DAY,
    };
    assert_eq!(store.session("a1").await.unwrap(), Some(a1.clone()));
    assert_eq!(
        store.session("A1").await.unwrap(),
        None,
        "digests are exact"
    );
    assert_eq!(store.session("nope").await.unwrap(), None);

    // An expired session is still returned: the caller's clock decides.
    store
        .create_session(&new_session("a2", &alice, T0 - 2 * DAY))
        .await
        .unwrap();
    assert_eq!(
        store.session("a2").await.unwrap().unwrap().expires_at,
        T0 - DAY
    );
    store
        .create_session(&new_session("b1", &bob, T0))
        .await
        .unwrap();

    // The session shows the user as they are now.
    store.set_user_active(alice.id, false).await.unwrap();
    assert!(!store.session("a1").await.unwrap().unwrap().user.active);
    store.set_user_active(alice.id, true).await.unwrap();

    let dup = store.create_session(&new_session("a1", &bob, T0 + 1)).await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    assert_eq!(store.session("a1").await.unwrap(), Some(a1));
    let stranger = User {
        id: Uuid::new_v4(),
        ..bob.clone()
    };
    let unknown = store
        .create_session(&new_session("s1", &stranger, T0))
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");

    store.delete_session("a2").await.unwrap();
    assert_eq!(store.session("a2").await.unwrap(), None);
    store.delete_session("a2").await.unwrap(); // already gone: no error
    assert!(store.session("a1").await.unwrap().is_some());

    store
        .create_session(&new_session("a3", &alice, T0 + 1))
        .await
        .unwrap();
    assert_eq!(store.delete_sessions_of(alice.id).await.unwrap(), 2);
    assert_eq!(store.session("a1").await.unwrap(), None);
    assert_eq!(store.session("a3").await.unwrap(), None);
    assert_eq!(
        store.session("b1").await.unwrap().unwrap().user,
        bob,
        "bob keeps his session"
    );
    assert_eq!(store.delete_sessions_of(alice.id).await.unwrap(), 0);

    // A new session deletes those expired by its start (expires_at <= created_at), no others.
    store
        .create_session(&new_session("b2", &bob, T0 + 1))
        .await
        .unwrap();
    store
        .create_session(&new_session("e1", &bob, T0 + DAY))
        .await
        .unwrap();
    assert_eq!(
        store.session("b1").await.unwrap(),
        None,
        "expired at T0 + DAY"
    );
    assert!(
        store.session("b2").await.unwrap().is_some(),
        "expires at T0 + DAY + 1"
    );
    assert!(store.session("e1").await.unwrap().is_some());
}

fn keys(username: &str, address: &str) -> Vec<String> {
    vec![format!("user:{username}"), format!("ip:{address}")]
}

/// Reserves at `at`, counting failures at or after `since`, with a limit of `max`.
async fn reserve(
    store: &SharedStore,
    keys: &[String],
    at: i64,
    since: i64,
    max: i64,
) -> Option<LoginReservation> {
    store
        .reserve_login_attempt(keys, at, since, max)
        .await
        .unwrap()
}

async fn count(store: &SharedStore, key: &str, since: i64) -> i64 {
    store.login_failures_since(key, since).await.unwrap()
}

pub async fn login_reservations(store: SharedStore) {
    let alice = keys("alice", "10.0.0.1");
    let mut seen = Vec::new();
    for (i, at) in [T0, T0 + 10, T0 + 20].into_iter().enumerate() {
        let r = reserve(&store, &alice, at, T0, 3)
            .await
            .expect("under the limit");
        assert_eq!(r.failures, i as i64 + 1, "this attempt counted");
        assert_eq!(
            r.rows.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["user:alice", "ip:10.0.0.1"]
        );
        seen.extend(r.rows.iter().map(|(_, id)| *id));
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 6, "one row per key and attempt");

    // the window includes its start
    assert_eq!(count(&store, "user:alice", T0).await, 3);
    assert_eq!(count(&store, "user:alice", T0 + 10).await, 2);
    assert_eq!(count(&store, "user:alice", T0 + 11).await, 1);
    assert_eq!(count(&store, "user:alice", T0 + 21).await, 0);
    assert_eq!(count(&store, "User:alice", 0).await, 0, "keys are exact");

    // at the limit for either key: refused, and nothing is written for any key
    assert_eq!(reserve(&store, &alice, T0 + 30, T0, 3).await, None);
    assert_eq!(
        reserve(&store, &keys("alice", "10.0.0.2"), T0 + 30, T0, 3).await,
        None
    );
    assert_eq!(
        reserve(&store, &keys("bob", "10.0.0.1"), T0 + 30, T0, 3).await,
        None
    );
    assert_eq!(count(&store, "user:alice", 0).await, 3);
    assert_eq!(count(&store, "ip:10.0.0.1", 0).await, 3);
    assert_eq!(count(&store, "ip:10.0.0.2", 0).await, 0);
    assert_eq!(count(&store, "user:bob", 0).await, 0);
    // once the window moves past the oldest failure, one more is admitted
    let r = reserve(&store, &alice, T0 + 30, T0 + 1, 3)
        .await
        .expect("T0 aged out");
    assert_eq!(r.failures, 3);

    // the right password gives its reservation back and ends the username's run; the
    // address's earlier failures stay, and so does an attempt reserved after it
    let carol = keys("carol", "10.0.0.7");
    reserve(&store, &carol, T0, T0, 10).await.unwrap();
    let right = reserve(&store, &carol, T0 + 1, T0, 10).await.unwrap();
    let later = reserve(&store, &carol, T0 + 2, T0, 10).await.unwrap();
    assert_eq!(later.failures, 3);
    store
        .release_login_reservation(&right, "user:carol")
        .await
        .unwrap();
    assert_eq!(
        count(&store, "user:carol", 0).await,
        1,
        "only the later attempt"
    );
    assert_eq!(
        count(&store, "ip:10.0.0.7", 0).await,
        2,
        "the first and the later"
    );
    assert_eq!(
        count(&store, "user:alice", 0).await,
        4,
        "other keys untouched"
    );
    store
        .release_login_reservation(&later, "user:carol")
        .await
        .unwrap();
    assert_eq!(count(&store, "user:carol", 0).await, 0);
    assert_eq!(count(&store, "ip:10.0.0.7", 0).await, 1);

    // failures older than a day are pruned as new attempts arrive
    let dave = keys("dave", "10.0.0.8");
    reserve(&store, &dave, T0 + 25 + DAY, T0 + DAY, 10)
        .await
        .unwrap();
    assert_eq!(count(&store, "user:alice", 0).await, 1, "T0 + 30 is kept");
    assert_eq!(count(&store, "ip:10.0.0.7", 0).await, 0);
    assert_eq!(count(&store, "user:dave", 0).await, 1);
}

/// Many attempts at once, as a burst of logins makes them: exactly the limit is reserved,
/// each attempt seeing a distinct count, for one username from one address and for one
/// username from as many addresses as attempts.
pub async fn login_reservation_burst(store: SharedStore) {
    const BURST: usize = 200;
    let max = LOGIN_MAX_FAILURES;
    let mut attempts = tokio::task::JoinSet::new();
    for i in 0..BURST {
        for keys in [
            keys("alice", "10.0.0.1"),
            keys("bob", &format!("10.1.{}.{}", i / 250, i % 250)),
        ] {
            let store = store.clone();
            attempts.spawn(async move {
                let r = reserve(&store, &keys, T0, T0, max).await;
                (keys[0].clone(), r.map(|r| r.failures))
            });
        }
    }
    let mut admitted: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut refused = 0;
    while let Some(done) = attempts.join_next().await {
        match done.unwrap() {
            (user, Some(failures)) => admitted.entry(user).or_default().push(failures),
            (_, None) => refused += 1,
        }
    }
    for user in ["user:alice", "user:bob"] {
        let mut counts = admitted.remove(user).unwrap_or_default();
        counts.sort_unstable();
        assert_eq!(counts, (1..=max).collect::<Vec<_>>(), "{user}");
        assert_eq!(count(&store, user, 0).await, max, "{user}");
    }
    assert_eq!(refused, 2 * BURST - 2 * max as usize);
    assert_eq!(count(&store, "ip:10.0.0.1", 0).await, max);
}

fn new_token(user: &User, name: &str, created_at: i64) -> NewAuthorToken {
    NewAuthorToken {
        id: Uuid::new_v4(),
        user_id: user.id,
        name: name.into(),
        digest: format!("digest-of-{name}"),
        created_at,
        expires_at: created_at + 30 * DAY,
    }
}

fn info(token: &NewAuthorToken, revoked_at: Option<i64>) -> AuthorTokenInfo {
    AuthorTokenInfo {
        id: token.id,
        name: token.name.clone(),
        created_at: token.created_at,
        expires_at: token.expires_at,
        revoked_at,
    }
}

pub async fn author_tokens(store: SharedStore) {
    let gm = store.create_user(&new_user("gm", true)).await.unwrap();
    let other = store.create_user(&new_user("other", true)).await.unwrap();
    let laptop = new_token(&gm, "laptop", T0);
    let desktop = new_token(&gm, "desktop", T0 + 1);
    let theirs = new_token(&other, "theirs", T0 + 2);
    for t in [&laptop, &desktop, &theirs] {
        store.create_author_token(t).await.unwrap();
    }

    assert_eq!(
        store.author_tokens(gm.id).await.unwrap(),
        [info(&desktop, None), info(&laptop, None)],
        "newest first, only the gm's"
    );
    assert_eq!(
        store.author_tokens(other.id).await.unwrap(),
        [info(&theirs, None)]
    );
    assert_eq!(store.author_tokens(Uuid::new_v4()).await.unwrap(), []);

    let grant = AuthorGrant {
        token_id: laptop.id,
        user: gm.clone(),
        expires_at: T0 + 30 * DAY,
        revoked: false,
    };
    assert_eq!(
        store.author_token("digest-of-laptop").await.unwrap(),
        Some(grant.clone())
    );
    assert_eq!(store.author_token("nope").await.unwrap(), None);

    // Only the owner revokes, and only once.
    assert!(
        !store
            .revoke_author_token(gm.id, theirs.id, T0 + 5)
            .await
            .unwrap()
    );
    assert!(
        !store
            .author_token("digest-of-theirs")
            .await
            .unwrap()
            .unwrap()
            .revoked
    );
    assert!(
        store
            .revoke_author_token(gm.id, laptop.id, T0 + 5)
            .await
            .unwrap()
    );
    assert!(
        !store
            .revoke_author_token(gm.id, laptop.id, T0 + 6)
            .await
            .unwrap(),
        "already revoked"
    );
    assert!(
        !store
            .revoke_author_token(gm.id, Uuid::new_v4(), T0 + 6)
            .await
            .unwrap()
    );
    assert_eq!(
        store.author_token("digest-of-laptop").await.unwrap(),
        Some(AuthorGrant {
            revoked: true,
            ..grant.clone()
        })
    );
    assert_eq!(
        store.author_tokens(gm.id).await.unwrap(),
        [info(&desktop, None), info(&laptop, Some(T0 + 5))],
        "the first revocation time stays"
    );

    // The grant shows the user as they are now.
    store.set_user_active(gm.id, false).await.unwrap();
    let desktop_grant = store
        .author_token("digest-of-desktop")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(desktop_grant.token_id, desktop.id);
    assert!(!desktop_grant.user.active);
    assert!(!desktop_grant.revoked);

    let dup = store
        .create_author_token(&NewAuthorToken {
            id: Uuid::new_v4(),
            ..laptop.clone()
        })
        .await;
    assert!(matches!(dup, Err(StoreError::Conflict(_))), "{dup:?}");
    let stranger = User {
        id: Uuid::new_v4(),
        ..gm.clone()
    };
    let unknown = store
        .create_author_token(&new_token(&stranger, "ghost", T0))
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
    assert_eq!(store.author_token("digest-of-ghost").await.unwrap(), None);
}
