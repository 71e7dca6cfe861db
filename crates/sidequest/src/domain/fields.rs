//! Per-field validation errors (REST answers them as 422 with one message per field).

use std::collections::BTreeMap;

/// Field name → what is wrong with it. Empty means valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(pub BTreeMap<String, String>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.0
            .entry(field.to_owned())
            .or_insert_with(|| message.into());
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(())` when no field is wrong.
    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }

    /// Checks a text field's length in characters; `min` 1 means "required, non-empty".
    pub fn text(&mut self, field: &str, value: &str, min: usize, max: usize) {
        let n = value.chars().count();
        if n < min {
            if min == 1 {
                self.add(field, "is required and must not be empty");
            } else {
                self.add(field, format!("must have at least {min} characters"));
            }
        } else if n > max {
            self.add(field, format!("has {n} characters; at most {max} allowed"));
        } else if min > 0 && value.trim().is_empty() {
            self.add(field, "must not be blank");
        }
    }

    /// One line per field: `field: message`.
    pub fn lines(&self) -> Vec<String> {
        self.0.iter().map(|(f, m)| format!("{f}: {m}")).collect()
    }
}

impl std::fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.lines().join("; "))
    }
}

/// Whether `id` is a node id / wiki slug: 1–64 of `a-z 0-9 _ -`, starting with a letter or digit.
pub fn is_slug(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_bounds_count_characters() {
        let mut e = FieldErrors::new();
        e.text("a", &"ą".repeat(10), 1, 10);
        e.text("b", &"ą".repeat(11), 1, 10);
        e.text("c", "", 1, 10);
        e.text("d", "   ", 1, 10);
        e.text("e", "", 0, 10);
        assert_eq!(e.0.keys().collect::<Vec<_>>(), ["b", "c", "d"]);
    }

    #[test]
    fn slugs() {
        assert!(is_slug("harbor"));
        assert!(is_slug("a-1_b"));
        assert!(!is_slug("-a"));
        assert!(!is_slug("Harbor"));
        assert!(!is_slug(""));
        assert!(!is_slug(&"a".repeat(65)));
        assert!(is_slug(&"a".repeat(64)));
    }
}
