//! The player and clan fixtures read into profiles: `kingTowerLevel`, Path of Legend results
//! with a null rank, counters, the current deck's hash, in-game collection levels, forms
//! owned from the bit field, clan members with `expLevel: 0`, and the members page's empty
//! cursors.

use elixir_record::Battle;
use elixir_record::battle::Form;
use elixir_record::cards::CardKind;
use elixir_record::normalize::clan::{ClanProfile, MembersPage};
use elixir_record::normalize::player::{LeagueResult, PlayerProfile};
use elixir_record::time::iso;
use serde_json::json;

use super::fixture;

#[test]
fn the_player_profile() {
    let read = PlayerProfile::from_upstream(&fixture("player.json")).unwrap();
    assert!(read.rejected.is_empty());
    let p = read.profile;
    assert_eq!(
        (p.tag.as_str(), p.name.as_str()),
        ("#2QY8LRJC9", "Saltmarsh")
    );
    // kingTowerLevel wins over expLevel (61)
    assert_eq!(p.king_tower_level, Some(16));
    assert_eq!((p.trophies, p.best_trophies), (Some(9872), Some(10115)));
    assert_eq!(p.arena.as_ref().map(|a| a.id), Some(54_000_142));
    let clan = p.clan.as_ref().unwrap();
    assert_eq!(
        (clan.tag.as_str(), clan.name.as_str(), clan.role.as_deref()),
        ("#QLRG2UV0", "Tidewater Lanterns", Some("elder"))
    );
    assert_eq!(
        p.path_of_legend.current,
        Some(LeagueResult {
            league_number: Some(7),
            trophies: Some(2412),
            rank: None
        })
    );
    assert_eq!(
        p.path_of_legend.last.as_ref().and_then(|l| l.rank),
        Some(41_127)
    );
    assert_eq!(
        p.path_of_legend.best.as_ref().and_then(|l| l.league_number),
        Some(10)
    );
    assert_eq!(
        (
            p.wins,
            p.losses,
            p.battle_count,
            p.three_crown_wins,
            p.war_day_wins
        ),
        (
            Some(11_873),
            Some(9402),
            Some(24_410),
            Some(4512),
            Some(211)
        )
    );
    assert_eq!(
        (p.donations.given, p.donations.received, p.donations.total),
        (Some(186), Some(160), Some(88_421))
    );
    assert_eq!(
        (p.collection_level, p.star_points, p.current_streak),
        (Some(1874), Some(3120), Some(2))
    );
    let fav = p.favourite_card.as_ref().unwrap();
    assert_eq!(
        (fav.id, fav.name.as_str(), fav.elixir),
        (26_000_021, "Hog Rider", Some(4))
    );

    // the current deck is the ladder deck of the battle log, forms equipped: same hash
    let deck = p.current_deck.as_ref().unwrap();
    assert!(deck.snapshot);
    assert_eq!(deck.cards.len(), 8);
    assert_eq!(
        deck.tower_troop.as_ref().map(|t| (t.id, t.level)),
        Some((159_000_001, Some(14)))
    );
    let battles = Battle::from_battlelog(&fixture("battlelog.json"))
        .unwrap()
        .battles;
    assert_eq!(deck.deck_hash, battles[0].team[0].deck_hash);
    let musketeer = deck.cards.iter().find(|c| c.id == 26_000_014).unwrap();
    assert_eq!(
        (musketeer.form, musketeer.level),
        (Some(Form::Hero), Some(15))
    );

    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["current_deck"]["snapshot"], true);
    assert_eq!(json["path_of_legend"]["current"]["rank"], json!(null));
}

#[test]
fn the_collection_levels_and_forms() {
    let p = PlayerProfile::from_upstream(&fixture("player.json"))
        .unwrap()
        .profile;
    assert_eq!((p.cards.len(), p.tower_troops.len()), (13, 4));
    let card = |id: i64| p.cards.iter().find(|c| c.id == id).unwrap();
    let knight = card(26_000_000);
    assert_eq!(
        (
            knight.level,
            knight.max_level,
            knight.star_level,
            knight.count
        ),
        (Some(15), Some(16), Some(3), Some(212))
    );
    // evolutionLevel 3 owns both forms
    assert_eq!(knight.forms_unlocked, [Form::Evolution, Form::Hero]);
    assert_eq!(knight.kind, Some(CardKind::Troop));
    assert_eq!(card(26_000_001).forms_unlocked, [Form::Evolution]);
    assert_eq!(card(26_000_003).forms_unlocked, [Form::Hero]);
    assert!(card(26_000_021).forms_unlocked.is_empty());
    // rare 13 + 2, legendary 7 + 8, champion 3 + 10; max levels all 16 in-game
    assert_eq!(
        (card(26_000_014).level, card(26_000_014).max_level),
        (Some(15), Some(16))
    );
    assert_eq!(card(28_000_011).level, Some(15));
    assert_eq!(
        (card(26_000_072).level, card(26_000_072).max_level),
        (Some(13), Some(16))
    );
    // Mirror: epic 6 + 5, no elixir cost
    let mirror = card(28_000_006);
    assert_eq!(
        (mirror.level, mirror.elixir, mirror.kind),
        (Some(11), None, Some(CardKind::Spell))
    );
    assert_eq!(card(27_000_000).kind, Some(CardKind::Building));
    let chef = p.tower_troops.iter().find(|t| t.id == 159_000_004).unwrap();
    // a legendary tower troop: 5 + 8
    assert_eq!(
        (chef.level, chef.max_level, chef.kind),
        (Some(13), Some(16), Some(CardKind::TowerTroop))
    );
    assert_eq!(
        serde_json::to_value(knight).unwrap()["forms_unlocked"],
        json!(["evolution", "hero"])
    );
}

#[test]
fn the_clan_profile_and_its_members() {
    let read = ClanProfile::from_upstream(&fixture("clan.json")).unwrap();
    assert!(read.rejected.is_empty());
    let c = read.profile;
    assert_eq!(
        (c.tag.as_str(), c.name.as_str()),
        ("#QLRG2UV0", "Tidewater Lanterns")
    );
    assert_eq!(c.clan_type.as_deref(), Some("inviteOnly"));
    assert_eq!(
        (
            c.members,
            c.clan_score,
            c.war_trophies,
            c.required_trophies,
            c.donations_per_week
        ),
        (Some(4), Some(81_344), Some(3210), Some(7000), Some(2410))
    );
    let location = c.location.as_ref().unwrap();
    assert_eq!(
        (
            location.id,
            location.name.as_str(),
            location.country_code.as_deref()
        ),
        (57_000_248, "United Kingdom", Some("GB"))
    );
    assert_eq!(c.member_list.len(), 4);
    let pike = &c.member_list[0];
    assert_eq!(
        (
            pike.tag.as_str(),
            pike.role.as_deref(),
            pike.trophies,
            pike.clan_rank
        ),
        ("#UQ0L9RG8", Some("leader"), Some(10_442), Some(1))
    );
    assert_eq!(iso(pike.last_seen.unwrap()), "2026-09-18T20:15:05Z");
    // expLevel 0 is upstream's placeholder, not a level
    assert!(c.member_list.iter().all(|m| m.exp_level.is_none()));
    assert_eq!(c.member_list[2].role.as_deref(), Some("coLeader"));
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["type"], "inviteOnly");
    assert_eq!(json["member_list"][1]["last_seen"], "2026-09-18T19:50:01Z");
}

#[test]
fn the_members_page_is_the_last() {
    let page = MembersPage::from_upstream(&fixture("clan_members.json")).unwrap();
    assert_eq!(page.next_cursor, None);
    assert!(page.rejected.is_empty());
    let names: Vec<&str> = page.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["Admiral Pike", "Saltmarsh", "Fenwick", "sprout"]);
    let sprout = &page.members[3];
    assert_eq!(
        (
            sprout.donations,
            sprout.donations_received,
            iso(sprout.last_seen.unwrap())
        ),
        (Some(0), Some(0), "2026-09-06T17:12:33Z".to_owned())
    );
    // the page and the profile list the same members
    let profile = ClanProfile::from_upstream(&fixture("clan.json"))
        .unwrap()
        .profile;
    assert_eq!(page.members, profile.member_list);
}
