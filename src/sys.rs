//! What teammem asks of the operating system and of libgit2's process-wide state that std
//! cannot do: the crate's only `unsafe` code (the crate root denies it everywhere else), each
//! block with the proof that it is sound, behind safe functions.
//!
//! The process calls go through `rustix` where it has a safe function (the effective user id,
//! the parent's id, a process group's kill, the parent-death signal), so that what is left
//! here is what no safe API offers: changing the environment, ending the process at once, code
//! run between `fork` and `exec`, and libgit2's global options.

use std::ffi::{OsStr, OsString};
use std::process::{Child, Command};
use std::sync::{Mutex, OnceLock};

/// The effective user id (who owns the files this process creates).
#[cfg(unix)]
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Sends SIGKILL to the process group led by `child`, started with `process_group(0)`: it
/// and everything it started. A group already gone is no error worth reporting (the caller
/// kills and reaps the child itself next).
#[cfg(unix)]
pub(crate) fn kill_process_group(child: &Child) {
    let group = rustix::process::Pid::from_child(child);
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
}

/// Ends the process at once with `code`: no destructor, no `atexit` handler, no flush of
/// C's buffers, as a kill would. For a thread that must stop the process while another may
/// be inside libgit2 or OpenSSL, whose exit handlers would free what that thread uses.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` has no precondition: it hands the process to the kernel to end, runs
    // no code of this process, and never returns.
    unsafe { libc::_exit(code) }
}

/// Asks the kernel to kill this process when the thread that started it ends (Linux's
/// parent-death signal), then ends this process at once if its parent is no longer `parent`
/// (it may have died before the request took effect). Elsewhere, nothing.
pub(crate) fn die_with_parent(parent: u32) {
    #[cfg(target_os = "linux")]
    {
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        let now = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
        if now.and_then(|p| u32::try_from(p).ok()) != Some(parent) {
            exit_now(3);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
}

/// Has the kernel kill the program `cmd` starts when the thread that started it ends (Linux's
/// parent-death signal): a transfer never outlives teammem killed at a hook's time limit.
/// Elsewhere, nothing.
pub(crate) fn kill_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: `pre_exec` runs the closure in the child between `fork` and `exec`, where
        // only async-signal-safe work is allowed: the closure makes one `prctl` system call
        // (rustix's raw system call, no allocation, no lock) and returns `Ok`.
        unsafe {
            cmd.pre_exec(|| {
                let _ = rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ));
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Serialises libgit2 network operations so the process-wide timeouts belong to one of them.
static NETWORK: Mutex<()> = Mutex::new(());

/// Runs `operation` (a libgit2 fetch or push) with libgit2's process-wide connect and read
/// timeouts set to `millis`, holding a lock so that no other operation of this process
/// changes them meanwhile.
pub(crate) fn with_libgit2_timeouts<T>(millis: i32, operation: impl FnOnce() -> T) -> T {
    let _only_one = NETWORK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // SAFETY: these write two C ints that libgit2 reads when it opens or reads a socket,
    // which only a network operation does. Every write and every network operation of
    // teammem runs under NETWORK (held until `operation` returns), so no read races a write.
    unsafe {
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(millis);
        let _ = git2::opts::set_server_timeout_in_milliseconds(millis);
    }
    operation()
}

/// The OpenSSL variables [`point_openssl_at`] may set.
const OPENSSL_VARS: [&str; 2] = ["SSL_CERT_FILE", "SSL_CERT_DIR"];

/// The user's values of [`OPENSSL_VARS`], as they were before [`point_openssl_at`] changed
/// them; unset until it did.
static USER_OPENSSL_VARS: OnceLock<[(&str, Option<OsString>); 2]> = OnceLock::new();

/// Sets OpenSSL's `SSL_CERT_FILE` and, when given, `SSL_CERT_DIR` for this process's
/// libgit2, which reads them once when it starts (libgit2 has no option read before that:
/// its `GIT_OPT_SET_SSL_CERT_LOCATIONS` adds to the bundle it has already parsed). Done only
/// while this is the process's one thread (Linux, where `/proc/self/task` tells); otherwise
/// nothing changes and the answer is `false`. Programs teammem starts for the user get the
/// user's values back with [`user_openssl_environment`].
pub(crate) fn point_openssl_at(file: &OsStr, dir: Option<&OsStr>) -> bool {
    if !only_thread() || USER_OPENSSL_VARS.get().is_some() {
        return false;
    }
    let _ = USER_OPENSSL_VARS.set(OPENSSL_VARS.map(|var| (var, std::env::var_os(var))));
    // SAFETY: the environment may be written only while no other thread reads it. This
    // thread is the process's only one (`only_thread`, just above), and only it could start
    // another, which it does not do before these calls return.
    unsafe {
        std::env::set_var("SSL_CERT_FILE", file);
        if let Some(dir) = dir {
            std::env::set_var("SSL_CERT_DIR", dir);
        }
    }
    true
}

/// Gives a program teammem starts for the user (an editor, git) the user's own OpenSSL
/// variables, not the ones [`point_openssl_at`] set for teammem's libgit2.
pub(crate) fn user_openssl_environment(cmd: &mut Command) {
    for (var, value) in USER_OPENSSL_VARS.get().into_iter().flatten() {
        match value {
            Some(value) => cmd.env(var, value),
            None => cmd.env_remove(var),
        };
    }
}

/// Whether the calling thread is the process's only one: `/proc/self/task` lists one task.
/// `false` where that cannot be told.
fn only_thread() -> bool {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.take(2).count() == 1)
    }
    #[cfg(not(target_os = "linux"))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effective_uid_is_the_owner_of_a_new_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().uid(), effective_uid());
    }

    #[test]
    fn a_test_process_has_threads_so_the_environment_is_left_alone() {
        // The test harness runs tests on threads of its own.
        assert!(!only_thread());
        assert!(!point_openssl_at(OsStr::new("/dev/null"), None));
        let mut cmd = Command::new("true");
        user_openssl_environment(&mut cmd);
        assert_eq!(cmd.get_envs().count(), 0);
    }
}
