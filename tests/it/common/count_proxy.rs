//! A loopback proxy in front of a real git server that counts the connections it carries, so a
//! test can tell how many times a client talked to the remote: a ref listing is one connection,
//! a fetch another.
//!
//! A connection is counted when it is accepted, before anything is passed on. A git client
//! waits for the server's first answer on every connection it opens, and that answer only
//! comes through the proxy after the count, so once the client process has exited every
//! connection it used has been counted: no sleep, no race.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The proxy; it lives as long as the test (its threads end with the process).
pub struct CountProxy {
    port: u16,
    count: Arc<AtomicUsize>,
}

impl CountProxy {
    /// Proxies to `127.0.0.1:backend`.
    pub fn start(backend: u16) -> CountProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind the counting proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                counted.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || carry(client, backend));
            }
        });
        CountProxy { port, count }
    }

    /// The git:// URL of a repository on the backend, through the proxy.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{name}", self.port)
    }

    /// Connections accepted since the last call (and resets the count).
    pub fn take(&self) -> usize {
        self.count.swap(0, Ordering::SeqCst)
    }
}

fn carry(client: TcpStream, backend: u16) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", backend)) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(client_read), Ok(server_write)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let upstream = std::thread::spawn(move || pipe(client_read, server_write));
    pipe(server, client);
    let _ = upstream.join();
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
