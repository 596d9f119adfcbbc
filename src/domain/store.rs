//! Reading a scope folder's memories from disk and writing its index, refusing any path that
//! would lead outside the scope (a symlinked folder, or a memory symlink pointing elsewhere).

use std::fs;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::index::{self, DatedEntry, IndexLine};
use super::memory::{self, Invalid, MemoryFile};
use super::scope::INDEX_FILE;

/// Errors from reading or writing a scope folder.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// A path leads outside its scope through a symlink.
    #[error("unsafe-path: {} {why} — replace the symlink with a real folder or file inside the scope", path.display())]
    UnsafePath {
        /// The offending path.
        path: PathBuf,
        /// Why it is refused.
        why: String,
    },
}

impl StoreError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A valid memory read from a scope folder.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMemory {
    /// Path relative to the scope folder, with `/` separators.
    pub rel: String,
    /// The parsed file.
    pub file: MemoryFile,
}

impl StoredMemory {
    /// What the index needs of this memory; `None` when Qwen Code's index leaves it out.
    pub fn index_entry(&self) -> Option<IndexLine> {
        self.file.index_entry(&self.rel)
    }
}

/// Everything found in a scope folder.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Valid memories, sorted by path.
    pub memories: Vec<StoredMemory>,
    /// Problems in files that are not valid memories (they stay out of the index).
    pub invalid: Vec<Invalid>,
}

/// Refuses a scope folder that is, or sits below, a symlink between `anchor` and `dir`
/// (for team memory: `.qwen` and `.qwen/team-memory` below the git root).
pub fn check_no_symlinked_parents(anchor: &Path, dir: &Path) -> Result<(), StoreError> {
    let Ok(rel) = dir.strip_prefix(anchor) else {
        return check_not_symlink(dir);
    };
    let mut at = anchor.to_path_buf();
    for part in rel.components() {
        at.push(part);
        check_not_symlink(&at)?;
    }
    Ok(())
}

fn check_not_symlink(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::UnsafePath {
            path: path.to_path_buf(),
            why: "is a symlink; memory folders must be real folders".into(),
        }),
        _ => Ok(()),
    }
}

/// Lists the memory files below `dir` (relative paths, sorted bytewise): those
/// [`memory::is_memory_path`] calls memories, as Qwen Code lists them. A symlink that resolves outside
/// `dir` is refused; one inside is followed for files and skipped for folders. For a writer
/// (sync, a baseline, a rewrite), which must not publish a folder holding a bad entry; a
/// reader withholds only that entry ([`memory_listing`]).
pub fn memory_paths(dir: &Path) -> Result<Vec<String>, StoreError> {
    let listing = memory_listing(dir)?;
    match listing.withheld.into_iter().next() {
        Some(bad) => Err(StoreError::UnsafePath {
            path: dir.join(&bad.rel),
            why: bad.why,
        }),
        None => Ok(listing.paths),
    }
}

/// An entry of a scope folder left out of a listing, and why: a symlink that points nowhere
/// or outside the scope, or a folder that cannot be read. It withholds only itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WithheldEntry {
    /// Path relative to the scope folder.
    pub rel: String,
    /// The rule it breaks (`path-symlink`, or `memory-invalid` for a folder not read).
    pub rule: &'static str,
    /// Why, in words (`is a symlink that points outside the scope, to /etc/passwd`).
    pub why: String,
}

impl WithheldEntry {
    /// The entry as a problem of its scope, named as `shown_as` + its path, with the fix.
    pub fn invalid(&self, shown_as: &str) -> Invalid {
        let fix = if self.rule == super::check::PATH_SYMLINK {
            "only this entry is left out; replace the symlink with the file itself, or delete it"
        } else {
            "only this entry is left out; make it readable (`chmod u+rx`), or delete it"
        };
        Invalid::new(
            &format!("{shown_as}{}", self.rel),
            1,
            1,
            format!("withheld: it {}", self.why),
            fix,
        )
    }
}

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
    /// The stamp of a stat result.
    #[cfg(unix)]
    pub fn of(meta: &fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
        }
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
            out.push(statx_at(folder, with_nul));
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

/// The memory files of a scope folder, and the stamp of every folder listed to find them.
#[derive(Debug, Default, Clone)]
pub struct Listing {
    /// Memory files, relative to the scope folder, sorted bytewise (as [`memory_paths`]).
    pub paths: Vec<String>,
    /// Each folder read (relative, `""` for the scope folder itself), with its stamp taken
    /// before it was read: while every stamp stays the same, so do the names in it.
    pub folders: Vec<(String, Stamp)>,
    /// Whether any entry was a symlink (whose target can change without its folder changing).
    pub symlinks: bool,
    /// Entries left out, each withholding only itself (see [`WithheldEntry`]).
    pub withheld: Vec<WithheldEntry>,
}

/// Lists the memory files below `dir`, as [`memory_paths`], with the stamps of its folders;
/// a bad entry below `dir` is left out and named in [`Listing::withheld`], never an error.
pub fn memory_listing(dir: &Path) -> Result<Listing, StoreError> {
    let mut out = Listing::default();
    if !dir.exists() {
        return Ok(out);
    }
    let root = fs::canonicalize(dir).map_err(|e| StoreError::io(dir, e))?;
    walk(dir, &root, "", &mut out)?;
    // Bytewise (`str`'s order); the paths are distinct, so an unstable sort gives the same.
    out.paths.sort_unstable();
    Ok(out)
}

fn walk(dir: &Path, root: &Path, prefix: &str, listing: &mut Listing) -> Result<(), StoreError> {
    // Stamped before it is read: a name added after the stamp changes the folder's times.
    let stamp = fs::metadata(dir).map_err(|e| StoreError::io(dir, e))?;
    listing
        .folders
        .push((prefix.trim_end_matches('/').to_string(), Stamp::of(&stamp)));
    let entries = fs::read_dir(dir).map_err(|e| StoreError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            // Listed (under a lossy name) so that it is reported as not a slug, never skipped.
            let lossy = name.to_string_lossy();
            let rel = format!("{prefix}{lossy}");
            if memory::is_memory_path(&rel) && entry.file_type().is_ok_and(|t| t.is_file()) {
                listing.paths.push(rel);
            }
            continue;
        };
        // Git's own folder is not walked, and an index is never read, whatever it is (a
        // symlinked MEMORY.md is only replaced); `memory::is_memory_path` decides the rest.
        if name == INDEX_FILE || name == ".git" {
            continue;
        }
        let file_type = entry
            .file_type()
            .map_err(|e| StoreError::io(&entry.path(), e))?;
        // No folder above is `.git` (skipped just above), so the name alone decides whether
        // a file is a memory: most entries are, and cost no more than their one path.
        if !file_type.is_symlink() && !file_type.is_dir() {
            if memory::is_memory_path(name) {
                let mut rel = String::with_capacity(prefix.len() + name.len());
                rel.push_str(prefix);
                rel.push_str(name);
                listing.paths.push(rel);
            }
            continue;
        }
        let path = entry.path();
        let rel = format!("{prefix}{name}");
        if file_type.is_symlink() {
            listing.symlinks = true;
            let Ok(target) = fs::canonicalize(&path) else {
                listing.withheld.push(WithheldEntry {
                    rel,
                    rule: super::check::PATH_SYMLINK,
                    why: "is a symlink that points nowhere".into(),
                });
                continue;
            };
            if !target.starts_with(root) {
                listing.withheld.push(WithheldEntry {
                    rel,
                    rule: super::check::PATH_SYMLINK,
                    why: format!(
                        "is a symlink that points outside the scope, to {}",
                        target.display()
                    ),
                });
                continue;
            }
            if target.is_file() && memory::is_memory_path(&rel) {
                listing.paths.push(rel);
            }
        } else if let Err(err) = walk(&path, root, &format!("{rel}/"), listing) {
            // A folder that cannot be read withholds what is in it, not its siblings.
            listing.withheld.push(WithheldEntry {
                rel,
                rule: super::check::MEMORY_INVALID,
                why: format!("cannot be read ({})", io_reason(&err)),
            });
        }
    }
    Ok(())
}

/// What the OS said, without the path (the caller names it).
fn io_reason(err: &StoreError) -> String {
    match err {
        StoreError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// Reads and validates every memory below `dir`. `shown_as` prefixes paths in error messages
/// (for example `.qwen/team-memory/`).
pub fn load(dir: &Path, shown_as: &str) -> Result<Loaded, StoreError> {
    let (memories, invalid) = load_with(dir, shown_as, |rel, file| StoredMemory {
        rel: rel.to_string(),
        file,
    })?;
    Ok(Loaded { memories, invalid })
}

/// The index entries of every memory below `dir`, read as Qwen Code reads them for its index
/// (a file teammem refuses — over its size limit, not UTF-8 — is still listed when Qwen Code
/// lists it), with the problems of the files left out. Only each file's index line is kept.
pub fn load_index_entries(
    dir: &Path,
    shown_as: &str,
) -> Result<(Vec<IndexLine>, Vec<Invalid>), StoreError> {
    let (dated, invalid) = load_dated_entries(dir, shown_as)?;
    Ok((dated.into_iter().map(|d| d.entry).collect(), invalid))
}

/// [`load_index_entries`] with each file's modification time, which orders the private and
/// user indexes.
pub fn load_dated_entries(
    dir: &Path,
    shown_as: &str,
) -> Result<(Vec<DatedEntry>, Vec<Invalid>), StoreError> {
    let (kept, invalid) = load_with(dir, shown_as, |rel, file| file.index_entry(rel))?;
    let mut entries: Vec<DatedEntry> = kept.into_iter().flatten().map(|e| dated(dir, e)).collect();
    let mut problems = Vec::new();
    for problem in invalid {
        let rel = problem.path.strip_prefix(shown_as).unwrap_or(&problem.path);
        let fields = match memory::qwen_reads_path(rel) {
            true => index_fields_of_refused(&dir.join(rel)),
            false => None,
        };
        match fields {
            Some((title, description, kind)) => entries.push(dated(
                dir,
                IndexLine {
                    path: rel.to_string(),
                    title,
                    description,
                    kind,
                },
            )),
            None => problems.push(problem),
        }
    }
    Ok((entries, problems))
}

/// The biggest file read for Qwen Code's view of a file teammem refuses.
const MAX_INDEX_READ: u64 = 16 * 1024 * 1024;

/// Qwen Code's index fields of a file teammem refused (it reads any size, and bad UTF-8 as
/// U+FFFD); `None` when Qwen Code leaves it out too.
fn index_fields_of_refused(path: &Path) -> Option<(String, String, super::memory::MemoryType)> {
    use std::io::Read;
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_INDEX_READ {
        return None;
    }
    let mut bytes = Vec::new();
    fs::File::open(path)
        .ok()?
        .take(MAX_INDEX_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    memory::qwen_index_fields(&String::from_utf8_lossy(&bytes))
}

fn dated(dir: &Path, entry: IndexLine) -> DatedEntry {
    let mtime_ms = fs::metadata(dir.join(&entry.path))
        .map(|m| {
            let stamp = Stamp::of(&m);
            index::mtime_ms(
                stamp.mtime_ns.div_euclid(1_000_000_000),
                stamp.mtime_ns.rem_euclid(1_000_000_000),
            )
        })
        .unwrap_or(0.0);
    DatedEntry { entry, mtime_ms }
}

/// What a load keeps of the valid memories, and the problems of the others.
type Kept<T> = (Vec<T>, Vec<Invalid>);

/// The fewest files a reader thread gets: below that, threads cost more than they save.
const MIN_CHUNK: usize = 256;

/// Reads and validates every memory below `dir` in path order, turning each valid one into a
/// `T` as soon as it is parsed.
fn load_with<T: Send>(
    dir: &Path,
    shown_as: &str,
    keep: impl Fn(&str, MemoryFile) -> T + Sync,
) -> Result<Kept<T>, StoreError> {
    let listing = memory_listing(dir)?;
    let paths = listing.paths;
    // Reading and parsing thousands of files is most of an index rebuild; it splits cleanly
    // over the cores, and the results are joined back in path order.
    // Asking for the core count reads cgroup files: not worth it for one chunk.
    let threads = match paths.len() > MIN_CHUNK {
        true => cores().min(8),
        false => 1,
    };
    let chunk = paths.len().div_ceil(threads).max(MIN_CHUNK);
    let keep = &keep;
    let parts: Vec<Result<Kept<T>, StoreError>> = if paths.len() <= chunk {
        vec![load_paths(dir, shown_as, &paths, keep)]
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = paths
                .chunks(chunk)
                .map(|part| scope.spawn(move || load_paths(dir, shown_as, part, keep)))
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Err(StoreError::io(
                            dir,
                            io::Error::other("a reader thread stopped"),
                        ))
                    })
                })
                .collect()
        })
    };
    let mut kept = Vec::with_capacity(paths.len());
    let mut invalid: Vec<Invalid> = listing
        .withheld
        .iter()
        .map(|bad| bad.invalid(shown_as))
        .collect();
    for part in parts {
        let (k, i) = part?;
        kept.extend(k);
        invalid.extend(i);
    }
    Ok((kept, invalid))
}

fn load_paths<T>(
    dir: &Path,
    shown_as: &str,
    paths: &[String],
    keep: &impl Fn(&str, MemoryFile) -> T,
) -> Result<Kept<T>, StoreError> {
    let mut kept = Vec::with_capacity(paths.len());
    let mut invalid = Vec::new();
    for rel in paths {
        let path = dir.join(rel);
        let shown = format!("{shown_as}{rel}");
        if let Some(bad_name) = memory::check_file_name(&shown) {
            invalid.push(bad_name);
            continue;
        }
        // A file that cannot be read withholds only itself.
        let bytes = match read_capped(&path) {
            Ok(bytes) => bytes,
            Err(err) => {
                invalid.push(Invalid::new(
                    &shown,
                    1,
                    1,
                    format!("withheld: it cannot be read ({})", io_reason(&err)),
                    "only this file is left out; make it readable (`chmod u+r`), or delete it",
                ));
                continue;
            }
        };
        match MemoryFile::parse_in(&shown, rel, &bytes) {
            Ok(file) => kept.push(keep(rel, file)),
            Err(problems) => invalid.extend(problems),
        }
    }
    Ok((kept, invalid))
}

/// Reads a file, but never more than one byte past the memory size limit, so a huge file costs
/// no more than a small one before it is refused.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, StoreError> {
    use std::io::Read;
    let mut file = fs::File::open(path).map_err(|e| StoreError::io(path, e))?;
    let limit = memory::MAX_FILE_BYTES as u64 + 1;
    let size = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::new();
    if size > 0 && size < limit {
        // The common case, read in one call: the length is known, so no extra read is spent
        // finding the end (a file still being written is read up to the length it had).
        bytes.resize(size as usize, 0);
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(StoreError::io(path, e)),
            }
        }
        bytes.truncate(filled);
        return Ok(bytes);
    }
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::io(path, e))?;
    Ok(bytes)
}

/// The index lines of a set of memories read from `dir` (those Qwen Code's index lists), each
/// with the file's modification time there, which orders a private or user index.
pub fn dated_entries(dir: &Path, memories: &[StoredMemory]) -> Vec<DatedEntry> {
    memories
        .iter()
        .filter_map(StoredMemory::index_entry)
        .map(|e| dated(dir, e))
        .collect()
}

/// Writes `MEMORY.md` in `dir` when its bytes differ. Returns whether it wrote.
pub fn write_index(dir: &Path, text: &str) -> Result<bool, StoreError> {
    write_if_changed(&dir.join(INDEX_FILE), text.as_bytes())
}

/// [`write_index`] without waiting for the disk to have the bytes (no fsync), for a caller that
/// regenerates the index on every run anyway, so a crash right after costs nothing: sync. The
/// fsync is most of the time a sync takes to commit one memory on a busy disk.
pub fn write_index_unsynced(dir: &Path, text: &str) -> Result<bool, StoreError> {
    write_if_changed_with(&dir.join(INDEX_FILE), text.as_bytes(), false)
}

/// Writes `bytes` to `path` atomically (temp file in the same folder, then rename), and only
/// when they differ from what is there. A symlink at `path` is replaced by a regular file,
/// never written through.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, StoreError> {
    write_if_changed_with(path, bytes, true)
}

fn write_if_changed_with(path: &Path, bytes: &[u8], fsync: bool) -> Result<bool, StoreError> {
    let meta = fs::symlink_metadata(path).ok();
    if let Some(meta) = &meta {
        if meta.is_file() && fs::read(path).map(|old| old == bytes).unwrap_or(false) {
            return Ok(false);
        }
    }
    write_through_temp(path, bytes, fsync)?;
    Ok(true)
}

/// Writes through a temp file and a rename, so readers see the old bytes or the new, never half.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_through_temp(path, bytes, true)
}

/// Writes a cache file like [`write_atomic`], without waiting for the disk: concurrent
/// readers still see the old bytes or the new, but a machine crash may leave a torn file, so
/// readers of a cache must check it (the recall index carries its length and a checksum).
pub fn write_cache(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_through_temp(path, bytes, false)
}

fn write_through_temp(path: &Path, bytes: &[u8], sync: bool) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `create_new` never follows a symlink planted at the temp name; a leftover from a killed run
    // just moves us on to the next name.
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.{}-{attempt}.tmp", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(StoreError::io(&tmp, e)),
        }
    };
    let result = (|| {
        file.write_all(bytes)?;
        if sync {
            file.sync_all()?;
        }
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_index_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_index(dir.path(), "- a\n").unwrap());
        assert!(!write_index(dir.path(), "- a\n").unwrap());
        assert!(write_index(dir.path(), "- b\n").unwrap());
        assert_eq!(
            fs::read_to_string(dir.path().join(INDEX_FILE)).unwrap(),
            "- b\n"
        );
    }
}
