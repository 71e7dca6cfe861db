//! The rules of play: validating turns and finishes, normalizing operations for receipts, and
//! deciding — on the state the store read, written only if it is still current — whether to
//! replay, refuse or write. It owns the types of that decision ([`OperationState`] in,
//! [`Decision`] out); how the store reads, guards and writes them is the store's.

use std::io::Write;

use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::domain::{
    Assignment, Category, Consequence, ConsequenceStatus, EventKind, JournalEvent, Millis, Node,
    OperationKind, PlayStatus, Receipt,
};

/// What an operation's rule sees: the state the store read, at one version of the assignment.
#[derive(Debug)]
pub struct OperationState<'a> {
    /// The assignment row. The plan decided on it is written only if its version is still
    /// current; otherwise the store reads again and the rule runs again.
    pub assignment: &'a Assignment,
    /// The receipt already stored for this operation id on this assignment, if any.
    pub receipt: Option<&'a Receipt>,
    /// The consequences named by the operation that belong to this assignment (reviews).
    pub consequences: &'a [Consequence],
    /// How many of the assignment's consequences are pending, when the operation asked.
    pub pending: Option<i64>,
}

/// A GM decision to write on one consequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub id: Uuid,
    pub status: ConsequenceStatus,
    pub note: Option<String>,
    pub decided_at: Millis,
}

/// Everything one operation writes, all or nothing.
#[derive(Debug, Clone)]
pub struct WritePlan {
    pub version: i64,
    pub status: PlayStatus,
    pub memory: String,
    pub current_scene: Option<String>,
    pub summary: Option<String>,
    pub updated_at: Millis,
    pub events: Vec<JournalEvent>,
    pub consequences: Vec<Consequence>,
    pub decisions: Vec<Decided>,
    pub receipt: Receipt,
}

impl WritePlan {
    /// The assignment row as this plan leaves `before`: the fields its write sets (version,
    /// status, memory, current scene, summary, update time) and the rest as they were.
    pub fn applied_to(&self, before: &Assignment) -> Assignment {
        Assignment {
            id: before.id,
            scenario_id: before.scenario_id,
            source_version: before.source_version,
            gm_id: before.gm_id,
            player_id: before.player_id,
            mode: before.mode,
            language: before.language,
            character: before.character.clone(),
            brief: before.brief.clone(),
            instructions: before.instructions.clone(),
            boundaries: before.boundaries.clone(),
            return_condition: before.return_condition.clone(),
            gm_notes: before.gm_notes.clone(),
            published_node_ids: before.published_node_ids.clone(),
            auto_approve: before.auto_approve,
            status: self.status,
            version: self.version,
            memory: self.memory.clone(),
            current_scene: self.current_scene.clone(),
            summary: self.summary.clone(),
            created_at: before.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// The rule's verdict on an operation, taken while the assignment row is locked.
#[derive(Debug)]
pub enum Decision {
    /// An identical operation was already committed: answer with its receipt, write nothing.
    Replay(Receipt),
    /// Write this plan (and the receipt inside it) atomically.
    Write(Box<WritePlan>),
}

/// Limits of the player contract, counted in characters (Unicode scalar values), not bytes.
pub mod limits {
    pub const ACTION_CHARS: usize = 4_000;
    pub const NARRATION_CHARS: usize = 6_000;
    pub const MEMORY_CHARS: usize = 16_000;
    pub const CONSEQUENCES: usize = 10;
    pub const DESCRIPTION_CHARS: usize = 1_500;
    pub const SUMMARY_CHARS: usize = 6_000;
    pub const QUERY_CHARS: usize = 200;
    pub const JOURNAL_PAGE_MAX: i64 = 20;
    pub const JOURNAL_PAGE_DEFAULT: i64 = 10;
    pub const CONTEXT_EVENTS: i64 = 5;
    pub const CONTEXT_CONSEQUENCES: i64 = 20;
    pub const SEARCH_HITS: usize = 10;
    pub const EXCERPT_CHARS: usize = 240;
}

/// A refusal of the play domain. Rendered as a tool result whose text starts with the status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DomainError {
    #[error("404: Play session not found")]
    NotFound,
    #[error(
        "409: Version conflict: expected {expected}, current {current}. Call get_play_context again."
    )]
    VersionConflict { expected: i64, current: i64 },
    #[error("409: Operation {0} was already used with different arguments.")]
    OperationReused(Uuid),
    #[error("409: Play session is completed.")]
    Completed,
    #[error("409: Consequence {0} is already decided.")]
    AlreadyDecided(Uuid),
    #[error("422: current_scene must be a published scene of this assignment.")]
    InvalidScene,
    #[error("422: Invalid arguments: {}", .0.join("\n"))]
    Invalid(Vec<String>),
}

impl DomainError {
    /// The numeric status the message starts with.
    pub fn status(&self) -> u16 {
        match self {
            DomainError::NotFound => 404,
            DomainError::VersionConflict { .. }
            | DomainError::OperationReused(_)
            | DomainError::Completed
            | DomainError::AlreadyDecided(_) => 409,
            DomainError::InvalidScene | DomainError::Invalid(_) => 422,
        }
    }
}

/// One proposed consequence, exactly `category` and `description`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProposedConsequence {
    pub category: Category,
    pub description: String,
}

/// The arguments of `commit_play_turn`, already schema-valid.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnArgs {
    pub operation_id: Uuid,
    pub expected_version: i64,
    pub player_action: String,
    pub narration: String,
    pub memory_markdown: String,
    pub current_scene: String,
    #[serde(default)]
    pub consequences: Vec<ProposedConsequence>,
}

/// The arguments of `finish_play_session`, already schema-valid.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    pub operation_id: Uuid,
    pub expected_version: i64,
    pub summary: String,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn check_len(errors: &mut Vec<String>, pointer: &str, value: &str, min: usize, max: usize) {
    let n = chars(value);
    if n < min {
        errors.push(format!("{pointer}: must not be empty"));
    } else if n > max {
        errors.push(format!("{pointer}: {n} characters, at most {max} allowed"));
    }
}

/// The version an operation expects: at least 1 (a new assignment is at version 1).
pub fn check_expected_version(errors: &mut Vec<String>, expected_version: i64) {
    if expected_version < 1 {
        errors.push("/expected_version: must be at least 1".into());
    }
}

/// The arguments' verdict from the complaints collected about them: valid when there are none.
pub fn verdict(errors: Vec<String>) -> Result<(), DomainError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(DomainError::Invalid(errors))
    }
}

impl TurnArgs {
    /// Checks the character limits (the schema checks shape; lengths are counted here in
    /// characters so the rule is the same on every client and backend).
    pub fn validate(&self) -> Result<(), DomainError> {
        let mut e = Vec::new();
        check_len(
            &mut e,
            "/player_action",
            &self.player_action,
            1,
            limits::ACTION_CHARS,
        );
        check_len(
            &mut e,
            "/narration",
            &self.narration,
            1,
            limits::NARRATION_CHARS,
        );
        check_len(
            &mut e,
            "/memory_markdown",
            &self.memory_markdown,
            0,
            limits::MEMORY_CHARS,
        );
        check_len(&mut e, "/current_scene", &self.current_scene, 1, 200);
        check_expected_version(&mut e, self.expected_version);
        if self.consequences.len() > limits::CONSEQUENCES {
            e.push(format!(
                "/consequences: {} items, at most {} allowed",
                self.consequences.len(),
                limits::CONSEQUENCES
            ));
        }
        for (i, c) in self.consequences.iter().enumerate() {
            check_len(
                &mut e,
                &format!("/consequences/{i}/description"),
                &c.description,
                1,
                limits::DESCRIPTION_CHARS,
            );
        }
        verdict(e)
    }

    /// SHA-256 over the canonical JSON of the validated arguments, serialized from the
    /// arguments themselves (no copy of the turn's text; the same bytes as the object's
    /// `Value`, a test holds it).
    pub fn normalized_hash(&self) -> String {
        let mut id = Uuid::encode_buffer();
        canonical_hash(&CanonicalTurn {
            consequences: &self.consequences,
            current_scene: &self.current_scene,
            expected_version: self.expected_version,
            memory_markdown: &self.memory_markdown,
            narration: &self.narration,
            operation_id: self.operation_id.hyphenated().encode_lower(&mut id),
            player_action: &self.player_action,
        })
    }
}

/// A turn's arguments as their canonical JSON object: the fields in key order, as a `Value`'s
/// map orders them, each consequence `{"category", "description"}` in that order too.
#[derive(serde::Serialize)]
struct CanonicalTurn<'a> {
    consequences: &'a [ProposedConsequence],
    current_scene: &'a str,
    expected_version: i64,
    memory_markdown: &'a str,
    narration: &'a str,
    operation_id: &'a str,
    player_action: &'a str,
}

impl FinishArgs {
    /// Checks the character limits of a finish.
    pub fn validate(&self) -> Result<(), DomainError> {
        let mut e = Vec::new();
        check_len(&mut e, "/summary", &self.summary, 1, limits::SUMMARY_CHARS);
        check_expected_version(&mut e, self.expected_version);
        verdict(e)
    }

    /// SHA-256 over the canonical JSON of the validated arguments.
    pub fn normalized_hash(&self) -> String {
        canonical_hash(&json!({
            "operation_id": self.operation_id.hyphenated().to_string(),
            "expected_version": self.expected_version,
            "summary": self.summary,
        }))
    }
}

/// SHA-256 (hex) of a value's canonical JSON: `serde_json`'s map is ordered by key (a
/// struct passed here declares its fields in key order), and its compact form writes no
/// insignificant whitespace. The JSON is streamed into the hash (the same bytes as
/// `to_string`, never gathered whole: a turn is up to 16 KB). The JSON writer's many small
/// pieces (every escape is one) reach the hash through a 4 KB buffer, in few large updates.
pub fn canonical_hash(value: &impl serde::Serialize) -> String {
    let mut hasher = Sha256::new();
    let written = {
        let mut buffered = std::io::BufWriter::with_capacity(4096, &mut hasher);
        serde_json::to_writer(&mut buffered, value)
            .map_err(std::io::Error::from)
            .and_then(|()| buffered.flush())
    };
    if written.is_err() {
        // Unreachable: a hasher never refuses bytes, and these values (maps, strings,
        // integers) always serialize. Were the writer at fault, the gathered form gives the
        // same hash.
        return hex::encode(Sha256::digest(
            serde_json::to_vec(value).unwrap_or_default(),
        ));
    }
    hex::encode(hasher.finalize())
}

/// The checks every operation shares, in the contract's order: receipt (replay or conflict),
/// then status, then version. `Ok(Some)` is a replay; `Ok(None)` means "go on and write".
pub fn check_operation(
    state: &OperationState<'_>,
    kind: OperationKind,
    args_hash: &str,
    expected_version: i64,
    allow_completed: bool,
) -> Result<Option<Receipt>, DomainError> {
    if let Some(receipt) = state.receipt {
        if receipt.kind == kind && receipt.args_hash == args_hash {
            return Ok(Some(receipt.clone()));
        }
        return Err(DomainError::OperationReused(receipt.operation_id));
    }
    let a = state.assignment;
    if a.status == PlayStatus::Completed && !allow_completed {
        return Err(DomainError::Completed);
    }
    if a.version != expected_version {
        return Err(DomainError::VersionConflict {
            expected: expected_version,
            current: a.version,
        });
    }
    Ok(None)
}

/// Whether `scene` is a published scene the assignment exposes.
pub fn is_playable_scene(assignment: &Assignment, nodes: &[Node], scene: &str) -> bool {
    assignment.published_node_ids.iter().any(|id| id == scene)
        && nodes
            .iter()
            .any(|n| n.id == scene && n.published && n.kind == "scene")
}

/// Decides a turn. `consequence_ids` are fresh ids, one per proposed consequence.
pub fn decide_turn(
    state: OperationState<'_>,
    args: &TurnArgs,
    args_hash: &str,
    scene_ok: bool,
    consequence_ids: &[Uuid],
    now: Millis,
) -> Result<Decision, DomainError> {
    if let Some(r) = check_operation(
        &state,
        OperationKind::Turn,
        args_hash,
        args.expected_version,
        false,
    )? {
        return Ok(Decision::Replay(r));
    }
    if !scene_ok {
        return Err(DomainError::InvalidScene);
    }
    let a = state.assignment;
    let version = a.version + 1;
    let status = if a.auto_approve {
        ConsequenceStatus::Approved
    } else {
        ConsequenceStatus::Pending
    };
    let consequences: Vec<Consequence> = args
        .consequences
        .iter()
        .zip(consequence_ids)
        .map(|(c, id)| Consequence {
            id: *id,
            assignment_id: a.id,
            version,
            category: c.category,
            description: c.description.clone(),
            status,
            gm_note: None,
            created_at: now,
            decided_at: a.auto_approve.then_some(now),
        })
        .collect();
    let result = json!({
        "session_id": a.id.to_string(),
        "version": version,
        "consequences": consequences.iter().map(|c| json!({
            "id": c.id.to_string(),
            "status": c.status.as_str(),
            "category": c.category.as_str(),
            "description": c.description,
        })).collect::<Vec<_>>(),
    });
    let receipt = Receipt {
        assignment_id: a.id,
        operation_id: args.operation_id,
        kind: OperationKind::Turn,
        args_hash: args_hash.to_owned(),
        result,
        version,
        created_at: now,
    };
    Ok(Decision::Write(Box::new(WritePlan {
        version,
        status: PlayStatus::Active,
        memory: args.memory_markdown.clone(),
        current_scene: Some(args.current_scene.clone()),
        summary: None,
        updated_at: now,
        events: vec![JournalEvent {
            version,
            kind: EventKind::Turn,
            operation_id: Some(args.operation_id),
            player_action: Some(args.player_action.clone()),
            narration: Some(args.narration.clone()),
            summary: None,
            gm_private: None,
            scene: Some(args.current_scene.clone()),
            created_at: now,
        }],
        consequences,
        decisions: Vec::new(),
        receipt,
    })))
}

/// Decides a finish; the store reads the pending count (`Load::PENDING`) with the state.
pub fn decide_finish(
    state: OperationState<'_>,
    args: &FinishArgs,
    args_hash: &str,
    now: Millis,
) -> Result<Decision, DomainError> {
    let pending = state.pending.unwrap_or(0);
    if let Some(r) = check_operation(
        &state,
        OperationKind::Finish,
        args_hash,
        args.expected_version,
        false,
    )? {
        return Ok(Decision::Replay(r));
    }
    let a = state.assignment;
    let version = a.version + 1;
    let result = json!({
        "session_id": a.id.to_string(),
        "status": PlayStatus::Completed.as_str(),
        "version": version,
        "pending_consequences": pending,
    });
    let receipt = Receipt {
        assignment_id: a.id,
        operation_id: args.operation_id,
        kind: OperationKind::Finish,
        args_hash: args_hash.to_owned(),
        result,
        version,
        created_at: now,
    };
    Ok(Decision::Write(Box::new(WritePlan {
        version,
        status: PlayStatus::Completed,
        memory: a.memory.clone(),
        current_scene: a.current_scene.clone(),
        summary: Some(args.summary.clone()),
        updated_at: now,
        events: vec![JournalEvent {
            version,
            kind: EventKind::Finish,
            operation_id: Some(args.operation_id),
            player_action: None,
            narration: None,
            summary: Some(args.summary.clone()),
            gm_private: None,
            scene: a.current_scene.clone(),
            created_at: now,
        }],
        consequences: Vec::new(),
        decisions: Vec::new(),
        receipt,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_hash_is_the_hash_of_the_compact_json() {
        // Stored receipts hold these hashes: streaming must not change a byte of the input.
        let value = json!({
            "operation_id": "00000000-0000-4000-8000-000000000001",
            "expected_version": 7,
            "player_action": "Zażółć \"gęślą\" jaźń\n\ttab \u{1} \\ back",
            "memory_markdown": "# Notes\n".repeat(2_000),
            "current_scene": null,
            "consequences": [{"category": "discovery", "description": "emoji 🐉"}],
        });
        assert_eq!(
            canonical_hash(&value),
            hex::encode(Sha256::digest(value.to_string().as_bytes()))
        );
        assert_eq!(
            canonical_hash(&json!({"b": 1, "a": [true, 1.5]})),
            hex::encode(Sha256::digest(br#"{"a":[true,1.5],"b":1}"#))
        );
    }

    #[test]
    fn a_turns_hash_is_the_hash_of_its_arguments_as_a_value() {
        // Stored receipts hold the hashes of the `Value` form: the borrowed struct must
        // serialize the same bytes.
        let as_value = |t: &TurnArgs| {
            let consequences: Vec<serde_json::Value> = t
                .consequences
                .iter()
                .map(|c| json!({"category": c.category.as_str(), "description": c.description}))
                .collect();
            canonical_hash(&json!({
                "operation_id": t.operation_id.hyphenated().to_string(),
                "expected_version": t.expected_version,
                "player_action": t.player_action,
                "narration": t.narration,
                "memory_markdown": t.memory_markdown,
                "current_scene": t.current_scene,
                "consequences": consequences,
            }))
        };
        let mut turn = TurnArgs {
            operation_id: Uuid::from_u128(0xABCD_EF01_2345_4678_9ABC_DEF0_1234_5678),
            expected_version: 7,
            player_action: "Zażółć \"gęślą\" jaźń\n\ttab \u{1} \\ back 🐉".into(),
            narration: "</script> & ' \u{7f} \u{2028}".into(),
            memory_markdown: "# Notes\n".repeat(500),
            current_scene: "scene-1".into(),
            consequences: vec![],
        };
        assert_eq!(turn.normalized_hash(), as_value(&turn));
        turn.consequences = [Category::Discovery, Category::Resource]
            .into_iter()
            .map(|category| ProposedConsequence {
                category,
                description: format!("{category:?} \"found\"\n"),
            })
            .collect();
        turn.expected_version = i64::MAX;
        assert_eq!(turn.normalized_hash(), as_value(&turn));
    }
}
