//! The one parser of git's index file format: its header, its entries (versions 2, 3 and 4;
//! SHA-1 or SHA-256 object ids) and its extensions, each checked as it is reached. Reading one
//! folder ([`super::read`]) and splicing it ([`super::splice`]) both walk the file with it.
//! Forms teammem leaves to libgit2 or the git CLI are reported as [`Unsupported`], never a
//! panic, whatever the bytes.

use std::ops::Range;

/// Why an index file was left to libgit2 (or the git CLI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// An [`Unsupported`] error saying `why`.
pub fn unsupported<T>(why: &str) -> Result<T, Unsupported> {
    Err(Unsupported(why.to_string()))
}

/// The file's signature, version and entry count.
pub const HEADER: usize = 12;
/// An entry's stat data: ctime, mtime, dev, ino, mode, uid, gid, size (ten 32-bit words).
pub const STAT_BYTES: usize = 40;
/// The flags bit that says two more bytes of flags follow (version 3 and later).
const EXTENDED_FLAG: u16 = 0x4000;
/// The skip-worktree bit of the extended flags: a sparse checkout leaves the file out.
const SKIP_WORKTREE: u16 = 0x4000;
/// The flags' name length; this value means "as long as the NUL says".
pub const NAME_MASK: u16 = 0x0fff;
/// The mode of a sparse index's folder entry.
const SPARSE_FOLDER: u32 = 0o040000;

/// An extension's signature and whole byte range (its 8-byte header included).
pub type Extension = ([u8; 4], Range<usize>);

/// One entry, as the walk reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry<'a> {
    /// Where its bytes start.
    pub at: usize,
    /// Where the next entry (or the extensions) start: its bytes are `at..next`, padding included.
    pub next: usize,
    /// Git's file mode.
    pub mode: u32,
    /// The object id's raw bytes.
    pub id: &'a [u8],
    /// The merge stage (0 when resolved).
    pub stage: u8,
    /// The skip-worktree bit.
    pub skip_worktree: bool,
    /// Where its name lies in the file: the whole path in versions 2 and 3; in version 4 only
    /// the part added to the previous path ([`Entries::path`] has the whole path).
    pub name: Range<usize>,
}

/// A walk over an index file's entries, in the file's order.
#[derive(Debug)]
pub struct Entries<'a> {
    bytes: &'a [u8],
    /// The index format version (2, 3 or 4).
    pub version: u32,
    id_len: usize,
    /// How many entries the header announces.
    pub count: usize,
    read: usize,
    at: usize,
    /// Where the trailing checksum starts.
    pub end: usize,
    /// The current entry's whole path (version 4 builds each from the one before).
    path: Vec<u8>,
}

impl<'a> Entries<'a> {
    /// A walk over `bytes`, whose object ids are `id_len` bytes (20 for SHA-1, 32 for SHA-256);
    /// refused when the header is not an index's.
    pub fn new(bytes: &'a [u8], id_len: usize) -> Result<Entries<'a>, Unsupported> {
        if bytes.len() < HEADER + id_len || &bytes[..4] != b"DIRC" {
            return unsupported("not an index file");
        }
        let version = be32(bytes, 4);
        if !(2..=4).contains(&version) {
            return unsupported("unknown index version");
        }
        Ok(Entries {
            bytes,
            version,
            id_len,
            count: be32(bytes, 8) as usize,
            read: 0,
            at: HEADER,
            end: bytes.len() - id_len,
            path: Vec::new(),
        })
    }

    /// The next entry; `None` once every announced entry was read ([`Entries::at`] is then
    /// where the extensions start).
    pub fn next_entry(&mut self) -> Result<Option<RawEntry<'a>>, Unsupported> {
        if self.read == self.count {
            return Ok(None);
        }
        let (bytes, at, end, id_len) = (self.bytes, self.at, self.end, self.id_len);
        let fixed = STAT_BYTES + id_len + 2;
        if at + fixed > end {
            return unsupported("truncated index");
        }
        let mode = be32(bytes, at + 24);
        let flags = be16(bytes, at + STAT_BYTES + id_len);
        let mut name_at = at + fixed;
        let mut skip_worktree = false;
        if flags & EXTENDED_FLAG != 0 {
            if self.version < 3 {
                return unsupported("extended flags in a version 2 index");
            }
            if name_at + 2 > end {
                return unsupported("truncated index");
            }
            skip_worktree = be16(bytes, name_at) & SKIP_WORKTREE != 0;
            name_at += 2;
        }
        let (name, next) = if self.version == 4 {
            // Path compressed against the previous entry: strip N bytes, append a NUL-ended suffix.
            let Some((strip, used)) = varint(&bytes[name_at..end]) else {
                return unsupported("truncated index");
            };
            let start = name_at + used;
            let Some(len) = bytes[start..end].iter().position(|&b| b == 0) else {
                return unsupported("truncated index");
            };
            let keep = usize::try_from(strip).map_or(0, |s| self.path.len().saturating_sub(s));
            self.path.truncate(keep);
            self.path.extend_from_slice(&bytes[start..start + len]);
            (start..start + len, start + len + 1)
        } else {
            let len = match flags & NAME_MASK {
                NAME_MASK => match bytes[name_at..end].iter().position(|&b| b == 0) {
                    Some(len) => len,
                    None => return unsupported("truncated index"),
                },
                len => usize::from(len),
            };
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            let next = at + (name_at - at + len + 8) / 8 * 8;
            if next > end || bytes[name_at + len] != 0 {
                return unsupported("truncated index");
            }
            self.path.clear();
            self.path.extend_from_slice(&bytes[name_at..name_at + len]);
            (name_at..name_at + len, next)
        };
        if mode == SPARSE_FOLDER {
            return unsupported("sparse index");
        }
        self.read += 1;
        self.at = next;
        Ok(Some(RawEntry {
            at,
            next,
            mode,
            id: &bytes[at + STAT_BYTES..at + STAT_BYTES + id_len],
            stage: ((flags >> 12) & 0x3) as u8,
            skip_worktree,
            name,
        }))
    }

    /// The whole path of the entry [`Entries::next_entry`] gave last.
    pub fn path(&self) -> &[u8] {
        &self.path
    }

    /// Where the walk stands: after the last entry read.
    pub fn at(&self) -> usize {
        self.at
    }

    /// The extensions after the entries (call once every entry was read), each its signature
    /// and whole byte range (header included). A split index (`link`), a sparse index
    /// (`sdir`) and a required extension this parser does not know (lowercase signature) are
    /// refused; optional ones (uppercase) are listed for the caller to keep or drop.
    pub fn extensions(&self) -> Result<Vec<Extension>, Unsupported> {
        let (bytes, end) = (self.bytes, self.end);
        let mut at = self.at;
        let mut out = Vec::new();
        while at < end {
            if at + 8 > end {
                return unsupported("truncated index extension");
            }
            let signature = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
            let size = be32(bytes, at + 4) as usize;
            let next = match (at + 8).checked_add(size) {
                Some(next) if next <= end => next,
                _ => return unsupported("truncated index extension"),
            };
            match &signature {
                b"link" => return unsupported("split index"),
                b"sdir" => return unsupported("sparse index"),
                b"TREE" | b"REUC" => {}
                // An uppercase signature marks an extension git may ignore; any other is required.
                s if !s[0].is_ascii_uppercase() => {
                    return unsupported("an unknown index extension");
                }
                _ => {}
            }
            out.push((signature, at..next));
            at = next;
        }
        Ok(out)
    }
}

/// The big-endian 32-bit word at `at`.
pub fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([bytes[at], bytes[at + 1]])
}

/// Git's offset varint (each continuation adds one before shifting); `None` when cut short or
/// too long for 64 bits.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut used = 0;
    let mut byte = *bytes.first()?;
    used += 1;
    let mut value = u64::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_mul(128)? | u64::from(byte & 0x7f);
    }
    Some((value, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::git_cli as git;

    /// Every entry's path, mode, id and stage, as the walk reads them.
    fn walked(bytes: &[u8]) -> Vec<String> {
        let mut walk = Entries::new(bytes, 20).unwrap();
        let mut out = Vec::new();
        while let Some(entry) = walk.next_entry().unwrap() {
            let id: String = entry.id.iter().map(|b| format!("{b:02x}")).collect();
            let path = String::from_utf8_lossy(walk.path()).into_owned();
            out.push(format!("{:o} {id} {}\t{path}", entry.mode, entry.stage));
        }
        walk.extensions().unwrap();
        out
    }

    #[test]
    fn every_version_reads_as_git_lists_it() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for f in ["a.txt", ".qwen/team-memory/MEMORY.md", "z/z.txt"] {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, f).unwrap();
        }
        git(dir.path(), &["add", "-A"]);
        // A path longer than the flags' 12-bit length (no file system holds it: index only).
        let long = format!("deep/{}f.md", format!("{}/", "n".repeat(200)).repeat(21));
        let blob = git(dir.path(), &["hash-object", "-w", "--stdin"]);
        let info = format!("100644,{},{long}", blob.trim());
        git(dir.path(), &["update-index", "--add", "--cacheinfo", &info]);
        git(dir.path(), &["commit", "-qm", "x"]);
        std::fs::write(dir.path().join("new.txt"), "n").unwrap();
        // Intent-to-add sets the extended flags (version 3 and later).
        git(dir.path(), &["add", "-N", "new.txt"]);
        for version in ["3", "4", "2"] {
            if version == "2" {
                git(dir.path(), &["reset", "-q", "--", "new.txt"]);
            }
            git(dir.path(), &["update-index", "--index-version", version]);
            let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
            let listed = git(dir.path(), &["ls-files", "--stage"]);
            assert_eq!(
                walked(&bytes),
                listed.lines().collect::<Vec<_>>(),
                "version {version}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(version in 2u8..5, count in 0u32..50, tail in proptest::collection::vec(0u8..=255, 0..400)) {
            let mut bytes = b"DIRC\0\0\0".to_vec();
            bytes.push(version);
            bytes.extend_from_slice(&count.to_be_bytes());
            bytes.extend_from_slice(&tail);
            if let Ok(mut walk) = Entries::new(&bytes, 20) {
                while let Ok(Some(_)) = walk.next_entry() {}
                let _ = walk.extensions();
            }
        }
    }
}
