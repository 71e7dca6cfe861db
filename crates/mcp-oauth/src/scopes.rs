//! Scope sets and the ticking rules of the consent page: how a requested `scope` parameter is
//! read (its bounds and grammar; names the server does not define are left out, never an
//! error, RFC 6749 §3.3), what is offered, what is ticked, and what a submitted form may
//! grant. Canonical order is the configuration's order.

use crate::config::AuthServerConfig;

/// Sorts `scopes` into canonical order and drops duplicates and unknown names.
pub fn canonical(config: &AuthServerConfig, scopes: &[String]) -> Vec<String> {
    config
        .scopes
        .iter()
        .filter(|s| scopes.contains(s))
        .cloned()
        .collect()
}

/// Space-joined, as on the wire.
pub fn join(scopes: &[String]) -> String {
    scopes.join(" ")
}

/// Splits a space-separated list (stored or on the wire); empty items are dropped.
pub fn split(value: &str) -> Vec<String> {
    value
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The longest `scope` parameter accepted, in bytes (every accepted byte is one ASCII
/// character), at the authorize and the token endpoint alike.
pub const MAX_SCOPE_PARAM: usize = 1024;

/// Why a `scope` parameter is refused. Unknown names are never a reason: they are left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeSyntax {
    /// Longer than [`MAX_SCOPE_PARAM`] bytes.
    TooLong,
    /// A character outside RFC 6749 §3.3's `scope-token` grammar (printable ASCII except `"`
    /// and `\`) other than the space that separates names.
    Malformed,
}

impl std::fmt::Display for ScopeSyntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLong => write!(
                f,
                "The scope parameter is longer than {MAX_SCOPE_PARAM} characters."
            ),
            Self::Malformed => f.write_str(
                "The scope parameter may hold only printable ASCII characters other than \" and \\, \
                 with names separated by spaces (RFC 6749 section 3.3).",
            ),
        }
    }
}

/// A requested `scope` parameter, read as RFC 6749 §3.3 allows: the names this server defines
/// are kept, the others are left out of the grant (never an error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    /// The defined names in canonical order, without duplicates; `None` when the client names
    /// no defined scope (absent, blank, or only unknown names): the defaults apply.
    pub known: Option<Vec<String>>,
    /// The names this server does not define, without duplicates, in the order given. Names
    /// are case-sensitive (§3.3), so `CR:READ` is one of these.
    pub ignored: Vec<String>,
}

impl Requested {
    /// What is stored with a pending authorization, read back with [`parse_requested`]: the
    /// defined names, then the ignored ones. `None` when the client named nothing.
    pub fn stored(&self) -> Option<String> {
        let mut names = self.known.clone().unwrap_or_default();
        names.extend(self.ignored.iter().cloned());
        (!names.is_empty()).then(|| join(&names))
    }
}

/// Whether `c` may appear in a scope name (RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`).
fn scope_token_char(c: char) -> bool {
    matches!(c, '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E')
}

/// Parses a requested `scope` parameter (absent or blank: the client names none). Refused only
/// when too long or outside the grammar; names may be separated by more than one space.
pub fn parse_requested(
    config: &AuthServerConfig,
    value: Option<&str>,
) -> Result<Requested, ScopeSyntax> {
    let Some(value) = value else {
        return Ok(Requested::default());
    };
    if value.len() > MAX_SCOPE_PARAM {
        return Err(ScopeSyntax::TooLong);
    }
    if !value.chars().all(|c| c == ' ' || scope_token_char(c)) {
        return Err(ScopeSyntax::Malformed);
    }
    let names = split(value);
    let known = canonical(config, &names);
    let mut ignored: Vec<String> = Vec::new();
    for name in names.into_iter().filter(|n| !config.scopes.contains(n)) {
        if !ignored.contains(&name) {
            ignored.push(name);
        }
    }
    Ok(Requested {
        known: (!known.is_empty()).then_some(known),
        ignored,
    })
}

/// One line of the consent page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub scope: String,
    /// Ticked when the page first shows.
    pub ticked: bool,
    /// Granted with the connection and not a checkbox (an unasked scope the client asked for).
    pub fixed: bool,
}

/// What the consent page offers for a request:
/// - a client naming no scope gets every default scope ticked and any other scope that is
///   not unasked unticked;
/// - a client naming scopes gets those ticked and every other offerable scope unticked;
/// - an unasked scope appears only when named, as a fixed line (the person can decline the
///   whole connection, not that line).
pub fn offers(config: &AuthServerConfig, requested: Option<&[String]>) -> Vec<Offer> {
    config
        .scopes
        .iter()
        .filter_map(|scope| {
            let unasked = config.unasked_scopes.contains(scope);
            let named = requested.is_some_and(|r| r.contains(scope));
            if unasked {
                return named.then(|| Offer {
                    scope: scope.clone(),
                    ticked: true,
                    fixed: true,
                });
            }
            let ticked = match requested {
                None => config.default_scopes.contains(scope),
                Some(_) => named,
            };
            Some(Offer {
                scope: scope.clone(),
                ticked,
                fixed: false,
            })
        })
        .collect()
}

/// What a consent form grants: the ticked offerable checkboxes plus the fixed lines, in
/// canonical order. Ticks that were never offered (a tampered form) are ignored.
pub fn granted(
    config: &AuthServerConfig,
    requested: Option<&[String]>,
    ticked: &[String],
) -> Vec<String> {
    let chosen: Vec<String> = offers(config, requested)
        .into_iter()
        .filter(|o| o.fixed || ticked.contains(&o.scope))
        .map(|o| o.scope)
        .collect();
    canonical(config, &chosen)
}

/// The scopes a product may set on an existing grant: known names, and unasked ones only if
/// the grant already holds them.
pub fn editable(
    config: &AuthServerConfig,
    current: &[String],
    wanted: &[String],
) -> Result<Vec<String>, String> {
    for name in wanted {
        if !config.scopes.contains(name) {
            return Err(format!("unknown scope {name}"));
        }
        if config.unasked_scopes.contains(name) && !current.contains(name) {
            return Err(format!("{name} is never added to an existing connection"));
        }
    }
    Ok(canonical(config, wanted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn config() -> AuthServerConfig {
        let scopes = [
            "cr:read",
            "recordings:write",
            "feedback:write",
            "account:email",
        ];
        let mut c = AuthServerConfig::new(
            "https://a.example",
            Secret::new([1u8; 32]),
            scopes.iter().map(|s| s.to_string()).collect(),
        );
        c.default_scopes = scopes[..3].iter().map(|s| s.to_string()).collect();
        c.unasked_scopes = vec!["account:email".into()];
        c
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn no_scope_named_offers_every_default_ticked() {
        let c = config();
        let o = offers(&c, None);
        assert_eq!(o.len(), 3);
        assert!(o.iter().all(|o| o.ticked && !o.fixed));
    }

    #[test]
    fn asking_for_less_offers_the_rest_unticked() {
        let c = config();
        let req = v(&["cr:read"]);
        let o = offers(&c, Some(&req));
        assert_eq!(
            o.iter()
                .map(|o| (o.scope.as_str(), o.ticked))
                .collect::<Vec<_>>(),
            vec![
                ("cr:read", true),
                ("recordings:write", false),
                ("feedback:write", false)
            ]
        );
        // ticking an extra one adds it; a forged unasked tick is ignored
        assert_eq!(
            granted(
                &c,
                Some(&req),
                &v(&["feedback:write", "cr:read", "account:email"])
            ),
            v(&["cr:read", "feedback:write"])
        );
    }

    #[test]
    fn unasked_only_when_named_and_fixed() {
        let c = config();
        let req = v(&["cr:read", "account:email"]);
        let o = offers(&c, Some(&req));
        assert!(o.iter().any(|o| o.scope == "account:email" && o.fixed));
        assert_eq!(granted(&c, Some(&req), &[]), v(&["account:email"]));
        assert_eq!(
            parse_requested(&c, Some("feedback:write cr:read")),
            Ok(Requested {
                known: Some(v(&["cr:read", "feedback:write"])),
                ignored: vec![]
            })
        );
    }

    #[test]
    fn editing_never_adds_unasked() {
        let c = config();
        assert!(editable(&c, &v(&["cr:read"]), &v(&["account:email"])).is_err());
        assert_eq!(
            editable(
                &c,
                &v(&["cr:read", "account:email"]),
                &v(&["account:email"])
            ),
            Ok(v(&["account:email"]))
        );
        assert_eq!(
            editable(&c, &v(&["cr:read"]), &v(&["feedback:write", "cr:read"])),
            Ok(v(&["cr:read", "feedback:write"]))
        );
    }

    #[test]
    fn unknown_names_are_left_out_never_refused() {
        let c = config();
        assert_eq!(parse_requested(&c, None), Ok(Requested::default()));
        assert_eq!(parse_requested(&c, Some("  ")), Ok(Requested::default()));
        let r = parse_requested(&c, Some("openid cr:read offline_access cr:read openid")).unwrap();
        assert_eq!(r.known, Some(v(&["cr:read"])));
        assert_eq!(r.ignored, v(&["openid", "offline_access"]));
        assert_eq!(r.stored().as_deref(), Some("cr:read openid offline_access"));
        assert_eq!(parse_requested(&c, r.stored().as_deref()), Ok(r));
        // only unknown names (case counts): the defaults apply
        let r = parse_requested(&c, Some("CR:READ offline_access")).unwrap();
        assert_eq!(r.known, None);
        assert_eq!(r.ignored, v(&["CR:READ", "offline_access"]));
    }

    #[test]
    fn the_parameter_is_bounded_and_follows_the_grammar() {
        let c = config();
        let at_bound = format!("cr:read {}", "x".repeat(MAX_SCOPE_PARAM - 8));
        assert_eq!(at_bound.len(), MAX_SCOPE_PARAM);
        assert!(parse_requested(&c, Some(&at_bound)).is_ok());
        let past = format!("{at_bound}x");
        assert_eq!(parse_requested(&c, Some(&past)), Err(ScopeSyntax::TooLong));
        for bad in [
            "cr:read\tfeedback:write",
            "a\"b",
            "a\\b",
            "caf\u{e9}",
            "a\u{7f}",
        ] {
            assert_eq!(
                parse_requested(&c, Some(bad)),
                Err(ScopeSyntax::Malformed),
                "{bad:?}"
            );
        }
        assert!(parse_requested(&c, Some("!#[]~ cr:read")).is_ok());
    }
}
