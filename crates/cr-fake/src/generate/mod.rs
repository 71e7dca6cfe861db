//! The deterministic generator: from a [`WorldConfig`] to players, clans, membership history,
//! name changes, clan moves (generated or scripted) and promotions; `battles` then draws every
//! battle and replays them in time order to set starting trophies and trophy changes.
//! Everything is drawn from ChaCha8 streams keyed by the seed and what is being drawn, so one
//! player's history does not shift when another's changes.

use std::collections::HashSet;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use crate::WorldError;
use crate::calendar::{DAY_MS, HOUR_MS};
use crate::catalog::Catalog;
use crate::world::{
    Activity, Clan, ClanMove, Deck, Membership, NameChange, OwnedCard, Player, Role, Script,
    Totals, World, WorldConfig,
};

mod battles;

pub(crate) use battles::ladder_deck;

/// The tag alphabet of the game.
pub const TAG_ALPHABET: &[u8] = b"0289PYLQGRJCUV";

/// A seeded stream of draws.
pub(crate) struct Dice(ChaCha8Rng);

impl Dice {
    /// The stream for `parts` under `seed`.
    pub(crate) fn new(seed: u64, parts: &[u64]) -> Dice {
        Dice(ChaCha8Rng::seed_from_u64(mix(seed, parts)))
    }

    /// A draw in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.0.next_u32()) * u64::from(n)) >> 32) as u32
    }

    /// A draw in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo + 1) as u64;
        lo + (self.0.next_u64() % span) as i64
    }

    /// True with probability `per_mille / 1000`.
    pub(crate) fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < per_mille
    }

    /// One item of a non-empty slice.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        let len = u32::try_from(items.len()).unwrap_or(u32::MAX);
        items.get(self.below(len) as usize)
    }

    /// A raw 32-bit draw.
    pub(crate) fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }

    /// Shuffles in place (Fisher–Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(u32::try_from(i + 1).unwrap_or(u32::MAX)) as usize;
            items.swap(i, j);
        }
    }
}

/// SplitMix64 over the seed and the parts: independent streams per purpose.
pub(crate) fn mix(seed: u64, parts: &[u64]) -> u64 {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    for part in parts {
        state = splitmix(state ^ part.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    }
    splitmix(state)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A fresh tag of 8 or 9 characters that is not in `taken`.
pub(crate) fn fresh_tag(dice: &mut Dice, taken: &mut HashSet<String>) -> String {
    loop {
        let len = 8 + dice.below(2) as usize;
        let mut tag = String::with_capacity(len + 1);
        tag.push('#');
        // Real tags never start with 0.
        tag.push(char::from(TAG_ALPHABET[1 + dice.below(13) as usize]));
        for _ in 1..len {
            tag.push(char::from(TAG_ALPHABET[dice.below(14) as usize]));
        }
        if taken.insert(tag.clone()) {
            return tag;
        }
    }
}

const NAME_HEADS: &[&str] = &[
    "Salt", "Brisk", "Fen", "Quill", "Marrow", "Ombra", "Hollis", "Lantern", "Cobble", "Ember",
    "Drift", "Moss", "Thistle", "Rook", "Wren", "Bram", "Cinder", "Flint", "Juniper", "Kestrel",
    "Larch", "Nettle", "Pike", "Rowan", "Sable", "Tansy", "Vale", "Yarrow", "Zephyr", "Odd",
];
const NAME_TAILS: &[&str] = &[
    "marsh", "wick", "on", "jack", "ley", "ford", "by", "beard", "fall", "wood", "ton", "er",
    "ling", "smith", "hart", "well", "", "", ".wizard", "_cr", "99", "King", "Hog", "Log",
];
const CLAN_HEADS: &[&str] = &[
    "Tidewater",
    "Night",
    "Copper",
    "Rust",
    "Moth &",
    "Silver",
    "Iron",
    "Amber",
    "Hollow",
    "Northern",
    "Quiet",
    "Ember",
    "Lucky",
    "Stone",
    "Velvet",
    "Wild",
];
const CLAN_TAILS: &[&str] = &[
    "Lanterns", "Ferry", "Kettles", "Bell", "Lamp", "Owls", "Anchors", "Foxes", "Giants", "Crowns",
    "Barrels", "Towers", "Ravens", "Knights", "Spirits", "Hogs",
];
const CLAN_BLURBS: &[&str] = &[
    "War every day. 4/4 decks. English speaking. Be kind.",
    "Chill clan, donate and have fun.",
    "Top 1000 push. Discord required.",
    "Family clan since 2016. Active war only.",
    "",
];
const CLAN_KINDS: &[&str] = &["open", "inviteOnly", "inviteOnly", "closed"];
/// Locations `(id, name, isCountry, countryCode)`.
pub(crate) const LOCATIONS: &[(u32, &str, bool, Option<&str>)] = &[
    (57000248, "United Kingdom", true, Some("GB")),
    (57000249, "United States", true, Some("US")),
    (57000094, "Germany", true, Some("DE")),
    (57000000, "Europe", false, None),
    (57000006, "International", false, None),
];

fn player_name(dice: &mut Dice) -> String {
    let head = dice.pick(NAME_HEADS).copied().unwrap_or("Player");
    let tail = dice.pick(NAME_TAILS).copied().unwrap_or("");
    let name = format!("{head}{tail}");
    if dice.chance(150) {
        name.to_lowercase()
    } else {
        name
    }
}

pub(crate) fn clan_name(dice: &mut Dice) -> String {
    let head = dice.pick(CLAN_HEADS).copied().unwrap_or("Clan");
    let tail = dice.pick(CLAN_TAILS).copied().unwrap_or("");
    format!("{head} {tail}")
}

/// The in-game level a player's cards centre on, from trophies.
pub(crate) fn level_base(trophies: i32) -> i64 {
    (11 + i64::from((trophies - 4000).max(0)) / 1300).clamp(11, 16)
}

/// A rarity-relative level for an in-game level, kept inside the rarity's range.
pub(crate) fn api_level(in_game: i64, rarity: crate::catalog::Rarity) -> u8 {
    let level = (in_game - rarity.level_offset())
        .clamp(1, i64::from(crate::catalog::api_max_level(rarity)));
    u8::try_from(level).unwrap_or(1)
}

/// A deck from the given cards with up to three evolved or hero slots among the owned forms.
fn build_deck(dice: &mut Dice, cards: [u16; 8], forms_owned: impl Fn(u16) -> u8) -> Deck {
    let mut forms = [0u8; 8];
    let mut formed = 0;
    for (slot, &card) in cards.iter().enumerate() {
        let owned = forms_owned(card);
        if owned == 0 || formed >= 3 || !dice.chance(700) {
            continue;
        }
        forms[slot] = match owned {
            3 => 1 + dice.below(2) as u8,
            bits => bits,
        };
        formed += 1;
    }
    Deck {
        cards,
        forms,
        tower_troop: 0,
    }
}

fn make_player(config: &WorldConfig, catalog: &Catalog, index: u32, tag: String) -> Player {
    let mut dice = Dice::new(config.seed, &[1, u64::from(index)]);
    let name = player_name(&mut dice);
    let start_trophies = i32::try_from(dice.range(4000, 10500)).unwrap_or(7000);
    let base = level_base(start_trophies);
    let king_tower_level = u8::try_from((base + dice.range(-1, 0)).clamp(1, 16)).unwrap_or(14);
    let mut collection = Vec::new();
    let skipped = dice.below(3);
    for (i, card) in catalog.cards().iter().enumerate() {
        let card_index = u16::try_from(i).unwrap_or(0);
        // Players own all but up to two cards (never fewer than the 32 four war decks need).
        if u32::try_from(i).unwrap_or(0) < skipped && i + 32 < catalog.cards().len() {
            continue;
        }
        let evolution_level = match card.max_evolution_level {
            Some(bits) if dice.chance(450) => match bits {
                3 => 1 + dice.below(3) as u8,
                other => other,
            },
            _ => 0,
        };
        collection.push(OwnedCard {
            card: card_index,
            level: api_level(base - dice.range(0, 2), card.rarity),
            evolution_level,
            star_level: if dice.chance(300) {
                1 + dice.below(3) as u8
            } else {
                0
            },
            count: dice.below(1500),
        });
    }
    let mut tower_troops = Vec::new();
    for (i, troop) in catalog.tower_troops().iter().enumerate() {
        if i == 0 || dice.chance(600) {
            tower_troops.push(OwnedCard {
                card: u16::try_from(i).unwrap_or(0),
                level: api_level(base - dice.range(0, 2), troop.rarity),
                evolution_level: 0,
                star_level: 0,
                count: dice.below(30),
            });
        }
    }
    let forms_of = |card: u16| {
        collection
            .iter()
            .find(|owned| owned.card == card)
            .map_or(0, |owned| owned.evolution_level)
    };
    let owned: Vec<u16> = collection.iter().map(|owned| owned.card).collect();
    let mut decks = Vec::new();
    let ladder = 2 + dice.below(2);
    for _ in 0..ladder {
        let mut pool = owned.clone();
        dice.shuffle(&mut pool);
        let mut cards = [0u16; 8];
        cards.copy_from_slice(&pool[..8]);
        let mut deck = build_deck(&mut dice, cards, forms_of);
        let troop = dice.pick(&tower_troops).map_or(0, |t| t.card);
        deck.tower_troop = troop;
        decks.push(deck);
    }
    let mut pool = owned.clone();
    dice.shuffle(&mut pool);
    for war in 0..4 {
        let mut cards = [0u16; 8];
        cards.copy_from_slice(&pool[war * 8..war * 8 + 8]);
        decks.push(build_deck(&mut dice, cards, forms_of));
    }
    let idle = dice.chance(30);
    let activity = if idle {
        Activity {
            active_per_mille: 0,
            battles_per_day: (0, 0),
        }
    } else {
        let lo = u8::try_from(dice.range(5, 19)).unwrap_or(5);
        let hi = u8::try_from(dice.range(i64::from(lo), 40)).unwrap_or(lo);
        Activity {
            active_per_mille: u16::try_from(dice.range(500, 950)).unwrap_or(700),
            battles_per_day: (lo, hi),
        }
    };
    let battles = u32::try_from(dice.range(2000, 30000)).unwrap_or(5000);
    let wins = battles / 2 + dice.below(battles / 20 + 1);
    let losses = battles - wins - dice.below(battles / 50 + 1);
    let pol_league = u8::try_from(dice.range(1, 10)).unwrap_or(1);
    Player {
        tag,
        names: vec![(config.start_millis() - 400 * DAY_MS, name)],
        exp_level: u8::try_from(dice.range(35, 75)).unwrap_or(50),
        king_tower_level,
        start_trophies,
        best_trophies_before: start_trophies + i32::try_from(dice.range(0, 400)).unwrap_or(0),
        pol_league,
        pol_start_trophies: i32::from(pol_league) * 250
            + i32::try_from(dice.range(0, 240)).unwrap_or(0),
        collection,
        tower_troops,
        decks,
        activity,
        totals_before: Totals {
            battles,
            wins,
            losses,
            three_crown_wins: wins / 3,
        },
    }
}

impl World {
    /// Generates the world for a config (deterministic in the config).
    pub fn generate(config: WorldConfig) -> Result<World, WorldError> {
        generate(config, None)
    }

    /// Generates the world with the script's renames and clan moves instead of generated ones.
    pub fn generate_scripted(config: WorldConfig, script: &Script) -> Result<World, WorldError> {
        generate(config, Some(script))
    }
}

/// Generates the world.
fn generate(config: WorldConfig, script: Option<&Script>) -> Result<World, WorldError> {
    config.check()?;
    let catalog = Catalog::load()?;
    if catalog.cards().len() < 32 || catalog.tower_troops().is_empty() {
        return Err(WorldError::Fixture(
            "the card catalogue needs 32 playable cards (four war decks) and a tower troop".into(),
        ));
    }
    let mut taken = HashSet::new();
    let mut tag_dice = Dice::new(config.seed, &[0]);
    let mut players = Vec::with_capacity(config.players as usize);
    for index in 0..config.players {
        let tag = fresh_tag(&mut tag_dice, &mut taken);
        players.push(make_player(&config, &catalog, index, tag));
    }
    // A few idle players in every world big enough to have some.
    if config.players >= 10
        && players.iter().all(|p| !p.activity.is_idle())
        && let Some(last) = players.last_mut()
    {
        last.activity = Activity {
            active_per_mille: 0,
            battles_per_day: (0, 0),
        };
    }

    let (clans, mut memberships) = make_clans(&config, &players, &mut tag_dice, &mut taken);
    let mut rival_clans = Vec::new();
    for i in 0..100u64 {
        let mut dice = Dice::new(config.seed, &[5, i]);
        let tag = fresh_tag(&mut tag_dice, &mut taken);
        rival_clans.push((tag, clan_name(&mut dice), 16_000_000 + dice.below(180)));
    }
    let (name_changes, clan_moves) = match script {
        None => (
            make_name_changes(&config, &mut players),
            make_clan_moves(&config, &clans, &mut memberships),
        ),
        Some(script) => (
            scripted_renames(&config, script, &mut players)?,
            scripted_moves(&config, script, clans.len(), &mut memberships)?,
        ),
    };
    make_promotions(&config, &mut memberships);
    memberships.sort_by_key(|m| (m.player, m.from_millis));
    let mut by_player_memberships = vec![Vec::new(); players.len()];
    for (i, m) in memberships.iter().enumerate() {
        if let Some(list) = by_player_memberships.get_mut(m.player as usize) {
            list.push(u32::try_from(i).unwrap_or(0));
        }
    }
    let player_tags = players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.tag.clone(), u32::try_from(i).unwrap_or(0)))
        .collect();
    let clan_tags = clans
        .iter()
        .enumerate()
        .map(|(i, c)| (c.tag.clone(), u32::try_from(i).unwrap_or(0)))
        .collect();
    let mut world = World {
        config,
        catalog,
        players,
        clans,
        memberships,
        by_player_memberships,
        battles: Vec::new(),
        by_player: Vec::new(),
        name_changes,
        clan_moves,
        player_tags,
        clan_tags,
        rival_clans,
    };
    battles::make_battles(&mut world);
    Ok(world)
}

fn make_clans(
    config: &WorldConfig,
    players: &[Player],
    tag_dice: &mut Dice,
    taken: &mut HashSet<String>,
) -> (Vec<Clan>, Vec<Membership>) {
    let count = config.clan_count() as usize;
    let mut clans = Vec::with_capacity(count);
    for i in 0..count {
        let mut dice = Dice::new(config.seed, &[2, i as u64]);
        let tag = fresh_tag(tag_dice, taken);
        let location = dice.pick(LOCATIONS).copied().unwrap_or(LOCATIONS[0]);
        clans.push(Clan {
            tag,
            name: clan_name(&mut dice),
            description: dice.pick(CLAN_BLURBS).copied().unwrap_or("").to_owned(),
            kind: dice.pick(CLAN_KINDS).copied().unwrap_or("open"),
            badge_id: 16_000_000 + dice.below(180),
            location,
            required_trophies: 1000 * dice.below(8),
            war_trophies: 1000 + dice.below(4000),
        });
    }
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    let mut dice = Dice::new(config.seed, &[3]);
    for (i, _) in players.iter().enumerate() {
        // About one player in twenty has no clan (the profile then has no `clan`/`role`).
        if players.len() >= 20 && dice.chance(50) {
            continue;
        }
        let clan = (i + dice.below(2) as usize) % count;
        let clan = if members[clan].len() >= 50 {
            members.iter().position(|m| m.len() < 50).unwrap_or(clan)
        } else {
            clan
        };
        members[clan].push(u32::try_from(i).unwrap_or(0));
    }
    let mut memberships = Vec::new();
    for (clan, list) in members.iter().enumerate() {
        let elders = list.len() / 5;
        for (rank, &player) in list.iter().enumerate() {
            let role = match rank {
                0 => Role::Leader,
                1 | 2 => Role::CoLeader,
                r if r < 3 + elders => Role::Elder,
                _ => Role::Member,
            };
            memberships.push(Membership {
                player,
                clan: u32::try_from(clan).unwrap_or(0),
                role,
                from_millis: config.start_millis() - i64::from(1 + dice.below(400)) * DAY_MS,
                to_millis: None,
            });
        }
    }
    (clans, memberships)
}

/// A random instant on history day `day` (0-based), at whole seconds.
fn instant_on_day(config: &WorldConfig, dice: &mut Dice, day: u32) -> i64 {
    let day_start = config.start_millis() + i64::from(day) * DAY_MS;
    let at = day_start + dice.range(0, DAY_MS / 1000 - 1) * 1000;
    at.min(config.end_millis - 1000)
}

fn make_name_changes(config: &WorldConfig, players: &mut [Player]) -> Vec<NameChange> {
    let mut dice = Dice::new(config.seed, &[6]);
    let mut changes = Vec::new();
    let count = players.len();
    for (index, player) in players.iter_mut().enumerate() {
        let forced = index == 0 && count >= 2 && config.days >= 2;
        if !(forced || dice.chance(15)) {
            continue;
        }
        let day = if forced {
            config.days / 2
        } else {
            dice.below(config.days)
        };
        let at = instant_on_day(config, &mut dice, day);
        let from = player.name_at(at).to_owned();
        let mut to = player_name(&mut dice);
        if to == from {
            to.push('2');
        }
        player.names.push((at, to.clone()));
        changes.push(NameChange {
            player: u32::try_from(index).unwrap_or(0),
            at_millis: at,
            from,
            to,
        });
    }
    changes.sort_by_key(|c| c.at_millis);
    changes
}

fn make_clan_moves(
    config: &WorldConfig,
    clans: &[Clan],
    memberships: &mut Vec<Membership>,
) -> Vec<ClanMove> {
    let mut moves = Vec::new();
    if clans.len() < 2 {
        return moves;
    }
    let mut dice = Dice::new(config.seed, &[7]);
    let founders = memberships.len();
    // A clan holds at most 50: a move into a full clan does not happen.
    let mut sizes = vec![0usize; clans.len()];
    for m in memberships.iter() {
        if let Some(size) = sizes.get_mut(m.clan as usize) {
            *size += 1;
        }
    }
    for i in 0..founders {
        let membership = memberships[i];
        // Leaders stay; one mover is forced so every multi-clan world has one.
        let forced = moves.is_empty() && i + 1 == founders;
        if membership.role == Role::Leader || !(forced || dice.chance(20)) {
            continue;
        }
        let day = dice.below(config.days);
        let left = instant_on_day(config, &mut dice, day);
        let joined = (left + dice.range(1, 6) * HOUR_MS).min(config.end_millis - 1000);
        let offset = 1 + dice.below(u32::try_from(clans.len() - 1).unwrap_or(1));
        let to_clan = (membership.clan + offset) % u32::try_from(clans.len()).unwrap_or(1);
        if sizes[to_clan as usize] >= 50 {
            continue;
        }
        sizes[to_clan as usize] += 1;
        sizes[membership.clan as usize] -= 1;
        memberships[i].to_millis = Some(left);
        memberships.push(Membership {
            player: membership.player,
            clan: to_clan,
            role: Role::Member,
            from_millis: joined,
            to_millis: None,
        });
        moves.push(ClanMove {
            player: membership.player,
            from_clan: membership.clan,
            left_millis: left,
            to_clan,
            joined_millis: joined,
        });
    }
    moves.sort_by_key(|m| m.left_millis);
    moves
}

fn check_event(config: &WorldConfig, what: &str, player: u32, day: u32) -> Result<(), WorldError> {
    if player >= config.players {
        return Err(WorldError::Config(format!(
            "scripted {what}: player {player} does not exist (the world has {})",
            config.players
        )));
    }
    if day >= config.days {
        return Err(WorldError::Config(format!(
            "scripted {what}: day {day} is outside the history (days 0..{})",
            config.days
        )));
    }
    Ok(())
}

fn scripted_renames(
    config: &WorldConfig,
    script: &Script,
    players: &mut [Player],
) -> Result<Vec<NameChange>, WorldError> {
    let mut renames = script.renames.clone();
    renames.sort_by_key(|(_, day, _)| *day);
    let mut changes = Vec::new();
    for (player, day, name) in renames {
        check_event(config, "rename", player, day)?;
        if name.trim().is_empty() {
            return Err(WorldError::Config(format!(
                "scripted rename: player {player} on day {day} gets an empty name"
            )));
        }
        let at = Script::instant(config, day);
        let entry = &mut players[player as usize];
        let from = entry.name_at(at).to_owned();
        entry.names.push((at, name.clone()));
        changes.push(NameChange {
            player,
            at_millis: at,
            from,
            to: name,
        });
    }
    Ok(changes)
}

fn scripted_moves(
    config: &WorldConfig,
    script: &Script,
    clan_count: usize,
    memberships: &mut Vec<Membership>,
) -> Result<Vec<ClanMove>, WorldError> {
    let mut scripted = script.moves.clone();
    scripted.sort_by_key(|(_, day, _)| *day);
    let mut moves = Vec::new();
    for (player, day, to_clan) in scripted {
        check_event(config, "clan move", player, day)?;
        if to_clan as usize >= clan_count {
            return Err(WorldError::Config(format!(
                "scripted clan move: clan {to_clan} does not exist (the world has {clan_count})"
            )));
        }
        let left = Script::instant(config, day);
        let current = memberships
            .iter()
            .position(|m| m.player == player && m.covers(left))
            .ok_or_else(|| {
                WorldError::Config(format!(
                    "scripted clan move: player {player} is in no clan on day {day}"
                ))
            })?;
        let from_clan = memberships[current].clan;
        if from_clan == to_clan {
            return Err(WorldError::Config(format!(
                "scripted clan move: player {player} is already in clan {to_clan} on day {day}"
            )));
        }
        let joined = left + 2 * HOUR_MS;
        memberships[current].to_millis = Some(left);
        memberships.push(Membership {
            player,
            clan: to_clan,
            role: Role::Member,
            from_millis: joined,
            to_millis: None,
        });
        moves.push(ClanMove {
            player,
            from_clan,
            left_millis: left,
            to_clan,
            joined_millis: joined,
        });
    }
    Ok(moves)
}

/// A few members become elders during the history (a role change inside one clan).
fn make_promotions(config: &WorldConfig, memberships: &mut Vec<Membership>) {
    let mut dice = Dice::new(config.seed, &[8]);
    let count = memberships.len();
    for i in 0..count {
        let m = memberships[i];
        if m.role != Role::Member || m.to_millis.is_some() || !dice.chance(30) {
            continue;
        }
        let day = dice.below(config.days);
        let at = instant_on_day(config, &mut dice, day);
        if at <= m.from_millis {
            continue;
        }
        memberships[i].to_millis = Some(at);
        memberships.push(Membership {
            role: Role::Elder,
            from_millis: at,
            ..m
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_use_the_game_alphabet_and_never_repeat() {
        let mut dice = Dice::new(7, &[0]);
        let mut taken = HashSet::new();
        for _ in 0..2000 {
            let tag = fresh_tag(&mut dice, &mut taken);
            assert!(tag.starts_with('#'));
            assert!((9..=10).contains(&tag.len()), "{tag}");
            assert!(tag[1..].bytes().all(|b| TAG_ALPHABET.contains(&b)), "{tag}");
            assert!(!tag.starts_with("#0"), "{tag}");
        }
        assert_eq!(taken.len(), 2000);
    }

    #[test]
    fn dice_draws_stay_in_range_and_repeat_for_a_seed() {
        let mut a = Dice::new(1, &[2, 3]);
        let mut b = Dice::new(1, &[2, 3]);
        let mut c = Dice::new(1, &[2, 4]);
        let first: Vec<i64> = (0..50).map(|_| a.range(5, 40)).collect();
        let second: Vec<i64> = (0..50).map(|_| b.range(5, 40)).collect();
        let other: Vec<i64> = (0..50).map(|_| c.range(5, 40)).collect();
        assert_eq!(first, second);
        assert_ne!(first, other);
        assert!(first.iter().all(|v| (5..=40).contains(v)));
        assert_eq!(a.below(0), 0);
    }
}
