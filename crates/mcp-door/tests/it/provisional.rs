//! Provisional principals (`Authenticator::confirm`): a caller answered from what the product
//! knows is confirmed before anything runs for it and before anything is answered, except
//! by a tool that confirms its caller in its own statement; a refusal there is the same 401
//! as one from `authenticate`, whatever the request was.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use http::StatusCode;
use mcp_door::{
    AuditRecord, AuditSink, AuthError, AuthRequest, Authenticator, Catalog, Door, FakeClock,
    GateRefusal, GateRequest, InvalidReason, Limits, LocalAdmission, MethodGate, Principal,
    ToolDecl, bearer_token, tool_json,
};
use serde_json::json;

use crate::support::{PATH, Reply, ToyPresenter, post, roomy_limits, rpc_body, send, small_config};

/// `late-ok` and `late-revoked` are answered provisionally; confirming the second is refused.
/// `now-ok` is checked when it is made. Counts the confirmations that had to ask.
#[derive(Default)]
struct LateAuth {
    asked: AtomicUsize,
}

#[async_trait]
impl Authenticator for LateAuth {
    async fn authenticate(&self, request: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        let token = bearer_token(request.headers)?;
        match token {
            "late-ok" | "late-revoked" | "now-ok" => {
                Ok(Principal::new("user", format!("subject-of-{token}"), token))
            }
            _ => Err(AuthError::Invalid(InvalidReason::Unknown)),
        }
    }

    async fn confirm(&self, principal: &Principal) -> Result<(), AuthError> {
        match principal.credential.as_str() {
            "now-ok" => Ok(()),
            "late-revoked" => {
                self.asked.fetch_add(1, Ordering::SeqCst);
                Err(AuthError::Invalid(InvalidReason::Revoked))
            }
            _ => {
                self.asked.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        }
    }
}

#[derive(Default)]
struct Records(std::sync::Mutex<Vec<AuditRecord>>);

impl AuditSink for Records {
    fn record(&self, record: AuditRecord) {
        self.0.lock().unwrap().push(record);
    }
}

struct Late {
    router: axum::Router,
    auth: Arc<LateAuth>,
    /// Calls of `plain` and `confirming`.
    ran: Arc<AtomicUsize>,
    records: Arc<Records>,
}

/// A method gate that meters: counts every consultation, refuses none.
#[derive(Default)]
struct Meter {
    consulted: AtomicUsize,
}

#[async_trait]
impl MethodGate for Meter {
    async fn check(&self, _request: &mut GateRequest<'_>) -> Result<(), GateRefusal> {
        self.consulted.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn late(limits: Limits) -> Late {
    late_with(limits, None)
}

fn late_with(limits: Limits, gate: Option<Arc<Meter>>) -> Late {
    let ran = Arc::new(AtomicUsize::new(0));
    let (plain_ran, confirming_ran) = (Arc::clone(&ran), Arc::clone(&ran));
    let schema = json!({"type": "object"});
    let catalog = Catalog::new(vec![
        ToolDecl::new("plain", "Plain", "Runs for confirmed callers.", schema.clone(), move |_, _| {
            let ran = Arc::clone(&plain_ran);
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok(tool_json(json!({"ran": "plain"})))
            }
        }),
        ToolDecl::new(
            "confirming",
            "Confirming",
            "Confirms its caller in its own statement.",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}),
            move |_, _| {
                let ran = Arc::clone(&confirming_ran);
                async move {
                    ran.fetch_add(1, Ordering::SeqCst);
                    Ok(tool_json(json!({"ran": "confirming"})))
                }
            },
        )
        .confirming_caller(),
    ])
    .unwrap();
    let auth = Arc::new(LateAuth::default());
    let records = Arc::new(Records::default());
    let clock = FakeClock::new(1_700_000_000_000);
    let door = Door::new(
        PATH,
        auth.clone(),
        Arc::new(catalog),
        Arc::new(LocalAdmission::new(limits, Arc::new(clock))),
        Arc::new(ToyPresenter),
    )
    .with_config(small_config())
    .with_audit(records.clone());
    let door = match gate {
        Some(gate) => door.with_method_gate(gate),
        None => door,
    };
    Late {
        router: door.router(),
        auth,
        ran,
        records,
    }
}

impl Late {
    async fn rpc(&self, token: &str, method: &str, params: serde_json::Value) -> Reply {
        send(&self.router, post(Some(token), rpc_body(1, method, params))).await
    }

    fn asked(&self) -> usize {
        self.auth.asked.load(Ordering::SeqCst)
    }

    fn ran(&self) -> usize {
        self.ran.load(Ordering::SeqCst)
    }
}

fn assert_revoked(reply: &Reply) {
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{:?}", reply.body);
    assert_eq!(
        reply.header("www-authenticate"),
        Some("Bearer error=\"invalid_token\"")
    );
    assert_eq!(reply.error_code(), -32000);
}

#[tokio::test]
async fn a_refused_provisional_caller_gets_the_401_of_every_method_and_nothing_runs() {
    let door = late(roomy_limits());
    let call = |tool: &str| json!({"name": tool, "arguments": {}});
    for (method, params) in [
        (
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
        ("tools/list", json!({})),
        ("ping", json!({})),
        ("tools/call", call("plain")),
        ("tools/call", call("nosuch")),
        (
            "tools/call",
            json!({"name": "confirming", "arguments": {"n": "not a number"}}),
        ),
    ] {
        assert_revoked(&door.rpc("late-revoked", method, params).await);
    }
    assert_eq!(door.ran(), 0, "no handler ran for a refused caller");
    // an unreadable body and a notification are refused the same way
    assert_revoked(&send(&door.router, post(Some("late-revoked"), "{not json")).await);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_revoked(&send(&door.router, post(Some("late-revoked"), note)).await);
    // the record of a late refusal is a refusal's: no caller, no method, no tool
    let last = door.records.0.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (
            last.http_status,
            last.principal_kind,
            last.method,
            last.tool
        ),
        (401, None, None, None)
    );
}

#[tokio::test]
async fn a_tool_that_confirms_its_caller_runs_first_and_its_answer_waits_for_the_confirmation() {
    let door = late(roomy_limits());
    let confirming = json!({"name": "confirming", "arguments": {}});
    // refused: the handler ran (its own statement is where it refuses), its answer is not sent
    assert_revoked(
        &door
            .rpc("late-revoked", "tools/call", confirming.clone())
            .await,
    );
    assert_eq!(door.ran(), 1);
    // confirmed: the answer is the tool's
    let ok = door.rpc("late-ok", "tools/call", confirming.clone()).await;
    assert_eq!(
        ok.result()["structuredContent"],
        json!({"ran": "confirming"})
    );
    assert_eq!(door.ran(), 2);
    // asking for progress would stream the answer before a refusal: confirmed before it runs
    let with_progress =
        json!({"name": "confirming", "arguments": {}, "_meta": {"progressToken": 7}});
    assert_revoked(&door.rpc("late-revoked", "tools/call", with_progress).await);
    assert_eq!(door.ran(), 2);
}

#[tokio::test]
async fn a_confirmed_caller_is_answered_as_ever_and_a_checked_one_is_not_asked_again() {
    let door = late(roomy_limits());
    let plain = json!({"name": "plain", "arguments": {}});
    let ok = door.rpc("late-ok", "tools/call", plain.clone()).await;
    assert_eq!(ok.result()["structuredContent"], json!({"ran": "plain"}));
    assert!(door.asked() >= 1);
    let asked = door.asked();
    let now = door.rpc("now-ok", "tools/call", plain).await;
    assert_eq!(now.result()["structuredContent"], json!({"ran": "plain"}));
    assert_eq!(
        door.asked(),
        asked,
        "a principal checked when made is not asked"
    );
}

#[tokio::test]
async fn a_refused_provisional_caller_past_its_admission_limit_still_gets_the_401() {
    let door = late(Limits {
        rate_per_window: 1,
        ..roomy_limits()
    });
    let ping = || door.rpc("late-revoked", "ping", json!({}));
    assert_revoked(&ping().await);
    // the second is over the rate limit, and the refusal of the credential comes first
    assert_revoked(&ping().await);
    let ok = door.rpc("late-ok", "ping", json!({})).await;
    assert_eq!(ok.status, StatusCode::OK);
    let limited = door.rpc("late-ok", "ping", json!({})).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn behind_a_method_gate_a_tool_that_confirms_its_caller_is_confirmed_before_the_gate() {
    let meter = Arc::new(Meter::default());
    let door = late_with(roomy_limits(), Some(Arc::clone(&meter)));
    let confirming = json!({"name": "confirming", "arguments": {}});
    // refused before the gate meters anything, and before the handler runs
    assert_revoked(
        &door
            .rpc("late-revoked", "tools/call", confirming.clone())
            .await,
    );
    assert_eq!(meter.consulted.load(Ordering::SeqCst), 0);
    assert_eq!(door.ran(), 0);
    // a live caller is metered (after framing and once the tool is resolved) and answered
    let ok = door.rpc("late-ok", "tools/call", confirming).await;
    assert_eq!(
        ok.result()["structuredContent"],
        json!({"ran": "confirming"})
    );
    assert_eq!(meter.consulted.load(Ordering::SeqCst), 2);
    assert_eq!(door.ran(), 1);
}
