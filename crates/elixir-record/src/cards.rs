//! The card catalogue's model (SURFACE §2.5 `cards_catalog`, §6.4): the Clash Royale API's
//! `/cards` payload (`items` and `supportItems`) normalized into cards and tower troops with
//! the in-game maximum level, the kind from the id prefix and the forms from the
//! `maxEvolutionLevel` bit field; the level arithmetic; and the catalogue's filters. Fetching,
//! storing and the tool's wire shape are the `elixir` service's.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// A card's rarity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Rarity {
    /// Common (level offset 0).
    Common,
    /// Rare (offset 2).
    Rare,
    /// Epic (offset 5).
    Epic,
    /// Legendary (offset 8).
    Legendary,
    /// Champion (offset 10).
    Champion,
}

impl Rarity {
    /// Every rarity, lowest first.
    pub const ALL: [Rarity; 5] = [
        Rarity::Common,
        Rarity::Rare,
        Rarity::Epic,
        Rarity::Legendary,
        Rarity::Champion,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Rarity::Common => "common",
            Rarity::Rare => "rare",
            Rarity::Epic => "epic",
            Rarity::Legendary => "legendary",
            Rarity::Champion => "champion",
        }
    }

    /// The API's spelling (lower case; `"Common"` is accepted too).
    pub fn parse(text: &str) -> Option<Rarity> {
        let lower = text.to_ascii_lowercase();
        Rarity::ALL.into_iter().find(|r| r.as_str() == lower)
    }

    /// What turns the API's rarity-relative level into the in-game level (§6.4). Never
    /// `level + (16 − maxLevel)`.
    pub fn level_offset(self) -> i64 {
        match self {
            Rarity::Common => 0,
            Rarity::Rare => 2,
            Rarity::Epic => 5,
            Rarity::Legendary => 8,
            Rarity::Champion => 10,
        }
    }

    /// The in-game level of a card (or tower troop) the API reports at the rarity-relative
    /// `api_level`.
    pub fn in_game_level(self, api_level: i64) -> i64 {
        api_level + self.level_offset()
    }
}

/// What a card is, read from its id prefix (§6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CardKind {
    /// Ids 26…
    Troop,
    /// Ids 27…
    Building,
    /// Ids 28…
    Spell,
    /// Ids 159…
    TowerTroop,
}

impl CardKind {
    /// Every kind, in id-prefix order.
    pub const ALL: [CardKind; 4] = [
        CardKind::Troop,
        CardKind::Building,
        CardKind::Spell,
        CardKind::TowerTroop,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CardKind::Troop => "troop",
            CardKind::Building => "building",
            CardKind::Spell => "spell",
            CardKind::TowerTroop => "tower_troop",
        }
    }

    /// Reads the wire name.
    pub fn parse(text: &str) -> Option<CardKind> {
        CardKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// 26… troop, 27… building, 28… spell, 159… tower troop (ids are prefix + six digits).
    pub fn of_id(id: i64) -> Option<CardKind> {
        match id.div_euclid(1_000_000) {
            26 => Some(CardKind::Troop),
            27 => Some(CardKind::Building),
            28 => Some(CardKind::Spell),
            159 => Some(CardKind::TowerTroop),
            _ => None,
        }
    }
}

/// Which special forms a card has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Forms {
    /// Has (or owns) the evolution.
    pub evolution: bool,
    /// Has (or owns) the hero form.
    pub hero: bool,
}

impl Forms {
    /// From the `maxEvolutionLevel` bit field: 1 evolution, 2 hero, 3 both; absent is neither.
    pub fn from_bits(bits: Option<i64>) -> Forms {
        let bits = bits.unwrap_or(0);
        Forms {
            evolution: bits & 1 != 0,
            hero: bits & 2 != 0,
        }
    }
}

/// One card or tower troop of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// The game's card id.
    pub id: i64,
    /// The English name.
    pub name: String,
    /// Its rarity.
    pub rarity: Rarity,
    /// Its kind, from the id prefix.
    pub kind: CardKind,
    /// The elixir cost; `None` when the API reports none (Mirror, tower troops).
    pub elixir: Option<i64>,
    /// The in-game maximum level: the API's `maxLevel` plus the rarity offset.
    pub max_level: i64,
    /// The special forms it has.
    pub forms: Forms,
    /// The API's `iconUrls`, keys in snake case (`medium`, `evolution_medium`, `hero_medium`).
    pub icon_urls: BTreeMap<String, String>,
}

/// The whole catalogue: cards and, apart, tower troops; each sorted by id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Catalogue {
    /// Troops, buildings and spells.
    pub cards: Vec<Card>,
    /// Tower troops.
    pub tower_troops: Vec<Card>,
}

/// Why a `/cards` payload was rejected. A rejected payload leaves the previous catalogue in
/// place; the raw payload is still archived, so it can be re-read once the rule is fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardsError {
    /// Not the expected JSON.
    #[error("the /cards payload is not the expected JSON: {0}")]
    Shape(String),
    /// A rarity the level rule does not know.
    #[error("card {id} ({name}) has an unknown rarity {rarity:?}")]
    UnknownRarity {
        /// The card's id.
        id: i64,
        /// The card's name.
        name: String,
        /// The rarity as sent.
        rarity: String,
    },
    /// An id outside the known prefixes.
    #[error("card {id} ({name}) has an id outside the known kinds (26, 27, 28, 159)")]
    UnknownKind {
        /// The card's id.
        id: i64,
        /// The card's name.
        name: String,
    },
    /// An id listed twice.
    #[error("card id {0} appears more than once")]
    Duplicate(i64),
}

/// The part of the API's `/cards` payload the catalogue reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiCards {
    items: Vec<ApiCard>,
    #[serde(default)]
    support_items: Vec<ApiCard>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiCard {
    id: i64,
    name: String,
    rarity: String,
    max_level: i64,
    max_evolution_level: Option<i64>,
    elixir_cost: Option<i64>,
    #[serde(default)]
    icon_urls: BTreeMap<String, String>,
}

/// `evolutionMedium` → `evolution_medium`.
fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Normalizes a `/cards` payload. Every entry of either list is placed by its kind, so a tower
/// troop is in `tower_troops` whichever list carried it. Any entry the rules cannot place
/// (unknown rarity or id prefix, a repeated id) rejects the whole payload rather than
/// serving a catalogue with a wrong level or kind.
pub fn normalize(payload: &[u8]) -> Result<Catalogue, CardsError> {
    let api: ApiCards =
        serde_json::from_slice(payload).map_err(|e| CardsError::Shape(e.to_string()))?;
    let mut seen = BTreeSet::new();
    let mut catalogue = Catalogue::default();
    for item in api.items.into_iter().chain(api.support_items) {
        if !seen.insert(item.id) {
            return Err(CardsError::Duplicate(item.id));
        }
        let Some(rarity) = Rarity::parse(&item.rarity) else {
            return Err(CardsError::UnknownRarity {
                id: item.id,
                name: item.name,
                rarity: item.rarity,
            });
        };
        let Some(kind) = CardKind::of_id(item.id) else {
            return Err(CardsError::UnknownKind {
                id: item.id,
                name: item.name,
            });
        };
        let card = Card {
            id: item.id,
            name: item.name,
            rarity,
            kind,
            elixir: item.elixir_cost,
            max_level: item.max_level + rarity.level_offset(),
            forms: Forms::from_bits(item.max_evolution_level),
            icon_urls: item
                .icon_urls
                .into_iter()
                .map(|(k, v)| (snake_case(&k), v))
                .collect(),
        };
        match kind {
            CardKind::TowerTroop => catalogue.tower_troops.push(card),
            _ => catalogue.cards.push(card),
        }
    }
    catalogue.cards.sort_by_key(|c| c.id);
    catalogue.tower_troops.sort_by_key(|c| c.id);
    Ok(catalogue)
}

/// The filters of `cards_catalog`; each `None` means no filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only these ids.
    pub ids: Option<Vec<i64>>,
    /// Matched case-insensitively against any part of the name.
    pub query: Option<String>,
    /// Only this rarity.
    pub rarity: Option<Rarity>,
    /// Only this kind.
    pub kind: Option<CardKind>,
}

/// What a filter kept, in catalogue order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection<'a> {
    /// The cards kept.
    pub cards: Vec<&'a Card>,
    /// The tower troops kept.
    pub tower_troops: Vec<&'a Card>,
}

impl Selection<'_> {
    /// Cards and tower troops kept.
    pub fn total(&self) -> usize {
        self.cards.len() + self.tower_troops.len()
    }
}

impl Catalogue {
    /// Every entry, cards first.
    pub fn all(&self) -> impl Iterator<Item = &Card> {
        self.cards.iter().chain(&self.tower_troops)
    }

    /// The entry with this id.
    pub fn get(&self, id: i64) -> Option<&Card> {
        self.all().find(|c| c.id == id)
    }

    /// The ids of `ids` the catalogue does not hold, each once, in the order asked.
    pub fn unknown_ids(&self, ids: &[i64]) -> Vec<i64> {
        let mut out: Vec<i64> = Vec::new();
        for id in ids {
            if self.get(*id).is_none() && !out.contains(id) {
                out.push(*id);
            }
        }
        out
    }

    /// Up to `max` entries whose ids are nearest to any of `unknown` (a mistyped digit lands
    /// next to the intended card), nearest first, ties by id.
    pub fn candidates(&self, unknown: &[i64], max: usize) -> Vec<&Card> {
        let mut scored: Vec<(i64, &Card)> = self
            .all()
            .filter_map(|c| {
                unknown
                    .iter()
                    .map(|u| c.id.abs_diff(*u))
                    .min()
                    .map(|d| (i64::try_from(d).unwrap_or(i64::MAX), c))
            })
            .collect();
        scored.sort_by_key(|(d, c)| (*d, c.id));
        scored.into_iter().take(max).map(|(_, c)| c).collect()
    }

    /// The entries every given filter keeps.
    pub fn select(&self, filter: &Filter) -> Selection<'_> {
        let query = filter.query.as_deref().map(str::to_lowercase);
        let keep = |c: &&Card| {
            filter.ids.as_ref().is_none_or(|ids| ids.contains(&c.id))
                && query
                    .as_deref()
                    .is_none_or(|q| c.name.to_lowercase().contains(q))
                && filter.rarity.is_none_or(|r| c.rarity == r)
                && filter.kind.is_none_or(|k| c.kind == k)
        };
        Selection {
            cards: self.cards.iter().filter(keep).collect(),
            tower_troops: self.tower_troops.iter().filter(keep).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/fixtures/cards.json");

    fn catalogue() -> Catalogue {
        normalize(FIXTURE.as_bytes()).unwrap()
    }

    #[test]
    fn the_fixture_normalizes_into_cards_and_tower_troops() {
        let c = catalogue();
        assert_eq!(c.cards.len(), 12);
        assert_eq!(c.tower_troops.len(), 4);
        let knight = c.get(26_000_000).unwrap();
        assert_eq!(
            knight,
            &Card {
                id: 26_000_000,
                name: "Knight".into(),
                rarity: Rarity::Common,
                kind: CardKind::Troop,
                elixir: Some(3),
                max_level: 16,
                forms: Forms {
                    evolution: true,
                    hero: true
                },
                icon_urls: [
                    ("medium", "https://api-assets.clashroyale.com/cards/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png"),
                    ("evolution_medium", "https://api-assets.clashroyale.com/cardevolutions/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png"),
                    ("hero_medium", "https://api-assets.clashroyale.com/cardheroes/300/j1R3aT35OBKpJyEGSGgyJGKAC-p8mdle6EmyAANpW2g.png"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            }
        );
        // sorted by id, tower troops apart
        let ids: Vec<i64> = c.cards.iter().map(|c| c.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
        assert!(
            c.tower_troops
                .iter()
                .all(|t| t.kind == CardKind::TowerTroop)
        );
        assert!(c.cards.iter().all(|t| t.kind != CardKind::TowerTroop));
    }

    #[test]
    fn max_level_is_in_game_for_every_rarity() {
        let c = catalogue();
        // the API's maxLevel per rarity: common 16, rare 14, epic 11, legendary 8, champion 6
        for (id, rarity) in [
            (26_000_000, Rarity::Common),
            (26_000_003, Rarity::Rare),
            (26_000_027, Rarity::Epic),
            (26_000_055, Rarity::Legendary),
            (26_000_072, Rarity::Champion),
            (159_000_001, Rarity::Epic),
            (159_000_002, Rarity::Legendary),
        ] {
            let card = c.get(id).unwrap();
            assert_eq!(card.rarity, rarity, "{id}");
            assert_eq!(card.max_level, 16, "{id}");
        }
    }

    #[test]
    fn forms_come_from_the_bit_field_and_absent_costs_stay_null() {
        let c = catalogue();
        let forms = |id| c.get(id).unwrap().forms;
        assert_eq!(
            forms(26_000_001),
            Forms {
                evolution: true,
                hero: false
            }
        ); // 1
        assert_eq!(
            forms(26_000_003),
            Forms {
                evolution: false,
                hero: true
            }
        ); // 2
        assert_eq!(
            forms(26_000_014),
            Forms {
                evolution: true,
                hero: true
            }
        ); // 3
        assert_eq!(forms(26_000_021), Forms::default()); // absent
        assert_eq!(Forms::from_bits(Some(0)), Forms::default());
        let mirror = c.get(28_000_006).unwrap();
        assert_eq!((mirror.name.as_str(), mirror.elixir), ("Mirror", None));
        assert_eq!(mirror.kind, CardKind::Spell);
        assert_eq!(c.get(27_000_000).unwrap().kind, CardKind::Building);
        assert_eq!(c.get(159_000_000).unwrap().elixir, None);
    }

    #[test]
    fn kinds_by_id_prefix() {
        assert_eq!(CardKind::of_id(26_000_099), Some(CardKind::Troop));
        assert_eq!(CardKind::of_id(27_000_001), Some(CardKind::Building));
        assert_eq!(CardKind::of_id(28_000_011), Some(CardKind::Spell));
        assert_eq!(CardKind::of_id(159_000_004), Some(CardKind::TowerTroop));
        assert_eq!(CardKind::of_id(25_999_999), None);
        assert_eq!(CardKind::of_id(-26_000_000), None);
        assert_eq!(Rarity::Champion.in_game_level(5), 15);
        assert_eq!(Rarity::Rare.in_game_level(13), 15);
        assert_eq!(snake_case("evolutionMedium"), "evolution_medium");
        assert_eq!(snake_case("medium"), "medium");
    }

    #[test]
    fn payloads_the_rules_cannot_place_are_rejected() {
        assert!(matches!(normalize(b"[]"), Err(CardsError::Shape(_))));
        assert!(matches!(normalize(b"not json"), Err(CardsError::Shape(_))));
        let card = |id: i64, rarity: &str| {
            format!(r#"{{"id":{id},"name":"X","rarity":"{rarity}","maxLevel":16}}"#)
        };
        assert_eq!(
            normalize(format!(r#"{{"items":[{}]}}"#, card(26_000_000, "mythic")).as_bytes()),
            Err(CardsError::UnknownRarity {
                id: 26_000_000,
                name: "X".into(),
                rarity: "mythic".into()
            })
        );
        assert_eq!(
            normalize(format!(r#"{{"items":[{}]}}"#, card(42_000_000, "common")).as_bytes()),
            Err(CardsError::UnknownKind {
                id: 42_000_000,
                name: "X".into()
            })
        );
        assert_eq!(
            normalize(
                format!(
                    r#"{{"items":[{}],"supportItems":[{}]}}"#,
                    card(26_000_000, "common"),
                    card(26_000_000, "common")
                )
                .as_bytes()
            ),
            Err(CardsError::Duplicate(26_000_000))
        );
        // supportItems may be absent; "Common" reads as common
        let one = normalize(format!(r#"{{"items":[{}]}}"#, card(26_000_000, "Common")).as_bytes())
            .unwrap();
        assert_eq!(one.cards[0].rarity, Rarity::Common);
        assert!(one.tower_troops.is_empty());
    }

    #[test]
    fn filters_combine_and_query_ignores_case() {
        let c = catalogue();
        let names = |f: Filter| -> Vec<String> {
            let s = c.select(&f);
            s.cards
                .iter()
                .chain(&s.tower_troops)
                .map(|c| c.name.clone())
                .collect()
        };
        assert_eq!(names(Filter::default()).len(), 16);
        assert_eq!(
            names(Filter {
                query: Some("KNI".into()),
                ..Filter::default()
            }),
            ["Knight", "Mega Knight"]
        );
        assert_eq!(
            names(Filter {
                rarity: Some(Rarity::Rare),
                ..Filter::default()
            }),
            ["Giant", "Musketeer", "Hog Rider"]
        );
        assert_eq!(
            names(Filter {
                kind: Some(CardKind::Spell),
                ..Filter::default()
            }),
            ["Mirror", "The Log"]
        );
        assert_eq!(
            names(Filter {
                rarity: Some(Rarity::Legendary),
                kind: Some(CardKind::TowerTroop),
                ..Filter::default()
            }),
            ["Dagger Duchess", "Royal Chef"]
        );
        assert_eq!(
            names(Filter {
                ids: Some(vec![159_000_000, 26_000_000]),
                ..Filter::default()
            }),
            ["Knight", "Tower Princess"]
        );
        let none = c.select(&Filter {
            query: Some("zzz".into()),
            ..Filter::default()
        });
        assert_eq!(none.total(), 0);
    }

    #[test]
    fn unknown_ids_and_their_candidates() {
        let c = catalogue();
        assert_eq!(
            c.unknown_ids(&[26_000_002, 26_000_000, 26_000_002, 1]),
            [26_000_002, 1]
        );
        let near: Vec<i64> = c
            .candidates(&[26_000_002], 3)
            .iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(near, [26_000_001, 26_000_003, 26_000_000]);
        assert!(c.candidates(&[], 3).is_empty());
    }

    #[test]
    fn the_catalogue_round_trips_through_json() {
        let c = catalogue();
        let text = serde_json::to_string(&c).unwrap();
        assert!(text.contains(r#""kind":"tower_troop""#));
        let back: Catalogue = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
