//! The fixture prompts (`test_simple_prompt` … `test_prompt_with_image`), resources
//! (`test://static-text`, `test://static-binary`, the template `test://template/{id}/data`)
//! and argument completion the suite's scenarios read.

use async_trait::async_trait;
use mcp_door::{
    CallContext, CompletionProvider, HookAnswer, PromptProvider, ResourceProvider, RpcFailure,
    jsonrpc,
};
use serde_json::{Map, Value, json};

use crate::tools::TEST_IMAGE_BASE64;

fn invalid(message: String) -> RpcFailure {
    RpcFailure {
        code: jsonrpc::INVALID_PARAMS,
        message,
        data: None,
    }
}

fn text(role: &str, text: &str) -> Value {
    json!({"role": role, "content": {"type": "text", "text": text}})
}

/// The fixture prompts.
pub struct FixturePrompts;

/// A required string argument of a prompt, or the −32602 naming it.
fn required<'a>(
    prompt: &str,
    arguments: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, RpcFailure> {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("Prompt {prompt} needs the string argument {name}")))
}

#[async_trait]
impl PromptProvider for FixturePrompts {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"prompts": [
            {"name": "test_simple_prompt", "title": "Simple Test Prompt",
             "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "title": "Prompt With Arguments",
             "description": "A prompt with required arguments",
             "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
             ]},
            {"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource",
             "description": "A prompt that includes an embedded resource",
             "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}
             ]},
            {"name": "test_prompt_with_image", "title": "Prompt With Image",
             "description": "A prompt that includes image content"},
            {"name": "test_input_required_result_prompt", "title": "Prompt With Asked Context",
             "description": "Asks the client (elicitation, 2026-07-28) what context to use"}
        ]}))
    }

    async fn get_interactive(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<HookAnswer, RpcFailure> {
        if name != "test_input_required_result_prompt" {
            return self
                .get(ctx, name, arguments)
                .await
                .map(HookAnswer::Complete);
        }
        Ok(
            match crate::mrtr::accepted(ctx, "user_context", "context").and_then(Value::as_str) {
                Some(context) => HookAnswer::Complete(json!({"messages": [
                    text("user", &format!("Use this context: {context}"))
                ]})),
                None => HookAnswer::InputRequired(crate::mrtr::ask(
                    vec![(
                        "user_context",
                        crate::mrtr::elicit(
                            "What context should the prompt use?",
                            json!({"context": {"type": "string"}}),
                            &["context"],
                        ),
                    )],
                    None,
                )),
            },
        )
    }

    async fn get(
        &self,
        _ctx: &CallContext,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Value, RpcFailure> {
        let messages = match name {
            "test_simple_prompt" => vec![text("user", "This is a simple prompt for testing.")],
            "test_prompt_with_arguments" => {
                let arg1 = required(name, arguments, "arg1")?;
                let arg2 = required(name, arguments, "arg2")?;
                vec![text(
                    "user",
                    &format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
                )]
            }
            "test_prompt_with_embedded_resource" => {
                let uri = required(name, arguments, "resourceUri")?;
                vec![
                    json!({"role": "user", "content": {"type": "resource", "resource": {
                        "uri": uri, "mimeType": "text/plain",
                        "text": "Embedded resource content for testing."}}}),
                    text("user", "Please process the embedded resource above."),
                ]
            }
            "test_prompt_with_image" => vec![
                json!({"role": "user", "content": {"type": "image", "data": TEST_IMAGE_BASE64,
                    "mimeType": "image/png"}}),
                text("user", "Please analyze the image above."),
            ],
            _ => return Err(invalid(format!("Unknown prompt: {name}"))),
        };
        Ok(json!({"messages": messages}))
    }
}

/// The fixture resources.
pub struct FixtureResources;

/// The `id` of a `test://template/{id}/data` URI.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")?
        .strip_suffix("/data")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

#[async_trait]
impl ResourceProvider for FixtureResources {
    async fn list(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource",
             "description": "A static text resource for testing", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource",
             "description": "A static binary resource (image) for testing", "mimeType": "image/png"}
        ]}))
    }

    async fn templates(&self, _ctx: &CallContext) -> Result<Value, RpcFailure> {
        Ok(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template",
             "title": "Resource Template",
             "description": "A resource template with parameter substitution",
             "mimeType": "application/json"}
        ]}))
    }

    async fn read(&self, _ctx: &CallContext, uri: &str) -> Result<Value, RpcFailure> {
        let contents = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => {
                json!({"uri": uri, "mimeType": "image/png", "blob": TEST_IMAGE_BASE64})
            }
            _ => match template_id(uri) {
                Some(id) => json!({"uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}),
                None => {
                    return Err(RpcFailure {
                        code: jsonrpc::RESOURCE_NOT_FOUND,
                        message: format!("Resource not found: {uri}"),
                        data: Some(json!({"uri": uri})),
                    });
                }
            },
        };
        Ok(json!({"contents": [contents]}))
    }
}

/// Completion of prompt arguments: the known values that start with what was typed.
pub struct FixtureCompletions;

const CANDIDATES: [&str; 5] = ["paris", "park", "party", "test", "testing"];

#[async_trait]
impl CompletionProvider for FixtureCompletions {
    async fn complete(
        &self,
        _ctx: &CallContext,
        reference: &Value,
        argument: &Value,
        _context: Option<&Value>,
    ) -> Result<Value, RpcFailure> {
        let typed = argument["value"].as_str().unwrap_or_default();
        let values: Vec<&str> = match (reference["type"].as_str(), reference["name"].as_str()) {
            (Some("ref/prompt"), Some("test_prompt_with_arguments")) => CANDIDATES
                .into_iter()
                .filter(|c| c.starts_with(typed))
                .collect(),
            (Some("ref/prompt" | "ref/resource"), _) => Vec::new(),
            _ => {
                return Err(invalid(
                    "params.ref.type must be ref/prompt or ref/resource".into(),
                ));
            }
        };
        Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }
}
