//! What each agent session was already given, keyed by the client's `session_id`: the index
//! lines its context listed and the memory bodies its turns received. Kept on this machine
//! only (`<base>/projects/<project>/sessions/`, one small JSON file per session, never in the
//! repository), bounded (sessions, entries) and cleaned up: a session idle for
//! [`KEEP_DAYS`] days is forgotten. A file that cannot be read is ignored, as if the session
//! were new.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::gate;
use crate::domain::recall::usage::{self, DAY_SECS};
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::ops::context::VERIFY_LINE;
use crate::ops::{OpError, Project};

/// Days a session's record is kept after its last delivery.
pub const KEEP_DAYS: i64 = 7;
/// The most sessions kept per project; the least recently used go first.
pub const MAX_SESSIONS: usize = 200;
/// The most memory bodies remembered per session; the oldest deliveries go first.
pub const MAX_BODIES: usize = 1_000;
/// The most index lines remembered per session (an index holds at most 200 lines a scope).
pub const MAX_INDEXED: usize = 2_000;

/// A memory as delivered: `scope:rel` and a hash of what was delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    /// `scope:rel`.
    pub id: String,
    /// A hash of the memory file's bytes (index lines) or of the body as delivered.
    pub hash: String,
    /// Its title as delivered (made safe), to name it in a later line.
    #[serde(default)]
    pub name: String,
}

/// One session's deliveries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Format version.
    #[serde(default)]
    pub version: u32,
    /// The client's session id.
    pub session: String,
    /// When it was last written, seconds since the Unix epoch.
    #[serde(default)]
    pub updated: i64,
    /// The memories listed in the index the session's context holds.
    #[serde(default)]
    pub indexed: Vec<Delivered>,
    /// The memory bodies the session received, oldest first.
    #[serde(default)]
    pub bodies: Vec<Delivered>,
}

impl SessionRecord {
    /// A record for a new context of `session`.
    pub fn new(session: &str) -> SessionRecord {
        SessionRecord {
            version: 1,
            session: session.to_string(),
            ..SessionRecord::default()
        }
    }

    /// The record of `session` in a record file's `bytes` at `now`; `None` when they are not
    /// a record, or one of another session, or one idle for [`KEEP_DAYS`] days.
    pub fn read(bytes: &[u8], session: &str, now: i64) -> Option<SessionRecord> {
        let record: SessionRecord = serde_json::from_slice(bytes).ok()?;
        // Saturating: a torn or hand-edited time must not overflow.
        let fresh = now.saturating_sub(record.updated) < KEEP_DAYS * DAY_SECS;
        (record.session == session && fresh).then_some(record)
    }

    /// Whether the body of `id` reached this session already (in any version).
    pub fn has_body(&self, id: &str) -> bool {
        self.bodies.iter().any(|d| d.id == id)
    }

    /// Notes that the body of `id` (hash `hash`) was delivered.
    pub fn add_body(&mut self, id: &str, hash: String, name: &str) {
        self.bodies.retain(|d| d.id != id);
        self.bodies.push(Delivered {
            id: id.to_string(),
            hash,
            name: name.to_string(),
        });
        let over = self.bodies.len().saturating_sub(MAX_BODIES);
        self.bodies.drain(..over);
    }
}

impl SessionRecord {
    /// A record for a session teammem has none of, holding the bodies its transcript shows.
    pub fn from_transcript(session: &str, transcript: Option<&InTranscript>) -> SessionRecord {
        let mut record = SessionRecord::new(session);
        for id in transcript.map_or(&[][..], |t| &t.bodies[..]) {
            record.add_body(id, String::new(), "");
        }
        record
    }
}

/// A short, stable hash of delivered bytes (16 hex digits of SHA-256).
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The largest transcript read to find out what a session was given.
const MAX_TRANSCRIPT: u64 = 64 << 20;

/// What a client's transcript shows teammem gave the session, for a session teammem has no
/// record of (a fork under a new id, a record lost or forgotten).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InTranscript {
    /// Whether it holds session start's context (its reminder line).
    pub context: bool,
    /// The memories whose bodies it holds (`scope:rel`, from each `<memory-data source=…>`).
    pub bodies: Vec<String>,
    /// The session it was forked from, when its first line names it (Codex's rollout:
    /// `"forked_from_id"` in its `session_meta`).
    pub forked_from: Option<String>,
}

impl InTranscript {
    /// Reads the transcript at `path` (JSON lines, so the quotes may be escaped); `None` when
    /// it cannot be read, is not a file, or is larger than teammem reads.
    pub fn read(path: &Path) -> Option<InTranscript> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > MAX_TRANSCRIPT {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        let context = memchr::memmem::find(&bytes, VERIFY_LINE.as_bytes()).is_some();
        let opening = format!("<{} source=", gate::DATA_TAG);
        let mut bodies: Vec<String> = Vec::new();
        for at in memchr::memmem::find_iter(&bytes, opening.as_bytes()) {
            let rest = &bytes[at + opening.len()..];
            let (escaped, rest) = match rest {
                [b'\\', b'"', rest @ ..] => (true, rest),
                [b'"', rest @ ..] => (false, rest),
                _ => continue,
            };
            let Some(end) = memchr::memchr(b'"', rest) else {
                continue;
            };
            let mut id = String::from_utf8_lossy(&rest[..end]).into_owned();
            if escaped {
                id = id.strip_suffix('\\').unwrap_or(&id).replace("\\\\", "\\");
            }
            if !id.is_empty() && !bodies.contains(&id) {
                bodies.push(id);
            }
        }
        let first = &bytes[..memchr::memchr(b'\n', &bytes).unwrap_or(bytes.len())];
        let key = b"\"forked_from_id\":\"";
        let forked_from = memchr::memmem::find(first, key).and_then(|at| {
            let rest = &first[at + key.len()..];
            let id = &rest[..memchr::memchr(b'"', rest)?];
            (!id.is_empty()).then(|| String::from_utf8_lossy(id).into_owned())
        });
        Some(InTranscript {
            context,
            bodies,
            forked_from,
        })
    }
}

/// A session's record locked ([`Sessions::lock`]); unlocked when dropped.
#[derive(Debug)]
pub struct SessionLock {
    _file: std::fs::File,
}

/// The session records of one project.
#[derive(Debug, Clone)]
pub struct Sessions {
    dir: PathBuf,
}

impl Sessions {
    /// The records of `project`: below the private state folder outside the work tree
    /// (`<base>/projects/<project>/sessions/`), or `<base>/sessions/` outside a repository.
    pub fn of(project: &Project) -> Sessions {
        let dir = project
            .layout
            .outside_state_dir(ScopeKind::Private)
            .unwrap_or_else(|| project.env.base())
            .join("sessions");
        Sessions { dir }
    }

    fn file(&self, session: &str) -> PathBuf {
        // A session id is the client's text: hashed, it can never name a path.
        let digest = Sha256::digest(session.as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// Locks the record of `session` until the lock is dropped (or the process ends): two
    /// hooks of one session at the same time (concurrent turns) then take turns from reading
    /// it to writing it back, so neither gives a memory the other just gave and neither write
    /// drops the other's. `None` when the lock file cannot be made (the hook goes on without).
    pub fn lock(&self, session: &str) -> Option<SessionLock> {
        std::fs::create_dir_all(&self.dir).ok()?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.file(session).with_extension("lock"))
            .ok()?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).ok()?;
        Some(SessionLock { _file: file })
    }

    /// The record of `session`; `None` when there is none, it is too old, or it cannot be
    /// read (a corrupt record is the same as none).
    pub fn load(&self, session: &str) -> Option<SessionRecord> {
        let bytes = std::fs::read(self.file(session)).ok()?;
        SessionRecord::read(&bytes, session, usage::now())
    }

    /// Writes `record` atomically (stamped now; without waiting for the disk, as a record torn
    /// by a machine crash is read as none), then forgets sessions idle for more than
    /// [`KEEP_DAYS`] days and the least recently used beyond [`MAX_SESSIONS`].
    pub fn save(&self, record: &mut SessionRecord) -> Result<(), OpError> {
        record.updated = usage::now();
        let over = record.indexed.len().saturating_sub(MAX_INDEXED);
        record.indexed.truncate(record.indexed.len() - over);
        let mut text = serde_json::to_vec(record)
            .map_err(|e| OpError::Usage(format!("cannot encode the session record: {e}")))?;
        text.push(b'\n');
        let path = self.file(&record.session);
        store::write_cache(&path, &text)?;
        self.clean_up(&path);
        Ok(())
    }

    /// Removes old records; best effort (a record that cannot be removed is left).
    fn clean_up(&self, keep: &Path) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        let mut kept = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path == keep || path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
                continue;
            };
            let age = now.duration_since(modified).unwrap_or_default().as_secs();
            if age as i64 > KEEP_DAYS * DAY_SECS {
                remove_record(&path);
            } else {
                kept.push((modified, path));
            }
        }
        if kept.len() + 1 > MAX_SESSIONS {
            kept.sort();
            for (_, path) in kept.iter().take(kept.len() + 1 - MAX_SESSIONS) {
                remove_record(path);
            }
        }
    }
}

/// Removes a session's record and its lock file; best effort.
fn remove_record(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(path.with_extension("lock"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_bounded_and_a_redelivery_moves_to_the_end() {
        let mut record = SessionRecord::new("s");
        for n in 0..MAX_BODIES + 5 {
            record.add_body(&format!("team:{n}.md"), "h".into(), "n");
        }
        assert_eq!(record.bodies.len(), MAX_BODIES);
        assert!(!record.has_body("team:0.md"));
        assert!(record.has_body("team:5.md"));
        record.add_body("team:5.md", "h2".into(), "n");
        assert_eq!(record.bodies.last().unwrap().id, "team:5.md");
        assert_eq!(record.bodies.len(), MAX_BODIES);
    }

    #[test]
    fn records_round_trip_and_a_corrupt_one_is_none() {
        let dir = std::env::temp_dir().join(format!("teammem-sessions-{}", std::process::id()));
        let sessions = Sessions { dir: dir.clone() };
        let mut record = SessionRecord::new("abc");
        record.add_body("team:a.md", content_hash(b"a"), "A");
        sessions.save(&mut record).unwrap();
        assert_eq!(sessions.load("abc"), Some(record));
        assert_eq!(sessions.load("other"), None);
        std::fs::write(sessions.file("abc"), b"{not json").unwrap();
        assert_eq!(sessions.load("abc"), None);
        let _ = std::fs::remove_dir_all(dir);
    }
}
