//! Reading the entries of one folder straight from an index file, without loading the index.
//!
//! libgit2 loads a whole index before answering anything about it: it verifies the SHA-1 of the
//! file (collision-detecting SHA-1 over megabytes in a large repository) and puts every entry
//! in a hash map. For a pre-commit hook that only needs `.qwen/team-memory/`, that is most of
//! its time in a 100,000-file repository. This reader skips over entries outside the folder and
//! does not verify the checksum — neither does git when it reads its index for a command.
//! Formats it does not handle (split or sparse index, unknown versions) are reported so the
//! caller can fall back to libgit2.

use std::path::Path;

use super::entries::{Entries, Unsupported};

/// One entry of git's index (the staging area) below the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedEntry {
    /// The full path in the repository.
    pub path: Vec<u8>,
    /// Git's file mode.
    pub mode: u32,
    /// The object id's raw bytes.
    pub id: Vec<u8>,
    /// The merge stage (0 when resolved).
    pub stage: u8,
    /// The skip-worktree bit: a sparse checkout leaves the file out of the work tree.
    pub skip_worktree: bool,
}

/// What reading the index gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderEntries {
    /// The entries below the folder, in index order.
    Read(Vec<StagedEntry>),
    /// The index uses a form this reader leaves to libgit2; says which.
    Unsupported(String),
}

/// Reads the entries whose path starts with `prefix` (e.g. `.qwen/team-memory/`) from the index
/// file at `path`, and any entry that stands where the folder or one of its parents should be
/// (`.qwen` or `.qwen/team-memory` as a file or symlink). `id_len` is the object id size: 20 for SHA-1, 32 for SHA-256 repositories.
pub fn folder_entries(path: &Path, prefix: &[u8], id_len: usize) -> std::io::Result<FolderEntries> {
    let bytes = std::fs::read(path)?;
    Ok(parse(&bytes, prefix, id_len))
}

fn parse(bytes: &[u8], prefix: &[u8], id_len: usize) -> FolderEntries {
    match folder(bytes, prefix, id_len) {
        Ok(entries) => FolderEntries::Read(entries),
        Err(Unsupported(why)) => FolderEntries::Unsupported(why),
    }
}

fn folder(bytes: &[u8], prefix: &[u8], id_len: usize) -> Result<Vec<StagedEntry>, Unsupported> {
    let mut walk = Entries::new(bytes, id_len)?;
    let mut out = Vec::new();
    while let Some(entry) = walk.next_entry()? {
        let path = walk.path();
        // The folder itself, or a parent, recorded as a file or symlink: the caller must know.
        let is_ancestor =
            prefix.len() > path.len() && prefix.starts_with(path) && prefix[path.len()] == b'/';
        if path.starts_with(prefix) || is_ancestor {
            out.push(StagedEntry {
                path: path.to_vec(),
                mode: entry.mode,
                id: entry.id.to_vec(),
                stage: entry.stage,
                skip_worktree: entry.skip_worktree,
            });
        }
    }
    // Extensions follow the entries: a split index keeps entries in another file.
    walk.extensions()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(version: &str, files: &[&str]) -> (tempfile::TempDir, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| crate::git::git_cli(dir.path(), args);
        git(&["init", "-q"]);
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, f).unwrap();
        }
        git(&["add", "-A"]);
        git(&["update-index", "--index-version", version]);
        let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
        (dir, bytes)
    }

    #[test]
    fn reads_the_folder_from_every_index_version() {
        let files = [
            "a.txt",
            ".qwen/settings.json",
            ".qwen/team-memory/MEMORY.md",
            ".qwen/team-memory/feedback/a-long-name.md",
            ".qwen/team-memory/feedback/b.md",
            ".qwen/team-memoryx.md",
            "z/z.txt",
        ];
        for version in ["2", "3", "4"] {
            let (_dir, bytes) = index_of(version, &files);
            let FolderEntries::Read(entries) = parse(&bytes, b".qwen/team-memory/", 20) else {
                panic!("version {version} unsupported");
            };
            let paths: Vec<String> = entries
                .iter()
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            assert_eq!(
                paths,
                [
                    ".qwen/team-memory/MEMORY.md",
                    ".qwen/team-memory/feedback/a-long-name.md",
                    ".qwen/team-memory/feedback/b.md"
                ],
                "version {version}"
            );
            assert!(entries.iter().all(|e| e.mode == 0o100644 && e.stage == 0));
        }
    }

    #[test]
    fn the_skip_worktree_bit_is_read_in_versions_3_and_4() {
        let files = [
            "a.txt",
            ".qwen/team-memory/MEMORY.md",
            ".qwen/team-memory/feedback/b.md",
        ];
        for version in ["3", "4"] {
            let (dir, _) = index_of(version, &files);
            let status = std::process::Command::new("git")
                .current_dir(dir.path())
                .args([
                    "update-index",
                    "--skip-worktree",
                    ".qwen/team-memory/feedback/b.md",
                ])
                .status()
                .unwrap();
            assert!(status.success());
            let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
            let FolderEntries::Read(entries) = parse(&bytes, b".qwen/team-memory/", 20) else {
                panic!("version {version} unsupported");
            };
            let skipped: Vec<bool> = entries.iter().map(|e| e.skip_worktree).collect();
            assert_eq!(skipped, [false, true], "version {version}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(version in 2u8..5, count in 0u32..50, tail in proptest::collection::vec(0u8..=255, 0..400)) {
            let mut bytes = b"DIRC\0\0\0".to_vec();
            bytes.push(version);
            bytes.extend_from_slice(&count.to_be_bytes());
            bytes.extend_from_slice(&tail);
            let _ = parse(&bytes, b".qwen/", 20);
        }
    }

    #[test]
    fn garbage_is_unsupported_not_a_panic() {
        assert!(matches!(
            parse(b"nope", b"x/", 20),
            FolderEntries::Unsupported(_)
        ));
        let mut bytes = b"DIRC\0\0\0\x02\0\0\0\x05".to_vec();
        bytes.extend_from_slice(&[0u8; 30]);
        assert!(matches!(
            parse(&bytes, b"x/", 20),
            FolderEntries::Unsupported(_)
        ));
    }
}
