//! The author door `/mcp` end to end over a real listener. This module owns what the areas share:
//! author tokens and clients, `setup` (a server, the demo world and the GM's author client; the
//! metrics tests use it too) and the reply assertions; each child module owns one area.

mod authoring;
mod door;
mod limits;
mod review;
mod wiki;

use std::net::SocketAddr;
use std::sync::Arc;

use sidequest::campaign::CampaignService;
use sidequest::demo::{self, DemoCreated};
use sidequest::domain::User;
use sidequest::service::PlayService;
use testkit::mcp::{Client, Reply};
use uuid::Uuid;

use crate::support::{self, Server};

fn campaign(service: &Arc<PlayService>) -> CampaignService {
    CampaignService::new(Arc::clone(service))
}

fn author_client(addr: SocketAddr, token: &str) -> Client {
    Client::new(format!("http://{addr}/mcp"), Some(token.to_owned()))
}

/// A new author token of `user` (id, plaintext).
async fn author_token(service: &Arc<PlayService>, user: &User) -> (Uuid, String) {
    let issued = campaign(service)
        .create_author_token(user, "test")
        .await
        .unwrap();
    assert_eq!(
        sidequest::render::author_token_issued(&issued)["mcp_path"],
        "/mcp"
    );
    (issued.id, issued.token)
}

async fn new_user(server: &Server, username: &str, is_gm: bool) -> User {
    demo::create_user(
        &server.store,
        &server.clock,
        server.service.random.as_ref(),
        username,
        is_gm,
        None,
    )
    .await
    .unwrap()
}

/// A server, the demo world and an author client of its GM.
pub(crate) async fn setup(url: &str) -> (Server, DemoCreated, Client) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 1).await;
    let (_, token) = author_token(&server.service, &world.gm).await;
    let client = author_client(server.addr, &token);
    (server, world, client)
}

fn assert_status(reply: &Reply, prefix: &str) {
    assert!(reply.is_error(), "expected isError, got {}", reply.body);
    let text = reply.text();
    assert!(
        text.starts_with(prefix),
        "expected text starting {prefix:?}, got {text:?}"
    );
}

fn assert_unauthorized(reply: &Reply) {
    assert_eq!(reply.status, 401, "body {}", reply.body);
    assert!(
        reply.header("www-authenticate").starts_with("Bearer"),
        "{:?}",
        reply.header("www-authenticate")
    );
}

fn names(tools: &Reply) -> Vec<String> {
    tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}
