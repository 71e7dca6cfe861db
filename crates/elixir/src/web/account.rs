//! The account pages: overview (with the time zone setting), Connections (every live OAuth grant per door, its
//! capabilities edited or the connection revoked, and the recently disconnected ones whose
//! tokens are still presented), Activity (calls by request id from the audit table) and the
//! refused-credential counts per credential, address and day; and what every account page
//! shares: the signed-in view ([`SignedIn`], extracted before the handler), the CSRF-checked
//! POST, the `?done=` note and the refusal and call tables. Agents live in [`super::agents`].

use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use uuid::Uuid;

use super::page::{
    Form, Web, esc, forbidden, html, layout, not_found, see_other, table, unavailable,
};
use crate::access::door_path;
use crate::access::kinds::{Kind, STANDARD_SCOPES};
use crate::access::oauth::EMAIL_SCOPE;
use crate::access::refusals::GRANT_CREDENTIAL;
use crate::domain::{is_time_zone, iso};
use crate::model::{Agent, AuditEntry, RefusalCount};
use mcp_oauth::Disconnection;

pub(super) const DAY_MS: i64 = 24 * 3600 * 1000;
/// How far back the refusal counts go.
pub(super) const REFUSAL_DAYS: i64 = 7;
// The purge must never delete a day the pages still show.
const _: () = assert!(crate::access::refusals::REFUSAL_RETENTION_DAYS > REFUSAL_DAYS);

/// A signed-in page view, extracted before its handler runs: the account and its session's
/// CSRF token. Without a session (or its CSRF token) the answer is a 303 to `/signin`.
pub(super) struct SignedIn {
    pub account_id: Uuid,
    pub csrf: String,
}

impl FromRequestParts<Web> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Self, Response> {
        let headers = &parts.headers;
        match web.signed_in(headers).await? {
            Some(account_id) => match web.session_csrf(headers) {
                Some(csrf) => Ok(Self { account_id, csrf }),
                None => Err(see_other("/signin", None)),
            },
            None => Err(see_other("/signin", None)),
        }
    }
}

/// The account of a CSRF-checked POST, or the response to send instead.
pub(super) async fn post_session(
    web: &Web,
    headers: &HeaderMap,
    form: &Form,
) -> Result<Uuid, Response> {
    if !web.post_allowed(headers, form) {
        return Err(forbidden());
    }
    match web.signed_in(headers).await? {
        Some(id) => Ok(id),
        None => Err(forbidden()),
    }
}

pub(super) fn csrf_input(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(csrf)
    )
}

pub(super) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The `<p class="ok">` line of the `?done=` a form's redirect set: the text `notes` gives
/// that value (empty for one it does not know); nothing when the query has none.
pub(super) fn done_note(query: Option<&str>, notes: &[(&str, &str)]) -> String {
    match query_param(query, "done") {
        Some(note) => {
            let text = notes
                .iter()
                .find(|(value, _)| *value == note)
                .map_or("", |(_, text)| text);
            format!("<p class=\"ok\">{text}</p>")
        }
        None => String::new(),
    }
}

/// A form refused with nothing changed: the message (plain text, escaped here) and a link
/// back to the page at `back`.
pub(super) fn refused(
    web: &Web,
    headers: &HeaderMap,
    status: StatusCode,
    title: &str,
    message: &str,
    back: &str,
) -> Response {
    html(
        status,
        layout(
            title,
            web.session_csrf(headers).as_deref(),
            &format!(
                "<p class=\"err\">{}</p><p><a href=\"{}\">Back</a></p>",
                esc(message),
                esc(back)
            ),
        ),
    )
}

pub(super) fn store_failed(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "account page store failure");
    unavailable()
}

/// `GET /`: the front page.
pub(crate) async fn home(State(web): State<Web>, headers: HeaderMap) -> Response {
    let csrf = match web.signed_in(&headers).await {
        Ok(Some(_)) => web.session_csrf(&headers),
        Ok(None) => None,
        Err(r) => return r,
    };
    let body = format!(
        "<p>Elixir records Clash Royale history and serves it to assistants and agents over MCP.</p>\
         <div class=\"box\"><p>Connect an MCP client to <code>{origin}{door}</code>: it discovers \
         the authorization server, registers, and sends you to a consent page.</p>\
         <p>{}</p></div><p><a href=\"/docs\">Read the docs</a>.</p>",
        if csrf.is_some() {
            "<a href=\"/account\">Your account</a>"
        } else {
            "<a href=\"/signin\">Sign in with an email code</a>"
        },
        origin = esc(web.issuer()),
        door = door_path::PERSON_DOOR,
    );
    html(StatusCode::OK, layout("Elixir", csrf.as_deref(), &body))
}

/// `GET /account`.
pub(crate) async fn overview(
    State(web): State<Web>,
    SignedIn { account_id, csrf }: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let account = match web.services.store.account(account_id).await {
        Ok(Some(a)) => a,
        Ok(None) => return see_other("/signin", None),
        Err(e) => return store_failed(e),
    };
    let saved = if query_param(query.as_deref(), "done").as_deref() == Some("timezone") {
        "<p class=\"ok\">Time zone saved; it applies from the next call.</p>"
    } else {
        ""
    };
    let body = format!(
        "{saved}<div class=\"box\"><p>Signed in as <b>{}</b>. Tier <b>{}</b> (set by the \
         operator), time zone <code>{}</code>.</p>\
         <p class=\"muted\">Account id <code>{}</code></p>{}</div>\
         <ul><li><a href=\"/account/connections\">Connections</a>: the OAuth clients connected to \
         your doors, their capabilities, and refusals.</li>\
         <li><a href=\"/account/agents\">Agents</a>: your agent and integration doors and their \
         service keys.</li>\
         <li><a href=\"/account/activity\">Activity</a>: a call by its <code>request_id</code>.</li>\
         <li><a href=\"/account/refusals\">Refused credentials</a>, per credential, address and day.</li></ul>",
        esc(account.email.as_deref().unwrap_or("(no address on file)")),
        esc(account.tier.as_str()),
        esc(&account.timezone),
        account.id,
        timezone_form(&csrf, &account.timezone),
    );
    html(StatusCode::OK, layout("Account", Some(&csrf), &body))
}

fn timezone_form(csrf: &str, current: &str) -> String {
    format!(
        "<form method=\"post\" action=\"/account/timezone\">{}<label>Time zone (IANA, for \
         date-only windows and local labels)<input type=\"text\" name=\"timezone\" value=\"{}\" \
         maxlength=\"64\" required></label><button type=\"submit\">Save time zone</button></form>",
        csrf_input(csrf),
        esc(current)
    )
}

/// `POST /account/timezone`: the account's time zone, as `elixir_settings({timezone})` sets
/// it on the personal door (agents keep their own).
pub(crate) async fn set_timezone(
    State(web): State<Web>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    let account_id = match post_session(&web, &headers, &form).await {
        Ok(id) => id,
        Err(r) => return r,
    };
    let wanted = form.get("timezone").unwrap_or("").trim();
    if !is_time_zone(wanted) {
        return refused(
            &web,
            &headers,
            StatusCode::BAD_REQUEST,
            "Account",
            &format!(
                "{wanted:?} is not an IANA time zone; use a name such as Europe/Warsaw. \
                 Nothing was changed."
            ),
            "/account",
        );
    }
    match web
        .services
        .store
        .set_account_timezone(account_id, wanted)
        .await
    {
        Ok(()) => see_other("/account?done=timezone", None),
        Err(e) => store_failed(e),
    }
}

/// The refusal counts of the last days of the owner's own credentials: the current service
/// keys of `agents` (by hint) and the tokens of `grants` (`grant:<id>`). Selected by
/// credential, never by door, so a credential nobody owns (the `unknown` bucket, another
/// account's key presented at this owner's door) shows to no one.
pub(super) async fn refusal_rows(
    web: &Web,
    agents: &[Agent],
    grants: &[String],
) -> Result<Vec<RefusalCount>, Response> {
    let credentials: Vec<String> = agents
        .iter()
        .filter_map(|a| a.key_digest.as_deref())
        .filter_map(|d| d.get(..12))
        .map(str::to_owned)
        .chain(grants.iter().map(|g| format!("{GRANT_CREDENTIAL}{g}")))
        .collect();
    let since = iso(web.services.now() - (REFUSAL_DAYS - 1) * DAY_MS);
    web.services
        .store
        .refusals_of(&credentials, &since[..10])
        .await
        .map_err(store_failed)
}

pub(super) fn refusal_table(rows: &[RefusalCount]) -> String {
    table(
        "No refused credentials in the last 7 days.",
        &["Day", "Credential", "Address", "Door", "Reason", "Count"],
        rows.iter().map(|r| {
            format!(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&r.day),
                esc(&r.credential_hint),
                esc(&r.address),
                esc(&r.door),
                esc(&r.reason),
                r.count
            )
        }),
    )
}

pub(super) fn door_path(agent: &Agent) -> String {
    door_path::agent_door(agent.kind, &agent.public_id)
}

/// `GET /account/connections`.
pub(crate) async fn connections(
    State(web): State<Web>,
    SignedIn { account_id, csrf }: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let list = match web.oauth.server.connections(&account_id.to_string()).await {
        Ok(l) => l,
        Err(e) => return store_failed(e),
    };
    let agents = match web.services.store.agents_of(account_id).await {
        Ok(a) => a,
        Err(e) => return store_failed(e),
    };
    let since = web.services.now() - REFUSAL_DAYS * DAY_MS;
    let ended = match web
        .oauth
        .server
        .disconnections(&account_id.to_string(), since)
        .await
    {
        Ok(l) => l,
        Err(e) => return store_failed(e),
    };
    let grant_ids: Vec<String> = list
        .iter()
        .map(|c| c.grant_id.clone())
        .chain(ended.iter().map(|d| d.connection.grant_id.clone()))
        .collect();
    let refusals = match refusal_rows(&web, &[], &grant_ids).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut body = done_note(
        query.as_deref(),
        &[
            (
                "saved",
                "Capabilities saved; they apply on the connection's next call.",
            ),
            ("revoked", "Connection revoked; its next call is refused."),
        ],
    );
    body.push_str(
        "<p>Every live OAuth connection on your personal door and on the agent and integration \
         doors you own. Editing capabilities applies on the connection's next call; no \
         reconnect is needed. <code>account:email</code> can be kept or removed, never added.</p>",
    );
    if list.is_empty() {
        body.push_str("<p class=\"muted\">No connections yet.</p>");
    }
    let issuer = web.issuer().to_owned();
    let mut current_door = String::new();
    for c in &list {
        let door = c.resource.strip_prefix(&issuer).unwrap_or(&c.resource);
        if door != current_door {
            let label = match door_path::parse(door) {
                Some((Kind::Person, _)) => "your personal door".to_owned(),
                Some((_, Some(public_id))) => agents
                    .iter()
                    .find(|a| a.public_id == public_id)
                    .map_or_else(
                        || "an agent door".to_owned(),
                        |a| format!("agent “{}”", a.name),
                    ),
                _ => String::new(),
            };
            body.push_str(&format!(
                "<h2><code>{}</code> <span class=\"muted\">{}</span></h2>",
                esc(door),
                esc(&label)
            ));
            door.clone_into(&mut current_door);
        }
        let mut boxes = String::new();
        let offered = STANDARD_SCOPES
            .iter()
            .map(|s| (*s).to_owned())
            .chain(c.scopes.iter().filter(|s| *s == EMAIL_SCOPE).cloned());
        for scope in offered {
            boxes.push_str(&format!(
                "<label><input type=\"checkbox\" name=\"scope\" value=\"{s}\"{checked}> <code>{s}</code></label>",
                s = esc(&scope),
                checked = if c.scopes.contains(&scope) {
                    " checked"
                } else {
                    ""
                },
            ));
        }
        let refused: Vec<RefusalCount> = refusals
            .iter()
            .filter(|r| r.credential_hint == format!("{GRANT_CREDENTIAL}{}", c.grant_id))
            .cloned()
            .collect();
        body.push_str(&format!(
            "<div class=\"box\" id=\"grant-{gid}\"><p><b>{name}</b> <span class=\"muted\">client \
             <code>{client}</code>, for {subject} · connected {created} · last used {used}</span></p>\
             <p>Capabilities: <code class=\"scopes\">{scopes}</code></p>\
             <form method=\"post\" action=\"/account/connections/{gid}/scopes\">{csrf}{boxes}\
             <button type=\"submit\">Save capabilities</button></form>\
             <form method=\"post\" action=\"/account/connections/{gid}/revoke\">{csrf}\
             <button type=\"submit\">Disconnect</button></form>\
             <p class=\"muted\">Refused presentations of this connection's tokens:</p>{refused}</div>",
            gid = esc(&c.grant_id),
            name = esc(&c.client_name),
            client = esc(&c.client_id),
            subject = esc(&c.subject.kind),
            created = iso(c.created_at),
            used = iso(c.last_used_at),
            scopes = esc(&c.scopes.join(" ")),
            csrf = csrf_input(&csrf),
            refused = refusal_table(&refused),
        ));
    }
    body.push_str(&disconnected_section(&web, &ended, &refusals));
    html(StatusCode::OK, layout("Connections", Some(&csrf), &body))
}

/// The connections ended in the last days, each with the refused presentations of its tokens
/// (a client that was not told keeps trying them).
fn disconnected_section(web: &Web, ended: &[Disconnection], refusals: &[RefusalCount]) -> String {
    if ended.is_empty() {
        return String::new();
    }
    let mut out = format!("<h2>Disconnected in the last {REFUSAL_DAYS} days</h2>");
    for d in ended {
        let c = &d.connection;
        let refused: Vec<RefusalCount> = refusals
            .iter()
            .filter(|r| r.credential_hint == format!("{GRANT_CREDENTIAL}{}", c.grant_id))
            .cloned()
            .collect();
        out.push_str(&format!(
            "<div class=\"box\" id=\"ended-{gid}\"><p><b>{name}</b> <span class=\"muted\">client \
             <code>{client}</code> at <code>{door}</code> · connected {created} · disconnected \
             {revoked}</span></p><p class=\"muted\">Refused presentations of its tokens since:</p>{table}</div>",
            gid = esc(&c.grant_id),
            name = esc(&c.client_name),
            client = esc(&c.client_id),
            door = esc(c.resource.strip_prefix(web.issuer()).unwrap_or(&c.resource)),
            created = iso(c.created_at),
            revoked = iso(d.revoked_at),
            table = refusal_table(&refused),
        ));
    }
    out
}

/// `POST /account/connections/{grant}/{scopes|revoke}`.
pub(crate) async fn connection_action(
    State(web): State<Web>,
    Path((grant, action)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    let account_id = match post_session(&web, &headers, &form).await {
        Ok(id) => id.to_string(),
        Err(r) => return r,
    };
    let server = &web.oauth.server;
    match action.as_str() {
        "scopes" => match server
            .set_connection_scopes(&account_id, &grant, &form.all("scope"))
            .await
        {
            Ok(_) => see_other("/account/connections?done=saved", None),
            Err(mcp_oauth::SetScopesError::NotFound) => not_found(),
            Err(mcp_oauth::SetScopesError::Invalid(message)) => refused(
                &web,
                &headers,
                StatusCode::BAD_REQUEST,
                "Connections",
                &message,
                "/account/connections",
            ),
            Err(e) => store_failed(e),
        },
        "revoke" => match server.revoke_connection(&account_id, &grant).await {
            Ok(true) => see_other("/account/connections?done=revoked", None),
            Ok(false) => not_found(),
            Err(e) => store_failed(e),
        },
        _ => not_found(),
    }
}

/// `GET /account/activity[?request_id=…]`: the account's recent calls, and one by its request id.
pub(crate) async fn activity(
    State(web): State<Web>,
    SignedIn { account_id, csrf }: SignedIn,
    RawQuery(query): RawQuery,
) -> Response {
    let wanted = query_param(query.as_deref(), "request_id").unwrap_or_default();
    let mut body = format!(
        "<p>Every tool call's answer carries <code>meta.request_id</code>. Look one up:</p>\
         <form method=\"get\" action=\"/account/activity\"><label>request_id\
         <input type=\"text\" name=\"request_id\" value=\"{}\"></label>\
         <button type=\"submit\">Show</button></form>",
        esc(&wanted)
    );
    if !wanted.is_empty() {
        let found = match Uuid::parse_str(wanted.trim()) {
            Ok(id) => match web.services.store.audit(id).await {
                Ok(entry) => entry.filter(|e| e.account_id == Some(account_id)),
                Err(e) => return store_failed(e),
            },
            Err(_) => None,
        };
        match found {
            Some(e) => body.push_str(&format!(
                "<div class=\"box\" id=\"call\"><p><code>{}</code> · {} · door <code>{}</code> · \
                 tool <code>{}</code> · {} ms · {}</p><p>Arguments</p><pre>{}</pre><p>Answer</p><pre>{}</pre></div>",
                e.request_id,
                iso(e.created_at),
                esc(&e.door),
                esc(e.tool.as_deref().unwrap_or("-")),
                e.duration_ms,
                esc(e.error_code.as_deref().unwrap_or("ok")),
                esc(e.arguments.as_deref().unwrap_or("")),
                esc(e.response.as_deref().unwrap_or("")),
            )),
            None => body.push_str(
                "<p class=\"err\">No call of yours has that request id.</p>",
            ),
        }
    }
    let recent = match web.services.store.recent_audit(account_id, 50).await {
        Ok(r) => r,
        Err(e) => return store_failed(e),
    };
    body.push_str("<h2>Recent calls</h2>");
    body.push_str(&calls_table(&recent));
    html(StatusCode::OK, layout("Activity", Some(&csrf), &body))
}

/// Audited calls as a table, each linking to its Activity entry.
pub(super) fn calls_table(calls: &[AuditEntry]) -> String {
    table(
        "No calls yet.",
        &["When", "request_id", "Door", "Tool", "Outcome", "ms"],
        calls.iter().map(|e| {
            format!(
                "<tr><td>{}</td><td><a href=\"/account/activity?request_id={id}\"><code>{id}</code></a></td>\
                 <td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                iso(e.created_at),
                esc(&e.door),
                esc(e.tool.as_deref().unwrap_or("-")),
                esc(e.error_code.as_deref().unwrap_or("ok")),
                e.duration_ms,
                id = e.request_id,
            )
        }),
    )
}

/// `GET /account/refusals`: refusals of the account's agents' keys and of its grants.
pub(crate) async fn refusals(
    State(web): State<Web>,
    SignedIn { account_id, csrf }: SignedIn,
) -> Response {
    let agents = match web.services.store.agents_of(account_id).await {
        Ok(a) => a,
        Err(e) => return store_failed(e),
    };
    let account = account_id.to_string();
    let since = web.services.now() - REFUSAL_DAYS * DAY_MS;
    let mut grants: Vec<String> = match web.oauth.server.connections(&account).await {
        Ok(l) => l.into_iter().map(|c| c.grant_id).collect(),
        Err(e) => return store_failed(e),
    };
    match web.oauth.server.disconnections(&account, since).await {
        Ok(l) => grants.extend(l.into_iter().map(|d| d.connection.grant_id)),
        Err(e) => return store_failed(e),
    }
    let rows = match refusal_rows(&web, &agents, &grants).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let body = format!(
        "<p>Refused presentations over the last {REFUSAL_DAYS} days of your agents' and \
         integrations' current service keys and of your connections' tokens \
         (<code>grant:…</code>), per credential, address and day. A service key is shown by the \
         first 12 hex characters of its SHA-256, so you can match it against a key you hold. \
         Credentials Elixir does not know are counted together and shown to no one.</p>{}",
        refusal_table(&rows)
    );
    html(
        StatusCode::OK,
        layout("Refused credentials", Some(&csrf), &body),
    )
}
