//! A loopback proxy in front of a real git server that stalls the first pack it carries: it
//! passes everything until the server starts sending a pack (the `PACK` signature), passes
//! that signature, then sends nothing more on that connection and tells the test — which can
//! then kill the client in the middle of the transfer, knowing it is there, with no sleep.
//! Every other connection (a ref listing, a later fetch) passes through untouched.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The proxy; dropping it lets the stalled connection go (closed).
pub struct PackStall {
    port: u16,
    stalled: Receiver<()>,
    release: Option<Sender<()>>,
    stop: Arc<AtomicBool>,
}

impl PackStall {
    /// Proxies to `127.0.0.1:backend`.
    pub fn start(backend: u16) -> PackStall {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind the stall proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let (said, stalled) = channel();
        let (release, released) = channel::<()>();
        let said = Arc::new(Mutex::new(Some(said)));
        let released = Arc::new(Mutex::new(released));
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let (said, released) = (said.clone(), released.clone());
                std::thread::spawn(move || proxy(client, backend, &said, &released));
            }
        });
        PackStall {
            port,
            stalled,
            release: Some(release),
            stop,
        }
    }

    /// The git:// URL of a repository on the backend, through the proxy.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{name}", self.port)
    }

    /// Waits until a pack has started and stalled (at most `limit`, a guard against a test
    /// that never gets there, not a timing); says whether it did.
    pub fn wait_for_stall(&self, limit: Duration) -> bool {
        self.stalled.recv_timeout(limit).is_ok()
    }
}

impl Drop for PackStall {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.release.take();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One connection: the client's bytes pass at once; the server's pass until the first pack of
/// the proxy's life begins, which is cut after its signature and held until released.
fn proxy(
    client: TcpStream,
    backend: u16,
    said: &Mutex<Option<Sender<()>>>,
    released: &Mutex<Receiver<()>>,
) {
    let Ok(upstream) = TcpStream::connect(("127.0.0.1", backend)) else {
        return;
    };
    let (Ok(mut client_in), Ok(mut upstream_out)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut upstream_out);
        let _ = upstream_out.shutdown(Shutdown::Write);
    });
    let (mut upstream, mut client) = (upstream, client);
    let mut buf = [0u8; 8192];
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = match upstream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut seen = tail.clone();
        seen.extend_from_slice(&buf[..n]);
        let at = seen.windows(4).position(|w| w == b"PACK");
        let first_pack = at.is_some() && said.lock().unwrap().is_some();
        if let (Some(at), true) = (at, first_pack) {
            // Pass up to the end of the signature, then hold the connection.
            let end = (at + 4).saturating_sub(tail.len()).min(n);
            let _ = client.write_all(&buf[..end]);
            let _ = client.flush();
            if let Some(tell) = said.lock().unwrap().take() {
                let _ = tell.send(());
            }
            let _ = released.lock().unwrap().recv();
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
        if client.write_all(&buf[..n]).is_err() {
            return;
        }
        tail = seen[seen.len().saturating_sub(3)..].to_vec();
    }
    let _ = client.shutdown(Shutdown::Both);
}
