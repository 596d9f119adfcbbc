//! Fetching the team files' blobs a partial clone lacks (`git clone --filter=blob:none`):
//! libgit2 cannot ask the promisor remote for a missing object, so reading a teammate's memory
//! failed with `object not found`. git can: `git cat-file --batch` on the missing ids makes it
//! fetch them from the promisor remote, under the sync's deadline, with the git CLI
//! transport's rules (no prompt, no hooks, no fsmonitor, no credential helper or ssh command
//! from the repository). Shared by both sync modes.

use std::collections::BTreeSet;

use git2::{Oid, Repository};

use super::remote::git_cli::{git_cli_network_command, run_git};
use super::remote::{NetFailure, NetworkOptions};
use super::status;

/// Whether the repository is a partial clone (a promisor remote).
pub fn is_partial_clone(repo: &Repository) -> bool {
    let Ok(config) = repo.config() else {
        return false;
    };
    if config.get_string("extensions.partialclone").is_ok() {
        return true;
    }
    let Ok(mut entries) = config.entries(Some("remote\\..*\\.promisor")) else {
        return false;
    };
    let mut found = false;
    while let Some(Ok(entry)) = entries.next() {
        found |= entry.value().is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    }
    found
}

/// Makes sure every blob under `dir` in the trees of `commits`, and of their merge bases (a
/// merge of two tips reads the base version of a file both changed), is in the object
/// database, fetching the missing ones through git. Nothing to do outside a partial clone.
pub fn fetch_missing(
    repo: &Repository,
    commits: &[Oid],
    dir: &str,
    options: &NetworkOptions,
) -> Result<usize, NetFailure> {
    if !is_partial_clone(repo) {
        return Ok(0);
    }
    let odb = repo
        .odb()
        .map_err(|e| NetFailure::failed(format!("opening the object database: {}", e.message())))?;
    let mut all: BTreeSet<Oid> = commits.iter().copied().collect();
    for (i, &a) in commits.iter().enumerate() {
        for &b in &commits[i + 1..] {
            if a != b {
                all.extend(repo.merge_base(a, b).ok());
            }
        }
    }
    let mut missing = BTreeSet::new();
    for commit in all {
        let tree = repo.find_commit(commit).and_then(|c| c.tree());
        let Ok(tree) = tree else { continue };
        let files = status::tree_files(repo, Some(&tree), dir)
            .map_err(|e| NetFailure::failed(format!("listing the team files: {e}")))?;
        missing.extend(files.values().map(|f| f.id).filter(|id| !odb.exists(*id)));
    }
    if missing.is_empty() {
        return Ok(0);
    }
    let what = format!("fetching {} missing team memory blobs (git)", missing.len());
    let mut cmd = git_cli_network_command(repo, options)?;
    cmd.args(["cat-file", "--batch"]);
    let input: String = missing.iter().map(|id| format!("{id}\n")).collect();
    let run = run_git(cmd, input.as_bytes(), &options.deadline, &what)?;
    let still: Vec<String> = missing
        .iter()
        .filter(|id| !odb.exists(**id))
        .map(Oid::to_string)
        .collect();
    if !run.success || !still.is_empty() {
        return Err(NetFailure::failed(format!(
            "{what}: {} still missing; {}",
            still.len(),
            run.stderr.trim()
        )));
    }
    Ok(missing.len())
}
