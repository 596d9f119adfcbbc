//! The one output layer every command prints through (jj's `Ui`): the result on standard
//! output, status lines on standard output unless `-q`, warnings, hints and debug lines on
//! standard error, each with one prefix.
//!
//! A reader that closes the pipe early (`teammem list | head -1`) is not an error: the first
//! write that meets `EPIPE` marks standard output closed, later output is dropped, the command
//! finishes what it was doing (a write never stops half-way) and the process exits quietly with
//! [`EXIT_CLOSED_PIPE`], the status a shell shows for git killed by SIGPIPE. SIGPIPE itself stays
//! ignored, as Rust sets it: libgit2 and OpenSSL write to sockets, and a peer closing one must
//! give an error there, not kill a sync.

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Exit status when standard output was closed by its reader: 128 + SIGPIPE, as a shell reports
/// git (or any program SIGPIPE killed) in `git log | head -1`.
pub const EXIT_CLOSED_PIPE: u8 = 141;

/// How much a command says besides its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// `-q`: the result, warnings and errors only.
    Quiet,
    /// The default: status lines and hints too.
    Normal,
    /// `-v` or `TEAMMEM_LOG`: debug lines on standard error as well.
    Debug,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(1);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDOUT_ERROR: OnceLock<Mutex<Option<String>>> = OnceLock::new();

/// Sets how much is printed, from `-q`, `-v` and the `TEAMMEM_LOG` variable (any value but
/// empty, `0` or `off` turns debug lines on), and installs the closed-pipe safety net.
pub fn init(quiet: bool, verbose: u8) {
    let log = std::env::var("TEAMMEM_LOG")
        .ok()
        .is_some_and(|v| !matches!(v.trim(), "" | "0" | "off" | "false"));
    let level = if verbose > 0 || log {
        Verbosity::Debug
    } else if quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    VERBOSITY.store(level as u8, Ordering::Relaxed);
    install_pipe_panic_net();
}

/// The current verbosity.
pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Debug,
    }
}

/// Whether standard output's reader went away.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Writes the command's result (never hidden by `-q`).
pub fn out(args: fmt::Arguments<'_>) {
    if stdout_closed() {
        return;
    }
    let mut stdout = io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.flush());
    if let Err(err) = written {
        note_stdout_error(&err);
    }
}

/// Writes raw bytes of the result (a file's content, a report).
pub fn out_bytes(bytes: &[u8]) {
    if stdout_closed() {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        note_stdout_error(&err);
    }
}

/// Writes a status line on standard output ("Added …", "Wrote …"), unless `-q`.
pub fn status(args: fmt::Arguments<'_>) {
    if verbosity() >= Verbosity::Normal {
        out(format_args!("{args}\n"));
    }
}

/// Writes `teammem: warning: …` on standard error (shown with `-q` too).
pub fn warning(args: fmt::Arguments<'_>) {
    err(format_args!("teammem: warning: {args}\n"));
}

/// Writes `hint: …` on standard error, unless `-q`.
pub fn hint(args: fmt::Arguments<'_>) {
    if verbosity() >= Verbosity::Normal {
        err(format_args!("hint: {args}\n"));
    }
}

/// Writes `teammem: …` on standard error: an error, or a finding a script reads there.
pub fn error(args: fmt::Arguments<'_>) {
    err(format_args!("teammem: {args}\n"));
}

/// Writes `teammem: debug: …` on standard error with `-v` or `TEAMMEM_LOG`.
pub fn debug(args: fmt::Arguments<'_>) {
    if verbosity() >= Verbosity::Debug {
        err(format_args!("teammem: debug: {args}\n"));
    }
}

/// Writes to standard error as it is (a report that belongs there). A closed standard error
/// is ignored: there is nobody left to tell.
pub fn err(args: fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr.write_fmt(args);
}

/// Whether standard error is a terminal (progress is shown only then).
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// A progress line on standard error for work that may take a while (fetch, push): shown only
/// when standard error is a terminal, not with `-q`, and only once the work has taken a second;
/// erased when the value is dropped.
pub struct Progress {
    done: Option<std::sync::Arc<AtomicBool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts a [`Progress`] line saying `what` ("Syncing team memory").
pub fn progress(what: &'static str) -> Progress {
    if !stderr_is_terminal() || verbosity() == Verbosity::Quiet {
        return Progress {
            done: None,
            thread: None,
        };
    }
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let seen = done.clone();
    let thread = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let mut shown = 0;
        while !seen.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let secs = started.elapsed().as_secs();
            if secs > shown && !seen.load(Ordering::Relaxed) {
                err(format_args!("\r{what}… {secs} s"));
                shown = secs;
            }
        }
        if shown > 0 {
            // Back to the start of the line and clear it.
            err(format_args!("\r\x1b[K"));
        }
    });
    Progress {
        done: Some(done),
        thread: Some(thread),
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(done) = &self.done {
            done.store(true, Ordering::Relaxed);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A `Write` over [`out_bytes`], for operations that write their own report.
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        out_bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The exit status to return: `code`, or [`EXIT_CLOSED_PIPE`] when the reader closed standard
/// output, or 2 when writing it failed otherwise (a full disk), said on standard error.
pub fn exit_status(code: u8) -> u8 {
    if let Some(message) = STDOUT_ERROR
        .get()
        .and_then(|m| m.lock().ok().and_then(|m| m.clone()))
    {
        error(format_args!("cannot write standard output: {message}"));
        return crate::ops::EXIT_ERROR;
    }
    if stdout_closed() {
        EXIT_CLOSED_PIPE
    } else {
        code
    }
}

fn note_stdout_error(err: &io::Error) {
    STDOUT_CLOSED.store(true, Ordering::Relaxed);
    if err.kind() != io::ErrorKind::BrokenPipe {
        let slot = STDOUT_ERROR.get_or_init(|| Mutex::new(None));
        if let Ok(mut slot) = slot.lock() {
            slot.get_or_insert_with(|| err.to_string());
        }
    }
}

/// A safety net for output that does not go through this module (`println!` in code added
/// later): std panics with "failed printing to stdout: Broken pipe"; that panic exits quietly
/// with [`EXIT_CLOSED_PIPE`] instead of printing a backtrace. Every other panic is reported
/// as before.
fn install_pipe_panic_net() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        let printing = text.starts_with("failed printing to std");
        if printing && text.contains("Broken pipe") {
            std::process::exit(i32::from(EXIT_CLOSED_PIPE));
        }
        previous(info);
    }));
}
