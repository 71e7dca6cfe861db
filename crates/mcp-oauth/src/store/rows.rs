//! Rows to records: the column lists both schemas agree on and the decoding of a row of
//! either backend into its record. The statements that select these columns are `sql`'s.

use sqlkit::Cols;

use super::areas::StoreError;
use super::records::{
    AccessRecord, AuthCodeRecord, ClientRecord, EmailCodeRecord, GrantRecord, GrantSubject,
    PendingRecord, RefreshRecord, RefusalCount, SessionRecord,
};
use crate::scopes;

/// A JSON array of strings.
pub(crate) fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn parse_json_list(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("bad list column: {e}")))
}

pub(crate) const CLIENT_COLUMNS: &str = "client_id, client_name, redirect_uris, grant_types, \
     registered_from, created_at, last_used_at, first_used_at";

pub(crate) fn client(row: &impl Cols) -> Result<ClientRecord, StoreError> {
    Ok(ClientRecord {
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uris: parse_json_list(&row.text("redirect_uris")?)?,
        grant_types: parse_json_list(&row.text("grant_types")?)?,
        registered_from: row.text("registered_from")?,
        created_at: row.int("created_at")?,
        last_used_at: row.int("last_used_at")?,
        first_used_at: row.opt_int("first_used_at")?,
    })
}

pub(crate) const PENDING_COLUMNS: &str = "id, csrf_hash, client_id, client_name, redirect_uri, state, \
     code_challenge, resource, requested_scope, signed_in_account, email, created_at, expires_at, done_at";

pub(crate) fn pending(row: &impl Cols) -> Result<PendingRecord, StoreError> {
    Ok(PendingRecord {
        id: row.text("id")?,
        csrf_hash: row.text("csrf_hash")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uri: row.text("redirect_uri")?,
        state: row.opt_text("state")?,
        code_challenge: row.text("code_challenge")?,
        resource: row.text("resource")?,
        requested_scope: row.opt_text("requested_scope")?,
        signed_in_account: row.opt_text("signed_in_account")?,
        email: row.opt_text("email")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        done_at: row.opt_int("done_at")?,
    })
}

pub(crate) const EMAIL_CODE_COLUMNS: &str =
    "pending_id, email, code_hash, created_at, expires_at, attempts, used_at";

pub(crate) fn email_code(row: &impl Cols) -> Result<EmailCodeRecord, StoreError> {
    Ok(EmailCodeRecord {
        pending_id: row.text("pending_id")?,
        email: row.text("email")?,
        code_hash: row.text("code_hash")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        attempts: row.int("attempts")?,
        used_at: row.opt_int("used_at")?,
    })
}

pub(crate) fn session(row: &impl Cols) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        id_hash: row.text("id_hash")?,
        account_id: row.text("account_id")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    })
}

fn subject(row: &impl Cols) -> Result<GrantSubject, StoreError> {
    Ok(GrantSubject {
        account_id: row.text("account_id")?,
        subject_kind: row.text("subject_kind")?,
        subject_id: row.text("subject_id")?,
        personal: row.flag("personal")?,
    })
}

pub(crate) const CODE_COLUMNS: &str = "code_hash, client_id, client_name, redirect_uri, \
     code_challenge, resource, account_id, subject_kind, subject_id, personal, scopes, created_at, expires_at";

pub(crate) fn auth_code(row: &impl Cols) -> Result<AuthCodeRecord, StoreError> {
    Ok(AuthCodeRecord {
        code_hash: row.text("code_hash")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        redirect_uri: row.text("redirect_uri")?,
        code_challenge: row.text("code_challenge")?,
        resource: row.text("resource")?,
        subject: subject(row)?,
        scopes: scopes::split(&row.text("scopes")?),
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
    })
}

/// Grant columns, qualified with `g.` so they can follow a join.
pub(crate) const GRANT_COLUMNS: &str = "g.id, g.client_id, g.client_name, g.resource, g.account_id, \
     g.subject_kind, g.subject_id, g.personal, g.scopes, g.created_at, g.updated_at, g.last_used_at, g.revoked_at";

pub(crate) fn grant(row: &impl Cols) -> Result<GrantRecord, StoreError> {
    Ok(GrantRecord {
        id: row.text("id")?,
        client_id: row.text("client_id")?,
        client_name: row.text("client_name")?,
        resource: row.text("resource")?,
        subject: subject(row)?,
        scopes: scopes::split(&row.text("scopes")?),
        created_at: row.int("created_at")?,
        updated_at: row.int("updated_at")?,
        last_used_at: row.int("last_used_at")?,
        revoked_at: row.opt_int("revoked_at")?,
    })
}

pub(crate) fn access(row: &impl Cols) -> Result<AccessRecord, StoreError> {
    Ok(AccessRecord {
        token_hash: row.text("token_hash")?,
        grant_id: row.text("grant_id")?,
        created_at: row.int("token_created_at")?,
        expires_at: row.int("token_expires_at")?,
    })
}

pub(crate) fn refresh(row: &impl Cols) -> Result<RefreshRecord, StoreError> {
    Ok(RefreshRecord {
        token_hash: row.text("token_hash")?,
        grant_id: row.text("grant_id")?,
        created_at: row.int("created_at")?,
        expires_at: row.int("expires_at")?,
        rotated_at: row.opt_int("rotated_at")?,
        successor_hash: row.opt_text("successor_hash")?,
    })
}

pub(crate) fn refusal(row: &impl Cols) -> Result<RefusalCount, StoreError> {
    Ok(RefusalCount {
        credential: row.text("credential")?,
        address: row.text("address")?,
        day: row.int("day")?,
        reason: row.text("reason")?,
        count: row.int("hits")?,
        last_at: row.int("last_at")?,
    })
}
