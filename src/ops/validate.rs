//! Validating memory files: every problem in every file, not just the first.

use std::path::Path;

use serde::Serialize;

use crate::domain::memory::{self, Invalid, MemoryFile};
use crate::domain::scope::INDEX_FILE;
use crate::domain::store;

use super::OpError;

/// What `validate` found.
#[derive(Debug, Default, Serialize)]
pub struct Validation {
    /// How many memory files were read.
    pub files_checked: usize,
    /// Every problem found.
    pub problems: Vec<Invalid>,
}

/// Validates files and folders (a folder: every memory file below it, as a scope is read).
/// A path that does not exist is a usage error.
pub fn validate(paths: &[&Path]) -> Result<Validation, OpError> {
    let mut out = Validation::default();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| OpError::io(*path, e))?;
        if meta.is_dir() {
            let prefix = format!("{}/", path.display().to_string().trim_end_matches('/'));
            for rel in store::memory_paths(path)? {
                check_file(&path.join(&rel), &format!("{prefix}{rel}"), &mut out)?;
            }
        } else {
            check_file(path, &path.display().to_string(), &mut out)?;
        }
    }
    Ok(out)
}

fn check_file(path: &Path, shown: &str, out: &mut Validation) -> Result<(), OpError> {
    if path.file_name().is_some_and(|n| n == INDEX_FILE) {
        return Ok(());
    }
    out.files_checked += 1;
    if let Some(problem) = memory::check_file_name(shown) {
        out.problems.push(problem);
    }
    let bytes = store::read_capped(path)?;
    if let Err(problems) = MemoryFile::parse(shown, &bytes) {
        out.problems.extend(problems);
    }
    Ok(())
}
