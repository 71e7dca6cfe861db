//! Time as the fake API writes it (`20260918T193412.000Z`) and the game calendar the world
//! follows: game days from 10:00Z, seasons from the first Monday of the month 10:00Z and the
//! war week inside them. Written independently of elixir-record, so the fake does not share
//! the code it tests.

use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;

/// One hour in milliseconds.
pub const HOUR_MS: i64 = 3_600_000;
/// One day in milliseconds.
pub const DAY_MS: i64 = 24 * HOUR_MS;
const RESET_MS: i64 = 10 * HOUR_MS;
/// The upstream sentinel for "no finish time".
pub const NEVER: &str = "19691231T235959.000Z";

/// Formats an instant the way the API does: `YYYYMMDDTHHMMSS.000Z` (UTC, milliseconds kept).
pub fn api_time(millis: i64) -> String {
    match Timestamp::from_millisecond(millis) {
        Ok(ts) => {
            let ms = millis.rem_euclid(1000);
            format!("{}.{ms:03}Z", ts.strftime("%Y%m%dT%H%M%S"))
        }
        // Outside jiff's range (±9999 years): the sentinel is the only honest answer.
        Err(_) => NEVER.to_owned(),
    }
}

/// The game day an instant belongs to, as days since 1970-01-01 (day D runs D 10:00Z → D+1
/// 10:00Z).
pub fn game_day(millis: i64) -> i64 {
    (millis - RESET_MS).div_euclid(DAY_MS)
}

/// When game day `day` starts (10:00Z).
pub fn game_day_start(day: i64) -> i64 {
    day * DAY_MS + RESET_MS
}

/// The weekday of a game day, Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday).
pub fn weekday(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

/// Whether the game day is a war battle day (Thursday to Sunday).
pub fn is_war_day(day: i64) -> bool {
    weekday(day) >= 3
}

/// Where a game day sits in the war calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarPosition {
    /// The season's war number (136 = 2026-09).
    pub season_id: i64,
    /// The game day the season starts on (its first Monday).
    pub season_start_day: i64,
    /// 0-based war week inside the season.
    pub section_index: i64,
    /// Monday = 0 … Sunday = 6.
    pub day_in_week: i64,
    /// Whether this week is the season's last (Colosseum).
    pub colosseum: bool,
}

impl WarPosition {
    /// The upstream `periodIndex`: `section_index * 7 + day_in_week`.
    pub fn period_index(&self) -> i64 {
        self.section_index * 7 + self.day_in_week
    }

    /// The upstream `periodType`: `training`, `warDay` or `colosseum`.
    pub fn period_type(&self) -> &'static str {
        match (self.day_in_week >= 3, self.colosseum) {
            (false, _) => "training",
            (true, false) => "warDay",
            (true, true) => "colosseum",
        }
    }
}

/// The war position of a game day.
pub fn war_position(day: i64) -> WarPosition {
    let (year, month) = month_of_day(day);
    let mut start = first_monday(year, month);
    let mut month_index = i64::from(year) * 12 + i64::from(month) - 1;
    if day < start {
        month_index -= 1;
        let (y, m) = split_month(month_index);
        start = first_monday(y, m);
    }
    let (next_y, next_m) = split_month(month_index + 1);
    let next_start = first_monday(next_y, next_m);
    WarPosition {
        season_id: 136 + month_index - (2026 * 12 + 8),
        season_start_day: start,
        section_index: (day - start) / 7,
        day_in_week: weekday(day),
        colosseum: next_start - day <= 7,
    }
}

fn split_month(index: i64) -> (i16, i8) {
    let year = i16::try_from(index.div_euclid(12)).unwrap_or(2026);
    let month = i8::try_from(index.rem_euclid(12) + 1).unwrap_or(1);
    (year, month)
}

fn month_of_day(day: i64) -> (i16, i8) {
    match Timestamp::from_millisecond(day * DAY_MS) {
        Ok(ts) => {
            let date = ts.to_zoned(TimeZone::UTC).date();
            (date.year(), date.month())
        }
        Err(_) => (2026, 9),
    }
}

/// The first Monday of a month, as days since the epoch.
fn first_monday(year: i16, month: i8) -> i64 {
    let first = Date::new(year, month, 1).unwrap_or_default();
    let monday = first
        .nth_weekday_of_month(1, Weekday::Monday)
        .unwrap_or(first);
    let epoch = Date::constant(1970, 1, 1);
    i64::from((monday - epoch).get_days())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(text: &str) -> i64 {
        text.parse::<Timestamp>().unwrap().as_millisecond()
    }

    #[test]
    fn times_use_the_api_format() {
        assert_eq!(
            api_time(millis("2026-09-18T19:34:12Z")),
            "20260918T193412.000Z"
        );
        assert_eq!(api_time(-1000), NEVER);
    }

    #[test]
    fn game_days_start_at_ten_utc() {
        let day = game_day(millis("2026-09-18T09:59:59Z"));
        assert_eq!(day + 1, game_day(millis("2026-09-18T10:00:00Z")));
        assert_eq!(game_day_start(day + 1), millis("2026-09-18T10:00:00Z"));
        // 2026-09-18 is a Friday: war day 2.
        assert_eq!(weekday(day + 1), 4);
        assert!(is_war_day(day + 1));
    }

    #[test]
    fn the_war_calendar_matches_the_fixture_race() {
        // Season 136 starts Monday 2026-09-07; 2026-09-18 (Friday) is section 1, period 11.
        let pos = war_position(game_day(millis("2026-09-18T12:00:00Z")));
        assert_eq!(pos.season_id, 136);
        assert_eq!(pos.section_index, 1);
        assert_eq!(pos.period_index(), 11);
        assert_eq!(pos.period_type(), "warDay");
        // 2026-10-04 (Sunday) is the last week of season 136: Colosseum.
        let last = war_position(game_day(millis("2026-10-04T12:00:00Z")));
        assert_eq!((last.season_id, last.section_index), (136, 3));
        assert_eq!(last.period_type(), "colosseum");
        // 2026-10-05 09:00Z still belongs to Sunday's game day; 10:00Z starts season 137.
        assert_eq!(
            war_position(game_day(millis("2026-10-05T09:00:00Z"))).season_id,
            136
        );
        let next = war_position(game_day(millis("2026-10-05T10:00:00Z")));
        assert_eq!((next.season_id, next.section_index), (137, 0));
        // A day before the first Monday of its month belongs to the previous season.
        let early = war_position(game_day(millis("2026-09-03T12:00:00Z")));
        assert_eq!(early.season_id, 135);
    }
}
