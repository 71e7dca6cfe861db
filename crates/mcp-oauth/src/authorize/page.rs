//! The consent page's HTML: plain forms that work without JavaScript, every value escaped,
//! in the site's shared shell ([`crate::web`]). What to show is decided by the flow
//! (`authorize`); this module only renders it.

use crate::scopes::Offer;
use crate::web::{CODE_FIELD, CodeStep, email_field, error_line, esc, page};

/// A consent page: the shared shell, no navigation, `service` in the `<title>`.
fn layout(service: &str, title: &str, body: &str) -> String {
    page(service, "", title, body)
}

/// A page saying why the request cannot go on. Nothing is sent back to the client.
pub(crate) fn error_page(service: &str, title: &str, message: &str) -> String {
    let body = format!(
        "<p class=\"err\">{}</p><p class=\"muted\">Nothing was shared with the application. \
         You can close this window and start again from the application.</p>",
        esc(message)
    );
    layout(service, title, &body)
}

/// A page that ends the flow without an error (the person declined).
pub(crate) fn notice_page(service: &str, title: &str, message: &str) -> String {
    layout(service, title, &format!("<p>{}</p>", esc(message)))
}

/// What every consent step shows about the request.
pub(crate) struct Context<'a> {
    pub service: &'a str,
    pub client_name: &'a str,
    pub client_id: &'a str,
    /// The client is described by a metadata document at `client_id` (its host is shown).
    pub from_document: bool,
    pub redirect_uri: &'a str,
    pub resource: &'a str,
    pub pending_id: &'a str,
    pub csrf: &'a str,
    pub offers: Vec<Offer>,
    /// Names the client asked for that the service does not define (not granted).
    pub ignored: &'a [String],
    pub descriptions: &'a [(String, String)],
}

/// Which step of the consent page to show.
pub(crate) enum Step<'a> {
    /// Ask for the account's address, then for the code sent to it (beside the capabilities).
    EmailCode(CodeStep<'a>),
    /// Signed in already: the capabilities and one Authorize.
    SignedIn {
        name: &'a str,
        switch_href: Option<&'a str>,
        error: Option<&'a str>,
    },
}

fn host_of(uri: &str) -> String {
    url::Url::parse(uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| uri.split(':').next().unwrap_or("").to_owned())
}

fn hidden(ctx: &Context<'_>) -> String {
    format!(
        "<input type=\"hidden\" name=\"request\" value=\"{}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(ctx.pending_id),
        esc(ctx.csrf)
    )
}

fn capabilities(ctx: &Context<'_>) -> String {
    let mut out = String::from(
        "<fieldset class=\"box\"><legend>Capabilities</legend>\
         <input type=\"hidden\" name=\"consent\" value=\"1\">",
    );
    for offer in &ctx.offers {
        let description = ctx
            .descriptions
            .iter()
            .find(|(s, _)| *s == offer.scope)
            .map(|(_, d)| format!(" — {}", esc(d)))
            .unwrap_or_default();
        if offer.fixed {
            out.push_str(&format!(
                "<label>✔ <code>{}</code>{description} <span class=\"muted\">(requested; \
                 decline the whole connection to withhold it)</span></label>",
                esc(&offer.scope)
            ));
        } else {
            out.push_str(&format!(
                "<label><input type=\"checkbox\" name=\"scope\" value=\"{s}\"{checked}> \
                 <code>{s}</code>{description}</label>",
                s = esc(&offer.scope),
                checked = if offer.ticked { " checked" } else { "" },
            ));
        }
    }
    if !ctx.ignored.is_empty() {
        let names: Vec<String> = ctx
            .ignored
            .iter()
            .map(|n| format!("<code>{}</code>", esc(n)))
            .collect();
        out.push_str(&format!(
            "<p class=\"muted\" id=\"not-granted\">Also asked for, not granted \
             ({} does not define {}): {}.</p>",
            esc(ctx.service),
            if names.len() == 1 { "it" } else { "them" },
            names.join(", ")
        ));
    }
    out.push_str("</fieldset>");
    out
}

/// The consent page at one of its steps.
pub(crate) fn consent_page(ctx: &Context<'_>, step: &Step<'_>) -> String {
    let who = if ctx.from_document {
        format!(
            "<b>{}</b> <span class=\"muted\">(described at {})</span>",
            esc(ctx.client_name),
            esc(&host_of(ctx.client_id))
        )
    } else {
        format!("<b>{}</b>", esc(ctx.client_name))
    };
    let intro = format!(
        "<div class=\"box\"><p>{who} wants to connect to <code>{}</code>.</p>\
         <p class=\"muted\">After you decide you will be sent back to <b>{}</b>.</p></div>",
        esc(ctx.resource),
        esc(&host_of(ctx.redirect_uri)),
    );
    let body = match step {
        Step::EmailCode(code_step @ CodeStep::Email { value, .. }) => format!(
            "{intro}{}<form method=\"post\" action=\"/oauth/authorize\">{}{}\
             <p class=\"muted\">We will email you a six-digit code.</p>\
             <button type=\"submit\" name=\"action\" value=\"send_code\">Send code</button>\
             <button type=\"submit\" name=\"action\" value=\"deny\" formnovalidate>Cancel</button>\
             </form>",
            code_step.error_line(),
            hidden(ctx),
            email_field("Your account's email address", value),
        ),
        Step::EmailCode(code_step @ CodeStep::Code { email, .. }) => format!(
            "{intro}{}<form method=\"post\" action=\"/oauth/authorize\">{}\
             <p>If <b>{}</b> belongs to an account, a code is on its way to it. It is valid for \
             15 minutes.</p>{CODE_FIELD}{}\
             <input type=\"hidden\" name=\"email\" value=\"{}\">\
             <button type=\"submit\" name=\"action\" value=\"verify\">Authorize</button>\
             <button type=\"submit\" name=\"action\" value=\"deny\">Deny</button>\
             <button type=\"submit\" name=\"action\" value=\"send_code\">Send a new code</button>\
             </form>",
            code_step.error_line(),
            hidden(ctx),
            esc(email),
            capabilities(ctx),
            esc(email),
        ),
        Step::SignedIn {
            name,
            switch_href,
            error: e,
        } => format!(
            "{intro}{}<form method=\"post\" action=\"/oauth/authorize\">{}\
             <p>Signed in as <b>{}</b>.{}</p>{}\
             <button type=\"submit\" name=\"action\" value=\"authorize\">Authorize</button>\
             <button type=\"submit\" name=\"action\" value=\"deny\">Deny</button>\
             </form>",
            error_line(*e),
            hidden(ctx),
            esc(name),
            switch_href
                .map(|h| format!(" <a href=\"{}\">Use another account</a>", esc(h)))
                .unwrap_or_default(),
            capabilities(ctx),
        ),
    };
    layout(ctx.service, &format!("Connect {}", ctx.client_name), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything() {
        let page = error_page("S<", "T", "<script>");
        assert!(!page.contains("<script>"));
    }
}
