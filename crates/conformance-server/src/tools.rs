//! The fixture tools the suite's tool scenarios call, each answering exactly what its scenario
//! describes (`test_simple_text` … `json_schema_2020_12_tool`, `test_missing_capability`).

use mcp_door::model::{
    CallToolResult, ContentBlock, EmbeddedResource, ResourceContents, ToolAnnotations,
};
use mcp_door::{CallContext, ToolDecl, ToolFailure};
use serde_json::{Map, Value, json};

/// A 1×1 PNG.
pub const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight samples of 8-bit mono WAV silence.
pub const TEST_AUDIO_BASE64: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn embedded(uri: &str, mime: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(
        ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            text: text.to_owned(),
            meta: None,
        },
    ))
}

/// A tool with no arguments whose answer is always `result`.
fn constant(name: &str, title: &str, description: &str, result: CallToolResult) -> ToolDecl {
    ToolDecl::new(
        name,
        title,
        description,
        no_arguments(),
        move |_ctx: CallContext, _args: Map<String, Value>| {
            let result = result.clone();
            async move { Ok::<_, ToolFailure>(result) }
        },
    )
    .with_annotations(ToolAnnotations::new().read_only(true))
}

/// The JSON Schema 2020-12 fixture of the `json-schema-2020-12` scenario (SEP-1613, SEP-2106).
pub fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// Every fixture tool, in the order `tools/list` gives them.
pub fn fixture_tools() -> Vec<ToolDecl> {
    let image = || ContentBlock::image(TEST_IMAGE_BASE64, "image/png");
    vec![
        constant(
            "test_simple_text",
            "Simple text",
            "Returns one text block.",
            CallToolResult::success(vec![ContentBlock::text(
                "This is a simple text response for testing.",
            )]),
        ),
        constant(
            "test_image_content",
            "Image content",
            "Returns a 1x1 PNG image block.",
            CallToolResult::success(vec![image()]),
        ),
        constant(
            "test_audio_content",
            "Audio content",
            "Returns a short WAV audio block.",
            CallToolResult::success(vec![ContentBlock::audio(TEST_AUDIO_BASE64, "audio/wav")]),
        ),
        constant(
            "test_embedded_resource",
            "Embedded resource",
            "Returns an embedded text resource.",
            CallToolResult::success(vec![embedded(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]),
        ),
        constant(
            "test_multiple_content_types",
            "Mixed content",
            "Returns text, an image and an embedded JSON resource.",
            CallToolResult::success(vec![
                ContentBlock::text("Multiple content types test:"),
                image(),
                embedded(
                    "test://mixed-content-resource",
                    "application/json",
                    &json!({"test": "data", "value": 123}).to_string(),
                ),
            ]),
        ),
        constant(
            "test_error_handling",
            "Error handling",
            "Always answers a tool error (isError: true).",
            CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )]),
        ),
        ToolDecl::new(
            "json_schema_2020_12_tool",
            "JSON Schema 2020-12",
            "Tool with JSON Schema 2020-12 features",
            json_schema_2020_12(),
            |_ctx: CallContext, args: Map<String, Value>| async move {
                Ok::<_, ToolFailure>(CallToolResult::success(vec![ContentBlock::text(format!(
                    "JSON Schema 2020-12 tool called with: {}",
                    Value::Object(args)
                ))]))
            },
        ),
        ToolDecl::new(
            "test_mcp_param_headers",
            "Mcp-Param headers",
            "Echoes region and query; region is mirrored in the Mcp-Param-Region header (x-mcp-header).",
            json!({"type": "object", "properties": {
                "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            }, "required": ["region"], "additionalProperties": false}),
            |_ctx: CallContext, args: Map<String, Value>| async move {
                Ok::<_, ToolFailure>(CallToolResult::success(vec![ContentBlock::text(format!(
                    "region={} query={}",
                    args.get("region")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    args.get("query")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                ))]))
            },
        ),
        ToolDecl::new(
            "test_missing_capability",
            "Missing capability",
            "Needs the client's sampling capability: a request that does not declare it is refused with MissingRequiredClientCapabilityError; one that does is told so.",
            json!({"type": "object", "properties": {}}),
            |ctx: CallContext, _args: Map<String, Value>| async move {
                let declared = ctx
                    .client_capabilities
                    .as_ref()
                    .is_some_and(|c| c.get("sampling").is_some());
                if declared {
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        "The sampling capability is declared.",
                    )]))
                } else {
                    Err(ToolFailure::MissingClientCapability(
                        json!({"sampling": {}}),
                    ))
                }
            },
        ),
    ]
}
