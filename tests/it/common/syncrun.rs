//! Running `teammem sync --json` as a user would, and reading what a remote holds.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{Run, Sandbox, invoke, memory_text, write};

/// Runs `teammem` in `dir` with the sandbox's environment plus `env`.
pub fn teammem_env(sb: &Sandbox, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    invoke::teammem_with(sb, dir, args, &invoke::set(env), None)
}

/// `teammem sync --json ARGS` in `dir`: the parsed report (exit status 0 or 1 required).
pub fn sync_json(sb: &Sandbox, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = vec!["sync", "--json"];
    all.extend_from_slice(args);
    let run = teammem_env(sb, dir, &all, env);
    assert!(
        run.code == 0 || run.code == 1,
        "sync exited {}\n--- stdout\n{}\n--- stderr\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    let clean = report["skipped_reason"].is_null() && report["quarantined"] == Value::Array(vec![]);
    assert_eq!(run.code, if clean { 0 } else { 1 }, "{report:#}");
    report
}

/// The report's skip reason, or `""`.
pub fn reason(report: &Value) -> &str {
    report["skipped_reason"].as_str().unwrap_or("")
}

/// Writes a valid team memory `.qwen/team-memory/<kind>/<slug>.md` in `dir`.
pub fn write_memory(dir: &Path, kind: &str, slug: &str, body: &str) {
    write(
        &dir.join(format!(".qwen/team-memory/{kind}/{slug}.md")),
        &memory_text(
            &slug.replace('-', " "),
            &format!("About {slug}"),
            kind,
            body,
        ),
    );
}

/// The files of a branch in a (bare) repository.
pub fn files_at(sb: &Sandbox, repo: &Path, rev: &str) -> String {
    sb.git(repo, ["ls-tree", "-r", "--name-only", rev])
}

/// Subjects of a branch, newest first.
pub fn subjects(sb: &Sandbox, repo: &Path, rev: &str) -> String {
    sb.git(repo, ["log", "--format=%s", rev])
}

/// The teammate writes a memory, regenerates the index, commits and pushes with the git CLI.
pub fn mate_pushes_memory(sb: &Sandbox, mate: &Path, slug: &str) {
    write_memory(mate, "project", slug, "From the teammate.\n");
    sb.teammem(mate, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(mate, ["add", "-A"]);
    sb.git(mate, ["commit", "-q", "-m", &format!("mate: {slug}")]);
    sb.git(mate, ["push", "-q", "origin", "main"]);
}

/// What a killed sync could leave in the git folder that a person would have to remove: locks,
/// temp packs, teammem's notes (paths relative to `.git`).
pub fn leftovers(repo: &Path) -> Vec<String> {
    let git = repo.join(".git");
    let mut found = Vec::new();
    let mut folders = vec![git.clone()];
    while let Some(dir) = folders.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = path.strip_prefix(&git).unwrap().display().to_string();
            if name.contains("teammem")
                && !relative.starts_with("refs/")
                && !relative.starts_with("logs/")
            {
                assert!(
                    listed_in_git(&relative),
                    "{relative} is not in teammem::git::LEFT_IN_GIT, the list of what teammem leaves in .git"
                );
            }
            if path.is_dir() {
                folders.push(path);
            } else if name.ends_with(".lock")
                || name.starts_with("pack_git2_")
                || name.starts_with("tmp_pack_")
                // State teammem keeps on purpose (the no-op record, the offline note, ...) is
                // not something left behind.
                || (name.starts_with("teammem-") && !kept_in_git(&name))
            {
                found.push(path.strip_prefix(&git).unwrap().display().to_string());
            }
        }
    }
    found
}

/// Whether `name` is a file `LEFT_IN_GIT` says teammem keeps on purpose.
fn kept_in_git(name: &str) -> bool {
    teammem::git::LEFT_IN_GIT
        .iter()
        .any(|left| left.kept && left.name == name)
}

/// Whether a path in the git folder is one `LEFT_IN_GIT` names (each `<…>` stands for any
/// text without a `/`).
fn listed_in_git(relative: &str) -> bool {
    teammem::git::LEFT_IN_GIT.iter().any(|left| {
        let pattern = regex::escape(left.name);
        let pattern = regex::Regex::new("<[a-z]+>")
            .unwrap()
            .replace_all(&pattern, "[^/]+");
        regex::Regex::new(&format!("^{pattern}$"))
            .unwrap()
            .is_match(relative)
    })
}

/// The teammate commits, with git's plumbing alone, a team memory at a path longer than any
/// file system takes (no work tree could hold it) and pushes it; returns the folder under the
/// team folder's `project/` that holds it.
pub fn mate_pushes_unwritable_path(sb: &Sandbox, mate: &Path) -> String {
    let text = sb.path().join("deep-memory.md");
    write(
        &text,
        &memory_text("deep", "too deep to write", "project", "Deep.\n"),
    );
    let blob = sb.git(mate, ["hash-object", "-w", text.to_str().unwrap()]);
    let folder = "deep";
    let path = format!(
        ".qwen/team-memory/project/{folder}/{}/deep.md",
        vec!["abcdefghij"; 450].join("/")
    );
    sb.git(
        mate,
        [
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{},{path}", blob.trim()),
        ],
    );
    sb.git(mate, ["commit", "-q", "-m", "mate: a path too long"]);
    sb.git(mate, ["push", "-q", "origin", "HEAD"]);
    format!(".qwen/team-memory/project/{folder}")
}
