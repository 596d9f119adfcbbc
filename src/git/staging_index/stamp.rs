//! A file's stat data, taken from its metadata in one place: what tells whether the file
//! changed since it was read, and what git keeps of it in an index entry.

use std::fs;
use std::os::unix::fs::MetadataExt;

/// What a stat of a file says: its size, times, inode and owner. Equal stamps mean the file
/// was not written to in between (unless within the file system's timestamp tick: a write
/// also moves ctime, which an editor cannot put back). The stamp of nothing
/// ([`FileStamp::default`], all zeros) written into an index entry makes git compare the
/// file's contents instead of trusting its stat data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the Unix epoch.
    pub mtime: (i64, i64),
    /// Status change time: seconds and nanoseconds since the Unix epoch.
    pub ctime: (i64, i64),
    /// The device holding the file.
    pub dev: u64,
    /// Inode number: a file replaced by a rename gets a new one.
    pub ino: u64,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
}

impl FileStamp {
    /// The stamp of a stat result (of the file itself, or of what a symlink points at,
    /// whichever the caller asked for).
    pub fn of(meta: &fs::Metadata) -> FileStamp {
        FileStamp {
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            dev: meta.dev(),
            ino: meta.ino(),
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }

    /// Whether both stamps are of the same file (device and inode), whatever its content.
    pub fn same_file(&self, other: &FileStamp) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }

    /// Whether both stamps are of the same version of a file that is only ever replaced by a
    /// rename, as git replaces its index: a new version has a new inode, and a new size or
    /// modification time besides.
    pub fn same_version(&self, other: &FileStamp) -> bool {
        self.ino == other.ino && self.size == other.size && self.mtime == other.mtime
    }

    /// The ten 32-bit words that open an index entry, in the file's order: ctime (seconds,
    /// nanoseconds), mtime (seconds, nanoseconds), device, inode, `mode`, owner, group, size.
    /// git keeps 32 bits of each field and drops the high bits the same way.
    pub fn index_words(&self, mode: u32) -> [u32; 10] {
        [
            self.ctime.0 as u32,
            self.ctime.1 as u32,
            self.mtime.0 as u32,
            self.mtime.1 as u32,
            self.dev as u32,
            self.ino as u32,
            mode,
            self.uid,
            self.gid,
            self.size as u32,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_changes_the_stamp_and_a_rename_changes_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, "one").unwrap();
        let first = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert_eq!(first.size, 3);
        assert_eq!(first, FileStamp::of(&fs::symlink_metadata(&path).unwrap()));

        fs::write(&path, "three").unwrap();
        let written = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert_ne!(first, written);
        assert!(first.same_file(&written));

        let next = dir.path().join("g");
        fs::write(&next, "three").unwrap();
        fs::rename(&next, &path).unwrap();
        let renamed = FileStamp::of(&fs::symlink_metadata(&path).unwrap());
        assert!(!renamed.same_version(&written));
        assert!(!renamed.same_file(&written));
    }

    #[test]
    fn index_words_keep_the_low_32_bits_as_git_does() {
        let stamp = FileStamp {
            size: (1 << 32) + 7,
            mtime: ((1 << 32) + 5, 999_999_999),
            ctime: (-1, 1),
            dev: (1 << 40) + 2,
            ino: (1 << 33) + 3,
            uid: 1000,
            gid: 100,
        };
        assert_eq!(
            stamp.index_words(0o100644),
            [u32::MAX, 1, 5, 999_999_999, 2, 3, 0o100644, 1000, 100, 7]
        );
        assert_eq!(FileStamp::default().index_words(0)[9], 0);
    }
}
