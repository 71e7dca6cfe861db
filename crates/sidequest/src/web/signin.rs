//! Sign in (the REST login's throttle and single failure answer, through
//! `http::session::sign_in`), sign out, and the language switch (a remembered cookie).

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;
use std::collections::HashMap;

use crate::domain::Language;
use crate::domain::token::SESSION_TTL_MS;
use crate::http::error::ApiError;
use crate::http::session::{self, COOKIE, ClientIp};
use crate::i18n::web::text;
use crate::state::AppState;
use crate::web::page::{CSRF_COOKIE, Form, LANG_COOKIE, Page, Visitor, local_path, see_other};

/// Where to go after signing in: the asked-for local path, else home.
fn next_of(next: Option<&str>) -> String {
    next.filter(|n| local_path(n) && !n.starts_with("/signin"))
        .unwrap_or("/")
        .to_owned()
}

/// `GET /signin`: the form (home if already signed in).
pub async fn form(visitor: Visitor, Query(q): Query<HashMap<String, String>>) -> Response {
    if visitor.signed.is_some() {
        return see_other(&next_of(q.get("next").map(String::as_str)), &[]);
    }
    let notice = q
        .contains_key("signed_out")
        .then(|| text(visitor.lang, "signed_out"));
    render(
        &visitor,
        StatusCode::OK,
        "",
        None,
        notice,
        q.get("next").map(String::as_str),
    )
}

fn render(
    visitor: &Visitor,
    status: StatusCode,
    username: &str,
    error: Option<&str>,
    notice: Option<&str>,
    next: Option<&str>,
) -> Response {
    visitor.render(
        status,
        "signin.html",
        text(visitor.lang, "sign_in"),
        json!({
            "username": username,
            "error": error,
            "notice": notice,
            "next": next_of(next),
        }),
    )
}

/// `POST /signin`: opens the session (both cookies) or answers the one failure message.
pub async fn submit(
    State(state): State<AppState>,
    visitor: Visitor,
    ClientIp(ip): ClientIp,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    let username = form.text("username");
    let next = form.get("next");
    if !visitor.same_origin {
        return visitor.message(
            StatusCode::FORBIDDEN,
            "csrf_title",
            text(visitor.lang, "csrf"),
        );
    }
    let (status, error) =
        match session::sign_in(&state, &ip, &username, form.text("password")).await {
            Ok(signed) => {
                let max_age = SESSION_TTL_MS / 1000;
                let cookies = [
                    visitor.cookie(COOKIE, &signed.cookie, max_age, false),
                    visitor.cookie(CSRF_COOKIE, &signed.csrf, max_age, true),
                ];
                return see_other(&next_of(next), &cookies);
            }
            // Every wrong username or password, unknown or deactivated account, and an empty
            // field, is the same answer, as on the REST login.
            Err(ApiError::InvalidCredentials | ApiError::Invalid(_)) => {
                (StatusCode::UNAUTHORIZED, "bad_login")
            }
            Err(ApiError::TooManyAttempts { .. }) => (StatusCode::TOO_MANY_REQUESTS, "too_many"),
            Err(ApiError::LoginBusy) => (StatusCode::TOO_MANY_REQUESTS, "busy"),
            Err(e) => return visitor.api_error(e),
        };
    let error = Some(text(visitor.lang, error));
    render(&visitor, status, &username, error, None, next)
}

/// `POST /signout`: ends the session and clears both cookies.
pub async fn sign_out(State(state): State<AppState>, visitor: Visitor, body: Bytes) -> Page {
    let form = Form::parse(&body);
    let signed = visitor.check_post(&form)?;
    visitor.ok_or_page(session::end_session(&state, &signed.key).await)?;
    let cookies = [
        visitor.cookie(COOKIE, "", 0, false),
        visitor.cookie(CSRF_COOKIE, "", 0, true),
    ];
    Ok(see_other("/signin?signed_out=1", &cookies))
}

/// `GET /language/{en|pl}?back=/path`: remembers the choice for a year and goes back.
pub async fn language(
    visitor: Visitor,
    Path(lang): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(lang) = Language::parse(&lang) else {
        return visitor.message(
            StatusCode::NOT_FOUND,
            "not_found_title",
            text(visitor.lang, "not_found"),
        );
    };
    let back = q
        .get("back")
        .map(String::as_str)
        .filter(|b| local_path(b))
        .unwrap_or("/");
    let cookie = visitor.cookie(LANG_COOKIE, lang.as_str(), 365 * 24 * 3600, false);
    see_other(back, &[cookie])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_the_site() {
        assert_eq!(next_of(Some("/plays/1")), "/plays/1");
        assert_eq!(next_of(Some("//evil.example")), "/");
        assert_eq!(next_of(Some("/signin?next=/x")), "/");
        assert_eq!(next_of(None), "/");
    }
}
