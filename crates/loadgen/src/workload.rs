//! What one client sends and how it judges the answer: the JSON-RPC bodies of the benchmarked
//! tools (Sidequest's two with realistic argument sizes; Elixir's read tools without
//! arguments), the tokens file, and the reply check.
//! Timing and concurrency are `run`'s.

use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use uuid::Uuid;

/// The tool a run exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")] // the values are the MCP tool names
pub enum Tool {
    GetPlayContext,
    CommitPlayTurn,
    /// Elixir's card catalogue (an agent key's door; the whole catalogue).
    CardsCatalog,
    /// Elixir's game clock (an agent key's door; no stored data).
    GameClock,
    /// Not one tool: `get_play_context` and `commit_play_turn` in turn on each client, as an
    /// assistant facilitating a session calls them. Every read after a turn is of a new
    /// version (a miss of the server's read cache that adds an entry), so a run fills the cache.
    PlaySession,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::GetPlayContext => "get_play_context",
            Tool::CommitPlayTurn => "commit_play_turn",
            Tool::CardsCatalog => "cards_catalog",
            Tool::GameClock => "game_clock",
            Tool::PlaySession => "play_session",
        }
    }

    /// The read a client sends: the tool itself, or `get_play_context` for the two that
    /// commit (a commit run reads only to learn its version).
    pub fn read(self) -> &'static str {
        match self {
            Tool::CommitPlayTurn | Tool::PlaySession => Tool::GetPlayContext.name(),
            tool => tool.name(),
        }
    }
}

/// The play tokens of a tokens file: `sidequest demo --json` output (`assignments[].token`),
/// or one token per line.
pub fn tokens(path: &Path) -> anyhow::Result<Vec<String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        let Some(list) = value.get("assignments").and_then(Value::as_array) else {
            bail!("{}: JSON without an `assignments` array", path.display());
        };
        return list
            .iter()
            .map(|a| {
                a.get("token")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .context("an assignment without a token")
            })
            .collect();
    }
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// A `tools/call` request body.
pub fn call(tool: &str, arguments: &Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}).to_string().into_bytes()
}

/// The fixed texts of one client's turns: sizes of a real facilitated turn (a 200-character
/// action, a 600-character narration, 2 KB of memory, two consequences).
#[derive(Debug, Clone)]
pub struct TurnTexts {
    action: String,
    narration: String,
    memory: String,
    consequences: Value,
    scene: String,
}

/// `text` repeated and cut to exactly `chars` characters.
fn sized(text: &str, chars: usize) -> String {
    text.chars().cycle().take(chars).collect()
}

impl TurnTexts {
    pub fn new(client: usize, scene: &str) -> Self {
        Self {
            action: sized(
                &format!(
                    "Client {client}: Arin walks the pier at low tide, asking the net-menders about the dark lighthouse. "
                ),
                200,
            ),
            narration: sized(
                "The fog thins for a moment. Mira looks up from her nets, studies Arin, and points at the shuttered harbormaster's office without a word. ",
                600,
            ),
            memory: sized(
                "## Arin's notes\n- Mira searches the pier each morning for her brother.\n- The lighthouse has been dark for three weeks.\n- The harbormaster avoids questions about the tide tables.\n",
                2048,
            ),
            consequences: json!([
                {"category": "relationship", "description": sized("Mira now trusts Arin enough to share what she saw on the night her brother vanished. ", 150)},
                {"category": "discovery", "description": sized("Arin learned that the harbormaster's office keeps a second, hidden set of tide tables. ", 150)},
            ]),
            scene: scene.to_owned(),
        }
    }

    /// A `commit_play_turn` body building on `expected_version`, with a fresh operation id.
    pub fn commit(&self, expected_version: i64) -> Vec<u8> {
        call(
            Tool::CommitPlayTurn.name(),
            &json!({
                "operation_id": Uuid::new_v4().to_string(),
                "expected_version": expected_version,
                "player_action": self.action,
                "narration": self.narration,
                "memory_markdown": self.memory,
                "current_scene": self.scene,
                "consequences": self.consequences,
            }),
        )
    }
}

#[derive(Deserialize)]
struct Envelope {
    result: Option<ToolResult>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(rename = "structuredContent")]
    structured: Option<Structured>,
}

#[derive(Deserialize)]
struct Structured {
    version: Option<i64>,
}

/// A successful tool call: the `version` of its structured result, if it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Success {
    pub version: Option<i64>,
}

/// Judges one answer: HTTP 200 with a JSON-RPC result whose `isError` is not true. The check
/// skips over the content without allocating it; only failures are parsed in full, for the
/// message.
pub fn check(status: u16, body: &[u8]) -> Result<Success, String> {
    let brief = || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
    if status != 200 {
        return Err(format!("HTTP {status}: {}", brief()));
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(Envelope {
            result: Some(r),
            error: None,
        }) if !r.is_error => Ok(Success {
            version: r.structured.and_then(|s| s.version),
        }),
        Ok(Envelope {
            result: Some(_),
            error: None,
        }) => {
            let text = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
                v["result"]["content"][0]["text"]
                    .as_str()
                    .map(str::to_owned)
            });
            Err(format!("isError: {}", text.unwrap_or_else(brief)))
        }
        Ok(_) => Err(format!("JSON-RPC error: {}", brief())),
        Err(e) => Err(format!("unreadable reply ({e}): {}", brief())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_arguments_have_the_documented_sizes() {
        let t = TurnTexts::new(3, "harbor");
        let body: Value = serde_json::from_slice(&t.commit(7)).unwrap();
        let args = &body["params"]["arguments"];
        assert_eq!(args["player_action"].as_str().unwrap().chars().count(), 200);
        assert_eq!(args["narration"].as_str().unwrap().chars().count(), 600);
        assert_eq!(
            args["memory_markdown"].as_str().unwrap().chars().count(),
            2048
        );
        assert_eq!(args["consequences"].as_array().unwrap().len(), 2);
        assert_eq!(args["expected_version"], 7);
        let second: Value = serde_json::from_slice(&t.commit(7)).unwrap();
        assert_ne!(
            second["params"]["arguments"]["operation_id"],
            args["operation_id"]
        );
    }

    #[test]
    fn check_accepts_results_and_rejects_every_failure_shape() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"version":4,"x":[1]},"isError":false}}"#;
        assert_eq!(check(200, ok), Ok(Success { version: Some(4) }));
        assert_eq!(
            check(200, crate::baseline::body(500).as_bytes()),
            Ok(Success { version: None })
        );
        let tool_error = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"409: Version conflict"}],"isError":true}}"#;
        assert_eq!(
            check(200, tool_error),
            Err("isError: 409: Version conflict".into())
        );
        assert!(
            check(
                200,
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}"#
            )
            .unwrap_err()
            .starts_with("JSON-RPC error")
        );
        assert!(check(429, b"{}").unwrap_err().starts_with("HTTP 429"));
        assert!(
            check(200, b"not json")
                .unwrap_err()
                .starts_with("unreadable")
        );
    }

    #[test]
    fn tokens_come_from_demo_json_or_lines() {
        let dir = std::env::temp_dir().join(format!("loadgen-tokens-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let json_file = dir.join("demo.json");
        std::fs::write(
            &json_file,
            r#"{"assignments":[{"id":"a","token":"sq_play_1"},{"id":"b","token":"sq_play_2"}]}"#,
        )
        .unwrap();
        assert_eq!(tokens(&json_file).unwrap(), ["sq_play_1", "sq_play_2"]);
        let lines = dir.join("tokens.txt");
        std::fs::write(&lines, "t1\n\n t2 \n").unwrap();
        assert_eq!(tokens(&lines).unwrap(), ["t1", "t2"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
