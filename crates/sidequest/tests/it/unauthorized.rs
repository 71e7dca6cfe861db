//! The 401 of both doors explains itself (RFC 6750 §3): no credential at all gets the realm
//! alone; a refused one (unknown, of the other door, expired, revoked) gets
//! `error="invalid_token"` and an `error_description` naming the credential the door needs,
//! and the JSON-RPC error body says the same sentence.

use serde_json::json;
use sidequest::campaign::CampaignService;
use sidequest::domain::token::{AUTHOR_TOKEN_TTL_MS, PLAY_TOKEN_TTL_MS};
use testkit::mcp::{Client, Reply};

use crate::support;

const PLAY_MISSING: &str = "This door needs a play token issued by the GM for one assignment, \
sent as Authorization: Bearer sqp_...";
const PLAY_INVALID: &str = "This door needs a play token issued by the GM for one assignment; \
the token sent is unknown, expired or revoked, or is not a play token.";
const AUTHOR_MISSING: &str = "This door needs an author token from the account page \
(/author-tokens), sent as Authorization: Bearer sqa_...";
const AUTHOR_INVALID: &str = "This door needs an author token from the account page \
(/author-tokens); the token sent is unknown, expired or revoked, is not an author token, or \
its owner is no longer an active GM.";

async fn call(client: &Client) -> Reply {
    client
        .request(
            "tools/call",
            json!({"name": "get_play_context", "arguments": {}}),
        )
        .await
}

/// A request without any credential: 401, the realm alone in the challenge (no error code, no
/// description), and the sentence in the body.
fn assert_missing(reply: &Reply, sentence: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        reply.header("www-authenticate"),
        "Bearer realm=\"sidequest\""
    );
    assert_eq!(reply.body["error"]["code"], -32000);
    assert_eq!(reply.body["error"]["message"], sentence);
}

/// A refused credential: 401, `invalid_token` with the sentence as its description, and the
/// same sentence in the body.
fn assert_invalid(reply: &Reply, sentence: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        reply.header("www-authenticate"),
        format!(
            "Bearer realm=\"sidequest\", error=\"invalid_token\", error_description=\"{sentence}\""
        )
    );
    assert_eq!(reply.body["error"]["message"], sentence);
}

async fn each_refusal_names_the_credential_the_door_needs(url: &str) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 2).await;
    let campaign = CampaignService::new(server.service.clone());
    let author = campaign
        .create_author_token(&world.gm, "test")
        .await
        .unwrap();
    let play_url = server.url();
    let author_url = format!("http://{}/mcp", server.addr);
    let play = |token: Option<&str>| Client::new(play_url.clone(), token.map(str::to_owned));
    let door = |token: Option<&str>| Client::new(author_url.clone(), token.map(str::to_owned));

    // no credential, or a scheme other than Bearer: the realm alone
    assert_missing(&call(&play(None)).await, PLAY_MISSING);
    assert_missing(&call(&door(None)).await, AUTHOR_MISSING);
    let basic = reqwest::Client::new()
        .post(&play_url)
        .header("authorization", "Basic dXNlcjpwYXNz")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);
    assert_eq!(
        basic.headers()["www-authenticate"],
        "Bearer realm=\"sidequest\""
    );

    // unknown, malformed and the other door's credential
    let (_, play_token) = &world.assignments[0];
    for token in [
        "sqp_0000000000000000000000000000000000000000",
        "not a token",
        author.token.as_str(),
    ] {
        assert_invalid(&call(&play(Some(token))).await, PLAY_INVALID);
    }
    for token in ["sqa_0000000000000000000000000000000000000000", play_token] {
        assert_invalid(&call(&door(Some(token))).await, AUTHOR_INVALID);
    }
    // the good ones pass
    assert_eq!(call(&play(Some(play_token))).await.status, 200);
    assert_eq!(
        door(Some(&author.token))
            .request("tools/list", json!({}))
            .await
            .status,
        200
    );

    // revoked: a play token and an author token
    let (second, second_token) = &world.assignments[1];
    server.service.revoke_token(second.id).await.unwrap();
    assert_invalid(&call(&play(Some(second_token))).await, PLAY_INVALID);
    let revoked = campaign
        .create_author_token(&world.gm, "revoked")
        .await
        .unwrap();
    campaign
        .revoke_author_token(&world.gm, revoked.id)
        .await
        .unwrap();
    assert_invalid(
        &door(Some(&revoked.token))
            .request("tools/list", json!({}))
            .await,
        AUTHOR_INVALID,
    );

    // expired: each at exactly its lifetime
    server.clock.advance_millis(PLAY_TOKEN_TTL_MS);
    assert_invalid(&call(&play(Some(play_token))).await, PLAY_INVALID);
    server
        .clock
        .advance_millis(AUTHOR_TOKEN_TTL_MS - PLAY_TOKEN_TTL_MS);
    assert_invalid(
        &door(Some(&author.token))
            .request("tools/list", json!({}))
            .await,
        AUTHOR_INVALID,
    );
}

crate::on_both_backends!(each_refusal_names_the_credential_the_door_needs);
