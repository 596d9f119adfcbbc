//! Replacing one folder's entries in an index file's bytes, leaving every other byte of the
//! entries as it was.
//!
//! libgit2 parses a whole index into a hash map before changing one entry and writes the whole
//! file back: in a 100,000-file repository that is most of a sync commit's time. Index entries
//! are sorted by path, so the team folder's entries are one contiguous run of bytes: this module
//! finds it, puts the new entries in its place, fixes the entry count, and writes a fresh SHA-1
//! trailer (git verifies it when it reads the index).
//!
//! Extensions are handled as git handles a changed path: the cache tree (`TREE`) is invalidated
//! for the folder's parents and the folder's own subtree is dropped (git rebuilds both on its next
//! commit); resolve-undo (`REUC`) is kept; other optional extensions (uppercase signature:
//! untracked cache, fsmonitor, end-of-index and offset tables) are dropped, as libgit2 drops them,
//! since they would be wrong after the splice. Forms it does not handle — index version 4 (paths
//! compressed against each other), a split index (`link`), a sparse index (`sdir`), an unknown
//! required extension (lowercase signature), a file or symlink where the folder or a parent should
//! be, a checksum that does not match — are reported, and the caller falls back to libgit2.

use std::borrow::Cow;
use std::io::{self, Write};

use sha1::{Digest, Sha1};

use super::entries::{Entries, HEADER, NAME_MASK, STAT_BYTES, Unsupported, be32, unsupported};
use crate::domain::store::FileStamp;

const ID_LEN: usize = 20;
/// The fixed part of an entry: stat data, object id, flags.
const FIXED: usize = STAT_BYTES + ID_LEN + 2;

/// One entry of the folder as it is in the index now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderEntry<'a> {
    /// The full path in the repository.
    pub path: &'a [u8],
    /// Git's file mode.
    pub mode: u32,
    /// The object id.
    pub id: &'a [u8],
    /// The merge stage (0 when resolved).
    pub stage: u8,
    /// The entry's bytes, padding included: copied as they are when the entry is kept.
    pub raw: &'a [u8],
}

/// An index file taken apart around one folder's entries.
#[derive(Debug)]
pub struct FolderSplice<'a> {
    bytes: &'a [u8],
    /// Byte range of the folder's entries (empty where they would go when there are none).
    range: (usize, usize),
    /// The folder's entries, in index order.
    entries: Vec<FolderEntry<'a>>,
    /// Where the entries end and the extensions begin.
    entries_end: usize,
    /// Each extension's signature and whole byte range (header included).
    extensions: Vec<([u8; 4], (usize, usize))>,
    /// `index.skipHash`: the file's trailer is all zeros and is written so again.
    skip_hash: bool,
}

/// Takes the index file `bytes` apart around the entries whose path starts with `prefix` (for
/// example `.qwen/team-memory/`), checking its structure on the way. The checksum is left to
/// [`checksum_ok`], which the caller may run while it writes the new file.
pub fn split<'a>(bytes: &'a [u8], prefix: &[u8]) -> Result<FolderSplice<'a>, Unsupported> {
    let mut walk = Entries::new(bytes, ID_LEN)?;
    if walk.version == 4 {
        return unsupported("index version other than 2 or 3");
    }
    let end = walk.end;
    let skip_hash = bytes[end..].iter().all(|&b| b == 0);
    let folder = &prefix[..prefix.len().saturating_sub(1)];
    let mut range: Option<(usize, usize)> = None;
    let mut entries = Vec::new();
    let mut previous: &[u8] = &[];
    while let Some(entry) = walk.next_entry()? {
        let path = &bytes[entry.name.clone()];
        if path < previous {
            return unsupported("index entries out of order");
        }
        previous = path;
        let is_ancestor =
            folder.starts_with(path) && (path.len() == folder.len() || folder[path.len()] == b'/');
        if is_ancestor {
            return unsupported("a file where the folder or a parent should be");
        }
        if path.starts_with(prefix) {
            let (start, _) = *range.get_or_insert((entry.at, entry.at));
            range = Some((start, entry.next));
            entries.push(FolderEntry {
                path,
                mode: entry.mode,
                id: entry.id,
                stage: entry.stage,
                raw: &bytes[entry.at..entry.next],
            });
        } else if range.is_none() && path > prefix {
            range = Some((entry.at, entry.at));
        }
    }
    let entries_end = walk.at();
    let range = range.unwrap_or((entries_end, entries_end));
    let extensions = walk
        .extensions()?
        .into_iter()
        .map(|(signature, r)| (signature, (r.start, r.end)))
        .collect();
    Ok(FolderSplice {
        bytes,
        range,
        entries,
        entries_end,
        extensions,
        skip_hash,
    })
}

impl<'a> FolderSplice<'a> {
    /// The folder's entries as they are now.
    pub fn entries(&self) -> &[FolderEntry<'a>] {
        &self.entries
    }

    /// The index file with the folder's entries replaced by `entries` (each the bytes of one
    /// entry, in path order, from [`encode_entry`] or [`FolderEntry::raw`]), trailer excepted,
    /// as a list of pieces: the unchanged runs of the old file are borrowed from it, never
    /// copied. `folder` is the folder's path without a trailing slash, for the cache tree.
    pub fn pieces<'s>(
        &'s self,
        entries: &[&'s [u8]],
        folder: &str,
    ) -> io::Result<Vec<Cow<'s, [u8]>>> {
        let bytes = self.bytes;
        let (start, end) = self.range;
        let count = be32(bytes, 8) as usize - self.entries.len() + entries.len();
        let count = u32::try_from(count)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many index entries"))?;
        let mut pieces: Vec<Cow<'s, [u8]>> = Vec::with_capacity(entries.len() + 8);
        pieces.push(Cow::Borrowed(&bytes[..8]));
        pieces.push(Cow::Owned(count.to_be_bytes().to_vec()));
        pieces.push(Cow::Borrowed(&bytes[HEADER..start]));
        pieces.extend(entries.iter().map(|e| Cow::Borrowed(*e)));
        pieces.push(Cow::Borrowed(&bytes[end..self.entries_end]));
        for (signature, (from, to)) in &self.extensions {
            match signature {
                b"TREE" => {
                    if let Some(tree) = invalidate_tree(&bytes[from + 8..*to], folder) {
                        let mut extension = b"TREE".to_vec();
                        extension.extend_from_slice(&(tree.len() as u32).to_be_bytes());
                        extension.extend_from_slice(&tree);
                        pieces.push(Cow::Owned(extension));
                    }
                }
                b"REUC" => pieces.push(Cow::Borrowed(&bytes[*from..*to])),
                _ => {}
            }
        }
        Ok(pieces)
    }

    /// The trailer that ends a file made of `pieces`: their SHA-1, or zeros when the old file's
    /// trailer was zeros (`index.skipHash`).
    pub fn trailer(&self, pieces: &[Cow<'_, [u8]>]) -> [u8; ID_LEN] {
        if self.skip_hash {
            return [0; ID_LEN];
        }
        let mut sha1 = Sha1::new();
        for piece in pieces {
            sha1.update(piece);
        }
        sha1.finalize().into()
    }

    /// Writes the whole new file ([`FolderSplice::pieces`], then the trailer) to `out`.
    pub fn write_to(
        &self,
        out: &mut impl Write,
        entries: &[&[u8]],
        folder: &str,
    ) -> io::Result<()> {
        let pieces = self.pieces(entries, folder)?;
        for piece in &pieces {
            out.write_all(piece)?;
        }
        out.write_all(&self.trailer(&pieces))
    }
}

/// Whether the SHA-1 trailer of the index file `bytes` matches its content (git checks it on
/// every read). A trailer of zeros (`index.skipHash`) is accepted, as git and libgit2 do.
pub fn checksum_ok(bytes: &[u8]) -> bool {
    let Some(end) = bytes.len().checked_sub(ID_LEN) else {
        return false;
    };
    let trailer = &bytes[end..];
    trailer.iter().all(|&b| b == 0) || Sha1::digest(&bytes[..end]).as_slice() == trailer
}

/// The bytes of a stage-0 entry for `path` (version 2 and 3 layout, no extended flags), with
/// the stat data of `stamp` ([`FileStamp::default`] for none: git then compares contents).
pub fn encode_entry(path: &[u8], mode: u32, id: &[u8], stamp: &FileStamp) -> Vec<u8> {
    let len = (FIXED + path.len() + 8) / 8 * 8;
    let mut out = Vec::with_capacity(len);
    for value in stamp.index_words(mode) {
        out.extend_from_slice(&value.to_be_bytes());
    }
    out.extend_from_slice(id);
    let name_len = path.len().min(usize::from(NAME_MASK)) as u16;
    out.extend_from_slice(&name_len.to_be_bytes());
    out.extend_from_slice(path);
    out.resize(len, 0);
    out
}

/// One node of the cache tree, in the extension's pre-order.
struct TreeNode<'a> {
    name: &'a [u8],
    /// Entries covered, or -1 when invalid.
    entry_count: i64,
    subtrees: usize,
    id: Option<&'a [u8]>,
    /// One past the last node of its subtree.
    end: usize,
}

/// The `TREE` extension's data with every node on the way to `folder` invalidated and the
/// folder's own node (and everything below it) removed, as `git add` does for a path in it.
/// `None` when the data cannot be read: the caller drops the extension, which is always safe.
fn invalidate_tree(data: &[u8], folder: &str) -> Option<Vec<u8>> {
    let mut nodes = parse_tree(data)?;
    let components: Vec<&[u8]> = folder.split('/').map(str::as_bytes).collect();
    let (last, parents) = components.split_last()?;
    let mut removed: Option<(usize, usize)> = None;
    if !nodes.is_empty() {
        let mut current = 0;
        nodes[0].entry_count = -1;
        let mut reached = true;
        for name in parents {
            match child(&nodes, current, name) {
                Some(at) => {
                    nodes[at].entry_count = -1;
                    current = at;
                }
                None => {
                    reached = false;
                    break;
                }
            }
        }
        if reached {
            if let Some(at) = child(&nodes, current, last) {
                removed = Some((at, nodes[at].end));
                nodes[current].subtrees -= 1;
            }
        }
    }
    let mut out = Vec::with_capacity(data.len());
    for (at, node) in nodes.iter().enumerate() {
        if removed.is_some_and(|(from, to)| (from..to).contains(&at)) {
            continue;
        }
        out.extend_from_slice(node.name);
        out.push(0);
        out.extend_from_slice(format!("{} {}\n", node.entry_count, node.subtrees).as_bytes());
        if node.entry_count >= 0 {
            out.extend_from_slice(node.id?);
        }
    }
    Some(out)
}

/// The direct child of `nodes[parent]` named `name`.
fn child(nodes: &[TreeNode<'_>], parent: usize, name: &[u8]) -> Option<usize> {
    let mut at = parent + 1;
    while at < nodes[parent].end {
        if nodes[at].name == name {
            return Some(at);
        }
        at = nodes[at].end;
    }
    None
}

/// Reads the cache tree's nodes without recursion (a crafted index cannot exhaust the stack).
fn parse_tree(data: &[u8]) -> Option<Vec<TreeNode<'_>>> {
    let mut nodes: Vec<TreeNode<'_>> = Vec::new();
    // For each open node: its index and how many subtrees are still to come.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let name_len = data[at..].iter().position(|&b| b == 0)?;
        let name = &data[at..at + name_len];
        at += name_len + 1;
        let line_len = data[at..].iter().position(|&b| b == b'\n')?;
        let line = std::str::from_utf8(&data[at..at + line_len]).ok()?;
        at += line_len + 1;
        let (count, subtrees) = line.split_once(' ')?;
        let entry_count: i64 = count.parse().ok()?;
        let subtrees: usize = subtrees.parse().ok()?;
        let id = if entry_count >= 0 {
            let id = data.get(at..at + ID_LEN)?;
            at += ID_LEN;
            Some(id)
        } else {
            None
        };
        if open.is_empty() && !nodes.is_empty() {
            return None; // a second root
        }
        let index = nodes.len();
        nodes.push(TreeNode {
            name,
            entry_count,
            subtrees,
            id,
            end: index + 1,
        });
        if let Some(parent) = open.last_mut() {
            parent.1 -= 1;
        }
        open.push((index, subtrees));
        while let Some(&(node, 0)) = open.last() {
            open.pop();
            nodes[node].end = nodes.len();
        }
    }
    if !open.is_empty() {
        return None;
    }
    Some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::git_cli as git;

    /// A repository whose index holds `files` and, after a commit, a cache tree.
    fn repo(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, f).unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-q", "-m", "c"]);
        dir
    }

    fn index(dir: &tempfile::TempDir) -> Vec<u8> {
        std::fs::read(dir.path().join(".git/index")).unwrap()
    }

    fn rewrite(bytes: &[u8], entries: &[&[u8]]) -> Vec<u8> {
        let split = split(bytes, b".qwen/team-memory/").unwrap();
        let mut out = Vec::new();
        split
            .write_to(&mut out, entries, ".qwen/team-memory")
            .unwrap();
        out
    }

    const FILES: [&str; 6] = [
        "a.txt",
        ".qwen/settings.json",
        ".qwen/team-memory/MEMORY.md",
        ".qwen/team-memory/project/b.md",
        ".qwen/zz.txt",
        "src/lib.rs",
    ];

    #[test]
    fn finds_the_folder_entries_and_keeps_the_rest_byte_for_byte() {
        let dir = repo(&FILES);
        // A fresh index from `git add` has no cache tree: the same entries give the same file.
        std::fs::remove_file(dir.path().join(".git/index")).unwrap();
        git(dir.path(), &["add", "-A"]);
        let bytes = index(&dir);
        let split = split(&bytes, b".qwen/team-memory/").unwrap();
        let paths: Vec<&[u8]> = split.entries().iter().map(|e| e.path).collect();
        assert_eq!(
            paths,
            [
                &b".qwen/team-memory/MEMORY.md"[..],
                b".qwen/team-memory/project/b.md"
            ]
        );
        let raw: Vec<&[u8]> = split.entries().iter().map(|e| e.raw).collect();
        let mut out = Vec::new();
        split.write_to(&mut out, &raw, ".qwen/team-memory").unwrap();
        assert_eq!(out, bytes);
        assert!(checksum_ok(&out));
    }

    #[test]
    fn git_reads_the_spliced_index_and_rebuilds_the_cache_tree() {
        let dir = repo(&FILES);
        let bytes = index(&dir);
        let blob = git(dir.path(), &["hash-object", "-w", "--stdin"]);
        let id: Vec<u8> = (0..20)
            .map(|i| u8::from_str_radix(&blob.trim()[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let split = split(&bytes, b".qwen/team-memory/").unwrap();
        let kept = split.entries()[0].raw;
        let added = encode_entry(
            b".qwen/team-memory/project/c.md",
            0o100644,
            &id,
            &FileStamp::default(),
        );
        let out = rewrite(&bytes, &[kept, &added]);
        std::fs::write(dir.path().join(".git/index"), &out).unwrap();

        let listed = git(dir.path(), &["ls-files"]);
        assert_eq!(
            listed,
            ".qwen/settings.json\n.qwen/team-memory/MEMORY.md\n.qwen/team-memory/project/c.md\n\
             .qwen/zz.txt\na.txt\nsrc/lib.rs\n"
        );
        // The cache tree no longer claims the old tree: write-tree gives the new content.
        let tree = git(dir.path(), &["write-tree"]);
        let team = git(dir.path(), &["ls-tree", "-r", "--name-only", tree.trim()]);
        assert!(team.contains(".qwen/team-memory/project/c.md\n"), "{team}");
        assert!(!team.contains("project/b.md"), "{team}");
        git(dir.path(), &["fsck", "--no-progress"]);
    }

    #[test]
    fn the_cache_tree_keeps_what_the_folder_does_not_touch() {
        let dir = repo(&FILES);
        let bytes = index(&dir);
        let split = split(&bytes, b".qwen/team-memory/").unwrap();
        let (from, to) = split
            .extensions
            .iter()
            .find(|(s, _)| s == b"TREE")
            .unwrap()
            .1;
        let data = &bytes[from + 8..to];
        let before: Vec<(Vec<u8>, i64)> = parse_tree(data)
            .unwrap()
            .iter()
            .map(|n| (n.name.to_vec(), n.entry_count))
            .collect();
        let after = invalidate_tree(data, ".qwen/team-memory").unwrap();
        let after: Vec<(Vec<u8>, i64)> = parse_tree(&after)
            .unwrap()
            .iter()
            .map(|n| (n.name.to_vec(), n.entry_count))
            .collect();
        let name = |n: &str| n.as_bytes().to_vec();
        // git orders subtrees by name length first.
        assert_eq!(
            before,
            [
                (name(""), 6),
                (name("src"), 1),
                (name(".qwen"), 4),
                (name("team-memory"), 2),
                (name("project"), 1)
            ]
        );
        assert_eq!(
            after,
            [(name(""), -1), (name("src"), 1), (name(".qwen"), -1)]
        );
    }

    #[test]
    fn forms_left_to_libgit2_are_named() {
        let dir = repo(&FILES);
        git(dir.path(), &["update-index", "--index-version", "4"]);
        assert!(split(&index(&dir), b".qwen/team-memory/").is_err());

        let dir = repo(&["a.txt", ".qwen/team-memory"]);
        let why = split(&index(&dir), b".qwen/team-memory/").unwrap_err();
        assert_eq!(why.0, "a file where the folder or a parent should be");

        // An unknown required extension (lowercase signature) before the trailer.
        let dir = repo(&FILES);
        let bytes = index(&dir);
        let mut patched = bytes[..bytes.len() - 20].to_vec();
        patched.extend_from_slice(b"zzzz\0\0\0\0");
        let sum = Sha1::digest(&patched);
        patched.extend_from_slice(&sum);
        let why = split(&patched, b".qwen/team-memory/").unwrap_err();
        assert_eq!(why.0, "an unknown index extension");
    }

    #[test]
    fn a_damaged_index_fails_its_checksum() {
        let dir = repo(&FILES);
        let mut bytes = index(&dir);
        assert!(checksum_ok(&bytes));
        bytes[40] ^= 1;
        assert!(!checksum_ok(&bytes));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(version in 2u8..5, count in 0u32..50, tail in proptest::collection::vec(0u8..=255, 0..400)) {
            let mut bytes = b"DIRC\0\0\0".to_vec();
            bytes.push(version);
            bytes.extend_from_slice(&count.to_be_bytes());
            bytes.extend_from_slice(&tail);
            if let Ok(split) = split(&bytes, b".qwen/") {
                let raw: Vec<&[u8]> = split.entries().iter().map(|e| e.raw).collect();
                let _ = split.write_to(&mut Vec::new(), &raw, ".qwen");
            }
            let _ = invalidate_tree(&tail, ".qwen/team-memory");
        }
    }
}
