//! The HTML every page shares: escaping, the one stylesheet and the page shell around a
//! product's navigation and content. What goes inside the shell is the caller's.

pub use mcp_door::web::escape_html as esc;

/// The stylesheet of every page, inline in the shell (the CSP allows inline styles and
/// nothing else): forms, boxes (`.box`), messages (`.err`, `.ok`, `.muted`), a navigation bar,
/// tables and code.
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;\
padding:0 1rem;line-height:1.45;color:#1b1b1b}h1{font-size:1.5rem}h2{font-size:1.2rem;\
margin-top:1.6rem}.box{border:1px solid #ccc;border-radius:8px;padding:.8rem 1.1rem;\
margin:.8rem 0}.err{color:#a00;font-weight:600}.ok{color:#060;font-weight:600}.muted{color:#555;\
font-size:.9rem}nav a{margin-right:1rem}label{display:block;margin:.25rem 0}\
input[type=email],input[type=text]{font-size:1rem;padding:.35rem;width:100%;box-sizing:border-box}\
button{font-size:.95rem;padding:.35rem .9rem;margin:.4rem .4rem 0 0}form.inline{display:inline}\
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;\
text-align:left;vertical-align:top}code,pre{background:#f4f4f4}pre{padding:.6rem;overflow-x:auto}\
code{word-break:break-all}";

/// A whole page: `<title>` "`title` · `site`", the stylesheet, then `nav` (the product's
/// navigation, HTML, empty for none), an `<h1>` of `title` and `body` (HTML). `site` and
/// `title` are escaped here; `nav` and `body` are the caller's to escape.
pub fn page(site: &str, nav: &str, title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{title} · {site}</title><style>{STYLE}</style></head>\
         <body>{nav}<h1>{title}</h1>\n{body}\n</body></html>\n",
        title = esc(title),
        site = esc(site),
    )
}

/// A form's error message as a paragraph, or nothing.
pub fn error_line(error: Option<&str>) -> String {
    error
        .map(|e| format!("<p class=\"err\">{}</p>", esc(e)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_html_specials() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("plain text · ü"), "plain text · ü");
        assert_eq!(esc("&amp;"), "&amp;amp;");
    }

    #[test]
    fn the_shell_escapes_site_and_title_but_not_nav_and_body() {
        let html = page("S<", "<nav>N</nav>", "T&\"", "<p>B</p>");
        assert!(
            html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"),
            "{html}"
        );
        assert!(
            html.contains("<title>T&amp;&quot; · S&lt;</title>"),
            "{html}"
        );
        assert!(html.contains(&format!("<style>{STYLE}</style>")), "{html}");
        assert!(html.contains("<meta name=\"referrer\" content=\"no-referrer\">"));
        assert!(
            html.ends_with("<body><nav>N</nav><h1>T&amp;&quot;</h1>\n<p>B</p>\n</body></html>\n"),
            "{html}"
        );
    }

    #[test]
    fn error_lines() {
        assert_eq!(error_line(None), "");
        assert_eq!(error_line(Some("<No>")), "<p class=\"err\">&lt;No&gt;</p>");
    }
}
