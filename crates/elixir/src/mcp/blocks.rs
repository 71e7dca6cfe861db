//! The shared argument blocks of SURFACE §2.1, each declared once as its arguments (their
//! JSON-schema fragments, ready for a [`ToolSpec`](crate::mcp::spec::ToolSpec)'s `params`)
//! and read once by its parser into `elixir_record`'s types: PLAYER and CLAN ([`Tag`]), WINDOW
//! and SEASON ([`WindowArgs`], [`SeasonArg`], resolved with [`window::resolve`]), MODE
//! ([`ModeFilter`]) and CARD (a [`Card`] of the catalogue, by id or exact name). The door has
//! checked the schema already; the parsers apply the rules a schema cannot say (normalized
//! tags, empty values, conflicts) and word each refusal as its tool error; a resolved window's
//! season rolls are written once as `applied.window.crosses[]` ([`crosses`]). Which tool
//! takes which block is the tool's.

use elixir_record::cards::{Card, Catalogue};
use elixir_record::window::{self, SeasonArg, Window, WindowArgs, WindowRules};
use elixir_record::{ModeFilter, Tag};
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::domain::Millis;
use crate::mcp::args::{self, DATE_OR_INSTANT_PATTERN, TAG_INPUT_PATTERN};
use crate::mcp::call::{ErrorCode, Fail, ToolError, bad_request};
use crate::mcp::spec::Param;

/// The schema of a tag argument: what a tag may look like before normalization.
pub fn tag_schema(description: &str) -> Value {
    args::pattern(description, TAG_INPUT_PATTERN, 20)
}

/// A tag argument normalized (SURFACE §6.1); anything else is `invalid_tag` with `hint`.
pub fn tag(raw: &str, hint: impl Into<String>) -> Result<Tag, Fail> {
    Tag::parse(raw).map_err(|_| {
        Fail::Tool(ToolError::new(
            ErrorCode::InvalidTag,
            format!("{raw:?} is not a Clash Royale tag."),
            hint,
        ))
    })
}

/// A tag argument that was sent: `None` when absent, `bad_request` when empty (an empty value
/// is a caller bug, never "default"), `invalid_tag` when it is no tag.
fn sent_tag(a: &Map<String, Value>, name: &str, hint: &str) -> Result<Option<Tag>, Fail> {
    match args::text(a, name) {
        None => Ok(None),
        Some(raw) if raw.trim().is_empty() => Err(bad_request(
            format!("{name} is empty; leave it out instead."),
            hint,
        )),
        Some(raw) => tag(raw, hint).map(Some),
    }
}

/// The hint of a refused tag: the shape, with an example.
const TAG_HINT: &str = "A tag is # plus 3 to 12 of 0289PYLQGRJCUV, e.g. #20JJJ2CCRU.";

// ---- PLAYER ----

/// PLAYER as one call sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlayerArg {
    /// An explicit player.
    pub player_tag: Option<Tag>,
    /// The end user an agent or integration names (A/I doors only).
    pub on_behalf_of: Option<String>,
    /// That end user's in-game name, to suggest candidates (needs `on_behalf_of`).
    pub display_name: Option<String>,
}

/// PLAYER's arguments: `player_tag`, and on agent and integration doors `on_behalf_of` and
/// `display_name` (the person door drops those two with a note).
pub fn player_params() -> Vec<Param> {
    vec![
        Param::new(
            "player_tag",
            tag_schema("The player's tag, e.g. #20JJJ2CCRU; leave out for you."),
        ),
        Param::new(
            "on_behalf_of",
            args::string("Opaque id of the end user you act for (1-200).", 1, 200),
        )
        .agent_only(),
        Param::new(
            "display_name",
            args::string(
                "The end user's in-game name (1-60); needs on_behalf_of.",
                1,
                60,
            ),
        )
        .agent_only(),
    ]
}

/// Reads PLAYER (SURFACE §1.4 refusals). On the person door the agent-only arguments never
/// arrive (the door dropped them), so they are read for the other kinds only.
pub fn player(a: &Map<String, Value>, kind: Kind) -> Result<PlayerArg, Fail> {
    let player_tag = sent_tag(a, "player_tag", TAG_HINT)?;
    if kind == Kind::Person {
        return Ok(PlayerArg {
            player_tag,
            ..PlayerArg::default()
        });
    }
    let on_behalf_of = args::text(a, "on_behalf_of").map(str::to_owned);
    let display_name = args::text(a, "display_name").map(str::to_owned);
    if on_behalf_of.as_deref().is_some_and(|v| v.trim().is_empty()) {
        return Err(bad_request(
            "on_behalf_of is empty; leave it out instead.",
            "Send the end user's opaque id, or leave on_behalf_of out.",
        ));
    }
    if display_name.is_some() && on_behalf_of.is_none() {
        return Err(bad_request(
            "display_name needs on_behalf_of.",
            "Send on_behalf_of with display_name, or leave display_name out.",
        ));
    }
    Ok(PlayerArg {
        player_tag,
        on_behalf_of,
        display_name,
    })
}

// ---- LIVE ----

/// `live` (L tools): read the API now when the record is older than the upstream cache.
pub fn live_param() -> Param {
    Param::new(
        "live",
        json!({"type": "boolean", "default": false, "description": "Read the API now if the record is older than its cache (spends a daily live fetch only when a request is sent)."}),
    )
}

/// Whether the call asked for a live read.
pub fn live(a: &Map<String, Value>) -> bool {
    a.get("live").and_then(Value::as_bool).unwrap_or(false)
}

// ---- CLAN ----

/// CLAN's argument: `clan_tag`.
pub fn clan_params() -> Vec<Param> {
    vec![Param::new(
        "clan_tag",
        tag_schema("The clan's tag, e.g. #9YJUPU9LY; leave out for your clan."),
    )]
}

/// Reads CLAN: the explicit clan, if sent.
pub fn clan(a: &Map<String, Value>) -> Result<Option<Tag>, Fail> {
    sent_tag(a, "clan_tag", TAG_HINT)
}

// ---- WINDOW and SEASON ----

/// WINDOW's arguments: `from`, `to`, `days`, `weeks`, `timezone`.
pub fn window_params() -> Vec<Param> {
    vec![
        Param::new(
            "from",
            args::pattern(
                "Start, inclusive: an ISO instant (no offset: your timezone) or YYYY-MM-DD.",
                DATE_OR_INSTANT_PATTERN,
                40,
            ),
        ),
        Param::new(
            "to",
            args::pattern(
                "End, exclusive: an ISO instant or YYYY-MM-DD (the start of the next day).",
                DATE_OR_INSTANT_PATTERN,
                40,
            ),
        ),
        Param::new(
            "days",
            json!({"type": "integer", "minimum": 1, "maximum": window::MAX_DAYS, "description": "The last N days before to (or now); not with from."}),
        ),
        Param::new(
            "weeks",
            json!({"type": "integer", "minimum": 1, "maximum": window::MAX_WEEKS, "description": "The last N weeks before to (or now); not with from or days."}),
        ),
        Param::new(
            "timezone",
            args::string(
                "IANA zone for dates and labels; yours when left out.",
                1,
                64,
            ),
        ),
    ]
}

/// SEASON's argument: `season`, a string or a war number.
pub fn season_params() -> Vec<Param> {
    vec![Param::new(
        "season",
        json!({
            "description": "current, previous, YYYY-MM or a war number 1-9999; not with from, to, days or weeks.",
            "anyOf": [
                {"type": "string", "pattern": "^(current|previous|[0-9]{4}-[0-9]{2})$"},
                {"type": "integer", "minimum": 1, "maximum": window::MAX_WAR},
            ],
        }),
    )]
}

/// Reads SEASON: `None` when absent; a value the calendar does not know is `bad_request`.
pub fn season(a: &Map<String, Value>) -> Result<Option<SeasonArg>, Fail> {
    let Some(value) = a.get("season") else {
        return Ok(None);
    };
    let parsed = match value {
        Value::String(text) => SeasonArg::parse(text),
        Value::Number(n) => n.as_i64().and_then(SeasonArg::war),
        _ => None,
    };
    parsed.map(Some).ok_or_else(|| {
        bad_request(
            format!("season {value} is not current, previous, YYYY-MM or a war number 1-9999."),
            "Send {\"season\": \"current\"}, {\"season\": \"2026-01\"} or a war number.",
        )
    })
}

/// WINDOW (and SEASON, when the tool takes it) as one call sent them, borrowed from its
/// arguments.
pub fn window_args<'a>(a: &'a Map<String, Value>, season: Option<SeasonArg>) -> WindowArgs<'a> {
    WindowArgs {
        from: args::text(a, "from"),
        to: args::text(a, "to"),
        days: a.get("days").and_then(Value::as_i64),
        weeks: a.get("weeks").and_then(Value::as_i64),
        timezone: args::text(a, "timezone"),
        season,
        last_n_battles: a.get("last_n_battles").and_then(Value::as_i64),
    }
}

/// `applied.window.crosses[]`: the season rolls inside a resolved window, oldest first.
pub fn crosses(w: &Window) -> Vec<Value> {
    w.season_rolls()
        .iter()
        .map(|r| {
            json!({
                "kind": "season",
                "at": elixir_record::time::iso(r.at),
                "from_season": r.from_season,
                "to_season": r.to_season,
            })
        })
        .collect()
}

/// Resolves a call's window under the tool's rules, in the caller's zone unless the call
/// names one, at `now`; every refusal is `bad_request` (SURFACE §5.3).
pub fn window(
    a: &Map<String, Value>,
    rules: &WindowRules,
    caller_zone: &str,
    now: Millis,
) -> Result<Window, Fail> {
    let season = season(a)?;
    let now = jiff::Timestamp::from_millisecond(now)
        .map_err(|e| Fail::Internal(format!("clock reading out of range: {e}")))?;
    window::resolve(&window_args(a, season), rules, caller_zone, now).map_err(|e| {
        bad_request(
            format!("The window is refused: {e}."),
            "elixir_docs({\"page\": \"clocks\"}) explains from, to, days, weeks and season.",
        )
    })
}

// ---- MODE ----

/// MODE's argument: `mode`, one mode or a family (`all` when left out).
pub fn mode_params() -> Vec<Param> {
    vec![Param::new(
        "mode",
        args::choice(
            "Battles of this mode or family (competitive: ladder and path_of_legend; river_race: war, war_duel and boat).",
            &ModeFilter::names(),
            Some("all"),
        ),
    )]
}

/// Reads MODE; left out is `all` (an omitted filter means no filter).
pub fn mode(a: &Map<String, Value>) -> Result<ModeFilter, Fail> {
    match args::text(a, "mode") {
        None => Ok(ModeFilter::All),
        Some(text) => ModeFilter::parse(text).ok_or_else(|| {
            bad_request(
                format!(
                    "mode {text:?} is not one of {}.",
                    ModeFilter::names().join(", ")
                ),
                "Send {\"mode\": \"competitive\"} or leave mode out for every mode.",
            )
        }),
    }
}

// ---- CARD ----

/// A CARD argument named `name`: a card id, or a card's exact name in any case.
pub fn card_param(name: &'static str, description: &str) -> Param {
    Param::new(
        name,
        json!({
            "description": description,
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": 999_999_999},
                {"type": "string", "minLength": 1, "maxLength": 40},
            ],
        }),
    )
}

/// Reads the CARD argument `name` against the catalogue: `None` when absent; an unknown id or
/// name is `not_found` with up to five `candidates` (nearest ids, or names containing it).
pub fn card<'c>(
    a: &Map<String, Value>,
    name: &str,
    catalogue: &'c Catalogue,
) -> Result<Option<&'c Card>, Fail> {
    let Some(value) = a.get(name) else {
        return Ok(None);
    };
    let (found, candidates): (Option<&Card>, Vec<&Card>) = match value {
        Value::Number(n) => {
            let id = n.as_i64().unwrap_or(0);
            (catalogue.get(id), catalogue.candidates(&[id], 5))
        }
        Value::String(text) => {
            let wanted = text.trim().to_lowercase();
            let found = catalogue.all().find(|c| c.name.to_lowercase() == wanted);
            let near = catalogue
                .all()
                .filter(|c| c.name.to_lowercase().contains(&wanted))
                .take(5)
                .collect();
            (found, near)
        }
        _ => (None, Vec::new()),
    };
    match found {
        Some(card) => Ok(Some(card)),
        None => Err(Fail::Tool(
            ToolError::new(
                ErrorCode::NotFound,
                format!("The card catalogue has no card {value}."),
                "cards_catalog({\"query\": \"<part of the name>\"}) finds a card's id by name.",
            )
            .with_candidates(
                candidates
                    .into_iter()
                    .map(|c| json!({"id": c.id, "name": c.name}))
                    .collect(),
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elixir_record::window::{DefaultWindow, Source};
    use elixir_record::{Mode, cards};

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn code(fail: Fail) -> ErrorCode {
        match fail {
            Fail::Tool(e) => e.code,
            other => panic!("not a tool error: {other:?}"),
        }
    }

    /// Every block's fragment is a valid schema that accepts what its parser reads.
    #[test]
    fn fragments_are_schemas_with_descriptions() {
        let params: Vec<Param> = [
            player_params(),
            clan_params(),
            window_params(),
            season_params(),
            mode_params(),
            vec![card_param("card", "A card id or exact name.")],
        ]
        .concat();
        for p in &params {
            assert!(p.schema["description"].as_str().is_some(), "{}", p.name);
            jsonschema::validator_for(&p.schema).unwrap();
        }
        let season = jsonschema::validator_for(&season_params()[0].schema).unwrap();
        for ok in [json!("current"), json!("2026-01"), json!(136)] {
            assert!(season.is_valid(&ok), "{ok}");
        }
        for bad in [json!("next"), json!(0), json!(10_000), json!(true)] {
            assert!(!season.is_valid(&bad), "{bad}");
        }
        let card = jsonschema::validator_for(&card_param("card", "x").schema).unwrap();
        assert!(card.is_valid(&json!(26_000_000)) && card.is_valid(&json!("Knight")));
        assert!(!card.is_valid(&json!("")) && !card.is_valid(&json!(0)));
    }

    #[test]
    fn player_and_clan_normalize_and_refuse_empty_values() {
        let p = player(&obj(json!({"player_tag": " 20jjj2ccru "})), Kind::Person).unwrap();
        assert_eq!(p.player_tag.unwrap().as_str(), "#20JJJ2CCRU");
        assert_eq!(
            player(&obj(json!({})), Kind::Agent).unwrap(),
            PlayerArg::default()
        );
        let bad = player(&obj(json!({"player_tag": "#XYZ"})), Kind::Person).unwrap_err();
        assert_eq!(code(bad), ErrorCode::InvalidTag);
        let empty = player(&obj(json!({"player_tag": ""})), Kind::Person).unwrap_err();
        assert_eq!(code(empty), ErrorCode::BadRequest);
        let on_behalf = player(
            &obj(json!({"on_behalf_of": "u1", "display_name": "Ann"})),
            Kind::Agent,
        )
        .unwrap();
        assert_eq!(on_behalf.on_behalf_of.as_deref(), Some("u1"));
        assert_eq!(on_behalf.display_name.as_deref(), Some("Ann"));
        for refused in [json!({"on_behalf_of": " "}), json!({"display_name": "Ann"})] {
            let e = player(&obj(refused.clone()), Kind::Integration).unwrap_err();
            assert_eq!(code(e), ErrorCode::BadRequest, "{refused}");
        }
        assert_eq!(
            clan(&obj(json!({"clan_tag": "#9yjupu9ly"})))
                .unwrap()
                .unwrap()
                .as_str(),
            "#9YJUPU9LY"
        );
        assert_eq!(clan(&obj(json!({}))).unwrap(), None);
        assert_eq!(
            code(clan(&obj(json!({"clan_tag": "#AB"}))).unwrap_err()),
            ErrorCode::InvalidTag
        );
    }

    #[test]
    fn windows_resolve_and_conflicts_are_bad_requests() {
        let rules = WindowRules {
            default: DefaultWindow::LastDays(30),
            max_days: None,
        };
        let now = 1_767_225_600_000; // 2026-01-01T00:00:00Z
        let w = window(&obj(json!({"days": 7})), &rules, "UTC", now).unwrap();
        assert_eq!(w.source, Source::Argument);
        assert_eq!(w.to.as_millisecond(), now);
        assert_eq!(w.from.unwrap().as_millisecond(), now - 7 * 86_400_000);
        let dated = window(
            &obj(json!({"from": "2025-12-01", "to": "2025-12-01", "timezone": "Europe/Warsaw"})),
            &rules,
            "UTC",
            now,
        )
        .unwrap();
        assert_eq!(
            dated.to.as_millisecond() - dated.from.unwrap().as_millisecond(),
            86_400_000
        );
        let defaulted = window(&obj(json!({})), &rules, "UTC", now).unwrap();
        assert_eq!(defaulted.source, Source::Default);
        for refused in [
            json!({"from": "2025-12-01", "days": 3}),
            json!({"days": 3, "weeks": 1}),
            json!({"season": "current", "days": 3}),
            json!({"timezone": "Mars/Base"}),
            json!({"from": "2026-01-02", "to": "2026-01-01"}),
        ] {
            let e = window(&obj(refused.clone()), &rules, "UTC", now).unwrap_err();
            assert_eq!(code(e), ErrorCode::BadRequest, "{refused}");
        }
        assert_eq!(
            season(&obj(json!({"season": 136}))).unwrap(),
            Some(SeasonArg::War(136))
        );
        assert_eq!(
            season(&obj(json!({"season": "previous"}))).unwrap(),
            Some(SeasonArg::Previous)
        );
        assert_eq!(
            code(season(&obj(json!({"season": 0}))).unwrap_err()),
            ErrorCode::BadRequest
        );
    }

    #[test]
    fn modes_default_to_all() {
        assert_eq!(mode(&obj(json!({}))).unwrap(), ModeFilter::All);
        assert_eq!(
            mode(&obj(json!({"mode": "river_race"}))).unwrap(),
            ModeFilter::RiverRace
        );
        assert_eq!(
            mode(&obj(json!({"mode": "2v2"}))).unwrap(),
            ModeFilter::Only(Mode::TwoVTwo)
        );
        assert_eq!(
            code(mode(&obj(json!({"mode": "ranked"}))).unwrap_err()),
            ErrorCode::BadRequest
        );
        let names = mode_params()[0].schema["enum"].as_array().unwrap().len();
        assert_eq!(names, ModeFilter::names().len());
    }

    #[test]
    fn cards_by_id_or_exact_name_with_candidates() {
        let catalogue = cards::normalize(
            include_str!("../../../elixir-record/tests/fixtures/cards.json").as_bytes(),
        )
        .unwrap();
        let by_id = card(&obj(json!({"card": 26_000_000})), "card", &catalogue).unwrap();
        assert_eq!(by_id.unwrap().name, "Knight");
        let by_name = card(&obj(json!({"card": " kNIGHT "})), "card", &catalogue).unwrap();
        assert_eq!(by_name.unwrap().id, 26_000_000);
        assert_eq!(card(&obj(json!({})), "card", &catalogue).unwrap(), None);
        let Fail::Tool(unknown) =
            card(&obj(json!({"card": 26_000_999})), "card", &catalogue).unwrap_err()
        else {
            panic!("not a tool error");
        };
        assert_eq!(unknown.code, ErrorCode::NotFound);
        assert!(!unknown.candidates.unwrap().is_empty());
        let Fail::Tool(partial) =
            card(&obj(json!({"card": "Kni"})), "card", &catalogue).unwrap_err()
        else {
            panic!("not a tool error");
        };
        assert_eq!(partial.candidates.unwrap()[0]["name"], "Knight");
    }
}
