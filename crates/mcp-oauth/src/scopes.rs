//! Scope sets and the ticking rules of the consent page: what is offered, what is ticked,
//! and what a submitted form may grant. Canonical order is the configuration's order.

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

/// A requested `scope` parameter: `Ok(None)` when absent or blank (the client names none in
/// particular), `Ok(Some(set))` in canonical order, `Err(name)` for the first unknown name.
pub fn parse_requested(
    config: &AuthServerConfig,
    value: Option<&str>,
) -> Result<Option<Vec<String>>, String> {
    let Some(value) = value else { return Ok(None) };
    if value.trim().is_empty() {
        return Ok(None);
    }
    let names = split(value);
    if let Some(unknown) = names.iter().find(|n| !config.scopes.contains(n)) {
        return Err(unknown.clone());
    }
    Ok(Some(canonical(config, &names)))
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
        assert!(parse_requested(&c, Some("cr:read bogus")).is_err());
        assert_eq!(parse_requested(&c, Some("  ")), Ok(None));
        assert_eq!(
            parse_requested(&c, Some("feedback:write cr:read")),
            Ok(Some(v(&["cr:read", "feedback:write"])))
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
}
