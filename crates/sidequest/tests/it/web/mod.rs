//! The web pages over a real listener: a form-posting browser (cookies kept by hand, no
//! redirects followed) and the areas' tests — security headers and static files, sign-in,
//! CSRF on every form, the access matrix, the whole play loop, bounds, review and language.

mod access;
mod chromium;
mod flow;
mod forms;

use std::collections::BTreeMap;

use crate::rest::{World, password_of, world};
use crate::support::Server;

/// One page answer.
#[derive(Debug)]
pub(crate) struct Page {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Page {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[track_caller]
    pub fn expect(&self, status: u16) -> &Self {
        assert_eq!(self.status, status, "page: {}", self.text);
        self
    }

    pub fn location(&self) -> &str {
        self.header("location")
    }

    /// The play token a token panel shows (once).
    pub fn hidden_token(&self) -> String {
        let needle = "id=\"play-token\" class=\"secret\" readonly value=\"";
        let at = self
            .text
            .find(needle)
            .unwrap_or_else(|| panic!("no token shown in {}", self.text));
        let rest = &self.text[at + needle.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }

    /// The value of the hidden input `name`.
    pub fn hidden(&self, name: &str) -> String {
        let needle = format!("name=\"{name}\" value=\"");
        let at = self
            .text
            .find(&needle)
            .unwrap_or_else(|| panic!("no {name} in {}", self.text));
        let rest = &self.text[at + needle.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

/// A browser: its cookies, no redirects followed.
#[derive(Clone)]
pub(crate) struct Browser {
    base: String,
    http: reqwest::Client,
    pub cookies: BTreeMap<String, String>,
}

impl Browser {
    pub fn new(server: &Server) -> Self {
        Self {
            base: format!("http://{}", server.addr),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
        }
    }

    fn keep_cookies(&mut self, headers: &reqwest::header::HeaderMap) {
        for v in headers.get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let pair = v.split(';').next().unwrap();
            let (k, val) = pair.split_once('=').unwrap();
            if v.contains("Max-Age=0") {
                self.cookies.remove(k);
            } else {
                self.cookies.insert(k.to_owned(), val.to_owned());
            }
        }
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> Page {
        let cookie = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let req = if cookie.is_empty() {
            req
        } else {
            req.header("cookie", cookie)
        };
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        self.keep_cookies(&headers);
        let text = r.text().await.expect("body");
        Page {
            status,
            headers,
            text,
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let req = self.http.get(format!("{}{path}", self.base));
        self.send(req).await
    }

    /// A form POST as a browser sends it from our own page.
    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("sec-fetch-site", "same-origin")
            .form(form);
        self.send(req).await
    }

    /// A form POST from another site (what a CSRF attack sends).
    pub async fn post_cross_site(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("sec-fetch-site", "cross-site")
            .header("origin", "https://evil.example")
            .form(form);
        self.send(req).await
    }

    /// Signs in through the form (expecting success).
    pub async fn sign_in(mut self, username: &str) -> Self {
        let r = self
            .post(
                "/signin",
                &[
                    ("username", username),
                    ("password", &password_of(username)),
                    ("next", "/"),
                ],
            )
            .await;
        r.expect(303);
        assert!(self.cookies.contains_key("sq_session"), "{:?}", r.headers);
        assert!(self.cookies.contains_key("sq_csrf"));
        self
    }

    /// The CSRF token of this browser's session (the one its pages carry).
    pub fn csrf(&self) -> String {
        self.cookies["sq_csrf"].clone()
    }
}

/// The REST world (gm, player, rival, gone; the demo scenario) for page tests.
pub(crate) async fn page_world(url: &str) -> World {
    world(url).await
}
