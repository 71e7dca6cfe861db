//! mcp-oauth: a reusable OAuth 2.1 authorization server for remote MCP servers.
//!
//! It serves the discovery documents, dynamic client registration, the consent page (email
//! one-time code or an existing browser session, then an explicit Authorize), the token
//! endpoint and `/oauth/userinfo`, and gives the product's doors the resource-server side:
//! [`AuthServer::verify_access_token`], the `WWW-Authenticate` challenges, grant management
//! for a connections page and refusal counting, and the web pieces its consent page shares
//! with a product's own pages ([`web`]: escaping, the page shell, security headers, forms).
//! It knows no product: names, URLs, scopes, doors and accounts come from the product through
//! [`AuthServerConfig`], [`ResourceDirectory`], [`AccountDirectory`] and [`Mailer`].

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod cimd;
pub mod config;
pub mod crypto;
pub mod directory;
pub mod error;
pub mod mail;
pub mod random;
pub mod redirect;
pub mod scopes;
pub mod store;
pub mod web;

mod authorize;
mod grants;
mod http;
/// Re-exported from the platform, where the doors use it too.
pub use mcp_door::{AddressSource, client_address, limit_key};
pub use web::same_origin_post;
mod register;
mod resource;
mod server;
mod token;

pub use authorize::{CONSENT_CODE, CodeCheck, normalize_email};
#[cfg(feature = "cimd-fetch")]
pub use cimd::HttpsFetcher;
pub use cimd::{ClientMetadata, FetchError, MetadataFetcher};
pub use config::{AuthServerConfig, EmailCodePolicy, RegistrationPolicy, Secret};
pub use directory::{
    Account, AccountDirectory, Consent, DirectoryError, Door, ResourceDirectory, Subject,
};
pub use error::{ConfigError, OAuthError};
pub use grants::{ConnectionView, Disconnection, SetScopesError};
pub use mail::{FileOutbox, Mail, MailError, Mailer, SmtpMailer};
pub use random::{OsRandom, RandomSource};
pub use resource::{GrantView, TokenError};
pub use server::AuthServer;
pub use store::{
    Clients, Flows, Grants, OAuthStore, RefusalCount, SqlStore, StoreError, Tokens, Upkeep,
};
