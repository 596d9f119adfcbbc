//! A range of commits read through the installed git, for a repository libgit2 cannot open:
//! what `history/folder.rs` and `history/removal.rs` find through libgit2 for `check --range`,
//! `check --ref-updates` and `review` — every file version each commit of the range wrote in
//! a folder (compared with its first parent, a merge's other sides left out), the folder's
//! change between two revisions with renames, what a change removes, and the commit that
//! removed a path. Commits are read raw (`git cat-file --batch`), so names, emails and subjects
//! are the bytes libgit2 reads, never rewritten by a `.mailmap` or a log format.

use std::collections::HashMap;
use std::ffi::OsStr;

use super::CliRepo;
use crate::git::GitError;
use crate::git::history::folder::{CommitInfo, RevisionChange};
use crate::git::history::removal::Removed;
use crate::git::remote::Deadline;

/// One file change a commit made in the folder (ids as git prints them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedChange {
    /// Index of the commit in [`RangeWalk::commits`].
    pub commit: usize,
    /// Path relative to the folder.
    pub rel: String,
    /// The new blob and mode; `None` when the commit deleted the file.
    pub new: Option<(String, u32)>,
}

/// The commits of `BASE..HEAD` (oldest first) and the folder changes each made.
#[derive(Debug, Clone, Default)]
pub struct RangeWalk {
    /// Commits reachable from HEAD but not from BASE, parents before children.
    pub commits: Vec<CommitInfo>,
    /// Changes in commit order.
    pub changes: Vec<WalkedChange>,
}

/// One file's change between two revisions, renames found by git's rename detection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffEntry {
    /// What happened.
    pub kind: RevisionChange,
    /// The old path (relative to the folder), blob and mode; absent when added.
    pub old: Option<(String, String, u32)>,
    /// The new path, blob and mode; absent when deleted.
    pub new: Option<(String, String, u32)>,
}

/// A person line of a commit (`author`, `committer`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Person {
    /// The name.
    pub name: String,
    /// The email, without the angle brackets.
    pub email: String,
    /// Seconds since the Unix epoch.
    pub time: i64,
}

/// A commit as its object says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawCommit {
    /// Its id.
    pub id: String,
    /// Its parents, first parent first.
    pub parents: Vec<String>,
    /// Who wrote it.
    pub author: Person,
    /// Who committed it.
    pub committer: Person,
    /// The first paragraph of its message on one line, as libgit2's `summary` gives it.
    pub summary: String,
}

impl CliRepo {
    /// The commit `rev` names; an error that says how far back the history goes when `rev`
    /// walks past the first commit (`HEAD~100` on a short history).
    pub fn resolve_commit(&self, rev: &str, deadline: &Deadline) -> Result<String, GitError> {
        if let Some(id) = self.resolve(&format!("{rev}^{{commit}}"), deadline)? {
            return Ok(id);
        }
        let not_found = |message: String| GitError::Cli {
            context: format!("resolving `{rev}`"),
            message,
        };
        let Some(at) = rev.find(['~', '^']) else {
            return Err(not_found(format!("`{rev}` names no commit here")));
        };
        let base = if at == 0 { "HEAD" } else { &rev[..at] };
        let Some(start) = self.resolve(&format!("{base}^{{commit}}"), deadline)? else {
            return Err(not_found(format!("`{base}` names no commit here")));
        };
        let count = self.run(
            &["rev-list", "--first-parent", "--count", &start, "--"],
            deadline,
            "counting commits (git rev-list)",
        )?;
        let depth = count.trim().parse::<usize>().unwrap_or(1).saturating_sub(1);
        Err(not_found(format!(
            "`{base}` has only {depth} commit{} before it, so `{rev}` is past the first commit \
             — use a base inside the history (`{base}~{depth}` is the first commit), or `--all` \
             to check what HEAD holds",
            if depth == 1 { "" } else { "s" }
        )))
    }

    /// The commits `git rev-list --parents ARGS` lists, in its order, each read raw by one
    /// `git cat-file --batch`; the parents are rev-list's, so a shallow clone's oldest commits
    /// have none, as git (and the libgit2 path) sees them.
    fn listed_commits(
        &self,
        args: &[&str],
        deadline: &Deadline,
        what: &str,
    ) -> Result<Vec<RawCommit>, GitError> {
        let mut all = vec!["rev-list", "--parents"];
        all.extend_from_slice(args);
        all.push("--");
        let listed = self.run(&all, deadline, what)?;
        let lines: Vec<Vec<&str>> = listed
            .lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .filter(|ids| !ids.is_empty() && !ids[0].is_empty())
            .collect();
        let ids: Vec<&str> = lines.iter().map(|ids| ids[0]).collect();
        let objects = self.blobs(&ids, deadline)?;
        Ok(lines
            .iter()
            .map(|ids| {
                let mut commit = parse_commit(
                    ids[0],
                    objects.get(ids[0]).map(Vec::as_slice).unwrap_or(&[]),
                );
                commit.parents = ids[1..].iter().map(|p| p.to_string()).collect();
                commit
            })
            .collect())
    }

    /// [`Self::run_with`] with no object fetched from a promisor remote: a partial clone's
    /// missing blob is an error, never a download in the middle of a check.
    fn run_local(
        &self,
        args: &[&str],
        input: &[u8],
        deadline: &Deadline,
        what: &str,
    ) -> Result<String, GitError> {
        let (key, value) = super::folder::NO_LAZY_FETCH;
        self.run_with(args, &[(key, OsStr::new(value))], input, deadline, what)
    }

    /// Walks `base..head` as `git log --date-order base..head` lists it (parents before
    /// children), each commit's changes below `folder` compared with its first parent (a root
    /// commit with nothing): what `history::folder::range` finds through libgit2. A merge's
    /// change leaves out the versions one of its other parents already had.
    pub fn folder_range(
        &self,
        base: &str,
        head: &str,
        folder: &str,
        deadline: &Deadline,
    ) -> Result<RangeWalk, GitError> {
        let commits = self.listed_commits(
            &["--date-order", "--reverse", &format!("{base}..{head}")],
            deadline,
            "listing the commits of the range (git rev-list)",
        )?;
        let mut out = RangeWalk::default();
        if commits.is_empty() {
            return Ok(out);
        }
        // One `diff-tree` for the whole range: each line `COMMIT [FIRST-PARENT]`.
        let input: String = commits
            .iter()
            .map(|c| match c.parents.first() {
                Some(parent) => format!("{} {parent}\n", c.id),
                None => format!("{}\n", c.id),
            })
            .collect();
        let spec = format!(":(literal){folder}/");
        let diffed = self.run_local(
            &[
                "diff-tree",
                "--stdin",
                "--root",
                "--always",
                "-r",
                "-z",
                "--raw",
                "--no-renames",
                "--",
                &spec,
            ],
            input.as_bytes(),
            deadline,
            "reading what each commit changed (git diff-tree)",
        )?;
        let per_commit = raw_changes_by_commit(&diffed);
        let prefix = format!("{folder}/");
        for (index, commit) in commits.iter().enumerate() {
            out.commits.push(CommitInfo {
                id: commit.id.clone(),
                author: commit.author.name.clone(),
                email: commit.author.email.clone(),
                time: commit.author.time,
                summary: commit.summary.clone(),
            });
            let Some(changes) = per_commit.get(commit.id.as_str()) else {
                continue;
            };
            // A merge brings in versions its other parents already had: only what the merge
            // itself wrote is its change.
            let mut other_parents = Vec::new();
            if !changes.is_empty() {
                for parent in commit.parents.iter().skip(1) {
                    other_parents.push(self.tree_entries(parent, folder, deadline)?);
                }
            }
            for change in changes {
                let Some(rel) = change.path.strip_prefix(&prefix) else {
                    continue;
                };
                // A type change (a file become a symlink) is a deletion and an addition, as
                // libgit2 reports it.
                if change.status == 'T' || change.status == 'D' {
                    out.changes.push(WalkedChange {
                        commit: index,
                        rel: rel.to_string(),
                        new: None,
                    });
                    if change.status == 'D' {
                        continue;
                    }
                }
                let from_other_parent = other_parents.iter().any(|entries| {
                    entries
                        .get(&change.path)
                        .is_some_and(|e| e.id == change.new_id)
                });
                if from_other_parent {
                    continue;
                }
                out.changes.push(WalkedChange {
                    commit: index,
                    rel: rel.to_string(),
                    new: Some((change.new_id.clone(), change.new_mode)),
                });
            }
        }
        Ok(out)
    }

    /// The best common ancestor of `one` and `two` (`git merge-base`).
    pub fn merge_base(
        &self,
        one: &str,
        two: &str,
        deadline: &Deadline,
    ) -> Result<String, GitError> {
        let out = self.run(
            &["merge-base", one, two],
            deadline,
            &format!("finding the merge base of {one} and {two} (git merge-base)"),
        )?;
        Ok(out.trim().to_string())
    }

    /// The changes below `folder` from `old` to `new`, renames found as `git diff -M` finds
    /// them (50% similar content), paths relative to the folder.
    pub fn folder_diff(
        &self,
        old: &str,
        new: &str,
        folder: &str,
        deadline: &Deadline,
    ) -> Result<Vec<DiffEntry>, GitError> {
        let spec = format!(":(literal){folder}/");
        let out = self.run_local(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--raw",
                "-M",
                old,
                new,
                "--",
                &spec,
            ],
            b"",
            deadline,
            &format!("diffing {old}..{new} (git diff-tree)"),
        )?;
        let prefix = format!("{folder}/");
        let rel = |path: &str| path.strip_prefix(&prefix).unwrap_or(path).to_string();
        let mut entries = Vec::new();
        for change in raw_changes(out.split('\0')) {
            let old_side = || (rel(&change.path), change.old_id.clone(), change.old_mode);
            let new_path = change.new_path.as_deref().unwrap_or(&change.path);
            let new_side = || (rel(new_path), change.new_id.clone(), change.new_mode);
            let entry = match change.status {
                'A' | 'C' => DiffEntry {
                    kind: RevisionChange::Added,
                    old: None,
                    new: Some(new_side()),
                },
                'D' => DiffEntry {
                    kind: RevisionChange::Deleted,
                    old: Some(old_side()),
                    new: None,
                },
                'R' => DiffEntry {
                    kind: RevisionChange::Renamed,
                    old: Some(old_side()),
                    new: Some(new_side()),
                },
                // libgit2 reports a type change as a deletion and an addition.
                'T' => {
                    entries.push(DiffEntry {
                        kind: RevisionChange::Deleted,
                        old: Some(old_side()),
                        new: None,
                    });
                    DiffEntry {
                        kind: RevisionChange::Added,
                        old: None,
                        new: Some(new_side()),
                    }
                }
                _ => DiffEntry {
                    kind: RevisionChange::Modified,
                    old: Some(old_side()),
                    new: Some(new_side()),
                },
            };
            entries.push(entry);
        }
        Ok(entries)
    }

    /// What `new` removes of `old` (two commits), renames found as `git diff -M` finds them.
    pub fn removed_between(
        &self,
        old: &str,
        new: &str,
        deadline: &Deadline,
    ) -> Result<Removed, GitError> {
        let out = self.run_local(
            &["diff-tree", "-r", "-z", "--raw", "-M", old, new],
            b"",
            deadline,
            &format!("diffing {old}..{new} (git diff-tree)"),
        )?;
        Ok(removed_in(&out))
    }

    /// For each of `paths` (`true`: a folder) missing at `head`, the commit of `head`'s
    /// first-parent history that removed it, as `history::removal::removals` finds it: the
    /// newest first-parent commit whose first parent still has the path, or, when that is a
    /// merge whose other side had already removed it, the commit on that side that did. At
    /// most `limit` first-parent commits are looked at; a path not found is left out.
    pub fn removing_commits(
        &self,
        head: &str,
        paths: &[(String, bool)],
        limit: usize,
        deadline: &Deadline,
    ) -> Result<HashMap<String, String>, GitError> {
        let mut found = HashMap::new();
        if paths.is_empty() {
            return Ok(found);
        }
        let chain = self.run(
            &[
                "rev-list",
                "--first-parent",
                "--parents",
                &format!("--max-count={limit}"),
                head,
                "--",
            ],
            deadline,
            "walking first-parent history (git rev-list)",
        )?;
        let mut parents_of: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut chain_ids = Vec::new();
        for line in chain.lines() {
            let mut ids = line.split(' ');
            let Some(commit) = ids.next() else {
                continue;
            };
            parents_of.insert(commit, ids.collect());
            chain_ids.push(commit);
        }
        let Some((&tip, older)) = chain_ids.split_first() else {
            return Ok(found);
        };
        let Some(&tip_parent) = parents_of.get(tip).and_then(|p| p.first()) else {
            return Ok(found);
        };
        // The first commit whose first parent has the path: HEAD itself when HEAD's parent has
        // it (a folder that still holds other files); else, the path being gone from HEAD's
        // parent on, the newest older commit that changed it.
        let mut pending: Vec<&(String, bool)> = Vec::new();
        for wanted in paths {
            if self
                .resolve(&format!("{tip_parent}:{}", wanted.0), deadline)?
                .is_some()
            {
                found.insert(wanted.0.clone(), tip.to_string());
            } else {
                pending.push(wanted);
            }
        }
        // A root (or a shallow clone's oldest commit) has nothing to compare with.
        let input: String = older
            .iter()
            .filter_map(|c| {
                let first = parents_of.get(c)?.first()?;
                Some(format!("{c} {first}\n"))
            })
            .collect();
        if !pending.is_empty() && !input.is_empty() {
            let specs: Vec<String> = pending
                .iter()
                .map(|(path, _)| format!(":(literal){path}"))
                .collect();
            let mut args = vec!["diff-tree", "--stdin", "-r", "-z", "--name-only", "--"];
            args.extend(specs.iter().map(String::as_str));
            let touched = self.run_local(
                &args,
                input.as_bytes(),
                deadline,
                "finding the commits that removed paths (git diff-tree)",
            )?;
            // Records: a commit id, then the paths it changed.
            let mut current: Option<&str> = None;
            for record in touched.split('\0').filter(|r| !r.is_empty()) {
                if parents_of.contains_key(record) {
                    current = Some(record);
                    continue;
                }
                let Some(commit) = current else {
                    continue;
                };
                for (path, folder) in pending.iter().copied() {
                    let hit = if *folder {
                        record.starts_with(&format!("{path}/"))
                    } else {
                        record == path
                    };
                    if hit && !found.contains_key(path) {
                        found.insert(path.clone(), commit.to_string());
                    }
                }
                if found.len() == paths.len() {
                    break;
                }
            }
        }
        for (path, _) in paths {
            let Some(commit) = found.get(path).cloned() else {
                continue;
            };
            let Some(side) = parents_of.get(commit.as_str()).and_then(|p| p.get(1)) else {
                continue;
            };
            if self.resolve(&format!("{side}:{path}"), deadline)?.is_some() {
                continue;
            }
            let spec = format!(":(literal){path}");
            let on_side = self.run(
                &["rev-list", "--first-parent", "-1", side, "--", &spec],
                deadline,
                "following a merge's other side (git rev-list)",
            )?;
            if let Some(id) = on_side.lines().next().filter(|id| !id.is_empty()) {
                found.insert(path.clone(), id.to_string());
            }
        }
        Ok(found)
    }

    /// The commits of `base..head` as `git rev-list --topo-order --reverse` lists them
    /// (parents before children), read raw.
    pub fn range_commits(
        &self,
        base: &str,
        head: &str,
        deadline: &Deadline,
    ) -> Result<Vec<RawCommit>, GitError> {
        self.listed_commits(
            &["--topo-order", "--reverse", &format!("{base}..{head}")],
            deadline,
            "listing the commits of the range (git rev-list)",
        )
    }

    /// The commits reachable from `tips` that no ref (nor HEAD) reaches, newest first, read
    /// raw: what a ref transaction brings in that the repository did not have on a ref.
    pub fn unreferenced_commits(
        &self,
        tips: &[String],
        deadline: &Deadline,
    ) -> Result<Vec<RawCommit>, GitError> {
        if tips.is_empty() {
            return Ok(Vec::new());
        }
        let mut args: Vec<&str> = tips.iter().map(String::as_str).collect();
        args.extend(["--not", "--all"]);
        self.listed_commits(&args, deadline, "listing new commits (git rev-list)")
    }
}

/// One record of `git diff-tree --raw -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RawChange {
    old_mode: u32,
    new_mode: u32,
    old_id: String,
    new_id: String,
    /// The status letter (`A`, `M`, `D`, `T`, `R`, `C`).
    status: char,
    /// The path (the old one of a rename or copy).
    path: String,
    /// The new path of a rename or copy.
    new_path: Option<String>,
}

/// The records of a `--raw -z` listing: `:OLDMODE NEWMODE OLDID NEWID STATUS\0PATH\0` (a
/// rename or copy has a second path); other fields (commit headers) are skipped.
fn raw_changes<'a>(fields: impl Iterator<Item = &'a str>) -> Vec<RawChange> {
    let mut out = Vec::new();
    let mut fields = fields.peekable();
    while let Some(field) = fields.next() {
        let Some(meta) = field.strip_prefix(':') else {
            continue;
        };
        let mut parts = meta.split(' ');
        let (Some(old_mode), Some(new_mode), Some(old_id), Some(new_id), Some(status)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        let status = status.chars().next().unwrap_or('M');
        let Some(path) = fields.next() else {
            break;
        };
        let new_path = if matches!(status, 'R' | 'C') {
            fields.next().map(str::to_string)
        } else {
            None
        };
        let mode = |m: &str| u32::from_str_radix(m, 8).unwrap_or(0);
        out.push(RawChange {
            old_mode: mode(old_mode),
            new_mode: mode(new_mode),
            old_id: old_id.to_string(),
            new_id: new_id.to_string(),
            status,
            path: path.to_string(),
            new_path,
        });
    }
    out
}

/// `diff-tree --stdin --always --raw -z` output by commit: each commit's id is a field of
/// its own, followed by its records.
fn raw_changes_by_commit(out: &str) -> HashMap<&str, Vec<RawChange>> {
    let mut fields_by_commit: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut fields = out.split('\0');
    while let Some(field) = fields.next() {
        if field.is_empty() {
            continue;
        }
        if field.starts_with(':') {
            // Its path follows (one: renames are not asked for here).
            let path = fields.next().unwrap_or_default();
            if let Some((_, pending)) = fields_by_commit.last_mut() {
                pending.extend([field, path]);
            }
            continue;
        }
        fields_by_commit.push((field, Vec::new()));
    }
    fields_by_commit
        .into_iter()
        .map(|(commit, fields)| (commit, raw_changes(fields.into_iter())))
        .collect()
}

/// The removals in a `diff-tree -r -z --raw -M` listing: each deleted path, and each renamed
/// one with its new path.
fn removed_in(out: &str) -> Removed {
    let mut removed = Removed::new();
    for change in raw_changes(out.split('\0')) {
        match change.status {
            'D' => {
                removed.insert(change.path, None);
            }
            'R' => {
                removed.insert(change.path, change.new_path);
            }
            _ => {}
        }
    }
    removed
}

/// A commit object's parents, people and summary.
fn parse_commit(id: &str, bytes: &[u8]) -> RawCommit {
    let text = String::from_utf8_lossy(bytes);
    let (headers, message) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut commit = RawCommit {
        id: id.to_string(),
        ..RawCommit::default()
    };
    for line in headers.lines() {
        if let Some(parent) = line.strip_prefix("parent ") {
            commit.parents.push(parent.trim().to_string());
        } else if let Some(person) = line.strip_prefix("author ") {
            commit.author = parse_person(person);
        } else if let Some(person) = line.strip_prefix("committer ") {
            commit.committer = parse_person(person);
        }
    }
    commit.summary = summary(message);
    commit
}

/// `Name <email> 1700000000 +0000`.
fn parse_person(line: &str) -> Person {
    let (name, rest) = line.split_once('<').unwrap_or((line, ""));
    let (email, rest) = rest.rsplit_once('>').unwrap_or((rest, ""));
    Person {
        name: name.trim().to_string(),
        email: email.to_string(),
        time: rest
            .split_whitespace()
            .next()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0),
    }
}

/// The first paragraph of a message on one line, as libgit2's `git_commit_summary` makes it:
/// leading blank lines skipped, a run of whitespace holding a newline made one space, other
/// runs kept, trailing whitespace dropped.
fn summary(message: &str) -> String {
    let message = message.trim_start_matches('\n');
    let bytes = message.as_bytes();
    let mut out = String::new();
    let mut space: Option<usize> = None;
    let mut contains_lf = false;
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        if c == b'\n' {
            let rest = &bytes[at + 1..];
            let blank = rest
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c'))
                .is_none_or(|n| rest[n] == b'\n');
            if blank {
                break;
            }
        }
        if c.is_ascii_whitespace() || c == b'\x0b' {
            space.get_or_insert(at);
            contains_lf |= c == b'\n';
        } else {
            if let Some(start) = space.take() {
                if contains_lf {
                    out.push(' ');
                } else {
                    out.push_str(&message[start..at]);
                }
                contains_lf = false;
            }
            let len = message[at..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&message[at..at + len]);
            at += len;
            continue;
        }
        at += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_the_first_paragraph_on_one_line() {
        assert_eq!(
            summary("\n\nfix the thing\nacross lines\n\nbody"),
            "fix the thing across lines"
        );
        assert_eq!(summary("one  two\n"), "one  two");
        assert_eq!(summary("subject\n   \nbody"), "subject");
        assert_eq!(summary(""), "");
    }

    /// The summary of odd messages is what libgit2 gives for the same commit.
    #[test]
    fn summary_matches_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let tree = repo
            .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        let who = git2::Signature::new("A", "a@example.com", &git2::Time::new(0, 0)).unwrap();
        for message in [
            "plain subject",
            "  leading spaces\nsecond line\n\nbody",
            "a\tb\n c\n",
            "\n\nafter blank lines",
            "x\n \t\ny",
            "trailing   \n",
            "multi\r\nline\r\n\r\nbody",
            "ünïcode  words\nmore",
            "",
        ] {
            let id = repo.commit(None, &who, &who, message, &tree, &[]).unwrap();
            let commit = repo.find_commit(id).unwrap();
            let raw = String::from_utf8_lossy(commit.message_raw_bytes()).into_owned();
            let libgit2 =
                String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default()).into_owned();
            assert_eq!(summary(&raw), libgit2, "{message:?}");
        }
    }

    #[test]
    fn a_person_line_is_read_as_libgit2_reads_it() {
        let p = parse_person("A U Thor <a@example.com> 1700000000 +0100");
        assert_eq!(p.name, "A U Thor");
        assert_eq!(p.email, "a@example.com");
        assert_eq!(p.time, 1_700_000_000);
    }

    #[test]
    fn renames_and_deletions_are_removals() {
        let out = ":100644 000000 aa 00 D\0gone.rs\0:100644 100644 bb bb R100\0old.rs\0new.rs\0\
                   :000000 100644 00 cc A\0added.rs\0";
        let removed = removed_in(out);
        assert_eq!(removed.get("gone.rs"), Some(&None));
        assert_eq!(removed.get("old.rs"), Some(&Some("new.rs".to_string())));
        assert_eq!(removed.len(), 2);
    }
}
