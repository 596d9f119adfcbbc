//! What every hook command shares: the hook's JSON read from stdin without ever waiting on it
//! for long. The client named by `--hook` is [`crate::ops::delivery::HookFormat`] itself.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use crate::domain::hook_input::HookInput;

/// The most bytes of hook input read: a prompt pasted whole is kept, a stream is not.
const MAX_INPUT: u64 = 4 << 20;

/// The hook's input on stdin, read for at most `wait`: `None` when stdin is a terminal, empty,
/// not a hook's JSON, or still open after `wait` (a client always closes it; a person running
/// the command by hand may not). The reader thread is left behind then; the process does not
/// wait for it.
pub fn read_input(wait: Duration) -> Option<HookInput> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(MAX_INPUT)
            .read_to_end(&mut bytes);
        let _ = send.send(read.map(|_| bytes));
    });
    let bytes = receive.recv_timeout(wait).ok()?.ok()?;
    HookInput::parse(&bytes)
}
