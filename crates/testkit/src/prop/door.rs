//! The argument properties both products check on each tool of a door, over its published
//! `inputSchema`: generated valid arguments pass the product's own validator and one-step
//! mutations do not ([`check_validator`]); mutated arguments and arguments that are not an
//! object are refused over HTTP in the product's own way ([`assert_refused_over_http`]); valid
//! arguments to a read-only tool always get an answer, never a 5xx
//! ([`assert_read_only_answers`]). How many cases, what a refusal looks like and what state a
//! refusal must leave alone are the product's.

use mcp_door::Catalog;
use serde_json::{Value, json};

use crate::mcp::{Client, Reply};
use crate::prop::{sample, schema};

/// `tool`'s name (from a `tools/list` entry).
pub fn name_of(tool: &Value) -> &str {
    tool["name"].as_str().expect("a tool name")
}

/// `n` generated valid arguments of `tool` pass `catalog`'s validator and `n` one-step
/// mutations of them are refused by it.
pub fn check_validator(catalog: &Catalog, tool: &Value, n: usize) {
    let name = name_of(tool);
    let input = &tool["inputSchema"];
    for args in sample(&schema::valid(input), n) {
        let violations = catalog.validate(name, &args);
        assert!(violations.is_empty(), "{name} {args}: {violations:?}");
    }
    for (what, args) in sample(&schema::mutated(input), n) {
        assert!(
            !catalog.validate(name, &args).is_empty(),
            "{name} accepted {what}: {args}"
        );
    }
}

/// `n` mutated arguments and `not_objects` arguments that are not an object, each called on
/// `client` and answered as `refused` says a refusal is.
pub async fn assert_refused_over_http(
    client: &Client,
    tool: &Value,
    n: usize,
    not_objects: usize,
    refused: impl Fn(&Reply) -> bool,
) {
    let name = name_of(tool);
    let not_objects = sample(&schema::not_an_object(), not_objects)
        .into_iter()
        .map(|v| ("arguments that are not an object".to_owned(), v));
    for (what, args) in sample(&schema::mutated(&tool["inputSchema"]), n)
        .into_iter()
        .chain(not_objects)
    {
        let reply = client.tool(name, args.clone()).await;
        assert!(refused(&reply), "{name} {what} {args}: {}", reply.body);
    }
}

/// When `tool` is marked read-only: `n` generated valid arguments, each answered 200 with a
/// result or a JSON-RPC error.
pub async fn assert_read_only_answers(client: &Client, tool: &Value, n: usize) {
    if tool["annotations"]["readOnlyHint"] != json!(true) {
        return;
    }
    let name = name_of(tool);
    for args in sample(&schema::valid(&tool["inputSchema"]), n) {
        let reply = client.tool(name, args.clone()).await;
        assert_eq!(reply.status, 200, "{name} {args}: {}", reply.body);
        let answered = reply.body.get("result").is_some() || reply.body["error"]["code"].is_i64();
        assert!(answered, "{name} {args}: {}", reply.body);
    }
}

/// The tools `client`'s door lists (at least one).
pub async fn listed_tools(client: &Client) -> Vec<Value> {
    let tools = client.request("tools/list", json!({})).await.result()["tools"]
        .as_array()
        .expect("tools")
        .clone();
    assert!(!tools.is_empty());
    tools
}

/// Whether `reply` is a JSON-RPC `-32602` (arguments that are not an object reach no tool) or
/// a tool result with `isError: true` that `tool_error` accepts, both with HTTP 200.
pub fn refused_with(reply: &Reply, tool_error: impl Fn(&Reply) -> bool) -> bool {
    if reply.status != 200 {
        return false;
    }
    if reply.body["error"]["code"] == json!(-32602) {
        return true;
    }
    reply.body["result"]["isError"] == json!(true) && tool_error(reply)
}
