//! Helpers for the lifecycle tests (baseline, recall, dream, forget, remember, usage).

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{Sandbox, memory_text, write};

/// The private scope's project folder for `repo` (`<base>/projects/<sanitized root>`).
pub fn private_state(sb: &Sandbox, repo: &Path) -> PathBuf {
    let root = fs::canonicalize(repo).unwrap();
    let sanitized: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    sb.base().join("projects").join(sanitized)
}

/// The private memory folder for `repo`.
pub fn private_dir(sb: &Sandbox, repo: &Path) -> PathBuf {
    private_state(sb, repo).join("memory")
}

/// The team memory folder of `repo`.
pub fn team_dir(repo: &Path) -> PathBuf {
    repo.join(".qwen/team-memory")
}

/// Writes a memory file `<dir>/<rel>`.
pub fn put(dir: &Path, rel: &str, name: &str, description: &str, body: &str) {
    let kind = rel.split('/').next().unwrap_or("project");
    let kind = if ["user", "feedback", "project", "reference"].contains(&kind) {
        kind
    } else {
        "project"
    };
    write(&dir.join(rel), &memory_text(name, description, kind, body));
}

/// Seconds since the Unix epoch, now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Every object id in a repository (loose and packed).
pub fn all_objects(sb: &Sandbox, git_dir: &Path) -> Vec<String> {
    let out = sb.git(
        git_dir,
        [
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype)",
        ],
    );
    out.lines().map(str::to_string).collect()
}
