//! Finding a team file the user unstaged with `git rm --cached`: HEAD holds it, the index no
//! longer does, and the file is still on disk. A sync would commit the folder as it is on disk
//! and make the index match, putting the file back silently; sync refuses instead.

use std::collections::HashSet;
use std::path::Path;

use git2::{Repository, Tree};

use super::GitError;
use super::staging_index::read::{self as index_file, FolderEntries};
use super::status;

/// The team files under `dir` (paths relative to the work tree) that HEAD's `head_tree` holds,
/// the index does not, and the work tree still has. Empty when the index cannot be read here
/// (a split or sparse index: the check is skipped) or does not exist yet.
pub fn staged_removals(
    repo: &Repository,
    head_tree: Option<&Tree<'_>>,
    dir: &str,
) -> Result<Vec<String>, GitError> {
    let Some(workdir) = repo.workdir() else {
        return Ok(Vec::new());
    };
    let committed = status::tree_files(repo, head_tree, dir)?;
    if committed.is_empty() {
        return Ok(Vec::new());
    }
    let index_path = repo.path().join("index");
    let prefix = format!("{dir}/");
    let id_len = match repo.object_format() {
        git2::ObjectFormat::Sha1 => 20,
        _ => 32,
    };
    let staged: HashSet<Vec<u8>> =
        match index_file::folder_entries(&index_path, prefix.as_bytes(), id_len) {
            Ok(FolderEntries::Read(entries)) => entries.into_iter().map(|e| e.path).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(GitError::io(&index_path, e)),
            Ok(FolderEntries::Unsupported(_)) => match repo.index() {
                Ok(index) => index
                    .iter()
                    .filter(|e| e.path.starts_with(prefix.as_bytes()))
                    .map(|e| e.path)
                    .collect(),
                Err(_) => return Ok(Vec::new()),
            },
        };
    Ok(committed
        .into_keys()
        .filter(|path| !staged.contains(path.as_bytes()))
        .filter(|path| std::fs::symlink_metadata(workdir.join(Path::new(path))).is_ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::git_cli;

    #[test]
    fn git_rm_cached_is_found_and_a_plain_delete_is_not() {
        let (dir, repo) = crate::git::scratch_repo();
        let team = dir.path().join(".qwen/team-memory/project");
        std::fs::create_dir_all(&team).unwrap();
        std::fs::write(team.join("a.md"), "a\n").unwrap();
        std::fs::write(team.join("b.md"), "b\n").unwrap();
        git_cli(dir.path(), &["add", "-A"]);
        git_cli(dir.path(), &["commit", "-q", "-m", "team"]);
        git_cli(
            dir.path(),
            &["rm", "-q", "--cached", ".qwen/team-memory/project/a.md"],
        );
        git_cli(dir.path(), &["rm", "-q", ".qwen/team-memory/project/b.md"]);
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        assert_eq!(
            staged_removals(&repo, Some(&head), ".qwen/team-memory").unwrap(),
            [".qwen/team-memory/project/a.md"]
        );
    }
}
