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

const STAT_BYTES: usize = 40;
const EXTENDED_FLAG: u16 = 0x4000;
/// The skip-worktree bit of an entry's extended flags (index version 3 and later).
const SKIP_WORKTREE: u16 = 0x4000;

/// Reads the entries whose path starts with `prefix` (e.g. `.qwen/team-memory/`) from the index
/// file at `path`, and any entry that stands where the folder or one of its parents should be
/// (`.qwen` or `.qwen/team-memory` as a file or symlink). `id_len` is the object id size: 20 for SHA-1, 32 for SHA-256 repositories.
pub fn folder_entries(path: &Path, prefix: &[u8], id_len: usize) -> std::io::Result<FolderEntries> {
    let bytes = std::fs::read(path)?;
    Ok(parse(&bytes, prefix, id_len))
}

fn parse(bytes: &[u8], prefix: &[u8], id_len: usize) -> FolderEntries {
    let unsupported = |why: &str| FolderEntries::Unsupported(why.to_string());
    if bytes.len() < 12 + id_len || &bytes[..4] != b"DIRC" {
        return unsupported("not an index file");
    }
    let version = be32(bytes, 4);
    if !(2..=4).contains(&version) {
        return unsupported("unknown index version");
    }
    let count = be32(bytes, 8) as usize;
    let end = bytes.len() - id_len;
    let mut at = 12;
    let mut out = Vec::new();
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let fixed = STAT_BYTES + id_len + 2;
        if at + fixed > end {
            return unsupported("truncated index");
        }
        let mode = be32(bytes, at + 24);
        let id = &bytes[at + STAT_BYTES..at + STAT_BYTES + id_len];
        let flags = be16(bytes, at + STAT_BYTES + id_len);
        let mut cursor = at + fixed;
        let mut skip_worktree = false;
        if version >= 3 && flags & EXTENDED_FLAG != 0 {
            cursor += 2;
            if cursor > end {
                return unsupported("truncated index");
            }
            skip_worktree = be16(bytes, at + fixed) & SKIP_WORKTREE != 0;
        }
        if cursor > end {
            return unsupported("truncated index");
        }
        if version == 4 {
            // Path compressed against the previous entry: strip N bytes, append a NUL-ended suffix.
            let Some((strip, used)) = varint(&bytes[cursor..end]) else {
                return unsupported("truncated index");
            };
            cursor += used;
            let Some(len) = bytes[cursor..end].iter().position(|&b| b == 0) else {
                return unsupported("truncated index");
            };
            let keep = previous.len().saturating_sub(strip as usize);
            previous.truncate(keep);
            previous.extend_from_slice(&bytes[cursor..cursor + len]);
            cursor += len + 1;
        } else {
            let Some(len) = bytes[cursor..end].iter().position(|&b| b == 0) else {
                return unsupported("truncated index");
            };
            previous.clear();
            previous.extend_from_slice(&bytes[cursor..cursor + len]);
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            let entry_len = cursor + len - at;
            cursor = at + (entry_len + 8) / 8 * 8;
        }
        if mode == 0o040000 {
            return unsupported("sparse index");
        }
        // The folder itself, or a parent, recorded as a file or symlink: the caller must know.
        let is_ancestor = prefix.len() > previous.len()
            && prefix.starts_with(&previous)
            && prefix[previous.len()] == b'/';
        if previous.starts_with(prefix) || is_ancestor {
            out.push(StagedEntry {
                path: previous.clone(),
                mode,
                id: id.to_vec(),
                stage: ((flags >> 12) & 0x3) as u8,
                skip_worktree,
            });
        }
        at = cursor;
    }
    // Extensions follow the entries: a split index keeps entries in another file.
    while at + 8 <= end {
        let signature = &bytes[at..at + 4];
        if signature == b"link" {
            return unsupported("split index");
        }
        if signature == b"sdir" {
            return unsupported("sparse index");
        }
        at += 8 + be32(bytes, at + 4) as usize;
    }
    FolderEntries::Read(out)
}

fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([bytes[at], bytes[at + 1]])
}

/// Git's offset varint (each continuation adds one before shifting).
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut used = 0;
    let mut byte = *bytes.first()?;
    used += 1;
    let mut value = u64::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = ((value + 1) << 7) | u64::from(byte & 0x7f);
    }
    Some((value, used))
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
