//! The per-memory three-way merge of two team folders: no memory version is ever dropped.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use git2::{FileMode, MergeFileInput, Oid, Repository, Tree};

use super::folder_tree::{DifferingFiles, differing_files, rebuilt};
use super::memory_index::{MemoryIndexGate, with_regenerated_index};
use super::{KeptConflict, in_time};
use crate::domain::memory::MemoryFile;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::remote::Deadline;
use crate::git::team_files;
use crate::git::tree_entries::{NameCheck, Version, listed_entry};

/// The team folder merged memory by memory: the subtree to put at `.qwen/team-memory`
/// (`None` when nothing is left), and what the merge had to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedFolder {
    /// The merged team folder's tree.
    pub team_tree: Option<Oid>,
    /// Memories kept in two versions (`theirs` at the path, `ours` beside it).
    pub conflicts: Vec<KeptConflict>,
    /// Memories merged line by line by git's text merge.
    pub text_merged: Vec<String>,
}

/// Merges the team folders of `ours` and `theirs` against `base` (`None`: unrelated
/// histories, nothing in common) with the per-memory three-way rules: a side that did not
/// change a memory takes the other's; a memory deleted on one side and changed on the other
/// keeps the change; two different changes are text-merged when git merges them cleanly into
/// a valid memory, else both versions are kept, ours as `<path>.conflict-<short>.md`.
/// `MEMORY.md` is never merged: it is regenerated from the result, stopping with
/// [`GitError::OutOfTime`] once `deadline` passes. Only the folders where ours and theirs
/// differ are listed, so the cost is what changed, not the folder's size. Creates objects
/// only.
pub fn merge_team_folders(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    ours: &Tree<'_>,
    theirs: &Tree<'_>,
    short: &str,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<MergedFolder, GitError> {
    let team = |tree: &Tree<'_>| team_files::subtree(repo, tree, TEAM_DIR);
    let teams = [
        base.map(team).transpose()?.flatten(),
        team(ours)?,
        team(theirs)?,
    ];
    in_time(deadline, "merging the memory branch")?;
    let differing = differing_files(
        repo,
        teams[0].as_ref(),
        teams[1].as_ref(),
        teams[2].as_ref(),
        deadline,
    )?;
    in_time(deadline, "merging the memory branch")?;
    let folders = FolderTrees {
        repo,
        trees: &teams,
        check: RefCell::new(NameCheck::new(repo)?),
    };
    let merged = merge_files(repo, &differing, short, &folders)?;
    // Theirs' own MEMORY.md stays in this tree: it is regenerated from the result below.
    let (mut had, mut wanted) = (differing.theirs, merged.files);
    let theirs_team = teams[2].as_ref();
    if let Some(team) = theirs_team {
        let index = listed_entry(repo, team, INDEX_FILE, &mut folders.check.borrow_mut())?;
        if let Some(index) = index.filter(|v| v.1 != i32::from(FileMode::Tree)) {
            had.insert(INDEX_FILE.to_string(), index);
            wanted.insert(INDEX_FILE.to_string(), index);
        }
    }
    let team_tree = match rebuilt(repo, theirs_team, &had, &wanted)? {
        Some(id) => {
            let tree = repo
                .find_tree(id)
                .map_err(|e| GitError::git("reading the merged team folder", e))?;
            with_regenerated_index(repo, &tree, gate, deadline)?
        }
        None => None,
    };
    Ok(MergedFolder {
        team_tree,
        conflicts: merged.conflicts,
        text_merged: merged.text_merged,
    })
}

/// What a merge looks up beyond the paths it merges: each side's whole team folder.
trait Sides {
    /// Whether side `side` (0 the base, 1 ours, 2 theirs) holds a file at `path`.
    fn holds(&self, side: usize, path: &str) -> Result<bool, GitError>;
    /// Whether theirs holds `version` as a conflict copy of `path`.
    fn theirs_keeps_beside(&self, path: &str, version: Version) -> Result<bool, GitError>;
}

/// The three team folders as trees, looked up along a path (as [`folder_files`] lists them).
struct FolderTrees<'a, 'r> {
    repo: &'r Repository,
    trees: &'a [Option<Tree<'r>>; 3],
    check: RefCell<NameCheck<'r>>,
}

impl Sides for FolderTrees<'_, '_> {
    fn holds(&self, side: usize, path: &str) -> Result<bool, GitError> {
        let Some(tree) = &self.trees[side] else {
            return Ok(false);
        };
        let found = listed_entry(self.repo, tree, path, &mut self.check.borrow_mut())?;
        Ok(found.is_some_and(|v| v.1 != i32::from(FileMode::Tree)))
    }

    fn theirs_keeps_beside(&self, path: &str, version: Version) -> Result<bool, GitError> {
        let Some(tree) = &self.trees[2] else {
            return Ok(false);
        };
        // A copy sits in the memory's own folder.
        let (folder, prefix) = match path.rsplit_once('/') {
            Some((folder, _)) => (folder, format!("{folder}/")),
            None => ("", String::new()),
        };
        let mut check = self.check.borrow_mut();
        let Some((id, mode)) = listed_entry(self.repo, tree, folder, &mut check)? else {
            return Ok(false);
        };
        if mode != i32::from(FileMode::Tree) {
            return Ok(false);
        }
        let folder_tree = self
            .repo
            .find_tree(id)
            .map_err(|e| GitError::git(format!("reading {TEAM_DIR}/{folder}"), e))?;
        for entry in folder_tree.iter() {
            if entry.id() != version.0 {
                continue;
            }
            let Ok(name) = std::str::from_utf8(entry.name_bytes()) else {
                continue;
            };
            let other = format!("{prefix}{name}");
            if crate::domain::conflict::parse_copy(&other).is_some_and(|c| c.original == path)
                && listed_entry(self.repo, tree, &other, &mut check)?
                    .is_some_and(|v| v.1 != i32::from(FileMode::Tree))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// What [`merge_files`] gives: the merged files at the paths it looked at.
struct MergedFiles {
    files: BTreeMap<String, Version>,
    conflicts: Vec<KeptConflict>,
    text_merged: Vec<String>,
}

/// The per-memory merge of the files of `differing` (theirs stands at every other path);
/// `sides` answers for the rest of each folder.
fn merge_files(
    repo: &Repository,
    differing: &DifferingFiles,
    short: &str,
    sides: &dyn Sides,
) -> Result<MergedFiles, GitError> {
    let (base_files, ours, theirs) = (&differing.base, &differing.ours, &differing.theirs);
    let mut merged: BTreeMap<String, Version> = BTreeMap::new();
    let mut conflicts = Vec::new();
    let mut text_merged = Vec::new();
    let paths: BTreeSet<&String> = base_files
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    for path in paths {
        if path == INDEX_FILE {
            continue;
        }
        let (b, o, t) = (base_files.get(path), ours.get(path), theirs.get(path));
        let chosen = match (o, t) {
            _ if o == t => o.copied(),
            _ if o == b => t.copied(),
            _ if t == b => o.copied(),
            // Deleted on one side, changed on the other: keep the changed one.
            (None, Some(t)) => Some(*t),
            (Some(o), None) => Some(*o),
            // Theirs already keeps ours beside the memory (a sync killed after it made the
            // copy records the edit again): one edit gives one copy.
            (Some(o), Some(t)) if sides.theirs_keeps_beside(path, *o)? => Some(*t),
            (Some(o), Some(t)) => match text_merge(repo, path, b.copied(), *o, *t)? {
                Some(blob) => {
                    text_merged.push(format!("{TEAM_DIR}/{path}"));
                    Some((blob, t.1))
                }
                None => {
                    let mut beside = conflict_name(path, short);
                    let mut taken = merged.contains_key(&beside);
                    for side in 0..3 {
                        taken = taken || sides.holds(side, &beside)?;
                    }
                    if taken {
                        beside = crate::domain::conflict::plain_copy_path(path, short);
                    }
                    merged.insert(beside.clone(), *o);
                    conflicts.push(KeptConflict {
                        path: format!("{TEAM_DIR}/{path}"),
                        kept_as: format!("{TEAM_DIR}/{beside}"),
                    });
                    Some(*t)
                }
            },
            (None, None) => None,
        };
        if let Some(version) = chosen {
            merged.insert(path.clone(), version);
        }
    }
    // A file at a path the other side made a folder: the file is kept beside it, as a copy.
    // (Both lie below one name where the sides differ in kind, so both are among the paths
    // looked at.)
    let clashing: Vec<String> = merged
        .keys()
        .filter(|p| {
            let below = format!("{p}/");
            merged
                .range(below.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&below))
        })
        .cloned()
        .collect();
    for path in clashing {
        if let Some(version) = merged.remove(&path) {
            let beside = conflict_name(&path, short);
            merged.insert(beside.clone(), version);
            conflicts.push(KeptConflict {
                path: format!("{TEAM_DIR}/{path}"),
                kept_as: format!("{TEAM_DIR}/{beside}"),
            });
        }
    }
    Ok(MergedFiles {
        files: merged,
        conflicts,
        text_merged,
    })
}

/// git's own text merge of one file; `None` when it conflicts, when either side is binary, or
/// when a clean merge of two valid memories would not be a valid memory.
fn text_merge(
    repo: &Repository,
    path: &str,
    base: Option<Version>,
    ours: Version,
    theirs: Version,
) -> Result<Option<Oid>, GitError> {
    let sides = [base.map(|b| b.0), Some(ours.0), Some(theirs.0)];
    if sides
        .into_iter()
        .flatten()
        .any(|oid| super::memory_index::over_file_limit(repo, oid))
    {
        // Never read whole: both versions are kept, as on any conflict.
        return Ok(None);
    }
    let read = |oid: Oid| -> Result<Vec<u8>, GitError> {
        repo.find_blob(oid)
            .map(|b| b.content().to_vec())
            .map_err(|e| GitError::git(format!("reading {TEAM_DIR}/{path}"), e))
    };
    let base_bytes = match base {
        Some(b) => read(b.0)?,
        None => Vec::new(),
    };
    let (our_bytes, their_bytes) = (read(ours.0)?, read(theirs.0)?);
    if [&base_bytes, &our_bytes, &their_bytes]
        .iter()
        .any(|b| b.contains(&0))
    {
        return Ok(None);
    }
    let result = git2::merge_file(
        &merge_input(&base_bytes, path),
        &merge_input(&our_bytes, path),
        &merge_input(&their_bytes, path),
        None,
    )
    .map_err(|e| GitError::git(format!("merging {TEAM_DIR}/{path}"), e))?;
    if !result.is_automergeable() {
        return Ok(None);
    }
    let merged = result.content().to_vec();
    if path.ends_with(".md") {
        let shown = format!("{TEAM_DIR}/{path}");
        let valid = |bytes: &[u8]| MemoryFile::parse(&shown, bytes).is_ok();
        if valid(&our_bytes) && valid(&their_bytes) && !valid(&merged) {
            return Ok(None);
        }
    }
    repo.blob(&merged)
        .map(Some)
        .map_err(|e| GitError::git(format!("writing the merged {TEAM_DIR}/{path}"), e))
}

fn merge_input<'a>(bytes: &'a [u8], path: &'a str) -> MergeFileInput<'a> {
    let mut input = MergeFileInput::new();
    input.content(bytes).path(path);
    input
}

/// `type/slug.md` becomes `type/slug.md.conflict-<short>.md`, which sorts right after it.
fn conflict_name(path: &str, short: &str) -> String {
    crate::domain::conflict::copy_path(path, short)
}

#[cfg(test)]
mod tests {
    use super::super::dice::Dice;
    use super::*;
    use crate::domain::memory;
    use crate::git::tree_entries;

    /// A folder as a test builds it: each name with its versions (more than one makes a
    /// duplicate entry, which only a crafted tree holds).
    #[derive(Clone, Default)]
    struct Folder(BTreeMap<Vec<u8>, Vec<Node>>);

    #[derive(Clone)]
    enum Node {
        File(Oid, i32),
        Dir(Folder),
    }

    /// Writes `folder` as git trees, byte for byte (duplicates and names git refuses
    /// included, as a teammate's crafted push holds them).
    fn write(repo: &Repository, folder: &Folder) -> Oid {
        let mut entries: Vec<(Vec<u8>, i32, Oid)> = Vec::new();
        for (name, nodes) in &folder.0 {
            for node in nodes {
                entries.push(match node {
                    Node::File(oid, mode) => (name.clone(), *mode, *oid),
                    Node::Dir(sub) => (name.clone(), 0o040000, write(repo, sub)),
                });
            }
        }
        // git's order: a folder's name sorts as if it ended with `/`.
        let key = |(name, mode, _): &(Vec<u8>, i32, Oid)| {
            let mut k = name.clone();
            if *mode == 0o040000 {
                k.push(b'/');
            }
            k
        };
        entries.sort_by_key(key);
        let mut bytes = Vec::new();
        for (name, mode, oid) in entries {
            bytes.extend(format!("{mode:o} ").as_bytes());
            bytes.extend(&name);
            bytes.push(0);
            bytes.extend(oid.as_bytes());
        }
        repo.odb()
            .unwrap()
            .write(git2::ObjectType::Tree, &bytes)
            .unwrap()
    }

    /// A root tree holding `folder` as the team folder.
    fn root(repo: &Repository, folder: &Folder) -> Oid {
        let team = write(repo, folder);
        super::super::replace_subtree(repo, None, &[".qwen", "team-memory"], Some(team))
            .unwrap()
            .unwrap()
    }

    const NAMES: [&[u8]; 12] = [
        b"a.md",
        b"b.md",
        b"a.md.conflict-abcdef1.md",
        b"c.md",
        b"MEMORY.md",
        b"notes.txt",
        b".GIT",
        b"link.md",
        b"d\xe9.md",
        b"\xef\xbd\x9a.md",
        b"\xf0\x9f\x98\x80.md",
        b"a",
    ];
    const FOLDERS: [&[u8]; 5] = [b"project", b"feedback", b"a", b"a-b", b"MEMORY.md"];

    fn random_memory(repo: &Repository, dice: &mut Dice) -> Oid {
        let text = match dice.below(8) {
            0 => "no frontmatter\n".to_string(),
            1 => format!(
                "---\nname: secret\ndescription: token ghp_{}\ntype: project\n---\nx\n",
                "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
            ),
            n => format!(
                "---\nname: memory {}\ndescription: {}\ntype: project\n---\nline one\nline {}\nline three\n",
                dice.below(4),
                if n == 2 {
                    "Shared".to_string()
                } else {
                    format!("About {}", dice.below(50))
                },
                dice.below(3)
            ),
        };
        repo.blob(text.as_bytes()).unwrap()
    }

    fn random_node(repo: &Repository, dice: &mut Dice, depth: usize) -> Node {
        if depth < 2 && dice.below(4) == 0 {
            return Node::Dir(random_folder(repo, dice, depth + 1, 4));
        }
        let mode = match dice.below(12) {
            0 => 0o120000,
            1 => 0o100755,
            _ => 0o100644,
        };
        Node::File(random_memory(repo, dice), mode)
    }

    fn random_folder(repo: &Repository, dice: &mut Dice, depth: usize, size: usize) -> Folder {
        let mut folder = Folder::default();
        for _ in 0..size {
            let name = if depth == 0 && dice.below(2) == 0 {
                FOLDERS[dice.below(FOLDERS.len())].to_vec()
            } else {
                NAMES[dice.below(NAMES.len())].to_vec()
            };
            let node = if depth == 0 && FOLDERS.contains(&name.as_slice()) && dice.below(5) > 0 {
                Node::Dir(random_folder(repo, dice, depth + 1, 6))
            } else {
                random_node(repo, dice, depth)
            };
            let versions = folder.0.entry(name).or_default();
            // Now and then a duplicate entry.
            if versions.is_empty() || dice.below(10) == 0 {
                versions.push(node);
            } else {
                versions[0] = node;
            }
        }
        folder
    }

    /// `folder` with a few random changes: edits, additions, deletions, a file turned folder.
    fn changed(repo: &Repository, dice: &mut Dice, folder: &Folder, depth: usize) -> Folder {
        let mut out = folder.clone();
        let names: Vec<Vec<u8>> = out.0.keys().cloned().collect();
        for name in names {
            match dice.below(10) {
                0 => {
                    out.0.remove(&name);
                }
                1 | 2 => {
                    out.0.insert(name, vec![random_node(repo, dice, depth)]);
                }
                3 | 4 => {
                    let versions = out.0.get_mut(&name).unwrap();
                    if let Some(Node::Dir(sub)) = versions.first().cloned() {
                        versions[0] = Node::Dir(changed(repo, dice, &sub, depth + 1));
                    }
                }
                _ => {}
            }
        }
        if dice.below(3) == 0 {
            let extra = random_folder(repo, dice, depth, 1);
            out.0.extend(extra.0);
        }
        out
    }

    /// Side lookups over full listings: the merge as it was before it listed only what
    /// differs.
    struct Listed<'a>([&'a BTreeMap<String, Version>; 3]);

    impl Sides for Listed<'_> {
        fn holds(&self, side: usize, path: &str) -> Result<bool, GitError> {
            Ok(self.0[side].contains_key(path))
        }

        fn theirs_keeps_beside(&self, path: &str, version: Version) -> Result<bool, GitError> {
            Ok(self.0[2].iter().any(|(other, v)| {
                v.0 == version.0
                    && crate::domain::conflict::parse_copy(other)
                        .is_some_and(|c| c.original == path)
            }))
        }
    }

    /// A merge's team folder, conflicts and text merges.
    type Merged = (Option<Oid>, Vec<KeptConflict>, Vec<String>);

    /// The merge from full listings of the three folders, `MEMORY.md` regenerated from a full
    /// listing of the result: what [`merge_team_folders`] must give while reading only what
    /// differs, and the index only up to its last line.
    fn full_merge(
        repo: &Repository,
        base: Option<&Tree<'_>>,
        ours: &Tree<'_>,
        theirs: &Tree<'_>,
    ) -> Result<Merged, GitError> {
        use super::super::folder_tree::folder_files;
        use super::super::memory_index::regenerate_index;
        let lists = [
            base.map(|b| folder_files(repo, b, None).unwrap())
                .unwrap_or_default(),
            folder_files(repo, ours, None).unwrap(),
            folder_files(repo, theirs, None).unwrap(),
        ];
        let differing = DifferingFiles {
            base: lists[0].clone(),
            ours: lists[1].clone(),
            theirs: lists[2].clone(),
        };
        let merged = merge_files(
            repo,
            &differing,
            "1234567",
            &Listed([&lists[0], &lists[1], &lists[2]]),
        )?;
        // The merged files written over theirs (their MEMORY.md left as it is), then
        // MEMORY.md regenerated from every file the written folder lists.
        let theirs_team = team_files::subtree(repo, theirs, TEAM_DIR).unwrap();
        let mut wanted = merged.files;
        if let Some(index) = lists[2].get(INDEX_FILE) {
            wanted.insert(INDEX_FILE.to_string(), *index);
        }
        let Some(written) = rebuilt(repo, theirs_team.as_ref(), &lists[2], &wanted)? else {
            return Ok((None, merged.conflicts, merged.text_merged));
        };
        let written = repo.find_tree(written).unwrap();
        let files = tree_entries::list(repo, &written)?.files;
        let mut wanted = files.clone();
        wanted.remove(INDEX_FILE);
        if !wanted.is_empty() {
            let gate = &crate::ops::TeamMemoryIndexGate;
            let index = regenerate_index(repo, &wanted, gate, None)?;
            wanted.insert(INDEX_FILE.to_string(), (index, i32::from(FileMode::Blob)));
        }
        let tree = rebuilt(repo, Some(&written), &files, &wanted)?;
        Ok((tree, merged.conflicts, merged.text_merged))
    }

    #[test]
    fn merging_only_what_differs_gives_the_merge_of_everything() {
        let (_dir, repo) = crate::git::scratch_repo();
        let gate = &crate::ops::TeamMemoryIndexGate;
        let mut looked = 0;
        for seed in 1..=120u64 {
            let mut dice = Dice(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let base = random_folder(&repo, &mut dice, 0, 6);
            let ours = changed(&repo, &mut dice, &base, 0);
            let theirs = match dice.below(4) {
                0 => ours.clone(),
                _ => changed(&repo, &mut dice, &base, 0),
            };
            let trees = [&base, &ours, &theirs].map(|f| repo.find_tree(root(&repo, f)).unwrap());
            let base_tree = (dice.below(8) > 0).then_some(&trees[0]);
            let merged = merge_team_folders(
                &repo, base_tree, &trees[1], &trees[2], "1234567", gate, None,
            )
            .map(|m| (m.team_tree, m.conflicts, m.text_merged));
            // A crafted tree the full merge cannot write either (a file and a folder swapped
            // under a duplicate) is no comparison.
            let Ok(expected) = full_merge(&repo, base_tree, &trees[1], &trees[2]) else {
                continue;
            };
            let merged = merged.unwrap();
            assert_eq!(merged, expected, "seed {seed}");
            looked += 1;
        }
        assert!(looked > 80, "{looked} of 120 compared");
    }

    #[test]
    fn conflict_copies_sit_beside_the_memory() {
        assert_eq!(
            conflict_name("feedback/use-postgres.md", "abc1234"),
            "feedback/use-postgres.md.conflict-abc1234.md"
        );
        assert!(memory::check_file_name("feedback/use-postgres.md.conflict-abc1234.md").is_none());
    }
}
