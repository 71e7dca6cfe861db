//! The documentation as MCP resources and the ready examples as prompts (SURFACE §8.3), served from
//! the same parsed content as the Help tools; and `elixir://cards`, the full `cards_catalog`
//! body from the same code as the tool (null fields before the first read).

use std::sync::Arc;

use async_trait::async_trait;
use mcp_door::{CallContext, PromptProvider, ResourceProvider, RpcFailure};
use serde_json::{Map, Value, json};

use crate::content::{Content, Example};
use crate::mcp::call::Fail;
use crate::services::Services;

const RESOURCE_NOT_FOUND: i64 = -32002;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// Resources and prompts of every door.
pub struct Docs {
    pub services: Arc<Services>,
}

fn unknown_uri(uri: &str, hint: &str) -> RpcFailure {
    RpcFailure {
        code: RESOURCE_NOT_FOUND,
        message: format!("Resource not found: {uri}"),
        data: Some(json!({"uri": uri, "hint": hint})),
    }
}

fn text(uri: &str, mime: &str, body: String) -> Value {
    json!({"contents": [{"uri": uri, "mimeType": mime, "text": body}]})
}

fn json_text(uri: &str, value: &Value) -> Value {
    text(uri, "application/json", value.to_string())
}

impl Docs {
    /// `elixir://cards`: the tool's body; a store failure is −32603 with the request id only.
    async fn cards(&self, ctx: &CallContext, uri: &str) -> Result<Value, RpcFailure> {
        match crate::tools::cards::resource_body(&self.services, ctx.request_id).await {
            Ok(body) => Ok(json_text(uri, &body)),
            Err(fail) => {
                let detail = match fail {
                    Fail::Tool(e) => e.message,
                    Fail::Unavailable(d) | Fail::Internal(d) => d,
                };
                tracing::error!(request_id = %ctx.request_id, %detail, "elixir://cards failed");
                Err(RpcFailure {
                    code: INTERNAL_ERROR,
                    message: format!("Internal error; request_id {}", ctx.request_id),
                    data: Some(json!({"request_id": ctx.request_id.to_string()})),
                })
            }
        }
    }

    fn read_uri(&self, uri: &str) -> Result<Value, RpcFailure> {
        let content = &self.services.content;
        let index_hint =
            "resources/list names every resource; elixir://docs is the index of pages.";
        let Some(path) = uri.strip_prefix("elixir://") else {
            return Err(unknown_uri(uri, index_hint));
        };
        match path {
            "docs" => {
                let pages: Vec<Value> = content.pages.iter().map(|p| p.index_entry()).collect();
                return Ok(json_text(uri, &json!({"pages": pages})));
            }
            "examples" => {
                let examples: Vec<Value> = content.examples.iter().map(|e| e.to_json()).collect();
                return Ok(json_text(uri, &json!({"examples": examples})));
            }
            "changelog" => return Ok(json_text(uri, &json!({"entries": content.changelog}))),
            "updates" => return Ok(json_text(uri, &json!({"updates": content.updates}))),
            _ => {}
        }
        if let Some(rest) = path.strip_prefix("docs/") {
            let (slug, section) = match rest.split_once('#') {
                Some((p, s)) => (p, Some(s)),
                None => (rest, None),
            };
            let Some(page) = content.page(slug) else {
                return Err(unknown_uri(uri, index_hint));
            };
            return match section {
                None => Ok(text(uri, "text/markdown", page.markdown.clone())),
                Some(s) => match page.section(s) {
                    Some(found) => Ok(text(uri, "text/markdown", found.markdown.clone())),
                    None => Err(unknown_uri(
                        uri,
                        &format!(
                            "elixir://docs/{slug} is the whole page; elixir_docs({{\"page\": \"{slug}\"}}) lists its sections."
                        ),
                    )),
                },
            };
        }
        if let Some(slug) = path.strip_prefix("examples/") {
            return match content.example(slug) {
                Some(e) => Ok(text(uri, "text/markdown", e.markdown.clone())),
                None => Err(unknown_uri(uri, "elixir://examples lists every example.")),
            };
        }
        Err(unknown_uri(uri, index_hint))
    }
}

#[async_trait]
impl ResourceProvider for Docs {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        let content = &self.services.content;
        let mut resources = vec![
            json!({"uri": "elixir://docs", "name": "docs", "title": "Documentation index", "mimeType": "application/json"}),
        ];
        for p in &content.pages {
            resources.push(json!({"uri": format!("elixir://docs/{}", p.slug), "name": format!("docs/{}", p.slug), "title": p.title, "description": p.summary, "mimeType": "text/markdown"}));
        }
        resources.push(json!({"uri": "elixir://examples", "name": "examples", "title": "Worked examples", "mimeType": "application/json"}));
        for e in &content.examples {
            resources.push(json!({"uri": format!("elixir://examples/{}", e.slug), "name": format!("examples/{}", e.slug), "title": e.title, "description": e.question, "mimeType": "text/markdown"}));
        }
        resources.push(json!({"uri": "elixir://changelog", "name": "changelog", "title": "Changelog", "mimeType": "application/json"}));
        resources.push(json!({"uri": "elixir://updates", "name": "updates", "title": "What's new", "mimeType": "application/json"}));
        resources.push(json!({"uri": "elixir://cards", "name": "cards", "title": "Cards catalogue", "mimeType": "application/json"}));
        Ok(json!({"resources": resources}))
    }

    async fn templates(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"resourceTemplates": [
            {"uriTemplate": "elixir://docs/{slug}", "name": "docs-page", "title": "One documentation page", "mimeType": "text/markdown"},
            {"uriTemplate": "elixir://docs/{slug}#{section}", "name": "docs-section", "title": "One H2 section of a page", "mimeType": "text/markdown"},
            {"uriTemplate": "elixir://examples/{slug}", "name": "example", "title": "One worked example", "mimeType": "text/markdown"},
        ]}))
    }

    async fn read(&self, ctx: &CallContext, uri: &str) -> Result<Value, RpcFailure> {
        if uri == "elixir://cards" {
            return self.cards(ctx, uri).await;
        }
        self.read_uri(uri)
    }
}

/// The examples offered as prompts: those that name tools. An example whose tools are not built
/// yet names none (it is marked coming), and a prompt must not send an assistant to a tool
/// that answers "Unknown tool".
fn prompts(content: &Content) -> impl Iterator<Item = &Example> {
    content.examples.iter().filter(|e| !e.tools.is_empty())
}

#[async_trait]
impl PromptProvider for Docs {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        let prompts: Vec<Value> = prompts(&self.services.content)
            .map(|e| json!({"name": e.slug, "title": e.title, "description": e.question}))
            .collect();
        Ok(json!({"prompts": prompts}))
    }

    async fn get(
        &self,
        _ctx: &CallContext,
        name: &str,
        _arguments: &Map<String, Value>,
    ) -> Result<Value, RpcFailure> {
        let content = &self.services.content;
        let Some(e) = prompts(content).find(|e| e.slug == name) else {
            let names: Vec<&str> = prompts(content).map(|e| e.slug.as_str()).collect();
            return Err(RpcFailure {
                code: INVALID_PARAMS,
                message: format!("Unknown prompt: {name}"),
                data: Some(
                    json!({"hint": "prompts/list names every prompt.", "candidates": names}),
                ),
            });
        };
        let message = format!(
            "{}\n\nUse these Elixir tools: {}.",
            e.question,
            e.tools.join(", ")
        );
        Ok(json!({
            "description": e.title,
            "messages": [{"role": "user", "content": {"type": "text", "text": message}}],
        }))
    }
}
