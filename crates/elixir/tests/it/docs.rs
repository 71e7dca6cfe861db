//! Documentation over MCP: every `docs` pointer the registry can emit resolves through both
//! `elixir_docs({page, section})` and `elixir://docs/<page>#<section>`; the Help tools, the
//! resources, the templates and the prompts (every tool's answer against its outputSchema is
//! `output_schemas`').

use elixir::access::kinds::Kind;
use elixir::content::Content;
use elixir::tools::{self, PLANNED_TOOLS};
use serde_json::{Value, json};

use crate::on_both_backends;
use crate::support::{spawn, success};

async fn every_docs_pointer_resolves(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    let pointers = tools::doc_pointers(&tools::registry());
    assert!(pointers.iter().any(|p| p == "tools-help#elixir-docs"));
    for pointer in &pointers {
        let (page, section) = match pointer.split_once('#') {
            Some((p, s)) => (p, Some(s)),
            None => (pointer.as_str(), None),
        };
        let mut args = json!({"page": page});
        if let Some(s) = section {
            args["section"] = json!(s);
        }
        let body = success(&person.tool("elixir_docs", args).await);
        assert_eq!(body["docs"], pointer.as_str(), "{pointer}");
        let read = person
            .request(
                "resources/read",
                json!({"uri": format!("elixir://docs/{pointer}")}),
            )
            .await;
        let text = read.result()["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{pointer}: {}", read.body))
            .to_owned();
        match section {
            Some(_) => assert_eq!(
                text,
                body["section"]["markdown"].as_str().unwrap(),
                "{pointer}"
            ),
            None => assert_eq!(
                text,
                body["page"]["markdown"].as_str().unwrap(),
                "{pointer}"
            ),
        }
    }
}

async fn help_tools(url: &str) {
    let server = spawn(url).await;
    let person = server.person();
    // index, page, search
    let index = success(&person.tool("elixir_docs", json!({})).await);
    let pages = index["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 25);
    let help = pages.iter().find(|p| p["slug"] == "tools-help").unwrap();
    let sections: Vec<&str> = help["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slug"].as_str().unwrap())
        .collect();
    for generated in [
        "elixir-changelog",
        "elixir-docs",
        "elixir-examples",
        "elixir-my-feedback",
        "elixir-feedback",
        "elixir-updates",
    ] {
        assert!(sections.contains(&generated), "{generated} in {sections:?}");
    }
    let account = success(
        &person
            .tool(
                "elixir_docs",
                json!({"page": "tools-account", "section": "elixir-settings"}),
            )
            .await,
    );
    assert!(
        account["section"]["markdown"]
            .as_str()
            .unwrap()
            .contains("Account · Settings")
    );
    let hits = success(
        &person
            .tool("elixir_docs", json!({"query": "hourly rate"}))
            .await,
    );
    let matches = hits["matches"].as_array().unwrap();
    assert!(
        matches
            .iter()
            .any(|m| m["page"] == "limits" && m["section"] == "hourly-rate"),
        "{hits}"
    );
    let none = success(
        &person
            .tool("elixir_docs", json!({"query": "qqqzzzxxx"}))
            .await,
    );
    assert_eq!(none["matches"], json!([]));
    assert_eq!(none["notes"].as_array().unwrap().len(), 1);
    // examples
    let all = success(&person.tool("elixir_examples", json!({})).await);
    let examples = all["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 11);
    let declared: Vec<&str> = tools::registry().iter().map(|s| s.name).collect();
    for e in examples {
        let listed = e["tools"].as_array().unwrap();
        for t in listed {
            assert!(declared.contains(&t.as_str().unwrap()), "{t}");
        }
        // an example with no tools to call is one that is coming, and says so
        assert_eq!(
            listed.is_empty(),
            e["outline"].as_str().unwrap().contains("\n> Coming:"),
            "{e}"
        );
    }
    let one = success(
        &person
            .tool("elixir_examples", json!({"example": "discord"}))
            .await,
    );
    assert_eq!(one["example"]["tools"], json!(["elixir_docs"]));
    // changelog paging with an exclusive since
    let log = success(&person.tool("elixir_changelog", json!({})).await);
    let total = log["total"].as_u64().unwrap();
    assert!(total >= 1);
    assert_eq!(
        log["applied"],
        json!({"limit": 20, "offset": 0, "verbosity": "full"})
    );
    let newest = log["entries"][0]["version"].as_str().unwrap().to_owned();
    let after = success(
        &person
            .tool("elixir_changelog", json!({"since": newest}))
            .await,
    );
    assert_eq!(after["total"], 0);
    assert_eq!(after["next_offset"], json!(null));
    if total >= 2 {
        let paged = success(&person.tool("elixir_changelog", json!({"limit": 1})).await);
        assert_eq!(paged["next_offset"], 1);
    }
    let updates = success(
        &person
            .tool("elixir_updates", json!({"since": "2000-01-01", "limit": 1}))
            .await,
    );
    assert!(updates["updates"].as_array().unwrap().len() <= 1);
}

async fn resources_templates_and_prompts(url: &str) {
    let server = spawn(url).await;
    let client = server.agent();
    let list = client
        .request("resources/list", json!({}))
        .await
        .result()
        .clone();
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    for uri in [
        "elixir://docs",
        "elixir://docs/limits",
        "elixir://examples",
        "elixir://examples/play",
        "elixir://changelog",
        "elixir://updates",
        "elixir://cards",
    ] {
        assert!(uris.contains(&uri), "{uri}");
    }
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .result()
        .clone();
    let t: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        t,
        [
            "elixir://docs/{slug}",
            "elixir://docs/{slug}#{section}",
            "elixir://examples/{slug}"
        ]
    );
    let read = |uri: &str| {
        let client = client.clone();
        let uri = uri.to_owned();
        async move { client.request("resources/read", json!({"uri": uri})).await }
    };
    let index: Value = serde_json::from_str(
        read("elixir://docs").await.result()["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(index["pages"].as_array().unwrap().len(), 25);
    let changelog = read("elixir://changelog").await;
    assert_eq!(
        changelog.result()["contents"][0]["mimeType"],
        "application/json"
    );
    assert!(
        read("elixir://examples/play").await.result()["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# ")
    );
    let cards: Value = serde_json::from_str(
        read("elixir://cards").await.result()["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(cards["cards"], Value::Null, "nothing read yet: {cards}");
    for (uri, code) in [
        ("elixir://cardz", -32002),
        ("elixir://docs/nope", -32002),
        ("elixir://docs/limits#nope", -32002),
        ("https://example.com", -32002),
    ] {
        let r = read(uri).await;
        assert_eq!(r.body["error"]["code"], code, "{uri}");
        assert_eq!(r.body["error"]["data"]["uri"], uri);
        assert!(r.body["error"]["data"]["hint"].is_string());
    }
    let prompts = client
        .request("prompts/list", json!({}))
        .await
        .result()
        .clone();
    // only the examples whose tools are built are prompts; the coming ones are not
    let names: Vec<&str> = prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["play", "deck", "ladder", "discord", "coverage"]);
    for name in &names {
        let got = client
            .request("prompts/get", json!({"name": name}))
            .await
            .result()
            .clone();
        let text = got["messages"][0]["content"]["text"].as_str().unwrap();
        assert_eq!(undeclared_in(text), Vec::<&str>::new(), "{name}: {text}");
        assert!(!named_tools(text).is_empty(), "{name}: {text}");
    }
    let got = client
        .request("prompts/get", json!({"name": "discord"}))
        .await
        .result()
        .clone();
    let messages = got["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    let text = messages[0]["content"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("A clanmate asks how Elixir counts win rate")
            && text.ends_with("Use these Elixir tools: elixir_docs."),
        "{text}"
    );
    let coming = client
        .request("prompts/get", json!({"name": "friends"}))
        .await;
    assert_eq!(coming.body["error"]["code"], -32602);
    assert_eq!(
        coming.body["error"]["data"]["candidates"],
        json!(["play", "deck", "ladder", "discord", "coverage"])
    );
    let unknown = client.request("prompts/get", json!({"name": "nope"})).await;
    assert_eq!(unknown.body["error"]["code"], -32602);
}

/// `markdown` without its coming passages: a blockquote whose first line starts `> Coming:`,
/// through every following line that starts with `>` (the marker `docs/elixir.md` documents).
fn outside_coming(markdown: &str) -> String {
    let mut kept = String::new();
    let mut coming = false;
    for line in markdown.lines() {
        let quoted = line.trim_start();
        coming = quoted.starts_with("> Coming:") || (coming && quoted.starts_with('>'));
        if !coming {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The coming passages of `markdown`, each as its lines (the same marker as [`outside_coming`]).
fn coming_passages(markdown: &str) -> Vec<String> {
    let mut passages: Vec<String> = Vec::new();
    let mut coming = false;
    for line in markdown.lines() {
        let quoted = line.trim_start();
        let starts = quoted.starts_with("> Coming:");
        let continues = coming && !starts && quoted.starts_with('>');
        coming = starts || continues;
        if starts {
            passages.push(String::new());
        }
        if coming && let Some(passage) = passages.last_mut() {
            passage.push_str(line);
            passage.push('\n');
        }
    }
    passages
}

/// The names of SURFACE's 44 tools that `text` mentions as whole words.
fn named_tools(text: &str) -> Vec<&'static str> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    PLANNED_TOOLS
        .iter()
        .copied()
        .filter(|name| {
            text.match_indices(name).any(|(at, _)| {
                !text[..at].ends_with(word) && !text[at + name.len()..].starts_with(word)
            })
        })
        .collect()
}

/// The planned tools `text` names outside coming passages that this build does not declare.
fn undeclared_in(text: &str) -> Vec<&'static str> {
    let declared: Vec<&str> = tools::registry().iter().map(|s| s.name).collect();
    named_tools(&outside_coming(text))
        .into_iter()
        .filter(|name| !declared.contains(name))
        .collect()
}

#[test]
fn the_coming_marker_is_what_the_check_skips() {
    let text = "Use `elixir_docs`.\n\n> Coming: `battles_query` will list battles.\n> More on `war_current`.\n\nNot `clans_roster`, nor clans_rosters.\n";
    assert_eq!(undeclared_in(text), ["clans_roster"]);
    assert_eq!(named_tools(text).len(), 4, "{:?}", named_tools(text));
    assert!(undeclared_in("> Coming soon: `war_current`").contains(&"war_current"));
}

#[test]
fn coming_passages_are_found_one_by_one() {
    let text = "> Coming: `war_current`.\n> And `elixir_docs`.\nPlain `battles_query`.\n> Quoted.\n\n> Coming: `live_fetch`.\n> Coming: `clans_roster`.\n";
    let passages = coming_passages(text);
    assert_eq!(
        passages,
        [
            "> Coming: `war_current`.\n> And `elixir_docs`.\n",
            "> Coming: `live_fetch`.\n",
            "> Coming: `clans_roster`.\n"
        ]
    );
    assert_eq!(coming_passages(&outside_coming(text)), Vec::<String>::new());
}

/// A coming passage that names tools names at least one this build does not declare: once
/// every tool it names answers, it is no longer coming and must be rewritten as plain text.
/// An example is coming (title, empty tool list, `Tools: none yet`) exactly when it has a
/// coming passage, and its `Tools:` line is its tool list.
#[test]
fn nothing_built_is_still_called_coming() {
    let specs = tools::registry();
    let declared: Vec<&str> = specs.iter().map(|s| s.name).collect();
    let content = Content::load(&tools::docs_sections(&specs)).unwrap();
    let mut stale = Vec::new();
    let texts = content
        .pages
        .iter()
        .map(|p| (format!("docs/{}", p.slug), p.markdown.clone()))
        .chain(
            content
                .examples
                .iter()
                .map(|e| (format!("examples/{}", e.slug), e.markdown.clone())),
        );
    for (at, markdown) in texts {
        for passage in coming_passages(&markdown) {
            let named = named_tools(&passage);
            if !named.is_empty() && named.iter().all(|n| declared.contains(n)) {
                stale.push(format!("{at}: every tool of {passage:?} is declared"));
            }
        }
    }
    for e in &content.examples {
        let coming = !coming_passages(&e.markdown).is_empty();
        if coming != e.tools.is_empty() || coming != e.title.ends_with(" (coming)") {
            stale.push(format!(
                "examples/{}: coming passage {coming}, tools {:?}, title {:?}",
                e.slug, e.tools, e.title
            ));
        }
        let line = if e.tools.is_empty() {
            "Tools: none yet".to_owned()
        } else {
            format!("Tools: {}", e.tools.join(", "))
        };
        if !e.markdown.lines().any(|l| l == line) {
            stale.push(format!("examples/{}: no line {line:?}", e.slug));
        }
    }
    assert!(stale.is_empty(), "{stale:#?}");
}

/// The counts of tools per door kind that tools.md, protocol.md and agents.md state, and the
/// tools each kind does not see, are the registry's.
#[test]
fn tool_counts_on_pages_are_the_registry() {
    let specs = tools::registry();
    let content = Content::load(&tools::docs_sections(&specs)).unwrap();
    let page = |slug: &str| {
        content
            .pages
            .iter()
            .find(|p| p.slug == slug)
            .map(|p| p.markdown.clone())
            .unwrap()
    };
    let sees = |kind: Kind| specs.iter().filter(|s| s.kinds.contains(&kind)).count();
    let hidden = |kind: Kind| {
        let mut names: Vec<String> = specs
            .iter()
            .filter(|s| !s.kinds.contains(&kind))
            .map(|s| format!("`{}`", s.name))
            .collect();
        names.sort();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    };
    let (person, agent, integration) = (
        sees(Kind::Person),
        sees(Kind::Agent),
        sees(Kind::Integration),
    );
    let mut groups: Vec<&str> = specs.iter().map(|s| s.group.label()).collect();
    groups.dedup();
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    let expected = [
        (
            "tools",
            format!(
                "this build declares {} of them, in {} groups: {}.",
                specs.len(),
                words[groups.len()],
                match groups.split_last() {
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                }
            ),
        ),
        (
            "tools",
            format!(
                "A person's door sees {person} (all but {})",
                hidden(Kind::Person)
            ),
        ),
        (
            "tools",
            format!("an agent's door {agent} (all but {})", hidden(Kind::Agent)),
        ),
        (
            "tools",
            format!("a legacy integration's door {integration} "),
        ),
        (
            "protocol",
            format!(
                "| {person} of this build: all but {} |",
                hidden(Kind::Person)
            ),
        ),
        (
            "protocol",
            format!("| {agent} of this build: all but {} |", hidden(Kind::Agent)),
        ),
        (
            "protocol",
            format!("| {integration} of this build: the agent set minus "),
        ),
        (
            "agents",
            format!("Its tool list in this build has {agent} tools"),
        ),
        ("agents", format!("work the same way with {integration}:")),
    ];
    let mut wrong = Vec::new();
    for (slug, phrase) in &expected {
        if !page(slug).contains(phrase.as_str()) {
            wrong.push(format!("docs/{slug} lacks {phrase:?}"));
        }
    }
    // the integration's missing tools, against the agent set
    let minus: Vec<&str> = specs
        .iter()
        .filter(|s| s.kinds.contains(&Kind::Agent) && !s.kinds.contains(&Kind::Integration))
        .map(|s| s.name)
        .collect();
    let protocol = page("protocol");
    let row = protocol
        .lines()
        .find(|l| l.starts_with("| integration |"))
        .unwrap_or_default();
    for name in &minus {
        if !row.contains(&format!("`{name}`")) {
            wrong.push(format!("docs/protocol's integration row lacks {name}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn docs_and_examples_name_only_declared_tools() {
    let specs = tools::registry();
    let content = Content::load(&tools::docs_sections(&specs)).unwrap();
    let mut found = Vec::new();
    for page in &content.pages {
        for name in undeclared_in(&page.markdown) {
            found.push(format!("docs/{}: {name}", page.slug));
        }
    }
    for e in &content.examples {
        let listed = e.tools.join(" ");
        let text = format!("{}\n{}\n{listed}\n{}", e.title, e.question, e.markdown);
        for name in undeclared_in(&text) {
            found.push(format!("examples/{}: {name}", e.slug));
        }
    }
    assert!(found.is_empty(), "named but not declared: {found:#?}");
}

/// Every link between pages (`](page)` or `](page#section)`) reaches a page and an H2.
#[test]
fn links_between_pages_resolve() {
    let content = Content::load(&tools::docs_sections(&tools::registry())).unwrap();
    let mut broken = Vec::new();
    for (slug, markdown) in content
        .pages
        .iter()
        .map(|p| (p.slug.clone(), p.markdown.clone()))
        .chain(
            content
                .examples
                .iter()
                .map(|e| (e.slug.clone(), e.markdown.clone())),
        )
    {
        for (at, _) in markdown.match_indices("](") {
            let rest = &markdown[at + 2..];
            let target = &rest[..rest.find(')').unwrap_or(rest.len())];
            if target.contains("://") || target.starts_with('/') {
                continue;
            }
            if !content.resolves(target) {
                broken.push(format!("{slug} -> {target}"));
            }
        }
        for (at, _) in markdown.match_indices("elixir_docs({\"page\": \"") {
            let call = &markdown[at..];
            let call = &call[..call.find("})").unwrap_or(call.len())];
            let value = |key: &str| {
                let start = call.find(&format!("\"{key}\": \""))? + key.len() + 5;
                let len = call[start..].find('"')?;
                Some(call[start..start + len].to_owned())
            };
            let Some(page) = value("page").filter(|p| !p.starts_with('<')) else {
                continue;
            };
            let target = match value("section") {
                Some(section) => format!("{page}#{section}"),
                None => page,
            };
            if !content.resolves(&target) {
                broken.push(format!("{slug} -> {call}"));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

on_both_backends!(
    every_docs_pointer_resolves,
    help_tools,
    resources_templates_and_prompts
);
