//! `/players/{tag}/battlelog` (a bare array of battles) read into [`Battle`]s (SURFACE §2.4,
//! §6.2–6.5): this file owns the upstream DTOs and every normalization of a battle — the
//! instant, tags, in-game levels, played forms, deck hashes (duel rounds apart, boat
//! defence lists unhashed, war decks ending `|0`), towers, a duel's summed crowns and last
//! round's towers, and the boat report. The outcome rule and the views over a battle are
//! `battle`'s.

use serde::Deserialize;

use super::{Rejected, entries, or_default, present, read_each};
use crate::battle::{
    Arena, Battle, BattleCard, BattleError, Boat, Form, GameMode, Mode, Participant,
    ParticipantClan, Round, Side,
};
use crate::cards::Rarity;
use crate::ids::{self, BattleClass};
use crate::tag::Tag;
use crate::time::parse_battle_time;

/// A whole battle log: the battles read, and beside them the entries that could not be.
#[derive(Debug, Clone, PartialEq)]
pub struct BattleLog {
    /// The battles, in upstream order (newest first).
    pub battles: Vec<Battle>,
    /// The entries refused, by position.
    pub rejected: Vec<Rejected<BattleError>>,
}

/// The upstream DTOs: what this module reads of a battle log entry. Everything optional is
/// `Option` or defaults, so an absent field is `None`; unknown fields are ignored.
mod dto {
    use serde::Deserialize;

    use super::{or_default, present};

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Battle {
        #[serde(rename = "type", default, deserialize_with = "or_default")]
        pub battle_type: String,
        pub battle_time: String,
        pub arena: Option<Named>,
        pub game_mode: Option<Named>,
        pub deck_selection: Option<String>,
        pub league_number: Option<i64>,
        pub boat_battle_side: Option<String>,
        pub boat_battle_won: Option<bool>,
        pub new_towers_destroyed: Option<i64>,
        pub prev_towers_destroyed: Option<i64>,
        pub remaining_towers: Option<i64>,
        #[serde(default, deserialize_with = "or_default")]
        pub team: Vec<Participant>,
        #[serde(default, deserialize_with = "or_default")]
        pub opponent: Vec<Participant>,
    }

    #[derive(Debug, Deserialize)]
    pub struct Named {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Clan {
        pub tag: String,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub badge_id: Option<i64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Participant {
        pub tag: Option<String>,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub clan: Option<Clan>,
        pub crowns: Option<i64>,
        pub king_tower_hit_points: Option<i64>,
        #[serde(default, deserialize_with = "present")]
        pub princess_towers_hit_points: Option<Option<Vec<i64>>>,
        pub elixir_leaked: Option<f64>,
        pub starting_trophies: Option<i64>,
        pub trophy_change: Option<i64>,
        #[serde(default, deserialize_with = "or_default")]
        pub cards: Vec<Card>,
        #[serde(default, deserialize_with = "or_default")]
        pub support_cards: Vec<Card>,
        #[serde(default, deserialize_with = "or_default")]
        pub rounds: Vec<Round>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Round {
        pub crowns: Option<i64>,
        pub king_tower_hit_points: Option<i64>,
        #[serde(default, deserialize_with = "present")]
        pub princess_towers_hit_points: Option<Option<Vec<i64>>>,
        pub elixir_leaked: Option<f64>,
        #[serde(default, deserialize_with = "or_default")]
        pub cards: Vec<Card>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Card {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub level: Option<i64>,
        pub evolution_level: Option<i64>,
        pub rarity: Option<String>,
        pub elixir_cost: Option<i64>,
        pub used: Option<bool>,
    }
}

/// The princess towers as the record keeps them (§6.5), from upstream
/// `princessTowersHitPoints`: `None` (absent) stays unknown; `Some(None)` (upstream `null`,
/// every princess tower destroyed) is `[0,0]`; a list keeps its surviving towers (hit points
/// above 0) in upstream order, then 0 for each destroyed one, to length 2.
pub fn princess_towers(upstream: Option<Option<&[i64]>>) -> Option<[i64; 2]> {
    let list = upstream?;
    let mut towers = [0, 0];
    for (slot, hp) in towers
        .iter_mut()
        .zip(list.unwrap_or_default().iter().filter(|hp| **hp > 0))
    {
        *slot = *hp;
    }
    Some(towers)
}

fn card(c: dto::Card) -> BattleCard {
    let rarity = c.rarity.as_deref().and_then(Rarity::parse);
    BattleCard {
        id: c.id,
        name: c.name,
        level: c.level.zip(rarity).map(|(l, r)| r.in_game_level(l)),
        evolution_level: c.evolution_level,
        form: Form::played(c.evolution_level),
        elixir: c.elixir_cost,
        used: c.used,
    }
}

fn hash_of(cards: &[BattleCard], tower_troop: Option<&BattleCard>) -> Option<String> {
    ids::deck_hash(
        cards.iter().map(|c| (c.id, c.evolution_level)),
        tower_troop.map(|t| t.id),
    )
}

fn tag_of(what: &'static str, text: &str) -> Result<Tag, BattleError> {
    Tag::parse(text).map_err(|_| BattleError::Tag {
        what,
        tag: text.to_owned(),
    })
}

fn participant(
    p: dto::Participant,
    side: Side,
    defends_boat: bool,
) -> Result<Participant, BattleError> {
    let tag = p
        .tag
        .as_deref()
        .map(|t| tag_of("participant", t))
        .transpose()?;
    let clan = p
        .clan
        .map(|c| {
            Ok::<_, BattleError>(ParticipantClan {
                tag: tag_of("clan", &c.tag)?,
                name: c.name,
                badge_id: c.badge_id,
            })
        })
        .transpose()?;
    let tower_troop = p.support_cards.into_iter().next().map(card);
    let rounds: Vec<Round> = p
        .rounds
        .into_iter()
        .map(|r| {
            let cards: Vec<BattleCard> = r.cards.into_iter().map(card).collect();
            Round {
                crowns: r.crowns,
                king_tower_hp: r.king_tower_hit_points,
                princess_towers_hp: princess_towers(
                    r.princess_towers_hit_points.as_ref().map(|o| o.as_deref()),
                ),
                elixir_leaked: r.elixir_leaked,
                deck_hash: hash_of(&cards, tower_troop.as_ref()),
                cards,
            }
        })
        .collect();
    let cards: Vec<BattleCard> = p.cards.into_iter().map(card).collect();
    let (cards, defence_cards) = if defends_boat {
        (Vec::new(), cards)
    } else {
        (cards, Vec::new())
    };
    let mut crowns = p.crowns;
    let mut king_tower_hp = p.king_tower_hit_points;
    let mut princess_towers_hp =
        princess_towers(p.princess_towers_hit_points.as_ref().map(|o| o.as_deref()));
    let deck_hash = match rounds.last() {
        None => hash_of(&cards, tower_troop.as_ref()),
        Some(last) => {
            // a duel: crowns are the rounds' sum, towers the last round's (§6.5)
            if let Some(sum) = rounds.iter().map(|r| r.crowns).sum::<Option<i64>>() {
                crowns = Some(sum);
            }
            king_tower_hp = last.king_tower_hp.or(king_tower_hp);
            princess_towers_hp = last.princess_towers_hp.or(princess_towers_hp);
            None
        }
    };
    Ok(Participant {
        side,
        tag,
        name: p.name,
        clan,
        crowns,
        king_tower_hp,
        princess_towers_hp,
        elixir_leaked: p.elixir_leaked,
        starting_trophies: p.starting_trophies,
        trophy_change: p.trophy_change,
        deck_hash,
        tower_troop,
        cards,
        defence_cards,
        rounds,
    })
}

impl Battle {
    /// Reads one entry of upstream `/players/{tag}/battlelog`: the instant, normalized tags,
    /// the mode, arena, clans, towers, in-game levels, played forms, every deck hash, duel
    /// rounds, the boat report and the `battle_id`.
    pub fn from_upstream(entry: &serde_json::Value) -> Result<Battle, BattleError> {
        let api: dto::Battle = Deserialize::deserialize(entry)
            .map_err(|e: serde_json::Error| BattleError::Shape(e.to_string()))?;
        let battle_time =
            parse_battle_time(&api.battle_time).ok_or(BattleError::Time(api.battle_time))?;
        let per_side = api.team.len().max(api.opponent.len());
        let mode = Mode::of_upstream(&api.battle_type, per_side);
        let is_boat = mode == Mode::Boat;
        let team_defends = api.boat_battle_side.as_deref() == Some("defender");
        let team = api
            .team
            .into_iter()
            .map(|p| participant(p, Side::Team, is_boat && team_defends))
            .collect::<Result<Vec<_>, _>>()?;
        let opponent = api
            .opponent
            .into_iter()
            .map(|p| participant(p, Side::Opponent, is_boat && !team_defends))
            .collect::<Result<Vec<_>, _>>()?;
        let battle_id = ids::battle_id(
            battle_time,
            team.iter().chain(&opponent).filter_map(|p| p.tag.as_ref()),
            BattleClass::of_type(&api.battle_type),
        );
        let boat = is_boat.then_some(Boat {
            side: api.boat_battle_side,
            won: api.boat_battle_won,
            new_towers_destroyed: api.new_towers_destroyed,
            prev_towers_destroyed: api.prev_towers_destroyed,
            remaining_towers: api.remaining_towers,
        });
        let named = |n: dto::Named| (n.id, n.name);
        Ok(Battle {
            battle_id,
            battle_time,
            battle_type: api.battle_type,
            mode,
            arena: api.arena.map(named).map(|(id, name)| Arena { id, name }),
            game_mode: api
                .game_mode
                .map(named)
                .map(|(id, name)| GameMode { id, name }),
            deck_selection: api.deck_selection,
            league_number: api.league_number,
            boat,
            team,
            opponent,
        })
    }

    /// Reads a whole `/players/{tag}/battlelog` payload (a bare array). An entry that cannot
    /// be read is refused beside the others; only a payload that is not a JSON list fails.
    pub fn from_battlelog(payload: &[u8]) -> Result<BattleLog, BattleError> {
        let value: serde_json::Value =
            serde_json::from_slice(payload).map_err(|e| BattleError::Shape(e.to_string()))?;
        let list = entries(value, None).map_err(BattleError::Shape)?;
        let (battles, rejected) = read_each(&list, Battle::from_upstream);
        Ok(BattleLog { battles, rejected })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::battle::Outcome;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn princess_towers_keep_survivors_then_zeros() {
        let towers = |l: &[i64]| princess_towers(Some(Some(l)));
        assert_eq!(princess_towers(None), None);
        assert_eq!(princess_towers(Some(None)), Some([0, 0]));
        assert_eq!(towers(&[]), Some([0, 0]));
        assert_eq!(towers(&[2788]), Some([2788, 0]));
        assert_eq!(towers(&[3390, 1207]), Some([3390, 1207]));
        assert_eq!(towers(&[0, 2310]), Some([2310, 0]));
        assert_eq!(towers(&[0, 0]), Some([0, 0]));
        assert_eq!(towers(&[1, 2, 3]), Some([1, 2]));
        assert_eq!(towers(&[-5, 7]), Some([7, 0]));
    }

    proptest! {
        #![proptest_config(crate::prop_settings::config())]
        #[test]
        fn tower_lists_normalize_to_two_survivors_first(
            list in proptest::collection::vec(-10i64..10_000, 0..5)
        ) {
            let towers = princess_towers(Some(Some(&list))).unwrap();
            let survivors: Vec<i64> = list.iter().copied().filter(|hp| *hp > 0).collect();
            let alive = survivors.len().min(2);
            // the first `alive` slots are the first survivors, in order; the rest are 0
            prop_assert_eq!(&towers[..alive], &survivors[..alive]);
            prop_assert!(towers[alive..].iter().all(|hp| *hp == 0));
            prop_assert!(towers.iter().all(|hp| *hp >= 0));
            // idempotent: a normalized list reads as itself
            prop_assert_eq!(princess_towers(Some(Some(&towers))), Some(towers));
        }
    }

    #[test]
    fn unreadable_entries_are_refused() {
        let bad_time = json!({"type": "PvP", "battleTime": "2026-09-18T19:34:12Z"});
        assert_eq!(
            Battle::from_upstream(&bad_time),
            Err(BattleError::Time("2026-09-18T19:34:12Z".into()))
        );
        let no_time = Battle::from_upstream(&json!({"type": "PvP"})).unwrap_err();
        assert!(
            matches!(&no_time, BattleError::Shape(m) if m.contains("battleTime")),
            "{no_time}"
        );
        let bad_tag = json!({
            "type": "PvP", "battleTime": "20260918T193412.000Z",
            "team": [{"tag": "#NOPE!", "name": "a"}],
        });
        assert_eq!(
            Battle::from_upstream(&bad_tag),
            Err(BattleError::Tag {
                what: "participant",
                tag: "#NOPE!".into()
            })
        );
        let bad_clan = json!({
            "type": "PvP", "battleTime": "20260918T193412.000Z",
            "team": [{"tag": "#2QY8LRJC9", "clan": {"tag": "", "name": "x"}}],
        });
        assert_eq!(
            Battle::from_upstream(&bad_clan).unwrap_err().to_string(),
            "clan tag \"\" is not a valid tag"
        );
        assert_eq!(
            Battle::from_battlelog(b"{}"),
            Err(BattleError::Shape("expected a list, got an object".into()))
        );
        assert!(matches!(
            Battle::from_battlelog(b"[1,"),
            Err(BattleError::Shape(_))
        ));
    }

    #[test]
    fn one_odd_entry_is_refused_beside_the_good_ones() {
        let payload = json!([
            {"type": "PvP", "battleTime": "20260918T193412.000Z",
             "team": [{"tag": "#2QY8LRJC9", "crowns": 1}], "opponent": [{"crowns": 0}]},
            {"type": "PvP", "battleTime": "yesterday"},
            "not a battle",
            {"type": "someNewMode", "battleTime": "20260918T183412.000Z"},
        ]);
        let log = Battle::from_battlelog(payload.to_string().as_bytes()).unwrap();
        assert_eq!(log.battles.len(), 2);
        assert_eq!(log.battles[1].battle_type, "someNewMode");
        assert_eq!(log.battles[1].mode, Mode::Other);
        assert_eq!(
            log.rejected.iter().map(|r| r.index).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(log.rejected[0].error, BattleError::Time("yesterday".into()));
    }

    #[test]
    fn absent_fields_are_unknown_and_tagless_players_stay_out_of_the_id() {
        let entry = json!({
            "type": "PvP", "battleTime": "20260918T193412.000Z",
            "team": [{"tag": "#2QY8LRJC9", "name": "a", "crowns": 1, "cards": null}],
            "opponent": [{"name": "b", "crowns": 0}],
        });
        let battle = Battle::from_upstream(&entry).unwrap();
        let me = &battle.team[0];
        assert_eq!(
            (
                me.king_tower_hp,
                me.princess_towers_hp,
                me.elixir_leaked,
                me.clan.as_ref()
            ),
            (None, None, None, None)
        );
        assert_eq!((battle.arena.as_ref(), battle.boat.as_ref()), (None, None));
        assert_eq!(battle.opponent[0].tag, None);
        let tag = Tag::parse("#2QY8LRJC9").unwrap();
        assert_eq!(
            battle.battle_id,
            ids::battle_id(battle.battle_time, [&tag], BattleClass::Pvp)
        );
        assert_eq!(battle.outcome(Side::Team), Some(Outcome::Win));
        assert_eq!(battle.outcome_of(&tag), Some(Outcome::Win));
        assert_eq!(battle.team[0].deck_hash, None);
    }

    #[test]
    fn a_defending_team_keeps_its_defence_list_apart() {
        let cards: Vec<_> = (0..12)
            .map(|i| json!({"id": 26_000_000 + i, "level": 10, "rarity": "common", "evolutionLevel": 3}))
            .collect();
        let entry = json!({
            "type": "boatBattle", "battleTime": "20260917T204455.000Z",
            "boatBattleSide": "defender", "boatBattleWon": true,
            "team": [{"tag": "#2QY8LRJC9", "cards": cards}],
            "opponent": [{"tag": "#C0PJ9Y2R", "cards": [{"id": 26_000_000, "level": 10, "rarity": "common"}]}],
        });
        let battle = Battle::from_upstream(&entry).unwrap();
        let (me, them) = (&battle.team[0], &battle.opponent[0]);
        assert_eq!(
            (
                me.cards.len(),
                me.defence_cards.len(),
                me.deck_hash.as_ref()
            ),
            (0, 12, None)
        );
        assert!(them.deck_hash.is_some());
        let boat = battle.boat.as_ref().unwrap();
        assert_eq!(
            (boat.side.as_deref(), boat.won),
            (Some("defender"), Some(true))
        );
        assert_eq!(battle.outcome(Side::Team), Some(Outcome::Win));
        assert_eq!(battle.outcome(Side::Opponent), Some(Outcome::Loss));
    }
}
