//! The web pieces every page of an mcp-oauth site shares, the consent page's and a product's
//! own: HTML escaping, the stylesheet and the page shell ([`html`]), the security headers and
//! the HTML and 303 answers that carry them ([`headers`]), and what a page's POST brings
//! ([`form`]: the form body and the same-origin rule), and the email one-time-code form
//! ([`code_form`]). What a page says, its navigation and its CSRF scheme stay with the page's
//! owner.

pub mod code_form;
pub mod form;
pub mod headers;
pub mod html;

pub use code_form::{CODE_FIELD, CodeStep, email_field};
pub use form::{Form, same_origin_post};
pub use headers::{content_security_policy, form_action_source, html_response, secure, see_other};
pub use html::{STYLE, error_line, esc, page};
