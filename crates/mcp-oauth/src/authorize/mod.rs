//! `GET|POST /oauth/authorize`: validating the authorization request (on GET and again on
//! every POST), the pending authorization with its CSRF token, the two consent paths (email
//! one-time code, or an existing browser session that still needs the Authorize click), and
//! issuing the authorization code. Failures are pages, never redirects. The code step is
//! `code`'s, HTML is `page`'s, the types both share are `step`'s; form parsing, the same-origin
//! check of a POST and the security headers are `web`'s; HTTP framing is `http`'s.

mod code;
mod page;
mod step;

pub use code::{CONSENT_CODE, CodeCheck, normalize_email};
pub(crate) use step::Outcome;
use step::{Flow, Refusal, bad_request, refuse};

use http::{HeaderMap, StatusCode};

use crate::cimd;
use crate::config::ms;
use crate::crypto::{constant_time_eq, is_s256_challenge, sha256_hex};
use crate::directory::{Account, Consent, Door};
use crate::redirect;
use crate::scopes::{self, Offer};
use crate::server::{AuthServer, ClientInfo};
use crate::store::{AuthCodeRecord, GrantSubject, PendingRecord};
use crate::web::{CodeStep, Form, same_origin_post};

/// The parameters an authorization request may carry, each at most once.
const PARAMS: &[&str] = &[
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
    "switch",
];

/// A validated authorization request.
struct Checked {
    client: ClientInfo,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    door: Door,
    requested: scopes::Requested,
}

impl AuthServer {
    /// `GET /oauth/authorize` with the raw query string.
    pub(crate) async fn authorize_get(
        &self,
        query: &str,
        headers: &HeaderMap,
        address: &str,
    ) -> Outcome {
        match self.start(query, headers, address).await {
            Ok(outcome) => outcome,
            Err(refusal) => self.refusal_page(refusal),
        }
    }

    /// `POST /oauth/authorize` with the form body.
    pub(crate) async fn authorize_post(
        &self,
        body: &[u8],
        headers: &HeaderMap,
        address: &str,
    ) -> Outcome {
        match self.step(body, headers, address).await {
            Ok(outcome) => outcome,
            Err(refusal) => self.refusal_page(refusal),
        }
    }

    fn refusal_page(&self, refusal: Refusal) -> Outcome {
        Outcome::Page {
            status: refusal.status,
            html: page::error_page(&self.config.service_name, refusal.title, &refusal.message),
            redirect_uri: None,
        }
    }

    async fn check_request(&self, params: &Form) -> Result<Checked, Refusal> {
        for name in PARAMS {
            if params.count(name) > 1 {
                return Err(bad_request(format!(
                    "The parameter {name} is given more than once."
                )));
            }
        }
        let client_id = params.get("client_id").unwrap_or("");
        let client = match client_id {
            "" => None,
            id => self.client_info(id).await?,
        }
        .ok_or_else(|| {
            bad_request("The application is not registered here (unknown client_id).")
        })?;
        let redirect_uri = params.get("redirect_uri").unwrap_or("");
        if !client
            .redirect_uris
            .iter()
            .any(|r| redirect::matches(r, redirect_uri))
        {
            return Err(bad_request(
                "The redirect_uri is not one this application registered.",
            ));
        }
        if params.get("response_type") != Some("code") {
            return Err(bad_request("response_type must be code."));
        }
        let code_challenge = params.get("code_challenge").unwrap_or("");
        if code_challenge.is_empty() {
            return Err(bad_request("PKCE is required: code_challenge is missing."));
        }
        if params.get("code_challenge_method") != Some("S256") {
            return Err(bad_request("PKCE code_challenge_method must be S256."));
        }
        if !is_s256_challenge(code_challenge) {
            return Err(bad_request(
                "code_challenge must be 43 base64url characters.",
            ));
        }
        let resource = params.get("resource").unwrap_or("");
        if resource.is_empty() {
            return Err(bad_request(
                "The resource parameter (RFC 8707) is required.",
            ));
        }
        let well_formed = !resource.contains('#')
            && url::Url::parse(resource).is_ok_and(|u| matches!(u.scheme(), "https" | "http"));
        let door = match well_formed {
            true => self.doors.door(resource).await?,
            false => None,
        }
        .ok_or_else(|| bad_request("The resource is not a service of this server."))?;
        let requested = scopes::parse_requested(&self.config, params.get("scope"))
            .map_err(|e| bad_request(e.to_string()))?;
        let state = params.get("state").map(str::to_owned);
        if state.as_ref().is_some_and(|s| s.len() > 2048) {
            return Err(bad_request("state is too long."));
        }
        Ok(Checked {
            redirect_uri: redirect_uri.to_owned(),
            state,
            code_challenge: code_challenge.to_owned(),
            door,
            requested,
            client,
        })
    }

    /// Whether resolving `client_id` may fetch its metadata document: enabled, URL-shaped and
    /// past the checks done before any network traffic.
    fn may_fetch_document(&self, client_id: &str) -> bool {
        self.metadata.is_some()
            && self.config.client_id_metadata_documents
            && cimd::looks_like_url(client_id)
            && cimd::check_client_id_url(client_id).is_ok()
    }

    /// Takes one of the consent flows `address` may start this hour (keyed on its
    /// [`limit_key`](crate::limit_key): an IPv6 client by its /64), or the 429 page.
    async fn take_flow(&self, address: &str) -> Result<(), Refusal> {
        let hour = Self::window(self.now(), 3600 * 1000);
        if self
            .store
            .take_rate(
                &format!("flow:addr:{}", mcp_door::limit_key(address)),
                hour,
                self.config.flows_per_address_per_hour,
            )
            .await?
        {
            return Ok(());
        }
        Err(refuse(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-in requests",
            "Too many sign-in requests came from your network in the last hour. Wait a \
             while, then start again from your app.",
        ))
    }

    /// The signed-in account of this browser, unless the flow must use the code.
    async fn session_account(&self, headers: &HeaderMap) -> Result<Option<Account>, Refusal> {
        let Some(account_id) = self.signed_in_account(headers).await? else {
            return Ok(None);
        };
        Ok(self.accounts.account(&account_id).await?)
    }

    /// Whether `account` may skip the code: it must have an address on file when the client
    /// asks for the email scope (the code is where the address is recorded).
    fn may_skip_code(&self, account: &Account, requested: Option<&[String]>) -> bool {
        account.email.is_some() || !requested.is_some_and(|r| r.contains(&self.config.email_scope))
    }

    async fn start(
        &self,
        query: &str,
        headers: &HeaderMap,
        address: &str,
    ) -> Result<Outcome, Refusal> {
        let params = Form::parse(query.as_bytes());
        // Resolving a metadata-document client_id may fetch it from the network, so such a
        // request takes the flow limit before it is resolved (a refused one fetches nothing)
        // and keeps it whatever the outcome: otherwise distinct URLs would make this server
        // fetch without limit. Other requests are checked first and count only when valid.
        let may_fetch = self.may_fetch_document(params.get("client_id").unwrap_or(""));
        if may_fetch {
            self.take_flow(address).await?;
        }
        let checked = self.check_request(&params).await?;
        if !may_fetch {
            self.take_flow(address).await?;
        }
        let switch = params.get("switch") == Some("1");
        let account = if switch {
            None
        } else {
            self.session_account(headers).await?
        };
        let now = self.now();
        let csrf = self.token(32);
        let pending = PendingRecord {
            id: self.token(16),
            csrf_hash: sha256_hex(&csrf),
            client_id: checked.client.client_id.clone(),
            client_name: checked.client.client_name.clone(),
            redirect_uri: checked.redirect_uri,
            state: checked.state,
            code_challenge: checked.code_challenge,
            resource: checked.door.resource.clone(),
            requested_scope: checked.requested.stored(),
            signed_in_account: account.as_ref().map(|a| a.id.clone()),
            email: None,
            created_at: now,
            expires_at: now + ms(self.config.pending_ttl),
            done_at: None,
        };
        self.store.insert_pending(&pending).await?;
        let flow = Flow {
            pending,
            client: checked.client,
            door: checked.door,
            requested: checked.requested.known,
            ignored: checked.requested.ignored,
            csrf,
        };
        let offers = scopes::offers(&self.config, flow.requested.as_deref());
        let html = match account.filter(|a| self.may_skip_code(a, flow.requested.as_deref())) {
            Some(account) => {
                let switch_href = format!("/oauth/authorize?{query}&switch=1");
                let step = page::Step::SignedIn {
                    name: &account.display_name,
                    switch_href: Some(&switch_href),
                    error: None,
                };
                page::consent_page(&self.page_context(&flow, offers), &step)
            }
            None => page::consent_page(
                &self.page_context(&flow, offers),
                &page::Step::EmailCode(CodeStep::Email {
                    error: None,
                    value: "",
                }),
            ),
        };
        Ok(Outcome::Page {
            status: StatusCode::OK,
            html,
            redirect_uri: Some(flow.pending.redirect_uri.clone()),
        })
    }

    fn page_context<'a>(&'a self, flow: &'a Flow, offers: Vec<Offer>) -> page::Context<'a> {
        page::Context {
            service: &self.config.service_name,
            client_name: &flow.client.client_name,
            client_id: &flow.client.client_id,
            from_document: flow.client.from_document,
            redirect_uri: &flow.pending.redirect_uri,
            resource: &flow.door.resource,
            pending_id: &flow.pending.id,
            csrf: &flow.csrf,
            offers,
            ignored: &flow.ignored,
            descriptions: &self.config.scope_descriptions,
        }
    }

    /// The offers with the ticks of a submitted consent form (or the defaults on first show).
    fn ticked_offers(&self, flow: &Flow, form: &Form) -> Vec<Offer> {
        let mut offers = scopes::offers(&self.config, flow.requested.as_deref());
        if form.get("consent") == Some("1") {
            let ticked = form.all("scope");
            for offer in offers.iter_mut().filter(|o| !o.fixed) {
                offer.ticked = ticked.contains(&offer.scope);
            }
        }
        offers
    }

    /// Cross-site POSTs are refused before anything is read (see [`crate::web::same_origin_post`]).
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        same_origin_post(headers, &self.config.issuer)
    }

    async fn load_flow(&self, form: &Form) -> Result<Flow, Refusal> {
        let forbidden = || {
            refuse(
                StatusCode::FORBIDDEN,
                "This form cannot be accepted",
                "The form did not come from this sign-in page. Start again from the application.",
            )
        };
        let id = form.get("request").unwrap_or("");
        let pending = match id {
            "" => None,
            id => self.store.pending(id).await?,
        };
        let Some(pending) = pending else {
            return Err(forbidden());
        };
        let csrf = form.get("csrf").unwrap_or("");
        if csrf.is_empty() || !constant_time_eq(&sha256_hex(csrf), &pending.csrf_hash) {
            return Err(forbidden());
        }
        if pending.done_at.is_some() && self.exhausted(&pending.id).await? {
            // Worded as the attempt that used up the last one, whatever this one carries.
            return Err(code::too_many_attempts());
        }
        if pending.done_at.is_some() || self.now() >= pending.expires_at {
            return Err(bad_request("This sign-in request has ended or expired."));
        }
        // Parameters are validated again on POST: the client or door may be gone since.
        let client = self
            .client_info(&pending.client_id)
            .await?
            .filter(|c| {
                c.redirect_uris
                    .iter()
                    .any(|r| redirect::matches(r, &pending.redirect_uri))
            })
            .ok_or_else(|| bad_request("The application is no longer registered here."))?;
        let door = self
            .doors
            .door(&pending.resource)
            .await?
            .ok_or_else(|| bad_request("The resource is not a service of this server."))?;
        // Stored by `start` from a request that passed the same parse.
        let requested = scopes::parse_requested(&self.config, pending.requested_scope.as_deref())
            .map_err(|e| bad_request(e.to_string()))?;
        Ok(Flow {
            pending,
            client,
            door,
            requested: requested.known,
            ignored: requested.ignored,
            csrf: csrf.to_owned(),
        })
    }

    async fn step(
        &self,
        body: &[u8],
        headers: &HeaderMap,
        address: &str,
    ) -> Result<Outcome, Refusal> {
        if !self.same_origin(headers) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "This form cannot be accepted",
                "Cross-site form submissions are refused.",
            ));
        }
        let form = Form::parse(body);
        let flow = self.load_flow(&form).await?;
        match form.get("action").unwrap_or("") {
            "send_code" => self.send_code(&flow, &form, address).await,
            "verify" => self.verify_code(&flow, &form).await,
            "authorize" => self.authorize_signed_in(&flow, &form, headers).await,
            "deny" => {
                self.store
                    .finish_pending(&flow.pending.id, self.now())
                    .await?;
                Ok(Outcome::Page {
                    status: StatusCode::OK,
                    html: page::notice_page(
                        &self.config.service_name,
                        "Connection declined",
                        &format!(
                            "Nothing was shared with {}. You can close this window.",
                            flow.client.client_name
                        ),
                    ),
                    redirect_uri: None,
                })
            }
            _ => Err(bad_request("Unknown action.")),
        }
    }

    async fn authorize_signed_in(
        &self,
        flow: &Flow,
        form: &Form,
        headers: &HeaderMap,
    ) -> Result<Outcome, Refusal> {
        let account = self.session_account(headers).await?;
        let account = account
            .filter(|a| flow.pending.signed_in_account.as_deref() == Some(a.id.as_str()))
            .filter(|a| self.may_skip_code(a, flow.requested.as_deref()))
            .ok_or_else(|| {
                bad_request("You are no longer signed in as the account this page showed.")
            })?;
        let granted = scopes::granted(&self.config, flow.requested.as_deref(), &form.all("scope"));
        if granted.is_empty() {
            let offers = self.ticked_offers(flow, form);
            return Ok(Outcome::Page {
                status: StatusCode::BAD_REQUEST,
                html: page::consent_page(
                    &self.page_context(flow, offers),
                    &page::Step::SignedIn {
                        name: &account.display_name,
                        switch_href: None,
                        error: Some("Tick at least one capability, or Deny."),
                    },
                ),
                redirect_uri: Some(flow.pending.redirect_uri.clone()),
            });
        }
        self.issue_code(flow, &account, granted, false).await
    }

    /// The consent is given: checks who may consent for the door, ends the flow, stores the
    /// code and answers 303 to the client (signing the browser in after a code consent).
    async fn issue_code(
        &self,
        flow: &Flow,
        account: &Account,
        granted: Vec<String>,
        sign_in: bool,
    ) -> Result<Outcome, Refusal> {
        let subject = match self.doors.consent(&flow.door, &account.id).await? {
            Consent::Personal { kind } => GrantSubject {
                account_id: account.id.clone(),
                subject_kind: kind,
                subject_id: account.id.clone(),
                personal: true,
            },
            Consent::For(subject) => GrantSubject {
                account_id: account.id.clone(),
                subject_kind: subject.kind,
                subject_id: subject.id,
                personal: false,
            },
            Consent::Refused => {
                self.store
                    .finish_pending(&flow.pending.id, self.now())
                    .await?;
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "Not allowed",
                    "This account cannot authorize access to that resource.",
                ));
            }
        };
        let now = self.now();
        if !self.store.finish_pending(&flow.pending.id, now).await? {
            if self.exhausted(&flow.pending.id).await? {
                return Err(code::too_many_attempts());
            }
            return Err(bad_request("This sign-in request has already ended."));
        }
        let code = format!("{}{}", self.config.code_prefix, self.token(32));
        self.store
            .insert_auth_code(&AuthCodeRecord {
                code_hash: sha256_hex(&code),
                client_id: flow.client.client_id.clone(),
                client_name: flow.client.client_name.clone(),
                redirect_uri: flow.pending.redirect_uri.clone(),
                code_challenge: flow.pending.code_challenge.clone(),
                resource: flow.pending.resource.clone(),
                subject,
                scopes: granted,
                created_at: now,
                expires_at: now + ms(self.config.code_ttl),
            })
            .await?;
        self.client_issued_code(&flow.client).await?;
        let set_cookie = match sign_in {
            true => Some(self.sign_in(&account.id).await?),
            false => None,
        };
        let mut location = flow.pending.redirect_uri.clone();
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query.append_pair("code", &code);
        if let Some(state) = &flow.pending.state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &self.config.issuer);
        location.push(if location.contains('?') { '&' } else { '?' });
        location.push_str(&query.finish());
        Ok(Outcome::Redirect {
            location,
            set_cookie,
        })
    }
}
