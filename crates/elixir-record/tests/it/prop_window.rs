//! Property tests of windows and time zones beyond the unit properties in `window.rs` (day and
//! week sugar, explicit instants, whole local days, season conflicts): any combination of
//! window arguments — garbage bounds, any numbers, unknown and over-long zones — resolves or is
//! refused with a documented `WindowError`, the same answer every time, and a resolved window
//! is non-empty, within the tool's longest window and round-trips through its JSON; an instant
//! with an offset is the same instant in every zone; a wall time without one reads in the
//! applied zone; `days`/`weeks` and a tool's `max_days` hold at the bound and one past.
//!
//! Cases and seed: the workspace's property settings (`PROPTEST_CASES`, `PROPTEST_RNG_SEED`;
//! a failure prints both).

use elixir_record::time::iso;
use elixir_record::window::{DefaultWindow, MAX_DAYS, MAX_WEEKS, SeasonArg, WindowRules, resolve};
use elixir_record::{Window, WindowArgs, WindowError};
use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use proptest::prelude::*;

use crate::prop_settings::config;

const DAY_MS: i64 = 86_400_000;

const ZONES: &[&str] = &[
    "UTC",
    "Europe/Warsaw",
    "America/New_York",
    "America/St_Johns",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "Pacific/Kiritimati",
    "Pacific/Chatham",
];

fn now() -> impl Strategy<Value = Timestamp> {
    (1_500_000_000i64..4_000_000_000).prop_map(|s| Timestamp::from_second(s).unwrap())
}

fn bound_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..4_102_444_800).prop_map(|s| iso(Timestamp::from_second(s).unwrap())),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?",
        Just("9999-12-31".to_owned()),
        Just("0000-01-01".to_owned()),
        Just("2026-02-29".to_owned()),
        Just("2026-03-29T02:30:00".to_owned()),
        ".{0,24}",
    ]
}

fn count() -> impl Strategy<Value = Option<i64>> {
    proptest::option::of(prop_oneof![
        Just(0i64),
        Just(1),
        Just(MAX_DAYS),
        Just(MAX_DAYS + 1),
        Just(i64::MIN),
        Just(i64::MAX),
        any::<i64>(),
    ])
}

fn zone_name() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(prop_oneof![
        proptest::sample::select(ZONES.to_vec()).prop_map(str::to_owned),
        Just(String::new()),
        Just("utc".to_owned()),
        Just("Mars/Olympus_Mons".to_owned()),
        Just("A".repeat(65)),
        ".{0,20}",
    ])
}

fn season() -> impl Strategy<Value = Option<SeasonArg>> {
    proptest::option::of(prop_oneof![
        Just(SeasonArg::Current),
        Just(SeasonArg::Previous),
        "[0-9]{4}-[0-9]{2}".prop_filter_map("a month", |t| SeasonArg::parse(&t)),
        (-5i64..10_010).prop_filter_map("a war", SeasonArg::war),
    ])
}

fn rules() -> impl Strategy<Value = WindowRules> {
    let default = prop_oneof![
        (1i64..=1000).prop_map(DefaultWindow::LastDays),
        (1i64..=1000).prop_map(DefaultWindow::LastLocalDays),
        Just(DefaultWindow::Unbounded),
        Just(DefaultWindow::CurrentSeason),
        (1i64..=52).prop_map(DefaultWindow::LastWarWeeks),
        (1i64..=24).prop_map(DefaultWindow::LastSeasons),
        (0i64..4_000_000_000)
            .prop_map(|s| DefaultWindow::Since(Timestamp::from_second(s).unwrap())),
    ];
    (default, proptest::option::of(1i64..=60))
        .prop_map(|(default, max_days)| WindowRules { default, max_days })
}

fn documented(e: &WindowError) -> bool {
    matches!(
        e,
        WindowError::Conflict(..)
            | WindowError::OutOfRange { .. }
            | WindowError::BadBound(..)
            | WindowError::UnknownZone(_)
            | WindowError::Empty
            | WindowError::TooLong(_)
            | WindowError::UnknownSeason
    )
}

/// The window as its JSON reads back (instants to the second, as the wire shows them).
fn to_the_second(w: &Window) -> Window {
    let cut = |t: Timestamp| Timestamp::from_second(t.as_second()).unwrap();
    Window {
        from: w.from.map(cut),
        to: cut(w.to),
        ..w.clone()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_arguments_resolve_or_are_refused_with_a_reason(
        from in proptest::option::of(bound_text()),
        to in proptest::option::of(bound_text()),
        days in count(),
        weeks in count(),
        timezone in zone_name(),
        season in season(),
        last_n_battles in proptest::option::of(any::<i64>()),
        rules in rules(),
        account_zone in proptest::sample::select(ZONES.to_vec()),
        now in now(),
    ) {
        let args = WindowArgs {
            from: from.as_deref(),
            to: to.as_deref(),
            days,
            weeks,
            timezone: timezone.as_deref(),
            season,
            last_n_battles,
        };
        let first = resolve(&args, &rules, account_zone, now);
        prop_assert_eq!(&first, &resolve(&args, &rules, account_zone, now));
        match first {
            Ok(w) => {
                if let Some(from) = w.from {
                    prop_assert!(from < w.to, "{w:?}");
                    if let Some(max) = rules.max_days {
                        prop_assert!(w.to.as_millisecond() - from.as_millisecond() <= max * DAY_MS);
                    }
                }
                prop_assert_eq!(&w.timezone, timezone.as_deref().unwrap_or(account_zone));
                let json = serde_json::to_value(&w).unwrap();
                prop_assert_eq!(serde_json::from_value::<Window>(json).unwrap(), to_the_second(&w));
            }
            Err(e) => prop_assert!(documented(&e), "{e:?}"),
        }
    }

    #[test]
    fn an_instant_with_an_offset_is_the_same_in_every_zone(
        second in 0i64..4_000_000_000,
        quarter_hours in -56i32..=56,
        zone in proptest::sample::select(ZONES.to_vec()),
        now in now(),
    ) {
        let at = Timestamp::from_second(second).unwrap();
        let offset = jiff::tz::Offset::from_seconds(quarter_hours * 900).unwrap();
        let text = at.to_zoned(TimeZone::fixed(offset)).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string();
        let later = iso(Timestamp::from_second(second + 60).unwrap());
        let args = WindowArgs { from: Some(&text), to: Some(&later), timezone: Some(zone), ..WindowArgs::default() };
        let w = resolve(&args, &WindowRules { default: DefaultWindow::Unbounded, max_days: None }, "UTC", now).unwrap();
        prop_assert_eq!(w.from, Some(at), "{}", text);
    }

    #[test]
    fn a_wall_time_without_an_offset_reads_in_the_applied_zone(
        second in 0i64..4_000_000_000,
        zone in proptest::sample::select(ZONES.to_vec()),
        now in now(),
    ) {
        let tz = TimeZone::get(zone).unwrap();
        let civil: DateTime = Timestamp::from_second(second).unwrap().to_zoned(TimeZone::UTC).datetime();
        let text = civil.strftime("%Y-%m-%dT%H:%M:%S").to_string();
        let end = "2100-01-01";
        let args = WindowArgs { from: Some(&text), to: Some(end), timezone: Some(zone), ..WindowArgs::default() };
        let w = resolve(&args, &WindowRules { default: DefaultWindow::Unbounded, max_days: None }, "UTC", now).unwrap();
        let read = w.from.unwrap().to_zoned(tz.clone()).datetime();
        match tz.to_ambiguous_zoned(civil).offset() {
            // a time the clock skipped reads as the wall time moved forward by the gap
            AmbiguousOffset::Gap { before, after } => {
                let gap = i64::from(after.seconds() - before.seconds());
                prop_assert_eq!(read.to_zoned(TimeZone::UTC).unwrap().timestamp().as_second()
                    - civil.to_zoned(TimeZone::UTC).unwrap().timestamp().as_second(), gap);
            }
            _ => prop_assert_eq!(read, civil),
        }
    }

    #[test]
    fn counts_and_the_longest_window_hold_at_the_bound_and_one_past(
        now in now(),
        weeks in any::<bool>(),
        max in 1i64..=60,
        zone in proptest::sample::select(ZONES.to_vec()),
    ) {
        let unbounded = WindowRules { default: DefaultWindow::Unbounded, max_days: None };
        let (field, limit) = if weeks { ("weeks", MAX_WEEKS) } else { ("days", MAX_DAYS) };
        for (n, ok) in [(1, true), (limit, true), (0, false), (limit + 1, false), (-1, false)] {
            let args = WindowArgs {
                days: (!weeks).then_some(n),
                weeks: weeks.then_some(n),
                timezone: Some(zone),
                ..WindowArgs::default()
            };
            let got = resolve(&args, &unbounded, "UTC", now);
            if ok {
                prop_assert!(got.is_ok(), "{n}: {got:?}");
            } else {
                prop_assert_eq!(got, Err(WindowError::OutOfRange { field, min: 1, max: limit, value: n }));
            }
        }
        let capped = WindowRules { default: DefaultWindow::Unbounded, max_days: Some(max) };
        let to = iso(now);
        for (span_s, ok) in [(max * 86_400, true), (max * 86_400 + 1, false)] {
            let from = iso(Timestamp::from_second(now.as_second() - span_s).unwrap());
            let args = WindowArgs { from: Some(&from), to: Some(&to), ..WindowArgs::default() };
            let got = resolve(&args, &capped, "UTC", now);
            prop_assert_eq!(got.is_ok(), ok, "{}: {:?}", span_s, got);
            if !ok {
                prop_assert_eq!(got, Err(WindowError::TooLong(max)));
            }
        }
    }
}
