//! The card catalogue the world draws from: the shared `cards.json` fixture plus every other
//! card the shared battle log and profile fixtures show, with rarity, the API's level scale
//! and forms. It owns the card constants; the rarities and their level offsets are
//! elixir-record's; what a player owns and plays lives in `world`.

use serde_json::{Map, Value, json};

use crate::WorldError;

const CARDS_JSON: &str = include_str!("../fixtures/cards.json");
const BATTLELOG_JSON: &str = include_str!("../fixtures/battlelog.json");
const PLAYER_JSON: &str = include_str!("../fixtures/player.json");

/// A card's rarity: the record's type (elixir-record), so the fake and Elixir name the five
/// rarities and their level offsets once.
pub use elixir_record::cards::Rarity;

/// The in-game level cap (post "Level 16"): a card at its rarity's API `maxLevel` is at it.
const LEVEL_CAP: i64 = 16;

/// The API `maxLevel` of `rarity`: the in-game cap less the rarity's level offset (SURFACE
/// §6.4), so 16 common … 6 champion.
pub fn api_max_level(rarity: Rarity) -> u8 {
    u8::try_from(LEVEL_CAP - rarity.level_offset()).unwrap_or(1)
}

/// One card of the catalogue.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// The game constant id (26… troop, 27… building, 28… spell, 159… tower troop).
    pub id: u32,
    /// The English name.
    pub name: String,
    /// Rarity (fixes `maxLevel`).
    pub rarity: Rarity,
    /// The forms the card has, as the API's bit field (1 evolution, 2 hero, 3 both); `None`
    /// when it has neither (the field is then absent on the wire).
    pub max_evolution_level: Option<u8>,
    /// Elixir cost; `None` for Mirror and tower troops (absent on the wire).
    pub elixir_cost: Option<u8>,
    /// The `iconUrls` object exactly as the fixtures show it.
    pub icon_urls: Value,
}

impl Card {
    /// Whether the card is a tower troop (id prefix 159).
    pub fn is_tower_troop(&self) -> bool {
        self.id / 1_000_000 == 159
    }

    /// The card as `/cards` lists it.
    pub fn catalog_json(&self) -> Value {
        let mut card = self.base_json();
        if let Some(cost) = self.elixir_cost {
            card.insert("elixirCost".into(), json!(cost));
        }
        Value::Object(card)
    }

    /// The card as a battle participant's `cards[]` or a profile's `currentDeck` shows it:
    /// rarity-relative `level`, and `evolutionLevel` = the form played (absent when none).
    pub fn played_json(&self, level: u8, form: u8) -> Value {
        let mut card = self.base_json();
        card.insert("level".into(), json!(level));
        if form != 0 {
            card.insert("evolutionLevel".into(), json!(form));
        }
        if let Some(cost) = self.elixir_cost {
            card.insert("elixirCost".into(), json!(cost));
        }
        Value::Object(card)
    }

    /// A tower troop as `supportCards` shows it in battles and `currentDeckSupportCards`.
    pub fn support_json(&self, level: u8) -> Value {
        let mut card = self.base_json();
        card.insert("level".into(), json!(level));
        Value::Object(card)
    }

    /// The fields every rendering shares: name, id, maxLevel, maxEvolutionLevel?, rarity,
    /// iconUrls.
    fn base_json(&self) -> Map<String, Value> {
        let mut card = Map::new();
        card.insert("name".into(), json!(self.name));
        card.insert("id".into(), json!(self.id));
        card.insert("maxLevel".into(), json!(api_max_level(self.rarity)));
        if let Some(forms) = self.max_evolution_level {
            card.insert("maxEvolutionLevel".into(), json!(forms));
        }
        card.insert("rarity".into(), json!(self.rarity.as_str()));
        card.insert("iconUrls".into(), self.icon_urls.clone());
        card
    }
}

/// The catalogue: playable cards (`items`) and tower troops (`supportItems`).
#[derive(Debug, Clone)]
pub struct Catalog {
    cards: Vec<Card>,
    support: Vec<Card>,
}

impl Catalog {
    /// Builds the catalogue from the embedded fixtures: `cards.json` first (in its order),
    /// then the cards only the battle log and profile fixtures show, by id.
    pub fn load() -> Result<Catalog, WorldError> {
        let listed: Value = parse(CARDS_JSON, "cards.json")?;
        let mut cards = Vec::new();
        let mut support = Vec::new();
        for (key, into) in [("items", &mut cards), ("supportItems", &mut support)] {
            let items = listed
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| WorldError::Fixture(format!("cards.json has no `{key}` array")))?;
            for item in items {
                into.push(card_from(item, "cards.json")?);
            }
        }
        cards.retain(|card| !card.is_tower_troop());
        let mut extra: Vec<Card> = Vec::new();
        for (text, name) in [
            (BATTLELOG_JSON, "battlelog.json"),
            (PLAYER_JSON, "player.json"),
        ] {
            let value: Value = parse(text, name)?;
            collect_cards(&value, name, &mut extra)?;
        }
        extra.sort_by_key(|card| card.id);
        for card in extra {
            let known = cards.iter().chain(support.iter()).any(|c| c.id == card.id);
            if !known {
                if card.is_tower_troop() {
                    support.push(card);
                } else {
                    cards.push(card);
                }
            }
        }
        Ok(Catalog { cards, support })
    }

    /// Playable cards (no tower troops), in catalogue order.
    pub fn cards(&self) -> &[Card] {
        &self.cards
    }

    /// Tower troops; index 0 is Tower Princess, which every player owns.
    pub fn tower_troops(&self) -> &[Card] {
        &self.support
    }

    /// A playable card by catalogue index.
    pub fn card(&self, index: u16) -> Option<&Card> {
        self.cards.get(usize::from(index))
    }

    /// A tower troop by catalogue index.
    pub fn tower_troop(&self, index: u16) -> Option<&Card> {
        self.support.get(usize::from(index))
    }

    /// The `/cards` body: `{items, supportItems}`.
    pub fn cards_json(&self) -> Value {
        json!({
            "items": self.cards.iter().map(Card::catalog_json).collect::<Vec<_>>(),
            "supportItems": self.support.iter().map(Card::support_catalog_json).collect::<Vec<_>>(),
        })
    }
}

impl Card {
    fn support_catalog_json(&self) -> Value {
        Value::Object(self.base_json())
    }
}

fn parse(text: &str, name: &str) -> Result<Value, WorldError> {
    serde_json::from_str(text).map_err(|e| WorldError::Fixture(format!("{name}: {e}")))
}

fn card_from(item: &Value, source: &str) -> Result<Card, WorldError> {
    let bad = |what: &str| WorldError::Fixture(format!("{source}: a card without {what}: {item}"));
    let id = item
        .get("id")
        .and_then(Value::as_u64)
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| bad("a numeric id"))?;
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("a name"))?;
    let rarity = item
        .get("rarity")
        .and_then(Value::as_str)
        .and_then(Rarity::parse)
        .ok_or_else(|| bad("a known rarity"))?;
    let small = |key: &str| {
        item.get(key)
            .and_then(Value::as_u64)
            .and_then(|v| u8::try_from(v).ok())
    };
    let icon_urls = item
        .get("iconUrls")
        .cloned()
        .ok_or_else(|| bad("iconUrls"))?;
    Ok(Card {
        id,
        name: name.to_owned(),
        rarity,
        max_evolution_level: small("maxEvolutionLevel"),
        elixir_cost: small("elixirCost"),
        icon_urls,
    })
}

/// Every object that looks like a card (`id`, `rarity`, `maxLevel`, `iconUrls`), anywhere in
/// a fixture.
fn collect_cards(value: &Value, source: &str, into: &mut Vec<Card>) -> Result<(), WorldError> {
    match value {
        Value::Object(map) => {
            let is_card = ["id", "rarity", "maxLevel", "iconUrls"]
                .iter()
                .all(|key| map.contains_key(*key));
            if is_card {
                let card = card_from(value, source)?;
                if !into.iter().any(|c| c.id == card.id) {
                    into.push(card);
                }
            }
            for child in map.values() {
                collect_cards(child, source, into)?;
            }
        }
        Value::Array(items) => {
            for child in items {
                collect_cards(child, source, into)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_holds_every_fixture_card_with_its_rarity_scale() {
        let catalog = Catalog::load().unwrap();
        assert_eq!(catalog.cards().len(), 34);
        assert_eq!(catalog.tower_troops().len(), 4);
        assert_eq!(catalog.tower_troops()[0].name, "Tower Princess");
        let mirror = catalog.cards().iter().find(|c| c.name == "Mirror").unwrap();
        assert_eq!(mirror.elixir_cost, None);
        assert!(mirror.catalog_json().get("elixirCost").is_none());
        let queen = catalog
            .cards()
            .iter()
            .find(|c| c.name == "Archer Queen")
            .unwrap();
        assert_eq!(api_max_level(queen.rarity), 6);
        assert_eq!(queen.rarity.level_offset(), 10);
        let knight = catalog.card(0).unwrap();
        assert_eq!(knight.max_evolution_level, Some(3));
        assert_eq!(knight.played_json(15, 2)["evolutionLevel"], 2);
        assert!(knight.played_json(15, 0).get("evolutionLevel").is_none());
    }

    #[test]
    fn the_cards_body_repeats_the_fixture_entries_verbatim() {
        let catalog = Catalog::load().unwrap();
        let fixture: Value = serde_json::from_str(CARDS_JSON).unwrap();
        let body = catalog.cards_json();
        for (key, len) in [("items", 12), ("supportItems", 4)] {
            let want = fixture[key].as_array().unwrap();
            assert_eq!(&body[key].as_array().unwrap()[..len], &want[..]);
        }
    }
}
