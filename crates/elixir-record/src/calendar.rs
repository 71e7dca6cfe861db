//! The game calendar (SURFACE §5.2): the game day (10:00Z to 10:00Z), the season (first
//! Monday of the month 10:00Z to the next month's, labelled by its month and war number) and
//! the war week and day inside it. Pure arithmetic over instants; every boundary is a UTC
//! instant, so no local zone moves it.

use jiff::civil::{Date, Weekday};
use jiff::{Timestamp, ToSpan};
use serde::{Deserialize, Serialize};

use crate::time::{Millis, iso_millis, iso_serde};

const HOUR_MS: Millis = 3_600_000;
/// A day in milliseconds: game days and war days are whole UTC days, never local ones.
pub const DAY_MS: Millis = 24 * HOUR_MS;
/// A war week (section) in milliseconds.
pub const WEEK_MS: Millis = 7 * DAY_MS;
/// Where every game day, war day and season starts: 10:00 UTC.
pub const RESET_HOUR_UTC: i8 = 10;
const RESET_MS: Millis = RESET_HOUR_UTC as Millis * HOUR_MS;

/// The war number of the season starting in September 2026 (SURFACE §5.2); war numbers rise
/// by one a month.
pub const WAR_2026_09: i32 = 136;
const MONTH_2026_09: i32 = 2026 * 12 + 8;

/// One game day: day D runs D 10:00Z → D+1 10:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameDay {
    /// The day's label, `YYYY-MM-DD`.
    pub date: Date,
    /// D 10:00Z, inclusive.
    #[serde(with = "iso_serde")]
    pub starts_at: Timestamp,
    /// D+1 10:00Z, exclusive.
    #[serde(with = "iso_serde")]
    pub ends_at: Timestamp,
}

/// One season: first Monday of its month 10:00Z → next month's first Monday 10:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Season {
    /// The war number (136 = `2026-09`).
    pub id: i32,
    /// The month it starts in, `YYYY-MM`.
    #[serde(with = "month_serde")]
    pub month: (i16, i8),
    /// Inclusive.
    #[serde(with = "iso_serde")]
    pub starts_at: Timestamp,
    /// Exclusive: the next season's start.
    #[serde(with = "iso_serde")]
    pub ends_at: Timestamp,
    /// War weeks (sections) in the season: 4 or 5.
    pub weeks: i8,
}

/// What a war day is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PeriodType {
    /// Monday to Wednesday of every week.
    Training,
    /// Thursday to Sunday of every week but the season's last.
    WarDay,
    /// Thursday to Sunday of the season's last week (±100 trophies, not ±20).
    Colosseum,
}

impl PeriodType {
    /// The wire name (`training`, `war_day`, `colosseum`).
    pub fn as_str(self) -> &'static str {
        match self {
            PeriodType::Training => "training",
            PeriodType::WarDay => "war_day",
            PeriodType::Colosseum => "colosseum",
        }
    }
}

/// Where an instant falls in the river race: its war week (section) and day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarDay {
    /// 0-based section within the season.
    pub section_index: i8,
    /// 1-based week within the season (`section_index + 1`).
    pub week: i8,
    /// 0 Monday … 6 Sunday, counted in game days.
    pub day_in_week: i8,
    /// 1–4 on battle days (Thursday to Sunday); `None` on training days.
    pub war_day: Option<i8>,
    /// Training, war day, or colosseum.
    pub period_type: PeriodType,
    /// Whether this is the season's last section.
    pub is_colosseum: bool,
    /// The week's Monday 10:00Z, inclusive.
    #[serde(with = "iso_serde")]
    pub week_starts_at: Timestamp,
    /// The next Monday 10:00Z, exclusive.
    #[serde(with = "iso_serde")]
    pub week_ends_at: Timestamp,
}

/// When the next boundaries come after an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Next {
    /// The next game day's start.
    #[serde(with = "iso_serde")]
    pub game_day_at: Timestamp,
    /// The next battle day's start (Thursday to Sunday, 10:00Z), strictly later.
    #[serde(with = "iso_serde")]
    pub war_day_at: Timestamp,
    /// The next season's start.
    #[serde(with = "iso_serde")]
    pub season_at: Timestamp,
}

/// Everything `game_clock` answers about one instant (SURFACE §2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameClock {
    /// The instant the clock was read at.
    #[serde(with = "iso_serde")]
    pub at: Timestamp,
    /// Its game day.
    pub game_day: GameDay,
    /// Its season.
    pub season: Season,
    /// Its war week and day.
    pub war: WarDay,
    /// The next boundaries.
    pub next: Next,
}

fn ts(millis: Millis) -> Option<Timestamp> {
    Timestamp::from_millisecond(millis).ok()
}

fn utc_date(at: Timestamp) -> Date {
    at.to_zoned(jiff::tz::TimeZone::UTC).date()
}

/// 10:00Z on `date`, as milliseconds.
fn reset_of(date: Date) -> Option<Millis> {
    let midnight = date.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    midnight.as_millisecond().checked_add(RESET_MS)
}

/// The game day that starts at 10:00Z on `date`; `None` at the calendar's far edges.
pub fn game_day_of_date(date: Date) -> Option<GameDay> {
    let start = reset_of(date)?;
    Some(GameDay {
        date,
        starts_at: ts(start)?,
        ends_at: ts(start.checked_add(DAY_MS)?)?,
    })
}

/// The game day `at` belongs to; `None` at the calendar's far edges.
pub fn game_day(at: Timestamp) -> Option<GameDay> {
    let shifted = ts(at.as_millisecond().checked_sub(RESET_MS)?)?;
    game_day_of_date(utc_date(shifted))
}

/// The game day of stored milliseconds as `YYYY-MM-DD`, the label Elixir keys daily work on.
/// Out of range reads as `1970-01-01`, as it always has.
pub fn game_date_millis(millis: Millis) -> String {
    iso_millis(millis.saturating_sub(RESET_MS))
        .chars()
        .take(10)
        .collect()
}

fn first_monday(year: i16, month: i8) -> Option<Date> {
    let first = Date::new(year, month, 1).ok()?;
    let offset = (7 - first.weekday().to_monday_zero_offset()) % 7;
    first.checked_add(i64::from(offset).days()).ok()
}

fn month_index(year: i16, month: i8) -> i32 {
    i32::from(year) * 12 + i32::from(month) - 1
}

fn month_of_index(index: i32) -> Option<(i16, i8)> {
    let year = i16::try_from(index.div_euclid(12)).ok()?;
    let month = i8::try_from(index.rem_euclid(12) + 1).ok()?;
    Some((year, month))
}

/// The season starting in `year`-`month`; `None` for an invalid month or past the
/// calendar's edges.
pub fn season_of_month(year: i16, month: i8) -> Option<Season> {
    let index = month_index(year, month);
    let (next_year, next_month) = month_of_index(index + 1)?;
    let start = reset_of(first_monday(year, month)?)?;
    let end = reset_of(first_monday(next_year, next_month)?)?;
    Some(Season {
        id: WAR_2026_09 + (index - MONTH_2026_09),
        month: (year, month),
        starts_at: ts(start)?,
        ends_at: ts(end)?,
        weeks: i8::try_from((end - start) / WEEK_MS).ok()?,
    })
}

/// The season with war number `id` (136 = `2026-09`).
pub fn season_of_war(id: i32) -> Option<Season> {
    let (year, month) = month_of_index(MONTH_2026_09.checked_add(id.checked_sub(WAR_2026_09)?)?)?;
    season_of_month(year, month)
}

/// The season `at` belongs to.
pub fn season_at(at: Timestamp) -> Option<Season> {
    let date = utc_date(at);
    let this = season_of_month(date.year(), date.month())?;
    if at < this.starts_at {
        this.previous()
    } else {
        Some(this)
    }
}

impl Season {
    /// The season label, `YYYY-MM`.
    pub fn label(&self) -> String {
        format!("{:04}-{:02}", self.month.0, self.month.1)
    }

    /// The season before this one.
    pub fn previous(&self) -> Option<Season> {
        let (year, month) = month_of_index(month_index(self.month.0, self.month.1) - 1)?;
        season_of_month(year, month)
    }

    /// The season after this one.
    pub fn next(&self) -> Option<Season> {
        let (year, month) = month_of_index(month_index(self.month.0, self.month.1) + 1)?;
        season_of_month(year, month)
    }

    /// Whether `at` falls inside `[starts_at, ends_at)`.
    pub fn contains(&self, at: Timestamp) -> bool {
        self.starts_at <= at && at < self.ends_at
    }
}

/// Parses a season label `YYYY-MM` (the month it starts in).
pub fn parse_season_label(text: &str) -> Option<Season> {
    let (year, month) = text.split_once('-')?;
    if year.len() != 4 || month.len() != 2 {
        return None;
    }
    season_of_month(year.parse().ok()?, month.parse().ok()?)
}

/// Where `at` falls in the river race.
pub fn war_at(at: Timestamp) -> Option<WarDay> {
    let season = season_at(at)?;
    let since = at.as_millisecond() - season.starts_at.as_millisecond();
    let section_index = i8::try_from(since / WEEK_MS).ok()?;
    let day_in_week = i8::try_from((since % WEEK_MS) / DAY_MS).ok()?;
    let week_start = season.starts_at.as_millisecond() + i64::from(section_index) * WEEK_MS;
    let is_colosseum = section_index == season.weeks - 1;
    let (war_day, period_type) = match day_in_week {
        0..=2 => (None, PeriodType::Training),
        d if is_colosseum => (Some(d - 2), PeriodType::Colosseum),
        d => (Some(d - 2), PeriodType::WarDay),
    };
    Some(WarDay {
        section_index,
        week: section_index + 1,
        day_in_week,
        war_day,
        period_type,
        is_colosseum,
        week_starts_at: ts(week_start)?,
        week_ends_at: ts(week_start + WEEK_MS)?,
    })
}

/// Upstream's `periodIndex` as `(section_index, day_in_week)`: `// 7` and `% 7`.
pub fn period_index_parts(period_index: u32) -> (u32, u32) {
    (period_index / 7, period_index % 7)
}

/// Everything `game_clock` answers about `at`; `None` at the calendar's far edges.
pub fn clock_at(at: Timestamp) -> Option<GameClock> {
    let game_day = game_day(at)?;
    let season = season_at(at)?;
    let war = war_at(at)?;
    let mut war_day_at = game_day.ends_at;
    // at most three training days stand between a game day and the next battle day
    for _ in 0..4 {
        if war_at(war_day_at)?.war_day.is_some() {
            break;
        }
        war_day_at = ts(war_day_at.as_millisecond() + DAY_MS)?;
    }
    Some(GameClock {
        at,
        game_day,
        season,
        war,
        next: Next {
            game_day_at: game_day.ends_at,
            war_day_at,
            season_at: season.ends_at,
        },
    })
}

/// The `at` argument of `game_clock`: `YYYY-MM-DD` is 10:00Z that day (never 00:00Z); an
/// instant with an offset is itself; one without an offset is read in `zone`.
pub fn parse_at(text: &str, zone: &jiff::tz::TimeZone) -> Option<Timestamp> {
    if text.len() == 10 {
        let date: Date = text.parse().ok()?;
        return ts(reset_of(date)?);
    }
    crate::time::parse_instant(text, zone)
}

/// Whether `weekday` is a battle day (Thursday to Sunday).
pub fn is_battle_weekday(weekday: Weekday) -> bool {
    weekday.to_monday_zero_offset() >= 3
}

mod month_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(month: &(i16, i8), serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:04}-{:02}", month.0, month.1))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(i16, i8), D::Error> {
        let text = String::deserialize(deserializer)?;
        super::parse_season_label(&text)
            .map(|s| s.month)
            .ok_or_else(|| serde::de::Error::custom(format!("not a season month: {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::time::iso;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_game_day_turns_at_ten_utc() {
        let day = game_day(at("2026-01-01T09:59:59.999Z")).unwrap();
        assert_eq!(day.date.to_string(), "2025-12-31");
        assert_eq!(iso(day.starts_at), "2025-12-31T10:00:00Z");
        assert_eq!(iso(day.ends_at), "2026-01-01T10:00:00Z");
        let day = game_day(at("2026-01-01T10:00:00Z")).unwrap();
        assert_eq!(day.date.to_string(), "2026-01-01");
        assert_eq!(game_day(at("2026-01-02T09:59:59Z")).unwrap(), day);
        // the compatibility label keeps Elixir's answers
        assert_eq!(game_date_millis(1_767_225_600_000), "2025-12-31");
        assert_eq!(game_date_millis(1_767_225_600_000 + RESET_MS), "2026-01-01");
        assert_eq!(game_date_millis(i64::MIN), "1970-01-01");
    }

    #[test]
    fn seasons_run_first_monday_to_first_monday() {
        let september = season_of_month(2026, 9).unwrap();
        assert_eq!(september.id, 136);
        assert_eq!(september.label(), "2026-09");
        assert_eq!(iso(september.starts_at), "2026-09-07T10:00:00Z");
        assert_eq!(iso(september.ends_at), "2026-10-05T10:00:00Z");
        assert_eq!(september.weeks, 4);
        // 2026-06-01 is a Monday: the season starts on the 1st and runs five weeks
        let june = season_of_month(2026, 6).unwrap();
        assert_eq!(iso(june.starts_at), "2026-06-01T10:00:00Z");
        assert_eq!(iso(june.ends_at), "2026-07-06T10:00:00Z");
        assert_eq!((june.id, june.weeks), (133, 5));
        // the roll from 09:59:59 to 10:00 on the first Monday
        assert_eq!(
            season_at(at("2026-09-07T09:59:59Z")).unwrap().label(),
            "2026-08"
        );
        assert_eq!(season_at(at("2026-09-07T10:00:00Z")).unwrap(), september);
        // early days of a month before its first Monday belong to the previous season
        assert_eq!(season_at(at("2026-10-01T00:00:00Z")).unwrap(), september);
        // across a year
        let january = season_of_month(2027, 1).unwrap();
        assert_eq!(
            (january.id, iso(january.starts_at).as_str()),
            (140, "2027-01-04T10:00:00Z")
        );
        assert_eq!(season_of_month(2026, 12).unwrap().next(), Some(january));
        assert_eq!(january.previous().unwrap().label(), "2026-12");
        assert_eq!(season_of_war(136), Some(september));
        assert_eq!(season_of_war(1).unwrap().label(), "2015-06");
        assert_eq!(parse_season_label("2026-09"), Some(september));
        assert_eq!(parse_season_label("2026-13"), None);
        assert_eq!(parse_season_label("2026-9"), None);
        assert_eq!(season_of_month(2026, 0), None);
    }

    #[test]
    fn war_weeks_and_days_follow_the_grid() {
        // Monday of the first week: training, section 0
        let w = war_at(at("2026-09-07T10:00:00Z")).unwrap();
        assert_eq!(
            (w.section_index, w.week, w.day_in_week, w.war_day),
            (0, 1, 0, None)
        );
        assert_eq!(w.period_type, PeriodType::Training);
        assert_eq!(iso(w.week_starts_at), "2026-09-07T10:00:00Z");
        assert_eq!(iso(w.week_ends_at), "2026-09-14T10:00:00Z");
        // Thursday 09:59:59 is still Wednesday's training day; 10:00 is war day 1
        let w = war_at(at("2026-09-10T09:59:59Z")).unwrap();
        assert_eq!((w.day_in_week, w.war_day), (2, None));
        let w = war_at(at("2026-09-10T10:00:00Z")).unwrap();
        assert_eq!(
            (w.day_in_week, w.war_day, w.period_type),
            (3, Some(1), PeriodType::WarDay)
        );
        // Monday 09:30Z: the race's closing gap belongs to Sunday, war day 4
        let w = war_at(at("2026-09-14T09:30:00Z")).unwrap();
        assert_eq!((w.section_index, w.day_in_week, w.war_day), (0, 6, Some(4)));
        // the fixture race: periodIndex 11 is section 1, war day 2
        assert_eq!(period_index_parts(11), (1, 4));
        let w = war_at(at("2026-09-18T19:34:12Z")).unwrap();
        assert_eq!((w.section_index, w.day_in_week, w.war_day), (1, 4, Some(2)));
        // the last section is Colosseum: training days stay training
        let w = war_at(at("2026-09-28T10:00:00Z")).unwrap();
        assert_eq!(
            (w.section_index, w.is_colosseum, w.period_type),
            (3, true, PeriodType::Training)
        );
        let w = war_at(at("2026-10-04T12:00:00Z")).unwrap();
        assert_eq!((w.war_day, w.period_type), (Some(4), PeriodType::Colosseum));
        assert!(!war_at(at("2026-09-21T10:00:00Z")).unwrap().is_colosseum);
        // five-week season: week 5 is Colosseum
        let w = war_at(at("2026-06-29T10:00:00Z")).unwrap();
        assert_eq!((w.week, w.is_colosseum), (5, true));
        assert!(is_battle_weekday(Weekday::Thursday));
        assert!(!is_battle_weekday(Weekday::Wednesday));
    }

    #[test]
    fn the_clock_names_the_next_boundaries() {
        let c = clock_at(at("2026-09-08T12:00:00Z")).unwrap();
        assert_eq!(iso(c.next.game_day_at), "2026-09-09T10:00:00Z");
        assert_eq!(iso(c.next.war_day_at), "2026-09-10T10:00:00Z");
        assert_eq!(iso(c.next.season_at), "2026-10-05T10:00:00Z");
        // on war day 1 the next war day is tomorrow's
        let c = clock_at(at("2026-09-10T10:00:00Z")).unwrap();
        assert_eq!(iso(c.next.war_day_at), "2026-09-11T10:00:00Z");
        // on Sunday's war day 4 the next is next Thursday
        let c = clock_at(at("2026-09-13T23:00:00Z")).unwrap();
        assert_eq!(iso(c.next.war_day_at), "2026-09-17T10:00:00Z");
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["season"]["month"], "2026-09");
        assert_eq!(json["season"]["id"], 136);
        assert_eq!(json["game_day"]["date"], "2026-09-13");
        assert_eq!(json["war"]["period_type"], "war_day");
        assert_eq!(json["war"]["war_day"], 4);
        let back: GameClock = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn a_date_only_at_means_ten_utc() {
        let warsaw = jiff::tz::TimeZone::get("Europe/Warsaw").unwrap();
        assert_eq!(
            iso(parse_at("2026-09-10", &warsaw).unwrap()),
            "2026-09-10T10:00:00Z"
        );
        assert_eq!(
            iso(parse_at("2026-09-10T12:00:00Z", &warsaw).unwrap()),
            "2026-09-10T12:00:00Z"
        );
        assert_eq!(
            iso(parse_at("2026-09-10T12:00:00", &warsaw).unwrap()),
            "2026-09-10T10:00:00Z"
        );
        assert_eq!(parse_at("2026-13-10", &warsaw), None);
        assert_eq!(parse_at("soon", &warsaw), None);
    }

    proptest! {
        #![proptest_config(crate::prop_settings::config())]
        #[test]
        fn every_instant_sits_inside_its_day_season_and_week(
            millis in 0i64..4_102_444_800_000, // 1970 to 2100
        ) {
            let t = Timestamp::from_millisecond(millis).unwrap();
            let c = clock_at(t).unwrap();
            prop_assert!(c.game_day.starts_at <= t && t < c.game_day.ends_at);
            prop_assert_eq!(c.game_day.ends_at.as_millisecond() - c.game_day.starts_at.as_millisecond(), DAY_MS);
            prop_assert!(c.season.contains(t));
            prop_assert!(c.season.weeks == 4 || c.season.weeks == 5);
            let start = c.season.starts_at.to_zoned(jiff::tz::TimeZone::UTC);
            prop_assert_eq!(start.weekday(), Weekday::Monday);
            prop_assert!(start.day() <= 7);
            prop_assert_eq!((start.hour(), start.minute()), (10, 0));
            prop_assert_eq!(c.season.next().unwrap().starts_at, c.season.ends_at);
            prop_assert_eq!(season_of_war(c.season.id), Some(c.season));
            prop_assert!(c.war.week_starts_at <= t && t < c.war.week_ends_at);
            prop_assert!(c.war.section_index < c.season.weeks);
            prop_assert_eq!(
                c.game_day.date.weekday().to_monday_zero_offset(),
                c.war.day_in_week
            );
            prop_assert_eq!(c.war.war_day.is_some(), c.war.day_in_week >= 3);
            prop_assert!(c.next.war_day_at > t);
            prop_assert!(war_at(c.next.war_day_at).unwrap().war_day.is_some());
            prop_assert!(c.next.war_day_at.as_millisecond() - t.as_millisecond() <= 4 * DAY_MS);
        }
    }
}
