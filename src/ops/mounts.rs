//! Which file systems a folder's files live on, read from the process's mount table: whether
//! a short read of one of them can only mean its end.
//!
//! POSIX lets `read` return fewer bytes than asked for at any time, so reading a file whole
//! takes one more `read` that returns nothing. On the Linux file systems that read through the
//! page cache (ext4, xfs, btrfs, tmpfs and the like) a read of a regular file returns less only
//! at its end (or when the process is being killed), and that last `read` is a system call per
//! file for nothing: a tenth of a second's worth when scanning 15,000 memories. A network, FUSE
//! or other file system may return less in the middle, so a folder is read that way only when
//! every file system it and anything mounted below it live on is one of the known ones.

use std::path::{Path, PathBuf};

/// File systems on which a regular file's `read` returns fewer bytes than asked only at its
/// end: they read through the page cache and loop until the request is met. `overlay` reads
/// the file of the layer below, which is one of these in every container runtime's setup.
const WHOLE_READS: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay"];

/// Whether a short read of any regular file below `root` (followed to its canonical path)
/// means its end: `false` wherever that cannot be told (no mount table, another system).
pub(crate) fn short_read_is_end(root: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        let (Ok(table), Ok(root)) = (
            std::fs::read_to_string("/proc/self/mountinfo"),
            std::fs::canonicalize(root),
        ) else {
            return false;
        };
        all_known(&mounts(&table), &root)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        false
    }
}

/// A mount: where it is and the type of its file system.
#[derive(Debug, PartialEq)]
struct Mount {
    point: PathBuf,
    kind: String,
}

/// The mounts of a `/proc/self/mountinfo` text; a line not of its shape is left out (and so
/// can only make [`all_known`] answer `false` for what it would have covered, never `true`:
/// see there).
fn mounts(table: &str) -> Vec<Mount> {
    table
        .lines()
        .filter_map(|line| {
            // `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`:
            // the fifth field is the mount point, the first after ` - ` the type.
            let (fields, after) = line.split_once(" - ")?;
            let point = fields.split(' ').nth(4)?;
            let kind = after.split(' ').next()?;
            Some(Mount {
                point: PathBuf::from(unescape(point)),
                kind: kind.to_string(),
            })
        })
        .collect()
}

/// A mount point as the kernel writes it: space, tab, line end and backslash as `\` and three
/// octal digits.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| {
            bytes[i] == b'\\' && d[0] <= b'3' && d.iter().all(|b| (b'0'..=b'7').contains(b))
        });
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') << 6 | (d[1] - b'0') << 3 | (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the file system `root` lies on, and every one mounted below it, is one of
/// [`WHOLE_READS`]. The one `root` lies on is the last listed mount whose point holds it (a
/// later mount on the same point hides the earlier); with none listed the answer is `false`.
fn all_known(mounts: &[Mount], root: &Path) -> bool {
    let known = |m: &Mount| WHOLE_READS.contains(&m.kind.as_str());
    let Some(on) = mounts.iter().rposition(|m| root.starts_with(&m.point)) else {
        return false;
    };
    known(&mounts[on])
        && mounts
            .iter()
            .filter(|m| m.point.starts_with(root) && m.point != root)
            .all(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:21 / /proc rw,nosuid shared:2 - proc proc rw
24 22 0:22 / /tmp rw shared:3 - tmpfs tmpfs rw
25 22 0:40 / /work/team\\040notes rw shared:4 - fuse.sshfs host:/notes rw
26 22 0:41 / /srv/repo rw shared:5 - xfs /dev/vdb rw
27 26 0:42 / /srv/repo/vendor rw shared:6 - nfs4 host:/vendor rw
28 22 0:43 / /mnt rw shared:7 - nfs4 host:/mnt rw
29 28 0:44 / /mnt rw shared:8 - ext4 /dev/vdc rw
";

    #[test]
    fn a_mount_table_is_read_with_its_escapes() {
        let mounts = mounts(TABLE);
        assert_eq!(mounts.len(), 8);
        assert_eq!(
            mounts[3],
            Mount {
                point: PathBuf::from("/work/team notes"),
                kind: "fuse.sshfs".to_string()
            }
        );
        assert_eq!(unescape(r"a\134b\011c\012"), "a\\b\tc\n");
        // Not an escape: left as it stands.
        assert_eq!(unescape(r"a\9b\4"), r"a\9b\4");
        assert!(super::mounts("not a mount line\n\n").is_empty());
    }

    #[test]
    fn only_folders_wholly_on_known_file_systems_read_short_as_the_end() {
        let mounts = mounts(TABLE);
        let whole = |root: &str| all_known(&mounts, Path::new(root));
        assert!(whole("/home/dev/project"));
        assert!(whole("/tmp/x"));
        // The folder is on a FUSE mount, or holds one, or holds an NFS mount.
        assert!(!whole("/work/team notes/a"));
        assert!(!whole("/work"));
        assert!(!whole("/srv/repo"));
        assert!(whole("/srv/repo/src"));
        assert!(!whole("/srv/repo/vendor/x"));
        assert!(!whole("/"));
        // The later mount on the same point is the one seen.
        assert!(whole("/mnt/data"));
        assert!(!all_known(&[], Path::new("/home")));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_machines_table_is_read() {
        assert!(
            !super::mounts(&std::fs::read_to_string("/proc/self/mountinfo").unwrap()).is_empty()
        );
    }
}
