//! The fixture tools of the suite's `input-required-result-*` scenarios (SEP-2322): each asks
//! the client for input with an `input_required` answer and completes when the retry brings
//! back valid `inputResponses` (and, where it set one, its verified `requestState`).

use mcp_door::model::{CallToolResult, ContentBlock};
use mcp_door::{CallContext, InputRequired, ToolDecl, ToolFailure};
use serde_json::{Map, Value, json};

pub fn elicit(message: &str, properties: Value, required: &[&str]) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": {
        "type": "object", "properties": properties, "required": required}}})
}

fn sample(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens}})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// The `input_required` answer asking for `requests`, carrying `state`.
pub fn ask(requests: Vec<(&str, Value)>, state: Option<Value>) -> InputRequired {
    InputRequired {
        input_requests: requests
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<String, Value>>(),
        state,
    }
}

fn response<'a>(ctx: &'a CallContext, key: &str) -> Option<&'a Value> {
    ctx.input_responses.as_ref()?.get(key)
}

/// `content[field]` of an accepted elicitation answered under `key`.
pub fn accepted<'a>(ctx: &'a CallContext, key: &str, field: &str) -> Option<&'a Value> {
    let r = response(ctx, key)?;
    (r["action"] == "accept").then(|| r["content"].get(field))?
}

fn accepted_text(ctx: &CallContext, key: &str, field: &str) -> Option<String> {
    accepted(ctx, key, field)?.as_str().map(str::to_owned)
}

/// The text of a sampling answer under `key`.
fn sampled(ctx: &CallContext, key: &str) -> Option<String> {
    let r = response(ctx, key)?;
    r["content"]["text"].as_str().map(str::to_owned)
}

/// The root URIs of a roots/list answer under `key`.
fn listed_roots(ctx: &CallContext, key: &str) -> Option<Vec<String>> {
    let r = response(ctx, key)?.get("roots")?.as_array()?;
    r.iter()
        .map(|root| root["uri"].as_str().map(str::to_owned))
        .collect()
}

fn text(t: String) -> Result<CallToolResult, ToolFailure> {
    Ok(CallToolResult::success(vec![ContentBlock::text(t)]))
}

fn needs(asked: InputRequired) -> Result<CallToolResult, ToolFailure> {
    Err(ToolFailure::InputRequired(asked))
}

fn declared(ctx: &CallContext, capability: &str) -> bool {
    ctx.client_capabilities
        .as_ref()
        .is_some_and(|c| c.get(capability).is_some())
}

fn tool(
    name: &str,
    title: &str,
    description: &str,
    run: fn(&CallContext) -> Result<CallToolResult, ToolFailure>,
) -> ToolDecl {
    ToolDecl::new(
        name,
        title,
        description,
        json!({"type": "object", "properties": {}}),
        move |ctx: CallContext, _args: Map<String, Value>| async move { run(&ctx) },
    )
}

fn user_name() -> Value {
    elicit(
        "What is your name?",
        json!({"name": {"type": "string"}}),
        &["name"],
    )
}

fn elicitation(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    match accepted_text(ctx, "user_name", "name") {
        Some(name) => text(format!("Hello, {name}!")),
        None => needs(ask(vec![("user_name", user_name())], None)),
    }
}

fn sampling(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    match sampled(ctx, "capital_question") {
        Some(answer) => text(format!("LLM response: {answer}")),
        None => needs(ask(
            vec![(
                "capital_question",
                sample("What is the capital of France?", 100),
            )],
            None,
        )),
    }
}

fn list_roots(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    match listed_roots(ctx, "client_roots") {
        Some(uris) => text(format!("Client roots: {}", uris.join(", "))),
        None => needs(ask(vec![("client_roots", roots())], None)),
    }
}

fn request_state(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    let state = json!({"step": "confirm"});
    let ok = accepted(ctx, "confirm", "ok").and_then(Value::as_bool);
    match (ctx.request_state.as_ref() == Some(&state), ok) {
        (true, Some(ok)) => text(format!("state-ok: confirmed={ok}")),
        _ => needs(ask(
            vec![(
                "confirm",
                elicit(
                    "Please confirm",
                    json!({"ok": {"type": "boolean"}}),
                    &["ok"],
                ),
            )],
            Some(state),
        )),
    }
}

fn multiple_inputs(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    let state = json!({"step": "all"});
    let name = accepted_text(ctx, "user_name", "name");
    let greeting = sampled(ctx, "greeting");
    let roots_given = listed_roots(ctx, "client_roots");
    match (
        ctx.request_state.as_ref() == Some(&state),
        name,
        greeting,
        roots_given,
    ) {
        (true, Some(name), Some(greeting), Some(uris)) => text(format!(
            "name={name}; greeting={greeting}; roots={}",
            uris.join(", ")
        )),
        _ => needs(ask(
            vec![
                ("user_name", user_name()),
                ("greeting", sample("Generate a greeting", 50)),
                ("client_roots", roots()),
            ],
            Some(state),
        )),
    }
}

fn multi_round(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    let step1 = || {
        needs(ask(
            vec![(
                "step1",
                elicit(
                    "Step 1: What is your name?",
                    json!({"name": {"type": "string"}}),
                    &["name"],
                ),
            )],
            Some(json!({"round": 1})),
        ))
    };
    let step2 = |name: &str| {
        needs(ask(
            vec![(
                "step2",
                elicit(
                    "Step 2: What is your favorite color?",
                    json!({"color": {"type": "string"}}),
                    &["color"],
                ),
            )],
            Some(json!({"round": 2, "name": name})),
        ))
    };
    let Some(state) = &ctx.request_state else {
        return step1();
    };
    match state["round"].as_u64() {
        Some(1) => match accepted_text(ctx, "step1", "name") {
            Some(name) => step2(&name),
            None => step1(),
        },
        Some(2) => {
            let name = state["name"].as_str().unwrap_or_default();
            match accepted_text(ctx, "step2", "color") {
                Some(color) => text(format!("name={name}, favorite color={color}")),
                None => step2(name),
            }
        }
        _ => step1(),
    }
}

fn tampered_state(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    let state = json!({"purpose": "integrity"});
    match (
        ctx.request_state.as_ref() == Some(&state),
        accepted(ctx, "confirm", "ok"),
    ) {
        (true, Some(_)) => text("requestState verified".to_owned()),
        _ => needs(ask(
            vec![(
                "confirm",
                elicit(
                    "Please confirm",
                    json!({"ok": {"type": "boolean"}}),
                    &["ok"],
                ),
            )],
            Some(state),
        )),
    }
}

fn capabilities(ctx: &CallContext) -> Result<CallToolResult, ToolFailure> {
    let mut wanted = Vec::new();
    if declared(ctx, "elicitation") {
        wanted.push(("user_name", user_name()));
    }
    if declared(ctx, "sampling") {
        wanted.push(("greeting", sample("Generate a greeting", 50)));
    }
    if declared(ctx, "roots") {
        wanted.push(("client_roots", roots()));
    }
    if wanted.is_empty() {
        return text("The client declared no capability to ask with.".to_owned());
    }
    let answered = wanted
        .iter()
        .all(|(k, _)| response(ctx, k).is_some_and(Value::is_object));
    if answered {
        let keys: Vec<&str> = wanted.iter().map(|(k, _)| *k).collect();
        return text(format!("answered: {}", keys.join(", ")));
    }
    needs(ask(wanted, None))
}

/// The `input-required-result-*` tools.
pub fn tools() -> Vec<ToolDecl> {
    vec![
        tool(
            "test_input_required_result_elicitation",
            "Ask a name",
            "Asks the client (elicitation) for a name, then greets it.",
            elicitation,
        ),
        tool(
            "test_input_required_result_sampling",
            "Ask the model",
            "Asks the client (sampling) for the capital of France, then quotes the answer.",
            sampling,
        ),
        tool(
            "test_input_required_result_list_roots",
            "Ask the roots",
            "Asks the client for its roots, then lists them.",
            list_roots,
        ),
        tool(
            "test_input_required_result_request_state",
            "Confirm with state",
            "Asks for a confirmation with a requestState it verifies on the retry (state-ok).",
            request_state,
        ),
        tool(
            "test_input_required_result_multiple_inputs",
            "Ask three things",
            "Asks for a name (elicitation), a greeting (sampling) and the roots at once.",
            multiple_inputs,
        ),
        tool(
            "test_input_required_result_multi_round",
            "Ask twice",
            "Asks for a name, then a favorite color, carrying the name in requestState.",
            multi_round,
        ),
        tool(
            "test_input_required_result_tampered_state",
            "Integrity",
            "Asks for a confirmation with an integrity-protected requestState; a tampered one is refused.",
            tampered_state,
        ),
        tool(
            "test_input_required_result_capabilities",
            "Ask what is declared",
            "Asks only through the capabilities the client declared in _meta.",
            capabilities,
        ),
    ]
}
