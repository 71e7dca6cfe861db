//! From normalized reads to the store's rows: a battle log's battles as one player's
//! observations ([`NewBattle`]), a profile as the player's row and snapshot, a clan read as its
//! row and member list. The rules (outcomes, hashes, towers) are `elixir_record`'s; which
//! columns a tool filters on is the store's schema; this file only maps one onto the other.

use elixir_record::battle::Form;
use elixir_record::normalize::clan::ClanProfile;
use elixir_record::normalize::player::PlayerProfile;
use elixir_record::{Battle, BattleCard, Game, Outcome, Side, Tag};
use serde_json::json;

use crate::domain::Millis;
use crate::model::{
    BattleSide, ClanRow, MemberSeen, NewBattle, NewDeck, NewGame, PlayerRow, PlayerSnapshot,
};
use crate::recorder::RecorderError;

/// The stored name of an outcome.
pub fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Win => "win",
        Outcome::Loss => "loss",
        Outcome::Draw => "draw",
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Team => "team",
        Side::Opponent => "opponent",
    }
}

/// `observer`'s side of each battle of their log, with the battle as JSON. A battle the
/// observer is not in (which the API does not send) is left out.
pub fn new_battles(observer: &Tag, battles: &[Battle]) -> Result<Vec<NewBattle>, RecorderError> {
    let mut rows = Vec::with_capacity(battles.len());
    for battle in battles {
        let Some(me) = battle.participant(observer) else {
            continue;
        };
        let opponent = battle
            .opponents_of(observer)
            .iter()
            .find_map(|p| p.tag.as_ref())
            .map(Tag::to_string);
        let encode = |b: &Battle| {
            serde_json::to_string(b)
                .map_err(|e| RecorderError::Encode(format!("battle {}: {e}", battle.battle_id)))
        };
        let body = encode(battle)?;
        let views = battle
            .team
            .iter()
            .chain(&battle.opponent)
            .filter_map(|p| p.tag.as_ref().filter(|t| *t != observer))
            .map(|t| encode(&battle.clone().turned_to(t)))
            .collect::<Result<_, _>>()?;
        rows.push(NewBattle {
            battle_id: battle.battle_id.clone(),
            battle_time: battle.battle_time.as_millisecond(),
            battle_type: battle.battle_type.clone(),
            mode: battle.mode.as_str().to_owned(),
            game_mode_id: battle.game_mode.as_ref().map(|g| g.id),
            body,
            views,
            observer: BattleSide {
                player_tag: observer.to_string(),
                side: side_name(me.side).to_owned(),
                outcome: battle
                    .outcome_of(observer)
                    .map(|o| outcome_name(o).to_owned()),
                crowns: me.crowns,
                trophy_change: me.trophy_change,
                deck_hash: me.deck_hash.clone(),
                opponent_tag: opponent,
                clan_tag: me.clan.as_ref().map(|c| c.tag.to_string()),
            },
            games: battle.games_of(observer).iter().map(new_game).collect(),
        });
    }
    Ok(rows)
}

/// The games a stored battle (its JSON body, as [`new_battles`] wrote it) counts as for
/// `observer`: what the meta index holds for that observation. `None` when the tag or the
/// body does not parse.
pub fn stored_games(observer: &str, body: &str) -> Option<Vec<NewGame>> {
    let tag = Tag::parse(observer).ok()?;
    let battle: Battle = serde_json::from_str(body).ok()?;
    Some(battle.games_of(&tag).iter().map(new_game).collect())
}

/// One game as the meta index stores it: its round (0 for a battle that is not a duel), the
/// observer's outcome, and the deck when it is disclosed.
fn new_game(game: &Game<'_>) -> NewGame {
    NewGame {
        round: game
            .round
            .map_or(0, |r| i64::try_from(r).unwrap_or(i64::MAX)),
        outcome: game.outcome.map(|o| outcome_name(o).to_owned()),
        deck: game
            .deck_hash
            .map(|hash| new_deck(hash, game.cards, game.tower_troop)),
    }
}

/// A deck's stored form: its keys sorted bytewise (as the hash reads them), its cards in that
/// order, and its tower troop.
pub fn new_deck(hash: &str, cards: &[BattleCard], tower_troop: Option<&BattleCard>) -> NewDeck {
    let mut sorted: Vec<(String, &BattleCard)> = cards.iter().map(|c| (c.key(), c)).collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let card_keys = sorted
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let cards = json!(
        sorted
            .iter()
            .map(|(_, c)| json!({
                "id": c.id,
                "name": c.name,
                "form": Form::played(c.evolution_level),
                "elixir": c.elixir,
            }))
            .collect::<Vec<_>>()
    )
    .to_string();
    NewDeck {
        deck_hash: hash.to_owned(),
        card_keys,
        cards,
        tower_troop: tower_troop.map(|t| json!({"id": t.id, "name": t.name}).to_string()),
    }
}

/// The observer's in-game name in their own log (the newest battle's), if any.
pub fn observer_name<'a>(observer: &Tag, battles: &'a [Battle]) -> Option<&'a str> {
    battles
        .iter()
        .max_by_key(|b| b.battle_time)
        .and_then(|b| b.participant(observer))
        .map(|p| p.name.as_str())
}

/// A profile read as the player's row and its snapshot.
pub fn player_rows(
    profile: &PlayerProfile,
    observed_at: Millis,
) -> Result<(PlayerRow, PlayerSnapshot), RecorderError> {
    let json = serde_json::to_string(profile)
        .map_err(|e| RecorderError::Encode(format!("profile {}: {e}", profile.tag)))?;
    let row = PlayerRow {
        tag: profile.tag.to_string(),
        name: profile.name.clone(),
        clan_tag: profile.clan.as_ref().map(|c| c.tag.to_string()),
        clan_name: profile.clan.as_ref().map(|c| c.name.clone()),
        role: profile.clan.as_ref().and_then(|c| c.role.clone()),
        trophies: profile.trophies,
        profile: Some(json),
        observed_at: Some(observed_at),
        first_seen_at: observed_at,
        last_battle_at: None,
    };
    let pol = &profile.path_of_legend;
    let snapshot = PlayerSnapshot {
        player_tag: row.tag.clone(),
        observed_at,
        trophies: profile.trophies,
        best_trophies: profile.best_trophies,
        pol_league: pol.current.as_ref().and_then(|l| l.league_number),
        pol_trophies: pol.current.as_ref().and_then(|l| l.trophies),
        king_tower_level: profile.king_tower_level,
        collection_level: profile.collection_level,
        donations: profile.donations.given,
        battle_count: profile.battle_count,
        wins: profile.wins,
        losses: profile.losses,
    };
    Ok((row, snapshot))
}

/// A clan read as its row and the members it lists.
pub fn clan_rows(
    clan: &ClanProfile,
    observed_at: Millis,
) -> Result<(ClanRow, Vec<MemberSeen>), RecorderError> {
    let json = serde_json::to_string(clan)
        .map_err(|e| RecorderError::Encode(format!("clan {}: {e}", clan.tag)))?;
    let row = ClanRow {
        tag: clan.tag.to_string(),
        name: clan.name.clone(),
        profile: Some(json),
        observed_at: Some(observed_at),
        first_seen_at: observed_at,
    };
    let members = clan
        .member_list
        .iter()
        .map(|m| MemberSeen {
            player_tag: m.tag.to_string(),
            name: m.name.clone(),
            role: m.role.clone(),
            last_seen_at: m.last_seen.map(|t| t.as_millisecond()),
        })
        .collect();
    Ok((row, members))
}
