//! `/docs` and `/docs/<slug>`: the same Markdown sources `elixir_docs` and `elixir://docs`
//! serve (generated tool sections included), rendered to HTML.

use axum::extract::{Path, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode};

use super::markdown;
use super::page::{Web, esc, html, layout, not_found};

async fn csrf(web: &Web, headers: &HeaderMap) -> Option<String> {
    match web.signed_in(headers).await {
        Ok(Some(_)) => web.session_csrf(headers),
        _ => None,
    }
}

/// `GET /docs`: every page with its summary.
pub(crate) async fn index(State(web): State<Web>, headers: HeaderMap) -> Response {
    let mut body = String::from("<ul>");
    for page in &web.services.content.pages {
        body.push_str(&format!(
            "<li><a href=\"/docs/{}\">{}</a> — {}</li>",
            esc(&page.slug),
            esc(&page.title),
            esc(&page.summary)
        ));
    }
    body.push_str("</ul>");
    html(
        StatusCode::OK,
        layout("Docs", csrf(&web, &headers).await.as_deref(), &body),
    )
}

/// `GET /docs/{slug}`.
pub(crate) async fn page(
    State(web): State<Web>,
    Path(slug): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(page) = web.services.content.page(&slug) else {
        return not_found();
    };
    // The page's own H1 is the layout's title.
    let without_title: String = page
        .markdown
        .lines()
        .skip_while(|l| !l.starts_with("# "))
        .skip(1)
        .collect::<Vec<_>>()
        .join("\n");
    let body = format!(
        "<article>{}</article><p class=\"muted\">The same text is served over MCP as \
         <code>elixir_docs({{ page: \"{}\" }})</code> and <code>elixir://docs/{}</code>.</p>",
        markdown::render(&without_title),
        esc(&page.slug),
        esc(&page.slug)
    );
    html(
        StatusCode::OK,
        layout(&page.title, csrf(&web, &headers).await.as_deref(), &body),
    )
}
