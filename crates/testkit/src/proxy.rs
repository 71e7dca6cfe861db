//! A TCP proxy a test puts between a product and its database or Redis, to stage outages on
//! one listening address: forward, cut (refuse and close), black hole (accept and hold, pass
//! nothing) and resume.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does with connections, old and new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every byte is passed on, both ways.
    Forward,
    /// Nothing listens: new connections are refused, open ones were closed.
    Cut,
    /// New connections are accepted and every connection, old or new, is held open while
    /// nothing is passed on either way (the proxy stops reading, so the peers' kernels still
    /// acknowledge what fits in the socket buffers, as across a silent network partition).
    BlackHole,
}

/// Forwards every connection on `addr` to a target; see [`Mode`].
#[derive(Debug)]
pub struct Proxy {
    pub addr: SocketAddr,
    target: SocketAddr,
    mode: watch::Sender<Mode>,
    /// The accept loop (absent while cut) and every connection's pump.
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    /// Listens on 127.0.0.1:0 and forwards to `target`.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let proxy = Self {
            addr,
            target,
            mode: watch::Sender::new(Mode::Forward),
            tasks: Arc::new(Mutex::new(Vec::new())),
        };
        proxy.serve(listener);
        proxy
    }

    /// A proxy in front of what the URL `url` names (`default_port` when it names none), and
    /// `url` pointed at the proxy.
    pub async fn in_front_of(url: &str, default_port: u16) -> (Self, String) {
        let (target, _) = target_of(url, default_port, None).await;
        let proxy = Self::start(target).await;
        let (_, via) = target_of(url, default_port, Some(proxy.addr)).await;
        (proxy, via)
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        *self.mode.borrow()
    }

    /// Closes the listener and every proxied connection: connecting is refused until
    /// [`Proxy::resume`].
    pub async fn cut(&self) {
        self.mode.send_replace(Mode::Cut);
        let tasks: Vec<_> = self.registry().drain(..).collect();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }

    /// Stops passing anything on, for open connections and new ones alike, without closing
    /// any. From [`Mode::Cut`], listens again first.
    pub async fn black_hole(&self) {
        self.listen_again().await;
        self.mode.send_replace(Mode::BlackHole);
    }

    /// Forwards again: after a cut on the same address (new connections only: the old ones
    /// are gone), after a black hole also what the held connections had queued.
    pub async fn resume(&self) {
        self.listen_again().await;
        self.mode.send_replace(Mode::Forward);
    }

    /// Binds `addr` again if the proxy is cut (retrying briefly: the old socket may linger).
    async fn listen_again(&self) {
        if self.mode() != Mode::Cut {
            return;
        }
        let mut tries = 0;
        let listener = loop {
            match TcpListener::bind(self.addr).await {
                Ok(listener) => break listener,
                Err(_) if tries < 50 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("the proxy cannot listen on {} again: {e}", self.addr),
            }
        };
        // held connections and new ones wait for the mode the caller sets next
        self.mode.send_replace(Mode::BlackHole);
        self.serve(listener);
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.tasks.lock().expect("proxy registry")
    }

    fn serve(&self, listener: TcpListener) {
        let registry = Arc::clone(&self.tasks);
        let mode = self.mode.clone();
        let target = self.target;
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let mode = mode.subscribe();
                let conn = tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(target).await {
                        let (client_read, client_write) = client.into_split();
                        let (server_read, server_write) = server.into_split();
                        tokio::join!(
                            pump(client_read, server_write, mode.clone()),
                            pump(server_read, client_write, mode),
                        );
                    }
                });
                let mut tasks = registry.lock().expect("proxy registry");
                tasks.retain(|t| !t.is_finished());
                tasks.push(conn);
            }
        });
        self.registry().push(accept);
    }
}

/// Copies `from` to `to` while the mode is [`Mode::Forward`]; reads nothing otherwise. A
/// chunk read is always written whole, so a black hole never tears the byte stream.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut mode: watch::Receiver<Mode>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let now = *mode.borrow_and_update();
        match now {
            Mode::Forward => {}
            Mode::Cut => return,
            Mode::BlackHole => {
                if mode.changed().await.is_err() {
                    return;
                }
                continue;
            }
        }
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    let _ = to.shutdown().await;
                    return;
                }
                Ok(n) => n,
            },
            // a read not yet complete has consumed nothing: look at the mode again
            changed = mode.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        };
        if to.write_all(&buf[..n]).await.is_err() {
            return;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server: every connection gets back what it sends.
    async fn echo() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        addr
    }

    async fn round_trip(s: &mut TcpStream, msg: &[u8]) -> std::io::Result<Vec<u8>> {
        s.write_all(msg).await?;
        let mut got = vec![0u8; msg.len()];
        s.read_exact(&mut got).await?;
        Ok(got)
    }

    const QUIET: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn modes_on_one_address() {
        let proxy = Proxy::start(echo().await).await;
        let mut old = TcpStream::connect(proxy.addr).await.unwrap();
        assert_eq!(round_trip(&mut old, b"one").await.unwrap(), b"one");

        // black hole: the open connection and a new one stay open and hear nothing
        proxy.black_hole().await;
        assert_eq!(proxy.mode(), Mode::BlackHole);
        let mut new = TcpStream::connect(proxy.addr).await.unwrap();
        for s in [&mut old, &mut new] {
            let heard = tokio::time::timeout(QUIET, round_trip(s, b"two")).await;
            assert!(heard.is_err(), "a black hole passed {heard:?}");
        }

        // resume: what both had queued arrives, and they talk again
        proxy.resume().await;
        for s in [&mut old, &mut new] {
            let mut queued = [0u8; 3];
            s.read_exact(&mut queued).await.unwrap();
            assert_eq!(&queued, b"two");
            assert_eq!(round_trip(s, b"three").await.unwrap(), b"three");
        }

        // cut: open connections end, new ones are refused
        proxy.cut().await;
        assert_eq!(proxy.mode(), Mode::Cut);
        let mut end = [0u8; 1];
        let closed = tokio::time::timeout(QUIET, old.read(&mut end))
            .await
            .unwrap();
        assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
        assert!(TcpStream::connect(proxy.addr).await.is_err());

        // resume after a cut: the same address forwards again
        proxy.resume().await;
        let mut again = TcpStream::connect(proxy.addr).await.unwrap();
        assert_eq!(round_trip(&mut again, b"four").await.unwrap(), b"four");

        // a black hole straight after a cut listens again but passes nothing
        proxy.cut().await;
        proxy.black_hole().await;
        let mut held = TcpStream::connect(proxy.addr).await.unwrap();
        assert!(
            tokio::time::timeout(QUIET, round_trip(&mut held, b"five"))
                .await
                .is_err()
        );
        proxy.resume().await;
        let mut got = [0u8; 4];
        held.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"five");
    }
}
