//! The GM's review queue: the pending consequences of one assignment, each approved,
//! rejected or left for later with a note the player will see (at most 2,000 characters),
//! 1–20 per submission. The form carries its operation UUID and the version it was read at,
//! so a resubmitted form is the same review (the service replays it) and a stale one is
//! answered with a page showing what changed since, never a silent overwrite.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::campaign::{CampaignError, Role};
use crate::domain::play::DomainError;
use crate::domain::review::{MAX_DECISIONS, NOTE_CHARS, ReviewArgs, ReviewDecision, Verdict};
use crate::domain::{Consequence, ConsequenceStatus, EventKind, User};
use crate::http::error::ApiError;
use crate::i18n::report_text;
use crate::i18n::web::text;
use crate::state::AppState;
use crate::store::Applied;
use crate::web::page::{Page, Visitor, field_errors, see_other, when};

/// What the GM chose for one consequence on the form, kept when the form comes back.
#[derive(Debug, Clone, Default)]
struct Choice {
    decision: String,
    note: String,
}

/// What changed since the version the form was read at.
#[derive(Debug, Default)]
struct Stale {
    seen: i64,
    now: i64,
    entries: Vec<Value>,
    decided: Vec<Value>,
}

/// Renders the queue for the assignment's current state.
#[allow(clippy::too_many_arguments)] // One page, many optional parts; a struct would only rename them.
async fn render(
    state: &AppState,
    visitor: &Visitor,
    user: &User,
    id: Uuid,
    status: StatusCode,
    choices: &HashMap<Uuid, Choice>,
    errors: Value,
    stale: Option<Stale>,
    done: Option<i64>,
) -> Response {
    let overview = match state.campaign.overview(user, id).await {
        Ok(o) => o,
        Err(e) => return visitor.api_error(e.into()),
    };
    let view = &overview.detail.view;
    if view.role != Role::Gm {
        return visitor.api_error(ApiError::Forbidden(
            text(visitor.lang, "forbidden_title").to_owned(),
        ));
    }
    let a = &view.assignment;
    let names = report_text(visitor.lang);
    let pending: Vec<&Consequence> = overview
        .consequences
        .iter()
        .filter(|c| c.status == ConsequenceStatus::Pending)
        .collect();
    let rows: Vec<Value> = pending
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let choice = choices.get(&c.id).cloned().unwrap_or_default();
            json!({
                "i": i, "id": c.id, "turn": c.version,
                "category": names.category_name(c.category),
                "description": c.description,
                "decision": if choice.decision.is_empty() { "skip".to_owned() } else { choice.decision },
                "note": choice.note,
            })
        })
        .collect();
    let lang = visitor.lang;
    visitor.render(
        status,
        "review.html",
        &format!("{} · {}", text(lang, "review_title"), a.character),
        json!({
            "a": {"id": a.id, "version": a.version, "language": a.language.as_str()},
            "operation_id": state.service.random.uuid(),
            "rows": rows,
            "errors": errors,
            "note_max": NOTE_CHARS,
            "max_decisions": MAX_DECISIONS,
            "done": done,
            "stale": stale.map(|s| json!({"seen": s.seen, "now": s.now, "entries": s.entries, "decided": s.decided})),
        }),
    )
}

/// `GET /plays/{id}/review`: the queue (GM only; the player is refused, anyone else 404).
pub async fn queue(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Page {
    let signed = visitor.require()?;
    let id = visitor.path_id(&id)?;
    let done = q.get("done").and_then(|d| d.parse::<i64>().ok());
    Ok(render(
        &state,
        &visitor,
        &signed.user,
        id,
        StatusCode::OK,
        &HashMap::new(),
        json!({}),
        None,
        done,
    )
    .await)
}

/// `POST /plays/{id}/review`: applies the chosen decisions as one versioned, retry-safe review.
pub async fn submit(
    State(state): State<AppState>,
    visitor: Visitor,
    Path(id): Path<String>,
    body: Bytes,
) -> Page {
    let (form, signed, id) = visitor.post_on(&body, &id)?;
    let user = &signed.user;
    let (Some(operation_id), Some(expected_version)) = (
        form.get("operation_id")
            .and_then(|o| Uuid::parse_str(o).ok()),
        form.get("expected_version")
            .and_then(|v| v.parse::<i64>().ok()),
    ) else {
        return Err(visitor.api_error(ApiError::field(
            "operation_id",
            "the form is damaged; reload it",
        )));
    };
    // The form's rows: c<i> (the consequence), d<i> (skip / approved / rejected), n<i> (note).
    let mut choices = HashMap::new();
    let mut decisions = Vec::new();
    let mut row_of = Vec::new();
    for i in 0.. {
        let Some(cid) = form.get(&format!("c{i}")) else {
            break;
        };
        let Ok(cid) = Uuid::parse_str(cid) else {
            return Err(visitor.api_error(ApiError::field(
                "decisions",
                "the form is damaged; reload it",
            )));
        };
        let decision = form.text(&format!("d{i}"));
        let note = form.text(&format!("n{i}"));
        let verdict = match decision.as_str() {
            "approved" => Some(Verdict::Approved),
            "rejected" => Some(Verdict::Rejected),
            _ => None,
        };
        if let Some(verdict) = verdict {
            decisions.push(ReviewDecision {
                id: cid,
                decision: verdict,
                note: (!note.is_empty()).then(|| note.clone()),
            });
            row_of.push(i);
        }
        choices.insert(cid, Choice { decision, note });
    }
    // The queue again with the choices as made, when the review is not applied.
    let again = |status, errors, stale| {
        render(
            &state, &visitor, user, id, status, &choices, errors, stale, None,
        )
    };
    if decisions.is_empty() || decisions.len() > MAX_DECISIONS {
        let errors = json!({"decisions": text(visitor.lang, "pick_one")});
        return Ok(again(StatusCode::UNPROCESSABLE_ENTITY, errors, None).await);
    }
    let ids: Vec<Uuid> = decisions.iter().map(|d| d.id).collect();
    let args = ReviewArgs {
        operation_id,
        expected_version,
        decisions,
    };
    match state.campaign.review(user, id, args).await {
        Ok(applied) => {
            let receipt = match applied {
                Applied::Committed(r) | Applied::Replayed(r) => r,
            };
            Ok(see_other(
                &format!("/plays/{id}/review?done={}", receipt.version),
                &[],
            ))
        }
        Err(CampaignError::Domain(DomainError::VersionConflict { expected, current })) => {
            let changed = what_changed(&state, user, id, expected, current, &ids).await;
            let stale = visitor.ok_or_page(changed)?;
            Ok(again(StatusCode::CONFLICT, json!({}), Some(stale)).await)
        }
        Err(CampaignError::Domain(DomainError::Invalid(lines))) => {
            // "/decisions/<k>/note: …" → the note field of the form row k came from.
            let mut fields = std::collections::BTreeMap::new();
            for line in lines {
                let (pointer, message) = line.split_once(": ").unwrap_or(("", line.as_str()));
                let mut parts = pointer.trim_start_matches('/').split('/');
                let key = match (
                    parts.next(),
                    parts.next().and_then(|k| k.parse::<usize>().ok()),
                    parts.next(),
                ) {
                    (Some("decisions"), Some(k), Some("note")) => {
                        row_of.get(k).map(|r| format!("n{r}"))
                    }
                    _ => None,
                };
                fields
                    .entry(key.unwrap_or_else(|| "decisions".to_owned()))
                    .or_insert_with(|| message.to_owned());
            }
            let errors = field_errors(visitor.lang, &fields);
            Ok(again(StatusCode::UNPROCESSABLE_ENTITY, errors, None).await)
        }
        Err(e) => Err(visitor.api_error(e.into())),
    }
}

/// The journal entries after the version the form saw, and which of the chosen consequences
/// were decided in the meantime.
async fn what_changed(
    state: &AppState,
    user: &User,
    id: Uuid,
    seen: i64,
    now: i64,
    chosen: &[Uuid],
) -> Result<Stale, CampaignError> {
    let events = state.campaign.journal_all(user, id).await?;
    let consequences = state.campaign.consequences(user, id).await?;
    let entries = events
        .iter()
        .filter(|e| e.version > seen)
        .map(|e| {
            json!({
                "version": e.version,
                "kind": match e.kind {
                    EventKind::Turn => "entry_turn",
                    EventKind::Finish => "entry_finish",
                    EventKind::Review => "entry_review",
                    EventKind::GmNote => "entry_gm_note",
                },
                "text": e.narration.clone().or_else(|| e.summary.clone()).or_else(|| e.gm_private.clone()).unwrap_or_default(),
                "when": when(e.created_at),
            })
        })
        .collect();
    let decided = consequences
        .iter()
        .filter(|c| chosen.contains(&c.id) && c.status != ConsequenceStatus::Pending)
        .map(|c| json!({"description": c.description, "status": c.status.as_str(), "note": c.gm_note}))
        .collect();
    Ok(Stale {
        seen,
        now,
        entries,
        decided,
    })
}
