//! The entries of a team folder's tree as a checkout would meet them, read byte for byte.
//!
//! A teammate with the git CLI can push trees that no checkout can write safely: names git
//! refuses (`.git` in any case or NTFS spelling, `..`, a `/` inside a name), names the file
//! system refuses once teammem's temporary suffix is added, duplicate entries, symlinks,
//! gitlinks, names that are not UTF-8. Each such entry is told apart here so the rest of the
//! folder flows: [`list`] gives the files a merge can rebuild a tree from, [`diff`] the changes
//! between two trees with, for each incoming entry, why it cannot be written (if it cannot).
//! Only subtrees whose ids differ are read, so a diff costs what changed, not the folder's size.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use git2::{FileMode, Oid, Repository, Tree, TreeBuilder};

use super::GitError;
use super::remote::Deadline;
use crate::domain::scope::INDEX_FILE;

/// The longest file or folder name the work tree takes from the memory branch, in bytes.
/// Linux file systems allow 255 (`NAME_MAX`); teammem writes through a temporary name
/// `.<name>.<pid>-<attempt>.tmp` (up to 20 bytes more) and may keep an edit beside its file as
/// `<name>.conflict-<sha>.md` (20 bytes more), so a longer name could never be written safely.
pub const MAX_NAME_BYTES: usize = 255 - 20 - 20;

/// The longest path below the team folder the work tree takes, in bytes: far below `PATH_MAX`
/// (4096) whatever the checkout's own location.
pub const MAX_PATH_BYTES: usize = 1024;

/// One version of a file: its blob (or commit, for a gitlink) and git's mode.
pub type Version = (Oid, i32);

/// An entry that cannot be taken as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Its path relative to the team folder (invalid UTF-8 shown as `\u{FFFD}`).
    pub rel: String,
    /// Why, in the user's words.
    pub why: &'static str,
}

/// The files of a team folder tree that git can rebuild a tree from, and the entries it
/// cannot (which a merge leaves as the other side has them).
#[derive(Debug, Default)]
pub struct TreeListing {
    /// Files (blobs, symlinks, gitlinks) by path relative to the folder.
    pub files: BTreeMap<String, Version>,
    /// Entries skipped: a name git refuses, a duplicate, a name that is not UTF-8.
    pub refused: Vec<Refused>,
}

/// Tells which names libgit2 refuses in a tree, by asking it: the same check every later
/// tree write makes (`.git` in any case or NTFS spelling such as `GIT~1` or `.git.`, `..`, a
/// `/` inside a name), so what passes here never fails a merge or a record.
///
/// Each name is tried as a gitlink entry: libgit2 checks a gitlink's name as it checks any
/// entry's but never looks its commit up, so a check reads nothing from the object database.
/// (An entry of a blob made libgit2 open and inflate that blob's loose object for every name:
/// two file reads per memory, 100,000 at 50,000 memories, on every listing of the branch.)
pub struct NameCheck<'r> {
    builder: TreeBuilder<'r>,
    target: Oid,
}

impl<'r> NameCheck<'r> {
    /// A checker for trees of `repo`; writes nothing.
    pub fn new(repo: &'r Repository) -> Result<NameCheck<'r>, GitError> {
        let context = "preparing the tree entry check";
        let target =
            Oid::hash_object(git2::ObjectType::Blob, b"").map_err(|e| GitError::git(context, e))?;
        let builder = repo
            .treebuilder(None)
            .map_err(|e| GitError::git(context, e))?;
        Ok(NameCheck { builder, target })
    }

    /// Why git refuses `name` as a tree entry, if it does.
    pub fn refusal(&mut self, name: &[u8]) -> Option<&'static str> {
        let Ok(text) = std::str::from_utf8(name) else {
            return Some("the name is not valid UTF-8");
        };
        if text.is_empty() || text.contains(['/', '\\', '\0']) || text == "." || text == ".." {
            return Some("a name git refuses in a tree");
        }
        if text.chars().any(char::is_control) {
            // A tab, a line end or an escape sequence in a file name: refused by Windows, and
            // a way to forge lines wherever the name is printed.
            return Some("a name with a control character");
        }
        if is_hfs_dot_git(text) {
            return Some(
                "a name git refuses in a tree (.git on macOS, which ignores some characters)",
            );
        }
        self.git_refusal(text)
    }

    /// Why git's own checkout refuses the name `text` (a file or folder name, UTF-8), if it
    /// does: `.git` in any case or NTFS spelling (`GIT~1`, `.git.`, `.git `), `.`, `..`. The
    /// names [`NameCheck::refusal`] adds (control characters, macOS's `.git`) git writes.
    pub fn git_refusal(&mut self, text: &str) -> Option<&'static str> {
        if text.is_empty() || text == "." || text == ".." {
            return Some("a name git refuses in a tree");
        }
        if self
            .builder
            .insert(text, self.target, i32::from(FileMode::Commit))
            .is_err()
        {
            return Some("a name git refuses in a tree (.git)");
        }
        let _ = self.builder.remove(text);
        None
    }
}

/// An in-memory libgit2 repository (no folder, no object format of its own), only to build a
/// [`NameCheck`] where no repository libgit2 opens is at hand (the git path): the same answers.
pub fn name_check_repository() -> Result<Repository, GitError> {
    let context = "preparing the tree entry check";
    let odb = git2::Odb::new().map_err(|e| GitError::git(context, e))?;
    odb.add_new_mempack_backend(1)
        .map_err(|e| GitError::git(context, e))?;
    Repository::from_odb(odb).map_err(|e| GitError::git(context, e))
}

/// Whether macOS (HFS+) reads `name` as `.git`: it ignores these code points in names and
/// compares them without case (git's `is_hfs_dotgit`, which `core.protectHFS` turns on only on
/// macOS; libgit2 checks it only there too).
fn is_hfs_dot_git(name: &str) -> bool {
    let ignorable = |c: &char| matches!(*c, '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}');
    let kept: String = name.chars().filter(|c| !ignorable(c)).collect();
    kept.len() < name.len() && kept.eq_ignore_ascii_case(".git")
}

/// The modes of the entries one side of a diff names, read from that side's tree: as libgit2
/// reads a tree entry, any regular-file mode is `100644` or `100755`. git2's `DiffFile::mode`
/// panics on a mode outside its list (`100600`, which a crafted tree can hold); a tree entry's
/// never does. Each folder is read once (a folder of 10,000 entries read again for each of
/// them made a flood of folders quadratic), and an entry found by binary search in it.
pub struct SideModes<'r> {
    repo: &'r Repository,
    folders: HashMap<PathBuf, Option<Tree<'r>>>,
}

impl<'r> SideModes<'r> {
    /// The modes of the side diffed from `root` (`None`: an empty side).
    pub fn new(repo: &'r Repository, root: Option<&Tree<'r>>) -> Self {
        let mut folders = HashMap::new();
        folders.insert(PathBuf::new(), root.cloned());
        SideModes { repo, folders }
    }

    /// The mode of the entry `file` names on this side; `None` when it names none.
    pub fn mode(&mut self, file: &git2::DiffFile<'_>) -> Option<i32> {
        let path = file.path()?;
        let folder = self.folder(path.parent().unwrap_or(Path::new("")))?;
        let name = path.file_name()?.as_encoded_bytes();
        folder.get_name_bytes(name).map(|entry| entry.filemode())
    }

    fn folder(&mut self, path: &Path) -> Option<Tree<'r>> {
        if let Some(known) = self.folders.get(path) {
            return known.clone();
        }
        let parent = self.folder(path.parent().unwrap_or(Path::new("")))?;
        let tree = path
            .file_name()
            .and_then(|name| parent.get_name_bytes(name.as_encoded_bytes()))
            .filter(|entry| entry.kind() == Some(git2::ObjectType::Tree))
            .and_then(|entry| self.repo.find_tree(entry.id()).ok());
        self.folders.insert(path.to_path_buf(), tree.clone());
        tree
    }
}

/// git2's [`FileMode`] for a tree entry's `mode` (as [`diff_side_mode`] or a tree entry
/// gives it): a folder, an executable file, a symlink, a gitlink, else a file.
pub fn file_mode(mode: i32) -> FileMode {
    match mode {
        0o040000 => FileMode::Tree,
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        0o160000 => FileMode::Commit,
        _ => FileMode::Blob,
    }
}

/// Every file of `team` (the team folder's tree) a merge can work with; entries git would
/// refuse are listed apart, with everything below them.
pub fn list(repo: &Repository, team: &Tree<'_>) -> Result<TreeListing, GitError> {
    list_within(repo, team, None)
}

/// How many entries [`list_within`] lists between two looks at the clock.
const CLOCK_EVERY: usize = 512;

/// [`list`], stopping with [`GitError::OutOfTime`] once `deadline` passes: a flood of
/// memories on the branch is listed within the sync's budget, or not at all.
pub fn list_within(
    repo: &Repository,
    team: &Tree<'_>,
    deadline: Option<Deadline>,
) -> Result<TreeListing, GitError> {
    let mut check = NameCheck::new(repo)?;
    let mut listing = TreeListing::default();
    let mut clock = Clock { deadline, seen: 0 };
    list_into(repo, team, "", &mut check, &mut clock, &mut listing)?;
    Ok(listing)
}

/// The deadline a listing looks at every [`CLOCK_EVERY`] entries.
pub(crate) struct Clock {
    deadline: Option<Deadline>,
    seen: usize,
}

impl Clock {
    /// A clock that stops a listing once `deadline` passes (never, for `None`).
    pub(crate) fn new(deadline: Option<Deadline>) -> Self {
        Clock { deadline, seen: 0 }
    }

    /// Counts one entry; [`GitError::OutOfTime`] when the deadline passed (looked at every
    /// [`CLOCK_EVERY`] entries).
    pub(crate) fn tick(&mut self) -> Result<(), GitError> {
        self.seen += 1;
        if self.seen % CLOCK_EVERY == 0 && self.deadline.is_some_and(|d| d.passed()) {
            return Err(GitError::OutOfTime {
                what: format!("listing the team memory ({} entries so far)", self.seen),
            });
        }
        Ok(())
    }
}

fn list_into(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
    check: &mut NameCheck<'_>,
    clock: &mut Clock,
    out: &mut TreeListing,
) -> Result<(), GitError> {
    for (name, versions) in &entries_of(tree) {
        list_entry(repo, prefix, name, versions, check, clock, out)?;
    }
    Ok(())
}

/// Lists the entry `name` of a folder at `prefix` (its `versions`, more than one for a
/// duplicate) into `out` as [`list`] does: a file, everything below a folder, or a refusal.
pub(crate) fn list_entry(
    repo: &Repository,
    prefix: &str,
    name: &[u8],
    versions: &[Version],
    check: &mut NameCheck<'_>,
    clock: &mut Clock,
    out: &mut TreeListing,
) -> Result<(), GitError> {
    clock.tick()?;
    let rel = format!("{prefix}{}", String::from_utf8_lossy(name));
    if let Some(why) = listing_refusal(prefix, name, versions, check) {
        out.refused.push(Refused { rel, why });
        return Ok(());
    }
    let (id, mode) = versions[0];
    if is_tree(mode) {
        let sub = find_tree(repo, id, &rel)?;
        list_into(repo, &sub, &format!("{rel}/"), check, clock, out)?;
    } else {
        out.files.insert(rel, (id, mode));
    }
    Ok(())
}

/// Why [`list`] leaves the entry `name` of the folder at `prefix` out (with everything below
/// it), if it does: a duplicate, a name git refuses, a folder where `MEMORY.md` belongs.
fn listing_refusal(
    prefix: &str,
    name: &[u8],
    versions: &[Version],
    check: &mut NameCheck<'_>,
) -> Option<&'static str> {
    if versions.len() != 1 {
        return Some("a duplicate entry: the tree names it more than once");
    }
    if let Some(why) = check.refusal(name) {
        return Some(why);
    }
    if prefix.is_empty() && name == INDEX_FILE.as_bytes() && is_tree(versions[0].1) {
        return Some("a folder where the generated MEMORY.md belongs");
    }
    None
}

/// The entry [`list`] reaches at `rel` in `team` (the team folder's tree; `""` is the folder
/// itself), if it reaches one: a file it lists, or a folder it lists the files of. A look
/// along the path only, not a listing.
pub(crate) fn listed_entry(
    repo: &Repository,
    team: &Tree<'_>,
    rel: &str,
    check: &mut NameCheck<'_>,
) -> Result<Option<Version>, GitError> {
    let mut here = (team.id(), i32::from(FileMode::Tree));
    if rel.is_empty() {
        return Ok(Some(here));
    }
    let mut prefix = String::new();
    for part in rel.split('/') {
        if !is_tree(here.1) {
            return Ok(None);
        }
        let tree = find_tree(repo, here.0, &prefix)?;
        let versions: Vec<Version> = tree
            .iter()
            .filter(|e| e.name_bytes() == part.as_bytes())
            .map(|e| (e.id(), e.filemode()))
            .collect();
        if versions.is_empty()
            || listing_refusal(&prefix, part.as_bytes(), &versions, check).is_some()
        {
            return Ok(None);
        }
        here = versions[0];
        prefix.push_str(part);
        prefix.push('/');
    }
    Ok(Some(here))
}

/// Visits the files [`list`] gives for `team`, in the UTF-16 order of their paths (the order
/// Qwen Code lists memories in), until `visit` says stop (`false`). Each folder is read when
/// the walk reaches it, and its names checked as they are visited: a walk that stops early
/// reads only the folders before that point. [`GitError::OutOfTime`] once `deadline` passes.
pub fn walk_in_path_order(
    repo: &Repository,
    team: &Tree<'_>,
    deadline: Option<Deadline>,
    visit: &mut dyn FnMut(&str, Version) -> Result<bool, GitError>,
) -> Result<(), GitError> {
    let mut check = NameCheck::new(repo)?;
    let mut clock = Clock { deadline, seen: 0 };
    walk_into(repo, team, "", &mut check, &mut clock, visit).map(|_| ())
}

/// One folder of [`walk_in_path_order`]; `false` once the visit said stop.
fn walk_into(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
    check: &mut NameCheck<'_>,
    clock: &mut Clock,
    visit: &mut dyn FnMut(&str, Version) -> Result<bool, GitError>,
) -> Result<bool, GitError> {
    // A folder's path sorts as its name and a `/`: comparing these keys compares the full
    // paths below them, as no name holds a `/`. A name that is not UTF-8 is refused anyway.
    let mut entries: Vec<(String, Vec<u8>, Vec<Version>)> = entries_of(tree)
        .into_iter()
        .filter_map(|(name, versions)| {
            let text = std::str::from_utf8(&name).ok()?;
            let key = if versions.len() == 1 && is_tree(versions[0].1) {
                format!("{text}/")
            } else {
                text.to_string()
            };
            Some((key, name, versions))
        })
        .collect();
    entries.sort_by(|a, b| crate::domain::memory_index::utf16_cmp(&a.0, &b.0));
    for (_, name, versions) in &entries {
        clock.tick()?;
        if listing_refusal(prefix, name, versions, check).is_some() {
            continue;
        }
        let rel = format!("{prefix}{}", String::from_utf8_lossy(name));
        let (id, mode) = versions[0];
        let go_on = if is_tree(mode) {
            let sub = find_tree(repo, id, &rel)?;
            walk_into(repo, &sub, &format!("{rel}/"), check, clock, visit)?
        } else {
            visit(&rel, (id, mode))?
        };
        if !go_on {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One path that differs between two team folder trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryChange {
    /// Path relative to the folder.
    pub rel: String,
    /// The file in the old tree (`None`: not a file there).
    pub old: Option<Version>,
    /// The file in the new tree (`None`: removed, or refused — see `refused`).
    pub new: Option<Version>,
    /// Why the new tree's entry here cannot be written into a work tree, if it cannot. A
    /// refused folder is one change for everything below it.
    pub refused: Option<&'static str>,
}

/// The changes from `old` to `new` (team folder trees; `None`: empty), in path order. Only
/// subtrees whose ids differ are read. An incoming entry a checkout cannot write safely — see
/// the module doc — comes with its reason and no `new` version; the old tree's file at that
/// path (if any) is reported so the caller can keep it.
pub fn diff(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
) -> Result<Vec<EntryChange>, GitError> {
    diff_within(repo, old, new, None)
}

/// [`diff`], stopping with [`GitError::OutOfTime`] once `deadline` passes (looked at every
/// [`CLOCK_EVERY`] entries read, so a flood arriving at once is bounded too).
pub fn diff_within(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    deadline: Option<Deadline>,
) -> Result<Vec<EntryChange>, GitError> {
    let mut check = NameCheck::new(repo)?;
    let mut clock = Clock { deadline, seen: 0 };
    let mut out = Vec::new();
    diff_into(repo, old, new, "", &mut check, &mut clock, &mut out)?;
    Ok(out)
}

/// A folder's entries by name; a name with more than one version is a duplicate.
pub(crate) type Entries = BTreeMap<Vec<u8>, Vec<Version>>;

/// The entries of `tree`, by name.
pub(crate) fn entries_of(tree: &Tree<'_>) -> Entries {
    let mut entries: Entries = BTreeMap::new();
    for entry in tree.iter() {
        entries
            .entry(entry.name_bytes().to_vec())
            .or_default()
            .push((entry.id(), entry.filemode()));
    }
    entries
}

fn find_tree<'r>(repo: &'r Repository, id: Oid, rel: &str) -> Result<Tree<'r>, GitError> {
    repo.find_tree(id)
        .map_err(|e| GitError::git(format!("reading the folder {rel} of the team memory"), e))
}

/// Whether `mode` is a folder's.
pub(crate) fn is_tree(mode: i32) -> bool {
    mode == i32::from(FileMode::Tree)
}

#[allow(clippy::too_many_arguments)]
fn diff_into(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &str,
    check: &mut NameCheck<'_>,
    clock: &mut Clock,
    out: &mut Vec<EntryChange>,
) -> Result<(), GitError> {
    let old_entries = old.map(entries_of).unwrap_or_default();
    let new_entries = new.map(entries_of).unwrap_or_default();
    let names: BTreeSet<&Vec<u8>> = old_entries.keys().chain(new_entries.keys()).collect();
    for name in names {
        clock.tick()?;
        let o = old_entries.get(name).filter(|v| v.len() == 1).map(|v| v[0]);
        let n = new_entries.get(name);
        if n.is_some_and(|v| v.len() == 1) && n.map(|v| v[0]) == o {
            continue;
        }
        let rel = format!("{prefix}{}", String::from_utf8_lossy(name));
        let refused = match n {
            None => None,
            Some(v) if v.len() > 1 => Some("a duplicate entry: the tree names it more than once"),
            Some(v) if prefix.is_empty() && name == INDEX_FILE.as_bytes() && is_tree(v[0].1) => {
                Some("a folder where the generated MEMORY.md belongs")
            }
            Some(v) => check
                .refusal(name)
                .or_else(|| entry_refusal(name, &rel, v[0].1)),
        };
        // What the old tree holds here, as files (a folder: everything below it).
        let mut old_files = BTreeMap::new();
        if let Some((id, mode)) = o {
            if is_tree(mode) {
                let sub = find_tree(repo, id, &rel)?;
                old_files = list_within(repo, &sub, clock.deadline)?
                    .files
                    .into_iter()
                    .map(|(k, v)| (format!("{rel}/{k}"), v))
                    .collect();
            } else {
                old_files.insert(rel.clone(), (id, mode));
            }
        }
        if let Some(why) = refused {
            // Withheld whole; the files the old tree held here (if any) stay as they were.
            out.push(EntryChange {
                rel: rel.clone(),
                old: old_files.remove(&rel),
                new: None,
                refused: Some(why),
            });
            continue;
        }
        let n = n.map(|v| v[0]);
        match (o, n) {
            (Some((oid, om)), Some((nid, nm))) if is_tree(om) && is_tree(nm) => {
                let (ot, nt) = (find_tree(repo, oid, &rel)?, find_tree(repo, nid, &rel)?);
                diff_into(
                    repo,
                    Some(&ot),
                    Some(&nt),
                    &format!("{rel}/"),
                    check,
                    clock,
                    out,
                )?;
            }
            (_, Some((nid, nm))) if is_tree(nm) => {
                out.extend(removed(old_files));
                let nt = find_tree(repo, nid, &rel)?;
                diff_into(repo, None, Some(&nt), &format!("{rel}/"), check, clock, out)?;
            }
            (_, new_file) => {
                let here = old_files.remove(&rel);
                out.extend(removed(old_files));
                if here != new_file {
                    out.push(EntryChange {
                        rel,
                        old: here,
                        new: new_file,
                        refused: None,
                    });
                }
            }
        }
    }
    Ok(())
}

/// Each of `files` (what the old tree held where the new one holds something else) as removed.
fn removed(files: BTreeMap<String, Version>) -> impl Iterator<Item = EntryChange> {
    files.into_iter().map(|(rel, version)| EntryChange {
        rel,
        old: Some(version),
        new: None,
        refused: None,
    })
}

/// Why an entry git accepts still cannot be written into a work tree: its kind, or a name
/// or path too long for the file system.
pub(crate) fn entry_refusal(name: &[u8], rel: &str, mode: i32) -> Option<&'static str> {
    if name.len() > MAX_NAME_BYTES {
        return Some("a name too long for the file system (with teammem's temporary suffix)");
    }
    if rel.len() > MAX_PATH_BYTES {
        return Some("a path too long for the file system");
    }
    match mode {
        m if m == i32::from(FileMode::Link) => Some("a symlink: never written into the work tree"),
        m if m == i32::from(FileMode::Commit) => {
            Some("a gitlink (submodule): never written into the work tree")
        }
        m if m == i32::from(FileMode::Tree)
            || m == i32::from(FileMode::Blob)
            || m == i32::from(FileMode::BlobExecutable) =>
        {
            None
        }
        _ => Some("an entry of unknown kind"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_refused_names_are_told_apart() {
        let (_dir, repo) = crate::git::scratch_repo();
        let mut check = NameCheck::new(&repo).unwrap();
        for bad in [
            &b".git"[..],
            b".GIT",
            b".Git",
            b"..",
            b".",
            b"",
            b"a/b",
            b"caf\xe9",
            b"a\nb.md",
            b"tab\t.md",
            b"esc\x1b[31m.md",
            ".g\u{200c}it".as_bytes(),
            ".GI\u{feff}T".as_bytes(),
        ] {
            assert!(check.refusal(bad).is_some(), "{bad:?}");
        }
        for good in [
            "a.md",
            ".gitignore",
            "MEMORY.md",
            "project",
            "caf\u{e9}.md",
            ".g\u{200c}itx",
        ] {
            assert_eq!(check.refusal(good.as_bytes()), None, "{good}");
        }
    }

    #[test]
    fn the_name_check_reads_and_writes_no_object() {
        let (_dir, repo) = crate::git::scratch_repo();
        let objects = |repo: &Repository| {
            let mut ids = Vec::new();
            repo.odb()
                .unwrap()
                .foreach(|id| {
                    ids.push(*id);
                    true
                })
                .unwrap();
            ids
        };
        let before = objects(&repo);
        let mut check = NameCheck::new(&repo).unwrap();
        for n in 0..1000 {
            assert_eq!(check.refusal(format!("m-{n}.md").as_bytes()), None);
        }
        assert!(check.refusal(b".GIT").is_some());
        assert_eq!(objects(&repo), before);
        // The names it passes are the names a tree of blobs takes.
        let blob = repo.blob(b"x").unwrap();
        let mut builder = repo.treebuilder(None).unwrap();
        for name in ["a.md", ".gitignore", "GIT~2", ".git-x"] {
            assert_eq!(check.refusal(name.as_bytes()), None, "{name}");
            builder.insert(name, blob, 0o100644).unwrap();
        }
        for name in [".git", ".Git"] {
            assert!(check.refusal(name.as_bytes()).is_some(), "{name}");
            assert!(builder.insert(name, blob, 0o100644).is_err(), "{name}");
        }
    }

    #[test]
    fn long_names_links_and_gitlinks_are_not_written() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        assert!(entry_refusal(long.as_bytes(), &long, 0o100644).is_some());
        let fits = "x".repeat(MAX_NAME_BYTES);
        assert_eq!(entry_refusal(fits.as_bytes(), &fits, 0o100644), None);
        assert!(entry_refusal(b"l", "l", 0o120000).is_some());
        assert!(entry_refusal(b"s", "s", 0o160000).is_some());
    }
}
