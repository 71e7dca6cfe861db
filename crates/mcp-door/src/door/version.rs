//! The protocol revisions a door speaks — the handshake revisions 2025-03-26, 2025-06-18 and
//! 2025-11-25 and the stateless revision 2026-07-28 — and what each one's wire may carry:
//! fields newer than the revision in use are removed from every answer.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// One protocol revision the door speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// 2025-03-26: handshake; no titles, output schemas, structured content or resource links.
    V2025_03_26,
    /// 2025-06-18: handshake; titles, output schemas, structured content, resource links.
    V2025_06_18,
    /// 2025-11-25: handshake; icons, `websiteUrl` and `description` of implementations.
    V2025_11_25,
    /// 2026-07-28: stateless; every request carries its version in `_meta`, `resultType` on
    /// every result, `server/discover`, caching hints.
    V2026_07_28,
}

/// Every revision, newest first (the order of `data.supported` and `supportedVersions`).
pub const ALL: [Version; 4] = [
    Version::V2026_07_28,
    Version::V2025_11_25,
    Version::V2025_06_18,
    Version::V2025_03_26,
];

/// The handshake revision `initialize` answers when the client asks for one the door does not
/// speak (the lifecycle's rule), and the revision of a request that names none.
pub const NEWEST_HANDSHAKE: Version = Version::V2025_11_25;

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this revision is the stateless era (no `initialize`, `_meta` on every request).
    pub fn is_stateless(self) -> bool {
        self >= Version::V2026_07_28
    }

    /// `title` on tools, prompts, resources and implementations; `outputSchema`,
    /// `structuredContent`, resource links, `_meta` on tools.
    fn has_2025_06_18(self) -> bool {
        self >= Version::V2025_06_18
    }

    /// `icons`; `websiteUrl` and `description` on implementations; `execution` on tools.
    fn has_2025_11_25(self) -> bool {
        self >= Version::V2025_11_25
    }

    /// A `tools/list` entry as this revision's `Tool` defines it.
    pub fn tool(self, mut tool: Value) -> Value {
        if let Value::Object(o) = &mut tool {
            if !self.has_2025_06_18() {
                for k in ["title", "outputSchema", "_meta"] {
                    o.remove(k);
                }
            }
            if !self.has_2025_11_25() {
                o.remove("icons");
                o.remove("execution");
            }
            if self.is_stateless() {
                // Tasks left the core protocol for an extension the door does not offer.
                o.remove("execution");
            }
        }
        tool
    }

    /// `serverInfo` as this revision's `Implementation` defines it.
    pub fn implementation(self, mut info: Value) -> Value {
        if let Value::Object(o) = &mut info {
            if !self.has_2025_06_18() {
                o.remove("title");
            }
            if !self.has_2025_11_25() {
                for k in ["icons", "websiteUrl", "description"] {
                    o.remove(k);
                }
            }
        }
        info
    }

    /// A tool result as this revision's `CallToolResult` defines it.
    pub fn call_result(self, result: &mut CallToolResult) {
        if !self.has_2025_06_18() {
            result.structured_content = None;
            result
                .content
                .retain(|c| !matches!(c, ContentBlock::ResourceLink(_)));
        }
        result.result_type = self
            .is_stateless()
            .then_some(rmcp::model::ResultType::COMPLETE);
    }

    /// The response of a prepared tool result under this revision, as the chunks of a body:
    /// the bytes `call_result` and serialization make of the `tool_json` result it was
    /// prepared from.
    pub(crate) fn prepared_response(
        self,
        prepared: &crate::outcome::PreparedResult,
        id: &Value,
    ) -> Result<Vec<bytes::Bytes>, serde_json::Error> {
        prepared.response(id, self.is_stateless(), self.has_2025_06_18())
    }

    /// A prompts/resources hook's result: `title` and `icons` of listed items (and of the
    /// messages' resource links) removed where the revision predates them.
    pub fn hook_result(self, mut result: Value) -> Value {
        if self.has_2025_11_25() {
            return result;
        }
        if let Value::Object(o) = &mut result {
            for list in ["prompts", "resources", "resourceTemplates"] {
                if let Some(Value::Array(items)) = o.get_mut(list) {
                    for item in items {
                        self.strip_metadata(item);
                    }
                }
            }
            if !self.has_2025_06_18()
                && let Some(Value::Array(messages)) = o.get_mut("messages")
            {
                messages.retain(|m| m["content"]["type"] != "resource_link");
            }
        }
        result
    }

    fn strip_metadata(self, item: &mut Value) {
        if let Value::Object(o) = item {
            o.remove("icons");
            if !self.has_2025_06_18() {
                o.remove("title");
                if let Some(Value::Array(args)) = o.get_mut("arguments") {
                    for a in args {
                        if let Value::Object(a) = a {
                            a.remove("title");
                        }
                    }
                }
            }
        }
    }
}

/// The `data.supported` list of an `UnsupportedProtocolVersionError`, newest first.
pub fn supported() -> Vec<&'static str> {
    ALL.iter().map(|v| v.as_str()).collect()
}

/// The revision `initialize` answers for `requested`: the same one if it is a handshake
/// revision the door speaks, else the newest handshake revision.
pub fn negotiate(requested: &str) -> Version {
    match Version::parse(requested) {
        Some(v) if !v.is_stateless() => v,
        _ => NEWEST_HANDSHAKE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negotiation_echoes_handshake_revisions_and_answers_the_newest_otherwise() {
        assert_eq!(negotiate("2025-03-26"), Version::V2025_03_26);
        assert_eq!(negotiate("2025-06-18"), Version::V2025_06_18);
        assert_eq!(negotiate("2025-11-25"), Version::V2025_11_25);
        assert_eq!(negotiate("2024-11-05"), Version::V2025_11_25);
        assert_eq!(negotiate("2026-07-28"), Version::V2025_11_25);
        assert_eq!(negotiate(""), Version::V2025_11_25);
    }

    #[test]
    fn tools_lose_what_their_revision_lacks() {
        let tool = json!({"name": "t", "title": "T", "description": "d", "inputSchema": {},
            "outputSchema": {}, "_meta": {}, "icons": [], "annotations": {"title": "A"}});
        let old = Version::V2025_03_26.tool(tool.clone());
        assert_eq!(
            old,
            json!({"name": "t", "description": "d", "inputSchema": {}, "annotations": {"title": "A"}})
        );
        let mid = Version::V2025_06_18.tool(tool.clone());
        assert!(mid.get("title").is_some() && mid.get("icons").is_none());
        assert_eq!(Version::V2025_11_25.tool(tool.clone()), tool);
    }

    #[test]
    fn a_prepared_result_is_the_bytes_of_its_tool_json_result_in_every_revision() {
        let value = json!({"text": "line\n\"quoted\" \u{e9}\u{1F600} </tag>", "n": [1, 2.5, null],
            "nested": {"b": true, "a": ""}});
        let prepared = crate::outcome::PreparedResult::new(&value).unwrap();
        for version in ALL {
            for id in [json!(7), json!("req-1"), Value::Null] {
                let mut result = crate::catalog::tool_json(value.clone());
                version.call_result(&mut result);
                let expected = serde_json::to_vec(&crate::jsonrpc::Response {
                    jsonrpc: "2.0",
                    id: &id,
                    result: &result,
                })
                .unwrap();
                let chunks = version.prepared_response(&prepared, &id).unwrap();
                // the large chunks are the prepared bytes themselves, not copies
                let again = version.prepared_response(&prepared, &id).unwrap();
                assert_eq!(chunks[1].as_ptr(), again[1].as_ptr(), "{version:?}");
                let sent = chunks.concat();
                assert_eq!(
                    String::from_utf8(sent).unwrap(),
                    String::from_utf8(expected).unwrap(),
                    "{version:?}"
                );
            }
        }
        assert!(prepared.size() > 2 * value.to_string().len());
    }

    #[test]
    fn old_results_carry_no_structured_content_nor_links() {
        let mut r = crate::catalog::tool_json(json!({"a": 1}));
        Version::V2025_03_26.call_result(&mut r);
        assert!(r.structured_content.is_none() && r.result_type.is_none());
        let mut r = crate::catalog::tool_json(json!({"a": 1}));
        Version::V2026_07_28.call_result(&mut r);
        assert_eq!(r.result_type, Some(rmcp::model::ResultType::COMPLETE));
        assert!(r.structured_content.is_some());
    }
}
