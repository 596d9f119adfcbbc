//! What `HEAD` holds at the paths memories name, read through the installed git for a
//! repository libgit2 cannot open: the facts `ops/references.rs` judges a memory's references
//! by. History is not walked here, so a path gone from `HEAD` is reported missing, without the
//! commit that removed it.

use std::collections::HashMap;

use super::CliRepo;
use crate::git::GitError;
use crate::git::remote::Deadline;

/// What `HEAD` (or the index) holds at one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAtHead {
    /// A file, with its lines (`None`: binary, or its lines were not asked for).
    File(Option<usize>),
    /// A folder; or a path the index holds that no commit has yet (being added).
    Present,
    /// Neither `HEAD` nor the index has it.
    Missing,
}

impl CliRepo {
    /// What `HEAD` holds at each of `paths` (relative to the repository root); the files in
    /// `with_lines` get their line count. An unborn `HEAD` holds nothing.
    pub fn paths_at_head(
        &self,
        paths: &[String],
        with_lines: &[String],
        deadline: &Deadline,
    ) -> Result<HashMap<String, PathAtHead>, GitError> {
        let mut out: HashMap<String, PathAtHead> = paths
            .iter()
            .map(|p| (p.clone(), PathAtHead::Missing))
            .collect();
        if paths.is_empty() {
            return Ok(out);
        }
        let specs: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
        let mut blobs: Vec<(String, String)> = Vec::new();
        if self.resolve("HEAD^{commit}", deadline)?.is_some() {
            let mut args = vec!["ls-tree", "-z", "--full-tree", "HEAD", "--"];
            args.extend(specs.iter().map(String::as_str));
            let listed = self.run(&args, deadline, "looking up named paths (git ls-tree)")?;
            for record in listed.split('\0') {
                let Some((meta, path)) = record.split_once('\t') else {
                    continue;
                };
                let mut fields = meta.split(' ');
                let (_, kind, id) = (fields.next(), fields.next(), fields.next());
                let Some(slot) = out.get_mut(path) else {
                    continue;
                };
                *slot = match kind {
                    Some("blob") => {
                        if let Some(id) = id.filter(|_| with_lines.iter().any(|w| w == path)) {
                            blobs.push((path.to_string(), id.to_string()));
                        }
                        PathAtHead::File(None)
                    }
                    _ => PathAtHead::Present,
                };
            }
        }
        let missing: Vec<&String> = specs
            .iter()
            .zip(paths)
            .filter(|(_, p)| out.get(*p) == Some(&PathAtHead::Missing))
            .map(|(spec, _)| spec)
            .collect();
        if !missing.is_empty() {
            let mut args = vec!["ls-files", "-z", "--"];
            args.extend(missing.iter().map(|s| s.as_str()));
            let staged = self.run(&args, deadline, "looking up named paths (git ls-files)")?;
            for entry in staged.split('\0').filter(|e| !e.is_empty()) {
                for (path, slot) in out.iter_mut() {
                    let inside = entry
                        .strip_prefix(path.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
                    if inside && *slot == PathAtHead::Missing {
                        *slot = PathAtHead::Present;
                    }
                }
            }
        }
        let ids: Vec<&str> = blobs.iter().map(|(_, id)| id.as_str()).collect();
        let bytes = self.blobs(&ids, deadline)?;
        for (path, id) in &blobs {
            if let Some(bytes) = bytes.get(id) {
                out.insert(path.clone(), PathAtHead::File(line_count(bytes)));
            }
        }
        Ok(out)
    }
}

/// A file's lines (a last line without a newline counts), or `None` for a binary file (a NUL
/// in its first 8,000 bytes, git's test), which has no lines to point at.
fn line_count(bytes: &[u8]) -> Option<usize> {
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return None;
    }
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    Some(newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n')))
}
