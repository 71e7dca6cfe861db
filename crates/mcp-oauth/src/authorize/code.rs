//! The email one-time code step of the consent page: sending a code (rate-limited per
//! client address and per email, the same answer for known and unknown addresses) and
//! checking one ([`AuthServer::check_email_code`]: an attempt is reserved atomically before
//! the HMAC comparison, so five entries end the flow however many arrive at once). The rest
//! of the flow is the parent module's.

use http::StatusCode;

use super::page;
use super::step::{Flow, Outcome, Refusal, refuse};
use crate::config::ms;
use crate::crypto::{constant_time_eq, hmac_hex, sha256_hex};
use crate::mail::Mail;
use crate::random;
use crate::scopes;
use crate::server::AuthServer;
use crate::store::{EmailCodeRecord, StoreError};
use crate::web::{CodeStep, Form};

const HOUR_MS: i64 = 3600 * 1000;

impl AuthServer {
    pub(super) fn email_step(
        &self,
        flow: &Flow,
        error: &str,
        value: &str,
        status: StatusCode,
    ) -> Outcome {
        let offers = scopes::offers(&self.config, flow.requested.as_deref());
        Outcome::Page {
            status,
            html: page::consent_page(
                &self.page_context(flow, offers),
                &page::Step::EmailCode(CodeStep::Email {
                    error: Some(error),
                    value,
                }),
            ),
            redirect_uri: Some(flow.pending.redirect_uri.clone()),
        }
    }

    pub(super) fn code_step(
        &self,
        flow: &Flow,
        form: &Form,
        email: &str,
        error: Option<&str>,
    ) -> Outcome {
        let offers = self.ticked_offers(flow, form);
        let status = if error.is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        Outcome::Page {
            status,
            html: page::consent_page(
                &self.page_context(flow, offers),
                &page::Step::EmailCode(CodeStep::Code { email, error }),
            ),
            redirect_uri: Some(flow.pending.redirect_uri.clone()),
        }
    }

    /// Sends a code to the typed address. The answer is the same page whether or not an
    /// account uses the address: every well-formed address gets a code, and the account is
    /// looked up only once the code proves the address.
    pub(super) async fn send_code(
        &self,
        flow: &Flow,
        form: &Form,
        address: &str,
    ) -> Result<Outcome, Refusal> {
        let typed = form.get("email").unwrap_or("").trim();
        let Some(email) = normalize_email(typed) else {
            return Ok(self.email_step(
                flow,
                "Enter a valid email address.",
                typed,
                StatusCode::BAD_REQUEST,
            ));
        };
        let now = self.now();
        let policy = &self.config.email_code;
        let hour = Self::window(now, HOUR_MS);
        // Shared with the product's own sign-in (Elixir's): keep the key's shape.
        let address_bucket = format!("code:addr:{}", mcp_door::limit_key(address));
        let email_bucket = format!("code:email:{}", sha256_hex(&email));
        let limited = "Too many codes were requested. Wait a while, then try again.";
        if !self
            .store
            .take_rate(&address_bucket, hour, policy.sends_per_address_per_hour)
            .await?
        {
            return Ok(self.email_step(flow, limited, &email, StatusCode::TOO_MANY_REQUESTS));
        }
        if !self
            .store
            .take_rate(&email_bucket, hour, policy.sends_per_email_per_hour)
            .await?
        {
            self.store.return_rate(&address_bucket, hour).await?;
            return Ok(self.email_step(flow, limited, &email, StatusCode::TOO_MANY_REQUESTS));
        }
        let code = random::digits(self.random.as_ref(), policy.digits);
        self.store
            .replace_email_code(&EmailCodeRecord {
                pending_id: flow.pending.id.clone(),
                email: email.clone(),
                code_hash: self.email_code_hash(CONSENT_CODE, &flow.pending.id, &code),
                created_at: now,
                expires_at: now + ms(policy.ttl),
                attempts: 0,
                used_at: None,
            })
            .await?;
        let minutes = policy.ttl.as_secs() / 60;
        let mail = Mail {
            from: self.config.mail_from.clone(),
            to: email.clone(),
            subject: format!("Your {} sign-in code", self.config.service_name),
            text: format!(
                "Your code: {code}\n\nEnter it on the {service} page that asked for it to connect \
                 {client}. It is valid for {minutes} minutes and works once.\n\nIf you did not \
                 ask for this code, ignore this message; nothing happens without it.\n",
                service = self.config.service_name,
                client = flow.client.client_name,
            ),
        };
        if let Err(e) = self.mailer.send(&mail).await {
            tracing::error!(error = %e, "could not send the sign-in code");
            return Ok(self.email_step(
                flow,
                "The code could not be sent just now. Try again in a moment.",
                &email,
                StatusCode::SERVICE_UNAVAILABLE,
            ));
        }
        Ok(self.code_step(flow, form, &email, None))
    }

    /// The stored form of an email code: HMAC-SHA256 under the server secret of `purpose`
    /// (which flow kind mailed it: the consent page's codes are [`CONSENT_CODE`]), the flow's
    /// pending id and the code, so a code works only for the flow and purpose it was sent for.
    pub fn email_code_hash(&self, purpose: &str, pending_id: &str, code: &str) -> String {
        hmac_hex(self.config.secret.bytes(), &[purpose, pending_id, code])
    }

    /// Checks a typed code against the flow's code (see [`CodeCheck`]). The attempt is
    /// reserved first, in one statement that counts it only while fewer than the policy's
    /// `max_attempts` were made ([`OAuthStore::reserve_code_attempt`](crate::OAuthStore)), and
    /// only a reserved attempt is compared: past the limit every guess, right or wrong, gets
    /// the same [`CodeCheck::Exhausted`], and a burst of parallel guesses gets no more
    /// comparisons than a patient guesser. A right code is spent before `Accepted` is
    /// returned; the caller must still end the flow (and act only if that succeeds). The
    /// attempt that uses up the last one ends the flow.
    pub async fn check_email_code(
        &self,
        purpose: &str,
        pending_id: &str,
        typed: &str,
    ) -> Result<CodeCheck, StoreError> {
        let now = self.now();
        let max = self.config.email_code.max_attempts;
        let Some(record) = self
            .store
            .reserve_code_attempt(pending_id, max, now)
            .await?
        else {
            // Nothing reserved, nothing compared: why, from what is stored.
            return Ok(match self.store.email_code(pending_id).await? {
                None => CodeCheck::NoCode,
                Some(r) if r.attempts >= max => CodeCheck::Exhausted,
                Some(r) if r.used_at.is_some() => CodeCheck::Used { email: r.email },
                Some(r) if now >= r.expires_at => CodeCheck::Expired { email: r.email },
                Some(_) => CodeCheck::Exhausted,
            });
        };
        let presented = self.email_code_hash(purpose, pending_id, typed);
        if constant_time_eq(&presented, &record.code_hash) {
            return Ok(match self.store.use_email_code(pending_id, now).await? {
                true => CodeCheck::Accepted {
                    email: record.email,
                },
                false => CodeCheck::Used {
                    email: record.email,
                },
            });
        }
        let left = max - record.attempts;
        if left <= 0 {
            self.store.finish_pending(pending_id, now).await?;
            return Ok(CodeCheck::Exhausted);
        }
        Ok(CodeCheck::Wrong {
            email: record.email,
            left,
        })
    }

    /// Whether the flow ended because its code was entered wrongly too often: what a
    /// request on an ended flow is told, so that every refusal after the limit reads alike.
    pub(super) async fn exhausted(&self, pending_id: &str) -> Result<bool, StoreError> {
        let max = self.config.email_code.max_attempts;
        Ok(self
            .store
            .email_code(pending_id)
            .await?
            .is_some_and(|r| r.attempts >= max))
    }

    pub(super) async fn verify_code(&self, flow: &Flow, form: &Form) -> Result<Outcome, Refusal> {
        let typed = form.compact("code");
        // Checked before the code, so an empty choice neither spends an attempt nor the code.
        let granted = scopes::granted(&self.config, flow.requested.as_deref(), &form.all("scope"));
        if granted.is_empty() {
            let email = flow.pending.email.clone().unwrap_or_default();
            return Ok(self.code_step(
                flow,
                form,
                &email,
                Some("Tick at least one capability, or Deny."),
            ));
        }
        let email = match self
            .check_email_code(CONSENT_CODE, &flow.pending.id, &typed)
            .await?
        {
            CodeCheck::Accepted { email } => email,
            CodeCheck::NoCode => {
                return Ok(self.email_step(
                    flow,
                    "Ask for a code first.",
                    "",
                    StatusCode::BAD_REQUEST,
                ));
            }
            CodeCheck::Exhausted => return Err(too_many_attempts()),
            CodeCheck::Used { email } => {
                return Ok(self.code_step(
                    flow,
                    form,
                    &email,
                    Some("That code was already used. Send a new code."),
                ));
            }
            CodeCheck::Expired { email } => {
                return Ok(self.code_step(
                    flow,
                    form,
                    &email,
                    Some("That code has expired. Send a new code."),
                ));
            }
            CodeCheck::Wrong { email, left } => {
                let message = format!(
                    "That code is not right. {left} attempt{} left.",
                    if left == 1 { "" } else { "s" }
                );
                return Ok(self.code_step(flow, form, &email, Some(&message)));
            }
        };
        let now = self.now();
        let signed_in = match &flow.pending.signed_in_account {
            Some(id) => self.accounts.account(id).await?,
            None => None,
        };
        let Some(account) = self
            .accounts
            .account_for_verified_email(&email, signed_in.as_ref())
            .await?
        else {
            self.store.finish_pending(&flow.pending.id, now).await?;
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "No account",
                "No account can sign in with this address.",
            ));
        };
        self.issue_code(flow, &account, granted, true).await
    }
}

/// The `purpose` of the consent page's email codes in [`AuthServer::email_code_hash`].
pub const CONSENT_CODE: &str = "email-code";

/// What [`AuthServer::check_email_code`] found. Only `Wrong` and `Accepted` compared the
/// typed code; the others answer from what is stored, whatever was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeCheck {
    /// The right code, now spent.
    Accepted { email: String },
    /// A wrong code, counted; `left` attempts remain.
    Wrong { email: String, left: i64 },
    /// No code was sent for this flow.
    NoCode,
    /// The code was already used.
    Used { email: String },
    /// The code's time is up.
    Expired { email: String },
    /// No attempt is left (or the flow has ended): nothing was compared.
    Exhausted,
}

pub(super) fn too_many_attempts() -> Refusal {
    refuse(
        StatusCode::FORBIDDEN,
        "Too many wrong codes",
        "The code was entered wrongly too many times. Start again from the application.",
    )
}

/// The address a person typed, as the consent page and a product's own sign-in both keep it:
/// trimmed and lowercased, with one `@`, a dotted domain, and nothing that could break a mail
/// header; `None` otherwise.
pub fn normalize_email(typed: &str) -> Option<String> {
    let email = typed.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let ok = !local.is_empty()
        && local.len() <= 64
        && email.len() <= 254
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && email
            .chars()
            .all(|c| !c.is_control() && !c.is_whitespace() && !"<>()[],;:\"\\".contains(c));
    ok.then_some(email)
}

#[cfg(test)]
mod tests {
    use super::normalize_email;

    #[test]
    fn emails() {
        assert_eq!(
            normalize_email(" You@Example.COM "),
            Some("you@example.com".into())
        );
        for bad in [
            "",
            "you",
            "you@",
            "@x.y",
            "you@localhost",
            "a@b.c\r\nBcc: x@y.z",
            "a b@c.d",
            "<a@b.c>",
        ] {
            assert_eq!(normalize_email(bad), None, "{bad}");
        }
    }
}
