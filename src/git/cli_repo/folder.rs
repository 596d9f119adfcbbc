//! One folder (the team memory) as git holds it — in an index file or in a revision's tree —
//! read through the installed git, for a repository libgit2 cannot open: the same
//! [`FolderRead`] that `team_files` gives through libgit2, so `check` judges the same bytes.
//! Blobs come from one `git cat-file --batch` run; a partial clone's missing blob is never
//! fetched (`GIT_NO_LAZY_FETCH`), it is an error naming the object.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::CliRepo;
use crate::git::GitError;
use crate::git::history::removal::Removed;
use crate::git::remote::Deadline;
use crate::git::remote::child::{self, Stopped};
use crate::git::team_files::{FolderFile, FolderRead, MODE_SUBMODULE};

/// No object is fetched from a promisor remote while a folder is read.
pub(super) const NO_LAZY_FETCH: (&str, &str) = ("GIT_NO_LAZY_FETCH", "1");

/// An entry listed under (or at a parent of) the folder: path from the top, mode, id, stage.
struct Listed {
    path: String,
    mode: u32,
    id: String,
    stage: u8,
}

impl CliRepo {
    /// The files below `folder` in an index file (`None`: the repository's own index), and any
    /// entry standing where the folder or a parent should be.
    pub fn staged_folder(
        &self,
        index_file: Option<&Path>,
        folder: &str,
        deadline: &Deadline,
    ) -> Result<FolderRead, GitError> {
        let index = absolute_index(index_file)?;
        let env = index_env(index.as_deref());
        let top = top_folder(folder);
        let out = self.run_with(
            &[
                "ls-files",
                "--stage",
                "-z",
                "--",
                &format!(":(literal){top}"),
            ],
            &env,
            b"",
            deadline,
            &format!("listing {folder} in the index (git ls-files)"),
        )?;
        // `<mode> <id> <stage>\t<path>`
        let listed = records(&out, |meta| {
            let mut fields = meta.split(' ');
            let mode = fields.next()?;
            let id = fields.next()?;
            let stage = fields.next()?.parse().ok()?;
            Some((mode, id, stage))
        });
        self.read_listed(listed, folder, deadline)
    }

    /// The files below `folder` in the tree of `rev`, or `None` when `rev` names no commit.
    pub fn folder_at(
        &self,
        rev: &str,
        folder: &str,
        deadline: &Deadline,
    ) -> Result<Option<FolderRead>, GitError> {
        let Some(commit) = self.resolve(&format!("{rev}^{{commit}}"), deadline)? else {
            return Ok(None);
        };
        let top = top_folder(folder);
        let out = self.run_with(
            &[
                "ls-tree",
                "-r",
                "-z",
                "--full-tree",
                &commit,
                "--",
                &format!(":(literal){top}"),
            ],
            &[],
            b"",
            deadline,
            &format!("listing {folder} in {rev} (git ls-tree)"),
        )?;
        // `<mode> <type> <id>\t<path>`
        let listed = records(&out, |meta| {
            let mut fields = meta.split(' ');
            let mode = fields.next()?;
            let _kind = fields.next()?;
            let id = fields.next()?;
            Some((mode, id, 0))
        });
        self.read_listed(listed, folder, deadline).map(Some)
    }

    /// What the index file (`None`: the repository's own) removes of `HEAD`'s tree, renames
    /// found as `git diff -M` finds them: what the commit being made would remove.
    pub fn removed_in_index(
        &self,
        index_file: Option<&Path>,
        deadline: &Deadline,
    ) -> Result<Removed, GitError> {
        if self.resolve("HEAD^{commit}", deadline)?.is_none() {
            return Ok(Removed::new());
        }
        let index = absolute_index(index_file)?;
        let env = index_env(index.as_deref());
        let out = self.run_with(
            &[
                "diff-index",
                "--cached",
                "-M",
                "-z",
                "--name-status",
                "--diff-filter=DR",
                "HEAD",
            ],
            &env,
            b"",
            deadline,
            "diffing HEAD with the index (git diff-index)",
        )?;
        let mut removed = Removed::new();
        let mut fields = out.split('\0');
        while let Some(status) = fields.next() {
            match status.chars().next() {
                Some('D') => {
                    if let Some(old) = fields.next() {
                        removed.insert(old.to_string(), None);
                    }
                }
                Some('R') => {
                    if let (Some(old), Some(new)) = (fields.next(), fields.next()) {
                        removed.insert(old.to_string(), Some(new.to_string()));
                    }
                }
                _ => {}
            }
        }
        Ok(removed)
    }

    /// Sorts what a listing found into the folder's files and the entries standing in its
    /// way, with every blob's bytes.
    fn read_listed(
        &self,
        listed: Vec<Listed>,
        folder: &str,
        deadline: &Deadline,
    ) -> Result<FolderRead, GitError> {
        let prefix = format!("{folder}/");
        let ancestors: Vec<&str> = prefix
            .match_indices('/')
            .map(|(at, _)| &prefix[..at])
            .collect();
        let wanted: Vec<&Listed> = listed
            .iter()
            .filter(|l| l.path.starts_with(&prefix) || ancestors.contains(&l.path.as_str()))
            .collect();
        let ids: Vec<&str> = wanted
            .iter()
            .filter(|l| l.mode != MODE_SUBMODULE)
            .map(|l| l.id.as_str())
            .collect();
        let blobs = self.blobs(&ids, deadline)?;
        let mut out = FolderRead::default();
        for entry in wanted {
            let bytes = if entry.mode == MODE_SUBMODULE {
                Vec::new()
            } else {
                // One id listed twice has one body: the second gets a copy.
                match blobs.get(&entry.id) {
                    Some(bytes) => bytes.clone(),
                    None => Vec::new(),
                }
            };
            match entry.path.strip_prefix(&prefix) {
                Some(rel) => out.files.push(FolderFile {
                    rel: rel.to_string(),
                    mode: entry.mode,
                    id: entry.id.clone(),
                    bytes,
                    stage: entry.stage,
                }),
                None => out.blockers.push((entry.path.clone(), entry.mode, bytes)),
            }
        }
        out.files
            .sort_by(|a, b| (a.rel.as_bytes(), a.stage).cmp(&(b.rel.as_bytes(), b.stage)));
        Ok(out)
    }

    /// The bytes of the blobs `ids`, by id, from one `git cat-file --batch` run; an id git
    /// does not have is an error naming it.
    pub(crate) fn blobs(
        &self,
        ids: &[&str],
        deadline: &Deadline,
    ) -> Result<HashMap<String, Vec<u8>>, GitError> {
        let mut found = HashMap::new();
        if ids.is_empty() {
            return Ok(found);
        }
        let what = "reading the team memory's files (git cat-file --batch)";
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let mut cmd = self.command();
        cmd.env(NO_LAZY_FETCH.0, NO_LAZY_FETCH.1)
            .args(["cat-file", "--batch"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        crate::sys::kill_with_parent(&mut cmd);
        let done =
            child::run_within(cmd, input.as_bytes(), deadline).map_err(|stop| match stop {
                Stopped::Deadline {} => GitError::OutOfTime { what: what.into() },
                Stopped::Spawn(e) | Stopped::Wait { error: e } => GitError::Cli {
                    context: what.into(),
                    message: format!("cannot run git: {e}"),
                },
            })?;
        if !done.status.success() {
            return Err(GitError::Cli {
                context: what.into(),
                message: String::from_utf8_lossy(&done.stderr).trim().to_string(),
            });
        }
        let mut rest = done.stdout.as_slice();
        while !rest.is_empty() {
            let Some(end) = rest.iter().position(|&b| b == b'\n') else {
                break;
            };
            let header = String::from_utf8_lossy(&rest[..end]).into_owned();
            rest = &rest[end + 1..];
            let mut fields = header.split(' ');
            let (Some(id), Some(kind)) = (fields.next(), fields.next()) else {
                break;
            };
            if kind == "missing" || kind == "ambiguous" {
                return Err(GitError::Cli {
                    context: what.into(),
                    message: format!(
                        "object {id} is {kind} in this clone (a partial clone fetches it with \
                         `git fetch` or `git checkout`; nothing was fetched for the check)"
                    ),
                });
            }
            let size: usize = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            if rest.len() < size {
                break;
            }
            found.insert(id.to_string(), rest[..size].to_vec());
            // The body is followed by a newline.
            rest = rest.get(size + 1..).unwrap_or(&[]);
        }
        if let Some(id) = ids.iter().find(|id| !found.contains_key(**id)) {
            return Err(GitError::Cli {
                context: what.into(),
                message: format!("git gave no contents for object {id}"),
            });
        }
        Ok(found)
    }
}

/// git takes a relative `GIT_INDEX_FILE` from where it runs, which is the work tree here, not
/// the current folder of the command that was given it: the index file made absolute.
fn absolute_index(index_file: Option<&Path>) -> Result<Option<PathBuf>, GitError> {
    index_file
        .map(|path| {
            std::path::absolute(path).map_err(|e| GitError::Cli {
                context: format!("reading the index {}", path.display()),
                message: e.to_string(),
            })
        })
        .transpose()
}

/// The environment of a run that reads an index file (`None`: the repository's own): no lazy
/// fetch, and `GIT_INDEX_FILE` when one is named.
fn index_env(index: Option<&Path>) -> Vec<(&'static str, &OsStr)> {
    let mut env: Vec<(&'static str, &OsStr)> = vec![(NO_LAZY_FETCH.0, OsStr::new(NO_LAZY_FETCH.1))];
    if let Some(index) = index {
        env.push(("GIT_INDEX_FILE", index.as_os_str()));
    }
    env
}

/// `.qwen` for `.qwen/team-memory`: listing from the top folder also finds a file or symlink
/// standing where a parent of the folder should be.
fn top_folder(folder: &str) -> &str {
    folder.split('/').next().unwrap_or(folder)
}

/// The NUL-ended records `<meta>\t<path>` of an `ls-files -z` / `ls-tree -z` listing, each
/// meta read by `fields` into (mode, id, stage); a record that does not parse is skipped.
fn records<'a>(
    out: &'a str,
    fields: impl Fn(&'a str) -> Option<(&'a str, &'a str, u8)>,
) -> Vec<Listed> {
    out.split('\0')
        .filter_map(|record| {
            let (meta, path) = record.split_once('\t')?;
            let (mode, id, stage) = fields(meta)?;
            Some(Listed {
                path: path.to_string(),
                mode: u32::from_str_radix(mode, 8).ok()?,
                id: id.to_string(),
                stage,
            })
        })
        .collect()
}
