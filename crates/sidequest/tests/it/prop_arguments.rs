//! Property tests of argument validation against every published schema of both doors: for
//! each tool `tools/list` shows the player door and the author door, arguments generated from
//! its `inputSchema` are accepted by the door's validator (the product's own `Catalog`), and
//! one-step mutations of them (a wrong type, a number out of range, a string one past
//! `maxLength`, an extra or a missing property, a value outside an `enum`, arguments that are
//! not an object) are refused: by the validator, and over HTTP as the contract's `422: Invalid
//! arguments: <pointer>: <reason>` tool error (JSON-RPC `-32602` when the arguments are not an
//! object) that changes nothing (the assignment, the scenarios and the wiki read the same afterwards).
//! Read-only tools also get generated valid arguments over HTTP: never a 5xx, always a
//! JSON-RPC answer. Both backends.
//!
//! Cases and seed come from `testkit::prop`: 32 valid and 32 mutated per tool at the validator
//! (once, on SQLite: the validator does not depend on the backend), 4 mutated (+2 not objects,
//! +4 valid for read-only tools) per tool over HTTP, about 200 calls per backend.
//! `PROPTEST_CASES=N` makes it N/2 and N/16, `PROPTEST_RNG_SEED` picks another seed, and a
//! failure prints both.

use std::sync::Arc;

use mcp_door::Catalog;
use serde_json::json;
use sidequest::campaign::CampaignService;
use testkit::mcp::{Client, Reply};
use testkit::prop::{DEFAULT_CASES, config, door};

use crate::support;

/// Validator cases per tool and HTTP cases per tool.
fn counts() -> (usize, usize) {
    let cases = config().cases as usize;
    (cases / 2, (cases / 16).max(DEFAULT_CASES as usize / 16))
}

/// Sidequest's refusal of arguments (CONTRACT-NOTES): a tool result with `isError: true` and
/// the text `422: Invalid arguments: <pointer>: <reason>`; arguments that are not an object at
/// all are a JSON-RPC `-32602` (no tool is reached).
fn refused(reply: &Reply) -> bool {
    door::refused_with(reply, |r| r.text().starts_with("422: Invalid arguments: "))
}

/// What the doors show of the state a refused call must leave alone.
async fn state(player: &Client, author: &Client) -> Vec<String> {
    let mut seen = vec![player.tool("get_play_context", json!({})).await.text()];
    for tool in ["list_scenarios", "list_assignments", "wiki_list_pages"] {
        seen.push(author.tool(tool, json!({})).await.text());
    }
    seen
}

async fn check_door(client: &Client, catalog: Option<&Catalog>, player: &Client, author: &Client) {
    let (at_validator, over_http) = counts();
    for tool in &door::listed_tools(client).await {
        if let Some(catalog) = catalog {
            door::check_validator(catalog, tool, at_validator);
        }
        let before = state(player, author).await;
        door::assert_refused_over_http(client, tool, over_http, 2, refused).await;
        assert_eq!(
            state(player, author).await,
            before,
            "{}: a refused call changed something",
            door::name_of(tool)
        );
        door::assert_read_only_answers(client, tool, over_http).await;
    }
}

async fn every_tool_of_both_doors_follows_its_schema(url: &str) {
    let server = support::spawn(url).await;
    let world = support::world(&server, 1).await;
    let campaign = Arc::new(CampaignService::new(server.service.clone()));
    let issued = campaign
        .create_author_token(&world.gm, "properties")
        .await
        .unwrap();
    let author = Client::new(format!("http://{}/mcp", server.addr), Some(issued.token));
    let player = server.client(&world.assignments[0].1);
    // The validator does not depend on the backend: its cases run once, on SQLite.
    let (player_catalog, author_catalog) = if url.starts_with("sqlite:") {
        (
            Some(
                sidequest::mcp::player::catalog(
                    server.service.clone(),
                    sidequest::mcp::answers::ReadCache::new(0),
                )
                .unwrap(),
            ),
            Some(sidequest::mcp::author::catalog(campaign).unwrap()),
        )
    } else {
        (None, None)
    };
    check_door(&player, player_catalog.as_ref(), &player, &author).await;
    check_door(&author, author_catalog.as_ref(), &player, &author).await;
}

crate::on_both_backends!(every_tool_of_both_doors_follows_its_schema);
