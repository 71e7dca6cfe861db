//! The email one-time-code form that the consent page and a product's own sign-in page both
//! show: which of its two steps to render ([`CodeStep`]) and its two fields. Sending and
//! checking the code is the flow's ([`crate::AuthServer::check_email_code`]); the words
//! around the fields and the buttons are each page's.

use super::html::{error_line, esc};

/// Which step of an email one-time-code form to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeStep<'a> {
    /// Ask for the address; `value` is what was typed, kept when it is refused.
    Email {
        error: Option<&'a str>,
        value: &'a str,
    },
    /// Ask for the code sent to `email`.
    Code {
        email: &'a str,
        error: Option<&'a str>,
    },
}

impl CodeStep<'_> {
    /// The step's error message as a paragraph ([`error_line`]), or nothing.
    pub fn error_line(&self) -> String {
        match self {
            CodeStep::Email { error, .. } | CodeStep::Code { error, .. } => error_line(*error),
        }
    }
}

/// The address field, focused: `label` (HTML, the page's words), then an email input holding
/// `value` (text, escaped here).
pub fn email_field(label: &str, value: &str) -> String {
    format!(
        "<label>{label}<input type=\"email\" name=\"email\" value=\"{}\" required \
         autocomplete=\"email\" autofocus></label>",
        esc(value)
    )
}

/// The code field, focused; room for twelve characters, so a code typed with spaces fits.
pub const CODE_FIELD: &str = "<label>Code<input type=\"text\" name=\"code\" inputmode=\"numeric\" \
                              autocomplete=\"one-time-code\" maxlength=\"12\" autofocus></label>";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_form_fields() {
        assert_eq!(
            email_field("Your email address", "a\"b@example.com"),
            "<label>Your email address<input type=\"email\" name=\"email\" \
             value=\"a&quot;b@example.com\" required autocomplete=\"email\" autofocus></label>"
        );
        assert!(CODE_FIELD.contains("name=\"code\""));
        assert!(CODE_FIELD.contains("autocomplete=\"one-time-code\""));
        let step = CodeStep::Code {
            email: "a@example.com",
            error: Some("That code is not right."),
        };
        assert_eq!(
            step.error_line(),
            "<p class=\"err\">That code is not right.</p>"
        );
        let step = CodeStep::Email {
            error: None,
            value: "",
        };
        assert_eq!(step.error_line(), "");
    }
}
