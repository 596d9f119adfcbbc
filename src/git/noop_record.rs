//! The no-op record: what a branch-mode sync last found when it ended with the team folder
//! holding exactly the memory branch's tip (or all of it but what the folder's limits keep
//! out, with the lines naming that) — the branch, its remote and URL, the tip, the
//! worktree's materialised base, and a stat of every file in the folder (size, mtime and
//! ctime in nanoseconds, inode, device, mode, as git's index keeps them). The next sync reads
//! it without libgit2 (`ops/sync/fast_noop.rs`): when every ref still stands there and every
//! file still has its stat, nothing happened, and the sync is over.
//!
//! A file changed within the two seconds before the record was written may have kept its stat
//! through a second change (the clock's granularity; FAT keeps mtime and ctime to two
//! seconds); such a racy entry is compared by its content (its blob id), as git treats
//! racy-clean index entries.
//!
//! The record is one file per worktree in its git folder, written through a temp file and a
//! rename; the last line counts the entries, so a torn file after a crash reads as none.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::recovery::NOOP_RECORD;

const HEADER: &str = "teammem no-op record 2";

/// A stat of one file or symlink of the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFile {
    /// Relative to the work tree, `/`-separated.
    pub path: String,
    /// `st_mode`.
    pub mode: u32,
    /// Bytes.
    pub size: u64,
    /// Last modification, seconds and nanoseconds.
    pub mtime: (i64, i64),
    /// Last status change, seconds and nanoseconds.
    pub ctime: (i64, i64),
    /// Inode number.
    pub ino: u64,
    /// Device.
    pub dev: u64,
}

/// What a sync found when the folder held exactly the memory branch's tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoopRecord {
    /// The memory branch's name.
    pub branch: String,
    /// The remote it is shared through.
    pub remote: String,
    /// The remote's URL.
    pub url: String,
    /// The tip the local branch, the tracking ref and the materialised base stood on.
    pub tip: String,
    /// This worktree's materialised-base ref and the commit it held.
    pub materialised_ref: String,
    /// The commit the materialised-base ref held.
    pub materialised: String,
    /// When the record was written (seconds, nanoseconds since the epoch).
    pub written: (i64, i64),
    /// What the folder's limits keep out of it: the user's limits (memories, bytes) and the
    /// lines naming what they keep out (each without a line break). `None` when the folder
    /// holds the whole tip.
    pub kept_out: Option<((u64, u64), Vec<String>)>,
    /// Every file of the folder, sorted by path, with its blob id when the tip holds it.
    pub files: Vec<(RecordedFile, Option<String>)>,
}

/// Stats every file and symlink under `workdir/rel`, sorted by path (an absent folder has
/// none). `None` when a name is not UTF-8 or holds a newline, or a folder cannot be read.
pub fn stamp_folder(workdir: &Path, rel: &str) -> Option<Vec<RecordedFile>> {
    let mut out = Vec::new();
    match std::fs::symlink_metadata(workdir.join(rel)) {
        Ok(meta) if meta.is_dir() => walk(&workdir.join(rel), rel, &mut out)?,
        Ok(_) => return None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Some(out)
}

fn walk(abs: &Path, rel: &str, out: &mut Vec<RecordedFile>) -> Option<()> {
    for entry in std::fs::read_dir(abs).ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        if name.contains('\n') {
            return None;
        }
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let rel = format!("{rel}/{name}");
        if meta.is_dir() {
            walk(&path, &rel, out)?;
        } else {
            out.push(RecordedFile {
                path: rel,
                mode: meta.mode(),
                size: meta.size(),
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
                ino: meta.ino(),
                dev: meta.dev(),
            });
        }
    }
    Some(())
}

/// Now, as seconds and nanoseconds since the epoch.
pub fn now() -> (i64, i64) {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (
        i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        i64::from(since.subsec_nanos()),
    )
}

impl RecordedFile {
    /// Whether the file changed within the two seconds before `written` (or after): a later
    /// change in the same clock tick could have left this stat as it was (FAT keeps mtime and
    /// ctime to two seconds).
    pub fn is_racy(&self, written: (i64, i64)) -> bool {
        let limit = (written.0 - 2, written.1);
        self.mtime >= limit || self.ctime >= limit
    }
}

/// The blob id git gives `bytes`, in hex.
pub fn blob_id(bytes: &[u8]) -> String {
    super::plain::hex(&super::plain::blob_sha1(bytes))
}

/// [`blob_id`] in a repository whose object ids have `hex_len` hex digits: 64 is SHA-256.
fn blob_id_of_length(bytes: &[u8], hex_len: usize) -> String {
    if hex_len != 64 {
        return blob_id(bytes);
    }
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    super::plain::hex(&hasher.finalize())
}

/// Whether every file of the team folder under `workdir` has the stat `record` holds for it (a
/// racy one, its recorded content, hashed as the repository's `hex_len`-digit ids are), and no
/// file came or went. `None` when a name cannot be recorded.
pub fn folder_unchanged(workdir: &Path, record: &NoopRecord, hex_len: usize) -> Option<bool> {
    let now = stamp_folder(workdir, crate::domain::scope::TEAM_DIR)?;
    if now.len() != record.files.len() {
        return Some(false);
    }
    for (stamp, (recorded, blob)) in now.iter().zip(&record.files) {
        if stamp != recorded {
            return Some(false);
        }
        if stamp.is_racy(record.written) && !same_content(workdir, stamp, blob.as_deref(), hex_len)
        {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether the regular file `stamp` names holds the blob `blob`.
fn same_content(workdir: &Path, stamp: &RecordedFile, blob: Option<&str>, hex_len: usize) -> bool {
    let Some(blob) = blob else { return false };
    if stamp.mode & 0o170000 != 0o100000 {
        return false;
    }
    std::fs::read(workdir.join(&stamp.path))
        .is_ok_and(|bytes| blob_id_of_length(&bytes, hex_len) == blob)
}

impl NoopRecord {
    /// The record as text.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "{HEADER}\nbranch {}\nremote {}\nurl {}\ntip {}\nmaterialised {} {}\nwritten {} {}\n",
            self.branch,
            self.remote,
            self.url,
            self.tip,
            self.materialised_ref,
            self.materialised,
            self.written.0,
            self.written.1
        );
        if let Some(((memories, bytes), lines)) = &self.kept_out {
            text.push_str(&format!("kept-out-limits {memories} {bytes}\n"));
            for line in lines {
                text.push_str(&format!("kept-out {line}\n"));
            }
        }
        for (s, blob) in &self.files {
            text.push_str(&format!(
                "file {} {:o} {} {} {} {} {} {} {} {}\n",
                blob.as_deref().unwrap_or("-"),
                s.mode,
                s.size,
                s.mtime.0,
                s.mtime.1,
                s.ctime.0,
                s.ctime.1,
                s.ino,
                s.dev,
                s.path
            ));
        }
        text.push_str(&format!("end {}\n", self.files.len()));
        text
    }

    /// Reads a record written by [`NoopRecord::to_text`]; `None` for anything else.
    pub fn from_text(text: &str) -> Option<NoopRecord> {
        let mut lines = text.strip_suffix('\n')?.split('\n');
        if lines.next()? != HEADER {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_string)
        };
        let branch = field("branch")?;
        let remote = field("remote")?;
        let url = field("url")?;
        let tip = field("tip")?;
        let materialised = field("materialised")?;
        let (materialised_ref, materialised) = materialised.split_once(' ')?;
        let written = field("written")?;
        let (secs, nanos) = written.split_once(' ')?;
        let written = (secs.parse().ok()?, nanos.parse().ok()?);
        let mut files = Vec::new();
        let mut kept_out: Option<((u64, u64), Vec<String>)> = None;
        for line in lines.by_ref() {
            if let Some(limits) = line.strip_prefix("kept-out-limits ") {
                let (memories, bytes) = limits.split_once(' ')?;
                kept_out = Some(((memories.parse().ok()?, bytes.parse().ok()?), Vec::new()));
                continue;
            }
            if let Some(said) = line.strip_prefix("kept-out ") {
                kept_out.as_mut()?.1.push(said.to_string());
                continue;
            }
            if let Some(count) = line.strip_prefix("end ") {
                if count.parse::<usize>().ok()? != files.len() {
                    return None;
                }
                return Some(NoopRecord {
                    branch,
                    remote,
                    url,
                    tip,
                    materialised_ref: materialised_ref.to_string(),
                    materialised: materialised.to_string(),
                    written,
                    kept_out,
                    files,
                });
            }
            let mut parts = line.strip_prefix("file ")?.splitn(10, ' ');
            let blob = parts.next()?;
            let blob = (blob != "-").then(|| blob.to_string());
            let mut num = || parts.next();
            let mode = u32::from_str_radix(num()?, 8).ok()?;
            let size = num()?.parse().ok()?;
            let mtime = (num()?.parse().ok()?, num()?.parse().ok()?);
            let ctime = (num()?.parse().ok()?, num()?.parse().ok()?);
            let ino = num()?.parse().ok()?;
            let dev = num()?.parse().ok()?;
            let path = parts.next()?.to_string();
            files.push((
                RecordedFile {
                    path,
                    mode,
                    size,
                    mtime,
                    ctime,
                    ino,
                    dev,
                },
                blob,
            ));
        }
        None
    }
}

/// Reads the record of the worktree whose git folder is `git_dir`.
pub fn read(git_dir: &Path) -> Option<NoopRecord> {
    NoopRecord::from_text(&std::fs::read_to_string(git_dir.join(NOOP_RECORD)).ok()?)
}

/// Writes the record (through a temp file and a rename).
pub fn write(git_dir: &Path, record: &NoopRecord) -> Result<(), crate::domain::store::StoreError> {
    crate::domain::store::write_cache(&git_dir.join(NOOP_RECORD), record.to_text().as_bytes())
}

/// Removes the record, if there is one: what it says no longer holds.
pub fn remove(git_dir: &Path) {
    let _ = std::fs::remove_file(git_dir.join(NOOP_RECORD));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_a_torn_one_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("t/a")).unwrap();
        std::fs::write(dir.path().join("t/a/x y.md"), "x").unwrap();
        std::fs::write(dir.path().join("t/MEMORY.md"), "m").unwrap();
        let files = stamp_folder(dir.path(), "t").unwrap();
        assert_eq!(
            files.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
            ["t/MEMORY.md", "t/a/x y.md"]
        );
        let record = NoopRecord {
            branch: "team-memory".into(),
            remote: "origin".into(),
            url: "file:///srv/x.git".into(),
            tip: "a".repeat(40),
            materialised_ref: "refs/teammem/materialised/main".into(),
            materialised: "b".repeat(40),
            written: now(),
            kept_out: Some(((5_000, 1 << 20), vec!["too-many: 3 memories".into()])),
            files: files
                .into_iter()
                .map(|s| (s, Some(blob_id(b"x"))))
                .collect(),
        };
        let text = record.to_text();
        assert_eq!(NoopRecord::from_text(&text), Some(record));
        let torn = &text[..text.len() - 8];
        assert_eq!(NoopRecord::from_text(torn), None);
        assert_eq!(stamp_folder(dir.path(), "missing"), Some(Vec::new()));
    }

    #[test]
    fn blob_ids_are_gits() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }
}
