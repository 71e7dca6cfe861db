//! Property tests of the OAuth parameters and form bodies: PKCE verifiers (43–128 unreserved
//! characters, at the bounds and one past), redirect URIs (what registration accepts, the
//! 2000-character bound, loopback matching on any port), requested scopes, `resource`, and
//! `application/x-www-form-urlencoded` bodies (`web::Form`). Properties: never a panic, the same
//! input the same answer, an accepted input round-trips; over HTTP (bounded: 24 token
//! requests, 24 registrations and 24 authorization requests per backend, both backends) never
//! a 5xx, an RFC 6749 error body on every 4xx of the JSON endpoints, the same answer twice, and
//! a registration that is accepted echoes its redirect URIs.
//!
//! Cases and seed come from `testkit::prop` (`PROPTEST_CASES`, `PROPTEST_RNG_SEED`; a failure
//! prints both).

use mcp_oauth::crypto::{is_s256_challenge, pkce_challenge, pkce_s256_matches};
use mcp_oauth::redirect::{self, check_registrable};
use mcp_oauth::scopes::{join, parse_requested};
use mcp_oauth::web::Form;
use proptest::prelude::*;
use serde_json::json;
use testkit::prop::{config, sample};

use crate::harness::{ALL_SCOPES, Backend, Harness, PERSON_DOOR, form, test_config};
use crate::on_both;

const UNRESERVED: &str = "[A-Za-z0-9._~-]";

fn verifier(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{UNRESERVED}{{{},{}}}", len.start(), len.end()))
        .unwrap()
}

fn uri() -> impl Strategy<Value = String> {
    prop_oneof![
        "https://[a-z]{1,10}\\.example(:[0-9]{1,5})?(/[a-zA-Z0-9._~%-]{0,12}){0,3}(\\?[a-z]=[a-z0-9]{0,4})?",
        "http://(127\\.0\\.0\\.1|\\[::1\\]|localhost)(:[0-9]{1,5})?/[a-z]{0,8}",
        "http://[a-z]{1,8}\\.example/cb",
        "(javascript|data|file|ws|com\\.example\\.app|JAVASCRIPT):[/a-z]{0,10}",
        "https://[a-z]{1,5}(:[a-z]{1,4})?@[a-z]{1,6}\\.example/",
        "https://[a-z]{1,6}\\.example/#[a-z]{0,4}",
        ".{0,40}",
    ]
}

fn form_pairs() -> impl Strategy<Value = Vec<(String, String)>> {
    let name = prop_oneof![
        proptest::sample::select(vec![
            "grant_type",
            "code",
            "redirect_uri",
            "client_id",
            "code_verifier",
            "refresh_token",
            "resource",
            "scope",
            "state",
            "csrf",
            "request",
            "email",
        ])
        .prop_map(str::to_owned),
        ".{0,8}",
    ];
    let value = prop_oneof![
        proptest::sample::select(vec![
            "authorization_code",
            "refresh_token",
            "client_credentials",
            PERSON_DOOR,
            "https://client.example/callback",
            "cr:read",
            "cr:read feedback:write",
        ])
        .prop_map(str::to_owned),
        ".{0,40}",
    ];
    proptest::collection::vec((name, value), 0..8)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_verifier_of_43_to_128_unreserved_characters_matches_its_challenge(v in verifier(43..=128)) {
        let challenge = pkce_challenge(&v);
        prop_assert!(is_s256_challenge(&challenge));
        prop_assert!(pkce_s256_matches(&v, &challenge));
        prop_assert_eq!(pkce_challenge(&v), challenge);
    }

    #[test]
    fn a_verifier_one_past_either_bound_or_with_another_character_never_matches(
        short in verifier(42..=42),
        long in verifier(129..=129),
        ok in verifier(43..=128),
        at in any::<proptest::sample::Index>(),
        bad in any::<char>().prop_filter("not unreserved", |c| !(c.is_ascii_alphanumeric() || "-._~".contains(*c))),
    ) {
        prop_assert!(!pkce_s256_matches(&short, &pkce_challenge(&short)));
        prop_assert!(!pkce_s256_matches(&long, &pkce_challenge(&long)));
        let mut chars: Vec<char> = ok.chars().collect();
        let i = at.index(chars.len());
        chars[i] = bad;
        let poisoned: String = chars.into_iter().collect();
        prop_assert!(!pkce_s256_matches(&poisoned, &pkce_challenge(&poisoned)));
        // any challenge text at all: never a panic
        prop_assert!(!pkce_s256_matches(&ok, &poisoned));
    }

    #[test]
    fn redirect_uris_are_judged_the_same_every_time_and_accepted_ones_are_clean(uri in uri()) {
        let first = check_registrable(&uri);
        prop_assert_eq!(&first, &check_registrable(&uri));
        if first.is_ok() {
            prop_assert!(!uri.contains('#') && uri.len() <= redirect::MAX_LEN);
            prop_assert!(!uri.bytes().any(|b| b <= 0x20 || b == 0x7f));
            let scheme = uri.split(':').next().unwrap_or("").to_ascii_lowercase();
            prop_assert!(!["javascript", "data", "file", "ws", "wss"].contains(&scheme.as_str()), "{uri}");
            prop_assert!(redirect::matches(&uri, &uri));
        } else {
            prop_assert!(!first.unwrap_err().is_empty());
        }
    }

    #[test]
    fn the_redirect_uri_length_bound_holds_at_2000_and_one_past(path in "[a-z]{1,8}") {
        let base = format!("https://client.example/{path}?p=");
        let at = format!("{base}{}", "a".repeat(redirect::MAX_LEN - base.len()));
        let past = format!("{at}a");
        prop_assert!(check_registrable(&at).is_ok());
        prop_assert!(check_registrable(&past).is_err());
    }

    #[test]
    fn loopback_redirects_match_on_any_port_and_nothing_else(
        host in proptest::sample::select(vec!["127.0.0.1", "[::1]", "localhost"]),
        a in 1u16..=65535,
        b in 1u16..=65535,
        path in "/[a-z]{0,6}",
        other in "/[a-z]{1,6}",
    ) {
        let registered = format!("http://{host}:{a}{path}");
        let other_port = format!("http://{host}:{b}{path}");
        let no_port = format!("http://{host}{path}");
        let other_path = format!("http://{host}:{b}{other}");
        prop_assert!(redirect::matches(&registered, &other_port));
        prop_assert!(redirect::matches(&registered, &no_port));
        if other != path {
            prop_assert!(!redirect::matches(&registered, &other_path));
        }
        // only loopback http matches on another port
        let https_a = format!("https://c.example:{a}{path}");
        let https_b = format!("https://c.example:{b}{path}");
        prop_assert_eq!(redirect::matches(&https_a, &https_b), a == b);
    }

    #[test]
    fn requested_scopes_parse_the_same_and_round_trip(
        names in proptest::collection::vec(prop_oneof![
            proptest::sample::select(ALL_SCOPES.to_vec()).prop_map(str::to_owned),
            "[a-z:]{0,8}",
        ], 0..6),
        sep in proptest::sample::select(vec![" ", "  ", "\t", "+"]),
    ) {
        let config = test_config();
        let text = names.join(sep);
        let first = parse_requested(&config, Some(&text));
        prop_assert_eq!(&first, &parse_requested(&config, Some(&text)));
        match first {
            Ok(requested) => {
                // defined names: the configuration's order, no duplicates, and they read back
                // as themselves; every other name is left out and listed as ignored, never an
                // error
                let set = requested.known.clone().unwrap_or_default();
                let canonical: Vec<String> = config.scopes.iter().filter(|s| set.contains(s)).cloned().collect();
                prop_assert_eq!(&set, &canonical);
                for ignored in &requested.ignored {
                    prop_assert!(!config.scopes.contains(ignored), "{}", ignored);
                }
                for name in text.split(' ').filter(|n| !n.is_empty()) {
                    prop_assert!(set.iter().any(|s| s == name) || requested.ignored.iter().any(|i| i == name), "{}", name);
                }
                if !set.is_empty() {
                    let again = parse_requested(&config, Some(&join(&set))).unwrap();
                    prop_assert_eq!(again.known, Some(set.clone()));
                    prop_assert!(again.ignored.is_empty());
                } else {
                    prop_assert!(requested.known.is_none());
                }
            }
            // a tab (or any character outside the scope grammar) is malformed, never a panic
            Err(_) => prop_assert!(text.contains('\t')),
        }
    }

    #[test]
    fn form_bodies_parse_without_panic_and_round_trip(pairs in form_pairs(), raw in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Form::parse(&raw);
        let mut body = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &pairs {
            body.append_pair(k, v);
        }
        let parsed = Form::parse(body.finish().as_bytes());
        for (k, v) in &pairs {
            let all: Vec<String> = pairs.iter().filter(|(n, _)| n == k).map(|(_, v)| v.clone()).collect();
            prop_assert_eq!(parsed.all(k), all.clone());
            prop_assert_eq!(parsed.count(k), all.len());
            prop_assert_eq!(parsed.get(k), all.first().map(String::as_str));
            let _ = v;
        }
    }
}

/// An RFC 6749 §5.2 / RFC 7591 §3.2.2 error body.
fn assert_oauth_error(status: u16, body: &str) {
    let doc: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{status} not JSON ({e}): {body}"));
    let code = doc["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{status}: {body}"));
    assert!(
        [
            "invalid_request",
            "invalid_client",
            "invalid_grant",
            "unauthorized_client",
            "unsupported_grant_type",
            "invalid_scope",
            "invalid_target",
            "invalid_redirect_uri",
            "invalid_client_metadata",
            "slow_down",
            "temporarily_unavailable",
        ]
        .contains(&code),
        "{status}: {body}"
    );
}

async fn endpoints_never_fail_and_answer_alike(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    for pairs in sample(&form_pairs(), 24) {
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let first = h.post_token(&refs).await;
        assert!(
            first.status.as_u16() < 500,
            "{pairs:?}: {} {}",
            first.status,
            first.body
        );
        if first.status.is_client_error() {
            assert_oauth_error(first.status.as_u16(), &first.body);
        }
        let again = h.post_token(&refs).await;
        assert_eq!(
            (first.status, first.body.clone()),
            (again.status, again.body),
            "{pairs:?}"
        );
    }
    let registrations = (proptest::collection::vec(uri(), 0..3), ".{0,12}");
    for (i, (uris, name)) in sample(&registrations, 24).into_iter().enumerate() {
        let address = format!("198.51.100.{}", i + 1);
        let reply = h
            .register_from(
                &address,
                json!({"client_name": name, "redirect_uris": uris}),
            )
            .await;
        assert!(
            reply.status.as_u16() < 500,
            "{uris:?}: {} {}",
            reply.status,
            reply.body
        );
        if reply.status.as_u16() == 201 {
            assert_eq!(reply.json()["redirect_uris"], json!(uris));
            assert!(
                uris.iter().all(|u| check_registrable(u).is_ok()),
                "{uris:?}"
            );
        } else {
            assert_oauth_error(reply.status.as_u16(), &reply.body);
        }
    }
    let req = h.client_request().await;
    let challenge = pkce_challenge(&req.verifier);
    for pairs in sample(&form_pairs(), 24) {
        let mut query = vec![
            ("response_type", "code".to_owned()),
            ("client_id", req.client_id.clone()),
            ("redirect_uri", req.redirect_uri.clone()),
            ("code_challenge", challenge.clone()),
            ("code_challenge_method", "S256".to_owned()),
        ];
        // the generated pairs override or add parameters (resource, scope, state, …)
        for (k, v) in &pairs {
            query.retain(|(n, _)| n != k);
            query.push((k.as_str(), v.clone()));
        }
        let refs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let uri = format!("/oauth/authorize?{}", form(&refs));
        let first = h.get(&uri, &[]).await;
        assert!(
            first.status.as_u16() < 500,
            "{uri}: {} {}",
            first.status,
            first.body
        );
        let again = h.get(&uri, &[]).await;
        assert_eq!(first.status, again.status, "{uri}");
        assert_eq!(first.location(), again.location(), "{uri}");
    }
}

on_both!(endpoints_never_fail_and_answer_alike);

/// Found by `endpoints_never_fail_and_answer_alike` on PostgreSQL: a `client_id` with NUL in
/// it was a 500 (the database refuses NUL in text); it is an unknown client like any other.
async fn a_client_id_with_nul_is_an_unknown_client(backend: Backend) {
    let Some(h) = Harness::new(backend).await else {
        return;
    };
    let req = h.client_request().await;
    let query = form(&[
        ("response_type", "code"),
        ("client_id", "abc\0def"),
        ("redirect_uri", &req.redirect_uri),
        ("code_challenge", &pkce_challenge(&req.verifier)),
        ("code_challenge_method", "S256"),
        ("resource", PERSON_DOOR),
    ]);
    let page = h.get(&format!("/oauth/authorize?{query}"), &[]).await;
    assert_eq!(page.status.as_u16(), 400, "{}", page.body);
    let token = h
        .post_token(&[
            ("grant_type", "authorization_code"),
            ("client_id", "abc\0def"),
            ("code", "x"),
            ("code_verifier", &req.verifier),
            ("redirect_uri", &req.redirect_uri),
        ])
        .await;
    assert!(
        token.status.is_client_error(),
        "{} {}",
        token.status,
        token.body
    );
    assert_oauth_error(token.status.as_u16(), &token.body);
}

on_both!(a_client_id_with_nul_is_an_unknown_client);
