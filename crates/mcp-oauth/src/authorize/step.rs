//! What every consent step takes and answers: the flow a pending authorization stands for
//! ([`Flow`]), the endpoint's answer ([`Outcome`]) and an HTML refusal ([`Refusal`], with how
//! store and directory failures become one). Shared by the request checks (`authorize`) and
//! the code step (`code`); neither is imported here. Form pairs are [`crate::web::Form`].

use http::StatusCode;

use crate::directory::{DirectoryError, Door};
use crate::server::ClientInfo;
use crate::store::{PendingRecord, StoreError};

/// What the consent endpoint answers.
#[derive(Debug)]
pub(crate) enum Outcome {
    Page {
        status: StatusCode,
        html: String,
        /// The flow's `redirect_uri` when the page carries the consent form: the page's
        /// `form-action` must also allow where that form's 303 leads.
        redirect_uri: Option<String>,
    },
    /// 303 to the client with the code; optionally signing the browser in.
    Redirect {
        location: String,
        set_cookie: Option<String>,
    },
}

/// An HTML refusal.
pub(super) struct Refusal {
    pub(super) status: StatusCode,
    pub(super) title: &'static str,
    pub(super) message: String,
}

pub(super) fn refuse(
    status: StatusCode,
    title: &'static str,
    message: impl Into<String>,
) -> Refusal {
    Refusal {
        status,
        title,
        message: message.into(),
    }
}

pub(super) fn bad_request(message: impl Into<String>) -> Refusal {
    refuse(
        StatusCode::BAD_REQUEST,
        "This sign-in request cannot be used",
        message,
    )
}

impl From<StoreError> for Refusal {
    fn from(err: StoreError) -> Self {
        tracing::error!(error = %err, "oauth store failure on the consent page");
        let status = match err {
            StoreError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        refuse(
            status,
            "Something went wrong",
            "The service could not complete this step. Try again in a moment.",
        )
    }
}

impl From<DirectoryError> for Refusal {
    fn from(err: DirectoryError) -> Self {
        tracing::error!(error = %err, "directory failure on the consent page");
        refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "Something went wrong",
            "The service could not complete this step. Try again in a moment.",
        )
    }
}

/// The request as the consent step needs it: pending record, client and door re-checked.
pub(super) struct Flow {
    pub(super) pending: PendingRecord,
    pub(super) client: ClientInfo,
    pub(super) door: Door,
    /// The defined scopes the client named (`None`: it named none, the defaults apply).
    pub(super) requested: Option<Vec<String>>,
    /// The names it asked for that this server does not define: shown, never granted.
    pub(super) ignored: Vec<String>,
    pub(super) csrf: String,
}
