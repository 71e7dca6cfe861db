//! `/clans/{tag}` read into a [`ClanProfile`] and `/clans/{tag}/members` (a paged wrapper)
//! into a [`MembersPage`] (SURFACE §2.5): the clan's identity, type, description, counters
//! and location, and each member's tag, name, role, trophies, last-seen instant, donations,
//! rank and level. This file owns both endpoints' DTOs; one member that cannot be read is set
//! aside beside the others.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Rejected, entries, or_default, read_each};
use crate::tag::Tag;
use crate::time::{iso_serde_opt, parse_battle_time};

/// A clan's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClanProfile {
    /// The normalized tag.
    pub tag: Tag,
    /// The name.
    pub name: String,
    /// Upstream `type` verbatim (`open`, `inviteOnly`, `closed`, …).
    #[serde(rename = "type")]
    pub clan_type: Option<String>,
    /// The description.
    pub description: Option<String>,
    /// Upstream `badgeId`.
    pub badge_id: Option<i64>,
    /// How many members upstream counts.
    pub members: Option<i64>,
    /// Upstream `clanScore`.
    pub clan_score: Option<i64>,
    /// Upstream `clanWarTrophies`.
    pub war_trophies: Option<i64>,
    /// Where the clan says it is.
    pub location: Option<Location>,
    /// Trophies required to join.
    pub required_trophies: Option<i64>,
    /// Upstream `donationsPerWeek`.
    pub donations_per_week: Option<i64>,
    /// The members listed, in upstream order (by clan rank).
    pub member_list: Vec<ClanMember>,
}

/// A clan's location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Upstream location id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Whether it is a country.
    pub is_country: Option<bool>,
    /// The ISO country code, for countries.
    pub country_code: Option<String>,
}

/// One clan member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClanMember {
    /// The normalized tag.
    pub tag: Tag,
    /// The in-game name.
    pub name: String,
    /// The role verbatim (`member`, `elder`, `coLeader`, `leader`, …).
    pub role: Option<String>,
    /// Current trophies.
    pub trophies: Option<i64>,
    /// When upstream last saw the member.
    #[serde(with = "iso_serde_opt")]
    pub last_seen: Option<Timestamp>,
    /// Donations given this week.
    pub donations: Option<i64>,
    /// Donations received this week.
    pub donations_received: Option<i64>,
    /// The 1-based rank in the clan.
    pub clan_rank: Option<i64>,
    /// Upstream `expLevel`; `None` when upstream sends 0, which it now does for every
    /// member (a placeholder, not a level anyone has).
    pub exp_level: Option<i64>,
}

/// One page of `/clans/{tag}/members`.
#[derive(Debug, Clone, PartialEq)]
pub struct MembersPage {
    /// The members read.
    pub members: Vec<ClanMember>,
    /// Entries that could not be read.
    pub rejected: Vec<Rejected<MemberError>>,
    /// The `after` cursor of the next page; `None` on the last page (empty cursors).
    pub next_cursor: Option<String>,
}

/// A clan profile read, with the member entries that could not be.
#[derive(Debug, Clone, PartialEq)]
pub struct ClanRead {
    /// The profile.
    pub profile: ClanProfile,
    /// `memberList` entries left out.
    pub rejected: Vec<Rejected<MemberError>>,
}

/// Why a clan payload cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClanError {
    /// Not the expected JSON.
    #[error("the clan payload is not the expected JSON: {0}")]
    Shape(String),
    /// The clan's tag fails §6.1.
    #[error("clan tag {0:?} is not a valid tag")]
    Tag(String),
}

/// Why one member entry was left out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MemberError {
    /// Not a member object.
    #[error("not a clan member: {0}")]
    Shape(String),
    /// The member's tag fails §6.1.
    #[error("member tag {0:?} is not a valid tag")]
    Tag(String),
    /// `lastSeen` not of the form `YYYYMMDDTHHMMSS.fffZ`.
    #[error("unreadable lastSeen {0:?}")]
    LastSeen(String),
}

mod dto {
    use serde::Deserialize;

    use super::or_default;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Clan {
        pub tag: String,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        #[serde(rename = "type")]
        pub clan_type: Option<String>,
        pub description: Option<String>,
        pub badge_id: Option<i64>,
        pub members: Option<i64>,
        pub clan_score: Option<i64>,
        pub clan_war_trophies: Option<i64>,
        pub location: Option<Location>,
        pub required_trophies: Option<i64>,
        pub donations_per_week: Option<i64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Location {
        pub id: i64,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub is_country: Option<bool>,
        pub country_code: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Member {
        pub tag: String,
        #[serde(default, deserialize_with = "or_default")]
        pub name: String,
        pub role: Option<String>,
        pub trophies: Option<i64>,
        pub last_seen: Option<String>,
        pub donations: Option<i64>,
        pub donations_received: Option<i64>,
        pub clan_rank: Option<i64>,
        pub exp_level: Option<i64>,
    }

    #[derive(Debug, Default, Deserialize)]
    pub struct Paging {
        #[serde(default, deserialize_with = "or_default")]
        pub cursors: Cursors,
    }

    #[derive(Debug, Default, Deserialize)]
    pub struct Cursors {
        pub after: Option<String>,
    }
}

fn member(value: serde_json::Value) -> Result<ClanMember, MemberError> {
    let m: dto::Member =
        serde_json::from_value(value).map_err(|e| MemberError::Shape(e.to_string()))?;
    let tag = Tag::parse(&m.tag).map_err(|_| MemberError::Tag(m.tag.clone()))?;
    let last_seen = m
        .last_seen
        .map(|t| parse_battle_time(&t).ok_or(MemberError::LastSeen(t)))
        .transpose()?;
    Ok(ClanMember {
        tag,
        name: m.name,
        role: m.role,
        trophies: m.trophies,
        last_seen,
        donations: m.donations,
        donations_received: m.donations_received,
        clan_rank: m.clan_rank,
        exp_level: m.exp_level.filter(|l| *l > 0),
    })
}

impl ClanProfile {
    /// Reads a `/clans/{tag}` payload; a `memberList` entry that cannot be read is set aside.
    pub fn from_upstream(payload: &[u8]) -> Result<ClanRead, ClanError> {
        let value: serde_json::Value =
            serde_json::from_slice(payload).map_err(|e| ClanError::Shape(e.to_string()))?;
        let api: dto::Clan =
            serde_json::from_value(value.clone()).map_err(|e| ClanError::Shape(e.to_string()))?;
        let list = entries(value, Some("memberList")).map_err(ClanError::Shape)?;
        let (member_list, rejected) = read_each(list, member);
        let tag = Tag::parse(&api.tag).map_err(|_| ClanError::Tag(api.tag.clone()))?;
        let profile = ClanProfile {
            tag,
            name: api.name,
            clan_type: api.clan_type,
            description: api.description,
            badge_id: api.badge_id,
            members: api.members,
            clan_score: api.clan_score,
            war_trophies: api.clan_war_trophies,
            location: api.location.map(|l| Location {
                id: l.id,
                name: l.name,
                is_country: l.is_country,
                country_code: l.country_code,
            }),
            required_trophies: api.required_trophies,
            donations_per_week: api.donations_per_week,
            member_list,
        };
        Ok(ClanRead { profile, rejected })
    }
}

impl MembersPage {
    /// Reads one page of `/clans/{tag}/members` (`{items, paging: {cursors}}`); empty
    /// cursors mark the last page.
    pub fn from_upstream(payload: &[u8]) -> Result<MembersPage, ClanError> {
        let mut value: serde_json::Value =
            serde_json::from_slice(payload).map_err(|e| ClanError::Shape(e.to_string()))?;
        let paging: dto::Paging = match value.as_object_mut().and_then(|o| o.remove("paging")) {
            None | Some(serde_json::Value::Null) => dto::Paging::default(),
            Some(p) => {
                serde_json::from_value(p).map_err(|e| ClanError::Shape(format!("paging: {e}")))?
            }
        };
        let list = entries(value, Some("items")).map_err(ClanError::Shape)?;
        let (members, rejected) = read_each(list, member);
        Ok(MembersPage {
            members,
            rejected,
            next_cursor: paging.cursors.after.filter(|c| !c.is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(value: serde_json::Value) -> Result<MembersPage, ClanError> {
        MembersPage::from_upstream(value.to_string().as_bytes())
    }

    #[test]
    fn a_cursor_means_another_page() {
        let next = page(json!({"items": [], "paging": {"cursors": {"after": "abc"}}})).unwrap();
        assert_eq!(next.next_cursor.as_deref(), Some("abc"));
        for last in [
            json!({"items": [], "paging": {"cursors": {}}}),
            json!({"items": [], "paging": {"cursors": {"after": ""}}}),
            json!({"items": []}),
        ] {
            assert_eq!(page(last).unwrap().next_cursor, None);
        }
    }

    #[test]
    fn odd_members_are_set_aside_with_their_reason() {
        let got = page(json!({"items": [
            {"tag": "#UQ0L9RG8", "name": "a", "lastSeen": "20260918T201505.000Z", "expLevel": 0},
            {"tag": "#BAD!", "name": "b"},
            {"tag": "#2QY8LRJC9", "name": "c", "lastSeen": "last tuesday"},
            {"name": "d"},
            {"tag": "#V2L9PCQ8", "name": "e", "expLevel": 52},
        ]}))
        .unwrap();
        assert_eq!(got.members.len(), 2);
        assert_eq!(got.members[0].exp_level, None);
        assert_eq!(got.members[1].exp_level, Some(52));
        assert_eq!(got.members[1].last_seen, None);
        let reasons: Vec<(usize, String)> = got
            .rejected
            .iter()
            .map(|r| (r.index, r.error.to_string()))
            .collect();
        assert_eq!(
            reasons[0],
            (1, "member tag \"#BAD!\" is not a valid tag".into())
        );
        assert_eq!(
            reasons[1],
            (2, "unreadable lastSeen \"last tuesday\"".into())
        );
        assert_eq!(reasons[2].0, 3);
        assert!(reasons[2].1.contains("missing field `tag`"), "{reasons:?}");
    }

    #[test]
    fn unreadable_clans_say_why() {
        let read = |v: serde_json::Value| ClanProfile::from_upstream(v.to_string().as_bytes());
        assert_eq!(
            read(json!({"tag": "#BAD!"})),
            Err(ClanError::Tag("#BAD!".into()))
        );
        assert!(
            matches!(read(json!({"name": "x"})), Err(ClanError::Shape(m)) if m.contains("tag"))
        );
        assert_eq!(
            read(json!({"tag": "#QLRG2UV0", "memberList": {}})),
            Err(ClanError::Shape(
                "`memberList` is an object, not a list".into()
            ))
        );
        assert!(matches!(page(json!([])), Err(ClanError::Shape(_))));
        let bare = read(json!({"tag": "#QLRG2UV0"})).unwrap().profile;
        assert_eq!(
            (bare.clan_type, bare.location, bare.member_list.len()),
            (None, None, 0)
        );
    }
}
