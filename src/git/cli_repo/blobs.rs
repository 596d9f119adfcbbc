//! Blobs through git: the team files hashed and stored as `git add` would (their `filter`
//! attributes read first, so no filter program runs), blobs read, stored and merged, and the
//! fetched files over the size limit found by their headers.

use std::collections::BTreeMap;

use super::CliRepo;
use crate::git::GitError;
use crate::git::remote::Deadline;

impl CliRepo {
    /// Stores `bytes` as the blob of `path`, converted as `git add` would (`--path`: line
    /// endings by `core.autocrlf` and `.gitattributes`); returns its id. Callers refuse paths
    /// whose `filter` attribute names a driver that runs ([`Self::filtered`]): no filter
    /// program runs.
    pub fn store_blob(
        &self,
        path: &str,
        bytes: &[u8],
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        let out = self.run_with(
            &["hash-object", "-w", "--stdin", &format!("--path={path}")],
            &[],
            bytes,
            deadline,
            &format!("storing {path} (git hash-object)"),
        )?;
        Ok(out.trim().to_string())
    }

    /// [`Self::store_blob`] for a file of the user's: `Ok(Err(why))` when git refuses to
    /// convert it (`working-tree-encoding` naming an encoding the bytes are not in: `git add`
    /// fails the same way), so the caller holds that one file back instead of failing the sync.
    pub fn store_file_blob(
        &self,
        path: &str,
        bytes: &[u8],
        deadline: &Deadline,
    ) -> Result<Result<String, String>, GitError> {
        match self.store_blob(path, bytes, deadline) {
            Ok(id) => Ok(Ok(id)),
            Err(GitError::Cli { message, .. }) => Ok(Err(format!(
                "git cannot store it as `git add` would ({message}); save it in the encoding \
                 .gitattributes gives it, or change that attribute"
            ))),
            Err(e) => Err(e),
        }
    }

    /// The ids `git add` would give the files at `paths` (read from the work tree, not
    /// stored), in order.
    pub fn file_ids(&self, paths: &[String], deadline: &Deadline) -> Result<Vec<String>, GitError> {
        // `--stdin-paths` reads one path per line, drops a line's final carriage return and
        // unquotes a line that starts with `"`: a name it cannot carry (a teammate's file may
        // have any name) is hashed on its own, given as an argument.
        let whole_line =
            |p: &String| !p.contains('\n') && !p.ends_with('\r') && !p.starts_with('"');
        let batch: Vec<&String> = paths.iter().filter(|p| whole_line(p)).collect();
        let mut batch_ids = Vec::new();
        if !batch.is_empty() {
            let input: String = batch.iter().map(|p| format!("{p}\n")).collect();
            let out = self.run_with(
                &["hash-object", "--stdin-paths"],
                &[],
                input.as_bytes(),
                deadline,
                "reading the team files (git hash-object)",
            )?;
            batch_ids = out.lines().map(str::to_string).collect();
            if batch_ids.len() != batch.len() {
                return Err(GitError::Cli {
                    context: "reading the team files (git hash-object)".into(),
                    message: format!(
                        "{} ids for {} files — sync again",
                        batch_ids.len(),
                        batch.len()
                    ),
                });
            }
        }
        let mut batch_ids = batch_ids.into_iter();
        let mut ids = Vec::with_capacity(paths.len());
        for path in paths {
            if whole_line(path) {
                ids.extend(batch_ids.next());
                continue;
            }
            let out = self.run_with(
                &["hash-object", "--", path],
                &[],
                b"",
                deadline,
                "reading a team file (git hash-object)",
            )?;
            ids.push(out.trim().to_string());
        }
        Ok(ids)
    }

    /// The paths among `paths` that a `filter` attribute sends through a filter program
    /// (`git check-attr`): never hashed here, since that would run the program. An attribute
    /// naming a driver no config level defines (or one the repository's own config defines,
    /// which every run here switches off) sends nothing anywhere, in git as here: such a path
    /// is stored as it is, so one crafted `.gitattributes` cannot hold back every memory.
    /// Each comes with the driver's name.
    pub fn filtered(
        &self,
        paths: &[String],
        deadline: &Deadline,
    ) -> Result<Vec<(String, String)>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = paths.iter().map(|p| format!("{p}\0")).collect();
        let out = self.run_with(
            &["check-attr", "-z", "--stdin", "filter"],
            &[],
            input.as_bytes(),
            deadline,
            "reading the team files' attributes (git check-attr)",
        )?;
        // Records of three NUL-ended fields: path, attribute, value. `set` is `filter` with no
        // driver named.
        let fields: Vec<&str> = out.split('\0').collect();
        let named: Vec<(&str, &str)> = fields
            .chunks(3)
            .filter(|f| f.len() == 3 && !matches!(f[2], "unspecified" | "unset" | "set" | ""))
            .map(|f| (f[0], f[2]))
            .collect();
        let mut runs: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
        let mut filtered = Vec::new();
        for (path, driver) in named {
            let live = match runs.get(driver) {
                Some(live) => *live,
                None => {
                    let live = self.filter_driver_runs(driver, deadline)?;
                    runs.insert(driver, live);
                    live
                }
            };
            if live {
                filtered.push((path.to_string(), driver.to_string()));
            }
        }
        Ok(filtered)
    }

    /// Whether git would run the filter driver `name` here: a program for `clean` or
    /// `process`, or `required` set (git then refuses without one), at any level of the
    /// config as this repository's runs see it.
    fn filter_driver_runs(&self, name: &str, deadline: &Deadline) -> Result<bool, GitError> {
        for key in ["clean", "process"] {
            let value = self.config(&format!("filter.{name}.{key}"), deadline)?;
            if value.is_some_and(|v| !v.trim().is_empty()) {
                return Ok(true);
            }
        }
        let required = self.config(&format!("filter.{name}.required"), deadline)?;
        Ok(required.is_some_and(|v| {
            matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1")
        }))
    }

    /// The first team file `to` changes against `from` (`None`: every file of `to`) whose
    /// blob is over `limit` bytes, with its size ([`Self::changed_files`], then
    /// [`Self::oversized_among`]).
    pub fn oversized(
        &self,
        from: Option<&str>,
        to: &str,
        dir: &str,
        limit: u64,
        deadline: &Deadline,
    ) -> Result<Option<(String, u64)>, GitError> {
        let changed = self.changed_files(from, to, dir, deadline)?;
        self.oversized_among(&changed, limit, deadline)
    }

    /// The files under `dir` (paths from the root, blob ids) that `to` holds otherwise than
    /// `from` (`None`: every file of `to`); gitlinks left out.
    pub fn changed_files(
        &self,
        from: Option<&str>,
        to: &str,
        dir: &str,
        deadline: &Deadline,
    ) -> Result<Vec<(String, String)>, GitError> {
        let before = match from {
            Some(from) => self.tree_entries(from, dir, deadline)?,
            None => BTreeMap::new(),
        };
        Ok(self
            .tree_entries(to, dir, deadline)?
            .into_iter()
            .filter(|(path, entry)| before.get(path) != Some(entry) && entry.mode != "160000")
            .map(|(path, entry)| (path, entry.id))
            .collect())
    }

    /// The first of `changed` (paths and blob ids) whose blob is over `limit` bytes, with its
    /// size: only object headers are read (`git cat-file --batch-check`), never the contents.
    pub fn oversized_among(
        &self,
        changed: &[(String, String)],
        limit: u64,
        deadline: &Deadline,
    ) -> Result<Option<(String, u64)>, GitError> {
        if changed.is_empty() {
            return Ok(None);
        }
        let input: String = changed.iter().map(|(_, id)| format!("{id}\n")).collect();
        let sizes = self.run_with(
            &["cat-file", "--batch-check=%(objectsize)"],
            &[],
            input.as_bytes(),
            deadline,
            "reading the fetched files' sizes (git cat-file)",
        )?;
        Ok(changed
            .iter()
            .zip(sizes.lines())
            .filter_map(|((path, _), size)| Some((path, size.trim().parse::<u64>().ok()?)))
            .find(|(_, size)| *size > limit)
            .map(|(path, size)| (path.clone(), size)))
    }

    /// git's text merge of three blobs (`git merge-file -p --object-id`, git 2.43 or later;
    /// `None` for base: an empty one): the merged bytes when it merges cleanly, `None` when
    /// it conflicts, a side is binary, or this git cannot merge blobs by id.
    pub fn merge_blobs(
        &self,
        base: Option<&str>,
        ours: &str,
        theirs: &str,
        deadline: &Deadline,
    ) -> Result<Option<Vec<u8>>, GitError> {
        let empty;
        let base = match base {
            Some(base) => base,
            None => {
                empty = self.store_raw(b"", deadline)?;
                &empty
            }
        };
        let mut cmd = self.command();
        // `git merge-file <current> <base> <other>`.
        cmd.args(["merge-file", "-p", "--object-id", ours, base, theirs]);
        let run = self.try_run(cmd, b"", deadline, "merging a memory (git merge-file)")?;
        if !run.success || run.stdout.contains('\0') {
            return Ok(None);
        }
        Ok(Some(run.stdout.into_bytes()))
    }

    /// Stores `bytes` as a blob exactly as given (no conversion, no filter); returns its id.
    pub fn store_raw(&self, bytes: &[u8], deadline: &Deadline) -> Result<String, GitError> {
        let out = self.run_with(
            &["hash-object", "-w", "--stdin", "--no-filters"],
            &[],
            bytes,
            deadline,
            "storing a merged memory (git hash-object)",
        )?;
        Ok(out.trim().to_string())
    }

    /// Whether `id` names an object git holds that is not a blob (`git cat-file -t`): a
    /// crafted tree entry with a file's mode that names a folder or a commit.
    pub fn holds_non_blob(&self, id: &str, deadline: &Deadline) -> Result<bool, GitError> {
        let mut cmd = self.command();
        cmd.args(["cat-file", "-t", id]);
        let run = self.try_run(
            cmd,
            b"",
            deadline,
            "reading an object's kind (git cat-file)",
        )?;
        Ok(run.success && run.stdout.trim() != "blob")
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: &str, deadline: &Deadline) -> Result<Vec<u8>, GitError> {
        Ok(self
            .run(
                &["cat-file", "blob", id],
                deadline,
                "reading a memory (git cat-file)",
            )?
            .into_bytes())
    }
}
