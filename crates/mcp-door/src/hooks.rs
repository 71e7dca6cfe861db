//! Optional resources, prompts and argument completion a product can expose through a door.

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::catalog::CallContext;
use crate::outcome::InputRequired;

/// A JSON-RPC error a hook returns (e.g. −32002 for an unknown resource).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcFailure {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// What an interactive hook (`prompts/get`, `resources/read`) answers.
#[derive(Debug, Clone, PartialEq)]
pub enum HookAnswer {
    /// The method's ordinary `result`.
    Complete(Value),
    /// Input the client must provide first (2026-07-28 only).
    InputRequired(InputRequired),
}

/// `resources/list`, `resources/templates/list` and `resources/read`.
#[async_trait]
pub trait ResourceProvider: Send + Sync + 'static {
    /// The `result` of `resources/list`.
    async fn list(&self, ctx: &CallContext) -> Result<Value, RpcFailure>;
    /// The `result` of `resources/templates/list`.
    async fn templates(&self, ctx: &CallContext) -> Result<Value, RpcFailure>;
    /// The `result` of `resources/read` for `uri`.
    async fn read(&self, ctx: &CallContext, uri: &str) -> Result<Value, RpcFailure>;
    /// `resources/read` for a provider that may need client input first (the door calls this
    /// one). Default: [`ResourceProvider::read`].
    async fn read_interactive(
        &self,
        ctx: &CallContext,
        uri: &str,
    ) -> Result<HookAnswer, RpcFailure> {
        self.read(ctx, uri).await.map(HookAnswer::Complete)
    }
}

/// `prompts/list` and `prompts/get`.
#[async_trait]
pub trait PromptProvider: Send + Sync + 'static {
    async fn list(&self, ctx: &CallContext) -> Result<Value, RpcFailure>;
    async fn get(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Value, RpcFailure>;
    /// `prompts/get` for a provider that may need client input first (the door calls this
    /// one). Default: [`PromptProvider::get`].
    async fn get_interactive(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<HookAnswer, RpcFailure> {
        self.get(ctx, name, arguments)
            .await
            .map(HookAnswer::Complete)
    }
}

/// `completion/complete`: suggestions for a prompt's or resource template's argument.
#[async_trait]
pub trait CompletionProvider: Send + Sync + 'static {
    /// The `result` of `completion/complete` (`{"completion": {"values": [...], ...}}`) for
    /// `reference` (`{"type": "ref/prompt", "name"}` or `{"type": "ref/resource", "uri"}`),
    /// the argument being completed (`{"name", "value"}`) and the optional `context`.
    async fn complete(
        &self,
        ctx: &CallContext,
        reference: &Value,
        argument: &Value,
        context: Option<&Value>,
    ) -> Result<Value, RpcFailure>;
}
