//! Text helpers the rules share: an excerpt of a text around a case-insensitive match (the
//! player's memory and journal search, the wiki search). Where a match is looked for is the
//! callers'.

/// The first `max` characters of `text` around the first case-insensitive match of `query`
/// (or its beginning when there is none), and whether it matched.
pub fn excerpt(text: &str, query: &str, max: usize) -> (String, bool) {
    let fold = |s: &str| {
        s.chars()
            .map(|c| c.to_lowercase().next().unwrap_or(c))
            .collect::<Vec<char>>()
    };
    let hay = fold(text);
    let needle = fold(query);
    let found = if needle.is_empty() || needle.len() > hay.len() {
        None
    } else {
        hay.windows(needle.len())
            .position(|w| w == needle.as_slice())
    };
    let chars: Vec<char> = text.chars().collect();
    let (start, end) = match found {
        Some(i) => {
            let lead = max.saturating_sub(needle.len()) / 2;
            let end = (i.saturating_sub(lead) + max).min(chars.len());
            (end.saturating_sub(max), end)
        }
        None => (0, max.min(chars.len())),
    };
    (chars[start..end].iter().collect(), found.is_some())
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn excerpt_centres_on_the_match_and_counts_characters() {
        let text = format!("{}Mira{}", "ą".repeat(300), "ę".repeat(300));
        let (ex, hit) = excerpt(&text, "mIRA", 240);
        assert!(hit);
        assert_eq!(ex.chars().count(), 240);
        assert!(ex.contains("Mira"));
        let (ex, hit) = excerpt("short memory", "absent", 240);
        assert!(!hit);
        assert_eq!(ex, "short memory");
        let (ex, _) = excerpt(&"x".repeat(500), "nothing", 240);
        assert_eq!(ex.chars().count(), 240);
        let (ex, hit) = excerpt("ends with Mira", "mira", 240);
        assert!(hit);
        assert_eq!(ex, "ends with Mira");
    }
}
