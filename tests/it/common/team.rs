//! Helpers for tests of the team memory in git: writing memories, regenerating the index with
//! the real binary, and committing as a given author at a given time.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{Sandbox, memory_text, write};

/// The team folder, relative to the repository root.
pub const TEAM: &str = ".qwen/team-memory";

/// Writes a memory `<rel>` in the team folder.
pub fn put(repo: &Path, rel: &str, name: &str, description: &str, body: &str) {
    let kind = rel.split('/').next().unwrap_or("project");
    write(
        &repo.join(TEAM).join(rel),
        &memory_text(name, description, kind, body),
    );
}

/// Regenerates MEMORY.md with `teammem index --scope team`.
pub fn reindex(sb: &Sandbox, repo: &Path) {
    let run = sb.teammem(repo, ["index", "--scope", "team"]);
    assert!(run.code == 0, "index failed: {}{}", run.stdout, run.stderr);
}

/// `git add -A` and commit as `author` at `time` (seconds since the epoch), so commit ids are
/// the same on every run. Returns the commit id.
pub fn commit_as(sb: &Sandbox, repo: &Path, author: &str, time: i64, message: &str) -> String {
    sb.git(repo, ["add", "-A"]);
    let email = format!("{}@example.com", author.to_lowercase());
    let date = format!("@{time} +0000");
    let mut cmd = Command::new("git");
    sb.isolate(&mut cmd)
        .current_dir(repo)
        .args(["commit", "-q", "--no-verify", "-m", message])
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_COMMITTER_DATE", &date)
        .stdin(Stdio::null());
    let out = cmd.output().expect("run git commit");
    assert!(
        out.status.success(),
        "commit failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    sb.git(repo, ["rev-parse", "HEAD"]).trim().to_string()
}
