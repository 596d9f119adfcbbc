//! Validating memory files: every problem in every file, not just the first — what makes a
//! file unreadable, and the style lint (slug names, quoting, folder = type, one-line values,
//! Qwen Code's view of the file), each with its fix.

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
/// Relative paths are taken from `cwd` and shown as given. A path that does not exist is a
/// usage error.
pub fn validate(cwd: &Path, paths: &[&Path]) -> Result<Validation, OpError> {
    let mut out = Validation::default();
    for given in paths {
        let path = cwd.join(given);
        let meta = std::fs::metadata(&path).map_err(|e| OpError::io(&path, e))?;
        if meta.is_dir() {
            let prefix = format!("{}/", given.display().to_string().trim_end_matches('/'));
            // A bad entry (a symlink out of the folder) is a problem of its own; the rest
            // is validated.
            let listing = store::memory_listing(&path)?;
            out.problems
                .extend(listing.withheld.iter().map(|bad| bad.invalid(&prefix)));
            for rel in listing.paths {
                check_file(&path.join(&rel), &format!("{prefix}{rel}"), &rel, &mut out)?;
            }
        } else {
            let shown = given.display().to_string();
            check_file(&path, &shown, &shown, &mut out)?;
        }
    }
    Ok(out)
}

/// Checks one file; `rel` is its path below the folder given (or as given, for a file), which
/// decides whether its folder is named after a type.
fn check_file(path: &Path, shown: &str, rel: &str, out: &mut Validation) -> Result<(), OpError> {
    if path.file_name().is_some_and(|n| n == INDEX_FILE) {
        return Ok(());
    }
    out.files_checked += 1;
    let bad_name = memory::check_file_name(shown);
    let bytes = match (store::read_capped(path), bad_name) {
        (Ok(bytes), bad_name) => {
            out.problems.extend(bad_name);
            bytes
        }
        // A name that is not valid UTF-8 was listed under a lossy spelling that cannot be
        // opened; its name is the problem to report.
        (Err(_), Some(bad_name)) => {
            out.problems.push(bad_name);
            return Ok(());
        }
        // A file that cannot be read is a problem of its own; the others are validated.
        (Err(e), None) => {
            let reason = match e {
                store::StoreError::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            out.problems.push(memory::Invalid::new(
                shown,
                1,
                1,
                format!("cannot be read ({reason})"),
                "make it readable (`chmod u+r`), or delete it",
            ));
            return Ok(());
        }
    };
    match MemoryFile::parse_in(shown, rel, &bytes) {
        Ok(file) => out.problems.extend(file.lints().iter().cloned()),
        Err(problems) => {
            // A file that cannot be read still gets its name checked.
            out.problems.extend(memory::lint_file_name(shown));
            out.problems.extend(problems);
        }
    }
    Ok(())
}
