//! Property tests of argument validation against every published schema, for each of the three
//! kinds of door (person, agent, integration): arguments generated from each tool's
//! `inputSchema` in `tools/list` are accepted by the door's validator (Elixir's own `Catalog`
//! of that kind), and one-step mutations of them (a wrong type, a number out of range, a
//! string one past `maxLength`, an extra or a missing property, a value outside an `enum`,
//! arguments that are not an object) are refused: by the validator, and over HTTP as SURFACE's
//! `bad_request` tool error (`Invalid arguments: …`; JSON-RPC `-32602` when the arguments are
//! not an object) that changes nothing (the account's reads are the same afterwards). Tools
//! marked read-only also get generated valid arguments over HTTP: never a 5xx, always an
//! answer. Both backends.
//!
//! Each door runs on its own UTC day of the fake clock (the daily quota is 500 calls) with a
//! generous hourly rate. Cases and seed come from `testkit::prop`: 16 valid and 16 mutated per
//! tool and kind at the validator (once, on SQLite), 2 mutated (+1 not an object, +1 valid for
//! read-only tools) per tool over HTTP on the person and agent doors (the integration's tools are
//! a subset of the agent's), about 220 calls per backend; `PROPTEST_CASES=N` makes
//! them N/4 and N/32, `PROPTEST_RNG_SEED` picks another seed, and a failure prints both.

use elixir::access::kinds::Kind;
use mcp_door::Catalog;
use serde_json::{Value, json};
use testkit::mcp::{Client, Reply};
use testkit::prop::{DEFAULT_CASES, config, door};

use crate::support::{self, Options, T0};

const DAY_MS: i64 = 86_400_000;

fn counts() -> (usize, usize) {
    let cases = config().cases as usize;
    (cases / 4, (cases / 32).max(DEFAULT_CASES as usize / 32))
}

/// SURFACE §5: a schema violation is the `bad_request` tool error; arguments that are not an
/// object never reach a tool and are JSON-RPC `-32602`.
fn refused(reply: &Reply) -> bool {
    door::refused_with(reply, |r| {
        let body = support::tool_error(r);
        body["error"]["code"] == "bad_request"
            && body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Invalid arguments: "))
    })
}

/// The account as this door reads it, without the per-call `meta`.
async fn state(client: &Client, tools: &[Value]) -> Vec<Value> {
    let mut seen = Vec::new();
    for name in [
        "elixir_my_players",
        "elixir_my_identities",
        "elixir_my_feedback",
    ] {
        if tools.iter().any(|t| t["name"] == name) {
            let mut body = support::success(&client.tool(name, json!({})).await);
            body.as_object_mut().unwrap().remove("meta");
            seen.push(body);
        }
    }
    seen
}

async fn check_door(client: &Client, catalog: Option<&Catalog>, http: bool) {
    let (at_validator, over_http) = counts();
    let over_http = if http { over_http } else { 0 };
    let tools = door::listed_tools(client).await;
    let before = state(client, &tools).await;
    for tool in &tools {
        if let Some(catalog) = catalog {
            door::check_validator(catalog, tool, at_validator);
        }
        door::assert_refused_over_http(client, tool, over_http, over_http.min(1), refused).await;
    }
    assert_eq!(
        state(client, &tools).await,
        before,
        "a refused call changed something"
    );
    for tool in &tools {
        door::assert_read_only_answers(client, tool, over_http / 2).await;
    }
}

async fn every_tool_of_every_door_follows_its_schema(url: &str) {
    let server = support::spawn_with(
        url,
        Options {
            hourly_rate: 100_000,
            ..Options::default()
        },
    )
    .await;
    for (day, kind) in [Kind::Person, Kind::Agent, Kind::Integration]
        .into_iter()
        .enumerate()
    {
        server.clock.set_millis(T0 + day as i64 * DAY_MS);
        // The validator does not depend on the backend: its cases run once, on SQLite.
        let catalog = url.starts_with("sqlite:").then(|| {
            elixir::tools::catalog(&server.state.specs, kind, &server.state.services).unwrap()
        });
        // the integration's tools and schemas are a subset of the agent's: its validator is
        // checked, its HTTP calls would repeat the agent's
        check_door(
            &server.client(kind),
            catalog.as_ref(),
            kind != Kind::Integration,
        )
        .await;
    }
}

crate::on_both_backends!(every_tool_of_every_door_follows_its_schema);
