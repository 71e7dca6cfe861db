//! What the product tells the authorization server about itself: which `resource` URLs are
//! its doors and who may consent for each ([`ResourceDirectory`]), and its accounts
//! ([`AccountDirectory`]). The server never stores accounts; it stores account ids.

use async_trait::async_trait;

/// A door of the product, as named by an RFC 8707 `resource` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Door {
    /// The door's URL, exactly as the client names it (e.g. `https://example.com/mcp`).
    pub resource: String,
    /// The product's name for the kind of door (`person`, `agent`, ...), for its own use.
    pub kind: String,
}

/// Who a grant is for.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Subject {
    /// The product's principal kind (`person`, `agent`, ...).
    pub kind: String,
    /// The product's stable id of the subject (an account id for a personal door).
    pub id: String,
}

/// Whether an account may consent for a door, and for whom the grant would be.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Consent {
    /// The grant is the account's own (a personal door): its subject is the account, with
    /// this principal kind. Only personal grants may use `/oauth/userinfo`.
    Personal { kind: String },
    /// The grant is for another subject the account controls (an agent it owns).
    For(Subject),
    /// The account may not consent here. Unknown and not-owned doors must both answer this,
    /// so that nobody learns which exist.
    Refused,
}

/// The product cannot answer right now (its database is down, ...).
#[derive(Debug, Clone, thiserror::Error)]
#[error("directory unavailable: {0}")]
pub struct DirectoryError(pub String);

/// The product's doors.
#[async_trait]
pub trait ResourceDirectory: Send + Sync + 'static {
    /// The door `resource` names, or `None` when it is not one of ours. Decide by the URL's
    /// shape alone where existence is private (an agent door `/a/<id>/mcp` is a door whether
    /// or not the agent exists); [`ResourceDirectory::consent`] refuses later.
    async fn door(&self, resource: &str) -> Result<Option<Door>, DirectoryError>;

    /// Whether `account_id` may consent for `door`.
    async fn consent(&self, door: &Door, account_id: &str) -> Result<Consent, DirectoryError>;
}

/// An account as the consent page needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Stable id (the grant's `account_id`, and `sub` in userinfo).
    pub id: String,
    /// What the page shows as "signed in as".
    pub display_name: String,
    /// The verified address on file, if the account has one.
    pub email: Option<String>,
}

/// The product's accounts.
#[async_trait]
pub trait AccountDirectory: Send + Sync + 'static {
    /// The person proved control of `email` (lowercased) with a code. Return the account to
    /// consent as, recording the address on it: the account holding the address; or, when
    /// `signed_in` is an account without an address, that account; or a new account if the
    /// product signs people up here. `None` means no account may use this address; the
    /// person is told so only now, after the proof, so the answer leaks nothing.
    async fn account_for_verified_email(
        &self,
        email: &str,
        signed_in: Option<&Account>,
    ) -> Result<Option<Account>, DirectoryError>;

    /// The account with this id, if it still exists and may sign in.
    async fn account(&self, id: &str) -> Result<Option<Account>, DirectoryError>;
}
