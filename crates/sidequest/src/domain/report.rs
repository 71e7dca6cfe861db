//! The Markdown report of an assignment, in English or Polish, filtered by the reader's role:
//! GM-only material (GM notes, GM-private journal text, review events) only for the GM.

use std::fmt::Write as _;

use crate::domain::{Assignment, Consequence, EventKind, JournalEvent, Language};
use crate::i18n::{ReportText, report_text};

/// Who reads the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Gm,
    Player,
}

/// Everything a report shows.
#[derive(Debug)]
pub struct ReportInput<'a> {
    pub assignment: &'a Assignment,
    pub scenario_title: &'a str,
    pub player_name: &'a str,
    pub gm_name: &'a str,
    pub events: &'a [JournalEvent],
    pub consequences: &'a [Consequence],
}

fn quote(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "> {line}");
    }
    if text.is_empty() {
        out.push_str(">\n");
    }
}

/// One line of a review event (`<status> <consequence id>`, as the review writes it) in the
/// reader's language, naming the consequence; any other text is kept as it is.
fn review_line(line: &str, consequences: &[Consequence], t: &ReportText) -> String {
    let parsed = line.split_once(' ').and_then(|(status, id)| {
        let status = crate::domain::ConsequenceStatus::parse(status)?;
        let c = consequences.iter().find(|c| c.id.to_string() == id)?;
        Some(format!(
            "- {}: {}",
            t.consequence_status_name(status),
            c.description
        ))
    });
    parsed.unwrap_or_else(|| line.to_owned())
}

/// Renders the report.
pub fn render(input: &ReportInput<'_>, language: Language, reader: Reader) -> String {
    let t: &ReportText = report_text(language);
    let a = input.assignment;
    let mut out = String::new();
    let _ = writeln!(out, "# {}: {}\n", t.title, a.character);
    let _ = writeln!(out, "- **{}:** {}", t.scenario, input.scenario_title);
    let _ = writeln!(out, "- **{}:** {}", t.player, input.player_name);
    let _ = writeln!(out, "- **{}:** {}", t.gm, input.gm_name);
    let _ = writeln!(out, "- **{}:** {}", t.mode, t.mode_name(a.mode));
    let _ = writeln!(out, "- **{}:** {}", t.status, t.status_name(a.status));
    let _ = writeln!(out, "- **{}:** {}", t.version, a.version);
    let _ = writeln!(out, "- **{}:** `{}`\n", t.assignment_id, a.id);

    let _ = writeln!(out, "## {}\n", t.brief);
    quote(&mut out, &a.brief);
    if !a.instructions.is_empty() {
        let _ = writeln!(out, "\n## {}\n", t.instructions);
        quote(&mut out, &a.instructions);
    }
    let _ = writeln!(out, "\n## {}\n", t.boundaries);
    quote(&mut out, &a.boundaries);
    let _ = writeln!(out, "\n## {}\n", t.return_condition);
    quote(&mut out, &a.return_condition);
    if reader == Reader::Gm && !a.gm_notes.is_empty() {
        let _ = writeln!(out, "\n## {}\n", t.gm_notes);
        quote(&mut out, &a.gm_notes);
    }

    let _ = writeln!(out, "\n## {}\n", t.journal);
    let visible: Vec<&JournalEvent> = input
        .events
        .iter()
        .filter(|e| reader == Reader::Gm || e.kind.player_visible())
        .collect();
    if visible.is_empty() {
        let _ = writeln!(out, "{}", t.nothing_yet);
    }
    for e in visible {
        match e.kind {
            EventKind::Turn => {
                let _ = writeln!(
                    out,
                    "### {} {}{}\n",
                    t.turn,
                    e.version,
                    e.scene
                        .as_deref()
                        .map(|s| format!(" — {s}"))
                        .unwrap_or_default()
                );
                if let Some(action) = &e.player_action {
                    let _ = writeln!(out, "**{}:** {action}\n", t.action);
                }
                if let Some(narration) = &e.narration {
                    let _ = writeln!(out, "{narration}\n");
                }
            }
            EventKind::Finish => {
                let _ = writeln!(
                    out,
                    "### {} ({} {})\n",
                    t.finished,
                    t.version.to_lowercase(),
                    e.version
                );
                if let Some(summary) = &e.summary {
                    let _ = writeln!(out, "{summary}\n");
                }
            }
            EventKind::Review | EventKind::GmNote => {
                let label = if e.kind == EventKind::Review {
                    t.review
                } else {
                    t.gm_note
                };
                let _ = writeln!(
                    out,
                    "### {label} ({} {})\n",
                    t.version.to_lowercase(),
                    e.version
                );
                if let Some(private) = &e.gm_private {
                    for line in private.lines() {
                        let _ = writeln!(out, "{}", review_line(line, input.consequences, t));
                    }
                    out.push('\n');
                }
            }
        }
    }

    let _ = writeln!(out, "## {}\n", t.consequences);
    if input.consequences.is_empty() {
        let _ = writeln!(out, "{}", t.nothing_yet);
    } else {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            t.version, t.category, t.description, t.decision, t.note
        );
        let _ = writeln!(out, "|---|---|---|---|---|");
        for c in input.consequences {
            let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                c.version,
                t.category_name(c.category),
                cell(&c.description),
                t.consequence_status_name(c.status),
                cell(c.gm_note.as_deref().unwrap_or(""))
            );
        }
    }
    if let Some(summary) = &a.summary {
        let _ = writeln!(out, "\n## {}\n", t.summary);
        quote(&mut out, summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Category, ConsequenceStatus, Mode, PlayStatus};
    use uuid::Uuid;

    fn assignment() -> Assignment {
        Assignment {
            id: Uuid::nil(),
            scenario_id: Uuid::nil(),
            source_version: 1,
            gm_id: Uuid::nil(),
            player_id: Uuid::nil(),
            mode: Mode::Solo,
            language: Language::Pl,
            character: "Arin".into(),
            brief: "b".into(),
            instructions: String::new(),
            boundaries: "x".into(),
            return_condition: "r".into(),
            gm_notes: "SECRET-NOTE".into(),
            published_node_ids: vec![],
            auto_approve: false,
            status: PlayStatus::Active,
            version: 3,
            memory: String::new(),
            current_scene: None,
            summary: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn review_events_are_translated_and_gm_only() {
        let c = Consequence {
            id: Uuid::from_u128(7),
            assignment_id: Uuid::nil(),
            version: 2,
            category: Category::Relationship,
            description: "Mira may help.".into(),
            status: ConsequenceStatus::Approved,
            gm_note: Some("ok".into()),
            created_at: 0,
            decided_at: Some(1),
        };
        let review = JournalEvent {
            version: 3,
            kind: EventKind::Review,
            operation_id: None,
            player_action: None,
            narration: None,
            summary: None,
            gm_private: Some(format!("approved {}", c.id)),
            scene: None,
            created_at: 1,
        };
        let a = assignment();
        let events = [review];
        let consequences = [c];
        let input = ReportInput {
            assignment: &a,
            scenario_title: "S",
            player_name: "P",
            gm_name: "G",
            events: &events,
            consequences: &consequences,
        };
        let gm = render(&input, Language::Pl, Reader::Gm);
        assert!(gm.contains("### Przegląd MG (wersja 3)"), "{gm}");
        assert!(gm.contains("- zatwierdzona: Mira may help."), "{gm}");
        assert!(gm.contains("SECRET-NOTE"));
        let player = render(&input, Language::Pl, Reader::Player);
        assert!(!player.contains("Przegląd MG"));
        assert!(!player.contains("SECRET-NOTE"));
        assert!(
            player.contains("| 2 | relacja | Mira may help. | zatwierdzona | ok |"),
            "{player}"
        );
    }
}
