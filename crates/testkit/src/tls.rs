//! TLS for tests: a self-signed certificate for `localhost` generated on the spot (rcgen) and
//! written as PEM files, and a raw HTTP/1.1 GET over rustls that trusts only a given
//! certificate — what the built-in TLS tests of the products connect with.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A generated certificate: its PEM files and its DER form (to trust it).
#[derive(Debug, Clone)]
pub struct SelfSigned {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub der: CertificateDer<'static>,
}

/// A fresh self-signed certificate for `localhost`, written to `dir` as `cert-TAG.pem` and
/// `key-TAG.pem`.
pub fn self_signed(dir: &Path, tag: &str) -> SelfSigned {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()])
        .expect("generate a certificate");
    let cert = dir.join(format!("cert-{tag}.pem"));
    let key = dir.join(format!("key-{tag}.pem"));
    std::fs::write(&cert, certified.cert.pem()).expect("write the certificate");
    std::fs::write(&key, certified.key_pair.serialize_pem()).expect("write the key");
    SelfSigned {
        cert,
        key,
        der: certified.cert.der().clone(),
    }
}

/// `GET path` over TLS to `addr` as `localhost`, trusting only `trusted`: the whole raw
/// response, or why the connection or handshake failed.
pub async fn get(
    addr: SocketAddr,
    trusted: &CertificateDer<'static>,
    path: &str,
) -> Result<String, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(trusted.clone()).map_err(|e| e.to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let request = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
