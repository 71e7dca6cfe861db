//! A TCP proxy a test can cut, to take a database or Redis away mid-run.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Forwards every connection on `addr` to a target until [`Proxy::cut`].
#[derive(Debug)]
pub struct Proxy {
    pub addr: SocketAddr,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    /// Listens on 127.0.0.1:0 and forwards to `target`.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let registry = Arc::clone(&tasks);
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let conn = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                registry.lock().expect("proxy registry").push(conn);
            }
        });
        tasks.lock().expect("proxy registry").push(accept);
        Self { addr, tasks }
    }

    /// Closes the listener and every proxied connection.
    pub async fn cut(&self) {
        let tasks: Vec<_> = self
            .tasks
            .lock()
            .expect("proxy registry")
            .drain(..)
            .collect();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

/// The socket address a `scheme://[auth@]host[:port][/path]` URL names (`default_port` when
/// it names none), and the same URL pointed at `via` instead.
pub async fn target_of(
    url: &str,
    default_port: u16,
    via: Option<SocketAddr>,
) -> (SocketAddr, String) {
    let (scheme, rest) = url.split_once("://").expect("URL with a scheme");
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((auth, host)) => (format!("{auth}@"), host),
        None => (String::new(), rest),
    };
    let (hostport, path) = match hostpart.split_once('/') {
        Some((h, p)) => (h, format!("/{p}")),
        None => (hostpart, String::new()),
    };
    let hostport = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:{default_port}")
    };
    let addr = tokio::net::lookup_host(hostport)
        .await
        .expect("resolve")
        .next()
        .expect("an address");
    let rewritten = via
        .map(|v| format!("{scheme}://{auth}{v}{path}"))
        .unwrap_or_else(|| url.to_owned());
    (addr, rewritten)
}
