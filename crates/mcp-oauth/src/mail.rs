//! Sending the one-time code: the [`Mailer`] trait, [`FileOutbox`] (one `.eml` file per
//! message, the embedded default) and [`SmtpMailer`] (lettre over SMTP, with rustls for
//! `smtps://` and STARTTLS). What the message says is the consent flow's.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Message};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::random::{OsRandom, token};

/// One plain-text message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub from: String,
    pub to: String,
    pub subject: String,
    pub text: String,
}

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    /// An address or header could not be used.
    #[error("message refused: {0}")]
    Invalid(String),
    /// The transport failed (disk, network, relay).
    #[error("transport failed: {0}")]
    Transport(String),
}

/// Sends one message.
#[async_trait]
pub trait Mailer: Send + Sync + 'static {
    async fn send(&self, mail: &Mail) -> Result<(), MailError>;
}

/// Builds the RFC 5322 message.
pub fn build_message(mail: &Mail) -> Result<Message, MailError> {
    let from: Mailbox = mail
        .from
        .parse()
        .map_err(|e| MailError::Invalid(format!("from: {e}")))?;
    let to: Mailbox = mail
        .to
        .parse()
        .map_err(|e| MailError::Invalid(format!("to: {e}")))?;
    Message::builder()
        .from(from)
        .to(to)
        .subject(mail.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(mail.text.clone())
        .map_err(|e| MailError::Invalid(e.to_string()))
}

/// Writes each message as a `.eml` file into a directory and logs a line naming it: the
/// default when no SMTP relay is configured (a developer reads the code from the file).
#[derive(Debug)]
pub struct FileOutbox {
    dir: PathBuf,
    seq: AtomicU64,
}

impl FileOutbox {
    /// Creates the directory if needed.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, MailError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .map_err(|e| MailError::Transport(format!("{}: {e}", dir.display())))?;
        Ok(Self {
            dir,
            seq: AtomicU64::new(0),
        })
    }

    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

#[async_trait]
impl Mailer for FileOutbox {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let bytes = build_message(mail)?.formatted();
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let path = self
            .dir
            .join(format!("{seq:06}-{}.eml", token(&OsRandom, 6)));
        tokio::fs::write(&path, bytes)
            .await
            .map_err(|e| MailError::Transport(format!("{}: {e}", path.display())))?;
        // The path, never the content: the message carries a one-time code.
        tracing::info!(path = %path.display(), "outbox: message written");
        Ok(())
    }
}

/// Sends through an SMTP relay.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
}

impl std::fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SmtpMailer(<relay>)")
    }
}

impl SmtpMailer {
    /// From a lettre connection URL: `smtps://user:pass@host:465` (implicit TLS),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or `smtp://host:25` (plain, for a
    /// relay on the same host). The URL carries credentials: never log it.
    pub fn from_url(url: &str) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| MailError::Invalid(format!("SMTP URL: {e}")))?
            .build();
        Ok(Self { transport })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        let message = build_message(mail)?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| MailError::Transport(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn outbox_writes_one_eml_per_message() {
        let dir = std::env::temp_dir().join(format!("mcp-oauth-outbox-{}", token(&OsRandom, 8)));
        let outbox = FileOutbox::new(&dir).unwrap();
        let mail = Mail {
            from: "no-reply@a.example".into(),
            to: "you@b.example".into(),
            subject: "Your code".into(),
            text: "Your code: 123456\n".into(),
        };
        outbox.send(&mail).await.unwrap();
        outbox.send(&mail).await.unwrap();
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(files.len(), 2);
        let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
        assert!(text.contains("To: you@b.example"));
        assert!(text.contains("Your code: 123456"));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(
            build_message(&Mail {
                to: "not an address\r\nBcc: x@y".into(),
                ..mail
            }),
            Err(MailError::Invalid(_))
        ));
    }

    #[test]
    fn smtp_url_is_checked() {
        assert!(SmtpMailer::from_url("smtp://127.0.0.1:2525").is_ok());
        assert!(SmtpMailer::from_url("nonsense").is_err());
    }
}
