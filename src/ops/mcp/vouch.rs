//! A long-lived MCP server vouches for recall's on-disk indexes, so that a turn's hook
//! (`teammem prompt-context`, a new process each prompt) need not stat every memory to prove
//! its index fresh: 10,000 stats were half of a turn.
//!
//! For each scope the server watches the folder ([`FolderWatch`], inotify) and listens on a
//! Unix socket beside the scope's index (`<index>.watch`, in the user's own state folder). A
//! turn sends the checksum of the index it read; the server first takes the events the kernel
//! has queued (a write another process finished is queued before that write returns, so none
//! that came before the question is missed), and answers `yes` only when it has itself proved
//! that index true to the folder ([`refresh::index_holds`], the same stats a turn takes) with
//! no event seen since the proof began. Anything else — no server, a dead one, a slow answer,
//! another index, an event, a lost watch (queue overflow, watch limit) — is `no`, and the turn
//! takes the stats as without a server. The server then proves the index the turn asked about
//! on a thread of its own, for the turns after.
//!
//! Not seen by inotify, and so not by this: a write through a shared memory mapping, and a
//! change made under another mount of the same files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::watch::{Changes, FolderWatch};
use crate::domain::recall::refresh;
use crate::domain::scope::ScopeKind;
use crate::ops::Project;
use crate::ops::recall::index_file;

/// How long a turn waits for the server's answer; past it, the turn proves its index itself.
const ANSWER_WAIT: Duration = Duration::from_millis(20);

/// The socket a server vouching for the index file `index` listens on.
pub fn socket_path(index: &Path) -> PathBuf {
    index.with_extension("watch")
}

/// The address to bind or connect to for the socket at `path`, with the folder it is reached
/// through (kept open while the address is used): a socket address holds at most 107 bytes,
/// and a state folder below a long project path is longer. On Linux such a path is reached
/// through the open folder's `/proc/self/fd` entry instead (the folder's own permissions
/// still apply).
#[cfg(unix)]
fn address(path: &Path) -> Option<(PathBuf, Option<std::fs::File>)> {
    const ROOM: usize = 100;
    if path.as_os_str().len() <= ROOM {
        return Some((path.to_path_buf(), None));
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let folder = std::fs::File::open(path.parent()?).ok()?;
        let short =
            PathBuf::from(format!("/proc/self/fd/{}", folder.as_raw_fd())).join(path.file_name()?);
        if short.as_os_str().len() <= ROOM {
            return Some((short, Some(folder)));
        }
    }
    None
}

/// Whether a server watching the folder of the index file `index` vouches that the index
/// whose checksum is `sum` still holds: no stat is then needed. `false` whenever that cannot
/// be told at once.
#[cfg(unix)]
pub fn vouched(index: &Path, sum: u64) -> bool {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    let Some((at, _folder)) = address(&socket_path(index)) else {
        return false;
    };
    let Ok(mut stream) = UnixStream::connect(at) else {
        return false;
    };
    if stream.set_read_timeout(Some(ANSWER_WAIT)).is_err()
        || stream.set_write_timeout(Some(ANSWER_WAIT)).is_err()
        || stream
            .write_all(format!("{sum:016x}\n").as_bytes())
            .is_err()
    {
        return false;
    }
    let mut answer = Vec::with_capacity(4);
    stream.take(4).read_to_end(&mut answer).is_ok() && answer == b"yes\n"
}

/// Without Unix sockets no server vouches: every turn proves its index itself.
#[cfg(not(unix))]
pub fn vouched(_index: &Path, _sum: u64) -> bool {
    false
}

/// What the server knows of one scope folder.
struct Watched {
    watch: FolderWatch,
    /// The checksum of the index proved true to the folder, with no event since.
    vouched: Option<u64>,
    /// Counts the times the watch reported a change (or could not tell).
    changes: u64,
    /// A proof is running.
    proving: bool,
}

impl Watched {
    /// Takes the events queued by now: any change withdraws the vouch.
    fn catch_up(&mut self) {
        match self.watch.changes() {
            Changes::Paths(paths) if paths.is_empty() => {}
            _ => {
                self.vouched = None;
                self.changes += 1;
            }
        }
    }
}

/// The sockets a server listens on; removed when it ends (unless another server's socket has
/// taken the name since).
pub struct Vouching {
    sockets: Vec<(PathBuf, Option<(u64, u64)>)>,
}

impl Drop for Vouching {
    fn drop(&mut self) {
        for (path, id) in &self.sockets {
            if identity(path) == *id {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The file's device and inode, to tell our socket from one that replaced it.
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// Starts vouching for the indexes of `scopes` of `project`, each on a thread of its own. A
/// scope another live server already vouches for, or whose socket cannot be made (a path too
/// long for a socket address), is left to the turns' own stats.
#[cfg(unix)]
pub fn start(project: &Project, scopes: &[ScopeKind]) -> Vouching {
    let mut sockets = Vec::new();
    for &scope in scopes {
        let Ok(dir) = project.check_scope_safe(scope) else {
            continue;
        };
        let Some(index) = index_file(project, scope, &dir) else {
            continue;
        };
        let path = socket_path(&index);
        // Watching starts before anything is proved: a change made meanwhile is an event.
        let watched = Arc::new(Mutex::new(Watched {
            watch: FolderWatch::new(&dir),
            vouched: None,
            changes: 0,
            proving: false,
        }));
        let Some(listener) = listen(&path) else {
            continue;
        };
        sockets.push((path.clone(), identity(&path)));
        let _ = std::thread::Builder::new()
            .name("teammem-vouch".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    answer(&watched, &dir, &index, stream);
                }
            });
    }
    Vouching { sockets }
}

/// Without Unix sockets nothing is served.
#[cfg(not(unix))]
pub fn start(_project: &Project, _scopes: &[ScopeKind]) -> Vouching {
    Vouching {
        sockets: Vec::new(),
    }
}

/// A listener on `path`; `None` when another server answers there. A socket left by a server
/// that died is replaced.
#[cfg(unix)]
fn listen(path: &Path) -> Option<std::os::unix::net::UnixListener> {
    use std::os::unix::net::{UnixListener, UnixStream};
    std::fs::create_dir_all(path.parent()?).ok()?;
    let (at, _folder) = address(path)?;
    match UnixListener::bind(&at) {
        Ok(listener) => Some(listener),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            if UnixStream::connect(&at).is_ok() {
                return None;
            }
            std::fs::remove_file(path).ok()?;
            UnixListener::bind(&at).ok()
        }
        Err(_) => None,
    }
}

/// Answers one turn's question, and proves the index it asked about when the answer was no.
#[cfg(unix)]
fn answer(
    watched: &Arc<Mutex<Watched>>,
    dir: &Path,
    index: &Path,
    mut stream: std::os::unix::net::UnixStream,
) {
    use std::io::{Read, Write};
    let _ = stream.set_read_timeout(Some(ANSWER_WAIT));
    let _ = stream.set_write_timeout(Some(ANSWER_WAIT));
    let mut line = Vec::with_capacity(17);
    // A question is 16 hex digits and a newline; a short or slow one gets no answer.
    let _ = (&mut stream).take(17).read_to_end(&mut line);
    let Some(sum) = std::str::from_utf8(&line)
        .ok()
        .and_then(|l| l.strip_suffix('\n'))
        .and_then(|l| u64::from_str_radix(l, 16).ok())
    else {
        return;
    };
    let (yes, prove) = {
        let mut w = watched_lock(watched);
        w.catch_up();
        let yes = w.vouched == Some(sum);
        let prove = !yes && !w.proving;
        w.proving |= prove;
        (yes, prove)
    };
    let _ = stream.write_all(if yes { b"yes\n" } else { b"no\n" });
    drop(stream);
    if prove {
        let (shared, dir, index) = (Arc::clone(watched), dir.to_path_buf(), index.to_path_buf());
        let proof = std::thread::Builder::new()
            .name("teammem-vouch-proof".into())
            .spawn(move || prove_index(&shared, &dir, &index));
        if proof.is_err() {
            // No thread: no proof, and the next question tries again.
            watched_lock(watched).proving = false;
        }
    }
}

#[cfg(unix)]
fn watched_lock(watched: &Arc<Mutex<Watched>>) -> std::sync::MutexGuard<'_, Watched> {
    watched.lock().unwrap_or_else(|e| e.into_inner())
}

/// Proves the index file as it now stands true to the folder, and vouches for it when no
/// event came from the start of the proof to its end (a change during the stats could have
/// been missed by them).
#[cfg(unix)]
fn prove_index(watched: &Arc<Mutex<Watched>>, dir: &Path, index: &Path) {
    let before = {
        let mut w = watched_lock(watched);
        w.catch_up();
        w.changes
    };
    let held = std::fs::read(index)
        .ok()
        .map(Arc::new)
        .and_then(|bytes| refresh::index_holds(dir, &bytes));
    let mut w = watched_lock(watched);
    w.catch_up();
    if w.changes == before {
        w.vouched = held;
    }
    w.proving = false;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_socket_below_a_path_too_long_for_its_address_is_still_reached() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a-long-project-folder-name".repeat(5));
        let path = deep.join("team-memory-recall.watch");
        assert!(path.as_os_str().len() > 108);
        let listener = listen(&path).expect("listening below a long path");
        assert!(path.exists(), "the socket is where it was asked for");
        let (at, _folder) = address(&path).unwrap();
        assert!(std::os::unix::net::UnixStream::connect(at).is_ok());
        drop(listener);
    }
}
