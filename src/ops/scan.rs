//! Scanning files and folders for secrets: folders are walked as ripgrep walks them (the
//! `ignore` crate: `.gitignore` honoured, hidden files included, `.git` skipped) and scanned on
//! every core, file arguments one after another, binary files skipped, and the team's
//! `.secretsignore` applied.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::domain::scope::ScopeKind;
use crate::domain::secrets::{self, SecretFinding, SecretsIgnore};

use super::{OpError, Project};

/// A finding and the file it is in.
#[derive(Debug, Clone)]
pub struct FileFinding {
    /// The file, relative to the scanned root (a folder argument), or as given (a file
    /// argument); `/` separators.
    pub path: String,
    /// The file relative to the repository's work tree, when it lies inside it.
    pub repo_path: Option<String>,
    /// What was found.
    pub finding: SecretFinding,
}

/// What a scan found.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// Findings sorted by path, line and column.
    pub findings: Vec<FileFinding>,
    /// Text files scanned (binary files are skipped and not counted).
    pub files_scanned: usize,
    /// Bytes of the text files scanned.
    pub bytes_scanned: u64,
}

/// A scanned file, named as it is shown.
struct Scanned {
    /// Where the file is.
    path: PathBuf,
    /// Its name in the report.
    shown: String,
    /// Its findings and size, or `None` when it is binary; the error when it could not be read.
    found: Result<Option<(Vec<SecretFinding>, u64)>, OpError>,
}

/// The scanned files: those with something to report, and the counts of the others.
#[derive(Default)]
struct Collected {
    /// Files with findings or a read error.
    noted: Vec<Scanned>,
    /// Text files with nothing to report, and their bytes: they only add to the counts, so
    /// a large folder's thousands of them keep no path.
    quiet_files: usize,
    quiet_bytes: u64,
}

impl Collected {
    /// Counts a file with nothing to report (a binary one not even that), or keeps it with
    /// the `(path, shown)` name that `name` gives; whether it was kept.
    fn add(
        &mut self,
        found: Result<Option<(Vec<SecretFinding>, u64)>, OpError>,
        name: impl FnOnce() -> (PathBuf, String),
    ) -> bool {
        match found {
            Ok(Some((findings, len))) if findings.is_empty() => {
                self.quiet_files += 1;
                self.quiet_bytes += len;
                false
            }
            Ok(None) => false,
            found => {
                let (path, shown) = name();
                self.noted.push(Scanned { path, shown, found });
                true
            }
        }
    }

    fn append(&mut self, other: &mut Collected) {
        self.noted.append(&mut other.noted);
        self.quiet_files += std::mem::take(&mut other.quiet_files);
        self.quiet_bytes += std::mem::take(&mut other.quiet_bytes);
    }
}

/// Scans `paths` (relative ones resolved against `cwd`); without paths, the team folder.
pub fn scan(project: &Project, cwd: &Path, paths: &[PathBuf]) -> Result<ScanReport, OpError> {
    let roots: Vec<PathBuf> = if paths.is_empty() {
        let team = project.check_scope_safe(ScopeKind::Team)?;
        if !team.is_dir() {
            return Ok(ScanReport::default());
        }
        vec![team]
    } else {
        paths
            .iter()
            .map(|p| std::path::absolute(cwd.join(p)).unwrap_or_else(|_| cwd.join(p)))
            .collect()
    };
    let ignore = match project.layout.memory_dir(ScopeKind::Team) {
        Some(team) => SecretsIgnore::load(&team)?,
        None => SecretsIgnore::default(),
    };
    let mut scanned = Collected::default();
    for (root, given) in roots
        .iter()
        .zip(paths.iter().map(Some).chain(std::iter::repeat(None)))
    {
        scan_root(root, given.map(PathBuf::as_path), &ignore, &mut scanned)?;
    }
    let workdir = project.repo.as_ref().map(|r| r.workdir.as_path());
    report(scanned, workdir)
}

/// Reads and scans one file, reading into `buffer` (one per thread, reused from file to file):
/// its findings and size, or `None` when it is binary.
fn scan_file(
    path: &Path,
    ignore: &SecretsIgnore,
    buffer: &mut FileBuffer,
) -> Result<Option<(Vec<SecretFinding>, u64)>, OpError> {
    buffer
        .read(path)
        .map_err(|e| OpError::io(path, e))
        .map(|bytes| {
            let len = bytes.len() as u64;
            secrets::scan_bytes(bytes).map(|f| (ignore.filter(f), len))
        })
}

/// A read buffer kept from file to file: a folder of small memories costs no allocation per
/// file, just open, read to the end of the file (`Read::read_to_end`), close.
#[derive(Default)]
struct FileBuffer {
    /// Cleared for each file, never shrunk: it holds the last file read.
    bytes: Vec<u8>,
}

impl FileBuffer {
    /// Room read at first; memories are a few kilobytes.
    const START: usize = 64 * 1024;

    /// The whole content of the file at `path`.
    fn read(&mut self, path: &Path) -> std::io::Result<&[u8]> {
        use std::io::Read;
        let mut file = std::fs::File::open(path)?;
        self.bytes.clear();
        if self.bytes.capacity() < Self::START {
            self.bytes.reserve(Self::START);
        }
        file.read_to_end(&mut self.bytes)?;
        Ok(&self.bytes)
    }
}

/// Scans `root` itself when it is a file, else the files below it. A folder is walked on
/// this thread and its files are scanned on every core at once, handed over in batches.
fn scan_root(
    root: &Path,
    given: Option<&Path>,
    ignore: &SecretsIgnore,
    out: &mut Collected,
) -> Result<(), OpError> {
    let meta = std::fs::metadata(root).map_err(|e| OpError::io(root, e))?;
    if meta.is_file() {
        let shown = given.unwrap_or(root).to_string_lossy().replace('\\', "/");
        let found = scan_file(root, ignore, &mut FileBuffer::default());
        out.add(found, || (root.to_path_buf(), shown));
        return Ok(());
    }
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    // Bounded, so that a walk far ahead of the scan holds some 32,000 paths, not the whole tree.
    let (send, batches) = std::sync::mpsc::sync_channel::<Batch>(QUEUED);
    // Held by the scanning threads alone: should every one of them end early (a panic), the
    // walk's next hand-over fails instead of waiting for ever.
    let batches = Arc::new(Mutex::new(batches));
    let mut walk_errors: Vec<String> = Vec::new();
    let mut found = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let batches = Arc::clone(&batches);
                scope.spawn(move || scan_batches(&batches, root, ignore))
            })
            .collect();
        drop(batches);
        let mut batch = Batch::with_capacity(BATCH);
        for entry in walker {
            match entry {
                Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                    batch.push(entry.into_path());
                    let full = batch.len() == BATCH;
                    if full
                        && send
                            .send(std::mem::replace(&mut batch, Batch::with_capacity(BATCH)))
                            .is_err()
                    {
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => walk_errors.push(e.to_string()),
            }
        }
        // An error here or above means no scanning thread is left; joining them says why.
        let _ = send.send(batch);
        drop(send);
        let mut found = Collected::default();
        for worker in workers {
            match worker.join() {
                Ok(mut theirs) => found.append(&mut theirs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        found
    });
    if let Some(first) = walk_errors.into_iter().min() {
        return Err(OpError::Usage(format!(
            "cannot walk {}: {first}",
            root.display()
        )));
    }
    // Files without findings or errors only add to the counts (their order never shows);
    // the others are reported by name.
    found.noted.sort_by(|a, b| a.shown.cmp(&b.shown));
    out.append(&mut found);
    Ok(())
}

/// Batches the walk may have handed over and no thread taken yet; the walk waits beyond. Deep
/// enough that the walk seldom waits: at 64 it did, and a folder scan took some 6% longer.
const QUEUED: usize = 1024;

/// Files handed to a scanning thread at once: few enough that the threads finish together,
/// enough that taking them costs nothing beside scanning them.
const BATCH: usize = 32;

/// Paths handed to a scanning thread at once.
type Batch = Vec<PathBuf>;

/// One scanning thread: scans the batches of files below `root` it takes from `batches`, until
/// the walk has ended and none is left.
fn scan_batches(
    batches: &Mutex<std::sync::mpsc::Receiver<Batch>>,
    root: &Path,
    ignore: &SecretsIgnore,
) -> Collected {
    let mut mine = Collected::default();
    let mut buffer = FileBuffer::default();
    loop {
        let taken = lock(batches).recv();
        let Ok(batch) = taken else { break };
        for path in &batch {
            let found = scan_file(path, ignore, &mut buffer);
            // Only a file with something to report is named, and sorted by name.
            mine.add(found, || {
                let shown =
                    relative(path, root).unwrap_or_else(|| path.to_string_lossy().into_owned());
                (path.to_path_buf(), shown)
            });
        }
    }
    mine
}

/// What is behind `mutex`, even if a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// `path` relative to `base` with `/` separators, when it lies below it.
fn relative(path: &Path, base: &Path) -> Option<String> {
    // The common case as plain strings: comparing path components costs more than scanning
    // a small memory.
    if let (Some(p), Some(b)) = (path.to_str(), base.to_str()) {
        if let Some(rest) = p.strip_prefix(b.trim_end_matches('/')) {
            if let Some(rest) = rest.strip_prefix('/') {
                if !rest.contains("//") && !rest.split('/').any(|c| c == "." || c == "..") {
                    return Some(rest.to_string());
                }
            }
        }
    }
    let rel = path.strip_prefix(base).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Below this many bytes in all, work runs on the calling thread: starting threads costs more
/// than scanning a few small memories (a single file, a pre-commit check of a few files).
pub(crate) const PARALLEL_FROM: usize = 64 * 1024;

/// `work(i)` for every `i` in `0..count`, results in order: one thread per core, each taking
/// the next item in turn (items differ in size, so a fixed split would leave a core idle).
/// Runs on the calling thread for one item or when `bytes` (the work's total size, or
/// `usize::MAX` when unknown) is below [`PARALLEL_FROM`].
pub(crate) fn in_parallel<R: Send>(
    count: usize,
    bytes: usize,
    work: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(count);
    if workers <= 1 || bytes < PARALLEL_FROM {
        return (0..count).map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(count));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    mine.push((i, work(i)));
                }
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(mine);
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The report of the scanned files, in their order; the first read error (in that order)
/// wins.
fn report(scanned: Collected, workdir: Option<&Path>) -> Result<ScanReport, OpError> {
    let mut report = ScanReport {
        files_scanned: scanned.quiet_files,
        bytes_scanned: scanned.quiet_bytes,
        ..ScanReport::default()
    };
    for file in scanned.noted {
        let Some((findings, len)) = file.found? else {
            continue;
        };
        report.files_scanned += 1;
        report.bytes_scanned += len;
        if findings.is_empty() {
            continue;
        }
        let repo_path = workdir.and_then(|w| relative(&file.path, w));
        report
            .findings
            .extend(findings.into_iter().map(|finding| FileFinding {
                path: file.shown.clone(),
                repo_path: repo_path.clone(),
                finding,
            }));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's open descriptors that name something below `dir`.
    #[cfg(target_os = "linux")]
    fn open_below(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter(|target| target.starts_with(dir))
            .collect()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_folder_scan_leaves_no_file_or_folder_of_it_open() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["a", "b/c", "d"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
            for i in 0..80 {
                let body = format!("# note {i}\nAKIA{:016}\n", i);
                std::fs::write(root.join(sub).join(format!("{i}.md")), body).unwrap();
            }
        }
        let ignore = SecretsIgnore::default();
        // Scanned again and again, as a long-running server would: nothing may pile up.
        for _ in 0..3 {
            let mut out = Collected::default();
            scan_root(&root, None, &ignore, &mut out).unwrap();
            assert_eq!(out.quiet_files + out.noted.len(), 240);
        }
        assert_eq!(open_below(&root), Vec::<PathBuf>::new());
    }

    /// Files of the read buffer's size and around it, each with a secret as its last line,
    /// are read whole, one after another into the same buffer.
    #[test]
    fn files_around_the_read_buffers_size_are_read_to_their_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let secret = "AKIAZ7VQ3HRT5XWNPL2K\n";
        let sizes = [
            64,
            4096,
            FileBuffer::START - 1,
            FileBuffer::START,
            FileBuffer::START + 1,
        ];
        let sizes = sizes
            .into_iter()
            .chain([3 * FileBuffer::START + 7, 1 << 20, 64]);
        for size in sizes.clone() {
            let pad = size - secret.len();
            let body = format!("{}\n{secret}", "x".repeat(pad - 1));
            assert_eq!(body.len(), size);
            std::fs::write(root.join(format!("{size}.md")), body).unwrap();
        }
        let ignore = SecretsIgnore::default();
        let mut buffer = FileBuffer::default();
        for size in sizes {
            let path = root.join(format!("{size}.md"));
            let (findings, len) = scan_file(&path, &ignore, &mut buffer).unwrap().unwrap();
            assert_eq!(len as usize, size, "{size} bytes");
            assert_eq!(findings.len(), 1, "{size} bytes");
        }
        // And as a folder.
        let mut out = Collected::default();
        scan_root(&root, None, &ignore, &mut out).unwrap();
        assert_eq!(out.noted.len(), 7);
        assert!(
            out.noted
                .iter()
                .all(|n| matches!(&n.found, Ok(Some((f, _))) if f.len() == 1))
        );
    }
}
