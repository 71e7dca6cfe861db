//! Built-in TLS for deployments without a proxy: a certificate chain and private key read
//! from PEM files ([`TlsFiles`]) into a rustls server configuration that [`TlsReloader::reload`]
//! replaces while the server runs (on SIGHUP, see [`crate::serve`]). A reload that fails keeps
//! the configuration in use; only new connections see a new certificate.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Where the certificate chain and key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain, leaf first.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// Why a certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    #[error("TLS certificate {path}: {reason}")]
    Cert { path: PathBuf, reason: String },
    #[error("TLS key {path}: {reason}")]
    Key { path: PathBuf, reason: String },
    #[error("TLS certificate and key do not go together: {0}")]
    Config(String),
}

impl From<TlsError> for std::io::Error {
    fn from(e: TlsError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}

fn load(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let certs = read_certs(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| TlsError::Key {
        path: files.key.clone(),
        reason: e.to_string(),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let err = |reason: String| TlsError::Cert {
        path: path.to_owned(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| err(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(e.to_string()))?;
    if certs.is_empty() {
        return Err(err("no certificate in the file".into()));
    }
    Ok(certs)
}

/// The TLS configuration in use, replaceable while serving. Cloning shares it.
#[derive(Debug, Clone)]
pub struct TlsReloader {
    files: TlsFiles,
    current: Arc<RwLock<Arc<rustls::ServerConfig>>>,
}

impl TlsReloader {
    /// Reads `files`; a bad certificate or key fails here, so it fails the start.
    pub fn load(files: &TlsFiles) -> Result<Self, TlsError> {
        Ok(Self {
            current: Arc::new(RwLock::new(load(files)?)),
            files: files.clone(),
        })
    }

    /// Reads the files again; on success new connections use them, on failure the
    /// configuration in use stays (and the error says why).
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = load(&self.files)?;
        if let Ok(mut current) = self.current.write() {
            *current = fresh;
        }
        Ok(())
    }

    /// An acceptor over the configuration in use now.
    pub fn acceptor(&self) -> TlsAcceptor {
        let config = match self.current.read() {
            Ok(c) => Arc::clone(&c),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        };
        TlsAcceptor::from(config)
    }
}
