//! A child process run within the time budget — the installed git (`git credential fill`, the
//! `git-cli` transport) and teammem's own transfer helper alike: started in a process group of
//! its own, given its input, its output read as it comes, and killed with everything it started
//! when the deadline passes, so no child outlives the budget.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus};
use std::thread::JoinHandle;
use std::time::Duration;

use super::deadline::Deadline;

/// How often a running child is asked whether it has ended.
const POLL: Duration = Duration::from_millis(2);

/// What a child that ended in time left.
#[derive(Debug)]
pub(crate) struct Finished {
    /// How it exited.
    pub status: ExitStatus,
    /// Its standard output (empty when it was not piped).
    pub stdout: Vec<u8>,
    /// Its standard error (empty when it was not piped).
    pub stderr: Vec<u8>,
}

/// Why a child gave no result.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// It could not be started.
    Spawn(std::io::Error),
    /// Waiting for the child failed; it was killed with everything it started.
    Wait {
        /// What the OS said.
        error: std::io::Error,
    },
    /// The deadline passed; the child was killed with everything it started.
    Deadline {},
}

/// Runs `cmd` in a process group of its own with `input` on its stdin (when piped), reading its
/// piped output in the background, until it ends or `deadline` passes.
pub(crate) fn run_within(
    mut cmd: Command,
    input: &[u8],
    deadline: &Deadline,
) -> Result<Finished, Stopped> {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so whatever it starts (ssh, a credential helper) dies with it.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(Stopped::Spawn)?;
    let stdout = child.stdout.take().map(read_in_background);
    let stderr = child.stderr.take().map(read_in_background);
    // Written beside the reads: a child that answers as it reads (`git cat-file --batch`)
    // would otherwise fill its output pipe and stop reading while its input is still coming.
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if deadline.passed() => {
                kill_group(&mut child);
                return Err(Stopped::Deadline {});
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => {
                kill_group(&mut child);
                return Err(Stopped::Wait { error: e });
            }
        }
    };
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let collect = |handle: Option<JoinHandle<Vec<u8>>>| {
        handle.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok(Finished {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Kills a child started in a process group of its own (`process_group(0)`), with everything
/// it started, and reaps it.
pub(crate) fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    crate::sys::kill_process_group(child);
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn shell(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    #[test]
    fn a_child_that_ends_gives_its_output() {
        let deadline = Deadline::after(Duration::from_secs(10));
        let done = run_within(shell("cat; echo oops >&2; exit 3"), b"input", &deadline).unwrap();
        assert_eq!(done.status.code(), Some(3));
        assert_eq!(done.stdout, b"input");
        assert_eq!(done.stderr, b"oops\n");
    }

    #[test]
    fn a_child_past_the_deadline_is_killed_with_what_it_started() {
        let deadline = Deadline::after(Duration::from_millis(200));
        let started = std::time::Instant::now();
        // The grandchild holds stdout open: only killing the whole group ends the read.
        let stopped = run_within(shell("sleep 30 & sleep 30"), b"", &deadline).unwrap_err();
        assert!(matches!(stopped, Stopped::Deadline { .. }), "{stopped:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
