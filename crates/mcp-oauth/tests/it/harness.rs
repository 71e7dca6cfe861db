//! The test server: a fake product (a person door `/mcp`, agent doors `/a/<id>/mcp` with
//! owners, a few accounts), the file outbox in a temporary directory, a fake clock, and
//! helpers that drive the router like a browser and a client would.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use mcp_door::FakeClock;
use mcp_oauth::crypto::pkce_challenge;
use mcp_oauth::store::OAuthStore;
use mcp_oauth::{
    Account, AccountDirectory, AddressSource, AuthServer, AuthServerConfig, Consent,
    DirectoryError, Door, FetchError, FileOutbox, MetadataFetcher, ResourceDirectory, Secret,
    SqlStore, Subject,
};
use testkit::db::{TempDir, fresh_postgres, fresh_sqlite_url};
use tower::ServiceExt;

pub const ISSUER: &str = "https://auth.example";
pub const PERSON_DOOR: &str = "https://auth.example/mcp";
pub const START_MS: i64 = 1_750_000_000_000;
pub const DEFAULT_SCOPES: &str =
    "cr:read recordings:write collections:write account:write feedback:write";
pub const ALL_SCOPES: [&str; 6] = [
    "cr:read",
    "recordings:write",
    "collections:write",
    "account:write",
    "feedback:write",
    "account:email",
];
/// Agents that exist, and their owners.
pub const AGENT_A: &str = "agenta001";
pub const AGENT_B: &str = "agentb002";

pub fn agent_door(id: &str) -> String {
    format!("{ISSUER}/a/{id}/mcp")
}

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs the function `$name(Backend)` as a test `$name::sqlite` and one `$name::postgres`
/// (skipped without `TEST_DATABASE_URL`, unless `REQUIRE_SERVICES=1`).
#[macro_export]
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name($crate::harness::Backend::Sqlite).await
            }
            #[tokio::test]
            async fn postgres() {
                super::$name($crate::harness::Backend::Postgres).await
            }
        }
    };
    // On a multi-thread runtime, for tests whose requests must really run in parallel.
    ($name:ident, multi_thread) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                super::$name($crate::harness::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                super::$name($crate::harness::Backend::Postgres).await
            }
        }
    };
}

/// The product's doors: `/mcp` for any account; `/a/<id>/mcp` (8–16 of [a-z0-9]) is a door
/// by its shape, and only an existing agent's owner may consent.
pub struct FakeDoors {
    owners: HashMap<String, String>,
}

#[async_trait]
impl ResourceDirectory for FakeDoors {
    async fn door(&self, resource: &str) -> Result<Option<Door>, DirectoryError> {
        if resource == PERSON_DOOR {
            return Ok(Some(Door {
                resource: resource.into(),
                kind: "person".into(),
            }));
        }
        let agent = resource
            .strip_prefix(&format!("{ISSUER}/a/"))
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .filter(|id| {
                (8..=16).contains(&id.len())
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        Ok(agent.map(|_| Door {
            resource: resource.into(),
            kind: "agent".into(),
        }))
    }

    async fn consent(&self, door: &Door, account_id: &str) -> Result<Consent, DirectoryError> {
        if door.kind == "person" {
            return Ok(Consent::Personal {
                kind: "person".into(),
            });
        }
        let id = door
            .resource
            .trim_start_matches(&format!("{ISSUER}/a/"))
            .trim_end_matches("/mcp");
        Ok(match self.owners.get(id) {
            Some(owner) if owner == account_id => Consent::For(Subject {
                kind: "agent".into(),
                id: id.into(),
            }),
            _ => Consent::Refused,
        })
    }
}

/// Accounts `acc-alice` (alice@example.com, owns agent A), `acc-bob` (bob@example.com, owns
/// agent B) and `acc-old` (no address on file). No sign-up.
pub struct FakeAccounts {
    accounts: Mutex<Vec<Account>>,
}

impl FakeAccounts {
    fn new() -> Self {
        let account = |id: &str, name: &str, email: Option<&str>| Account {
            id: id.into(),
            display_name: name.into(),
            email: email.map(str::to_owned),
        };
        Self {
            accounts: Mutex::new(vec![
                account("acc-alice", "Alice", Some("alice@example.com")),
                account("acc-bob", "Bob", Some("bob@example.com")),
                account("acc-old", "Old Timer", None),
            ]),
        }
    }

    pub fn clear_email(&self, id: &str) {
        for a in self
            .accounts
            .lock()
            .unwrap()
            .iter_mut()
            .filter(|a| a.id == id)
        {
            a.email = None;
        }
    }
}

#[async_trait]
impl AccountDirectory for FakeAccounts {
    async fn account_for_verified_email(
        &self,
        email: &str,
        signed_in: Option<&Account>,
    ) -> Result<Option<Account>, DirectoryError> {
        let mut accounts = self.accounts.lock().unwrap();
        if let Some(a) = accounts.iter().find(|a| a.email.as_deref() == Some(email)) {
            return Ok(Some(a.clone()));
        }
        if let Some(signed_in) = signed_in.filter(|a| a.email.is_none())
            && let Some(a) = accounts.iter_mut().find(|a| a.id == signed_in.id)
        {
            a.email = Some(email.to_owned());
            return Ok(Some(a.clone()));
        }
        Ok(None)
    }

    async fn account(&self, id: &str) -> Result<Option<Account>, DirectoryError> {
        Ok(self
            .accounts
            .lock()
            .unwrap()
            .iter()
            .find(|a| a.id == id)
            .cloned())
    }
}

/// Serves metadata documents from memory and counts fetches.
#[derive(Default)]
pub struct FakeFetcher {
    pub documents: Mutex<HashMap<String, String>>,
    pub fetches: Mutex<Vec<String>>,
}

#[async_trait]
impl MetadataFetcher for FakeFetcher {
    async fn fetch(&self, url: &url::Url) -> Result<Vec<u8>, FetchError> {
        self.fetches.lock().unwrap().push(url.to_string());
        self.documents
            .lock()
            .unwrap()
            .get(url.as_str())
            .map(|d| d.clone().into_bytes())
            .ok_or_else(|| FetchError::Failed("status 404".into()))
    }
}

pub fn test_config() -> AuthServerConfig {
    let mut config = AuthServerConfig::new(
        ISSUER,
        Secret::new(*b"0123456789abcdef0123456789abcdef"),
        ALL_SCOPES.iter().map(|s| s.to_string()).collect(),
    );
    config.default_scopes = ALL_SCOPES[..5].iter().map(|s| s.to_string()).collect();
    config.unasked_scopes = vec!["account:email".into()];
    config.service_name = "Example".into();
    config.address_source = AddressSource::Header("x-test-addr".into());
    config.client_id_metadata_documents = true;
    config
}

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

impl Resp {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn location(&self) -> Option<&str> {
        self.header("location")
    }
    /// A hidden or text input's value in the page.
    pub fn field(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no field {name} in page:\n{}", self.body))
            + marker.len();
        self.body[start..].split('"').next().unwrap().to_owned()
    }
    pub fn error_code(&self) -> String {
        self.json()["error"].as_str().unwrap_or_default().to_owned()
    }
    /// The query parameters of the Location header.
    pub fn redirect_params(&self) -> HashMap<String, String> {
        let location = self.location().expect("a Location header");
        let url = url::Url::parse(location).unwrap();
        url.query_pairs().into_owned().collect()
    }
}

pub struct Harness {
    pub server: Arc<AuthServer>,
    pub router: Router,
    pub clock: FakeClock,
    pub accounts: Arc<FakeAccounts>,
    pub fetcher: Arc<FakeFetcher>,
    pub outbox: TempDir,
    config: AuthServerConfig,
    db_url: String,
    _db: Option<TempDir>,
}

async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Resp {
    let mut builder = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = router
        .clone()
        .oneshot(builder.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Resp {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

async fn build(
    config: &AuthServerConfig,
    db_url: &str,
    clock: &FakeClock,
    accounts: &Arc<FakeAccounts>,
    fetcher: &Arc<FakeFetcher>,
    outbox: &TempDir,
) -> Arc<AuthServer> {
    let mut owners = HashMap::new();
    owners.insert(AGENT_A.to_owned(), "acc-alice".to_owned());
    owners.insert(AGENT_B.to_owned(), "acc-bob".to_owned());
    let server = AuthServer::new(
        config.clone(),
        connect(db_url).await,
        Arc::new(FakeDoors { owners }),
        accounts.clone(),
        Arc::new(FileOutbox::new(outbox.path()).unwrap()),
    )
    .unwrap()
    .with_clock(Arc::new(clock.clone()))
    .with_metadata_fetcher(fetcher.clone());
    Arc::new(server)
}

async fn connect(url: &str) -> Arc<dyn OAuthStore> {
    Arc::new(
        SqlStore::connect(url, &SqlStore::DEFAULT_POOL)
            .await
            .unwrap(),
    )
}

/// A client's authorization request.
#[derive(Debug, Clone)]
pub struct AuthRequest {
    pub client_id: String,
    pub redirect_uri: String,
    pub resource: String,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub verifier: String,
}

impl AuthRequest {
    pub fn query(&self) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("code_challenge", &pkce_challenge(&self.verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &self.resource);
        if let Some(scope) = &self.scope {
            q.append_pair("scope", scope);
        }
        if let Some(state) = &self.state {
            q.append_pair("state", state);
        }
        q.finish()
    }
}

/// What a finished token request gave.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub access: String,
    pub refresh: String,
    pub scope: String,
}

pub fn form(pairs: &[(&str, &str)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

impl Harness {
    pub async fn new(backend: Backend) -> Option<Self> {
        Self::with(backend, |_| {}).await
    }

    pub async fn sqlite() -> Self {
        Self::new(Backend::Sqlite).await.unwrap()
    }

    pub async fn with(
        backend: Backend,
        configure: impl FnOnce(&mut AuthServerConfig),
    ) -> Option<Self> {
        let (db_url, db) = match backend {
            Backend::Sqlite => {
                let (dir, url) = fresh_sqlite_url();
                (url, Some(dir))
            }
            Backend::Postgres => (fresh_postgres().await?, None),
        };
        let mut config = test_config();
        configure(&mut config);
        connect(&db_url).await.migrate().await.unwrap();
        let clock = FakeClock::new(START_MS);
        let accounts = Arc::new(FakeAccounts::new());
        let fetcher = Arc::new(FakeFetcher::default());
        let outbox = TempDir::new("mcp-oauth-outbox-");
        let server = build(&config, &db_url, &clock, &accounts, &fetcher, &outbox).await;
        Some(Self {
            router: server.router(),
            server,
            clock,
            accounts,
            fetcher,
            outbox,
            config,
            db_url,
            _db: db,
        })
    }

    /// Another server instance on the same database, clock, accounts and outbox (what a
    /// second process behind the load balancer would be).
    pub async fn instance(&self) -> Arc<AuthServer> {
        build(
            &self.config,
            &self.db_url,
            &self.clock,
            &self.accounts,
            &self.fetcher,
            &self.outbox,
        )
        .await
    }

    pub fn advance_secs(&self, secs: i64) {
        self.clock.advance_millis(secs * 1000);
    }

    pub fn router_of(server: &Arc<AuthServer>) -> Router {
        server.router()
    }

    /// A form POST to another instance's router.
    pub async fn request_to(&self, router: &Router, method: &str, uri: &str, body: &str) -> Resp {
        send(
            router,
            method,
            uri,
            &[("content-type", "application/x-www-form-urlencoded")],
            body,
        )
        .await
    }

    pub async fn request(
        &self,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Resp {
        send(&self.router, method, uri, headers, body).await
    }

    pub async fn get(&self, uri: &str, headers: &[(&str, &str)]) -> Resp {
        self.request("GET", uri, headers, "").await
    }

    /// A form POST as the consent page's own browser sends it.
    pub async fn post_page(&self, body: &str, extra: &[(&str, &str)]) -> Resp {
        let mut headers = vec![
            ("content-type", "application/x-www-form-urlencoded"),
            ("origin", ISSUER),
            ("sec-fetch-site", "same-origin"),
            ("x-test-addr", "198.51.100.7"),
        ];
        headers.retain(|(name, _)| !extra.iter().any(|(n, _)| n == name));
        headers.extend_from_slice(extra);
        self.request("POST", "/oauth/authorize", &headers, body)
            .await
    }

    pub async fn post_token(&self, pairs: &[(&str, &str)]) -> Resp {
        self.request(
            "POST",
            "/oauth/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            &form(pairs),
        )
        .await
    }

    pub async fn register_from(&self, address: &str, doc: serde_json::Value) -> Resp {
        self.request(
            "POST",
            "/oauth/register",
            &[
                ("content-type", "application/json"),
                ("x-test-addr", address),
            ],
            &doc.to_string(),
        )
        .await
    }

    /// Registers a client with these redirect URIs; its id.
    pub async fn register(&self, redirect_uris: &[&str]) -> String {
        let r = self
            .register_from(
                "203.0.113.1",
                serde_json::json!({"client_name": "Test Client", "redirect_uris": redirect_uris}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.json()["client_id"].as_str().unwrap().to_owned()
    }

    /// A fresh client and a request for the person door naming no scope.
    pub async fn client_request(&self) -> AuthRequest {
        let client_id = self.register(&["https://client.example/callback"]).await;
        AuthRequest {
            client_id,
            redirect_uri: "https://client.example/callback".into(),
            resource: PERSON_DOOR.into(),
            scope: None,
            state: Some("st-123".into()),
            verifier: "v".repeat(20) + "erifier-0123456789-abcdefghijkl",
        }
    }

    pub async fn open(&self, req: &AuthRequest, headers: &[(&str, &str)]) -> Resp {
        self.get(&format!("/oauth/authorize?{}", req.query()), headers)
            .await
    }

    /// Posts the email step of `page`.
    pub async fn send_code(&self, page: &Resp, email: &str) -> Resp {
        let body = form(&[
            ("request", &page.field("request")),
            ("csrf", &page.field("csrf")),
            ("action", "send_code"),
            ("email", email),
        ]);
        self.post_page(&body, &[]).await
    }

    /// Posts the code step of `page` with `code` and these ticks (`None`: the page's own).
    pub async fn enter_code(&self, page: &Resp, code: &str, ticks: Option<&[&str]>) -> Resp {
        self.post_page(&verify_form(page, code, ticks), &[]).await
    }

    /// A consent-page POST of `body` that owns what it needs, so it can be spawned.
    pub fn post_page_owned(&self, body: String) -> impl Future<Output = Resp> + Send + 'static {
        let router = self.router.clone();
        async move {
            let headers = [
                ("content-type", "application/x-www-form-urlencoded"),
                ("origin", ISSUER),
                ("sec-fetch-site", "same-origin"),
                ("x-test-addr", "198.51.100.7"),
            ];
            send(&router, "POST", "/oauth/authorize", &headers, &body).await
        }
    }

    /// The newest code mailed to `email`, read from the outbox's `.eml` files.
    pub fn mailed_code(&self, email: &str) -> String {
        self.mails_to(email)
            .last()
            .and_then(|text| {
                let at = text.find("Your code: ")? + "Your code: ".len();
                Some(text[at..at + 6].to_owned())
            })
            .unwrap_or_else(|| panic!("no code mailed to {email}"))
    }

    pub fn mails_to(&self, email: &str) -> Vec<String> {
        let mut files: Vec<_> = std::fs::read_dir(self.outbox.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .filter(|t| t.contains(&format!("To: {email}")))
            .collect()
    }

    /// Runs the email-code consent to its 303.
    pub async fn consent_by_code(
        &self,
        req: &AuthRequest,
        email: &str,
        ticks: Option<&[&str]>,
    ) -> Resp {
        let page = self.open(req, &[]).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let code_page = self.send_code(&page, email).await;
        assert_eq!(code_page.status, StatusCode::OK, "{}", code_page.body);
        let code = self.mailed_code(email);
        self.enter_code(&code_page, &code, ticks).await
    }

    /// An authorization code for `req` consented by `email`.
    pub async fn code_for(&self, req: &AuthRequest, email: &str, ticks: Option<&[&str]>) -> String {
        let done = self.consent_by_code(req, email, ticks).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
        done.redirect_params()["code"].clone()
    }

    pub async fn exchange(&self, req: &AuthRequest, code: &str) -> Resp {
        self.post_token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("client_id", &req.client_id),
            ("redirect_uri", &req.redirect_uri),
            ("code_verifier", &req.verifier),
            ("resource", &req.resource),
        ])
        .await
    }

    /// Consent by `email`, then the code exchange.
    pub async fn tokens(&self, req: &AuthRequest, email: &str, ticks: Option<&[&str]>) -> Tokens {
        let code = self.code_for(req, email, ticks).await;
        let r = self.exchange(req, &code).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        tokens_of(&r)
    }

    pub async fn refresh(&self, req: &AuthRequest, refresh: &str) -> Resp {
        self.post_token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &req.client_id),
            ("resource", &req.resource),
        ])
        .await
    }
}

/// The form the code step of `page` posts with `code` and these ticks (`None`: the page's own).
pub fn verify_form(page: &Resp, code: &str, ticks: Option<&[&str]>) -> String {
    let mut pairs = vec![
        ("request".to_owned(), page.field("request")),
        ("csrf".to_owned(), page.field("csrf")),
        ("action".to_owned(), "verify".to_owned()),
        ("code".to_owned(), code.to_owned()),
        ("consent".to_owned(), "1".to_owned()),
    ];
    for scope in ticks.map_or_else(
        || ticked(page),
        |t| t.iter().map(|s| s.to_string()).collect(),
    ) {
        pairs.push(("scope".into(), scope));
    }
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    form(&refs)
}

pub fn tokens_of(r: &Resp) -> Tokens {
    let j = r.json();
    Tokens {
        access: j["access_token"].as_str().unwrap().to_owned(),
        refresh: j["refresh_token"].as_str().unwrap().to_owned(),
        scope: j["scope"].as_str().unwrap().to_owned(),
    }
}

/// The checkboxes ticked on a consent page.
pub fn ticked(page: &Resp) -> Vec<String> {
    page.body
        .split("<input type=\"checkbox\" name=\"scope\" value=\"")
        .skip(1)
        .filter_map(|rest| {
            let (value, after) = rest.split_once('"')?;
            after.starts_with(" checked").then(|| value.to_owned())
        })
        .collect()
}

/// The security headers every consent-page answer carries.
pub fn assert_page_headers(r: &Resp) {
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("frame-ancestors 'none'"), "CSP: {csp}");
    assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(r.header("cache-control"), Some("no-store"));
}
