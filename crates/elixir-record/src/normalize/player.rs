//! `/players/{tag}` read into a [`PlayerProfile`] (SURFACE §2.3 players_profile and
//! players_collection): identity, trophies, the Path of Legend results, the counters, the
//! current deck (a snapshot, hashed per §6.2), the favourite card, and the collection with
//! in-game levels (§6.4) and the forms owned (`evolutionLevel` as a bit field: 1 evolution,
//! 2 hero, 3 both). This file owns the endpoint's DTOs; what a tool shows of the profile is
//! the service's.

use serde::{Deserialize, Serialize};

use super::{Rejected, entries, or_default, read_each};
use crate::battle::{Arena, BattleCard, Form};
use crate::cards::{CardKind, Rarity};
use crate::ids;
use crate::tag::Tag;

/// A player's profile as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    /// The normalized tag.
    pub tag: Tag,
    /// The in-game name.
    pub name: String,
    /// Upstream `kingTowerLevel`, else `expLevel` (accounts from before the 2026 field).
    pub king_tower_level: Option<i64>,
    /// Current trophies.
    pub trophies: Option<i64>,
    /// Best trophies ever.
    pub best_trophies: Option<i64>,
    /// The current arena.
    pub arena: Option<Arena>,
    /// The player's clan and role in it; `None` when clanless.
    pub clan: Option<ProfileClan>,
    /// Path of Legend results.
    pub path_of_legend: PathOfLegend,
    /// Lifetime wins.
    pub wins: Option<i64>,
    /// Lifetime losses.
    pub losses: Option<i64>,
    /// Upstream `battleCount` (the §7.4 gap rule reads it).
    pub battle_count: Option<i64>,
    /// Lifetime three-crown wins.
    pub three_crown_wins: Option<i64>,
    /// War day wins.
    pub war_day_wins: Option<i64>,
    /// Donations.
    pub donations: Donations,
    /// Upstream `collectionLevel`.
    pub collection_level: Option<i64>,
    /// Star points.
    pub star_points: Option<i64>,
    /// Upstream `currentWinLoseStreak` when it is sent (positive wins, negative losses).
    pub current_streak: Option<i64>,
    /// The deck the profile shows (a snapshot: it may be stale); `None` when none is sent.
    pub current_deck: Option<CurrentDeck>,
    /// Upstream `currentFavouriteCard`.
    pub favourite_card: Option<FavouriteCard>,
    /// The collection's cards, in upstream order.
    pub cards: Vec<CollectionCard>,
    /// The tower troops owned (upstream `supportCards`).
    pub tower_troops: Vec<CollectionCard>,
}

/// A profile's clan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileClan {
    /// The clan's normalized tag.
    pub tag: Tag,
    /// Its name.
    pub name: String,
    /// The player's role verbatim (`member`, `elder`, `coLeader`, `leader`, …).
    pub role: Option<String>,
}

/// One Path of Legend season result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueResult {
    /// The league reached.
    pub league_number: Option<i64>,
    /// Trophies in it.
    pub trophies: Option<i64>,
    /// The rank, when ranked.
    pub rank: Option<i64>,
}

/// The three Path of Legend results; each `None` when upstream sends none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PathOfLegend {
    /// This season's.
    pub current: Option<LeagueResult>,
    /// Last season's.
    pub last: Option<LeagueResult>,
    /// The best season's.
    pub best: Option<LeagueResult>,
}

/// Donation counters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Donations {
    /// Given this week (upstream `donations`).
    pub given: Option<i64>,
    /// Received this week.
    pub received: Option<i64>,
    /// Given in total (upstream `totalDonations`).
    pub total: Option<i64>,
}

/// The profile's current deck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrentDeck {
    /// Its hash (§6.2), with the forms equipped.
    pub deck_hash: Option<String>,
    /// Its cards, in-game levels and forms.
    pub cards: Vec<BattleCard>,
    /// Its tower troop (upstream `currentDeckSupportCards[0]`).
    pub tower_troop: Option<BattleCard>,
    /// Always true: a profile's deck is what it showed when read, not a battle played.
    pub snapshot: bool,
}

/// The favourite card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FavouriteCard {
    /// The card id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its elixir cost.
    pub elixir: Option<i64>,
}

/// One card (or tower troop) of a collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionCard {
    /// The card id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The rarity as upstream spells it (kept verbatim when unknown).
    pub rarity: String,
    /// The kind from the id prefix; `None` for an unknown prefix.
    pub kind: Option<CardKind>,
    /// In-game level (API level + rarity offset); `None` when the rarity is unknown.
    pub level: Option<i64>,
    /// In-game maximum level; `None` when the rarity is unknown.
    pub max_level: Option<i64>,
    /// Star level; `None` when upstream sends none.
    pub star_level: Option<i64>,
    /// Cards held toward the next level.
    pub count: Option<i64>,
    /// The forms owned, from the `evolutionLevel` bit field (1 evolution, 2 hero, 3 both).
    pub forms_unlocked: Vec<Form>,
    /// The elixir cost; `None` for tower troops and Mirror.
    pub elixir: Option<i64>,
}

/// Why a `/players/{tag}` payload cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlayerError {
    /// Not the expected JSON (or missing the tag).
    #[error("the player profile is not the expected JSON: {0}")]
    Shape(String),
    /// The player's (or their clan's) tag fails §6.1.
    #[error("{what} tag {tag:?} is not a valid tag")]
    Tag {
        /// `player` or `clan`.
        what: &'static str,
        /// As sent.
        tag: String,
    },
}

/// Why one card of a profile's lists was left out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{list}[{index}] is not a card: {message}")]
pub struct CardEntryError {
    /// The upstream list: `cards`, `supportCards`, `currentDeck` or `currentDeckSupportCards`.
    pub list: &'static str,
    /// Its position in that list.
    pub index: usize,
    /// The reader's message.
    pub message: String,
}

/// A profile read, with the card entries that could not be.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerRead {
    /// The profile.
    pub profile: PlayerProfile,
    /// Card entries left out, across the four card lists.
    pub rejected: Vec<Rejected<CardEntryError>>,
}

mod dto {
    use serde::Deserialize;

    use super::or_default;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Player {
        pub tag: String,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub king_tower_level: Option<i64>,
        pub exp_level: Option<i64>,
        pub trophies: Option<i64>,
        pub best_trophies: Option<i64>,
        pub arena: Option<Named>,
        pub clan: Option<Clan>,
        pub role: Option<String>,
        pub wins: Option<i64>,
        pub losses: Option<i64>,
        pub battle_count: Option<i64>,
        pub three_crown_wins: Option<i64>,
        pub war_day_wins: Option<i64>,
        pub donations: Option<i64>,
        pub donations_received: Option<i64>,
        pub total_donations: Option<i64>,
        pub collection_level: Option<i64>,
        pub star_points: Option<i64>,
        pub current_win_lose_streak: Option<i64>,
        pub current_favourite_card: Option<Favourite>,
        pub current_path_of_legend_season_result: Option<League>,
        pub last_path_of_legend_season_result: Option<League>,
        pub best_path_of_legend_season_result: Option<League>,
    }

    #[derive(Debug, Deserialize)]
    pub struct Named {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
    }

    #[derive(Debug, Deserialize)]
    pub struct Clan {
        pub tag: String,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct League {
        pub league_number: Option<i64>,
        pub trophies: Option<i64>,
        pub rank: Option<i64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Favourite {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub elixir_cost: Option<i64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Card {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub level: Option<i64>,
        pub max_level: Option<i64>,
        pub star_level: Option<i64>,
        pub evolution_level: Option<i64>,
        #[serde(default, deserialize_with = "or_default")]
        pub rarity: String,
        pub count: Option<i64>,
        pub elixir_cost: Option<i64>,
    }
}

/// The forms a collection's `evolutionLevel` bit field says are owned.
pub fn forms_owned(bits: Option<i64>) -> Vec<Form> {
    let bits = bits.unwrap_or(0);
    let mut forms = Vec::new();
    if bits & 1 != 0 {
        forms.push(Form::Evolution);
    }
    if bits & 2 != 0 {
        forms.push(Form::Hero);
    }
    forms
}

/// Reads one upstream card list entry by entry, setting aside the ones that cannot be read.
fn card_list(
    value: Option<serde_json::Value>,
    list: &'static str,
    rejected: &mut Vec<Rejected<CardEntryError>>,
) -> Vec<dto::Card> {
    let items = match value {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(value) => match entries(value, None) {
            Ok(items) => items,
            Err(message) => {
                rejected.push(Rejected {
                    index: 0,
                    error: CardEntryError {
                        list,
                        index: 0,
                        message,
                    },
                });
                Vec::new()
            }
        },
    };
    let (cards, refused) = read_each(items, serde_json::from_value::<dto::Card>);
    rejected.extend(refused.into_iter().map(|r| Rejected {
        index: r.index,
        error: CardEntryError {
            list,
            index: r.index,
            message: r.error.to_string(),
        },
    }));
    cards
}

fn collection_card(c: dto::Card) -> CollectionCard {
    let rarity = Rarity::parse(&c.rarity);
    let in_game = |level: Option<i64>| level.zip(rarity).map(|(l, r)| r.in_game_level(l));
    CollectionCard {
        id: c.id,
        kind: CardKind::of_id(c.id),
        level: in_game(c.level),
        max_level: in_game(c.max_level),
        star_level: c.star_level,
        count: c.count,
        forms_unlocked: forms_owned(c.evolution_level),
        elixir: c.elixir_cost,
        name: c.name,
        rarity: c.rarity,
    }
}

fn deck_card(c: dto::Card) -> BattleCard {
    let rarity = Rarity::parse(&c.rarity);
    BattleCard {
        id: c.id,
        name: c.name,
        level: c.level.zip(rarity).map(|(l, r)| r.in_game_level(l)),
        evolution_level: c.evolution_level,
        form: Form::played(c.evolution_level),
        elixir: c.elixir_cost,
        used: None,
    }
}

fn league(l: dto::League) -> LeagueResult {
    LeagueResult {
        league_number: l.league_number,
        trophies: l.trophies,
        rank: l.rank,
    }
}

fn tag_of(what: &'static str, text: &str) -> Result<Tag, PlayerError> {
    Tag::parse(text).map_err(|_| PlayerError::Tag {
        what,
        tag: text.to_owned(),
    })
}

impl PlayerProfile {
    /// Reads a `/players/{tag}` payload. A card entry that cannot be read is set aside in
    /// [`PlayerRead::rejected`]; only a payload without a readable tag fails.
    pub fn from_upstream(payload: &[u8]) -> Result<PlayerRead, PlayerError> {
        let mut value: serde_json::Value =
            serde_json::from_slice(payload).map_err(|e| PlayerError::Shape(e.to_string()))?;
        let shape = super::kind(&value);
        let object = value
            .as_object_mut()
            .ok_or_else(|| PlayerError::Shape(format!("expected an object, got {shape}")))?;
        let mut rejected = Vec::new();
        let cards = card_list(object.remove("cards"), "cards", &mut rejected);
        let support = card_list(object.remove("supportCards"), "supportCards", &mut rejected);
        let deck = card_list(object.remove("currentDeck"), "currentDeck", &mut rejected);
        let deck_support = card_list(
            object.remove("currentDeckSupportCards"),
            "currentDeckSupportCards",
            &mut rejected,
        );
        let api: dto::Player =
            serde_json::from_value(value).map_err(|e| PlayerError::Shape(e.to_string()))?;
        let tag = tag_of("player", &api.tag)?;
        let clan = api
            .clan
            .map(|c| {
                Ok::<_, PlayerError>(ProfileClan {
                    tag: tag_of("clan", &c.tag)?,
                    name: c.name,
                    role: api.role.clone(),
                })
            })
            .transpose()?;
        let current_deck = (!deck.is_empty()).then(|| {
            let cards: Vec<BattleCard> = deck.into_iter().map(deck_card).collect();
            let tower_troop = deck_support.into_iter().next().map(deck_card);
            CurrentDeck {
                deck_hash: ids::deck_hash(
                    cards.iter().map(|c| (c.id, c.evolution_level)),
                    tower_troop.as_ref().map(|t| t.id),
                ),
                cards,
                tower_troop,
                snapshot: true,
            }
        });
        let profile = PlayerProfile {
            tag,
            name: api.name,
            king_tower_level: api.king_tower_level.or(api.exp_level),
            trophies: api.trophies,
            best_trophies: api.best_trophies,
            arena: api.arena.map(|a| Arena {
                id: a.id,
                name: a.name,
            }),
            clan,
            path_of_legend: PathOfLegend {
                current: api.current_path_of_legend_season_result.map(league),
                last: api.last_path_of_legend_season_result.map(league),
                best: api.best_path_of_legend_season_result.map(league),
            },
            wins: api.wins,
            losses: api.losses,
            battle_count: api.battle_count,
            three_crown_wins: api.three_crown_wins,
            war_day_wins: api.war_day_wins,
            donations: Donations {
                given: api.donations,
                received: api.donations_received,
                total: api.total_donations,
            },
            collection_level: api.collection_level,
            star_points: api.star_points,
            current_streak: api.current_win_lose_streak,
            current_deck,
            favourite_card: api.current_favourite_card.map(|f| FavouriteCard {
                id: f.id,
                name: f.name,
                elixir: f.elixir_cost,
            }),
            cards: cards.into_iter().map(collection_card).collect(),
            tower_troops: support.into_iter().map(collection_card).collect(),
        };
        Ok(PlayerRead { profile, rejected })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> Result<PlayerRead, PlayerError> {
        PlayerProfile::from_upstream(value.to_string().as_bytes())
    }

    #[test]
    fn forms_owned_read_the_bit_field() {
        assert_eq!(forms_owned(None), []);
        assert_eq!(forms_owned(Some(0)), []);
        assert_eq!(forms_owned(Some(1)), [Form::Evolution]);
        assert_eq!(forms_owned(Some(2)), [Form::Hero]);
        assert_eq!(forms_owned(Some(3)), [Form::Evolution, Form::Hero]);
    }

    #[test]
    fn a_bare_profile_is_all_unknowns() {
        let got = read(json!({"tag": "2qy8lrjc9", "name": "x"})).unwrap();
        let p = got.profile;
        assert_eq!(p.tag.as_str(), "#2QY8LRJC9");
        assert_eq!(
            (
                p.king_tower_level,
                p.trophies,
                p.clan,
                p.current_deck,
                p.current_streak
            ),
            (None, None, None, None, None)
        );
        assert_eq!(p.path_of_legend, PathOfLegend::default());
        assert!(p.cards.is_empty() && got.rejected.is_empty());
        // expLevel stands in for an absent kingTowerLevel
        let old = read(json!({"tag": "#2QY8LRJC9", "expLevel": 14})).unwrap();
        assert_eq!(old.profile.king_tower_level, Some(14));
    }

    #[test]
    fn unreadable_profiles_say_why() {
        assert_eq!(
            read(json!([])).unwrap_err().to_string(),
            "the player profile is not the expected JSON: expected an object, got a list"
        );
        assert!(
            matches!(read(json!({"name": "x"})), Err(PlayerError::Shape(m)) if m.contains("tag"))
        );
        assert_eq!(
            read(json!({"tag": "#BAD!"})),
            Err(PlayerError::Tag {
                what: "player",
                tag: "#BAD!".into()
            })
        );
        assert_eq!(
            read(json!({"tag": "#2QY8LRJC9", "clan": {"tag": "nope!"}})),
            Err(PlayerError::Tag {
                what: "clan",
                tag: "nope!".into()
            })
        );
    }

    #[test]
    fn one_odd_card_is_set_aside() {
        let got = read(json!({
            "tag": "#2QY8LRJC9",
            "cards": [
                {"id": 26000000, "name": "Knight", "level": 15, "maxLevel": 16, "rarity": "common"},
                {"name": "no id"},
                {"id": 26000999, "name": "New", "level": 3, "maxLevel": 5, "rarity": "mythic"},
            ],
            "supportCards": 7,
        }))
        .unwrap();
        assert_eq!(got.profile.cards.len(), 2);
        let mythic = &got.profile.cards[1];
        // an unknown rarity is kept verbatim, and its levels are unknown
        assert_eq!(
            (mythic.rarity.as_str(), mythic.level, mythic.max_level),
            ("mythic", None, None)
        );
        let errors: Vec<String> = got.rejected.iter().map(|r| r.error.to_string()).collect();
        assert_eq!(errors.len(), 2);
        assert!(
            errors[0].starts_with("cards[1] is not a card: missing field `id`"),
            "{errors:?}"
        );
        assert_eq!(
            errors[1],
            "supportCards[0] is not a card: expected a list, got a number"
        );
    }
}
