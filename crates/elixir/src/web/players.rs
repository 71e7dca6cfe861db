//! Account → Players: the players and clans the signed-in person tracks, each with its
//! recording state, last poll and the coverage gaps of the last 30 days, and per player two
//! server-rendered SVG pictures (no script): trophies over the last 30 days and the win rate
//! by mode, each with the same facts as text beside it for screen readers and for anyone who
//! prefers numbers.

use axum::extract::State;
use axum::response::Response;
use http::StatusCode;

use super::account::{SignedIn, store_failed};
use super::page::{Web, esc, html, layout};
use crate::domain::{Millis, iso};
use crate::model::{PlayerSnapshot, Poll, PollEndpoint, Principal, RecordedBattle};
use crate::store::BattleQuery;

const DAY_MS: Millis = 24 * 3_600_000;
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 160.0;
const PAD: f64 = 28.0;

/// `GET /account/players`.
pub(crate) async fn page(
    State(web): State<Web>,
    SignedIn {
        account_id: account,
        csrf,
    }: SignedIn,
) -> Response {
    let store = &web.services.store;
    let now = web.services.now();
    let from = now - 30 * DAY_MS;
    // The window ends just after now, so a read made this instant is in it.
    let to = now + 1;
    let players = match store.tracked_players(account, Principal::Person).await {
        Ok(p) => p,
        Err(e) => return store_failed(e),
    };
    let clans = match store.tracked_clans(account, Principal::Person).await {
        Ok(c) => c,
        Err(e) => return store_failed(e),
    };
    let mut body = String::from(
        "<p>What Elixir records for you: the players and clans you track (with \
         <code>elixir_track_player</code> and <code>elixir_track_clan</code>), how their \
         recording stands, and the last 30 days in two pictures per player.</p>",
    );
    body.push_str("<h2>Clans</h2>");
    if clans.is_empty() {
        body.push_str("<p class=\"muted\">No clan tracked.</p>");
    } else {
        body.push_str(
            "<table><tr><th>Clan</th><th>Scope</th><th>Recording</th><th>Last poll</th></tr>",
        );
        for c in &clans {
            let polls = match store.polls_of(&c.clan_tag).await {
                Ok(p) => p,
                Err(e) => return store_failed(e),
            };
            let (state, last) = recording(&polls, PollEndpoint::Clan, now);
            body.push_str(&format!(
                "<tr><td>{} <code>{}</code></td><td>{}</td><td>{state}</td><td>{last}</td></tr>",
                esc(c.name.as_deref().unwrap_or("(not read yet)")),
                esc(&c.clan_tag),
                c.scope.as_str(),
            ));
        }
        body.push_str("</table>");
    }
    body.push_str("<h2>Players</h2>");
    if players.is_empty() {
        body.push_str("<p class=\"muted\">No player tracked.</p>");
    }
    for p in &players {
        let polls = match store.polls_of(&p.player_tag).await {
            Ok(x) => x,
            Err(e) => return store_failed(e),
        };
        let snapshots = match store.snapshots(&p.player_tag, from, to).await {
            Ok(x) => x,
            Err(e) => return store_failed(e),
        };
        let battles = match store
            .battles(
                &p.player_tag,
                &BattleQuery {
                    from: Some(from),
                    to: Some(to),
                    ..BattleQuery::default()
                },
            )
            .await
        {
            Ok(x) => x,
            Err(e) => return store_failed(e),
        };
        let gaps = match store.gaps(&p.player_tag, from, to).await {
            Ok(x) => x,
            Err(e) => return store_failed(e),
        };
        let (state, last) = recording(&polls, PollEndpoint::Battlelog, now);
        let name = p.name.as_deref().unwrap_or("(not read yet)");
        let id = p.player_tag.trim_start_matches('#');
        body.push_str(&format!(
            "<section class=\"box\" aria-labelledby=\"p-{id}\"><h3 id=\"p-{id}\">{} <code>{}</code></h3>\
             <p>{} · recording {state} · last poll {last} · {} battles in the last 30 days</p>",
            esc(name),
            esc(&p.player_tag),
            p.relationship.as_str(),
            battles.len(),
        ));
        if gaps.is_empty() {
            body.push_str("<p>Coverage: no gap detected in the last 30 days.</p>");
        } else {
            body.push_str("<p>Coverage gaps (battles may be missing):</p><ul>");
            for g in &gaps {
                body.push_str(&format!(
                    "<li>{} to {} ({})</li>",
                    iso(g.from_at),
                    iso(g.to_at),
                    esc(&g.reason.replace('_', " "))
                ));
            }
            body.push_str("</ul>");
        }
        body.push_str(&trophy_chart(id, &snapshots));
        body.push_str(&mode_chart(id, &battles));
        body.push_str("</section>");
    }
    html(StatusCode::OK, layout("Players", Some(&csrf), &body))
}

fn recording(polls: &[Poll], endpoint: PollEndpoint, now: Millis) -> (&'static str, String) {
    match polls.iter().find(|p| p.endpoint == endpoint) {
        None => ("stopped", "never".to_owned()),
        Some(p) => (
            if p.is_held(now) {
                "held (not found upstream)"
            } else {
                "active"
            },
            p.last_read_at.map_or_else(|| "not yet".to_owned(), iso),
        ),
    }
}

/// Trophies over the profile reads of the window, as a line; the text beside it says the
/// start, end, low and high.
fn trophy_chart(id: &str, snapshots: &[PlayerSnapshot]) -> String {
    let points: Vec<(Millis, i64)> = snapshots
        .iter()
        .filter_map(|s| s.trophies.map(|t| (s.observed_at, t)))
        .collect();
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return "<p class=\"muted\">Trophies: no profile read in the last 30 days yet.</p>"
            .to_owned();
    };
    let low = points.iter().map(|p| p.1).min().unwrap_or(first.1);
    let high = points.iter().map(|p| p.1).max().unwrap_or(first.1);
    let span_t = (last.0 - first.0).max(1) as f64;
    let span_v = (high - low).max(1) as f64;
    let coords: Vec<String> = points
        .iter()
        .map(|(t, v)| {
            let x = PAD + (*t - first.0) as f64 / span_t * (WIDTH - 2.0 * PAD);
            let y = HEIGHT - PAD - (*v - low) as f64 / span_v * (HEIGHT - 2.0 * PAD);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let summary = format!(
        "Trophies from {} ({}) to {} ({}); low {low}, high {high}; {} profile reads.",
        first.1,
        &iso(first.0)[..10],
        last.1,
        &iso(last.0)[..10],
        points.len()
    );
    format!(
        "<figure><svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"100%\" role=\"img\" \
         aria-labelledby=\"t-{id}\" class=\"chart\"><title id=\"t-{id}\">{summary}</title>\
         <line x1=\"{PAD}\" y1=\"{base}\" x2=\"{right}\" y2=\"{base}\" stroke=\"#888\"/>\
         <text x=\"2\" y=\"{top}\" font-size=\"11\" fill=\"#333\">{high}</text>\
         <text x=\"2\" y=\"{base}\" font-size=\"11\" fill=\"#333\">{low}</text>\
         <polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"2\" points=\"{}\"/></svg>\
         <figcaption>{summary}</figcaption></figure>",
        coords.join(" "),
        base = HEIGHT - PAD,
        right = WIDTH - PAD,
        top = PAD,
    )
}

/// Win rate per mode over the window's battles (draws and unknown outcomes are left out of
/// the rate, as STATS does), as bars; the text beside it gives wins, losses and the sample.
fn mode_chart(id: &str, battles: &[RecordedBattle]) -> String {
    let mut modes: Vec<(String, i64, i64, i64)> = Vec::new();
    for b in battles {
        let entry = match modes.iter_mut().find(|m| m.0 == b.mode) {
            Some(e) => e,
            None => {
                modes.push((b.mode.clone(), 0, 0, 0));
                let last = modes.len() - 1;
                &mut modes[last]
            }
        };
        entry.3 += 1;
        match b.side.outcome.as_deref() {
            Some("win") => entry.1 += 1,
            Some("loss") => entry.2 += 1,
            _ => {}
        }
    }
    if modes.is_empty() {
        return "<p class=\"muted\">Win rate by mode: no battle recorded in the last 30 days.</p>"
            .to_owned();
    }
    modes.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| a.0.cmp(&b.0)));
    let row = 22.0;
    let height = row * modes.len() as f64 + 8.0;
    let mut bars = String::new();
    let mut lines = Vec::new();
    for (i, (mode, wins, losses, total)) in modes.iter().enumerate() {
        let decided = wins + losses;
        let y = 4.0 + row * i as f64;
        let rate = (decided > 0).then(|| *wins as f64 / decided as f64);
        let width = rate.unwrap_or(0.0) * (WIDTH - 200.0);
        let label = rate.map_or_else(|| "n/a".to_owned(), |r| format!("{:.0}%", r * 100.0));
        bars.push_str(&format!(
            "<text x=\"0\" y=\"{ty:.1}\" font-size=\"12\" fill=\"#333\">{}</text>\
             <rect x=\"120\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"14\" fill=\"#2e8b57\"/>\
             <text x=\"{lx:.1}\" y=\"{ty:.1}\" font-size=\"12\" fill=\"#333\">{label} of {decided}</text>",
            esc(mode),
            ty = y + 12.0,
            lx = 126.0 + width,
        ));
        lines.push(format!(
            "{}: {label} ({wins} wins, {losses} losses, {total} battles)",
            esc(mode)
        ));
    }
    let summary = format!("Win rate by mode, last 30 days. {}.", lines.join("; "));
    format!(
        "<figure><svg viewBox=\"0 0 {WIDTH} {height:.0}\" width=\"100%\" role=\"img\" \
         aria-labelledby=\"m-{id}\" class=\"chart\"><title id=\"m-{id}\">{summary}</title>{bars}</svg>\
         <figcaption>{summary}</figcaption></figure>"
    )
}
