//! What every hook command shares: the hook's JSON read from stdin without ever waiting on it
//! for long. The client named by `--hook` is [`crate::ops::delivery::HookFormat`] itself.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use crate::domain::hook_input::HookInput;

/// The most bytes of hook input read: a prompt pasted whole is kept, a stream is not.
const MAX_INPUT: u64 = 4 << 20;

/// The hook's input on stdin, read for at most `wait`: `None` when stdin is a terminal, empty,
/// not a hook's JSON, or still open after `wait` without a whole object in it. A client that
/// writes its JSON and keeps stdin open is answered as soon as the object is whole. The reader
/// thread is left behind when stdin stays open; the process does not wait for it.
pub fn read_input(wait: Duration) -> Option<HookInput> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut stdin = std::io::stdin().lock().take(MAX_INPUT);
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    bytes.extend_from_slice(&chunk[..n]);
                    if HookInput::is_complete(&bytes) {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = send.send(bytes);
    });
    let bytes = receive.recv_timeout(wait).ok()?;
    HookInput::parse(&bytes)
}
