//! Scanning files and folders for secrets: folders are walked as ripgrep walks them (the
//! `ignore` crate: `.gitignore` honoured, hidden files included, `.git` skipped) on every core,
//! each walker thread reading and scanning the files it finds; binary files are skipped and
//! the team's `.secretsignore` applied.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::domain::scope::ScopeKind;
use crate::domain::secrets::{self, Finding, SecretsIgnore};

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
    pub finding: Finding,
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
    let workdir = project.repo.as_ref().map(|r| r.workdir.as_path());
    let mut report = ScanReport::default();
    for (root, given) in roots
        .iter()
        .zip(paths.iter().map(Some).chain(std::iter::repeat(None)))
    {
        let scanned = scan_root(root, given.map(PathBuf::as_path), &ignore)?;
        add_to_report(&mut report, scanned, workdir);
    }
    Ok(report)
}

/// One scanned file: how it is shown, where it is, its findings and size (no findings and no
/// size when it is binary).
struct ScannedFile {
    shown: String,
    path: PathBuf,
    found: Option<(Vec<Finding>, u64)>,
}

/// Scans `root`: the file itself, or every file below the folder, walked and scanned on every
/// core (reading and scanning happen in the walker's threads, so a large folder keeps both
/// cores busy from the first file). Files come back sorted by shown path.
fn scan_root(
    root: &Path,
    given: Option<&Path>,
    ignore: &SecretsIgnore,
) -> Result<Vec<ScannedFile>, OpError> {
    let meta = std::fs::metadata(root).map_err(|e| OpError::io(root, e))?;
    if meta.is_file() {
        let shown = given.unwrap_or(root).to_string_lossy().replace('\\', "/");
        let found = scan_file(root, ignore)?;
        return Ok(vec![ScannedFile {
            shown,
            path: root.to_path_buf(),
            found,
        }]);
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .threads(threads)
        .filter_entry(|e| e.file_name() != ".git")
        .build_parallel();
    let files: Mutex<Vec<ScannedFile>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<OpError>> = Mutex::new(None);
    walker.run(|| {
        let files = &files;
        let failure = &failure;
        let mut mine = Collector {
            files,
            scanned: Vec::new(),
        };
        Box::new(move |entry| {
            let fail = |err: OpError| {
                failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(err);
                ignore::WalkState::Quit
            };
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    return fail(OpError::Usage(format!(
                        "cannot walk {}: {e}",
                        root.display()
                    )));
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            let path = entry.into_path();
            match scan_file(&path, ignore) {
                Ok(found) => {
                    let shown = relative(&path, root)
                        .unwrap_or_else(|| path.to_string_lossy().into_owned());
                    mine.scanned.push(ScannedFile { shown, path, found });
                    ignore::WalkState::Continue
                }
                Err(err) => fail(err),
            }
        })
    });
    if let Some(err) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(err);
    }
    let mut files = files.into_inner().unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| a.shown.cmp(&b.shown));
    Ok(files)
}

/// One walker thread's files, handed over when the thread's visitor is dropped (one lock per
/// thread, not per file).
struct Collector<'a> {
    files: &'a Mutex<Vec<ScannedFile>>,
    scanned: Vec<ScannedFile>,
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        self.files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .append(&mut self.scanned);
    }
}

/// Reads and scans one file: its findings not accepted in `.secretsignore` and its size, or
/// `None` when it is binary.
fn scan_file(path: &Path, ignore: &SecretsIgnore) -> Result<Option<(Vec<Finding>, u64)>, OpError> {
    let bytes = std::fs::read(path).map_err(|e| OpError::io(path, e))?;
    let len = bytes.len() as u64;
    Ok(secrets::scan_bytes(&bytes).map(|found| (ignore.filter(found), len)))
}

/// Adds one root's scanned files to the report, in order.
fn add_to_report(report: &mut ScanReport, files: Vec<ScannedFile>, workdir: Option<&Path>) {
    for file in files {
        let Some((findings, len)) = file.found else {
            continue;
        };
        report.files_scanned += 1;
        report.bytes_scanned += len;
        let repo_path = workdir.and_then(|w| relative(&file.path, w));
        report
            .findings
            .extend(findings.into_iter().map(|finding| FileFinding {
                path: file.shown.clone(),
                repo_path: repo_path.clone(),
                finding,
            }));
    }
}

/// `path` relative to `base` with `/` separators, when it lies below it.
fn relative(path: &Path, base: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}
