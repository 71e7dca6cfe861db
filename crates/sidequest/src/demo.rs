//! The demo world: a GM `gm`, a player `player`, the scenario "The Drowned Lighthouse", and
//! playable assignments with tokens — so a person can connect an MCP client in one step.

use anyhow::Context;
use mcp_door::Clock;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::domain::{Assignment, Language, Mode, Node, PlayStatus, User};
use crate::service::{PlayService, Random};
use crate::store::{NewScenario, NewUser, SharedStore, StoreError};

/// The demo scenario's title.
pub const SCENARIO_TITLE: &str = "The Drowned Lighthouse";

fn node(
    id: &str,
    kind: &str,
    title: &str,
    published: bool,
    public_text: &str,
    gm_text: &str,
) -> Node {
    Node {
        id: id.into(),
        kind: kind.into(),
        title: title.into(),
        published,
        public_text: public_text.into(),
        gm_text: gm_text.into(),
    }
}

/// The demo scenario's nodes.
pub fn demo_nodes() -> Vec<Node> {
    vec![
        node(
            "harbor",
            "scene",
            "The Harbor",
            true,
            "Fog lies on the harbor of Saltmere before dawn. Fishing boats knock against the pier; the drowned lighthouse stands dark across the bay.",
            "GM only: the harbormaster is paid by smugglers to keep the lighthouse dark.",
        ),
        node(
            "lighthouse",
            "scene",
            "The Lighthouse",
            true,
            "The lighthouse rises from the shallows at low tide. Its door hangs open and salt crusts the spiral stair.",
            "GM only: the keeper's journal hides the tide tables the smugglers need.",
        ),
        node(
            "mira",
            "npc",
            "Mira",
            true,
            "Mira, a young net-mender, searches the pier every morning for her missing brother.",
            "GM only: Mira's brother joined the smugglers willingly.",
        ),
        node(
            "vault",
            "scene",
            "The Vault",
            false,
            "A flooded vault beneath the lighthouse.",
            "GM only: the smugglers' cache; the finale of the main campaign.",
        ),
    ]
}

/// Creates a user, or returns the existing one with that username.
pub async fn create_user(
    store: &SharedStore,
    clock: &dyn Clock,
    random: &dyn Random,
    username: &str,
    is_gm: bool,
    password_hash: Option<String>,
) -> anyhow::Result<User> {
    let valid = !username.is_empty()
        && username.chars().count() <= 64
        && username
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !valid {
        anyhow::bail!("a username is 1–64 characters of letters, digits, '.', '_' or '-'");
    }
    let new = NewUser {
        id: random.uuid(),
        username: username.to_owned(),
        display_name: username.to_owned(),
        password_hash,
        is_gm,
        created_at: clock.now_millis(),
    };
    match store.create_user(&new).await {
        Ok(u) => Ok(u),
        Err(StoreError::Conflict(_)) => store
            .user_by_username(username)
            .await?
            .with_context(|| format!("user {username} vanished")),
        Err(e) => Err(e.into()),
    }
}

/// What `demo` created.
#[derive(Debug, Clone)]
pub struct DemoCreated {
    pub gm: User,
    pub player: User,
    pub scenario_id: Uuid,
    pub nodes: Vec<Node>,
    /// (assignment, plaintext token)
    pub assignments: Vec<(Assignment, String)>,
}

impl DemoCreated {
    /// One JSON object describing everything, tokens included.
    pub fn to_json(&self) -> Value {
        json!({
            "gm": {"id": self.gm.id, "username": self.gm.username},
            "player": {"id": self.player.id, "username": self.player.username},
            "scenario": {
                "id": self.scenario_id,
                "title": SCENARIO_TITLE,
                "source_version": 1,
                "nodes": self.nodes.iter().map(|n| json!({
                    "id": n.id, "kind": n.kind, "title": n.title, "published": n.published,
                    "public_text": n.public_text, "gm_text": n.gm_text,
                })).collect::<Vec<_>>(),
            },
            "assignments": self.assignments.iter().map(|(a, token)| json!({
                "id": a.id,
                "token": token,
                "gm_notes": a.gm_notes,
                "character": a.character,
                "mode": a.mode.as_str(),
                "language": a.language.as_str(),
                "version": a.version,
                "current_scene": a.current_scene,
                "published_node_ids": a.published_node_ids,
            })).collect::<Vec<_>>(),
        })
    }

    /// A ready-to-paste MCP client configuration for the first assignment's token.
    pub fn client_config(&self, public_url: &str) -> String {
        let Some((a, token)) = self.assignments.first() else {
            return String::new();
        };
        let url = format!("{}/play/mcp", public_url.trim_end_matches('/'));
        let config = json!({"mcpServers": {"sidequest": {"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {token}")}}}});
        format!(
            "Demo assignment {} for player `{}` (character Arin) in \"{SCENARIO_TITLE}\".\n\
             Play token (shown once, valid 14 days): {token}\n\n\
             MCP client configuration (Streamable HTTP):\n{}\n",
            a.id,
            self.player.username,
            serde_json::to_string_pretty(&config).unwrap_or_default()
        )
    }
}

/// Creates (or reuses) the demo users and scenario, then `n` new assignments with tokens.
pub async fn run(service: &PlayService, n: u32) -> anyhow::Result<DemoCreated> {
    let store = &service.store;
    let clock = service.clock.as_ref();
    let random = service.random.as_ref();
    let gm = create_user(store, clock, random, "gm", true, None).await?;
    let player = create_user(store, clock, random, "player", false, None).await?;
    let scenario = match store.scenario_by_title(gm.id, SCENARIO_TITLE).await? {
        Some(s) => s,
        None => {
            store
                .create_scenario(&NewScenario {
                    id: random.uuid(),
                    owner_id: gm.id,
                    title: SCENARIO_TITLE.into(),
                    nodes: demo_nodes(),
                    created_at: clock.now_millis(),
                })
                .await?
        }
    };
    let nodes = store.nodes(scenario.id, 1).await?;
    let mut assignments = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let now = clock.now_millis();
        let a = Assignment {
            id: random.uuid(),
            scenario_id: scenario.id,
            source_version: 1,
            gm_id: gm.id,
            player_id: player.id,
            mode: Mode::Solo,
            language: Language::En,
            character: "Arin".into(),
            brief: "Arin stays behind in Saltmere while the party travels inland. Explore the harbor before dawn.".into(),
            instructions: "Keep the tone quiet and eerie. Offer Mira as a possible contact.".into(),
            boundaries: "No combat deaths; do not enter the vault; do not resolve the smuggler plot.".into(),
            return_condition: "Arin rejoins the party at dawn.".into(),
            gm_notes: "GM only: Mira's brother is with the smugglers; keep this hidden.".into(),
            published_node_ids: vec!["harbor".into(), "lighthouse".into(), "mira".into()],
            auto_approve: false,
            status: PlayStatus::Active,
            version: 1,
            memory: String::new(),
            current_scene: Some("harbor".into()),
            summary: None,
            created_at: now,
            updated_at: now,
        };
        store.create_assignment(&a).await?;
        let (token, _) = service
            .issue_token(a.id)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        assignments.push((a, token));
    }
    Ok(DemoCreated {
        gm,
        player,
        scenario_id: scenario.id,
        nodes,
        assignments,
    })
}
