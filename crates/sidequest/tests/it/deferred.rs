//! A play token this instance has seen live is authenticated provisionally and confirmed before
//! its request is answered: by a turn's own write (one statement: the guard also checks the
//! token) or by the token check. Revocation, deactivation and expiry still take effect on the
//! next request, and a refused turn writes nothing.

use axum::http::{HeaderMap, header};
use mcp_door::{AuthRequest, Authenticator};
use sidequest::demo::DemoCreated;
use sidequest::domain::play::TurnArgs;
use sidequest::domain::token;
use sidequest::mcp::player::{PlayAuthenticator, PlayGrant, PlayTokens, play_realm};
use sidequest::service::Turn;
use uuid::Uuid;

use crate::read_cache::turn;
use crate::support::{self, Server};

struct Play {
    server: Server,
    world: DemoCreated,
}

impl Play {
    async fn new(url: &str) -> Self {
        let server = support::spawn(url).await;
        let world = support::world(&server, 1).await;
        Self { server, world }
    }

    fn assignment(&self) -> Uuid {
        self.world.assignments[0].0.id
    }

    fn token(&self) -> &str {
        &self.world.assignments[0].1
    }

    /// The assignment's version in the database.
    async fn version(&self) -> i64 {
        self.server
            .store
            .assignment(self.assignment())
            .await
            .unwrap()
            .unwrap()
            .version
    }

    /// A turn over the player door with `token`: its HTTP status.
    async fn commit(&self, token: &str, text: &str) -> u16 {
        let version = self.version().await;
        let r = self
            .server
            .client(token)
            .tool("commit_play_turn", turn(version, text))
            .await;
        if r.status == 200 {
            assert!(!r.is_error(), "{}", r.body);
            assert_eq!(r.json()["version"], version + 1);
        }
        r.status
    }

    /// A turn at the current version, prepared by the service.
    async fn prepared(&self, text: &str) -> Turn {
        let a = &self.world.assignments[0].0;
        let args: TurnArgs = serde_json::from_value(turn(self.version().await, text)).unwrap();
        self.server
            .service
            .prepare_turn(a.id, (a.scenario_id, a.source_version), args, None)
            .await
            .unwrap()
    }

    /// Whether `turn` was written by the one statement that also confirms `token`.
    async fn written_unchecked(&self, turn: &Turn, token: &str) -> bool {
        self.server
            .service
            .commit_unchecked(turn, &token::digest(token))
            .await
            .unwrap()
            .is_some()
    }
}

async fn a_token_seen_live_is_refused_at_its_next_turn_and_the_turn_writes_nothing(url: &str) {
    let p = Play::new(url).await;
    let token = p.token().to_owned();
    // the first turn checks the token; the second is confirmed in its write
    assert_eq!(p.commit(&token, "one").await, 200);
    assert_eq!(p.commit(&token, "two").await, 200);
    for user in [p.world.player.id, p.world.gm.id] {
        p.server.store.set_user_active(user, false).await.unwrap();
        let version = p.version().await;
        assert_eq!(p.commit(&token, "while inactive").await, 401);
        assert_eq!(p.version().await, version, "a refused turn wrote");
        p.server.store.set_user_active(user, true).await.unwrap();
        assert_eq!(p.commit(&token, "active again").await, 200);
    }
    // expired: the clock reaches the token's expiry
    let version = p.version().await;
    p.server.clock.advance_millis(token::PLAY_TOKEN_TTL_MS);
    assert_eq!(p.commit(&token, "expired").await, 401);
    assert_eq!(p.version().await, version);
    // revoked: a new token, seen live twice, then revoked
    let (renewed, _) = p.server.service.issue_token(p.assignment()).await.unwrap();
    assert_eq!(p.commit(&renewed, "renewed").await, 200);
    assert_eq!(p.commit(&renewed, "renewed again").await, 200);
    p.server.service.revoke_token(p.assignment()).await.unwrap();
    let version = p.version().await;
    assert_eq!(p.commit(&renewed, "revoked").await, 401);
    assert_eq!(p.version().await, version);
}

async fn the_write_of_a_turn_on_a_kept_row_confirms_the_token_itself(url: &str) {
    let p = Play::new(url).await;
    let token = p.token().to_owned();
    // no row kept yet on this instance: nothing is tried
    let first = p.prepared("first").await;
    assert!(!p.written_unchecked(&first, &token).await);
    assert_eq!(p.commit(&token, "one").await, 200);
    // kept: decided on the kept row and written in one statement
    let version = p.version().await;
    assert!(p.written_unchecked(&p.prepared("two").await, &token).await);
    assert_eq!(p.version().await, version + 1);
    // not live: nothing written
    let refused = p.prepared("refused").await;
    for user in [p.world.player.id, p.world.gm.id] {
        p.server.store.set_user_active(user, false).await.unwrap();
        assert!(!p.written_unchecked(&refused, &token).await);
        p.server.store.set_user_active(user, true).await.unwrap();
    }
    assert!(!p.written_unchecked(&refused, "sqp_unknown").await);
    p.server.clock.advance_millis(token::PLAY_TOKEN_TTL_MS);
    assert!(!p.written_unchecked(&refused, &token).await);
    p.server.clock.advance_millis(-token::PLAY_TOKEN_TTL_MS);
    p.server.service.revoke_token(p.assignment()).await.unwrap();
    assert!(!p.written_unchecked(&refused, &token).await);
    assert_eq!(p.version().await, version + 1);
    // a row another instance wrote past: the guard's version fails, nothing written
    let (renewed, _) = p.server.service.issue_token(p.assignment()).await.unwrap();
    let other = support::spawn(url).await;
    let r = other
        .client(&renewed)
        .tool("commit_play_turn", turn(version + 1, "elsewhere"))
        .await;
    assert!(!r.is_error(), "{}", r.body);
    let stale = p.prepared("stale").await;
    assert!(!p.written_unchecked(&stale, &renewed).await);
    assert_eq!(p.version().await, version + 2);
}

async fn a_token_is_checked_when_first_seen_and_provisional_after(url: &str) {
    let p = Play::new(url).await;
    let auth = PlayAuthenticator {
        tokens: PlayTokens::new(std::sync::Arc::clone(&p.server.service)),
        realm: play_realm(),
    };
    let mut headers = HeaderMap::new();
    headers.insert(
        header::AUTHORIZATION,
        format!("Bearer {}", p.token()).parse().unwrap(),
    );
    let request = AuthRequest {
        headers: &headers,
        path: "/play/mcp",
        peer: None,
    };
    let first = auth.authenticate(&request).await.unwrap();
    let grant = first.ext::<PlayGrant>().unwrap();
    assert!(grant.is_checked());
    assert_eq!(grant.checked().await.unwrap().version, 1);
    let second = auth.authenticate(&request).await.unwrap();
    let grant = second.ext::<PlayGrant>().unwrap();
    assert!(
        !grant.is_checked(),
        "a token seen live is not checked again at once"
    );
    assert_eq!(grant.facts.assignment_id, p.assignment());
    // confirmed on demand; refused once revoked, and then checked at once again
    auth.confirm(&second).await.unwrap();
    assert!(grant.is_checked());
    p.server.service.revoke_token(p.assignment()).await.unwrap();
    let third = auth.authenticate(&request).await.unwrap();
    assert!(auth.confirm(&third).await.is_err());
    assert!(auth.authenticate(&request).await.is_err());
}

crate::on_both_backends!(
    a_token_seen_live_is_refused_at_its_next_turn_and_the_turn_writes_nothing,
    the_write_of_a_turn_on_a_kept_row_confirms_the_token_itself,
    a_token_is_checked_when_first_seen_and_provisional_after,
);
