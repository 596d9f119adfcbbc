//! libgit2's side of a network operation: its process-wide connect and read timeouts.
//!
//! libgit2 has no per-operation timeout: its connect and read timeouts are process-wide
//! settings (`GIT_OPT_SET_SERVER_CONNECT_TIMEOUT` / `GIT_OPT_SET_SERVER_TIMEOUT`). They are set
//! from the remaining budget under one lock, held for the whole network operation, so two
//! operations in one process never see each other's values. Progress callbacks abort a
//! transfer that is still running when the deadline passes.

use std::sync::Mutex;

use super::deadline::Deadline;

/// Serialises libgit2 network operations so the process-wide timeouts belong to one of them.
static NETWORK: Mutex<()> = Mutex::new(());

/// Runs a libgit2 network operation with connect and read timeouts set from the budget.
pub(crate) fn with_timeouts<T>(deadline: &Deadline, operation: impl FnOnce() -> T) -> T {
    let _only_one = NETWORK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let millis = deadline.remaining().as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: these write two C ints read by libgit2 when it opens or reads a socket. Every
    // write happens under NETWORK, which is held for the whole operation that reads them.
    unsafe {
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(millis);
        let _ = git2::opts::set_server_timeout_in_milliseconds(millis);
    }
    operation()
}
