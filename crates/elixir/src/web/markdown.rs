//! A minimal Markdown → HTML renderer for the docs pages: ATX headings (with the same slugs
//! `elixir_docs` uses as section ids), paragraphs, bullet and numbered lists, fenced code,
//! pipe tables, block quotes, and inline code, bold, italics and links. Everything is escaped
//! first, so the source can never inject markup. Links to `page#section` (the docs' own
//! pointer form) become `/docs/page#section`.

use super::page::esc;
use crate::domain::slugify;

/// Renders `markdown` to HTML.
pub fn render(markdown: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = markdown.lines().collect();
    let mut i = 0;
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |paragraph: &mut Vec<&str>, out: &mut String| {
        if !paragraph.is_empty() {
            out.push_str(&format!("<p>{}</p>\n", inline(&paragraph.join(" "))));
            paragraph.clear();
        }
    };
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            flush(&mut paragraph, &mut out);
            let mut code = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                code.push(lines[i]);
                i += 1;
            }
            out.push_str(&format!(
                "<pre><code>{}</code></pre>\n",
                esc(&code.join("\n"))
            ));
            i += 1;
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut paragraph, &mut out);
            i += 1;
            continue;
        }
        let hashes = trimmed.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            flush(&mut paragraph, &mut out);
            let text = trimmed[hashes..].trim();
            out.push_str(&format!(
                "<h{hashes} id=\"{}\">{}</h{hashes}>\n",
                esc(&slugify(text)),
                inline(text)
            ));
            i += 1;
            continue;
        }
        if trimmed.starts_with('|') {
            flush(&mut paragraph, &mut out);
            let mut rows = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                rows.push(lines[i].trim());
                i += 1;
            }
            out.push_str(&table(&rows));
            continue;
        }
        if trimmed.starts_with("> ") || trimmed == ">" {
            flush(&mut paragraph, &mut out);
            let mut quoted = Vec::new();
            while i < lines.len() && lines[i].trim_start().starts_with('>') {
                quoted.push(lines[i].trim_start().trim_start_matches('>').trim_start());
                i += 1;
            }
            out.push_str(&format!(
                "<blockquote>{}</blockquote>\n",
                render(&quoted.join("\n"))
            ));
            continue;
        }
        if let Some(ordered) = list_marker(trimmed) {
            flush(&mut paragraph, &mut out);
            let tag = if ordered { "ol" } else { "ul" };
            out.push_str(&format!("<{tag}>"));
            let mut item: Option<String> = None;
            while i < lines.len() {
                let l = lines[i].trim_start();
                if l.is_empty() {
                    break;
                }
                if let Some(o) = list_marker(l)
                    && o == ordered
                {
                    if let Some(done) = item.take() {
                        out.push_str(&format!("<li>{}</li>", inline(&done)));
                    }
                    item = Some(strip_marker(l).to_owned());
                } else if let Some(current) = item.as_mut() {
                    current.push(' ');
                    current.push_str(l);
                } else {
                    break;
                }
                i += 1;
            }
            if let Some(done) = item {
                out.push_str(&format!("<li>{}</li>", inline(&done)));
            }
            out.push_str(&format!("</{tag}>\n"));
            continue;
        }
        paragraph.push(trimmed);
        i += 1;
    }
    flush(&mut paragraph, &mut out);
    out
}

/// `Some(false)` for a bullet item, `Some(true)` for a numbered one.
fn list_marker(line: &str) -> Option<bool> {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("• ") {
        return Some(false);
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && line[digits..].starts_with(". ")).then_some(true)
}

fn strip_marker(line: &str) -> &str {
    if let Some(rest) = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("• "))
    {
        return rest;
    }
    line.split_once(". ").map_or(line, |(_, rest)| rest)
}

fn cells(row: &str) -> Vec<&str> {
    row.trim_matches('|').split('|').map(str::trim).collect()
}

fn table(rows: &[&str]) -> String {
    let mut out = String::from("<table>");
    for (n, row) in rows.iter().enumerate() {
        let c = cells(row);
        if n == 1
            && c.iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
        {
            continue;
        }
        let tag = if n == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for cell in c {
            out.push_str(&format!("<{tag}>{}</{tag}>", inline(cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
    out
}

/// Inline markup over escaped text.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find(['`', '[', '*']) {
        out.push_str(&emphasis_free(&rest[..pos]));
        let tail = &rest[pos..];
        if let Some(code) = tail.strip_prefix('`')
            && let Some(end) = code.find('`')
        {
            out.push_str(&format!("<code>{}</code>", esc(&code[..end])));
            rest = &code[end + 1..];
            continue;
        }
        if let Some(bold) = tail.strip_prefix("**")
            && let Some(end) = bold.find("**")
        {
            out.push_str(&format!("<b>{}</b>", inline(&bold[..end])));
            rest = &bold[end + 2..];
            continue;
        }
        if let Some(label) = tail.strip_prefix('[')
            && let Some(close) = label.find("](")
            && let Some(end) = label[close + 2..].find(')')
        {
            let target = &label[close + 2..close + 2 + end];
            out.push_str(&format!(
                "<a href=\"{}\">{}</a>",
                esc(&href(target)),
                inline(&label[..close])
            ));
            rest = &label[close + 2 + end + 1..];
            continue;
        }
        if let Some(em) = tail.strip_prefix('*')
            && let Some(end) = em.find('*')
            && end > 0
            && !em.starts_with(' ')
        {
            out.push_str(&format!("<i>{}</i>", inline(&em[..end])));
            rest = &em[end + 1..];
            continue;
        }
        out.push_str(&esc(&tail[..1]));
        rest = &tail[1..];
    }
    out.push_str(&emphasis_free(rest));
    out
}

fn emphasis_free(text: &str) -> String {
    esc(text)
}

/// A link target: absolute URLs and site paths stay; `page#section` and `page` point into
/// the docs; anything with another scheme (`javascript:`) is dropped.
fn href(target: &str) -> String {
    let lower = target.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") || target.starts_with('/') {
        return target.to_owned();
    }
    if target.starts_with('#') {
        return target.to_owned();
    }
    if target.contains(':') {
        return "#".to_owned();
    }
    format!("/docs/{target}")
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn renders_the_common_subset() {
        let html = render(
            "# Title\n\nSome `code` and **bold** with a [link](protocol#scopes).\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n<x>\n```\n",
        );
        assert!(html.contains("<h1 id=\"title\">Title</h1>"), "{html}");
        assert!(html.contains("<code>code</code>"));
        assert!(html.contains("<b>bold</b>"));
        assert!(html.contains("<a href=\"/docs/protocol#scopes\">link</a>"));
        assert!(html.contains("<ul><li>one</li><li>two</li></ul>"));
        assert!(html.contains("<th>a</th>") && html.contains("<td>2</td>"));
        assert!(html.contains("<pre><code>&lt;x&gt;</code></pre>"));
    }

    #[test]
    fn never_injects_markup() {
        let html = render("<script>alert(1)</script> [x](javascript:alert(1))");
        assert!(!html.contains("<script>"));
        assert!(!html.contains("javascript:"));
    }
}
