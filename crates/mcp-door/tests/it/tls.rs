//! Built-in TLS: `serve_until` with a self-signed certificate generated here (rcgen) answers
//! HTTPS; SIGHUP rereads the files (a client trusting only the new certificate connects
//! after it, one trusting only the old no longer does); a broken file at start fails the
//! start, and at a reload keeps the certificate in use.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use mcp_door::{Serving, TlsFiles, TlsReloader};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::staged_close::serve;

fn write_cert(dir: &Path, tag: &str) -> (TlsFiles, CertificateDer<'static>) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = dir.join(format!("cert-{tag}.pem"));
    let key = dir.join(format!("key-{tag}.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.key_pair.serialize_pem()).unwrap();
    (TlsFiles { cert, key }, certified.cert.der().clone())
}

/// GET /hello over TLS, trusting only `trusted`.
async fn get_over_tls(
    addr: SocketAddr,
    trusted: &CertificateDer<'static>,
) -> Result<String, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(trusted.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(b"GET /hello HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_self_signed_certificate_reloaded_on_sighup() {
    let dir = testkit::db::TempDir::new("door-tls-");
    let (files, first) = write_cert(dir.path(), "a");
    let serving = Serving {
        tls: Some(files.clone()),
        ..Serving::new()
    };
    let app = Router::new().route("/hello", get(|| async { "hello over tls" }));
    let (base, _stop) = serve(app, serving).await;
    let addr: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let answer = get_over_tls(addr, &first).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("hello over tls"), "{answer}");
    // plain HTTP on the TLS port gets no answer
    let mut plain = TcpStream::connect(addr).await.unwrap();
    plain
        .write_all(b"GET /hello HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut buf)).await;
    assert!(!String::from_utf8_lossy(&buf).contains("hello over tls"));

    // a new certificate in the same files, then SIGHUP
    let (_, second) = write_cert(dir.path(), "b");
    std::fs::copy(dir.path().join("cert-b.pem"), &files.cert).unwrap();
    std::fs::copy(dir.path().join("key-b.pem"), &files.key).unwrap();
    let status = std::process::Command::new("kill")
        .arg("-HUP")
        .arg(std::process::id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let mut switched = false;
    for _ in 0..100 {
        if get_over_tls(addr, &second)
            .await
            .is_ok_and(|a| a.ends_with("hello over tls"))
        {
            switched = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        switched,
        "after SIGHUP new connections get the new certificate"
    );
    let old = get_over_tls(addr, &first).await;
    assert!(
        old.is_err(),
        "the old certificate is no longer served: {old:?}"
    );
}

#[tokio::test]
async fn a_broken_file_fails_the_start_and_a_broken_reload_keeps_the_certificate() {
    let dir = testkit::db::TempDir::new("door-tls-bad-");
    let (files, _) = write_cert(dir.path(), "a");
    let missing = TlsFiles {
        cert: dir.path().join("nope.pem"),
        key: files.key.clone(),
    };
    let err = TlsReloader::load(&missing).unwrap_err().to_string();
    assert!(err.contains("nope.pem"), "{err}");
    let (other, _) = write_cert(dir.path(), "b");
    let mismatched = TlsFiles {
        cert: files.cert.clone(),
        key: other.key.clone(),
    };
    assert!(
        TlsReloader::load(&mismatched).is_err(),
        "a key of another certificate"
    );

    let serving = Serving {
        tls: Some(missing),
        ..Serving::new()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let started = mcp_door::serve_until(
        listener,
        Router::new(),
        &Arc::new(mcp_door::Metrics::new()),
        &serving,
        std::future::pending(),
    )
    .await;
    assert!(started.is_err(), "a missing certificate fails the start");

    let reloader = TlsReloader::load(&files).unwrap();
    std::fs::write(&files.cert, "not a certificate").unwrap();
    assert!(reloader.reload().is_err());
    let _still = reloader.acceptor();
}
