//! `MEMORY.md` regenerated for a merged team folder, as `teammem index` renders it from disk,
//! through the memory gate the engine is handed ([`MemoryIndexGate`]).

use std::collections::BTreeMap;

use git2::{FileMode, Oid, Repository, Tree};

use super::folder_tree::rebuilt;
use super::in_time;
use crate::domain::memory;
use crate::domain::memory_index;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::remote::Deadline;
use crate::git::team_files;
use crate::git::tree_entries::{self, NameCheck, Version, listed_entry};

/// What the engine asks of the memory gate to write a merged folder's `MEMORY.md`. Sync hands
/// in the gate's own ([`crate::ops::TeamMemoryIndexGate`]); the engine holds no policy of its own.
pub trait MemoryIndexGate {
    /// The folder's own configuration files the gate reads: the check file and the secrets'
    /// ignore file, by path in the folder.
    fn config_files(&self) -> [&'static str; 2];
    /// The judge of index lines under those files (each its bytes and whether it is a symlink;
    /// `None` when absent): `true` for a line `MEMORY.md` may hold.
    fn judge<'f>(
        &self,
        config: [Option<(&'f [u8], bool)>; 2],
    ) -> Box<dyn Fn(&memory_index::IndexLine) -> bool + 'f>;
    /// `MEMORY.md` for the kept lines, in order.
    fn render(&self, kept: Vec<memory_index::IndexLine>) -> String;
}

/// The team folder of `tree` with `MEMORY.md` regenerated from its memories, as a tree to put
/// at `.qwen/team-memory` (`None` when the folder is empty), stopping with
/// [`GitError::OutOfTime`] once `deadline` passes. Creates objects only.
pub fn regenerated_team_tree(
    repo: &Repository,
    tree: &Tree<'_>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<Option<Oid>, GitError> {
    match team_files::subtree(repo, tree, TEAM_DIR)? {
        Some(team) => with_regenerated_index(repo, &team, gate, deadline),
        None => Ok(None),
    }
}

/// The team folder `team` with `MEMORY.md` regenerated from its memories (removed when it
/// holds no other file; `None` when nothing is left). Reads the folder in path order only
/// until the index is full: about [`memory_index::MAX_FILES`] memories and the folders on
/// the way, however many memories it holds. The same tree as rebuilding it from every file
/// [`folder_files`] lists (`tests::the_index_read_from_the_tree_is_the_index_of_its_listing`).
pub(super) fn with_regenerated_index(
    repo: &Repository,
    team: &Tree<'_>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<Option<Oid>, GitError> {
    let mut check = NameCheck::new(repo)?;
    let listed = |rel: &str, check: &mut NameCheck<'_>| -> Result<Option<Version>, GitError> {
        Ok(listed_entry(repo, team, rel, check)?.filter(|v| v.1 != i32::from(FileMode::Tree)))
    };
    let config = gate
        .config_files()
        .map(|rel| listed(rel, &mut check))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let bytes: Vec<Option<(Vec<u8>, bool)>> = config
        .iter()
        .map(|found| {
            found.and_then(|(oid, mode)| {
                if over_file_limit(repo, oid) {
                    return None;
                }
                let blob = repo.find_blob(oid).ok()?;
                Some((blob.content().to_vec(), mode == i32::from(FileMode::Link)))
            })
        })
        .collect();
    let file_of = |at: usize| bytes[at].as_ref().map(|(b, link)| (b.as_slice(), *link));
    let mut lines = IndexLines::new(gate.judge([file_of(0), file_of(1)]), deadline);
    let mut other_files = false;
    tree_entries::walk_in_path_order(repo, team, deadline, &mut |rel, version| {
        if rel != INDEX_FILE {
            other_files = true;
        }
        lines.offer(repo, rel, version)
    })?;
    let index = listed(INDEX_FILE, &mut check)?;
    let had: BTreeMap<String, Version> = index
        .map(|v| (INDEX_FILE.to_string(), v))
        .into_iter()
        .collect();
    let mut wanted = BTreeMap::new();
    if other_files {
        let text = gate.render(lines.kept);
        let blob = repo
            .blob(text.as_bytes())
            .map_err(|e| GitError::git("writing the regenerated MEMORY.md", e))?;
        wanted.insert(INDEX_FILE.to_string(), (blob, i32::from(FileMode::Blob)));
    }
    rebuilt(repo, Some(team), &had, &wanted)
}

/// How many memories [`regenerate_index`] reads between two looks at the clock.
const CLOCK_EVERY: usize = 256;

/// MEMORY.md for the merged files, rendered as `teammem index` renders it from disk: every
/// valid memory file ([`memory::is_memory_path`]) that passes the
/// memory gate, so a teammate's memory holding a secret is never copied into this commit's
/// index. See [`index_text`] for what is read.
#[cfg(test)]
pub(super) fn regenerate_index(
    repo: &Repository,
    files: &BTreeMap<String, Version>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<Oid, GitError> {
    let text = index_text(repo, files, gate, deadline)?;
    repo.blob(text.as_bytes())
        .map_err(|e| GitError::git("writing the regenerated MEMORY.md", e))
}

/// The lines of an index being read, memory by memory in path order.
struct IndexLines<'f> {
    keeps: Box<dyn Fn(&memory_index::IndexLine) -> bool + 'f>,
    kept: Vec<memory_index::IndexLine>,
    read: usize,
    deadline: Option<Deadline>,
}

impl<'f> IndexLines<'f> {
    fn new(
        keeps: Box<dyn Fn(&memory_index::IndexLine) -> bool + 'f>,
        deadline: Option<Deadline>,
    ) -> Self {
        IndexLines {
            keeps,
            kept: Vec::new(),
            read: 0,
            deadline,
        }
    }

    /// Reads the file at `rel` (the next in path order) into the index when it is a memory
    /// whose line the gate keeps; `false` once the index is full. Only a file's bytes are a
    /// memory: not a symlink's target path, not a gitlink's commit (which is no blob at all).
    fn offer(
        &mut self,
        repo: &Repository,
        rel: &str,
        (oid, mode): Version,
    ) -> Result<bool, GitError> {
        if self.kept.len() == memory_index::MAX_FILES {
            return Ok(false);
        }
        let file = mode == i32::from(FileMode::Blob) || mode == i32::from(FileMode::BlobExecutable);
        if !file || !memory::is_memory_path(rel) {
            return Ok(true);
        }
        self.read += 1;
        if self.read % CLOCK_EVERY == 0 {
            in_time(
                self.deadline,
                &format!(
                    "regenerating {TEAM_DIR}/{INDEX_FILE} ({} memories read)",
                    self.read
                ),
            )?;
        }
        let shown = format!("{TEAM_DIR}/{rel}");
        if over_file_limit(repo, oid) {
            // Never read whole: no memory, so no line (materialising withholds it).
            return Ok(true);
        }
        let blob = match repo.find_blob(oid) {
            Ok(blob) => blob,
            // A crafted entry with a file's mode that names a folder or a commit: no memory.
            Err(_) if not_a_blob(repo, oid) => return Ok(true),
            Err(e) => return Err(GitError::git(format!("reading {shown}"), e)),
        };
        if let Some(entry) = memory::index_entry_of(&shown, rel, blob.content()) {
            if (self.keeps)(&entry) {
                self.kept.push(entry);
            }
        }
        Ok(self.kept.len() < memory_index::MAX_FILES)
    }
}

/// The text of [`regenerate_index`]. The index lists the first [`memory_index::MAX_FILES`] memories
/// by path (UTF-16 order) that give a line the gate keeps, and paths are unique, so the
/// memories are read in that order until that many are kept: the cost is the paths' sort and
/// about `MAX_FILES` blobs however many memories the branch holds (a flood past them is never
/// read). The same bytes as rendering every memory's line (`tests::full_index_text`). Looks
/// at the clock every [`CLOCK_EVERY`] memories read and stops with [`GitError::OutOfTime`]
/// once `deadline` passed.
#[cfg(test)]
fn index_text(
    repo: &Repository,
    files: &BTreeMap<String, Version>,
    gate: &dyn MemoryIndexGate,
    deadline: Option<Deadline>,
) -> Result<String, GitError> {
    let blob_of = |rel: &str| {
        files.get(rel).and_then(|(oid, mode)| {
            let blob = repo.find_blob(*oid).ok()?;
            Some((blob.content().to_vec(), *mode == i32::from(FileMode::Link)))
        })
    };
    let [config, ignore] = gate.config_files().map(blob_of);
    let keeps = gate.judge(
        [config.as_ref(), ignore.as_ref()]
            .map(|f| f.map(|(bytes, symlink)| (bytes.as_slice(), *symlink))),
    );
    let mut candidates: Vec<(&String, Version)> = files.iter().map(|(rel, v)| (rel, *v)).collect();
    candidates.sort_by(|a, b| memory_index::utf16_cmp(a.0, b.0));
    let mut lines = IndexLines::new(keeps, deadline);
    for (rel, version) in candidates {
        if !lines.offer(repo, rel, version)? {
            break;
        }
    }
    Ok(gate.render(lines.kept))
}

/// Whether `oid` names an object over the size a team memory file may have
/// ([`memory::MAX_FILE_BYTES`]), told from its header alone: such a file is never read whole.
pub(super) fn over_file_limit(repo: &Repository, oid: Oid) -> bool {
    repo.odb()
        .and_then(|odb| odb.read_header(oid))
        .is_ok_and(|(size, _)| size as u64 > memory::MAX_FILE_BYTES as u64)
}

/// Whether `oid` names an object git holds that is not a blob.
fn not_a_blob(repo: &Repository, oid: Oid) -> bool {
    repo.odb()
        .and_then(|odb| odb.read_header(oid))
        .is_ok_and(|(_, kind)| kind != git2::ObjectType::Blob)
}

#[cfg(test)]
mod tests {
    use super::super::dice::Dice;
    use super::*;

    /// MEMORY.md as rendered from every memory's line, each read and gated: what
    /// [`index_text`] must give while reading only the first memories by path.
    fn full_index_text(repo: &Repository, files: &BTreeMap<String, Version>) -> String {
        let blob_of = |rel: &str| {
            files.get(rel).and_then(|(oid, mode)| {
                let blob = repo.find_blob(*oid).ok()?;
                Some((blob.content().to_vec(), *mode == i32::from(FileMode::Link)))
            })
        };
        let config = blob_of(crate::domain::check::CONFIG_FILE);
        let ignore = blob_of(crate::domain::secrets::IGNORE_FILE);
        fn as_team_file(
            found: &Option<(Vec<u8>, bool)>,
        ) -> Option<crate::domain::check_config::TeamFile<'_>> {
            found
                .as_ref()
                .map(|(bytes, symlink)| crate::domain::check_config::TeamFile {
                    bytes,
                    symlink: *symlink,
                })
        }
        let policy = crate::domain::gate::Gate::from_team_files(
            as_team_file(&config),
            as_team_file(&ignore),
        );
        let mut entries = Vec::new();
        for (rel, (oid, mode)) in files {
            let file =
                *mode == i32::from(FileMode::Blob) || *mode == i32::from(FileMode::BlobExecutable);
            if !memory::is_memory_path(rel) || !file {
                continue;
            }
            let blob = repo.find_blob(*oid).unwrap();
            let shown = format!("{TEAM_DIR}/{rel}");
            entries.extend(memory::index_entry_of(&shown, rel, blob.content()));
        }
        crate::domain::gate::team_index_md(entries, Some(&policy))
    }

    /// A random team file: a memory (often sharing a description, sometimes carrying a token
    /// the gate keeps out of the index, sometimes broken), a file that is no memory, or a
    /// symlink; at a path mixing ASCII, characters past U+FFFF and in U+E000..U+FFFF (where
    /// UTF-16 order and byte order differ).
    fn random_file(repo: &Repository, dice: &mut Dice) -> (String, Version) {
        let kinds = ["project", "feedback", "user", "reference"];
        let starts = [
            "a",
            "b",
            "z",
            "\u{1F600}",
            "\u{FF5A}",
            "\u{E000}",
            "\u{00E9}",
            "0",
        ];
        let kind = dice.pick(&kinds);
        let mut name = String::new();
        for _ in 0..1 + dice.below(3) {
            name.push_str(dice.pick(&starts));
        }
        name.push_str(&format!("-{}", dice.below(1000)));
        let description = match dice.below(6) {
            0 => "Shared description".to_string(),
            1 => format!("token ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
            2 => String::new(),
            _ => format!("About {name}"),
        };
        let text = match dice.below(10) {
            0 => "no frontmatter at all\n".to_string(),
            _ => format!(
                "---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nBody {}.\n",
                dice.below(100)
            ),
        };
        let (rel, mode) = match dice.below(20) {
            0 => (format!("{kind}/{name}.txt"), FileMode::Blob),
            1 => (format!("{kind}/{name}.md"), FileMode::Link),
            2 => (format!("{kind}/{name}.md"), FileMode::BlobExecutable),
            _ => (format!("{kind}/{name}.md"), FileMode::Blob),
        };
        let oid = repo.blob(text.as_bytes()).unwrap();
        (rel, (oid, i32::from(mode)))
    }

    #[test]
    fn the_index_read_from_the_first_memories_is_the_index_of_them_all() {
        let (_dir, repo) = crate::git::scratch_repo();
        for seed in 1..=4u64 {
            let mut dice = Dice(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut files: BTreeMap<String, Version> = BTreeMap::new();
            for step in 0..12 {
                // Random changes: a burst of additions (past the 200 listed memories), edits
                // and deletions.
                let adds = if step < 3 { 100 } else { dice.below(30) };
                for _ in 0..adds {
                    let (rel, version) = random_file(&repo, &mut dice);
                    files.insert(rel, version);
                }
                let paths: Vec<String> = files.keys().cloned().collect();
                for _ in 0..dice.below(30) {
                    let path = &paths[dice.below(paths.len())];
                    if dice.below(2) == 0 {
                        files.remove(path);
                    } else {
                        let (_, version) = random_file(&repo, &mut dice);
                        files.insert(path.clone(), version);
                    }
                }
                assert_eq!(
                    index_text(&repo, &files, &crate::ops::TeamMemoryIndexGate, None).unwrap(),
                    full_index_text(&repo, &files),
                    "seed {seed}, step {step}, {} files",
                    files.len()
                );
            }
        }
    }
}
