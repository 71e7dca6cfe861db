//! Why a presentation was refused and what the refusal is counted under, free of I/O: the
//! refusal-count credential (a known service key under its hint, a known grant's token under
//! `grant:<id>`, everything else in one `unknown` bucket, no bearer as `none`), the reason, the
//! answer the door gives, and how long the counts are kept. Counting a refusal is the gate's
//! (`access::gate`), storing and purging the counts the ledger's and the purge loop's.

use mcp_door::{AuthError, InvalidReason};

use crate::store::StoreError;

/// The refusal-count credential of a refused token whose grant is known: `grant:<id>`.
pub const GRANT_CREDENTIAL: &str = "grant:";
/// The refusal-count credential of every presented credential Elixir does not know.
pub const UNKNOWN_CREDENTIAL: &str = "unknown";
/// The refusal-count credential of a request without a usable bearer.
pub const NO_CREDENTIAL: &str = "none";
const WRONG_RESOURCE: &str = "wrong_resource";

/// How many UTC days of refusal counts are kept: today and the seven before (the pages show
/// seven; one more day covers an owner in a time zone behind UTC).
pub const REFUSAL_RETENTION_DAYS: i64 = 8;

/// Whom a refused presentation is counted against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Counted {
    /// No usable `Authorization: Bearer` header.
    Nothing,
    /// A credential Elixir does not know: one bucket for all of them.
    Unknown,
    /// The service key of an existing agent, by its hint.
    Key(String),
    /// A token of a known grant, by the grant's id.
    Grant(String),
}

impl Counted {
    /// The `credential_hint` of the refusal row.
    pub(crate) fn credential(&self) -> String {
        match self {
            Self::Nothing => NO_CREDENTIAL.to_owned(),
            Self::Unknown => UNKNOWN_CREDENTIAL.to_owned(),
            Self::Key(hint) => hint.clone(),
            Self::Grant(id) => format!("{GRANT_CREDENTIAL}{id}"),
        }
    }
}

/// Why a presentation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Missing,
    /// 401 `invalid_token`, for this reason.
    Invalid(InvalidReason),
    Suspended,
    WrongResource,
    /// The store could not answer: 503, not counted.
    Unavailable,
}

/// A refusal as the door decides it: the answer, and what it is counted under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) counted: Counted,
    pub(crate) reason: Reason,
}

impl Refused {
    pub(crate) fn new(counted: &Counted, reason: Reason) -> Self {
        Self {
            counted: counted.clone(),
            reason,
        }
    }

    pub(crate) fn unknown(reason: InvalidReason) -> Self {
        Self::new(&Counted::Unknown, Reason::Invalid(reason))
    }

    pub(crate) fn unavailable(e: &StoreError) -> Self {
        tracing::warn!(error = %e, "credential lookup failed");
        Self::new(&Counted::Unknown, Reason::Unavailable)
    }

    /// What the door answers.
    pub(crate) fn error(&self) -> AuthError {
        match self.reason {
            Reason::Missing => AuthError::Missing,
            Reason::Invalid(reason) => AuthError::Invalid(reason),
            Reason::Suspended => AuthError::Invalid(InvalidReason::Suspended),
            Reason::WrongResource => AuthError::Forbidden {
                code: WRONG_RESOURCE.into(),
                message: "This credential is valid at another Elixir door, not this one.".into(),
            },
            Reason::Unavailable => AuthError::Unavailable,
        }
    }

    /// The reason of the refusal row; `None`: not counted.
    pub(crate) fn counted_reason(&self) -> Option<&'static str> {
        match self.reason {
            Reason::Missing => Some("missing"),
            Reason::Invalid(_) => Some("invalid_token"),
            Reason::Suspended => Some("suspended"),
            Reason::WrongResource => Some(WRONG_RESOURCE),
            Reason::Unavailable => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_what_it_is_counted_under() {
        assert_eq!(Counted::Nothing.credential(), "none");
        assert_eq!(Counted::Unknown.credential(), "unknown");
        assert_eq!(
            Counted::Key("0123456789ab".into()).credential(),
            "0123456789ab"
        );
        assert_eq!(Counted::Grant("g1".into()).credential(), "grant:g1");
        let key = Counted::Key("0123456789ab".into());
        let cases = [
            (Reason::Missing, AuthError::Missing, Some("missing")),
            (
                Reason::Invalid(InvalidReason::Inactive),
                AuthError::Invalid(InvalidReason::Inactive),
                Some("invalid_token"),
            ),
            // the challenge reads the suspension from the error mcp-door hands it, as a variant
            (
                Reason::Suspended,
                AuthError::Invalid(InvalidReason::Suspended),
                Some("suspended"),
            ),
            (Reason::Unavailable, AuthError::Unavailable, None),
        ];
        for (reason, error, counted) in cases {
            let refused = Refused::new(&key, reason);
            assert_eq!(refused.error(), error);
            assert_eq!(refused.counted_reason(), counted);
        }
        let wrong = Refused::new(&key, Reason::WrongResource);
        assert!(
            matches!(wrong.error(), AuthError::Forbidden { code, .. } if code == "wrong_resource")
        );
        assert_eq!(wrong.counted_reason(), Some("wrong_resource"));
    }
}
