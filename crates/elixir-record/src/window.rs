//! Windows (SURFACE §5.3–5.4): `from` inclusive, `to` exclusive; date-only values local to
//! the applied zone; `days`/`weeks` sugar; `season` windows; the argument conflicts that are
//! `bad_request`; and each tool's default window. Pure: the current time is an argument.

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};

use crate::calendar::{self, DAY_MS, Season, WEEK_MS};
pub use crate::time::parse_instant;
use crate::time::{Millis, iso_serde, iso_serde_opt};

/// `days` takes 1 to this many.
pub const MAX_DAYS: i64 = 730;
/// `weeks` takes 1 to this many.
pub const MAX_WEEKS: i64 = 104;
/// The highest war number `season` accepts.
pub const MAX_WAR: i32 = 9999;

/// The `season` argument (SURFACE §2.1 SEASON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SeasonArg {
    /// The season now running, from its start to now.
    Current,
    /// The season before it, whole.
    Previous,
    /// The season starting in this `YYYY-MM`.
    Month(i16, i8),
    /// The season with this war number (1–9999).
    War(i32),
}

impl SeasonArg {
    /// Reads the string form: `current`, `previous` or `YYYY-MM`.
    pub fn parse(text: &str) -> Option<SeasonArg> {
        match text {
            "current" => Some(SeasonArg::Current),
            "previous" => Some(SeasonArg::Previous),
            _ => calendar::parse_season_label(text).map(|s| SeasonArg::Month(s.month.0, s.month.1)),
        }
    }

    /// Reads the integer form, a war number 1–9999.
    pub fn war(number: i64) -> Option<SeasonArg> {
        i32::try_from(number)
            .ok()
            .filter(|n| (1..=MAX_WAR).contains(n))
            .map(SeasonArg::War)
    }

    /// The season this names at `now`.
    pub fn season(self, now: Timestamp) -> Option<Season> {
        match self {
            SeasonArg::Current => calendar::season_at(now),
            SeasonArg::Previous => calendar::season_at(now)?.previous(),
            SeasonArg::Month(year, month) => calendar::season_of_month(year, month),
            SeasonArg::War(id) => calendar::season_of_war(id),
        }
    }
}

/// The window arguments of one call, as the caller sent them (already typed by the schema).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowArgs<'a> {
    /// An ISO instant (no offset: the applied zone) or `YYYY-MM-DD` (that day's start).
    pub from: Option<&'a str>,
    /// Like `from`; a date means the start of the next day.
    pub to: Option<&'a str>,
    /// `from` = (`to` or now) − N × 24 h.
    pub days: Option<i64>,
    /// `from` = (`to` or now) − N × 7 × 24 h.
    pub weeks: Option<i64>,
    /// IANA zone for dates and labels; the account's when absent.
    pub timezone: Option<&'a str>,
    /// A season window instead of bounds.
    pub season: Option<SeasonArg>,
    /// The last N battles instead of a window.
    pub last_n_battles: Option<i64>,
}

/// A tool's window when the call names none (SURFACE §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefaultWindow {
    /// The last N × 24 h.
    LastDays(i64),
    /// Today and the N − 1 local days before it, in the applied zone.
    LastLocalDays(i64),
    /// Everything recorded.
    Unbounded,
    /// The current season to date.
    CurrentSeason,
    /// The current war week and the N − 1 before it.
    LastWarWeeks(i64),
    /// The current season and the N − 1 before it.
    LastSeasons(i64),
    /// From a known instant (a read pointer) to now.
    Since(Timestamp),
}

/// What one tool allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRules {
    /// The window when none is named.
    pub default: DefaultWindow,
    /// The longest bounded window, in days (elixir_timeline: 30).
    pub max_days: Option<i64>,
}

/// Where a window came from (`applied.window.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Source {
    /// `from`, `to`, `days` or `weeks`.
    Argument,
    /// The tool's default.
    Default,
    /// Everything recorded.
    Unbounded,
    /// A season window.
    Season,
    /// Set by the tool (war_current's race week).
    Fixed,
}

/// A resolved window: `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Inclusive; `None` when unbounded (the tool shows the subject's `recorded_since`).
    #[serde(with = "iso_serde_opt")]
    pub from: Option<Timestamp>,
    /// Exclusive.
    #[serde(with = "iso_serde")]
    pub to: Timestamp,
    /// Where it came from.
    pub source: Source,
    /// The zone that resolved dates and labels.
    pub timezone: String,
    /// The season of a season window.
    pub season: Option<Season>,
}

/// A season roll inside a window (`applied.window.crosses[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeasonRoll {
    /// When the new season starts.
    #[serde(with = "iso_serde")]
    pub at: Timestamp,
    /// The season ending there, `YYYY-MM`.
    pub from_season: String,
    /// The season starting there, `YYYY-MM`.
    pub to_season: String,
}

/// Why a window is refused; every case is `bad_request` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WindowError {
    /// Two arguments that cannot be combined.
    #[error("`{0}` cannot be combined with `{1}`")]
    Conflict(&'static str, &'static str),
    /// A number outside its range.
    #[error("`{field}` takes {min} to {max}, not {value}")]
    OutOfRange {
        /// The argument.
        field: &'static str,
        /// Its least value.
        min: i64,
        /// Its greatest value.
        max: i64,
        /// What was sent.
        value: i64,
    },
    /// A bound that is neither an ISO instant nor `YYYY-MM-DD`.
    #[error("`{0}` is neither an ISO instant nor YYYY-MM-DD: {1:?}")]
    BadBound(&'static str, String),
    /// An unknown IANA zone.
    #[error("unknown time zone {0:?}")]
    UnknownZone(String),
    /// `from` at or after `to`.
    #[error("`from` must be before `to`")]
    Empty,
    /// A window longer than the tool allows.
    #[error("this tool's window is at most {0} days")]
    TooLong(i64),
    /// A season outside the calendar.
    #[error("no such season")]
    UnknownSeason,
}

fn date_only(text: &str) -> Option<Date> {
    (text.len() == 10).then(|| text.parse().ok()).flatten()
}

fn start_of(date: Date, zone: &TimeZone) -> Option<Timestamp> {
    date.to_zoned(zone.clone()).ok().map(|z| z.timestamp())
}

/// 0000-01-01T00:00:00Z in milliseconds: an instant before it has no four-digit ISO 8601 year,
/// so a window's JSON could not say it (a property test found `to: "0000-01-01"` with
/// `weeks: 1` answered with `-000001-12-26T00:00:00Z`).
const EARLIEST_MS: Millis = -62_167_219_200_000;

fn bound(field: &'static str, text: &str, zone: &TimeZone) -> Result<Timestamp, WindowError> {
    let bad = || WindowError::BadBound(field, text.to_owned());
    match date_only(text) {
        Some(date) if field == "to" => start_of(date.tomorrow().map_err(|_| bad())?, zone),
        Some(date) => start_of(date, zone),
        None => parse_instant(text, zone),
    }
    .filter(|t| t.as_millisecond() >= EARLIEST_MS)
    .ok_or_else(bad)
}

fn minus(at: Timestamp, millis: Millis) -> Result<Timestamp, WindowError> {
    at.as_millisecond()
        .checked_sub(millis)
        .filter(|m| *m >= EARLIEST_MS)
        .and_then(|m| Timestamp::from_millisecond(m).ok())
        .ok_or(WindowError::Empty)
}

fn range(field: &'static str, value: Option<i64>, max: i64) -> Result<(), WindowError> {
    match value {
        Some(v) if !(1..=max).contains(&v) => Err(WindowError::OutOfRange {
            field,
            min: 1,
            max,
            value: v,
        }),
        _ => Ok(()),
    }
}

/// Resolves a call's window under a tool's rules. `account_zone` is the zone when the call
/// names none (the account's, else `UTC`); `now` is the injected clock's reading.
pub fn resolve(
    args: &WindowArgs<'_>,
    rules: &WindowRules,
    account_zone: &str,
    now: Timestamp,
) -> Result<Window, WindowError> {
    let zone_name = args.timezone.unwrap_or(account_zone);
    let zone = crate::time::zone(zone_name)
        .ok_or_else(|| WindowError::UnknownZone(zone_name.to_owned()))?;
    range("days", args.days, MAX_DAYS)?;
    range("weeks", args.weeks, MAX_WEEKS)?;
    let named: [(&'static str, bool); 4] = [
        ("from", args.from.is_some()),
        ("to", args.to.is_some()),
        ("days", args.days.is_some()),
        ("weeks", args.weeks.is_some()),
    ];
    for (other, present) in [
        ("season", args.season.is_some()),
        ("last_n_battles", args.last_n_battles.is_some()),
    ] {
        if let Some((bound, _)) = named.iter().find(|(_, p)| *p).filter(|_| present) {
            return Err(WindowError::Conflict(other, bound));
        }
    }
    if args.from.is_some() {
        if args.days.is_some() {
            return Err(WindowError::Conflict("from", "days"));
        }
        if args.weeks.is_some() {
            return Err(WindowError::Conflict("from", "weeks"));
        }
    }
    if args.days.is_some() && args.weeks.is_some() {
        return Err(WindowError::Conflict("days", "weeks"));
    }
    let window = |from, to, source, season| Window {
        from,
        to,
        source,
        timezone: zone_name.to_owned(),
        season,
    };
    let resolved = if let Some(season_arg) = args.season {
        let season = season_arg.season(now).ok_or(WindowError::UnknownSeason)?;
        let to = if season.starts_at <= now && now < season.ends_at {
            now
        } else {
            season.ends_at
        };
        window(Some(season.starts_at), to, Source::Season, Some(season))
    } else if args.last_n_battles.is_some() {
        window(None, now, Source::Unbounded, None)
    } else if named.iter().any(|(_, p)| *p) {
        let to = args
            .to
            .map(|t| bound("to", t, &zone))
            .transpose()?
            .unwrap_or(now);
        let from = match (args.from, args.days, args.weeks) {
            (Some(f), _, _) => Some(bound("from", f, &zone)?),
            (None, Some(days), _) => Some(minus(to, days * DAY_MS)?),
            (None, None, Some(weeks)) => Some(minus(to, weeks * WEEK_MS)?),
            (None, None, None) => None,
        };
        window(from, to, Source::Argument, None)
    } else {
        default_window(rules.default, &zone, now)
            .map(|(from, source, season)| window(from, now, source, season))
            .ok_or(WindowError::UnknownSeason)?
    };
    if let Some(from) = resolved.from {
        if from >= resolved.to {
            return Err(WindowError::Empty);
        }
        if let Some(max) = rules.max_days
            && resolved.to.as_millisecond() - from.as_millisecond() > max * DAY_MS
        {
            return Err(WindowError::TooLong(max));
        }
    }
    Ok(resolved)
}

fn default_window(
    default: DefaultWindow,
    zone: &TimeZone,
    now: Timestamp,
) -> Option<(Option<Timestamp>, Source, Option<Season>)> {
    let back = |millis: Millis| minus(now, millis).ok();
    Some(match default {
        DefaultWindow::LastDays(n) => {
            (Some(back(n.saturating_mul(DAY_MS))?), Source::Default, None)
        }
        DefaultWindow::LastLocalDays(n) => {
            let today = now.to_zoned(zone.clone()).date();
            let first = today
                .checked_sub(jiff::Span::new().try_days(n - 1).ok()?)
                .ok()?;
            (Some(start_of(first, zone)?), Source::Default, None)
        }
        DefaultWindow::Unbounded => (None, Source::Unbounded, None),
        DefaultWindow::CurrentSeason => {
            let season = calendar::season_at(now)?;
            (Some(season.starts_at), Source::Season, Some(season))
        }
        DefaultWindow::LastWarWeeks(n) => {
            let week = calendar::war_at(now)?.week_starts_at;
            (
                Some(minus(week, (n - 1).saturating_mul(WEEK_MS)).ok()?),
                Source::Default,
                None,
            )
        }
        DefaultWindow::LastSeasons(n) => {
            let mut season = calendar::season_at(now)?;
            for _ in 1..n {
                season = season.previous()?;
            }
            (Some(season.starts_at), Source::Default, None)
        }
        DefaultWindow::Since(at) => (Some(at), Source::Default, None),
    })
}

impl Window {
    /// The season rolls strictly inside the window, oldest first.
    pub fn season_rolls(&self) -> Vec<SeasonRoll> {
        let mut rolls = Vec::new();
        let Some(mut season) = self.from.and_then(calendar::season_at) else {
            return rolls;
        };
        while let Some(next) = season.next() {
            if next.starts_at >= self.to {
                break;
            }
            rolls.push(SeasonRoll {
                at: next.starts_at,
                from_season: season.label(),
                to_season: next.label(),
            });
            season = next;
        }
        rolls
    }

    /// Whether `at` is inside `[from, to)`.
    pub fn contains(&self, at: Timestamp) -> bool {
        self.from.is_none_or(|f| f <= at) && at < self.to
    }

    /// The zone that resolved the window (UTC when its name is not one the bundled database
    /// knows, which a resolved window's never is).
    pub fn zone(&self) -> TimeZone {
        crate::time::zone(&self.timezone).unwrap_or(TimeZone::UTC)
    }
}

/// The default window of each windowed tool (SURFACE §5.4); `None` for a tool without one.
pub fn default_for(tool: &str) -> Option<WindowRules> {
    let rules = |default| WindowRules {
        default,
        max_days: None,
    };
    Some(match tool {
        "players_summary" | "clans_standings" | "elixir_coverage" => {
            rules(DefaultWindow::LastDays(30))
        }
        "players_timeline" => rules(DefaultWindow::LastLocalDays(30)),
        "battles_query"
        | "battles_performance"
        | "battles_decks"
        | "battles_cards"
        | "battles_opponents"
        | "battles_levels" => rules(DefaultWindow::Unbounded),
        "battles_meta_decks" | "battles_meta_cards" | "rankings_timeline" => {
            rules(DefaultWindow::CurrentSeason)
        }
        "clans_participation" => rules(DefaultWindow::LastWarWeeks(5)),
        "war_history" => rules(DefaultWindow::LastSeasons(3)),
        // from the read pointer when there is one: the caller passes `Since`
        "elixir_timeline" => WindowRules {
            default: DefaultWindow::LastDays(1),
            max_days: Some(30),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::time::iso;

    const NOW: &str = "2026-09-18T19:34:12Z";

    fn now() -> Timestamp {
        NOW.parse().unwrap()
    }

    fn rules(default: DefaultWindow) -> WindowRules {
        WindowRules {
            default,
            max_days: None,
        }
    }

    fn resolve_at(args: WindowArgs<'_>, default: DefaultWindow) -> Result<Window, WindowError> {
        resolve(&args, &rules(default), "UTC", now())
    }

    /// The window of `args` with no default window, at [`NOW`] in UTC.
    fn unbounded(args: WindowArgs<'_>) -> Window {
        resolve_at(args, DefaultWindow::Unbounded).unwrap()
    }

    /// The window of `args` with no default window, at [`NOW`] in Europe/Warsaw.
    fn in_warsaw(args: WindowArgs<'_>) -> Window {
        resolve(
            &args,
            &rules(DefaultWindow::Unbounded),
            "Europe/Warsaw",
            now(),
        )
        .unwrap()
    }

    fn bounds(w: &Window) -> (Option<String>, String) {
        (w.from.map(iso), iso(w.to))
    }

    #[test]
    fn dates_are_local_days_and_to_is_exclusive() {
        let w = in_warsaw(WindowArgs {
            from: Some("2026-09-01"),
            to: Some("2026-09-10"),
            ..WindowArgs::default()
        });
        // Warsaw is UTC+2 in September: local midnight is 22:00Z the day before
        assert_eq!(
            bounds(&w),
            (
                Some("2026-08-31T22:00:00Z".into()),
                "2026-09-10T22:00:00Z".into()
            )
        );
        assert_eq!(
            (w.source, w.timezone.as_str()),
            (Source::Argument, "Europe/Warsaw")
        );
        assert!(w.contains("2026-09-10T21:59:59Z".parse().unwrap()));
        assert!(!w.contains("2026-09-10T22:00:00Z".parse().unwrap()));
        // an instant without an offset is a wall time in the applied zone; `timezone` wins
        let w = unbounded(WindowArgs {
            from: Some("2026-09-18T08:00:00"),
            timezone: Some("America/New_York"),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&w),
            (Some("2026-09-18T12:00:00Z".into()), NOW.into())
        );
        // a day that loses an hour to a clock change is 23 hours long
        let w = in_warsaw(WindowArgs {
            from: Some("2026-03-29"),
            to: Some("2026-03-29"),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&w),
            (
                Some("2026-03-28T23:00:00Z".into()),
                "2026-03-29T22:00:00Z".into()
            )
        );
    }

    #[test]
    fn days_and_weeks_count_back_from_to_or_now() {
        let w = unbounded(WindowArgs {
            days: Some(7),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&w),
            (Some("2026-09-11T19:34:12Z".into()), NOW.into())
        );
        let w = unbounded(WindowArgs {
            weeks: Some(2),
            to: Some("2026-09-10T00:00:00Z"),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&w),
            (
                Some("2026-08-27T00:00:00Z".into()),
                "2026-09-10T00:00:00Z".into()
            )
        );
        // `to` alone leaves the start open
        let w = resolve_at(
            WindowArgs {
                to: Some("2026-09-10"),
                ..WindowArgs::default()
            },
            DefaultWindow::LastDays(30),
        )
        .unwrap();
        assert_eq!(bounds(&w), (None, "2026-09-11T00:00:00Z".into()));
        for (field, days, weeks) in [
            ("days", Some(0), None),
            ("days", Some(731), None),
            ("weeks", None, Some(105)),
        ] {
            let e = resolve_at(
                WindowArgs {
                    days,
                    weeks,
                    ..WindowArgs::default()
                },
                DefaultWindow::Unbounded,
            )
            .unwrap_err();
            assert!(
                matches!(e, WindowError::OutOfRange { field: f, .. } if f == field),
                "{e}"
            );
        }
    }

    #[test]
    fn conflicting_arguments_are_bad_requests() {
        let season = Some(SeasonArg::Current);
        for (args, expected) in [
            (
                WindowArgs {
                    from: Some("2026-09-01"),
                    days: Some(3),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("from", "days"),
            ),
            (
                WindowArgs {
                    from: Some("2026-09-01"),
                    weeks: Some(3),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("from", "weeks"),
            ),
            (
                WindowArgs {
                    days: Some(3),
                    weeks: Some(3),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("days", "weeks"),
            ),
            (
                WindowArgs {
                    season,
                    to: Some("2026-09-01"),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("season", "to"),
            ),
            (
                WindowArgs {
                    season,
                    days: Some(1),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("season", "days"),
            ),
            (
                WindowArgs {
                    last_n_battles: Some(5),
                    weeks: Some(1),
                    ..WindowArgs::default()
                },
                WindowError::Conflict("last_n_battles", "weeks"),
            ),
            (
                WindowArgs {
                    from: Some("2026-09-10"),
                    to: Some("2026-09-09"),
                    ..WindowArgs::default()
                },
                WindowError::Empty,
            ),
            (
                WindowArgs {
                    from: Some("2026-09-10T00:00:00Z"),
                    to: Some("2026-09-10T00:00:00Z"),
                    ..WindowArgs::default()
                },
                WindowError::Empty,
            ),
            (
                WindowArgs {
                    from: Some("2026-09-19"),
                    ..WindowArgs::default()
                },
                WindowError::Empty,
            ),
            (
                WindowArgs {
                    from: Some("yesterday"),
                    ..WindowArgs::default()
                },
                WindowError::BadBound("from", "yesterday".into()),
            ),
            (
                WindowArgs {
                    to: Some("2026-02-30"),
                    ..WindowArgs::default()
                },
                WindowError::BadBound("to", "2026-02-30".into()),
            ),
            (
                WindowArgs {
                    timezone: Some("Mars/Olympus_Mons"),
                    ..WindowArgs::default()
                },
                WindowError::UnknownZone("Mars/Olympus_Mons".into()),
            ),
        ] {
            assert_eq!(
                resolve_at(args.clone(), DefaultWindow::Unbounded),
                Err(expected),
                "{args:?}"
            );
        }
        // elixir_timeline: at most 30 days
        let timeline = default_for("elixir_timeline").unwrap();
        let e = resolve(
            &WindowArgs {
                days: Some(31),
                ..WindowArgs::default()
            },
            &timeline,
            "UTC",
            now(),
        );
        assert_eq!(e, Err(WindowError::TooLong(30)));
        assert!(
            resolve(
                &WindowArgs {
                    days: Some(30),
                    ..WindowArgs::default()
                },
                &timeline,
                "UTC",
                now()
            )
            .is_ok()
        );
    }

    #[test]
    fn season_windows() {
        let current = unbounded(WindowArgs {
            season: Some(SeasonArg::Current),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&current),
            (Some("2026-09-07T10:00:00Z".into()), NOW.into())
        );
        assert_eq!(
            (current.source, current.season.map(|s| s.id)),
            (Source::Season, Some(136))
        );
        let previous = unbounded(WindowArgs {
            season: SeasonArg::parse("previous"),
            ..WindowArgs::default()
        });
        assert_eq!(
            bounds(&previous),
            (
                Some("2026-08-03T10:00:00Z".into()),
                "2026-09-07T10:00:00Z".into()
            )
        );
        let by_war = unbounded(WindowArgs {
            season: SeasonArg::war(135),
            ..WindowArgs::default()
        });
        assert_eq!(by_war, previous);
        let by_month = unbounded(WindowArgs {
            season: SeasonArg::parse("2026-09"),
            ..WindowArgs::default()
        });
        assert_eq!(by_month, current);
        assert_eq!(SeasonArg::war(0), None);
        assert_eq!(SeasonArg::war(10_000), None);
        assert_eq!(SeasonArg::parse("2026-9"), None);
    }

    #[test]
    fn default_windows_per_tool() {
        let at = |tool: &str| {
            let rules = default_for(tool).unwrap();
            let w = resolve(&WindowArgs::default(), &rules, "Europe/Warsaw", now()).unwrap();
            (w.from.map(iso), w.source)
        };
        assert_eq!(
            at("players_summary"),
            (Some("2026-08-19T19:34:12Z".into()), Source::Default)
        );
        // 30 local days: today (18 September in Warsaw) and the 29 before, from local midnight
        assert_eq!(
            at("players_timeline"),
            (Some("2026-08-19T22:00:00Z".into()), Source::Default)
        );
        assert_eq!(at("battles_query"), (None, Source::Unbounded));
        assert_eq!(
            at("battles_meta_decks"),
            (Some("2026-09-07T10:00:00Z".into()), Source::Season)
        );
        // this week started Monday 14 September; five war weeks reach back to 17 August
        assert_eq!(
            at("clans_participation"),
            (Some("2026-08-17T10:00:00Z".into()), Source::Default)
        );
        // three seasons: September, August, July
        assert_eq!(
            at("war_history"),
            (Some("2026-07-06T10:00:00Z".into()), Source::Default)
        );
        assert_eq!(
            at("elixir_timeline"),
            (Some("2026-09-17T19:34:12Z".into()), Source::Default)
        );
        assert_eq!(default_for("elixir_docs"), None);
        let pointer: Timestamp = "2026-09-18T00:00:00Z".parse().unwrap();
        let w = resolve(
            &WindowArgs::default(),
            &rules(DefaultWindow::Since(pointer)),
            "UTC",
            now(),
        )
        .unwrap();
        assert_eq!(w.from, Some(pointer));
    }

    #[test]
    fn season_rolls_inside_a_window() {
        let w = unbounded(WindowArgs {
            days: Some(60),
            ..WindowArgs::default()
        });
        let rolls: Vec<(String, String, String)> = w
            .season_rolls()
            .into_iter()
            .map(|r| (iso(r.at), r.from_season, r.to_season))
            .collect();
        assert_eq!(
            rolls,
            [
                (
                    "2026-08-03T10:00:00Z".into(),
                    "2026-07".into(),
                    "2026-08".into()
                ),
                (
                    "2026-09-07T10:00:00Z".into(),
                    "2026-08".into(),
                    "2026-09".into()
                ),
            ]
        );
        let json = serde_json::to_value(&w).unwrap();
        assert_eq!(json["source"], "argument");
        assert_eq!(json["to"], NOW);
    }

    const ZONES: [&str; 5] = [
        "UTC",
        "Europe/Warsaw",
        "America/New_York",
        "Asia/Kolkata",
        "Australia/Lord_Howe",
    ];

    #[test]
    fn a_window_never_reaches_before_year_zero() {
        // found by prop_window::any_arguments_resolve_or_are_refused_with_a_reason
        let unbounded = rules(DefaultWindow::Unbounded);
        let args = WindowArgs {
            to: Some("0000-01-01"),
            weeks: Some(1),
            ..WindowArgs::default()
        };
        assert_eq!(
            resolve(&args, &unbounded, "UTC", now()),
            Err(WindowError::Empty)
        );
        // east of UTC the local start of year zero is still in year -1
        let east = WindowArgs {
            from: Some("0000-01-01"),
            to: Some("0001-01-01"),
            timezone: Some("Asia/Kolkata"),
            ..WindowArgs::default()
        };
        assert_eq!(
            resolve(&east, &unbounded, "UTC", now()),
            Err(WindowError::BadBound("from", "0000-01-01".to_owned()))
        );
        let at_the_start = WindowArgs {
            from: Some("0000-01-01"),
            to: Some("0000-01-01"),
            ..WindowArgs::default()
        };
        let w = resolve(&at_the_start, &unbounded, "UTC", now()).unwrap();
        assert_eq!(
            serde_json::to_value(&w).unwrap()["from"],
            "0000-01-01T00:00:00Z"
        );
    }

    proptest! {
        #![proptest_config(crate::prop_settings::config())]
        #[test]
        fn sugar_counts_back_exactly(
            now_ms in 0i64..4_102_444_800_000,
            n in 1i64..=104,
            weeks in any::<bool>(),
            to_back in proptest::option::of(0i64..10_000_000_000),
        ) {
            let now = Timestamp::from_millisecond(now_ms + 100 * WEEK_MS).unwrap();
            let to_text = to_back.map(|b| iso(Timestamp::from_millisecond(now.as_millisecond() - b / 1000 * 1000).unwrap()));
            let args = WindowArgs {
                to: to_text.as_deref(),
                days: (!weeks).then_some(n),
                weeks: weeks.then_some(n),
                ..WindowArgs::default()
            };
            let w = resolve(&args, &rules(DefaultWindow::Unbounded), "UTC", now).unwrap();
            let span = if weeks { n * WEEK_MS } else { n * DAY_MS };
            prop_assert_eq!(w.to.as_millisecond() - w.from.unwrap().as_millisecond(), span);
            prop_assert_eq!(w.source, Source::Argument);
            if to_text.is_none() {
                prop_assert_eq!(w.to, now);
            }
        }

        #[test]
        fn explicit_instants_are_kept_or_refused(a in 0i64..4_102_444_800, b in 0i64..4_102_444_800) {
            let (fa, fb) = (Timestamp::from_second(a).unwrap(), Timestamp::from_second(b).unwrap());
            let (ta, tb) = (iso(fa), iso(fb));
            let args = WindowArgs { from: Some(&ta), to: Some(&tb), ..WindowArgs::default() };
            let got = resolve(&args, &rules(DefaultWindow::Unbounded), "Asia/Kolkata", now());
            if a < b {
                let w = got.unwrap();
                prop_assert_eq!((w.from, w.to), (Some(fa), fb));
                prop_assert!(w.contains(fa));
                prop_assert!(!w.contains(fb));
            } else {
                prop_assert_eq!(got, Err(WindowError::Empty));
            }
        }

        #[test]
        fn a_date_window_covers_whole_local_days(
            days_since_epoch in 0i64..40_000,
            length in 0i64..60,
            zone in proptest::sample::select(ZONES.to_vec()),
        ) {
            let epoch = Date::constant(1970, 1, 1);
            let first = epoch.checked_add(jiff::Span::new().days(days_since_epoch)).unwrap();
            let last = first.checked_add(jiff::Span::new().days(length)).unwrap();
            let (f, l) = (first.to_string(), last.to_string());
            let args = WindowArgs { from: Some(&f), to: Some(&l), timezone: Some(zone), ..WindowArgs::default() };
            let w = resolve(&args, &rules(DefaultWindow::Unbounded), "UTC", now()).unwrap();
            let tz = TimeZone::get(zone).unwrap();
            let from = w.from.unwrap().to_zoned(tz.clone());
            let to = w.to.to_zoned(tz.clone());
            prop_assert_eq!(from.date(), first);
            prop_assert_eq!(from.start_of_day().unwrap().timestamp(), from.timestamp());
            prop_assert_eq!(to.date(), last.tomorrow().unwrap());
            prop_assert_eq!(to.start_of_day().unwrap().timestamp(), to.timestamp());
            prop_assert!(w.from.unwrap() < w.to);
        }

        #[test]
        fn season_and_last_n_refuse_every_bound(
            which in 0usize..4,
            by_season in any::<bool>(),
        ) {
            let mut args = WindowArgs {
                season: by_season.then_some(SeasonArg::Current),
                last_n_battles: (!by_season).then_some(10),
                ..WindowArgs::default()
            };
            match which {
                0 => args.from = Some("2026-09-01"),
                1 => args.to = Some("2026-09-01"),
                2 => args.days = Some(3),
                _ => args.weeks = Some(3),
            }
            let got = resolve(&args, &rules(DefaultWindow::Unbounded), "UTC", now());
            prop_assert!(matches!(got, Err(WindowError::Conflict(_, _))), "{got:?}");
        }
    }
}
