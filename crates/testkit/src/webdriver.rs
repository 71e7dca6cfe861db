//! A small W3C WebDriver client for real-browser tests: starts `chromedriver` on a free
//! 127.0.0.1 port, opens one headless Chromium session and drives pages by CSS selector;
//! Chromium's own traffic to the internet is sent to a closed loopback port.
//! Binaries come from `CHROMEDRIVER` (default `chromedriver` on `PATH`) and `CHROMIUM` (default
//! `/usr/bin/chromium`); nothing is downloaded. Whether a missing browser skips or fails a test
//! is [`available`]'s rule, the one [`crate::db::service_env`] applies to databases.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::db::{TempDir, services_required};

/// The only switches Chromium gets besides its profile directory (and the proxy chromedriver
/// derives from the W3C `proxy` capability, see [`DEAD_PROXY`]).
pub const CHROMIUM_ARGS: [&str; 4] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
];
/// How long [`Browser::find`] and the navigation waits poll before giving up.
const WAIT: Duration = Duration::from_secs(15);
const POLL: Duration = Duration::from_millis(50);
/// Where Chromium's own traffic goes: a closed port no test server can take (port-0 binds get
/// ephemeral ports).
const DEAD_PROXY: &str = "127.0.0.1:9";
/// The W3C key of an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The chromedriver to run: `CHROMEDRIVER` (a path, or a name looked up on `PATH`), else
/// `chromedriver` on `PATH`; `None` when it is not an executable file.
pub fn chromedriver_path() -> Option<PathBuf> {
    executable(&env_or("CHROMEDRIVER", "chromedriver"))
}

/// The Chromium binary: `CHROMIUM`, else `/usr/bin/chromium`; `None` when it is missing.
pub fn chromium_path() -> Option<PathBuf> {
    executable(&env_or("CHROMIUM", "/usr/bin/chromium"))
}

fn env_or(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_owned())
}

fn executable(name: &str) -> Option<PathBuf> {
    let is_executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let path = PathBuf::from(name);
        return is_executable(&path).then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
}

/// Whether chromedriver and Chromium are both installed. A test skips (with an `eprintln`)
/// when this is false; with `REQUIRE_SERVICES=1` a missing browser panics here instead, so CI
/// cannot silently skip the browser tests.
pub fn available() -> bool {
    let mut missing = Vec::new();
    if chromedriver_path().is_none() {
        missing.push(format!(
            "chromedriver ({})",
            env_or("CHROMEDRIVER", "chromedriver")
        ));
    }
    if chromium_path().is_none() {
        missing.push(format!(
            "chromium ({})",
            env_or("CHROMIUM", "/usr/bin/chromium")
        ));
    }
    if missing.is_empty() {
        return true;
    }
    if services_required() {
        panic!(
            "{} not found, and REQUIRE_SERVICES=1 requires the browser tests",
            missing.join(" and ")
        );
    }
    false
}

/// What a WebDriver command answered instead of a value.
#[derive(Debug, Clone)]
pub struct WebDriverError {
    /// The W3C error code, e.g. `no such element`.
    pub error: String,
    pub message: String,
}

impl std::fmt::Display for WebDriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.message)
    }
}

/// The chromedriver child and its session; dropping it ends both, so a panicking test leaves
/// no browser behind.
struct Driver {
    child: Child,
    port: u16,
    session: Option<String>,
    /// The chromedriver log and the Chromium profile live here.
    dir: TempDir,
}

impl Driver {
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("chromedriver.log")).unwrap_or_default()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Quitting the session is what makes chromedriver close Chromium; Drop cannot await,
        // so it is one plain blocking HTTP request to the local chromedriver.
        if let Some(session) = self.session.take() {
            delete_session_blocking(self.port, &session);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn delete_session_blocking(port: u16, session: &str) {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let request = format!(
        "DELETE /session/{session} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_ok() {
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port on 127.0.0.1: {e}"))
}

/// One headless Chromium session behind its own chromedriver.
pub struct Browser {
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/session/<id>`.
    base: String,
    driver: Driver,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser").field("base", &self.base).finish()
    }
}

impl Browser {
    /// Starts chromedriver on a free 127.0.0.1 port and a headless Chromium session with
    /// [`CHROMIUM_ARGS`] and a fresh profile. Panics when either binary is missing (check
    /// [`available`] first) or the session cannot be created.
    pub async fn start() -> Self {
        let chromedriver = chromedriver_path().expect("chromedriver not found");
        let chromium = chromium_path().expect("chromium not found");
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        // The free port is released before chromedriver binds it; another process can take it
        // in between, so a failed start is tried again on a new port.
        let mut failures = Vec::new();
        for _ in 0..3 {
            let mut driver = spawn_driver(&chromedriver);
            match wait_ready(&http, &mut driver).await {
                Ok(()) => {
                    let session = new_session(&http, &driver, &chromium).await;
                    driver.session = Some(session.clone());
                    let base = format!("http://127.0.0.1:{}/session/{session}", driver.port);
                    return Self { http, base, driver };
                }
                Err(why) => failures.push(format!("{why}\n{}", driver.log())),
            }
        }
        panic!("chromedriver did not start:\n{}", failures.join("\n---\n"))
    }

    async fn command(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, WebDriverError> {
        call(&self.http, method, &format!("{}{path}", self.base), body).await
    }

    async fn expect(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        self.command(method.clone(), path, body)
            .await
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"))
    }

    /// Opens `url` and waits for it to load.
    pub async fn goto(&self, url: &str) {
        self.expect(Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    /// The address of the current page.
    pub async fn current_url(&self) -> String {
        string(self.expect(Method::GET, "/url", None).await)
    }

    /// The current page's `<title>`.
    pub async fn title(&self) -> String {
        string(self.expect(Method::GET, "/title", None).await)
    }

    /// The current page's HTML as the browser holds it.
    pub async fn page_source(&self) -> String {
        string(self.expect(Method::GET, "/source", None).await)
    }

    /// The first element matching `css`, waiting up to 15 s for it to appear.
    pub async fn find(&self, css: &str) -> Element<'_> {
        let started = tokio::time::Instant::now();
        loop {
            match self.try_find(css).await {
                Ok(element) => return element,
                Err(e) if e.error == "no such element" && started.elapsed() < WAIT => {
                    tokio::time::sleep(POLL).await;
                }
                Err(e) => panic!(
                    "no element {css} on {} ({e}):\n{}",
                    self.current_url().await,
                    self.page_source().await
                ),
            }
        }
    }

    /// The first element matching `css` right now.
    pub async fn try_find(&self, css: &str) -> Result<Element<'_>, WebDriverError> {
        let value = self
            .command(Method::POST, "/element", Some(by_css(css)))
            .await?;
        Ok(Element {
            browser: self,
            id: element_id(&value),
        })
    }

    /// Every element matching `css` right now (no waiting).
    pub async fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let value = self
            .expect(Method::POST, "/elements", Some(by_css(css)))
            .await;
        value
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|v| Element {
                        browser: self,
                        id: element_id(v),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Submits a form by clicking its button `button_css`, then waits until a new document
    /// (the answer, or wherever its redirects led) has replaced the page and loaded.
    pub async fn submit(&self, button_css: &str) {
        self.click_and_wait(button_css).await;
    }

    /// Clicks `css` (a link, or a form's button) and waits for the next page as [`submit`]
    /// does.
    ///
    /// [`submit`]: Self::submit
    pub async fn click_and_wait(&self, css: &str) {
        let old = self.find("html").await.id;
        self.find(css).await.click().await;
        let started = tokio::time::Instant::now();
        loop {
            // A new document has a new root element. While the old one is being replaced,
            // commands can fail in passing ways (stale element, "node does not belong to the
            // document"); those are retried until the wait runs out.
            let why = match self.try_find("html").await {
                Ok(root) if root.id != old => break,
                Ok(_) => "the old page is still shown".to_owned(),
                Err(e) => e.to_string(),
            };
            if started.elapsed() >= WAIT {
                panic!(
                    "clicking {css} did not lead to a new page ({why}); at {}:\n{}",
                    self.current_url().await,
                    self.page_source().await
                );
            }
            tokio::time::sleep(POLL).await;
        }
        // Any command waits for the new document to finish loading.
        self.current_url().await;
    }

    /// Waits up to 15 s until the current URL satisfies `ready`; returns it.
    pub async fn wait_for_url(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let started = tokio::time::Instant::now();
        loop {
            let url = self.current_url().await;
            if ready(&url) {
                return url;
            }
            if started.elapsed() >= WAIT {
                panic!("the browser stayed at {url}, waiting for {what}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The cookies the browser holds for the current page, as `(name, value)`.
    pub async fn cookies(&self) -> Vec<(String, String)> {
        let value = self.expect(Method::GET, "/cookie", None).await;
        value
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|c| (string(c["name"].clone()), string(c["value"].clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns its
    /// value.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.expect(
            Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Sets the browser window's size in CSS pixels (screenshots show the viewport).
    pub async fn resize(&self, width: u32, height: u32) {
        self.expect(
            Method::POST,
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        )
        .await;
    }

    /// Saves a PNG screenshot of the current page at `path` (its directory is created).
    pub async fn screenshot(&self, path: &Path) {
        let value = self.expect(Method::GET, "/screenshot", None).await;
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(string(value))
            .unwrap_or_else(|e| panic!("the screenshot is not base64: {e}"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        }
        std::fs::write(path, png).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// The browser console's entries since the last call, as `(level, message)`: console
    /// errors, failed loads and Content-Security-Policy violations all land here (the session
    /// records every level).
    pub async fn console_log(&self) -> Vec<(String, String)> {
        let value = self
            .expect(Method::POST, "/se/log", Some(json!({"type": "browser"})))
            .await;
        value
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|e| (string(e["level"].clone()), string(e["message"].clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ends the session (Chromium quits) and stops chromedriver.
    pub async fn close(mut self) {
        if let Some(session) = self.driver.session.take() {
            let url = format!("http://127.0.0.1:{}/session/{session}", self.driver.port);
            if let Err(e) = call(&self.http, Method::DELETE, &url, None).await {
                panic!("closing the session: {e}");
            }
        }
    }
}

/// One element of the current page.
pub struct Element<'b> {
    browser: &'b Browser,
    id: String,
}

impl std::fmt::Debug for Element<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Element").field("id", &self.id).finish()
    }
}

impl Element<'_> {
    fn path(&self, rest: &str) -> String {
        format!("/element/{}{rest}", self.id)
    }

    /// Types `text` into the element.
    pub async fn send_keys(&self, text: &str) {
        self.browser
            .expect(
                Method::POST,
                &self.path("/value"),
                Some(json!({ "text": text })),
            )
            .await;
    }

    /// Empties an input.
    pub async fn clear(&self) {
        self.browser
            .expect(Method::POST, &self.path("/clear"), Some(json!({})))
            .await;
    }

    /// Clicks the element as a user would (scrolled into view, must be interactable).
    pub async fn click(&self) {
        self.browser
            .expect(Method::POST, &self.path("/click"), Some(json!({})))
            .await;
    }

    /// The rendered text.
    pub async fn text(&self) -> String {
        string(
            self.browser
                .expect(Method::GET, &self.path("/text"), None)
                .await,
        )
    }

    /// An attribute, or `None` when the element lacks it.
    pub async fn attribute(&self, name: &str) -> Option<String> {
        self.browser
            .expect(Method::GET, &self.path(&format!("/attribute/{name}")), None)
            .await
            .as_str()
            .map(str::to_owned)
    }

    /// Whether a checkbox or radio button is ticked.
    pub async fn is_selected(&self) -> bool {
        self.browser
            .expect(Method::GET, &self.path("/selected"), None)
            .await
            .as_bool()
            .unwrap_or(false)
    }
}

fn by_css(css: &str) -> Value {
    json!({ "using": "css selector", "value": css })
}

fn element_id(value: &Value) -> String {
    value[ELEMENT_KEY]
        .as_str()
        .unwrap_or_else(|| panic!("not an element reference: {value}"))
        .to_owned()
}

fn string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One WebDriver command: the `value` of the answer, or its error.
async fn call(
    http: &reqwest::Client,
    method: Method,
    url: &str,
    body: Option<Value>,
) -> Result<Value, WebDriverError> {
    let mut request = http.request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let transport = |e: reqwest::Error| WebDriverError {
        error: "transport".to_owned(),
        message: e.to_string(),
    };
    let response = request.send().await.map_err(transport)?;
    let ok = response.status().is_success();
    let mut answer: Value = response.json().await.map_err(transport)?;
    let value = answer["value"].take();
    if ok {
        Ok(value)
    } else {
        Err(WebDriverError {
            error: string(value["error"].clone()),
            message: string(value["message"].clone()),
        })
    }
}

fn spawn_driver(chromedriver: &Path) -> Driver {
    let port = free_port();
    let dir = TempDir::new("webdriver-");
    let child = Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .arg(format!(
            "--log-path={}",
            dir.path().join("chromedriver.log").display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", chromedriver.display()));
    Driver {
        child,
        port,
        session: None,
        dir,
    }
}

/// Polls `/status` until chromedriver says it is ready.
async fn wait_ready(http: &reqwest::Client, driver: &mut Driver) -> Result<(), String> {
    let url = format!("http://127.0.0.1:{}/status", driver.port);
    let started = tokio::time::Instant::now();
    loop {
        if let Ok(Some(status)) = driver.child.try_wait() {
            return Err(format!("chromedriver exited with {status}"));
        }
        if let Ok(value) = call(http, Method::GET, &url, None).await
            && value["ready"] == true
        {
            return Ok(());
        }
        if started.elapsed() >= WAIT {
            return Err(format!("chromedriver not ready on port {}", driver.port));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn new_session(http: &reqwest::Client, driver: &Driver, chromium: &Path) -> String {
    let profile = driver.dir.path().join("profile");
    let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|a| (*a).to_owned()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    // Even with --disable-background-networking, Chromium resolves and contacts hosts of its
    // own (accounts.google.com, update.googleapis.com, clients2.google.com, the default search
    // engine). The W3C proxy capability sends all of it to a closed loopback port (9, discard);
    // Chromium never proxies loopback, so the servers under test are reached directly and
    // nothing leaves 127.0.0.1.
    let capabilities = json!({
        "capabilities": {
            "alwaysMatch": {
                "browserName": "chrome",
                "proxy": {
                    "proxyType": "manual",
                    "httpProxy": DEAD_PROXY,
                    "sslProxy": DEAD_PROXY,
                },
                "goog:chromeOptions": {
                    "binary": chromium.display().to_string(),
                    "args": args,
                },
                // Every console entry is kept for `console_log`.
                "goog:loggingPrefs": {"browser": "ALL"},
            },
        },
    });
    let url = format!("http://127.0.0.1:{}/session", driver.port);
    let value = call(http, Method::POST, &url, Some(capabilities))
        .await
        .unwrap_or_else(|e| panic!("cannot start Chromium: {e}\n{}", driver.log()));
    value["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no sessionId in {value}"))
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_executables_by_path_or_name() {
        assert_eq!(executable("/bin/sh"), Some(PathBuf::from("/bin/sh")));
        assert!(executable("sh").is_some_and(|p| p.ends_with("sh")));
        assert_eq!(executable("/nonexistent/chromedriver"), None);
        assert_eq!(executable("no-such-binary-on-any-path"), None);
        // A directory or a plain file is not a program.
        assert_eq!(executable("/tmp"), None);
    }

    /// The client end to end: a page served from a data: URL (no network at all), typed into
    /// and submitted. Skips without a browser, fails without one under REQUIRE_SERVICES=1.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn drives_a_page() {
        if !available() {
            eprintln!("skipped: chromedriver or chromium not installed");
            return;
        }
        let browser = Browser::start().await;
        browser
            .goto(
                "data:text/html,<title>Form</title><form action=\"about:blank\">\
                 <input id=\"q\" name=\"q\" value=\"a\"><input type=\"checkbox\" id=\"c\" checked>\
                 <p id=\"p\" data-x=\"1\">Hello <b>there</b></p>\
                 <button id=\"go\">Go</button></form>",
            )
            .await;
        assert_eq!(browser.title().await, "Form");
        assert!(browser.page_source().await.contains("id=\"q\""));
        assert_eq!(browser.find("#p").await.text().await, "Hello there");
        assert_eq!(
            browser.find("#p").await.attribute("data-x").await,
            Some("1".into())
        );
        assert_eq!(browser.find("#p").await.attribute("nope").await, None);
        let q = browser.find("#q").await;
        q.clear().await;
        q.send_keys("typed").await;
        assert_eq!(q.attribute("name").await, Some("q".into()));
        let c = browser.find("#c").await;
        assert!(c.is_selected().await);
        c.click().await;
        assert!(!c.is_selected().await);
        assert_eq!(browser.find_all("input").await.len(), 2);
        assert!(browser.try_find("#missing").await.is_err());
        browser.submit("#go").await;
        assert_eq!(browser.current_url().await, "about:blank?q=typed");
        browser.close().await;
    }
}
