//! Reading a scope folder's memories from disk and writing its index, refusing any path that
//! would lead outside the scope (a symlinked folder, or a memory symlink pointing elsewhere).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::index::{self, IndexEntry};
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
    /// What the index needs of this memory.
    pub fn index_entry(&self) -> IndexEntry {
        IndexEntry {
            path: self.rel.clone(),
            title: self.file.name.clone(),
            description: self.file.description.clone(),
            kind: self.file.kind,
        }
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

/// Lists the memory files below `dir` (relative paths, sorted bytewise): every `*.md` except the
/// top-level `MEMORY.md`, skipping hidden files and folders. A symlink that resolves outside
/// `dir` is refused; one inside is followed for files and skipped for folders.
pub fn memory_paths(dir: &Path) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let root = fs::canonicalize(dir).map_err(|e| StoreError::io(dir, e))?;
    walk(dir, &root, "", &mut out)?;
    out.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(out)
}

fn walk(dir: &Path, root: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), StoreError> {
    let entries = fs::read_dir(dir).map_err(|e| StoreError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            // Listed (under a lossy name) so that it is reported as not a slug, never skipped.
            let lossy = name.to_string_lossy();
            if lossy.ends_with(".md") && entry.file_type().is_ok_and(|t| t.is_file()) {
                out.push(format!("{prefix}{lossy}"));
            }
            continue;
        };
        // Hidden files, and the index itself: a symlinked MEMORY.md is not read, only replaced.
        if name.starts_with('.') || (prefix.is_empty() && name == INDEX_FILE) {
            continue;
        }
        let path = entry.path();
        let rel = format!("{prefix}{name}");
        let file_type = entry.file_type().map_err(|e| StoreError::io(&path, e))?;
        if file_type.is_symlink() {
            let target = fs::canonicalize(&path).map_err(|_| StoreError::UnsafePath {
                path: path.clone(),
                why: "is a symlink that points nowhere".into(),
            })?;
            if !target.starts_with(root) {
                return Err(StoreError::UnsafePath {
                    path,
                    why: format!(
                        "is a symlink that points outside the scope, to {}",
                        target.display()
                    ),
                });
            }
            if target.is_file() && name.ends_with(".md") {
                out.push(rel);
            }
        } else if file_type.is_dir() {
            walk(&path, root, &format!("{rel}/"), out)?;
        } else if name.ends_with(".md") {
            out.push(rel);
        }
    }
    Ok(())
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

/// Reads and validates every memory below `dir`, keeping only what the index needs: a large
/// scope then costs the index line of each memory in memory, not the whole file.
pub fn load_index_entries(
    dir: &Path,
    shown_as: &str,
) -> Result<(Vec<IndexEntry>, Vec<Invalid>), StoreError> {
    load_with(dir, shown_as, |rel, file| IndexEntry {
        path: rel.to_string(),
        title: file.name,
        description: file.description,
        kind: file.kind,
    })
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
    let paths = memory_paths(dir)?;
    // Reading and parsing thousands of files is most of an index rebuild; it splits cleanly
    // over the cores, and the results are joined back in path order.
    // Asking for the core count reads cgroup files: not worth it for one chunk.
    let threads = match paths.len() > MIN_CHUNK {
        true => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
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
    let mut invalid = Vec::new();
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
        let bytes = read_capped(&path)?;
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

/// The index text for a set of memories.
pub fn render_index(memories: &[StoredMemory]) -> String {
    let entries: Vec<IndexEntry> = memories.iter().map(StoredMemory::index_entry).collect();
    index::render(&entries)
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
    write_atomic_with(path, bytes, fsync)?;
    Ok(true)
}

/// Writes through a temp file and a rename, so readers see the old bytes or the new, never half.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_with(path, bytes, true)
}

fn write_atomic_with(path: &Path, bytes: &[u8], fsync: bool) -> Result<(), StoreError> {
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
        if fsync {
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
