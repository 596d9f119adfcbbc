//! The merge driver that keeps the team `MEMORY.md` from ever conflicting in a rebase, merge or
//! cherry-pick: one line in the repository's local attributes file
//! (`$GIT_COMMON_DIR/info/attributes`, never committed, shared by linked worktrees) naming the
//! driver, and its command in the repository's own `.git/config`.
//!
//! Both are local on purpose: the user's own `install-hooks` writes them, no file of the work
//! tree changes, and nothing a teammate commits can name a program to run — git reads driver
//! commands only from config, and a committed `.gitattributes` line naming a driver that is not
//! configured falls back to git's own text merge. The local attributes file also wins over any
//! committed `.gitattributes` line for the same path.

use std::path::{Path, PathBuf};

use super::GitError;

/// The driver's name in `merge=<name>` and `merge.<name>.driver`.
pub const DRIVER: &str = "teammem-index";

/// The attributes line (with the comment line before it) that names the driver.
const ATTRIBUTE_LINE: &str = "/.qwen/team-memory/MEMORY.md merge=teammem-index";

/// The comment line written above [`ATTRIBUTE_LINE`].
const ATTRIBUTE_COMMENT: &str = "# teammem: the team MEMORY.md is regenerated, never merged line by line (teammem install-hooks)";

/// What installing or removing the driver did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverChange {
    /// The attributes line or the config was written now.
    Written,
    /// Both were already as they should be.
    Unchanged,
    /// Both were removed.
    Removed,
    /// Nothing of the driver was there.
    Absent,
}

/// The local attributes file git reads, in the common git folder `common_dir`.
pub fn attributes_file(common_dir: &Path) -> PathBuf {
    common_dir.join("info").join("attributes")
}

/// The driver command: `binary merge-index %O %A %B %P`; when the binary is gone, git's own
/// text merge (`git merge-file`), so a merge behaves as it would without the driver.
pub fn driver_command(binary: &Path) -> String {
    let binary = shell_quote(&binary.display().to_string());
    format!("{binary} merge-index %O %A %B %P || git merge-file -L ours -L base -L theirs %A %O %B")
}

/// Sets up the driver for the team `MEMORY.md` with `binary` in the repository whose common
/// git folder is `common_dir`. Idempotent.
pub fn install(common_dir: &Path, binary: &Path) -> Result<DriverChange, GitError> {
    let path = attributes_file(common_dir);
    let text = read_or_empty(&path)?;
    let mut written = false;
    if !text.lines().any(|l| l.trim() == ATTRIBUTE_LINE) {
        let mut new = text.clone();
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        new.push_str(ATTRIBUTE_COMMENT);
        new.push('\n');
        new.push_str(ATTRIBUTE_LINE);
        new.push('\n');
        write_file(&path, &new)?;
        written = true;
    }
    let mut config = local_config(common_dir)?;
    let command = driver_command(binary);
    let context = "writing the merge driver to .git/config";
    let settings = [
        (
            format!("merge.{DRIVER}.name"),
            "teammem: regenerate the team memory index".to_string(),
        ),
        (format!("merge.{DRIVER}.driver"), command),
    ];
    for (key, value) in settings {
        if config.get_string(&key).ok().as_deref() != Some(value.as_str()) {
            config
                .set_str(&key, &value)
                .map_err(|e| GitError::git(context, e))?;
            written = true;
        }
    }
    Ok(if written {
        DriverChange::Written
    } else {
        DriverChange::Unchanged
    })
}

/// Removes the attributes line and the driver's config.
pub fn uninstall(common_dir: &Path) -> Result<DriverChange, GitError> {
    let path = attributes_file(common_dir);
    let text = read_or_empty(&path)?;
    let mut removed = false;
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| l.trim() != ATTRIBUTE_LINE && l.trim() != ATTRIBUTE_COMMENT)
        .collect();
    if kept.len() != text.lines().count() {
        let mut new = kept.join("\n");
        if !new.is_empty() {
            new.push('\n');
        }
        write_file(&path, &new)?;
        removed = true;
    }
    let mut config = local_config(common_dir)?;
    for key in [
        format!("merge.{DRIVER}.name"),
        format!("merge.{DRIVER}.driver"),
    ] {
        if config.get_string(&key).is_ok() {
            config
                .remove(&key)
                .map_err(|e| GitError::git("removing the merge driver from .git/config", e))?;
            removed = true;
        }
    }
    Ok(if removed {
        DriverChange::Removed
    } else {
        DriverChange::Absent
    })
}

/// The repository's own config file (`.git/config`), not the user's or the system's: opened
/// as a file, so a repository libgit2 cannot open (reftable, SHA-256) gets the driver too.
fn local_config(common_dir: &Path) -> Result<git2::Config, GitError> {
    git2::Config::open(&common_dir.join("config"))
        .map_err(|e| GitError::git("opening .git/config", e))
}

fn read_or_empty(path: &Path) -> Result<String, GitError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(GitError::io(path, e)),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), GitError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| GitError::io(parent, e))?;
    }
    crate::domain::store::write_atomic(path, text.as_bytes())
        .map_err(|e| GitError::io(path, std::io::Error::other(e.to_string())))
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
