//! Instants as the record writes them: ISO 8601 UTC to the second, upstream's compact
//! `20260918T193412.000Z` battle times (SURFACE §6.5), milliseconds as stored, and IANA zone
//! names. Nothing here reads the current time: callers pass it in.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

/// Milliseconds since the Unix epoch, as every stored instant.
pub type Millis = i64;

/// The longest zone name an argument may carry (SURFACE §2.1 WINDOW).
pub const MAX_ZONE_LEN: usize = 64;

/// Reads an ISO instant: with an offset (or `Z`) it is itself; without one it is a wall
/// time in `zone` (a time skipped or repeated by a clock change takes the earlier reading).
pub fn parse_instant(text: &str, zone: &TimeZone) -> Option<Timestamp> {
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Some(ts);
    }
    let civil: DateTime = text.parse().ok()?;
    // `YYYY-MM-DD` alone parses as a DateTime too; dates are the caller's to read
    if text.len() <= 10 {
        return None;
    }
    zone.to_ambiguous_zoned(civil)
        .compatible()
        .ok()
        .map(|z| z.timestamp())
}

/// An instant as ISO 8601 UTC to the second with a trailing `Z` (`2026-09-18T19:34:12Z`).
pub fn iso(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// [`iso`] of stored milliseconds; an instant outside the calendar's range reads as the
/// epoch, as Elixir has always shown it.
pub fn iso_millis(millis: Millis) -> String {
    match Timestamp::from_millisecond(millis) {
        Ok(ts) => iso(ts),
        Err(_) => "1970-01-01T00:00:00Z".to_owned(),
    }
}

/// Upstream's battle time, `YYYYMMDDTHHMMSS.fffZ`, as an instant. Anything else is `None`.
pub fn parse_battle_time(text: &str) -> Option<Timestamp> {
    let bytes = text.as_bytes();
    let shape = bytes.len() == 20
        && bytes[8] == b'T'
        && bytes[15] == b'.'
        && bytes[19] == b'Z'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| matches!(i, 8 | 15 | 19) || b.is_ascii_digit());
    if !shape {
        return None;
    }
    let num = |from: usize, to: usize| text.get(from..to)?.parse::<i32>().ok();
    let datetime = DateTime::new(
        i16::try_from(num(0, 4)?).ok()?,
        i8::try_from(num(4, 6)?).ok()?,
        i8::try_from(num(6, 8)?).ok()?,
        i8::try_from(num(9, 11)?).ok()?,
        i8::try_from(num(11, 13)?).ok()?,
        i8::try_from(num(13, 15)?).ok()?,
        num(16, 19)? * 1_000_000,
    )
    .ok()?;
    datetime.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp())
}

/// The zone named `name`, from the bundled tz database (`UTC` included); `None` when the
/// name is empty, longer than 64 characters or unknown.
pub fn zone(name: &str) -> Option<TimeZone> {
    if name.is_empty() || name.len() > MAX_ZONE_LEN {
        return None;
    }
    TimeZone::get(name).ok()
}

/// Whether `name` is an IANA time zone in the bundled database (or `UTC`).
pub fn is_time_zone(name: &str) -> bool {
    zone(name).is_some()
}

/// Milliseconds as an instant; `None` outside the calendar's range (years −9999 to 9999).
pub fn from_millis(millis: Millis) -> Option<Timestamp> {
    Timestamp::from_millisecond(millis).ok()
}

/// The calendar date of `millis` in `zone`; `None` outside the calendar's range.
pub fn local_date(millis: Millis, zone: &TimeZone) -> Option<jiff::civil::Date> {
    from_millis(millis).map(|t| t.to_zoned(zone.clone()).date())
}

/// Serde helpers writing an instant as [`iso`] and reading any RFC 3339 instant, for
/// `#[serde(with = "crate::time::iso_serde")]` fields.
pub mod iso_serde {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes [`super::iso`].
    pub fn serialize<S: Serializer>(ts: &Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::iso(*ts))
    }

    /// Reads an RFC 3339 instant.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// [`iso_serde`] for optional instants (`null` when absent).
pub mod iso_serde_opt {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes [`super::iso`] or `null`.
    pub fn serialize<S: Serializer>(
        ts: &Option<Timestamp>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match ts {
            Some(ts) => serializer.serialize_str(&super::iso(*ts)),
            None => serializer.serialize_none(),
        }
    }

    /// Reads an RFC 3339 instant or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Timestamp>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| text.parse().map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_print_to_the_second_in_utc() {
        assert_eq!(iso_millis(1_767_225_600_000), "2026-01-01T00:00:00Z");
        assert_eq!(iso_millis(1_767_225_600_999), "2026-01-01T00:00:00Z");
        assert_eq!(iso_millis(i64::MAX), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn upstream_battle_times_parse() {
        let ts = parse_battle_time("20260918T193412.000Z").unwrap();
        assert_eq!(iso(ts), "2026-09-18T19:34:12Z");
        let ms = parse_battle_time("20260918T193412.250Z").unwrap();
        assert_eq!(ms.as_millisecond() - ts.as_millisecond(), 250);
        for bad in [
            "",
            "2026-09-18T19:34:12Z",
            "20260918T193412Z",
            "20261318T193412.000Z",
            "20260918T253412.000Z",
            "20260918X193412.000Z",
            "2026091aT193412.000Z",
            "20260918T193412.000+",
        ] {
            assert_eq!(parse_battle_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn zones_come_from_the_bundled_database() {
        assert!(is_time_zone("Europe/Warsaw"));
        assert!(is_time_zone("UTC"));
        assert!(!is_time_zone("Mars/Olympus_Mons"));
        assert!(!is_time_zone(""));
        assert!(!is_time_zone(&"A".repeat(65)));
    }
}
