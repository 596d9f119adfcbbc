//! File stamps: what a stat of a file says ([`FileStamp`], taken from its metadata in one
//! place: what tells whether it changed, and what git keeps of it in an index entry), the part
//! of it that tells a memory file's or folder's content changed ([`Stamp`]), and the stat runs that take thousands of them on worker threads to prove nothing
//! changed.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the stat of a file or folder says about its content: equal stamps mean unchanged
/// content, unless the change came within the file system's timestamp tick (see
/// [`Stamp::settled`]). ctime catches an edit whose mtime was put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Status change time, nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
    /// Inode number: a file replaced by a rename gets a new one.
    pub ino: u64,
}

impl Stamp {
    /// The stamp of a stat result ([`FileStamp::content`]).
    #[cfg(unix)]
    pub fn of(meta: &fs::Metadata) -> Stamp {
        FileStamp::of(meta).content()
    }

    /// The stamp of a stat result (no ctime or inode outside Unix).
    #[cfg(not(unix))]
    pub fn of(meta: &fs::Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        Stamp {
            size: meta.len(),
            mtime_ns,
            ctime_ns: mtime_ns,
            ino: 0,
        }
    }

    /// Whether the stamp can be trusted to change with the next edit: file times come from a
    /// coarse clock, so an edit within the same tick as the stat (or as a read that followed
    /// it) can leave the stamp as it was. Only a stamp older than `window` at `now_ns` is.
    pub fn settled(&self, now_ns: i64, window_ns: i64) -> bool {
        self.mtime_ns.max(self.ctime_ns) < now_ns.saturating_sub(window_ns)
    }

    /// How many bytes [`Stamp::to_le_bytes`] takes.
    pub const BYTES: usize = 32;

    /// The stamp as 32 bytes: size, mtime, ctime and inode, each 8 bytes little-endian (the
    /// recall index's stamp column, which a [`StampRun`] compares in place).
    pub fn to_le_bytes(self) -> [u8; Stamp::BYTES] {
        let mut out = [0u8; Stamp::BYTES];
        out[..8].copy_from_slice(&self.size.to_le_bytes());
        out[8..16].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[16..24].copy_from_slice(&self.ctime_ns.to_le_bytes());
        out[24..].copy_from_slice(&self.ino.to_le_bytes());
        out
    }

    /// The stamp [`Stamp::to_le_bytes`] wrote at the start of `bytes`; `None` when they are
    /// too short.
    pub fn from_le_bytes(bytes: &[u8]) -> Option<Stamp> {
        let word = |at: usize| -> Option<[u8; 8]> { bytes.get(at..at + 8)?.try_into().ok() };
        Some(Stamp {
            size: u64::from_le_bytes(word(0)?),
            mtime_ns: i64::from_le_bytes(word(8)?),
            ctime_ns: i64::from_le_bytes(word(16)?),
            ino: u64::from_le_bytes(word(24)?),
        })
    }
}

/// What a stat of a file says: its size, times, inode and owner. Equal stamps mean the file
/// was not written to in between (unless within the file system's timestamp tick: a write
/// also moves ctime, which an editor cannot put back). The stamp of nothing
/// ([`FileStamp::default`], all zeros) written into an index entry makes git compare the
/// file's contents instead of trusting its stat data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the Unix epoch.
    pub mtime: (i64, i64),
    /// Status change time: seconds and nanoseconds since the Unix epoch.
    pub ctime: (i64, i64),
    /// The device holding the file.
    pub dev: u64,
    /// Inode number: a file replaced by a rename gets a new one.
    pub ino: u64,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
}

impl FileStamp {
    /// The stamp of a stat result (of the file itself, or of what a symlink points at,
    /// whichever the caller asked for).
    pub fn of(meta: &fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            dev: meta.dev(),
            ino: meta.ino(),
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }

    /// The part of the stamp that tells whether the content changed: what the recall index
    /// and the gate's cache keep of a memory file.
    pub fn content(&self) -> Stamp {
        Stamp {
            size: self.size,
            mtime_ns: self.mtime.0 * 1_000_000_000 + self.mtime.1,
            ctime_ns: self.ctime.0 * 1_000_000_000 + self.ctime.1,
            ino: self.ino,
        }
    }

    /// Whether both stamps are of the same file (device and inode), whatever its content.
    pub fn same_file(&self, other: &FileStamp) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }

    /// Whether both stamps are of the same version of a file that is only ever replaced by a
    /// rename, as git replaces its index: a new version has a new inode, and a new size or
    /// modification time besides.
    pub fn same_version(&self, other: &FileStamp) -> bool {
        self.ino == other.ino && self.size == other.size && self.mtime == other.mtime
    }

    /// The ten 32-bit words that open an index entry, in the file's order: ctime (seconds,
    /// nanoseconds), mtime (seconds, nanoseconds), device, inode, `mode`, owner, group, size.
    /// git keeps 32 bits of each field and drops the high bits the same way.
    pub fn index_words(&self, mode: u32) -> [u32; 10] {
        [
            self.ctime.0 as u32,
            self.ctime.1 as u32,
            self.mtime.0 as u32,
            self.mtime.1 as u32,
            self.dev as u32,
            self.ino as u32,
            mode,
            self.uid,
            self.gid,
            self.size as u32,
        ]
    }
}

/// A stat of each memory file (paths relative to `dir`), following symlinks as reading does;
/// `None` where the stat failed. Each folder is opened once and its files are looked up from
/// it, and the work is shared over a few threads: stat calls are most of a check that nothing
/// changed.
pub fn stamps(dir: &Path, rels: &[&str]) -> Vec<Option<Stamp>> {
    // The calling thread works from the start here: one worker fewer.
    StampRun::with_workers(
        dir,
        Names::copied(rels.iter().copied()),
        None,
        cores().saturating_sub(1),
    )
    .finish()
}

/// How many names one turn of a [`StampRun`] stats: small enough that the threads finish
/// close together, large enough that each turn's folder lookup is paid for.
const STAMP_PART: usize = 256;

/// The stats of [`stamps`], taken on worker threads while the caller goes on with other work
/// (the query it answers from an index whose freshness they prove), until it calls
/// [`StampRun::finish`] and takes the parts no worker has taken yet. Dropped unfinished, the
/// workers stop after the part they are on.
#[derive(Debug)]
pub struct StampRun {
    shared: Arc<StampShared>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

/// The names a [`StampRun`] stats: relative paths, each followed by a NUL (so that each is
/// its own C string, with no copy), in bytes it shares with its caller.
#[derive(Debug, Clone)]
pub struct Names {
    bytes: Arc<Vec<u8>>,
    /// Where the names lie in `bytes`.
    at: Range<usize>,
    /// How many there are.
    count: usize,
}

impl Names {
    /// `count` names in `bytes[at]` (for example a recall index's name column), each ended by
    /// a NUL; `None` when that range does not hold exactly `count` NUL-ended names.
    pub fn within(bytes: &Arc<Vec<u8>>, at: Range<usize>, count: usize) -> Option<Names> {
        let block = bytes.get(at.clone())?;
        if memchr::memchr_iter(0, block).count() != count || block.last().is_some_and(|&b| b != 0) {
            return None;
        }
        Some(Names {
            bytes: Arc::clone(bytes),
            at,
            count,
        })
    }

    /// The names copied into bytes of their own. A name with a NUL inside (never a file's
    /// name) becomes the empty name, which no stat finds.
    pub fn copied<'a>(rels: impl IntoIterator<Item = &'a str>) -> Names {
        let mut bytes = Vec::new();
        let mut count = 0;
        for rel in rels {
            if memchr::memchr(0, rel.as_bytes()).is_none() {
                bytes.extend_from_slice(rel.as_bytes());
            }
            bytes.push(0);
            count += 1;
        }
        let at = 0..bytes.len();
        Names {
            bytes: Arc::new(bytes),
            at,
            count,
        }
    }

    /// Where every [`STAMP_PART`]th name starts (the start of each part), and where the last
    /// ends.
    fn part_starts(&self) -> Vec<usize> {
        let block = self.bytes.get(self.at.clone()).unwrap_or(&[]);
        let mut starts = Vec::with_capacity(self.count.div_ceil(STAMP_PART) + 1);
        starts.push(self.at.start);
        for (n, end) in memchr::memchr_iter(0, block).enumerate() {
            if (n + 1) % STAMP_PART == 0 || n + 1 == self.count {
                starts.push(self.at.start + end + 1);
            }
        }
        starts
    }
}

/// What one part of a [`StampRun`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartStamps {
    /// Every file had the stamp it was expected to have (this many files).
    AsExpected(usize),
    /// The stamps taken (`None`: the stat failed), some not as expected (or none expected).
    Taken(Vec<Option<Stamp>>),
}

#[derive(Debug)]
struct StampShared {
    dir: PathBuf,
    names: Names,
    /// Where each part's names start in `names.bytes` (and, last, where they end).
    starts: Vec<usize>,
    /// Where the stamps the files are expected to have start in `names.bytes`
    /// ([`Stamp::BYTES`] each, in the names' order): a part whose files all have them keeps
    /// no stamp.
    expected: Option<usize>,
    /// The next part to take; parts at or past `parts.len()` mean there is nothing left.
    next: std::sync::atomic::AtomicUsize,
    parts: Vec<std::sync::OnceLock<PartStamps>>,
}

impl StampShared {
    /// Stats part `p` into `out` (cleared first), and says what it found.
    fn stat_part(&self, p: usize, out: &mut Vec<Option<Stamp>>) -> PartStamps {
        out.clear();
        let (Some(&start), Some(&end)) = (self.starts.get(p), self.starts.get(p + 1)) else {
            return PartStamps::Taken(Vec::new());
        };
        stamps_of(
            &self.dir,
            self.names.bytes.get(start..end).unwrap_or(&[]),
            out,
        );
        let first = p * STAMP_PART;
        let bytes = &self.names.bytes;
        let as_expected = self.expected.is_some_and(|at| {
            out.iter().enumerate().all(|(k, stamp)| {
                let at = at + (first + k) * Stamp::BYTES;
                stamp.is_some() && *stamp == bytes.get(at..).and_then(Stamp::from_le_bytes)
            })
        });
        if as_expected {
            PartStamps::AsExpected(out.len())
        } else {
            PartStamps::Taken(out.clone())
        }
    }

    /// Takes and stats parts until none is left.
    fn work(&self) {
        use std::sync::atomic::Ordering;
        let mut out = Vec::with_capacity(STAMP_PART);
        loop {
            let p = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = self.parts.get(p) else {
                return;
            };
            let _ = slot.set(self.stat_part(p, &mut out));
        }
    }
}

impl StampRun {
    /// Starts statting `names` (relative to `dir`), comparing each file's
    /// stamp with the one at `expected` in the same bytes (the [`Stamp::BYTES`] of name `i`
    /// at `expected + i * Stamp::BYTES`): a part whose files all match keeps no stamps
    /// ([`PartStamps::AsExpected`]).
    pub fn start_expecting(dir: &Path, names: Names, expected: usize) -> StampRun {
        StampRun::with_workers(dir, names, Some(expected), cores())
    }

    /// A run with at most `workers` threads (one per core, at most four, when there is more
    /// than one part of [`STAMP_PART`] names; none otherwise).
    fn with_workers(dir: &Path, names: Names, expected: Option<usize>, workers: usize) -> StampRun {
        let starts = names.part_starts();
        let count = starts.len().saturating_sub(1);
        let shared = Arc::new(StampShared {
            dir: dir.to_path_buf(),
            names,
            starts,
            expected,
            next: std::sync::atomic::AtomicUsize::new(0),
            parts: (0..count).map(|_| std::sync::OnceLock::new()).collect(),
        });
        let threads = if count > 1 {
            workers.min(4).min(count)
        } else {
            0
        };
        let workers = (0..threads)
            .map_while(|_| {
                let shared = Arc::clone(&shared);
                // A thread that cannot be started leaves its share to the others and finish().
                std::thread::Builder::new()
                    .name("teammem-stat".into())
                    .spawn(move || shared.work())
                    .ok()
            })
            .collect();
        StampRun { shared, workers }
    }

    /// The stamps, in the order of the names: the calling thread
    /// stats what the workers have not taken, then waits for them.
    pub fn finish(self) -> Vec<Option<Stamp>> {
        let shared = Arc::clone(&self.shared);
        let mut out = Vec::with_capacity(shared.names.count);
        for (p, part) in self.finish_parts().into_iter().enumerate() {
            match part {
                PartStamps::Taken(stamps) => out.extend(stamps),
                PartStamps::AsExpected(n) => out.extend((0..n).map(|k| {
                    let at = shared.expected? + (p * STAMP_PART + k) * Stamp::BYTES;
                    shared.names.bytes.get(at..).and_then(Stamp::from_le_bytes)
                })),
            }
        }
        out
    }

    /// [`StampRun::finish`] part by part, as they were taken, in order: a caller that only
    /// compares needs neither the copy that joins them nor the stamps of parts that matched.
    pub fn finish_parts(mut self) -> Vec<PartStamps> {
        self.shared.work();
        for worker in std::mem::take(&mut self.workers) {
            // A worker that died left its part unset: those files count as not statted.
            let _ = worker.join();
        }
        let lengths: Vec<usize> = (0..self.shared.parts.len())
            .map(|p| STAMP_PART.min(self.shared.names.count - p * STAMP_PART))
            .collect();
        // Every worker is joined, so this is the only handle left and the parts move out.
        let taken = Arc::get_mut(&mut self.shared).map(|shared| {
            let parts = std::mem::take(&mut shared.parts);
            parts
                .into_iter()
                .map(std::sync::OnceLock::into_inner)
                .collect()
        });
        let parts: Vec<Option<PartStamps>> =
            taken.unwrap_or_else(|| self.shared.parts.iter().map(|p| p.get().cloned()).collect());
        parts
            .into_iter()
            .zip(lengths)
            .map(|(part, len)| part.unwrap_or_else(|| PartStamps::Taken(vec![None; len])))
            .collect()
    }
}

impl Drop for StampRun {
    fn drop(&mut self) {
        // Unfinished: nothing more is taken; workers end with the part they are on.
        let len = self.shared.parts.len();
        self.shared
            .next
            .store(len, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The number of cores this process may use, asked once (the answer reads cgroup files).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Stats each NUL-ended name of `names` (relative to `dir`) into `out`, following symlinks;
/// a name that is not UTF-8, or empty (a name that held a NUL), has no stamp.
fn stamps_of(dir: &Path, names: &[u8], out: &mut Vec<Option<Stamp>>) {
    // On Linux each name is looked up from the folder, opened once (`statx` with a folder
    // descriptor): the kernel then walks the name's own one or two components, not the
    // folder's whole path again for each of thousands of files (that walk was most of a
    // stat's cost).
    #[cfg(target_os = "linux")]
    let folder = fs::File::open(dir).ok();
    // And each name's own folder is opened once in its turn (names come sorted, a folder's
    // together): the kernel then walks one component per file instead of two, a fifth of a
    // stat's cost. Should that folder not open (read permission missing), the name is looked
    // up from `dir` as above.
    #[cfg(target_os = "linux")]
    let mut inner: Option<(&[u8], Option<fs::File>)> = None;
    let mut at = 0;
    // memchr's searches, not core's: splitting the names was a quarter of a warm recall's
    // user instructions in this loop (10,000 short names).
    while let Some(len) = memchr::memchr(0, &names[at..]) {
        let rel = &names[at..at + len];
        let with_nul = &names[at..at + len + 1];
        at += len + 1;
        let Some(rel) = std::str::from_utf8(rel)
            .ok()
            // Never the folder itself: a name with nothing after its last `/`.
            .filter(|rel| !rel.is_empty() && !rel.ends_with('/'))
        else {
            out.push(None);
            continue;
        };
        #[cfg(target_os = "linux")]
        if let Some(folder) = &folder {
            let split = memchr::memrchr(b'/', rel.as_bytes());
            let opened = split.and_then(|slash| {
                let parent = &with_nul[..slash];
                if inner.as_ref().is_none_or(|(name, _)| *name != parent) {
                    let file = std::str::from_utf8(parent)
                        .ok()
                        .and_then(|p| fs::File::open(dir.join(p)).ok());
                    inner = Some((parent, file));
                }
                let file = inner.as_ref()?.1.as_ref()?;
                Some((file, &with_nul[slash + 1..]))
            });
            out.push(match opened {
                Some((parent, name)) => statx_at(parent, name),
                None => statx_at(folder, with_nul),
            });
            continue;
        }
        let _ = with_nul;
        out.push(
            fs::metadata(dir.join(rel))
                .ok()
                .map(|meta| Stamp::of(&meta)),
        );
    }
}

/// The stamp of `name` (NUL-ended, relative to `folder`), following symlinks.
#[cfg(target_os = "linux")]
fn statx_at(folder: &fs::File, name: &[u8]) -> Option<Stamp> {
    use rustix::fs::{AtFlags, StatxFlags, statx};
    let name = std::ffi::CStr::from_bytes_with_nul(name).ok()?;
    let wanted = StatxFlags::SIZE | StatxFlags::INO | StatxFlags::MTIME | StatxFlags::CTIME;
    let stat = statx(folder, name, AtFlags::empty(), wanted).ok()?;
    let ns = |t: rustix::fs::StatxTimestamp| t.tv_sec * 1_000_000_000 + i64::from(t.tv_nsec);
    Some(Stamp {
        size: stat.stx_size,
        mtime_ns: ns(stat.stx_mtime),
        ctime_ns: ns(stat.stx_ctime),
        ino: stat.stx_ino,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_changes_the_stamp_and_a_rename_changes_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, "one").unwrap();
        let first = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert_eq!(first.size, 3);
        assert_eq!(first, FileStamp::of(&fs::symlink_metadata(&path).unwrap()));

        fs::write(&path, "three").unwrap();
        let written = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert_ne!(first, written);
        assert!(first.same_file(&written));

        let next = dir.path().join("g");
        fs::write(&next, "three").unwrap();
        fs::rename(&next, &path).unwrap();
        let renamed = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert!(!renamed.same_version(&written));
        assert!(!renamed.same_file(&written));
    }

    #[test]
    fn index_words_keep_the_low_32_bits_as_git_does() {
        let stamp = FileStamp {
            size: (1 << 32) + 7,
            mtime: ((1 << 32) + 5, 999_999_999),
            ctime: (-1, 1),
            dev: (1 << 40) + 2,
            ino: (1 << 33) + 3,
            uid: 1000,
            gid: 100,
        };
        assert_eq!(
            stamp.index_words(0o100644),
            [u32::MAX, 1, 5, 999_999_999, 2, 3, 0o100644, 1000, 100, 7]
        );
        assert_eq!(FileStamp::default().index_words(0)[9], 0);
    }
}
