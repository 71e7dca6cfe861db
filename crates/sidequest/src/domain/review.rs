//! The GM's review: deciding 1–20 distinct pending consequences of one assignment in one
//! versioned, retry-safe operation (allowed after completion).

use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use crate::domain::play::{
    Decided, Decision, DomainError, OperationState, WritePlan, canonical_hash,
    check_expected_version, check_operation, verdict,
};
use crate::domain::{ConsequenceStatus, EventKind, JournalEvent, Millis, OperationKind, Receipt};

/// At most this many decisions per review.
pub const MAX_DECISIONS: usize = 20;
/// A decision note is visible to the player; at most this many characters.
pub const NOTE_CHARS: usize = 2_000;

/// A GM decision on one consequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Approved,
    Rejected,
}

impl Verdict {
    pub fn status(self) -> ConsequenceStatus {
        match self {
            Verdict::Approved => ConsequenceStatus::Approved,
            Verdict::Rejected => ConsequenceStatus::Rejected,
        }
    }
}

/// One decision of a review request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewDecision {
    pub id: Uuid,
    pub decision: Verdict,
    #[serde(default)]
    pub note: Option<String>,
}

/// The body of a review (REST `POST /api/plays/{id}/review/` and the author door).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewArgs {
    pub operation_id: Uuid,
    pub expected_version: i64,
    pub decisions: Vec<ReviewDecision>,
}

impl ReviewArgs {
    /// Checks count, distinctness and note lengths.
    pub fn validate(&self) -> Result<(), DomainError> {
        let mut e = Vec::new();
        if self.decisions.is_empty() || self.decisions.len() > MAX_DECISIONS {
            e.push(format!(
                "/decisions: {} decisions; between 1 and {MAX_DECISIONS} allowed",
                self.decisions.len()
            ));
        }
        for (i, d) in self.decisions.iter().enumerate() {
            if self.decisions[..i].iter().any(|o| o.id == d.id) {
                e.push(format!("/decisions/{i}/id: {} is listed twice", d.id));
            }
            if let Some(note) = &d.note {
                let n = note.chars().count();
                if n > NOTE_CHARS {
                    e.push(format!(
                        "/decisions/{i}/note: {n} characters, at most {NOTE_CHARS} allowed"
                    ));
                }
            }
        }
        check_expected_version(&mut e, self.expected_version);
        verdict(e)
    }

    /// SHA-256 over the canonical arguments (notes trimmed of nothing: exact text counts).
    pub fn normalized_hash(&self) -> String {
        canonical_hash(&json!({
            "operation_id": self.operation_id.to_string(),
            "expected_version": self.expected_version,
            "decisions": self.decisions.iter().map(|d| json!({
                "id": d.id.to_string(),
                "decision": d.decision.status().as_str(),
                "note": d.note,
            })).collect::<Vec<_>>(),
        }))
    }

    /// The consequence ids the store must load.
    pub fn ids(&self) -> Vec<Uuid> {
        self.decisions.iter().map(|d| d.id).collect()
    }
}

/// Decides a review on the state the store read (see [`OperationState`]).
pub fn decide_review(
    state: OperationState<'_>,
    args: &ReviewArgs,
    args_hash: &str,
    now: Millis,
) -> Result<Decision, DomainError> {
    if let Some(r) = check_operation(
        &state,
        OperationKind::Review,
        args_hash,
        args.expected_version,
        true,
    )? {
        return Ok(Decision::Replay(r));
    }
    let mut invalid = Vec::new();
    let mut decided = Vec::with_capacity(args.decisions.len());
    for (i, d) in args.decisions.iter().enumerate() {
        match state.consequences.iter().find(|c| c.id == d.id) {
            None => invalid.push(format!(
                "/decisions/{i}/id: {} is not a consequence of this assignment",
                d.id
            )),
            Some(c) if c.status != ConsequenceStatus::Pending => {
                return Err(DomainError::AlreadyDecided(c.id));
            }
            Some(_) => decided.push(Decided {
                id: d.id,
                status: d.decision.status(),
                note: d.note.clone(),
                decided_at: now,
            }),
        }
    }
    if !invalid.is_empty() {
        return Err(DomainError::Invalid(invalid));
    }
    let a = state.assignment;
    let version = a.version + 1;
    let result = json!({
        "session_id": a.id.to_string(),
        "version": version,
        "decisions": decided.iter().map(|d| json!({
            "id": d.id.to_string(),
            "status": d.status.as_str(),
            "note": d.note,
        })).collect::<Vec<_>>(),
    });
    let private = decided
        .iter()
        .map(|d| format!("{} {}", d.status.as_str(), d.id))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Decision::Write(Box::new(WritePlan {
        version,
        status: a.status,
        memory: a.memory.clone(),
        current_scene: a.current_scene.clone(),
        summary: a.summary.clone(),
        updated_at: now,
        events: vec![JournalEvent {
            version,
            kind: EventKind::Review,
            operation_id: Some(args.operation_id),
            player_action: None,
            narration: None,
            summary: None,
            gm_private: Some(private),
            scene: None,
            created_at: now,
        }],
        consequences: Vec::new(),
        decisions: decided,
        receipt: Receipt {
            assignment_id: a.id,
            operation_id: args.operation_id,
            kind: OperationKind::Review,
            args_hash: args_hash.to_owned(),
            result,
            version,
            created_at: now,
        },
    })))
}
