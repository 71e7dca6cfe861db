//! Signing the browser in with an email code, and out. Until a code is sent the flow is
//! stateless: the form carries its id and expiry bound to its CSRF value by an HMAC under the
//! server secret ([`SignedFlow`]), so `GET /signin` stores nothing. The first send that passes
//! the limits stores mcp-oauth's pending record for it; from there the flow reuses
//! mcp-oauth's parts: the six-digit code is stored HMAC'd like the consent page's (15 minutes,
//! five attempts, single use, bound to this flow), sends share the consent page's per-address
//! and per-email rate buckets, and success starts mcp-oauth's browser session — the same one
//! the consent page reads, so a signed-in browser consents with one click.

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use mcp_oauth::crypto::{constant_time_eq, hmac_hex, sha256_hex};
use mcp_oauth::store::{EmailCodeRecord, PendingRecord};
use mcp_oauth::web::{CODE_FIELD, CodeStep, email_field};
use mcp_oauth::{CodeCheck, Mail, OAuthStore, normalize_email};

use super::page::{Form, Web, esc, forbidden, html, layout, see_other, unavailable};
use crate::access::kinds::base64url;
use crate::domain::Millis;

const HOUR_MS: i64 = 3600 * 1000;
const FLOW_MS: i64 = 30 * 60 * 1000;
/// Marks a pending record as a site sign-in rather than an OAuth authorization.
const SITE_CLIENT: &str = "elixir-site-sign-in";

fn store(web: &Web) -> &std::sync::Arc<dyn OAuthStore> {
    web.oauth.server.store()
}

fn token(web: &Web, n: usize) -> String {
    let mut bytes = vec![0u8; n];
    web.services.random.fill(&mut bytes);
    base64url(&bytes)
}

/// `n` uniform decimal digits (rejection sampling over `u32`, so no modulo bias).
fn digits(web: &Web, n: usize) -> String {
    const LIMIT: u32 = u32::MAX - u32::MAX % 10;
    let mut out = String::with_capacity(n);
    while out.len() < n {
        let mut wide = [0u8; 4];
        web.services.random.fill(&mut wide);
        let v = u32::from_le_bytes(wide);
        if v < LIMIT {
            out.push(char::from(b'0' + (v % 10) as u8));
        }
    }
    out
}

/// The HMAC label of a sign-in form's CSRF value.
const FLOW_LABEL: &str = "elixir-sign-in-flow";

/// A sign-in flow as its form carries it: a random id and the instant it ends, in the hidden
/// `flow` field as `<id>.<expires_at>`, and the CSRF value that binds both (HMAC-SHA256 under
/// the server secret). Only the server can make one, so a flow needs no row until its first
/// code is sent; the id is then the pending record's (and the code's) id.
struct SignedFlow {
    id: String,
    expires_at: Millis,
    csrf: String,
}

impl SignedFlow {
    fn csrf_of(web: &Web, id: &str, expires_at: Millis) -> String {
        hmac_hex(
            &web.oauth.secret,
            &[FLOW_LABEL, id, &expires_at.to_string()],
        )
    }

    /// A fresh flow ending [`FLOW_MS`] from now.
    fn new(web: &Web) -> Self {
        let id = token(web, 18);
        let expires_at = web.services.now() + FLOW_MS;
        let csrf = Self::csrf_of(web, &id, expires_at);
        Self {
            id,
            expires_at,
            csrf,
        }
    }

    /// The flow a form names, if its CSRF value is the one the server made for it.
    fn from_form(web: &Web, form: &Form) -> Option<Self> {
        let (id, expires) = form.get("flow")?.split_once('.')?;
        let expires_at: Millis = expires.parse().ok()?;
        let csrf = form.get("csrf")?;
        let expected = Self::csrf_of(web, id, expires_at);
        constant_time_eq(&expected, csrf).then(|| Self {
            id: id.to_owned(),
            expires_at,
            csrf: expected,
        })
    }

    /// The hidden `flow` field.
    fn field(&self) -> String {
        format!("{}.{}", self.id, self.expires_at)
    }

    /// The pending record of this flow, stored when its first code is sent.
    fn record(&self, web: &Web, now: Millis) -> PendingRecord {
        PendingRecord {
            id: self.id.clone(),
            csrf_hash: sha256_hex(&self.csrf),
            client_id: SITE_CLIENT.to_owned(),
            client_name: "Elixir".to_owned(),
            redirect_uri: format!("{}/account", web.issuer()),
            state: None,
            code_challenge: String::new(),
            resource: format!("{}/account", web.issuer()),
            requested_scope: None,
            signed_in_account: None,
            email: None,
            created_at: now,
            expires_at: self.expires_at,
            done_at: None,
        }
    }
}

/// The `purpose` of sign-in codes in mcp-oauth's code hash (the consent page's are its own).
const SIGN_IN_CODE: &str = "site-sign-in";

fn code_hash(web: &Web, flow: &str, code: &str) -> String {
    web.oauth.server.email_code_hash(SIGN_IN_CODE, flow, code)
}

fn page(status: StatusCode, flow: &SignedFlow, step: &CodeStep<'_>) -> Response {
    let hidden = format!(
        "<input type=\"hidden\" name=\"flow\" value=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(&flow.field()),
        esc(&flow.csrf)
    );
    let body = match step {
        CodeStep::Email { value, .. } => format!(
            "{}<form method=\"post\" action=\"/signin\">{hidden}{}\
             <p class=\"muted\">We will email you a six-digit code. A new address gets a new \
             account.</p><button type=\"submit\" name=\"action\" value=\"send_code\">Send code</button>\
             </form>",
            step.error_line(),
            email_field("Your email address", value)
        ),
        CodeStep::Code { email, .. } => format!(
            "{}<form method=\"post\" action=\"/signin\">{hidden}\
             <p>A code is on its way to <b>{}</b>. It is valid for 15 minutes.</p>\
             <input type=\"hidden\" name=\"email\" value=\"{}\">{CODE_FIELD}\
             <button type=\"submit\" name=\"action\" value=\"verify\">Sign in</button>\
             <button type=\"submit\" name=\"action\" value=\"send_code\">Send a new code</button>\
             </form>",
            step.error_line(),
            esc(email),
            esc(email)
        ),
    };
    html(status, layout("Sign in", None, &body))
}

/// `GET /signin`: a fresh sign-in flow, stored nowhere (already signed in: the account page).
pub(crate) async fn get(State(web): State<Web>, headers: HeaderMap) -> Response {
    match web.signed_in(&headers).await {
        Ok(Some(_)) => return see_other("/account", None),
        Ok(None) => {}
        Err(r) => return r,
    }
    page(
        StatusCode::OK,
        &SignedFlow::new(&web),
        &CodeStep::Email {
            error: None,
            value: "",
        },
    )
}

fn expired() -> Response {
    html(
        StatusCode::BAD_REQUEST,
        layout(
            "Sign in",
            None,
            "<p class=\"err\">This sign-in has ended. <a href=\"/signin\">Start again</a>.</p>",
        ),
    )
}

/// `POST /signin`: send a code, or check one and sign the browser in.
pub(crate) async fn post(State(web): State<Web>, parts: Parts, body: Bytes) -> Response {
    let form = Form::parse(&body);
    if !web.same_origin(&parts.headers) {
        return forbidden();
    }
    let Some(flow) = SignedFlow::from_form(&web, &form) else {
        return forbidden();
    };
    let now = web.services.now();
    if now >= flow.expires_at {
        return expired();
    }
    // No record yet: no code was sent for this flow (verify answers "Ask for a code first").
    let pending = match store(&web).pending(&flow.id).await {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(error = %e, "sign-in flow lookup failed");
            return unavailable();
        }
    };
    if let Some(p) = &pending {
        if p.client_id != SITE_CLIENT {
            return forbidden();
        }
        if p.done_at.is_some() || now >= p.expires_at {
            return expired();
        }
    }
    let address = parts
        .extensions
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0);
    let address = web.oauth.server.client_address(&parts.headers, address);
    let result = match form.get("action") {
        Some("send_code") => send_code(&web, &flow, pending.is_some(), &form, &address).await,
        Some("verify") => verify(&web, &flow, &form).await,
        _ => Ok(page(
            StatusCode::BAD_REQUEST,
            &flow,
            &CodeStep::Email {
                error: Some("Choose an action."),
                value: "",
            },
        )),
    };
    result.unwrap_or_else(|e| {
        tracing::error!(error = %e, "sign-in failed");
        unavailable()
    })
}

/// Sends a code for `flow` (`stored`: its pending record exists already) once the send
/// limits pass, storing the flow's pending record first if it has none.
async fn send_code(
    web: &Web,
    flow: &SignedFlow,
    stored: bool,
    form: &Form,
    address: &str,
) -> Result<Response, mcp_oauth::StoreError> {
    let typed = form.get("email").unwrap_or("").trim();
    let Some(email) = normalize_email(typed) else {
        return Ok(page(
            StatusCode::BAD_REQUEST,
            flow,
            &CodeStep::Email {
                error: Some("Enter a valid email address."),
                value: typed,
            },
        ));
    };
    let config = web.oauth.server.config();
    let now = web.services.now();
    let hour = now - now.rem_euclid(HOUR_MS);
    // The consent page's buckets: sign-in codes and consent codes share one budget, and an
    // IPv6 client is one address per /64 (it is routinely handed the whole prefix).
    let address_bucket = format!("code:addr:{}", mcp_oauth::limit_key(address));
    let email_bucket = format!("code:email:{}", sha256_hex(&email));
    let limited = CodeStep::Email {
        error: Some("Too many codes were requested. Wait a while, then try again."),
        value: &email,
    };
    if !store(web)
        .take_rate(
            &address_bucket,
            hour,
            config.email_code.sends_per_address_per_hour,
        )
        .await?
    {
        return Ok(page(StatusCode::TOO_MANY_REQUESTS, flow, &limited));
    }
    if !store(web)
        .take_rate(
            &email_bucket,
            hour,
            config.email_code.sends_per_email_per_hour,
        )
        .await?
    {
        store(web).return_rate(&address_bucket, hour).await?;
        return Ok(page(StatusCode::TOO_MANY_REQUESTS, flow, &limited));
    }
    if !stored {
        store_pending(web, flow, now).await?;
    }
    let code = digits(web, config.email_code.digits as usize);
    let ttl = i64::try_from(config.email_code.ttl.as_millis()).unwrap_or(i64::MAX);
    store(web)
        .replace_email_code(&EmailCodeRecord {
            pending_id: flow.id.clone(),
            email: email.clone(),
            code_hash: code_hash(web, &flow.id, &code),
            created_at: now,
            expires_at: now.saturating_add(ttl),
            attempts: 0,
            used_at: None,
        })
        .await?;
    let mail = Mail {
        from: config.mail_from.clone(),
        to: email.clone(),
        subject: "Your Elixir sign-in code".to_owned(),
        text: format!(
            "Your code: {code}\n\nEnter it on the Elixir sign-in page to sign in. It is valid \
             for {} minutes and works once.\n\nIf you did not ask for this code, ignore this \
             message; nothing happens without it.\n",
            config.email_code.ttl.as_secs() / 60
        ),
    };
    if let Err(e) = web.oauth.mailer.send(&mail).await {
        tracing::error!(error = %e, "could not send the sign-in code");
        return Ok(page(
            StatusCode::SERVICE_UNAVAILABLE,
            flow,
            &CodeStep::Email {
                error: Some("The code could not be sent just now. Try again in a moment."),
                value: &email,
            },
        ));
    }
    Ok(page(
        StatusCode::OK,
        flow,
        &CodeStep::Code {
            email: &email,
            error: None,
        },
    ))
}

async fn verify(
    web: &Web,
    flow: &SignedFlow,
    form: &Form,
) -> Result<Response, mcp_oauth::StoreError> {
    let typed = form.compact("code");
    let now = web.services.now();
    let code_page = |email: &str, error: &str| {
        page(
            StatusCode::BAD_REQUEST,
            flow,
            &CodeStep::Code {
                email,
                error: Some(error),
            },
        )
    };
    let email = match web
        .oauth
        .server
        .check_email_code(SIGN_IN_CODE, &flow.id, &typed)
        .await?
    {
        CodeCheck::Accepted { email } => email,
        CodeCheck::NoCode => {
            return Ok(page(
                StatusCode::BAD_REQUEST,
                flow,
                &CodeStep::Email {
                    error: Some("Ask for a code first."),
                    value: "",
                },
            ));
        }
        CodeCheck::Exhausted => return Ok(expired()),
        CodeCheck::Used { email } => {
            return Ok(code_page(
                &email,
                "That code was already used. Send a new code.",
            ));
        }
        CodeCheck::Expired { email } => {
            return Ok(code_page(&email, "That code has expired. Send a new code."));
        }
        CodeCheck::Wrong { email, left } => {
            let message = format!(
                "That code is not right. {left} attempt{} left.",
                if left == 1 { "" } else { "s" }
            );
            return Ok(code_page(&email, &message));
        }
    };
    // Signed in only by the request that ends the flow.
    if !store(web).finish_pending(&flow.id, now).await? {
        return Ok(expired());
    }
    let account = match web.accounts.find_or_create(&email).await {
        Ok(a) => a,
        Err(e) => {
            tracing::error!(error = %e, "account lookup failed");
            return Ok(unavailable());
        }
    };
    let cookie = web.oauth.server.sign_in(&account.id.to_string()).await?;
    Ok(see_other("/account", Some(&cookie)))
}

/// Stores the pending record of `flow`. Two sends of one flow may race here: the loser finds
/// the winner's record and reuses it.
async fn store_pending(
    web: &Web,
    flow: &SignedFlow,
    now: Millis,
) -> Result<(), mcp_oauth::StoreError> {
    match store(web).insert_pending(&flow.record(web, now)).await {
        Ok(()) => Ok(()),
        Err(e) => match store(web).pending(&flow.id).await? {
            Some(p) if p.client_id == SITE_CLIENT => Ok(()),
            _ => Err(e),
        },
    }
}

/// `POST /signout`: ends the session (CSRF-checked like every POST).
pub(crate) async fn sign_out(State(web): State<Web>, headers: HeaderMap, body: Bytes) -> Response {
    let form = Form::parse(&body);
    if !web.post_allowed(&headers, &form) {
        return forbidden();
    }
    match web.oauth.server.sign_out(&headers).await {
        Ok(cookie) => see_other("/", Some(&cookie)),
        Err(e) => {
            tracing::error!(error = %e, "sign-out failed");
            unavailable()
        }
    }
}
