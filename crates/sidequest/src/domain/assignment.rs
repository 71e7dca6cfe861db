//! Creating assignments: the REST creation fields, their bounds, and the hash that makes an
//! identical retry with the same client UUID safe.

use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use crate::domain::fields::FieldErrors;
use crate::domain::play::canonical_hash;
use crate::domain::{Assignment, Language, Millis, Mode, Node, PlayStatus, Scenario, User};

/// Bounds of the creation fields, in characters (documented on the web form and in docs/).
pub mod bounds {
    pub const CHARACTER: usize = 200;
    pub const BRIEF: usize = 4_000;
    pub const INSTRUCTIONS: usize = 4_000;
    pub const BOUNDARIES: usize = 2_000;
    pub const RETURN_CONDITION: usize = 1_000;
    pub const GM_NOTES: usize = 8_000;
    pub const PUBLISHED_NODES: usize = 200;
}

/// The body of `POST /api/plays/`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CreateAssignment {
    pub id: Uuid,
    pub scenario_id: Uuid,
    pub source_version: i64,
    pub player_username: String,
    pub mode: Mode,
    pub language: Language,
    pub character: String,
    pub brief: String,
    #[serde(default)]
    pub instructions: String,
    pub boundaries: String,
    pub return_condition: String,
    #[serde(default)]
    pub gm_notes: String,
    pub published_node_ids: Vec<String>,
    #[serde(default)]
    pub auto_approve: bool,
}

impl CreateAssignment {
    /// SHA-256 of the canonical creation content: an identical retry has the same hash.
    pub fn creation_hash(&self) -> String {
        canonical_hash(&json!({
            "id": self.id.to_string(),
            "scenario_id": self.scenario_id.to_string(),
            "source_version": self.source_version,
            "player_username": self.player_username,
            "mode": self.mode.as_str(),
            "language": self.language.as_str(),
            "character": self.character,
            "brief": self.brief,
            "instructions": self.instructions,
            "boundaries": self.boundaries,
            "return_condition": self.return_condition,
            "gm_notes": self.gm_notes,
            "published_node_ids": self.published_node_ids,
            "auto_approve": self.auto_approve,
        }))
    }

    /// Checks the text bounds (no lookups needed).
    pub fn check_texts(&self) -> FieldErrors {
        let mut e = FieldErrors::new();
        e.text("character", &self.character, 1, bounds::CHARACTER);
        e.text("brief", &self.brief, 1, bounds::BRIEF);
        e.text("instructions", &self.instructions, 0, bounds::INSTRUCTIONS);
        e.text("boundaries", &self.boundaries, 1, bounds::BOUNDARIES);
        e.text(
            "return_condition",
            &self.return_condition,
            1,
            bounds::RETURN_CONDITION,
        );
        e.text("gm_notes", &self.gm_notes, 0, bounds::GM_NOTES);
        if self.published_node_ids.len() > bounds::PUBLISHED_NODES {
            e.add(
                "published_node_ids",
                format!("at most {} nodes", bounds::PUBLISHED_NODES),
            );
        }
        e
    }

    /// Checks everything against the scenario's source version and the player, and builds
    /// the assignment. The first published scene listed becomes the current scene.
    pub fn build(
        &self,
        gm: &User,
        scenario: &Scenario,
        nodes: &[Node],
        player: Option<&User>,
        now: Millis,
    ) -> Result<Assignment, FieldErrors> {
        let mut e = self.check_texts();
        if self.source_version < 1 || self.source_version > scenario.version {
            e.add(
                "source_version",
                format!(
                    "must be a published version of the scenario (1–{})",
                    scenario.version
                ),
            );
        }
        let mut seen = Vec::new();
        for id in &self.published_node_ids {
            if seen.contains(&id) {
                e.add("published_node_ids", format!("{id} is listed twice"));
            } else if !nodes.iter().any(|n| &n.id == id && n.published) {
                e.add(
                    "published_node_ids",
                    format!(
                        "{id} is not a published node of source version {}",
                        self.source_version
                    ),
                );
            }
            seen.push(id);
        }
        let start = self.published_node_ids.iter().find(|id| {
            nodes
                .iter()
                .any(|n| &n.id == *id && n.published && n.kind == "scene")
        });
        if start.is_none() && !e.0.contains_key("published_node_ids") {
            e.add(
                "published_node_ids",
                "must include at least one published scene",
            );
        }
        match player {
            None => e.add("player_username", "no such user"),
            Some(p) if !p.active => e.add("player_username", "this user is deactivated"),
            Some(_) => {}
        }
        e.into_result()?;
        let Some(player) = player else {
            return Err(FieldErrors::new());
        };
        Ok(Assignment {
            id: self.id,
            scenario_id: scenario.id,
            source_version: self.source_version,
            gm_id: gm.id,
            player_id: player.id,
            mode: self.mode,
            language: self.language,
            character: self.character.clone(),
            brief: self.brief.clone(),
            instructions: self.instructions.clone(),
            boundaries: self.boundaries.clone(),
            return_condition: self.return_condition.clone(),
            gm_notes: self.gm_notes.clone(),
            published_node_ids: self.published_node_ids.clone(),
            auto_approve: self.auto_approve,
            status: PlayStatus::Active,
            version: 1,
            memory: String::new(),
            current_scene: start.cloned(),
            summary: None,
            created_at: now,
            updated_at: now,
        })
    }
}
