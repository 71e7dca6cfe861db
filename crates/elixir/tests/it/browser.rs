//! A minimal browser for the server-rendered pages: one cookie, no redirects followed, forms
//! read from the HTML (hidden fields and ticked checkboxes) and submitted as a browser would.

use std::path::{Path, PathBuf};

use reqwest::header::HeaderMap;

/// One answer.
#[derive(Debug)]
pub struct Page {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn forms(&self) -> Vec<Form> {
        forms(&self.body)
    }

    /// The one form posting to an action ending in `suffix`.
    pub fn form(&self, suffix: &str) -> Form {
        let mut found: Vec<Form> = self
            .forms()
            .into_iter()
            .filter(|f| f.action.ends_with(suffix))
            .collect();
        assert_eq!(found.len(), 1, "forms ending {suffix} in {}", self.body);
        found.remove(0)
    }

    /// The security headers every page carries.
    pub fn assert_secure(&self) {
        assert!(
            self.header("content-security-policy")
                .contains("frame-ancestors 'none'"),
            "CSP {:?}",
            self.headers
        );
        assert_eq!(self.header("referrer-policy"), "no-referrer");
        assert_eq!(self.header("cache-control"), "no-store");
        assert_eq!(self.header("x-frame-options"), "DENY");
        assert_eq!(self.header("x-content-type-options"), "nosniff");
    }
}

/// A form as the page renders it.
#[derive(Debug, Clone)]
pub struct Form {
    pub action: String,
    pub hidden: Vec<(String, String)>,
    pub checked: Vec<(String, String)>,
}

impl Form {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.hidden
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The hidden fields plus `extra`.
    pub fn with(&self, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        self.hidden
            .iter()
            .cloned()
            .chain(
                extra
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
            )
            .collect()
    }
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let needle = format!(" {name}=\"");
    let start = tag.find(&needle)? + needle.len();
    let end = tag[start..].find('"')?;
    Some(
        tag[start..start + end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&#39;", "'")
            .replace("&amp;", "&"),
    )
}

/// Every form of `html`.
pub fn forms(html: &str) -> Vec<Form> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<form") {
        let after = &rest[start..];
        let end = after.find("</form>").unwrap_or(after.len());
        let body = &after[..end];
        let open_end = body.find('>').unwrap_or(body.len());
        let mut form = Form {
            action: attr(&body[..open_end], "action").unwrap_or_default(),
            hidden: Vec::new(),
            checked: Vec::new(),
        };
        let mut inputs = body;
        while let Some(i) = inputs.find("<input") {
            let tag_end = inputs[i..].find('>').map_or(inputs.len(), |e| i + e);
            let tag = &inputs[i..tag_end];
            let name = attr(tag, "name").unwrap_or_default();
            let value = attr(tag, "value").unwrap_or_default();
            match attr(tag, "type").as_deref() {
                Some("hidden") => form.hidden.push((name, value)),
                Some("checkbox") if tag.contains(" checked") => form.checked.push((name, value)),
                _ => {}
            }
            inputs = &inputs[tag_end..];
        }
        out.push(form);
        rest = &after[end..];
    }
    out
}

/// The six-digit code of the newest message in `outbox`.
pub fn newest_code(outbox: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(outbox)
        .expect("outbox")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .collect();
    // FileOutbox names files by a sequence number first.
    files.sort();
    let text = std::fs::read_to_string(files.last().expect("a message")).unwrap();
    let at = text.find("Your code: ").expect("a code") + "Your code: ".len();
    text[at..at + 6].to_owned()
}

/// A browser at `base` with one session cookie.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    pub cookie: Option<String>,
    pub outbox: PathBuf,
}

impl Browser {
    pub fn new(base: &str, outbox: &Path) -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: base.trim_end_matches('/').to_owned(),
            cookie: None,
            outbox: outbox.to_owned(),
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        }
    }

    async fn finish(&mut self, response: reqwest::Response) -> Page {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        if let Some(set) = headers.get("set-cookie").and_then(|v| v.to_str().ok()) {
            let pair = set.split(';').next().unwrap_or("");
            self.cookie = match pair.split_once('=') {
                Some((_, v)) if !v.is_empty() => Some(pair.to_owned()),
                _ => None,
            };
        }
        Page {
            status,
            headers,
            body: response.text().await.unwrap_or_default(),
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let mut request = self.http.get(self.url(path));
        if let Some(c) = &self.cookie {
            request = request.header("cookie", c);
        }
        let response = request.send().await.unwrap();
        self.finish(response).await
    }

    /// Posts `fields` form-encoded, with extra `headers`.
    pub async fn post_with(
        &mut self,
        path: &str,
        fields: &[(String, String)],
        headers: &[(&str, &str)],
    ) -> Page {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let mut request = self
            .http
            .post(self.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        if let Some(c) = &self.cookie {
            request = request.header("cookie", c);
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().await.unwrap();
        self.finish(response).await
    }

    pub async fn post(&mut self, path: &str, fields: &[(String, String)]) -> Page {
        self.post_with(path, fields, &[]).await
    }

    /// Opens `/signin` and asks for a code for `email`: the code page and the mailed code.
    pub async fn request_code(&mut self, email: &str) -> (Page, String) {
        let page = self.get("/signin").await;
        assert_eq!(page.status, 200, "{}", page.body);
        page.assert_secure();
        let form = page.form("/signin");
        let sent = self
            .post(
                "/signin",
                &form.with(&[("email", email), ("action", "send_code")]),
            )
            .await;
        assert_eq!(sent.status, 200, "{}", sent.body);
        assert!(sent.body.contains("A code is on its way"), "{}", sent.body);
        let code = newest_code(&self.outbox);
        (sent, code)
    }

    /// Signs in on `/signin` with a code from the outbox; returns the 303's page.
    pub async fn sign_in(&mut self, email: &str) -> Page {
        let (sent, code) = self.request_code(email).await;
        let form = sent.form("/signin");
        let done = self
            .post(
                "/signin",
                &form.with(&[("code", &code), ("action", "verify")]),
            )
            .await;
        assert_eq!(done.status, 303, "{}", done.body);
        assert_eq!(done.header("location"), "/account");
        assert!(self.cookie.is_some(), "signed in without a cookie");
        done
    }
}
