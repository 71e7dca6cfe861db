//! The timeline picture of a play session: turns (with how many consequences each proposed),
//! the finish and the GM's decisions, in the order they happened, as a server-rendered SVG and
//! as the same steps in words (the page lists them beside the picture for screen readers).
//! Pure: it reads the events and consequences the caller may see and knows no HTTP.

use std::collections::BTreeMap;

use mcp_door::web::escape_html;

use crate::domain::{Consequence, ConsequenceStatus, EventKind, JournalEvent, Millis};

/// One step of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A committed turn at `version`, proposing `proposed` consequences.
    Turn { version: i64, proposed: usize },
    /// The finish at `version`.
    Finish { version: i64 },
    /// GM decisions made at one moment (one review).
    Decisions { approved: usize, rejected: usize },
}

/// The words the picture and its text use, in the page's language.
#[derive(Debug, Clone, Copy)]
pub struct Words<'a> {
    pub turn: &'a str,
    pub proposed: &'a str,
    pub finish: &'a str,
    pub decision: &'a str,
    pub approved: &'a str,
    pub rejected: &'a str,
    pub title: &'a str,
}

/// The steps in the order they happened: events by time (then version), each review's
/// decisions at their decision time (decisions made in one review share it).
pub fn steps(events: &[JournalEvent], consequences: &[Consequence]) -> Vec<Step> {
    let mut timed: Vec<(Millis, i64, Step)> = Vec::new();
    for e in events {
        let step = match e.kind {
            EventKind::Turn => Step::Turn {
                version: e.version,
                proposed: consequences
                    .iter()
                    .filter(|c| c.version == e.version)
                    .count(),
            },
            EventKind::Finish => Step::Finish { version: e.version },
            // A review is drawn from the decisions it made, which both roles see.
            EventKind::Review | EventKind::GmNote => continue,
        };
        timed.push((e.created_at, e.version, step));
    }
    let mut reviews: BTreeMap<Millis, (usize, usize)> = BTreeMap::new();
    for c in consequences {
        if let Some(at) = c.decided_at {
            let entry = reviews.entry(at).or_default();
            match c.status {
                ConsequenceStatus::Approved => entry.0 += 1,
                ConsequenceStatus::Rejected => entry.1 += 1,
                ConsequenceStatus::Pending => {}
            }
        }
    }
    for (at, (approved, rejected)) in reviews {
        timed.push((at, i64::MAX, Step::Decisions { approved, rejected }));
    }
    timed.sort_by_key(|(at, version, _)| (*at, *version));
    timed.into_iter().map(|(_, _, s)| s).collect()
}

/// A step in words. Counts follow their noun after a colon ("approved: 2"), which reads
/// naturally in English and in Polish whatever the number (no plural forms to pick).
pub fn describe(step: &Step, w: &Words<'_>) -> String {
    match step {
        Step::Turn { version, proposed } => {
            format!(
                "{} {version} ({}: {proposed})",
                capitalize(w.turn),
                w.proposed
            )
        }
        Step::Finish { version } => format!("{} ({version})", capitalize(w.finish)),
        Step::Decisions { approved, rejected } => format!(
            "{} ({}: {approved}, {}: {rejected})",
            capitalize(w.decision),
            w.approved,
            w.rejected
        ),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

const STEP_WIDTH: usize = 120;
const AXIS_Y: usize = 50;

/// The picture: one marker per step along a line (circle: turn, square: finish, diamond:
/// decisions), its short label under it. `aria-labelledby` points at its title and at the
/// list of steps in words (`desc_id`), which the page prints beside it.
pub fn svg(steps: &[Step], w: &Words<'_>, desc_id: &str) -> String {
    let width = 40 + STEP_WIDTH * steps.len().max(1);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} 120\" width=\"{width}\" \
         height=\"120\" role=\"img\" aria-labelledby=\"tl-title {desc}\">\
         <title id=\"tl-title\">{title}</title>\
         <line x1=\"20\" y1=\"{AXIS_Y}\" x2=\"{x2}\" y2=\"{AXIS_Y}\" stroke=\"#767676\" stroke-width=\"2\"/>",
        desc = escape_html(desc_id),
        title = escape_html(w.title),
        x2 = width - 20,
    );
    for (i, step) in steps.iter().enumerate() {
        let x = 20 + STEP_WIDTH / 2 + STEP_WIDTH * i;
        let (marker, top, bottom) = match step {
            Step::Turn { version, proposed } => (
                format!("<circle cx=\"{x}\" cy=\"{AXIS_Y}\" r=\"10\" fill=\"#0b4fa8\"/>"),
                format!("{} {version}", w.turn),
                format!("+{proposed}"),
            ),
            Step::Finish { version } => (
                format!(
                    "<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"20\" fill=\"#1b1b1b\"/>",
                    x - 10,
                    AXIS_Y - 10
                ),
                format!("{} {version}", w.finish),
                String::new(),
            ),
            Step::Decisions { approved, rejected } => (
                format!(
                    "<polygon points=\"{x},{} {},{AXIS_Y} {x},{} {},{AXIS_Y}\" fill=\"{}\"/>",
                    AXIS_Y - 12,
                    x + 12,
                    AXIS_Y + 12,
                    x - 12,
                    if *rejected > *approved {
                        "#a30000"
                    } else {
                        "#0a5c1f"
                    }
                ),
                w.decision.to_owned(),
                format!("✓{approved} ✗{rejected}"),
            ),
        };
        out.push_str(&format!(
            "<g class=\"step\">{marker}<text x=\"{x}\" y=\"22\" text-anchor=\"middle\" \
             font-size=\"12\" fill=\"#1b1b1b\">{}</text><text x=\"{x}\" y=\"86\" \
             text-anchor=\"middle\" font-size=\"12\" fill=\"#1b1b1b\">{}</text></g>",
            escape_html(&top),
            escape_html(&bottom)
        ));
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Category;
    use uuid::Uuid;

    fn event(version: i64, kind: EventKind, at: Millis) -> JournalEvent {
        JournalEvent {
            version,
            kind,
            operation_id: None,
            player_action: None,
            narration: None,
            summary: None,
            gm_private: None,
            scene: None,
            created_at: at,
        }
    }

    fn consequence(
        version: i64,
        status: ConsequenceStatus,
        decided: Option<Millis>,
    ) -> Consequence {
        Consequence {
            id: Uuid::new_v4(),
            assignment_id: Uuid::nil(),
            version,
            category: Category::Discovery,
            description: "d".into(),
            status,
            gm_note: None,
            created_at: 0,
            decided_at: decided,
        }
    }

    const W: Words<'static> = Words {
        turn: "turn",
        proposed: "consequences proposed",
        finish: "session finished",
        decision: "GM decisions",
        approved: "approved",
        rejected: "rejected",
        title: "Timeline <1>",
    };

    #[test]
    fn steps_follow_time_and_group_one_review() {
        let events = [
            event(2, EventKind::Turn, 10),
            event(3, EventKind::Turn, 20),
            event(4, EventKind::Finish, 30),
            event(5, EventKind::Review, 40),
        ];
        let cs = [
            consequence(2, ConsequenceStatus::Approved, Some(40)),
            consequence(3, ConsequenceStatus::Rejected, Some(40)),
            consequence(3, ConsequenceStatus::Pending, None),
        ];
        let s = steps(&events, &cs);
        assert_eq!(
            s,
            [
                Step::Turn {
                    version: 2,
                    proposed: 1
                },
                Step::Turn {
                    version: 3,
                    proposed: 2
                },
                Step::Finish { version: 4 },
                Step::Decisions {
                    approved: 1,
                    rejected: 1
                },
            ]
        );
        assert_eq!(describe(&s[1], &W), "Turn 3 (consequences proposed: 2)");
        assert_eq!(
            describe(&s[3], &W),
            "GM decisions (approved: 1, rejected: 1)"
        );
        let pic = svg(&s, &W, "tl-text");
        assert_eq!(pic.matches("<g class=\"step\">").count(), 4);
        assert!(
            pic.contains("<title id=\"tl-title\">Timeline &lt;1&gt;</title>"),
            "{pic}"
        );
        assert!(pic.contains("aria-labelledby=\"tl-title tl-text\""));
    }

    #[test]
    fn an_empty_session_is_an_empty_line() {
        let pic = svg(&steps(&[], &[]), &W, "x");
        assert!(pic.starts_with("<svg"));
        assert_eq!(pic.matches("<g class=\"step\">").count(), 0);
    }
}
