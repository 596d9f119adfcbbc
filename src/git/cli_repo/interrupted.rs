//! What a sync on the git path leaves when it is killed mid-way, and how the next sync clears
//! it — the libgit2 path's rules (`git/recovery/`) for the steps git runs here.
//!
//! Before a git step that takes one of git's locks (`index.lock`, a ref's lock, reftable's
//! `tables.list.lock`), the sync writes the step note `teammem-git-step` in the common git
//! folder naming its PID and those locks, and removes it when the step is over. The next
//! sync, holding the sync lock, removes a named lock only when the note's process is gone
//! (git dies with it: `kill_with_parent`), the lock was made after the note and it stays
//! unchanged for [`STILL_FOR`] — git's locks from a live user's git are left alone, as on the
//! libgit2 path. A step that moved the branch before the index's team entries were written
//! says so in the note (`index-after`), and the next sync writes them.
//!
//! A fast-forward (`git read-tree -m -u`) is announced in the libgit2 path's checkout note
//! (`teammem-checkout`, same format): killed half-way, its files are put back as in the old
//! tip — each file the move changes that is as in the old tip, as in the new one, missing, or
//! a beginning of the new content; anything else is a person's edit and stays — and the
//! index's entries for them too, so the sync's own pull runs again from a clean start.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{CliRepo, TreeEntry};
use crate::git::GitError;
use crate::git::recovery::lock::process_alive;
use crate::git::recovery::ref_move::STILL_FOR;
use crate::git::recovery::{CHECKOUT_NOTE, GIT_STEP_NOTE};
use crate::git::remote::Deadline;

/// A git step announced in the step note; [`StepNote::done`] removes the note. A step that
/// stops on an error keeps it: git stopped at the deadline is killed as a kill would, and
/// may leave its lock as well.
#[derive(Debug)]
pub struct StepNote {
    path: PathBuf,
}

impl StepNote {
    /// The step is over.
    pub fn done(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A fast-forward's checkout announced in the checkout note; [`CheckoutNote::done`] removes it.
#[derive(Debug)]
pub struct CheckoutNote {
    path: PathBuf,
}

impl CheckoutNote {
    /// The move is over (landed, refused before writing, or put back).
    pub fn done(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// One path a move changes: the old and the new entry.
type Changed = (String, Option<TreeEntry>, Option<TreeEntry>);

/// How a file a killed checkout may have written stands on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    AsFrom,
    AsTo,
    Missing,
    CutShort,
    Edited,
}

impl CliRepo {
    /// The locks git takes to move `refname`: its lock file and `HEAD.lock` (for HEAD's
    /// reflog, when HEAD points at it), or reftable's list lock.
    pub fn ref_locks(refname: &str) -> Vec<String> {
        vec![
            format!("{refname}.lock"),
            "HEAD.lock".to_string(),
            "reftable/tables.list.lock".to_string(),
        ]
    }

    /// Writes the step note naming `locks` (names as [`Self::lock_file`] reads them) and, when
    /// the step moves `branch_ref` to `commit` before writing the index's team entries,
    /// `index_after`.
    pub fn announce_step(
        &self,
        locks: &[String],
        index_after: Option<(&str, &str)>,
    ) -> Result<StepNote, GitError> {
        let path = self.common_dir.join(GIT_STEP_NOTE);
        let mut text = format!(
            "{}\ngit-dir {}\n",
            std::process::id(),
            self.paths.git_dir.display()
        );
        for lock in locks {
            text.push_str(&format!("lock {lock}\n"));
        }
        if let Some((branch_ref, commit)) = index_after {
            text.push_str(&format!("index-after {branch_ref} {commit}\n"));
        }
        write_note(&path, &text)?;
        Ok(StepNote { path })
    }

    /// Writes the checkout note (the libgit2 path's format: PID, branch, old tip, new tip).
    pub fn announce_checkout(
        &self,
        branch_ref: &str,
        from: &str,
        to: &str,
    ) -> Result<CheckoutNote, GitError> {
        let path = self.common_dir.join(CHECKOUT_NOTE);
        let text = format!("{} {branch_ref} {from} {to}\n", std::process::id());
        write_note(&path, &text)?;
        Ok(CheckoutNote { path })
    }

    /// Where lock `name` lives: `index.lock` in the worktree's git folder, the rest in the
    /// common one. `None` for a name that is not one of git's locks (a note is never trusted
    /// to name any other file).
    fn lock_file(&self, name: &str) -> Option<PathBuf> {
        if name == "index.lock" || name == "HEAD.lock" {
            return Some(self.paths.git_dir.join(name));
        }
        let safe_ref = name.starts_with("refs/")
            && name.ends_with(".lock")
            && name
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..");
        (safe_ref || name == "reftable/tables.list.lock" || name == "packed-refs.lock")
            .then(|| self.common_dir.join(name))
    }

    /// Clears what a killed sync on this path left (see the module doc); returns what was
    /// done, for the report. Call it only while holding the sync lock. `dir` is the team
    /// folder.
    pub fn recover_interrupted(
        &self,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<Vec<String>, GitError> {
        let mut said = Vec::new();
        remove_dead_scratch_indexes();
        self.recover_step(dir, deadline, &mut said)?;
        self.recover_checkout(deadline, &mut said)?;
        Ok(said)
    }

    fn recover_step(
        &self,
        dir: &str,
        deadline: &Deadline,
        said: &mut Vec<String>,
    ) -> Result<(), GitError> {
        let path = self.common_dir.join(GIT_STEP_NOTE);
        let Some((text, noted)) = read_note(&path) else {
            return Ok(());
        };
        let mut lines = text.lines();
        let pid = lines.next().and_then(|l| l.parse::<u32>().ok());
        if pid.is_some_and(|pid| pid != std::process::id() && process_alive(pid)) {
            return Ok(());
        }
        let mut locks = Vec::new();
        let mut index_after = None;
        for line in lines {
            // Another worktree's step (its index, its HEAD): left to that worktree's sync.
            if let Some(git_dir) = line.strip_prefix("git-dir ") {
                if Path::new(git_dir) != self.paths.git_dir {
                    return Ok(());
                }
            } else if let Some(name) = line.strip_prefix("lock ") {
                locks.extend(self.lock_file(name).map(|file| (name.to_string(), file)));
            } else if let Some(rest) = line.strip_prefix("index-after ") {
                index_after = rest
                    .split_once(' ')
                    .map(|(r, c)| (r.to_string(), c.to_string()));
            }
        }
        // Only a readable note proves anything: its PID names the dead sync.
        if pid.is_some() {
            let watched: Vec<(String, PathBuf, fs::Metadata)> = locks
                .into_iter()
                .filter_map(|(name, file)| {
                    let meta = fs::symlink_metadata(&file).ok()?;
                    let after_note = match (meta.modified(), noted) {
                        (Ok(made), Some(noted)) => made >= noted,
                        _ => false,
                    };
                    (meta.is_file() && after_note).then_some((name, file, meta))
                })
                .collect();
            if !watched.is_empty() {
                // git holds a lock for milliseconds: one that does not change is left.
                std::thread::sleep(STILL_FOR);
            }
            for (name, file, first) in watched {
                let still = fs::symlink_metadata(&file).is_ok_and(|now| {
                    now.len() == first.len() && now.modified().ok() == first.modified().ok()
                });
                if still && fs::remove_file(&file).is_ok() {
                    said.push(format!(
                        "removed {name}, left by git in an earlier sync that was interrupted"
                    ));
                }
            }
            if let Some((branch_ref, commit)) = index_after {
                if self.resolve(&branch_ref, deadline)?.as_deref() == Some(commit.as_str()) {
                    let entries = self.changed(None, &commit, dir, deadline)?;
                    let updates: BTreeMap<String, Option<TreeEntry>> = entries
                        .into_iter()
                        .map(|(path, _, to)| (path, to))
                        .collect();
                    let mut cmd = self.command();
                    cmd.args(["update-index", "-z", "--index-info"]);
                    let what = "writing the index's team entries a sync left (git update-index)";
                    let run =
                        self.try_run(cmd, self.index_info(&updates).as_bytes(), deadline, what)?;
                    if !run.success {
                        // Another git holds the index: the note stays for the next sync.
                        if run.stderr.contains("index.lock") {
                            return Ok(());
                        }
                        return Err(GitError::Cli {
                            context: what.into(),
                            message: run.stderr.trim().to_string(),
                        });
                    }
                    said.push(
                        "wrote the index's team entries of a sync commit an interrupted sync \
                         left unwritten"
                            .into(),
                    );
                }
            }
        }
        let _ = fs::remove_file(&path);
        Ok(())
    }

    fn recover_checkout(
        &self,
        deadline: &Deadline,
        said: &mut Vec<String>,
    ) -> Result<(), GitError> {
        let path = self.common_dir.join(CHECKOUT_NOTE);
        let Some((text, _)) = read_note(&path) else {
            return Ok(());
        };
        let parts: Vec<&str> = text.trim_end().split(' ').collect();
        let [pid, branch_ref, from, to] = parts[..] else {
            let _ = fs::remove_file(&path);
            return Ok(());
        };
        let Ok(pid) = pid.parse::<u32>() else {
            let _ = fs::remove_file(&path);
            return Ok(());
        };
        if pid != std::process::id() && process_alive(pid) {
            return Ok(());
        }
        let is_id =
            |id: &str| id.len() == self.hex_len && id.bytes().all(|b| b.is_ascii_hexdigit());
        if !branch_ref.starts_with("refs/heads/") || !is_id(from) || !is_id(to) {
            let _ = fs::remove_file(&path);
            return Ok(());
        }
        // A branch is checked out in one worktree at most: another's pull is left to it.
        if self.head_branch(deadline)?.as_deref() != Some(branch_ref) {
            return Ok(());
        }
        let tip = self.resolve(branch_ref, deadline)?;
        if tip.as_deref() == Some(to) {
            // Killed after the branch moved: the move is complete.
            let _ = fs::remove_file(&path);
            return Ok(());
        }
        if tip.as_deref() != Some(from) {
            let _ = fs::remove_file(&path);
            said.push(format!(
                "an interrupted pull of {branch_ref} was not finished: the branch was moved \
                 since by another command; files it had written are left as they are"
            ));
            return Ok(());
        }
        let files = self.changed(Some(from), to, "", deadline)?;
        let mut edited = Vec::new();
        let mut reset = BTreeMap::new();
        for (rel, old, new) in &files {
            let abs = self.paths.workdir.join(rel);
            let state = self.on_disk(rel, &abs, old.as_ref(), new.as_ref(), deadline)?;
            if state == OnDisk::Edited {
                edited.push(rel.clone());
                continue;
            }
            if matches!(state, OnDisk::AsTo | OnDisk::Missing | OnDisk::CutShort) {
                self.put_back(rel, &abs, old.as_ref(), deadline)?;
            }
            reset.insert(rel.clone(), old.clone());
        }
        // The index as before the move (the killed read-tree may have written it).
        self.run_with(
            &["update-index", "-z", "--index-info"],
            &[],
            self.index_info(&reset).as_bytes(),
            deadline,
            "putting the index back (interrupted pull, git update-index)",
        )?;
        let _ = fs::remove_file(&path);
        said.push(if edited.is_empty() {
            "an interrupted pull was rolled back to where it started; this sync pulls again"
                .to_string()
        } else {
            format!(
                "an interrupted pull was rolled back: {} changed since it stopped",
                edited.join(", ")
            )
        });
        Ok(())
    }

    /// The paths `to` changes against `from` (its parent when `None`; the empty tree for a
    /// root commit), under `dir/` when `dir` is not empty.
    fn changed(
        &self,
        from: Option<&str>,
        to: &str,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<Vec<Changed>, GitError> {
        let mut args = vec!["diff-tree", "-r", "-z", "--no-renames", "--root"];
        if from.is_none() {
            args.push("--no-commit-id");
        }
        args.extend(from);
        args.push(to);
        let pathspec = format!(":(literal){dir}/");
        if !dir.is_empty() {
            args.extend(["--", &pathspec]);
        }
        let out = self.run(
            &args,
            deadline,
            "listing what a move changes (git diff-tree)",
        )?;
        let zero = self.zero_id();
        let entry = |mode: &str, id: &str| {
            (id != zero).then(|| TreeEntry {
                mode: mode.to_string(),
                id: id.to_string(),
            })
        };
        let mut fields = out.split('\0');
        let mut found = Vec::new();
        while let Some(meta) = fields.next() {
            let Some(meta) = meta.strip_prefix(':') else {
                continue;
            };
            let Some(path) = fields.next() else { break };
            let parts: Vec<&str> = meta.split(' ').collect();
            if let [old_mode, new_mode, old_id, new_id, _status] = parts[..] {
                found.push((
                    path.to_string(),
                    entry(old_mode, old_id),
                    entry(new_mode, new_id),
                ));
            }
        }
        Ok(found)
    }

    fn on_disk(
        &self,
        rel: &str,
        abs: &Path,
        from: Option<&TreeEntry>,
        to: Option<&TreeEntry>,
        deadline: &Deadline,
    ) -> Result<OnDisk, GitError> {
        let Ok(meta) = fs::symlink_metadata(abs) else {
            return Ok(match (from, to) {
                (None, _) => OnDisk::AsFrom,
                (_, None) => OnDisk::AsTo,
                _ => OnDisk::Missing,
            });
        };
        let bytes = if meta.file_type().is_symlink() {
            match fs::read_link(abs) {
                Ok(target) => target.into_os_string().into_encoded_bytes(),
                Err(_) => return Ok(OnDisk::Edited),
            }
        } else if meta.is_file() {
            match fs::read(abs) {
                Ok(bytes) => bytes,
                Err(_) => return Ok(OnDisk::Edited),
            }
        } else {
            return Ok(OnDisk::Edited);
        };
        // As stored raw, and as `git add` would store it (line endings converted).
        let raw = self.store_hash(&["--no-filters".to_string()], &bytes, deadline)?;
        let converted = self.store_hash(&[format!("--path={rel}")], &bytes, deadline)?;
        let is = |e: Option<&TreeEntry>| e.is_some_and(|e| e.id == raw || e.id == converted);
        if is(to) {
            return Ok(OnDisk::AsTo);
        }
        if is(from) {
            return Ok(OnDisk::AsFrom);
        }
        if let Some(to) = to {
            let written = self.checked_out_bytes(rel, &to.id, deadline)?;
            if written.starts_with(&bytes) {
                return Ok(OnDisk::CutShort);
            }
        }
        Ok(OnDisk::Edited)
    }

    /// The id `bytes` would have as a blob (`git hash-object --stdin`, not written).
    fn store_hash(
        &self,
        flags: &[String],
        bytes: &[u8],
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        let mut args = vec!["hash-object", "--stdin"];
        args.extend(flags.iter().map(String::as_str));
        let out = self.run_with(
            &args,
            &[],
            bytes,
            deadline,
            "hashing a file (git hash-object)",
        )?;
        Ok(out.trim().to_string())
    }

    /// Blob `id` as a checkout writes it at `rel` (line endings converted; no filter program
    /// runs: [`CliRepo::command`] switches the repository's off).
    fn checked_out_bytes(
        &self,
        rel: &str,
        id: &str,
        deadline: &Deadline,
    ) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command();
        cmd.args(["cat-file", "--filters", &format!("--path={rel}"), id]);
        let what = "reading a file of the old tip (git cat-file)";
        let run = self.try_run(cmd, b"", deadline, what)?;
        if !run.success {
            return Err(GitError::Cli {
                context: what.into(),
                message: run.stderr.trim().to_string(),
            });
        }
        Ok(run.stdout.into_bytes())
    }

    /// Writes the old tip's version of `rel` back (or removes it, when the old tip lacks it).
    fn put_back(
        &self,
        rel: &str,
        abs: &Path,
        from: Option<&TreeEntry>,
        deadline: &Deadline,
    ) -> Result<(), GitError> {
        if let Ok(meta) = fs::symlink_metadata(abs) {
            if meta.is_dir() {
                return Ok(());
            }
            fs::remove_file(abs).map_err(|e| GitError::io(abs, e))?;
        }
        let Some(from) = from else {
            return Ok(());
        };
        if from.mode == "160000" {
            return Ok(());
        }
        if let Some(parent) = abs.parent() {
            fs::create_dir_all(parent).map_err(|e| GitError::io(parent, e))?;
        }
        if from.mode == "120000" {
            let target = self.blob(&from.id, deadline)?;
            let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&target);
            return std::os::unix::fs::symlink(target, abs).map_err(|e| GitError::io(abs, e));
        }
        let bytes = self.checked_out_bytes(rel, &from.id, deadline)?;
        fs::write(abs, bytes).map_err(|e| GitError::io(abs, e))?;
        if from.mode == "100755" {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(abs, fs::Permissions::from_mode(0o755));
        }
        Ok(())
    }
}

fn write_note(path: &Path, text: &str) -> Result<(), GitError> {
    crate::domain::store::write_atomic(path, text.as_bytes())
        .map_err(|e| GitError::io(path, std::io::Error::other(e.to_string())))
}

/// A note's text and when it was written; `None` when there is none.
fn read_note(path: &Path) -> Option<(String, Option<SystemTime>)> {
    let text = fs::read_to_string(path).ok()?;
    let at = fs::metadata(path).ok().and_then(|m| m.modified().ok());
    Some((text, at))
}

/// Removes the temporary indexes (`teammem-index-<pid>-<n>` and their locks, outside the
/// repository) of syncs that are gone.
fn remove_dead_scratch_indexes() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("teammem-index-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !process_alive(pid) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}
