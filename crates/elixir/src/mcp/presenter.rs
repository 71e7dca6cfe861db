//! How Elixir presents itself on its doors: `serverInfo` with the per-kind fingerprint,
//! `instructions`, the principal in `_meta`, capabilities, and the wording of the refusals
//! the door renders (invalid arguments as `bad_request`, hidden and unknown tools, scopes).

use std::collections::HashMap;
use std::sync::Arc;

use mcp_door::model::Implementation;
use mcp_door::{CallContext, CallOutcome, Presenter, Principal, Violation};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::access::metering::QuotaSnapshot;
use crate::mcp::audit::Answer;
use crate::mcp::call::{self, CONTRACT_VERSION, ErrorCode, ToolError};
use crate::services::{Caller, Services};

/// `serverInfo.name`.
pub const SERVER_NAME: &str = "elixir-mcp";
/// `serverInfo.title`.
pub const SERVER_TITLE: &str = "Elixir MCP - Clash Royale history, recorded";
/// The `_meta` key of the principal.
pub const PRINCIPAL_META: &str = "elixir.poapkings.com/principal";
/// The longest `instructions` may be.
pub const MAX_INSTRUCTIONS: usize = 2_048;

/// The argument conventions, stated once (SURFACE §2.1, reference "Argument conventions").
const CONVENTIONS: &str = "Conventions: the first word of each tool description is its family and says what leaving an argument out means (Player tool: you; Clan tool: your clan; Account tool: your own account; Reference tool: the whole index, or now). Nothing is guessed: with no subject a tool answers no_subject and its hint names the fixing call. Tags are # plus 3-12 of 0289PYLQGRJCUV. Windows are from (inclusive) and to (exclusive), ISO instants or YYYY-MM-DD in your timezone. Arguments are validated strictly: an unknown argument or value is bad_request, never clamped. verbosity full|compact is the only size control. Every answer carries applied, notes (repeat them), docs (a page#section for elixir_docs) and meta; meta.request_id identifies the call, and null means unknown, never zero. Errors are results with isError: branch on error.code and follow error.hint.";

/// Prose for the model; changes without notice and is never to be parsed (facts ride `_meta`).
pub fn instructions(caller: Option<&Caller>) -> String {
    let who = match caller {
        Some(c) if c.kind == Kind::Person => match &c.primary_player_tag {
            Some(tag) => format!("You are connected to Elixir, an unofficial recorder of Clash Royale history, as a person whose primary player is {tag}."),
            None => "You are connected to Elixir, an unofficial recorder of Clash Royale history, as a person with no primary player set yet.".to_owned(),
        },
        Some(c) => {
            let name = c.agent.as_ref().map_or("this agent", |a| a.name.as_str());
            format!(
                "You are connected to Elixir, an unofficial recorder of Clash Royale history, as the {} \"{name}\". It acts for its owner's clan; name the end user with on_behalf_of where a tool takes it. There is no primary player on this door.",
                c.kind.as_str()
            )
        }
        None => "You are connected to Elixir, an unofficial recorder of Clash Royale history.".to_owned(),
    };
    let start = "Start with elixir_docs({\"page\": \"quickstart\"}) or elixir_examples({}); elixir_docs({\"page\": \"choosing-a-tool\"}) maps questions to tools. Re-read tools/list whenever serverInfo.version changes. File elixir_feedback on your own judgment when an answer looks wrong.";
    let mut text = format!("{who}\n\n{CONVENTIONS}\n\n{start}");
    if text.chars().count() > MAX_INSTRUCTIONS {
        text = text.chars().take(MAX_INSTRUCTIONS).collect();
    }
    text
}

/// The principal as data: `{kind, subject|null, clan|null}`.
pub fn principal_meta(kind: Kind, caller: Option<&Caller>) -> Value {
    let subject = caller
        .and_then(|c| c.primary_player_tag.as_ref())
        .map(|tag| json!({"type": "player", "tag": tag, "name": null}));
    json!({"kind": kind.as_str(), "subject": subject, "clan": null})
}

/// The presenter of one kind of door.
pub struct ElixirPresenter {
    pub kind: Kind,
    pub services: Arc<Services>,
    /// Tool names this kind sees, for `unknown_tool` candidates.
    pub visible: Vec<String>,
    /// Per tool, undeclared arguments this kind may send and the door drops with a note
    /// (`on_behalf_of`, `display_name` on the person door; SURFACE §1.4).
    pub lenient: HashMap<String, Vec<&'static str>>,
}

impl ElixirPresenter {
    /// The `bad_request` body for schema violations, with `meta` when the call is known; the
    /// code and the answer text ride the outcome to the audit.
    fn bad_request(
        &self,
        ctx: Option<&CallContext>,
        tool: &str,
        violations: &[Violation],
    ) -> CallOutcome {
        let detail: Vec<String> = violations
            .iter()
            .take(5)
            .map(|v| format!("{}: {}", v.pointer, v.message))
            .collect();
        let unknown = violations
            .iter()
            .any(|v| v.message.contains("Additional properties"));
        let hint = if unknown {
            format!(
                "Re-read tools/list: {tool}'s inputSchema names every argument it accepts; remove the others."
            )
        } else {
            format!(
                "Re-read tools/list: {tool}'s inputSchema gives each argument's type, values and bounds; fix the call and repeat it."
            )
        };
        let error = ToolError::new(
            ErrorCode::BadRequest,
            format!("Invalid arguments: {}", detail.join("; ")),
            hint,
        );
        let meta = match ctx {
            Some(ctx) => {
                let mut meta = call::base_meta(&self.services, ctx.request_id);
                if let Some(q) = ctx.extensions.get::<QuotaSnapshot>() {
                    meta["quota"] = q.0.clone();
                }
                meta
            }
            None => call::base_meta(&self.services, uuid::Uuid::nil()),
        };
        let rendered = call::error(&error, &meta);
        CallOutcome::failed(ErrorCode::BadRequest.as_str(), rendered.result)
            .with_extension(Answer(rendered.text))
    }
}

impl Presenter for ElixirPresenter {
    fn server_info(&self, _principal: &Principal, fingerprint: &str) -> Implementation {
        let mut info = Implementation::new(
            SERVER_NAME,
            format!("{CONTRACT_VERSION}+tools.{fingerprint}"),
        );
        info.title = Some(SERVER_TITLE.to_owned());
        info.website_url = Some(format!("{}/", self.services.settings.public_url));
        info
    }

    fn instructions(&self, principal: &Principal) -> Option<String> {
        Some(instructions(principal.ext::<Caller>()))
    }

    /// The principal in `_meta`: of `initialize` (handshake revisions) and of `server/discover`
    /// (2026-07-28), beside the door's `io.modelcontextprotocol/serverInfo`.
    fn server_meta(&self, principal: &Principal) -> Option<Map<String, Value>> {
        let mut meta = Map::new();
        meta.insert(
            PRINCIPAL_META.into(),
            principal_meta(self.kind, principal.ext::<Caller>()),
        );
        Some(meta)
    }

    fn initialize_capabilities(&self, _principal: &Principal, mut capabilities: Value) -> Value {
        // Declared although never sent: a stateless server cannot push it, and the version's
        // fingerprint tells clients when to re-read (reference "Versioning").
        capabilities["tools"] = json!({"listChanged": true});
        capabilities
    }

    fn invalid_arguments(&self, tool: &str, violations: &[Violation]) -> CallOutcome {
        self.bad_request(None, tool, violations)
    }

    fn invalid_arguments_in(
        &self,
        ctx: &CallContext,
        tool: &str,
        violations: &[Violation],
    ) -> CallOutcome {
        self.bad_request(Some(ctx), tool, violations)
    }

    fn lenient_arguments(&self, tool: &str, _kind: &str) -> &[&str] {
        self.lenient.get(tool).map_or(&[], Vec::as_slice)
    }

    fn hidden_tool(&self, tool: &str, kind: &str) -> (String, Value) {
        (
            format!("Tool {tool} is not offered to {kind} connections."),
            json!({"kind": kind, "hint": "Not offered to this kind of connection; re-read tools/list (do not reuse a tools/list cached from another kind of connection)."}),
        )
    }

    fn unknown_tool(&self, tool: &str, _kind: &str) -> (String, Option<Value>) {
        let stem: String = tool.chars().take(6).collect();
        let mut candidates: Vec<&String> = self
            .visible
            .iter()
            .filter(|n| n.starts_with(&stem) || n.contains(tool) || tool.contains(n.as_str()))
            .collect();
        // Nearest first: the typo one letter off outranks every other name with the stem.
        candidates.sort_by_key(|n| (edit_distance(n, tool), n.len()));
        candidates.truncate(5);
        let mut data = json!({"hint": "Re-read tools/list; tool names never carry their group."});
        if !candidates.is_empty() {
            data["candidates"] = json!(candidates);
        }
        (format!("Unknown tool: {tool}"), Some(data))
    }

    fn scope_refused(&self, tool: &str, required: &str, granted: &[String]) -> (String, Value) {
        (
            format!("The access token lacks the capability required by this tool: {required}."),
            json!({
                "required_scope": required,
                "granted_scope": granted.join(" "),
                "hint": format!("Reconnect this client and keep '{required}' ticked on the consent page (every capability is offered, ticked, unless the client asked for less), or edit the connection's capabilities under Account -> Connections, which takes effect on the next call. Owner-issued service keys carry every capability unless the owner narrowed them on the agent's page. Read tools need only cr:read; {tool} needs {required}."),
            }),
        )
    }

    /// SURFACE §3.6: −32603 "a failure outside any tool call" is HTTP 500 (body: message
    /// naming the request id and `data: {request_id}`, never internals).
    fn internal_error_status(&self) -> http::StatusCode {
        http::StatusCode::INTERNAL_SERVER_ERROR
    }
}

/// Levenshtein distance over characters; tool names are short, so the quadratic table is fine.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
