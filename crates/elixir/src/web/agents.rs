//! Account → Agents: the list, create (the service key shown once), each agent's own page
//! (its door, key, OAuth connections, recent calls and refusals), and the key actions (rotate,
//! revoke, suspend, resume, key capabilities).

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode};

use super::account::{
    SignedIn, calls_table, csrf_input, done_note, door_path, post_session, refusal_rows,
    refusal_table, refused, store_failed,
};
use super::page::{Form, Web, esc, html, layout, not_found, see_other, table};
use crate::access::kinds::{Kind, STANDARD_SCOPES, key_scopes};
use crate::admin;
use crate::domain::iso;
use crate::model::Agent;

/// `GET /account/agents`.
pub(crate) async fn list(
    State(web): State<Web>,
    SignedIn { account_id, csrf }: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let list = match web.services.store.agents_of(account_id).await {
        Ok(l) => l,
        Err(e) => return store_failed(e),
    };
    let mut body = done_note(
        query.as_deref(),
        &[
            ("revoked", "Service key revoked."),
            (
                "suspended",
                "Agent suspended: every credential of its door answers 401.",
            ),
            ("resumed", "Agent resumed."),
            (
                "scopes",
                "Key capabilities saved; they apply on the next call.",
            ),
        ],
    );
    body.push_str(&agents_list(&web, &list, &csrf));
    body.push_str(&format!(
        "<h2>Create an agent</h2><form method=\"post\" action=\"/account/agents\">{}\
         <label>Name<input type=\"text\" name=\"name\" maxlength=\"80\" required></label>\
         <label><input type=\"radio\" name=\"kind\" value=\"agent\" checked> Agent \
         (<code>/a/&lt;public_id&gt;/mcp</code>)</label>\
         <label><input type=\"radio\" name=\"kind\" value=\"integration\"> Integration \
         (<code>/i/&lt;public_id&gt;/mcp</code>, legacy)</label>\
         <button type=\"submit\">Create</button></form>",
        csrf_input(&csrf)
    ));
    html(StatusCode::OK, layout("Agents", Some(&csrf), &body))
}

fn agents_list(web: &Web, list: &[Agent], csrf: &str) -> String {
    if list.is_empty() {
        return "<p class=\"muted\">No agents yet.</p>".to_owned();
    }
    list.iter().map(|a| agent_box(web, a, csrf)).collect()
}

/// One agent: its door, status, key, the key actions and the key's capabilities.
fn agent_box(web: &Web, a: &Agent, csrf: &str) -> String {
    let door = door_path(a);
    let status = if a.suspended { "suspended" } else { "active" };
    let key = if a.key_digest.is_some() {
        "a service key is issued"
    } else {
        "no service key (revoked)"
    };
    let held = key_scopes(&a.key_scopes);
    let mut boxes = String::new();
    for scope in STANDARD_SCOPES {
        boxes.push_str(&format!(
            "<label><input type=\"checkbox\" name=\"scope\" value=\"{scope}\"{}> <code>{scope}</code></label>",
            if held.iter().any(|h| h == scope) {
                " checked"
            } else {
                ""
            }
        ));
    }
    let action = |name: &str, label: &str| {
        format!(
            "<form class=\"inline\" method=\"post\" action=\"/account/agents/{}/{name}\">{}\
             <button type=\"submit\">{label}</button></form>",
            esc(&a.public_id),
            csrf_input(csrf)
        )
    };
    format!(
        "<div class=\"box\" id=\"agent-{pid}\"><p><b><a href=\"/account/agents/{pid}\">{name}</a></b> \
         <span class=\"muted\">{kind}</span> · public id <code>{pid}</code> · door \
         <code>{origin}{door}</code></p>\
         <p>Status: <b class=\"status\">{status}</b>; {key}. Key capabilities: <code>{scopes}</code></p>\
         {rotate}{revoke}{suspend}\
         <form method=\"post\" action=\"/account/agents/{pid}/scopes\">{csrf}{boxes}\
         <button type=\"submit\">Save key capabilities</button></form></div>",
        pid = esc(&a.public_id),
        name = esc(&a.name),
        kind = a.kind.as_str(),
        origin = esc(web.issuer()),
        door = esc(&door),
        scopes = esc(&held.join(" ")),
        rotate = action(
            "rotate",
            if a.key_digest.is_some() {
                "Rotate key"
            } else {
                "Issue key"
            }
        ),
        revoke = if a.key_digest.is_some() {
            action("revoke", "Revoke key")
        } else {
            String::new()
        },
        suspend = if a.suspended {
            action("resume", "Resume")
        } else {
            action("suspend", "Suspend")
        },
        csrf = csrf_input(csrf),
    )
}

/// How many of the agent's calls its page lists.
const AGENT_CALLS: i64 = 50;

/// `GET /account/agents/{public_id}`: one agent's page — its door and key, the OAuth
/// connections bound to its door, its recent calls and the refusals at its door. An agent
/// that does not exist and one another account owns get the same 404.
pub(crate) async fn page(
    State(web): State<Web>,
    Path(public_id): Path<String>,
    SignedIn { account_id, csrf }: SignedIn,
) -> Response {
    let agent = match web.services.store.agent_by_public_id(&public_id).await {
        Ok(Some(a)) if a.owner_account_id == account_id => a,
        Ok(_) => return not_found(),
        Err(e) => return store_failed(e),
    };
    let door_url = format!("{}{}", web.issuer(), door_path(&agent));
    let connections: Vec<_> = match web.oauth.server.connections(&account_id.to_string()).await {
        Ok(list) => list
            .into_iter()
            .filter(|c| c.resource == door_url)
            .collect(),
        Err(e) => return store_failed(e),
    };
    let grants: Vec<String> = connections.iter().map(|c| c.grant_id.clone()).collect();
    let refusals = match refusal_rows(&web, std::slice::from_ref(&agent), &grants).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let calls = match web
        .services
        .store
        .recent_agent_audit(agent.id, AGENT_CALLS)
        .await
    {
        Ok(c) => c,
        Err(e) => return store_failed(e),
    };
    let mut body = agent_box(&web, &agent, &csrf);
    body.push_str("<h2>OAuth connections at this door</h2>");
    body.push_str(&table(
        "None. A client connects by OAuth at the door above, or uses the service key.",
        &["Client", "Capabilities", "Connected", "Last used"],
        connections.iter().map(|c| {
            format!(
                "<tr><td><a href=\"/account/connections#grant-{gid}\">{name}</a></td>\
                 <td><code>{scopes}</code></td><td>{created}</td><td>{used}</td></tr>",
                gid = esc(&c.grant_id),
                name = esc(&c.client_name),
                scopes = esc(&c.scopes.join(" ")),
                created = iso(c.created_at),
                used = iso(c.last_used_at),
            )
        }),
    ));
    body.push_str(&format!("<h2>Recent calls</h2>{}", calls_table(&calls)));
    body.push_str(&format!(
        "<h2>Refused credentials</h2>{}<p><a href=\"/account/agents\">All agents</a></p>",
        refusal_table(&refusals)
    ));
    html(StatusCode::OK, layout(&agent.name, Some(&csrf), &body))
}

fn key_shown_once(web: &Web, csrf: &str, agent: &Agent, key: &str, what: &str) -> Response {
    let body = format!(
        "<p class=\"ok\">{what}</p><div class=\"box\"><p>Door <code>{origin}{door}</code> \
         (public id <code>{pid}</code>)</p><p>Service key, shown once — copy it now:</p>\
         <pre id=\"service-key\">{key}</pre><p class=\"muted\">Send it as \
         <code>Authorization: Bearer …</code> to the door above. It works at no other door.</p></div>\
         <p><a href=\"/account/agents\">Back to Agents</a></p>",
        origin = esc(web.issuer()),
        door = esc(&door_path(agent)),
        pid = esc(&agent.public_id),
        key = esc(key),
    );
    html(StatusCode::OK, layout("Service key", Some(csrf), &body))
}

/// `POST /account/agents`: create an agent; its key is shown once.
pub(crate) async fn create(State(web): State<Web>, headers: HeaderMap, body: Bytes) -> Response {
    let form = Form::parse(&body);
    let account_id = match post_session(&web, &headers, &form).await {
        Ok(id) => id,
        Err(r) => return r,
    };
    let kind = match form.get("kind") {
        Some("integration") => Kind::Integration,
        _ => Kind::Agent,
    };
    let csrf = web.session_csrf(&headers).unwrap_or_default();
    match admin::create_agent(
        &web.services.store,
        web.services.random.as_ref(),
        web.services.now(),
        account_id,
        form.get("name").unwrap_or(""),
        kind,
    )
    .await
    {
        Ok(issued) => key_shown_once(
            &web,
            &csrf,
            &issued.agent,
            &issued.service_key,
            "Agent created.",
        ),
        Err(admin::AdminError::Invalid(message)) => refused(
            &web,
            &headers,
            StatusCode::BAD_REQUEST,
            "Agents",
            &message,
            "/account/agents",
        ),
        Err(admin::AdminError::Allowance(message)) => refused(
            &web,
            &headers,
            StatusCode::FORBIDDEN,
            "Agents",
            &message,
            "/account/agents",
        ),
        Err(e) => store_failed(e),
    }
}

/// `POST /account/agents/{public_id}/{rotate|revoke|suspend|resume|scopes}`. An agent that
/// does not exist and one another account owns get the same 404.
pub(crate) async fn action(
    State(web): State<Web>,
    Path((public_id, action)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    let account_id = match post_session(&web, &headers, &form).await {
        Ok(id) => id,
        Err(r) => return r,
    };
    let store = &web.services.store;
    let agent = match store.agent_by_public_id(&public_id).await {
        Ok(Some(a)) if a.owner_account_id == account_id => a,
        Ok(_) => return not_found(),
        Err(e) => return store_failed(e),
    };
    let done = |what: &str| see_other(&format!("/account/agents?done={what}"), None);
    match action.as_str() {
        "rotate" => {
            match admin::rotate_key(store, web.services.random.as_ref(), &public_id).await {
                Ok(key) => {
                    let csrf = web.session_csrf(&headers).unwrap_or_default();
                    key_shown_once(
                        &web,
                        &csrf,
                        &agent,
                        &key,
                        "New service key issued; the old one no longer works.",
                    )
                }
                Err(e) => store_failed(e),
            }
        }
        "revoke" => match admin::revoke_key(store, &public_id).await {
            Ok(()) => done("revoked"),
            Err(e) => store_failed(e),
        },
        "suspend" | "resume" => {
            let suspend = action == "suspend";
            match admin::set_suspended(store, &public_id, suspend).await {
                Ok(()) => done(if suspend { "suspended" } else { "resumed" }),
                Err(e) => store_failed(e),
            }
        }
        "scopes" => {
            let wanted = form.all("scope");
            if wanted.is_empty()
                || wanted
                    .iter()
                    .any(|s| !STANDARD_SCOPES.contains(&s.as_str()))
            {
                return refused(
                    &web,
                    &headers,
                    StatusCode::BAD_REQUEST,
                    "Agents",
                    "Tick at least one of the five standard capabilities (a service key never \
                     carries account:email).",
                    "/account/agents",
                );
            }
            match admin::set_key_scopes(store, &public_id, &wanted).await {
                Ok(()) => done("scopes"),
                Err(e) => store_failed(e),
            }
        }
        _ => not_found(),
    }
}
