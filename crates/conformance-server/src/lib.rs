//! conformance-server: the fixture tools, prompts and resources the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) expects of a server, behind one `mcp-door`
//! endpoint at `/mcp` that needs no credential. It exists to judge the platform (both protocol
//! eras, the transport, the hooks) and is part of neither product.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use mcp_door::model::Implementation;
use mcp_door::{
    AuthError, AuthRequest, Authenticator, CallOutcome, Catalog, CatalogError, Door, Limits,
    LocalAdmission, Presenter, Principal, SystemClock, Violation,
};

mod content;
mod local;
mod mrtr;
mod progress;
mod tools;

pub use content::{FixtureCompletions, FixturePrompts, FixtureResources};
pub use tools::fixture_tools;

/// The endpoint path the suite is pointed at.
pub const PATH: &str = "/mcp";
/// `serverInfo.name`.
pub const SERVER_NAME: &str = "mcp-door-conformance";

/// Every request is the same anonymous principal: the suite sends no credential.
pub struct Anonymous;

#[async_trait]
impl Authenticator for Anonymous {
    async fn authenticate(&self, _request: &AuthRequest<'_>) -> Result<Principal, AuthError> {
        Ok(Principal::new(
            "anonymous",
            "conformance-suite",
            "anonymous",
        ))
    }
}

/// How the fixture server presents itself.
pub struct FixturePresenter;

impl Presenter for FixturePresenter {
    fn server_info(&self, _principal: &Principal, fingerprint: &str) -> Implementation {
        let mut info = Implementation::new(
            SERVER_NAME,
            format!("{}+tools.{fingerprint}", env!("CARGO_PKG_VERSION")),
        );
        info.title = Some("mcp-door conformance fixtures".to_owned());
        info
    }

    fn instructions(&self, _principal: &Principal) -> Option<String> {
        Some(
            "Fixture server for the MCP conformance suite: test_* tools, prompts and test:// resources."
                .to_owned(),
        )
    }

    fn invalid_arguments(&self, tool: &str, violations: &[Violation]) -> CallOutcome {
        let detail: Vec<String> = violations
            .iter()
            .map(|v| format!("{}: {}", v.pointer, v.message))
            .collect();
        CallOutcome::failed(
            "invalid_arguments",
            mcp_door::model::CallToolResult::error(vec![mcp_door::model::ContentBlock::text(
                format!("Invalid arguments for {tool}: {}", detail.join("; ")),
            )]),
        )
    }
}

/// The fixture door as a router (`POST /mcp`), with the in-process admission the embedded
/// products use, limits roomy enough for the suite's bursts, and Host/Origin held to the
/// loopback names.
pub fn router() -> Result<Router, CatalogError> {
    let mut tools = fixture_tools();
    tools.extend(mrtr::tools());
    tools.extend(progress::tools());
    let catalog = Arc::new(Catalog::new(tools)?);
    let mut key = [0u8; 32];
    mcp_door::Random::fill(&mcp_door::OsRandom, &mut key);
    let limits = Limits {
        rate_per_window: 100_000,
        credential_concurrency: 256,
        global_concurrency: 256,
        ..Limits::default()
    };
    let admission = Arc::new(LocalAdmission::new(limits, Arc::new(SystemClock)));
    Ok(Door::new(
        PATH,
        Arc::new(Anonymous),
        catalog,
        admission,
        Arc::new(FixturePresenter),
    )
    .with_prompts(Arc::new(FixturePrompts))
    .with_resources(Arc::new(FixtureResources))
    .with_completions(Arc::new(FixtureCompletions))
    .with_request_state_key(key)
    .router()
    .layer(axum::middleware::from_fn(local::only_local)))
}
