//! When tracked files last changed, and when they were first added, read through the installed
//! git for a repository libgit2 cannot open: what `history/file.rs` finds through libgit2, with
//! the same rule for merges (a merge counts as changing a file only when the file differs from
//! every parent: `git log --cc`).

use std::collections::HashMap;

use super::CliRepo;
use crate::git::GitError;
use crate::git::remote::Deadline;

/// The last commit that changed a file, as `git log` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliChange {
    /// Author time, seconds since the Unix epoch.
    pub time: i64,
    /// The author's name.
    pub author: String,
}

impl CliRepo {
    /// The blob ids `HEAD`'s tree holds at `paths` (relative to the repository root); paths not
    /// in `HEAD`, and every path of an unborn `HEAD`, are left out.
    pub fn head_blob_ids(
        &self,
        paths: &[String],
        deadline: &Deadline,
    ) -> Result<HashMap<String, String>, GitError> {
        let mut out = HashMap::new();
        if paths.is_empty() || self.resolve("HEAD^{commit}", deadline)?.is_none() {
            return Ok(out);
        }
        let mut args = vec!["ls-tree", "-z", "--full-tree", "HEAD", "--"];
        let specs: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
        args.extend(specs.iter().map(String::as_str));
        let listed = self.run(&args, deadline, "reading HEAD's memories (git ls-tree)")?;
        for record in listed.split('\0') {
            let Some((meta, path)) = record.split_once('\t') else {
                continue;
            };
            if let Some(id) = meta.split(' ').nth(2) {
                out.insert(path.to_string(), id.to_string());
            }
        }
        Ok(out)
    }

    /// The last commit that changed each of `paths` (relative to the repository root), walking
    /// HEAD's history below `dir` once; paths whose change is not found are left out.
    pub fn last_changes(
        &self,
        paths: &[String],
        dir: &str,
        deadline: &Deadline,
    ) -> Result<HashMap<String, CliChange>, GitError> {
        let mut found = HashMap::new();
        if paths.is_empty() {
            return Ok(found);
        }
        let wanted: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        for (change, touched) in self.log(dir, &[], deadline)? {
            for path in touched {
                if wanted.contains(path.as_str()) && !found.contains_key(&path) {
                    found.insert(path, change.clone());
                }
            }
            if found.len() == wanted.len() {
                break;
            }
        }
        Ok(found)
    }

    /// When each of `paths` was first added (the author time of the oldest commit that brought
    /// it in), walking HEAD's history below `dir` once; paths never added are left out.
    pub fn first_additions(
        &self,
        paths: &[String],
        dir: &str,
        deadline: &Deadline,
    ) -> Result<HashMap<String, i64>, GitError> {
        let mut found: HashMap<String, i64> = HashMap::new();
        if paths.is_empty() {
            return Ok(found);
        }
        let wanted: std::collections::HashSet<&str> = paths.iter().map(String::as_str).collect();
        for (change, touched) in self.log(dir, &["--diff-filter=A"], deadline)? {
            for path in touched {
                if wanted.contains(path.as_str()) {
                    let slot = found.entry(path).or_insert(change.time);
                    *slot = (*slot).min(change.time);
                }
            }
        }
        Ok(found)
    }

    /// HEAD's commits that touch `dir`, newest first, each with the paths it changed.
    fn log(
        &self,
        dir: &str,
        extra: &[&str],
        deadline: &Deadline,
    ) -> Result<Vec<(CliChange, Vec<String>)>, GitError> {
        if self.resolve("HEAD^{commit}", deadline)?.is_none() {
            return Ok(Vec::new());
        }
        let spec = format!(":(literal){dir}");
        let mut args = vec![
            "log",
            "-z",
            "--cc",
            "--name-only",
            "--no-renames",
            "--format=%x01%at%x02%an",
        ];
        args.extend_from_slice(extra);
        args.extend(["HEAD", "--", &spec]);
        let out = self.run(&args, deadline, "reading the memories' history (git log)")?;
        // Each commit: `\x01TIME\x02AUTHOR\0` then, after a newline, its paths, each NUL-ended.
        let mut commits = Vec::new();
        for chunk in out.split('\u{1}').filter(|c| !c.is_empty()) {
            let mut fields = chunk.split('\0');
            let Some((time, author)) = fields.next().and_then(|h| h.split_once('\u{2}')) else {
                continue;
            };
            let Ok(time) = time.trim().parse() else {
                continue;
            };
            let paths = fields
                .map(|p| p.trim_start_matches('\n'))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            let author = author.to_string();
            commits.push((CliChange { time, author }, paths));
        }
        Ok(commits)
    }
}
