//! Reading a scope folder's memories from disk and writing its index, refusing any path that
//! would lead outside the scope (a symlinked folder, or a memory symlink pointing elsewhere).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::memory::{self, Invalid, MemoryFile};
use super::memory_index::{self, DatedEntry, IndexLine};
use super::scope::INDEX_FILE;

mod stamp;

use stamp::cores;
pub use stamp::{FileStamp, Names, PartStamps, Stamp, StampRun, stamps};

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
            memory_index::mtime_ms(
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

/// Replaces the file at `path` like [`write_atomic`], the new file taking `permissions` (an
/// existing file's, so that a settings file its owner made private stays private): the
/// temporary file has them before any byte is written to it.
pub fn replace_atomic(
    path: &Path,
    bytes: &[u8],
    permissions: fs::Permissions,
) -> Result<(), StoreError> {
    let tmp = write_temp(path, bytes, true, Some(permissions))?;
    rename_temp(&tmp, path)
}

fn write_through_temp(path: &Path, bytes: &[u8], sync: bool) -> Result<(), StoreError> {
    let tmp = write_temp(path, bytes, sync, None)?;
    rename_temp(&tmp, path)
}

fn rename_temp(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    if let Err(e) = fs::rename(tmp, path) {
        let _ = fs::remove_file(tmp);
        return Err(StoreError::io(path, e));
    }
    Ok(())
}

/// Writes `bytes` to a new temporary file beside `path` (`.<name>.<pid>-<attempt>.tmp`),
/// flushed to the disk when `sync`, with `permissions` when given; returns its path. Nothing
/// is renamed.
fn write_temp(
    path: &Path,
    bytes: &[u8],
    sync: bool,
    permissions: Option<fs::Permissions>,
) -> Result<PathBuf, StoreError> {
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
    let written = permissions
        .map_or(Ok(()), |p| file.set_permissions(p))
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| if sync { file.sync_all() } else { Ok(()) });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io(path, e));
    }
    Ok(tmp)
}

/// Many files written as one batch ([`Batch::write`], then [`Batch::finish`]): each goes to a
/// temporary name first, all reach the disk with one flush of their file system, and only then
/// take their places. Every file is whole at its path, as with [`write_atomic`], at the cost of
/// one flush instead of one per file (most of the time a flood of teammates' memories takes to
/// write). Temporary files not finished are removed when the batch is dropped.
#[derive(Debug, Default)]
pub struct Batch {
    /// Each temporary file and the path it becomes.
    pending: Vec<(PathBuf, PathBuf)>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Writes `bytes` for `path` under a temporary name; `path` itself is unchanged until
    /// [`Batch::finish`].
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let tmp = write_temp(path, bytes, false, None)?;
        self.pending.push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Flushes the file system the batch wrote to (`syncfs`), then renames each file into
    /// place, in the order written.
    pub fn finish(mut self) -> Result<(), StoreError> {
        let pending = std::mem::take(&mut self.pending);
        let Some(first) = pending.first().map(|(tmp, _)| tmp.clone()) else {
            return Ok(());
        };
        let flushed =
            fs::File::open(&first).and_then(|f| rustix::fs::syncfs(&f).map_err(io::Error::from));
        if let Err(e) = flushed {
            self.pending = pending;
            return Err(StoreError::io(&first, e));
        }
        let mut left = pending.into_iter();
        while let Some((tmp, path)) = left.next() {
            if let Err(e) = fs::rename(&tmp, &path) {
                let _ = fs::remove_file(&tmp);
                self.pending = left.collect();
                return Err(StoreError::io(&path, e));
            }
        }
        Ok(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        for (tmp, _) in &self.pending {
            let _ = fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests;
