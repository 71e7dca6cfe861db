//! The one grammar of door paths: `/mcp` (a person's door), `/a/<public_id>/mcp` (an
//! agent's) and `/i/<public_id>/mcp` (an integration's). Parsing a path, writing an agent's
//! door and the routes the server mounts all come from here; what a door does is `app`'s and
//! `gate`'s. Pure: no HTTP or SQL.

use crate::access::kinds::{Kind, is_public_id};

/// A person's door.
pub const PERSON_DOOR: &str = "/mcp";

/// The last segment of every door.
const SUFFIX: &str = "/mcp";

/// The first segment of an agent's or integration's door (`a` or `i`).
fn segment(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Person => None,
        Kind::Agent => Some("a"),
        Kind::Integration => Some("i"),
    }
}

/// The door kind a path names, by shape alone, and the public id of an agent or integration
/// door. Anything else (another prefix, a malformed id, a trailing slash) is `None`.
pub fn parse(path: &str) -> Option<(Kind, Option<&str>)> {
    if path == PERSON_DOOR {
        return Some((Kind::Person, None));
    }
    let rest = path.strip_prefix('/')?;
    let (prefix, rest) = rest.split_once('/')?;
    let id = rest.strip_suffix(SUFFIX)?;
    let kind = [Kind::Agent, Kind::Integration]
        .into_iter()
        .find(|k| segment(*k) == Some(prefix))?;
    is_public_id(id).then_some((kind, Some(id)))
}

/// The public id in `path` when it is a door of `kind` (never for a person's door).
pub fn public_id_for(kind: Kind, path: &str) -> Option<&str> {
    match parse(path) {
        Some((k, id)) if k == kind => id,
        _ => None,
    }
}

/// The door of the agent or integration `public_id`: `/a/<id>/mcp` or `/i/<id>/mcp`. Only
/// those two kinds own public ids; any other kind is given an agent's door.
pub fn agent_door(kind: Kind, public_id: &str) -> String {
    format!("/{}/{public_id}{SUFFIX}", segment(kind).unwrap_or("a"))
}

/// The route the server mounts for a kind's doors (axum path syntax).
pub fn route(kind: Kind) -> &'static str {
    match kind {
        Kind::Person => PERSON_DOOR,
        Kind::Agent => "/a/{public_id}/mcp",
        Kind::Integration => "/i/{public_id}/mcp",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn door_shapes() {
        assert_eq!(parse("/mcp"), Some((Kind::Person, None)));
        assert_eq!(
            parse("/a/abcd1234/mcp"),
            Some((Kind::Agent, Some("abcd1234")))
        );
        assert_eq!(
            parse("/i/abcd1234/mcp"),
            Some((Kind::Integration, Some("abcd1234")))
        );
        for bad in [
            "/a/ABCD1234/mcp",
            "/a/abc/mcp",
            "/x/abcd1234/mcp",
            "/mcp/",
            "/a/abcd1234",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn written_doors_parse_back() {
        for kind in [Kind::Agent, Kind::Integration] {
            let path = agent_door(kind, "abcd1234");
            assert_eq!(parse(&path), Some((kind, Some("abcd1234"))));
            assert_eq!(public_id_for(kind, &path), Some("abcd1234"));
        }
        assert_eq!(agent_door(Kind::Integration, "abcd1234"), "/i/abcd1234/mcp");
        assert_eq!(public_id_for(Kind::Agent, "/i/abcd1234/mcp"), None);
        assert_eq!(public_id_for(Kind::Person, "/mcp"), None);
        // Each route has the shape its doors parse with.
        for kind in Kind::ALL {
            let path = route(kind).replace("{public_id}", "abcd1234");
            assert_eq!(parse(&path).map(|(k, _)| k), Some(kind));
        }
    }
}
