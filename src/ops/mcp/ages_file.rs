//! The ages a history walk found, kept in the git folder (`teammem-mcp-ages`) for the commit it
//! was made at, so that the next server started at the same `HEAD` reads them instead of
//! walking again (most of a start's work in a team folder with a long history).
//!
//! The last change of every file below a folder is a function of the commit alone (commits
//! never change) and of what bounds the history: the memory folders asked for, and a shallow
//! clone's boundary or grafts. The file names all of them ([`key`]); a file for another commit
//! or key, of another format, torn or edited, is not used (the history is walked again and
//! the file rewritten). It is written whole to a temporary name and renamed over.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use crate::domain::store;
use crate::git::plain::{hex, object_id};

use super::cache::{CacheChange, CacheChanges};

use crate::git::recovery::MCP_AGES;

const HEADER: &str = "teammem-ages 1";

/// What besides the commit decides the ages: the memory folders (relative to the work tree),
/// and the files that bound the history (`shallow`, `info/grafts`), as one hex digest.
pub(super) fn key(git_dir: &Path, dirs: &[String]) -> String {
    use sha1::{Digest, Sha1};
    let mut hash = Sha1::new();
    for dir in dirs {
        hash.update(b"dir\0");
        hash.update(dir.as_bytes());
        hash.update(b"\0");
    }
    for bound in ["shallow", "info/grafts"] {
        hash.update(bound.as_bytes());
        match std::fs::read(git_dir.join(bound)) {
            Ok(bytes) => {
                hash.update(b"\0present\0");
                hash.update(&bytes);
            }
            Err(_) => hash.update(b"\0absent\0"),
        }
    }
    hex(&hash.finalize())
}

/// The ages kept for `head` under `key`; `None` when the file is missing, for another commit
/// or key, or not whole.
pub(super) fn load(git_dir: &Path, head: &str, key: &str) -> Option<CacheChanges> {
    let bytes = std::fs::read(git_dir.join(MCP_AGES)).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    // The last line checks every byte before it.
    let body_len = text.trim_end_matches('\n').rfind('\n')? + 1;
    let (body, check) = text.split_at(body_len);
    if check != format!("check {:016x} {}\n", checksum(body.as_bytes()), body.len()) {
        return None;
    }
    let mut lines = body.strip_suffix('\n')?.split('\n');
    if lines.next()? != HEADER
        || lines.next()? != format!("head {head}")
        || lines.next()? != format!("key {key}")
    {
        return None;
    }
    let commits: usize = lines.next()?.strip_prefix("commits ")?.parse().ok()?;
    let mut changes = Vec::with_capacity(commits.min(1 << 20));
    for _ in 0..commits {
        let (commit, rest) = lines.next()?.split_once(' ')?;
        let (time, author) = rest.split_once(' ')?;
        changes.push(Arc::new(CacheChange {
            commit: object_id(commit)?,
            time: time.parse().ok()?,
            author: author.to_string(),
        }));
    }
    let files: usize = lines.next()?.strip_prefix("files ")?.parse().ok()?;
    let mut out = HashMap::with_capacity(files.min(1 << 22));
    for _ in 0..files {
        // `<commit index> <40 hex digits> <path>`, read by position.
        let line = lines.next()?;
        let space = memchr::memchr(b' ', line.as_bytes())?;
        let path = line.get(space + 41..)?.strip_prefix(' ')?;
        let blob = object_id(line.get(space + 1..space + 41)?)?;
        let change = changes.get(line.get(..space)?.parse::<usize>().ok()?)?;
        out.insert(path.to_string(), (blob, Arc::clone(change)));
    }
    lines.next().is_none().then_some(out)
}

/// The entries of `paths` alone, for a process that shows a few memories: each is found by a
/// binary search of the file's lines (they are sorted by path), so the lines of the other
/// memories are neither parsed nor checksummed. The file must still be whole (its last line
/// gives its length) and for `head` and `key`; `None` otherwise.
pub(super) fn load_paths(
    git_dir: &Path,
    head: &str,
    key: &str,
    paths: &[&str],
) -> Option<CacheChanges> {
    let bytes = std::fs::read(git_dir.join(MCP_AGES)).ok()?;
    let trimmed = bytes.strip_suffix(b"\n")?;
    let body_len = memchr::memrchr(b'\n', trimmed)? + 1;
    let check = std::str::from_utf8(&trimmed[body_len..]).ok()?;
    let (_, length) = check.strip_prefix("check ")?.split_once(' ')?;
    if length.parse::<usize>().ok()? != body_len {
        return None;
    }
    let body = &bytes[..body_len];
    let mut at = 0;
    let mut line = || {
        let end = at + memchr::memchr(b'\n', body.get(at..)?)?;
        let out = std::str::from_utf8(&body[at..end]).ok();
        at = end + 1;
        out
    };
    if line()? != HEADER
        || line()?.strip_prefix("head ")? != head
        || line()?.strip_prefix("key ")? != key
    {
        return None;
    }
    let commits: usize = line()?.strip_prefix("commits ")?.parse().ok()?;
    let mut commit_lines = Vec::with_capacity(commits.min(1 << 20));
    for _ in 0..commits {
        commit_lines.push(line()?);
    }
    line()?.strip_prefix("files ")?;
    let files = &body[at..];
    let mut out = HashMap::with_capacity(paths.len());
    for path in paths {
        let Some(found) = sorted_line(files, path.as_bytes()) else {
            continue;
        };
        let found = std::str::from_utf8(found).ok()?;
        let (index, rest) = found.split_once(' ')?;
        let blob = object_id(rest.get(..40)?)?;
        let (commit, rest) = commit_lines
            .get(index.parse::<usize>().ok()?)?
            .split_once(' ')?;
        let (time, author) = rest.split_once(' ')?;
        let change = Arc::new(CacheChange {
            commit: object_id(commit)?,
            time: time.parse().ok()?,
            author: author.to_string(),
        });
        out.insert(path.to_string(), (blob, change));
    }
    Some(out)
}

/// The path of a file line (`<commit index> <40 hex digits> <path>`).
fn line_path(line: &[u8]) -> Option<&[u8]> {
    let space = memchr::memchr(b' ', line)?;
    line.get(space + 41..)?.strip_prefix(b" ")
}

/// The file line of `path` in `lines` (whole lines, each ended by a newline, sorted by path),
/// by binary search.
fn sorted_line<'a>(lines: &'a [u8], path: &[u8]) -> Option<&'a [u8]> {
    // `low` and `high` are always at the start of a line (or the end).
    let (mut low, mut high) = (0, lines.len());
    while low < high {
        let mid = low + (high - low) / 2;
        let start = memchr::memrchr(b'\n', &lines[low..mid]).map_or(low, |i| low + i + 1);
        let end = start + memchr::memchr(b'\n', &lines[start..high])?;
        let line = &lines[start..end];
        match line_path(line)?.cmp(path) {
            std::cmp::Ordering::Equal => return Some(line),
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    None
}

/// Keeps `changes`, found at `head` under `key`, for the next server. Best effort: a folder
/// that cannot be written, or a path or name that cannot sit on one line, keeps nothing.
pub(super) fn store(git_dir: &Path, head: &str, key: &str, changes: &CacheChanges) {
    let mut commits: Vec<&Arc<CacheChange>> = Vec::new();
    let mut index: HashMap<*const CacheChange, usize> = HashMap::new();
    let mut files: Vec<(&String, &[u8; 20], usize)> = Vec::with_capacity(changes.len());
    for (path, (blob, change)) in changes {
        if path.contains('\n') || change.author.contains('\n') {
            return;
        }
        let at = *index.entry(Arc::as_ptr(change)).or_insert_with(|| {
            commits.push(change);
            commits.len() - 1
        });
        files.push((path, blob, at));
    }
    // The same ages give the same bytes.
    files.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut text = String::with_capacity(64 * (files.len() + commits.len()) + 128);
    let _ = writeln!(
        text,
        "{HEADER}\nhead {head}\nkey {key}\ncommits {}",
        commits.len()
    );
    for change in &commits {
        let _ = writeln!(
            text,
            "{} {} {}",
            hex(&change.commit),
            change.time,
            change.author
        );
    }
    let _ = writeln!(text, "files {}", files.len());
    for (path, blob, at) in files {
        let _ = writeln!(text, "{at} {} {path}", hex(blob));
    }
    let _ = writeln!(
        text,
        "check {:016x} {}",
        checksum(text.as_bytes()),
        text.len()
    );
    let _ = store::write_cache(&git_dir.join(MCP_AGES), text.as_bytes());
}

/// A fast 64-bit checksum, against a torn or edited file (not against an attacker: the file
/// is the user's own, in their git folder).
fn checksum(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut hash = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash ^ u64::from_le_bytes(word))
            .wrapping_mul(PRIME)
            .rotate_left(29);
    }
    for &b in chunks.remainder() {
        hash = (hash ^ u64::from(b)).wrapping_mul(PRIME).rotate_left(29);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CacheChanges {
        let alice = Arc::new(CacheChange {
            commit: [1; 20],
            time: 1_000,
            author: "Alice Ñ".into(),
        });
        let bob = Arc::new(CacheChange {
            commit: [2; 20],
            time: 2_000,
            author: "Bob".into(),
        });
        HashMap::from([
            (
                ".qwen/team-memory/a b.md".to_string(),
                ([3; 20], Arc::clone(&alice)),
            ),
            (".qwen/team-memory/c.md".to_string(), ([4; 20], alice)),
            (".qwen/team-memory/d.md".to_string(), ([5; 20], bob)),
        ])
    }

    #[test]
    fn what_is_stored_is_loaded_only_for_its_commit_and_key() {
        let tmp = tempfile::tempdir().unwrap();
        let git_dir = tmp.path();
        let head = "ab".repeat(20);
        let key = key(git_dir, &[".qwen/team-memory".into()]);
        assert_eq!(load(git_dir, &head, &key), None);
        store(git_dir, &head, &key, &sample());
        assert_eq!(load(git_dir, &head, &key), Some(sample()));
        // Loading a few paths gives exactly their entries.
        let mut some = sample();
        some.remove(".qwen/team-memory/c.md");
        let wanted = [
            ".qwen/team-memory/d.md",
            ".qwen/team-memory/a b.md",
            ".qwen/team-memory/absent.md",
        ];
        assert_eq!(load_paths(git_dir, &head, &key, &wanted), Some(some));
        assert_eq!(load_paths(git_dir, &"cd".repeat(20), &key, &wanted), None);
        assert_eq!(load(git_dir, &"cd".repeat(20), &key), None);
        // Another folder, or a shallow boundary that moved, is another key.
        assert_ne!(key, super::key(git_dir, &["other".into()]));
        std::fs::write(git_dir.join("shallow"), "ef".repeat(20) + "\n").unwrap();
        let shallow = super::key(git_dir, &[".qwen/team-memory".into()]);
        assert_ne!(key, shallow);
        assert_eq!(load(git_dir, &head, &shallow), None);
    }

    #[test]
    fn a_few_paths_are_found_by_search_in_a_large_file_and_not_in_a_torn_one() {
        let tmp = tempfile::tempdir().unwrap();
        let git_dir = tmp.path();
        let (head, key) = ("ab".repeat(20), key(git_dir, &[]));
        let change = |n: i64| {
            Arc::new(CacheChange {
                commit: [n as u8; 20],
                time: n,
                author: format!("Author {n}"),
            })
        };
        let all: CacheChanges = (0..2_000)
            .map(|n| {
                (
                    format!("team/{}/m-{n}.md", n % 7),
                    ([n as u8; 20], change(n % 5)),
                )
            })
            .collect();
        store(git_dir, &head, &key, &all);
        let mut paths: Vec<&str> = all.keys().map(String::as_str).collect();
        paths.sort();
        for path in paths
            .iter()
            .step_by(37)
            .chain([&paths[0], &paths[paths.len() - 1]])
        {
            let found = load_paths(git_dir, &head, &key, &[path]).unwrap();
            assert_eq!(found.get(*path), all.get(*path), "{path}");
        }
        let missing = ["team/0/m-0.mdx", "a", "zzz", "team/3/m-1.md"];
        assert_eq!(
            load_paths(git_dir, &head, &key, &missing),
            Some(HashMap::new())
        );
        let file = git_dir.join(MCP_AGES);
        let whole = std::fs::read(&file).unwrap();
        std::fs::write(&file, &whole[..whole.len() - 100]).unwrap();
        assert_eq!(load_paths(git_dir, &head, &key, &paths[..3]), None);
    }

    #[test]
    fn a_torn_or_edited_file_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let git_dir = tmp.path();
        let head = "ab".repeat(20);
        let key = key(git_dir, &[]);
        store(git_dir, &head, &key, &sample());
        let path = git_dir.join(MCP_AGES);
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        assert_eq!(load(git_dir, &head, &key), None);
        std::fs::write(&path, whole.replace("2000 Bob", "2001 Bob")).unwrap();
        assert_eq!(load(git_dir, &head, &key), None);
        std::fs::write(&path, &whole).unwrap();
        assert_eq!(load(git_dir, &head, &key), Some(sample()));
    }
}
