//! The commit `HEAD` names, read from the git folder's own files without starting libgit2
//! (whose OpenSSL set-up alone costs more than a warm lookup). Only the plain layout is read:
//! `HEAD` holding a commit id or `ref: refs/...`, that ref loose or in `packed-refs`, and no
//! extension in the config; anything else (a linked worktree's common folder, a symbolic ref
//! to a symbolic ref, reftable, another object format) answers "ask libgit2".

use std::io::ErrorKind;
use std::path::Path;

/// What `HEAD` is, read plainly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlainHead {
    /// The object id `HEAD` resolves to (40 lowercase hex digits).
    At(String),
    /// `HEAD` names a branch with no commit yet.
    Unborn,
}

/// `HEAD` of the git folder `git_dir`; `None` when its layout is not the plain one (then
/// libgit2 must be asked).
pub fn read(git_dir: &Path) -> Option<PlainHead> {
    if git_dir.join("commondir").exists() || has_extension(git_dir)? {
        return None;
    }
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim_end();
    if is_object_id(head) {
        return Some(PlainHead::At(head.to_string()));
    }
    let name = head.strip_prefix("ref: ")?.trim();
    if !name.starts_with("refs/")
        || name
            .split('/')
            .any(|part| part.is_empty() || part.starts_with('.'))
        || name.contains(['\\', '\0', ' ', ':'])
    {
        return None;
    }
    match std::fs::read_to_string(git_dir.join(name)) {
        Ok(loose) => {
            let id = loose.trim_end();
            // A symbolic ref to another ref, or a torn file: libgit2's rules.
            is_object_id(id).then(|| PlainHead::At(id.to_string()))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => packed(git_dir, name),
        Err(_) => None,
    }
}

/// The id of `name` in `packed-refs`; unborn when neither file holds it.
fn packed(git_dir: &Path, name: &str) -> Option<PlainHead> {
    let text = match std::fs::read_to_string(git_dir.join("packed-refs")) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Some(PlainHead::Unborn),
        Err(_) => return None,
    };
    for line in text.lines() {
        if line.starts_with('#') || line.starts_with('^') {
            continue;
        }
        let (id, line_name) = line.split_once(' ')?;
        if line_name == name {
            return is_object_id(id).then(|| PlainHead::At(id.to_string()));
        }
    }
    Some(PlainHead::Unborn)
}

/// Whether the repository's config names an extension (reftable, another object format, a
/// work tree config): `None` when the config cannot be read.
fn has_extension(git_dir: &Path) -> Option<bool> {
    let config = match std::fs::read_to_string(git_dir.join("config")) {
        Ok(config) => config,
        Err(e) if e.kind() == ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
    };
    Some(config.lines().any(|line| {
        let line: String = line
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        line.starts_with("[extensions") || line.starts_with("[include")
    }))
}

fn is_object_id(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// What `git rev-parse HEAD` says, through a loose ref, `packed-refs`, a detached `HEAD`
    /// and an unborn branch; a linked worktree is left to libgit2.
    #[test]
    fn head_is_what_git_says_or_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git(root, &["init", "-q", "-b", "main"]);
        let dot_git = root.join(".git");
        assert_eq!(read(&dot_git), Some(PlainHead::Unborn));
        git(root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let one = git(root, &["rev-parse", "HEAD"]);
        assert_eq!(read(&dot_git), Some(PlainHead::At(one.clone())));
        git(root, &["pack-refs", "--all"]);
        assert!(!dot_git.join("refs/heads/main").exists());
        assert_eq!(read(&dot_git), Some(PlainHead::At(one.clone())));
        git(root, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = git(root, &["rev-parse", "HEAD"]);
        assert_ne!(one, two);
        assert_eq!(read(&dot_git), Some(PlainHead::At(two)));
        git(root, &["checkout", "-q", "--detach", &one]);
        assert_eq!(read(&dot_git), Some(PlainHead::At(one)));
        let linked = root.join("linked");
        git(root, &["worktree", "add", "-q", "linked", "main"]);
        let linked_git = git(&linked, &["rev-parse", "--absolute-git-dir"]);
        assert_eq!(read(Path::new(&linked_git)), None);
    }
}
