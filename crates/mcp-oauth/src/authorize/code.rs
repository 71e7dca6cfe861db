//! The email one-time code step of the consent page: sending a code (rate-limited per
//! client address and per email, the same answer for known and unknown addresses) and
//! checking one (HMAC-compared, five wrong entries end the flow). The rest of the flow is
//! the parent module's.

use http::StatusCode;

use super::{Flow, Outcome, Params, Refusal, page, refuse};
use crate::config::ms;
use crate::crypto::{constant_time_eq, hmac_hex, sha256_hex};
use crate::mail::Mail;
use crate::random;
use crate::scopes;
use crate::server::AuthServer;
use crate::store::EmailCodeRecord;

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
                &page::Step::Email {
                    error: Some(error),
                    value,
                },
            ),
        }
    }

    pub(super) fn code_step(
        &self,
        flow: &Flow,
        form: &Params,
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
                &page::Step::Code { email, error },
            ),
        }
    }

    /// Sends a code to the typed address. The answer is the same page whether or not an
    /// account uses the address: every well-formed address gets a code, and the account is
    /// looked up only once the code proves the address.
    pub(super) async fn send_code(
        &self,
        flow: &Flow,
        form: &Params,
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
        let address_bucket = format!("code:addr:{address}");
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
                code_hash: self.code_hash(&flow.pending.id, &code),
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

    pub(super) fn code_hash(&self, pending_id: &str, code: &str) -> String {
        hmac_hex(
            self.config.secret.bytes(),
            &["email-code", pending_id, code],
        )
    }

    pub(super) async fn verify_code(&self, flow: &Flow, form: &Params) -> Result<Outcome, Refusal> {
        let typed: String = form
            .get("code")
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let now = self.now();
        let Some(record) = self.store.email_code(&flow.pending.id).await? else {
            return Ok(self.email_step(flow, "Ask for a code first.", "", StatusCode::BAD_REQUEST));
        };
        let email = record.email.clone();
        let max = self.config.email_code.max_attempts;
        if record.attempts >= max {
            self.store.finish_pending(&flow.pending.id, now).await?;
            return Err(too_many_attempts());
        }
        if record.used_at.is_some() {
            return Ok(self.code_step(
                flow,
                form,
                &email,
                Some("That code was already used. Send a new code."),
            ));
        }
        if now >= record.expires_at {
            return Ok(self.code_step(
                flow,
                form,
                &email,
                Some("That code has expired. Send a new code."),
            ));
        }
        if !constant_time_eq(&self.code_hash(&flow.pending.id, &typed), &record.code_hash) {
            let attempts = self.store.count_code_attempt(&flow.pending.id).await?;
            if attempts >= max {
                self.store.finish_pending(&flow.pending.id, now).await?;
                return Err(too_many_attempts());
            }
            let left = max - attempts;
            let message = format!(
                "That code is not right. {left} attempt{} left.",
                if left == 1 { "" } else { "s" }
            );
            return Ok(self.code_step(flow, form, &email, Some(&message)));
        }
        let granted = scopes::granted(&self.config, flow.requested.as_deref(), &form.all("scope"));
        if granted.is_empty() {
            return Ok(self.code_step(
                flow,
                form,
                &email,
                Some("Tick at least one capability, or Deny."),
            ));
        }
        if !self.store.use_email_code(&flow.pending.id, now).await? {
            return Ok(self.code_step(
                flow,
                form,
                &email,
                Some("That code was already used. Send a new code."),
            ));
        }
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

fn too_many_attempts() -> Refusal {
    refuse(
        StatusCode::FORBIDDEN,
        "Too many wrong codes",
        "The code was entered wrongly too many times. Start again from the application.",
    )
}

/// A lowercased address with one `@`, a dotted domain, and nothing that could break a mail
/// header; `None` otherwise.
pub(crate) fn normalize_email(typed: &str) -> Option<String> {
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
