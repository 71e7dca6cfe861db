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
    let visible: Vec<&JournalEvent> = input.events.iter().filter(|e| reader == Reader::Gm || e.kind.player_visible()).collect();
    if visible.is_empty() {
        let _ = writeln!(out, "{}", t.nothing_yet);
    }
    for e in visible {
        match e.kind {
            EventKind::Turn => {
                let _ = writeln!(out, "### {} {}{}\n", t.turn, e.version, e.scene.as_deref().map(|s| format!(" — {s}")).unwrap_or_default());
                if let Some(action) = &e.player_action {
                    let _ = writeln!(out, "**{}:** {action}\n", t.action);
                }
                if let Some(narration) = &e.narration {
                    let _ = writeln!(out, "{narration}\n");
                }
            }
            EventKind::Finish => {
                let _ = writeln!(out, "### {} ({} {})\n", t.finished, t.version.to_lowercase(), e.version);
                if let Some(summary) = &e.summary {
                    let _ = writeln!(out, "{summary}\n");
                }
            }
            EventKind::Review | EventKind::GmNote => {
                let label = if e.kind == EventKind::Review { t.review } else { t.gm_note };
                let _ = writeln!(out, "### {label} ({} {})\n", t.version.to_lowercase(), e.version);
                if let Some(private) = &e.gm_private {
                    let _ = writeln!(out, "{private}\n");
                }
            }
        }
    }

    let _ = writeln!(out, "## {}\n", t.consequences);
    if input.consequences.is_empty() {
        let _ = writeln!(out, "{}", t.nothing_yet);
    } else {
        let _ = writeln!(out, "| {} | {} | {} | {} | {} |", t.version, t.category, t.description, t.decision, t.note);
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
