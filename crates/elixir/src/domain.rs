//! The vocabulary every layer shares that is not about access: feedback states and
//! categories, the version and text helpers the tools and pages share, and the record's tags,
//! instants, zones and game day from `elixir_record`, re-exported under the names the service
//! has always used. Principal kinds, tiers, scopes and keys are `access::kinds`'. Pure and
//! unit-tested beside the code.

pub use elixir_record::calendar::game_date_millis as game_day;
pub use elixir_record::tag::normalize_tag;
pub use elixir_record::time::{Millis, is_time_zone, iso_millis as iso};

/// A name as searches and name matches compare it (§1.4): trimmed, NFKC, lower-cased.
pub fn name_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.trim().nfkc().collect::<String>().to_lowercase()
}

/// Fills what `stored` (a normalized battle as JSON) lacks from `seen`, the same battle from
/// another log: top-level nulls and absent keys, and each participant's (matched by tag on
/// either side) nulls and absent keys. Nothing stored is overwritten. True when it changed.
pub fn fill_missing_battle(stored: &mut serde_json::Value, seen: &serde_json::Value) -> bool {
    use serde_json::Value;
    fn fill(into: &mut Value, from: &Value) -> bool {
        let (Value::Object(into), Value::Object(from)) = (into, from) else {
            return false;
        };
        let mut changed = false;
        for (key, value) in from {
            if matches!(key.as_str(), "team" | "opponent") || value.is_null() {
                continue;
            }
            match into.get_mut(key) {
                None | Some(Value::Null) => {
                    into.insert(key.clone(), value.clone());
                    changed = true;
                }
                Some(existing @ Value::Object(_)) => changed |= fill(existing, value),
                Some(_) => {}
            }
        }
        changed
    }
    let seen_participants: Vec<&Value> = ["team", "opponent"]
        .iter()
        .filter_map(|side| seen.get(side).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut changed = fill(stored, seen);
    for side in ["team", "opponent"] {
        let Some(list) = stored.get_mut(side).and_then(Value::as_array_mut) else {
            continue;
        };
        for participant in list {
            let Some(tag) = participant
                .get("tag")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                continue;
            };
            if let Some(other) = seen_participants
                .iter()
                .find(|p| p.get("tag").and_then(Value::as_str) == Some(tag.as_str()))
            {
                changed |= fill(participant, other);
            }
        }
    }
    changed
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackStatus {
    New,
    Seen,
    Planned,
    Done,
    Declined,
}

impl FeedbackStatus {
    pub const ALL: [FeedbackStatus; 5] = [
        FeedbackStatus::New,
        FeedbackStatus::Seen,
        FeedbackStatus::Planned,
        FeedbackStatus::Done,
        FeedbackStatus::Declined,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackStatus::New => "new",
            FeedbackStatus::Seen => "seen",
            FeedbackStatus::Planned => "planned",
            FeedbackStatus::Done => "done",
            FeedbackStatus::Declined => "declined",
        }
    }

    pub fn parse(text: &str) -> Option<FeedbackStatus> {
        FeedbackStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Feedback categories; `general` is the default.
pub const FEEDBACK_CATEGORIES: [&str; 6] = [
    "general",
    "bug",
    "data_quality",
    "feature",
    "praise",
    "other",
];
/// Parses `YYYY-MM-DD` (start of that day in `zone`) or an ISO instant with an offset.
pub fn parse_since(text: &str, zone: &str) -> Option<Millis> {
    if let Ok(date) = text.parse::<jiff::civil::Date>()
        && text.len() == 10
    {
        let tz = jiff::tz::TimeZone::get(zone).unwrap_or(jiff::tz::TimeZone::UTC);
        return date
            .to_zoned(tz)
            .ok()
            .map(|z| z.timestamp().as_millisecond());
    }
    text.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// A `MAJOR.MINOR.PATCH` version, compared numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Semver(pub u64, pub u64, pub u64);

impl Semver {
    pub fn parse(text: &str) -> Option<Semver> {
        let mut parts = text.split('.');
        let mut next = || parts.next()?.parse::<u64>().ok();
        let v = Semver(next()?, next()?, next()?);
        parts.next().is_none().then_some(v)
    }
}

/// The section slug of an H2 heading (SURFACE §8.1): lower case, each run outside `[a-z0-9]`
/// replaced by `-`, trimmed at both ends.
pub fn slugify(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    let mut dash = false;
    for c in heading.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
    }
    out
}

/// `text` cut to at most `max` bytes on a character boundary, with a marker when cut.
pub fn trim_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_normalize_per_the_contract() {
        assert_eq!(
            normalize_tag(" 20jjj2ccru ").as_deref(),
            Some("#20JJJ2CCRU")
        );
        assert_eq!(normalize_tag("#2Pp").as_deref(), Some("#2PP"));
        assert_eq!(normalize_tag("#o2P").as_deref(), Some("#02P"));
        assert_eq!(normalize_tag("#AB"), None);
        assert_eq!(normalize_tag("#2P"), None);
        assert_eq!(normalize_tag("#XYZ9"), None);
        assert_eq!(normalize_tag("#2222222222222"), None);
    }

    #[test]
    fn slugs_times_and_versions() {
        assert_eq!(slugify("First calls"), "first-calls");
        assert_eq!(slugify("  Null means unknown!  "), "null-means-unknown");
        assert_eq!(slugify("elixir_docs"), "elixir-docs");
        assert_eq!(slugify("OAuth 2.1"), "oauth-2-1");
        assert_eq!(iso(1_767_225_600_000), "2026-01-01T00:00:00Z");
        assert!(Semver::parse("1.10.0") > Semver::parse("1.9.9"));
        assert_eq!(Semver::parse("1.0"), None);
        assert_eq!(Semver::parse("1.0.0.0"), None);
        assert!(is_time_zone("Europe/Warsaw"));
        assert!(is_time_zone("UTC"));
        assert!(!is_time_zone("Mars/Olympus_Mons"));
        assert_eq!(
            parse_since("2026-01-02", "Europe/Warsaw"),
            Some(1_767_225_600_000 + 23 * 3_600_000)
        );
        assert_eq!(
            parse_since("2026-01-01T00:00:00Z", "UTC"),
            Some(1_767_225_600_000)
        );
        assert_eq!(parse_since("yesterday", "UTC"), None);
        assert_eq!(game_day(1_767_225_600_000), "2025-12-31");
        assert_eq!(
            game_day(1_767_225_600_000 + 10 * 3_600_000 - 1),
            "2025-12-31"
        );
        assert_eq!(game_day(1_767_225_600_000 + 10 * 3_600_000), "2026-01-01");
        assert_eq!(game_day(1_767_225_600_000 + 33 * 3_600_000), "2026-01-01");
        assert_eq!(trim_bytes("ąęść", 5), "ą…");
        assert_eq!(trim_bytes("abc", 3), "abc");
    }
}
