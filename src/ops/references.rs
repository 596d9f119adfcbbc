//! Whether what a memory names still holds at `HEAD`, said in one line where the memory is
//! delivered (`context`, `session-start`, `prompt-context`, `recall`, MCP reads and searches)
//! and listed by `stale` and `dream`.
//!
//! A path is looked up in `HEAD`'s tree, then in the index (a file being added counts as
//! there); nothing reads the work tree. For a path that is gone, history says which commit
//! removed or renamed it. What a process learns is kept for its life (the MCP server's
//! included), per repository and `HEAD`; what history said is also kept between processes in
//! the project's state folder (`references.json`), so a session start does not walk it again
//! while `HEAD` stays, and when `HEAD` moves a walk from the new `HEAD` that reaches the old
//! one reuses the old answers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::domain::gate;
use crate::domain::memory::MemoryFile;
use crate::domain::recall::usage::utc_date;
use crate::domain::references::{self, Form, Lines, Reference};
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::git::cli_repo::paths::PathAtHead;
use crate::git::cli_repo::{CliRepo, Opened};
use crate::git::history::removal::{self, AtHead, HeadTree, Removal, WalkEnd, WalkFrom, WalkLimit};
use crate::git::repo;

use super::{OpError, Project};

/// How long one delivery may spend walking history for the paths that are gone: the walk is
/// the only part whose cost grows with the repository, and a session must not wait for it.
/// The first [`removal::ALWAYS_WALKED`] commits are walked whatever the clock says.
pub const HISTORY_BUDGET: Duration = Duration::from_millis(50);

/// The most first-parent commits that walk looks at.
pub const HISTORY_COMMITS: usize = 5_000;

/// A reference that no longer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Broken {
    /// The path is gone from `HEAD`; history names the commit that removed or renamed it.
    Removed {
        /// The path as the memory names it.
        path: String,
        /// The commit, its author and date, and the new name if it was renamed.
        removal: Removal,
    },
    /// The path is not in `HEAD`, and the history walked does not say where it went.
    Missing {
        /// The path as the memory names it.
        path: String,
    },
    /// A line past the file's end.
    PastEnd {
        /// The path.
        path: String,
        /// The lines named.
        lines: Lines,
        /// The file's lines at `HEAD`.
        count: usize,
    },
}

impl Broken {
    /// The path concerned.
    pub fn path(&self) -> &str {
        match self {
            Broken::Removed { path, .. }
            | Broken::Missing { path }
            | Broken::PastEnd { path, .. } => path,
        }
    }

    /// What is wrong, in a few words: `names src/old.rs, removed in 1a2b3c4 by Alice on
    /// 2026-11-02`.
    pub fn describe(&self) -> String {
        match self {
            Broken::Removed { path, removal } => {
                let when = format!(
                    "in {} by {} on {}",
                    short(removal.commit),
                    removal.author,
                    utc_date(removal.time)
                );
                match &removal.renamed_to {
                    Some(new) => format!("names {path}, renamed to {new} {when}"),
                    None => format!("names {path}, removed {when}"),
                }
            }
            Broken::Missing { path } => format!("names {path}, which does not exist at HEAD"),
            Broken::PastEnd { path, lines, count } => {
                let at = if lines.start == lines.end {
                    format!("{path}:{}", lines.start)
                } else {
                    format!("{path}:{}-{}", lines.start, lines.end)
                };
                format!(
                    "{at} is past the file's end ({count} line{})",
                    if *count == 1 { "" } else { "s" }
                )
            }
        }
    }
}

/// What one memory's references came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryReferences {
    /// Distinct paths checked that hold.
    pub holding: usize,
    /// The references that no longer hold, each path once, in the order named.
    pub broken: Vec<Broken>,
}

impl MemoryReferences {
    /// The line said beside the memory: the first reference that no longer holds (and how
    /// many more), or a few words when all hold; `None` when the memory names no path that
    /// could be checked.
    pub fn line(&self) -> Option<String> {
        match self.broken.split_first() {
            Some((first, rest)) => {
                let more = match rest.len() {
                    0 => String::new(),
                    1 => " (and 1 more reference that no longer holds)".to_string(),
                    n => format!(" (and {n} more references that no longer hold)"),
                };
                Some(format!("Note: {}{more}.", first.describe()))
            }
            None if self.holding == 0 => None,
            None => Some(format!(
                "References checked: {} path{} exist{}.",
                self.holding,
                if self.holding == 1 { "" } else { "s" },
                if self.holding == 1 { "s" } else { "" }
            )),
        }
    }
}

/// The line to deliver beside one memory of `scope` whose text (frontmatter and body) is
/// `text`: `Note: names src/old.rs, removed in 1a2b3c4 by Alice on 2026-11-02.` when a
/// reference no longer holds, `References checked: 3 paths exist.` when all hold, `None` when
/// it names nothing checkable, is a user memory (not tied to this repository), or the project
/// has no repository. The line is safe to put in an agent's context as it is
/// ([`gate::for_agent`]). Never fails: a repository that cannot be read gives `None`.
///
/// For many memories at once, [`references_lines`] opens the repository once.
pub fn references_line(project: &Project, scope: ScopeKind, text: &str) -> Option<String> {
    references_lines(project, &[(scope, text)]).pop().flatten()
}

/// [`references_line`] for each of several memories, in order, with one look at the
/// repository for all of them.
pub fn references_lines(project: &Project, memories: &[(ScopeKind, &str)]) -> Vec<Option<String>> {
    let checked = check_memories(project, memories).unwrap_or_else(|_| {
        memories
            .iter()
            .map(|_| MemoryReferences::default())
            .collect()
    });
    checked
        .iter()
        .map(|m| m.line().map(|l| gate::for_agent(&l)))
        .collect()
}

/// The text of a memory whose references are checked: its name, description, keywords and
/// body (other frontmatter keys are the memory's own bookkeeping).
pub fn memory_text(file: &MemoryFile) -> String {
    let keywords = file.keywords.as_deref().unwrap_or_default().join(" ");
    format!(
        "{}\n{}\n{keywords}\n{}",
        file.name, file.description, file.body
    )
}

/// The most memories [`index_block`] names one by one.
pub const LISTED: usize = 20;

/// What is said under a scope's index at session start: how many paths its memories name
/// that exist at `HEAD`, and each memory whose references no longer hold (the first
/// [`LISTED`], then how many more). Empty when the memories name nothing checkable. Safe for
/// an agent's context as it is.
pub fn index_block(
    project: &Project,
    scope: ScopeKind,
    memories: &[(&str, &[Reference])],
) -> String {
    if scope == ScopeKind::User {
        return String::new();
    }
    let named: Vec<&[Reference]> = memories.iter().map(|(_, refs)| *refs).collect();
    let Ok(checked) = check_named(project, &named) else {
        return String::new();
    };
    let holding: usize = checked.iter().map(|m| m.holding).sum();
    let broken: Vec<(&str, &MemoryReferences)> = memories
        .iter()
        .zip(&checked)
        .filter(|(_, m)| !m.broken.is_empty())
        .map(|((rel, _), m)| (*rel, m))
        .collect();
    if holding == 0 && broken.is_empty() {
        return String::new();
    }
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            many.to_string()
        }
    };
    let mut out = format!(
        "\nReferences: {holding} {} named by these memories exist{} at HEAD",
        plural(holding, "path", "paths"),
        plural(holding, "s", ""),
    );
    if broken.is_empty() {
        out.push_str(".\n");
        return gate::for_agent(&out);
    }
    out.push_str(&format!(
        "; {} {} (verify before relying on {}):\n",
        broken.len(),
        plural(
            broken.len(),
            "memory names a path that no longer holds",
            "memories name paths that no longer hold"
        ),
        plural(broken.len(), "it", "them"),
    ));
    for (rel, m) in broken.iter().take(LISTED) {
        if let Some(line) = m.line() {
            out.push_str(&format!("- {scope}:{rel}: {line}\n"));
        }
    }
    if broken.len() > LISTED {
        out.push_str(&format!(
            "- … and {} more: `teammem stale` lists them all.\n",
            broken.len() - LISTED
        ));
    }
    gate::for_agent(&out)
}

/// What each memory's references came to at `HEAD` (user memories and projects without a
/// repository: nothing checked).
pub fn check_memories(
    project: &Project,
    memories: &[(ScopeKind, &str)],
) -> Result<Vec<MemoryReferences>, OpError> {
    let named: Vec<Vec<Reference>> = memories
        .iter()
        .map(|(scope, text)| match scope {
            ScopeKind::User => Vec::new(),
            _ => references::extract(text),
        })
        .collect();
    let named: Vec<&[Reference]> = named.iter().map(Vec::as_slice).collect();
    check_named(project, &named)
}

/// [`check_memories`] for references already extracted (the gate's cache keeps them with each
/// verdict, so session start reads no memory file twice).
pub fn check_named(
    project: &Project,
    named: &[&[Reference]],
) -> Result<Vec<MemoryReferences>, OpError> {
    let unchecked = || named.iter().map(|_| MemoryReferences::default()).collect();
    let Some(paths) = project.repo.as_ref() else {
        return Ok(unchecked());
    };
    if named.iter().all(|refs| refs.is_empty()) {
        return Ok(unchecked());
    }
    let repo = match crate::git::cli_repo::open(paths)? {
        Opened::Libgit2(repo) => repo,
        Opened::Git(cli) => return judge_through_git(&cli, named),
    };
    let root = paths.workdir.clone();
    let mut book = BOOK.lock().unwrap_or_else(|e| e.into_inner());
    let head = HeadTree::open(&repo)?;
    let book = book.get_or_insert_with(Book::default);
    book.turn_to(&root, head.commit(), saved_file(project));
    book.learn(
        &repo,
        &head,
        named
            .iter()
            .copied()
            .flatten()
            .map(|r| (r.path.as_str(), r.form)),
    )?;
    let out = named.iter().map(|refs| book.judge(&head, refs)).collect();
    book.save();
    Ok(out)
}

/// How long git may take to look up the named paths in a repository libgit2 cannot open.
const GIT_LOOKUP_BUDGET: Duration = Duration::from_secs(5);

/// [`check_named`] in a repository libgit2 cannot open (reftable refs, SHA-256 objects):
/// `HEAD` and the index looked up through git, each time (no saved facts), and no history
/// walked, so a path gone from `HEAD` is reported missing without the commit that removed it.
/// A bare name may live in any folder: it is not judged.
fn judge_through_git(
    cli: &CliRepo,
    named: &[&[Reference]],
) -> Result<Vec<MemoryReferences>, OpError> {
    let mut paths: Vec<String> = Vec::new();
    let mut with_lines: Vec<String> = Vec::new();
    for r in named.iter().copied().flatten() {
        if r.form == Form::Bare {
            continue;
        }
        if !paths.contains(&r.path) {
            paths.push(r.path.clone());
        }
        if r.lines.is_some() && !with_lines.contains(&r.path) {
            with_lines.push(r.path.clone());
        }
    }
    let deadline = crate::git::remote::Deadline::after(GIT_LOOKUP_BUDGET);
    let facts = cli.paths_at_head(&paths, &with_lines, &deadline)?;
    let judge = |refs: &[Reference]| {
        let mut out = MemoryReferences::default();
        let mut seen: Vec<&str> = Vec::new();
        for r in references::distinct(refs) {
            let first_time = !seen.contains(&r.path.as_str());
            seen.push(&r.path);
            let Some(fact) = facts.get(&r.path) else {
                continue;
            };
            match (fact, r.lines) {
                (PathAtHead::Missing, _) if first_time => out.broken.push(Broken::Missing {
                    path: r.path.clone(),
                }),
                (PathAtHead::Missing, _) => {}
                (PathAtHead::File(Some(count)), Some(lines)) if lines.start as usize > *count => {
                    out.broken.push(Broken::PastEnd {
                        path: r.path.clone(),
                        lines,
                        count: *count,
                    })
                }
                _ => out.holding += usize::from(first_time),
            }
        }
        out
    };
    Ok(named.iter().map(|refs| judge(refs)).collect())
}

/// One rewrite [`renamed_paths`] proposes: the path a memory's body names and the path git's
/// rename detection maps it to, which exists at `HEAD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRewrite {
    /// The path as the memory names it.
    pub old: String,
    /// Where it went.
    pub new: String,
}

/// The body of a memory with every path that was renamed one-to-one (and whose new name
/// exists at `HEAD`) rewritten to its new name, and the rewrites made; `None` when there is
/// nothing to rewrite. A bare file name is left alone: it may name a file in another folder.
pub fn renamed_paths(
    project: &Project,
    scope: ScopeKind,
    body: &str,
) -> Result<Option<(String, Vec<PathRewrite>)>, OpError> {
    let checked = check_memories(project, &[(scope, body)])?;
    let Some(paths) = project.repo.as_ref() else {
        return Ok(None);
    };
    // Through git no history is walked, so no rename is known to rewrite.
    if CliRepo::needing_git(paths).is_some() {
        return Ok(None);
    }
    let repo = repo::open(paths)?;
    let head = HeadTree::open(&repo)?;
    let mut rewrites: Vec<PathRewrite> = Vec::new();
    for broken in checked.iter().flat_map(|m| &m.broken) {
        if let Broken::Removed { path, removal } = broken {
            if let Some(new) = &removal.renamed_to {
                if head.at(new) != AtHead::Missing {
                    rewrites.push(PathRewrite {
                        old: path.clone(),
                        new: new.clone(),
                    });
                }
            }
        }
    }
    if rewrites.is_empty() {
        return Ok(None);
    }
    let mut out = body.to_string();
    let mut spans: Vec<(usize, usize, &str)> = references::extract(body)
        .into_iter()
        .filter(|r| r.form != Form::Bare)
        .filter_map(|r| {
            let to = rewrites.iter().find(|w| w.old == r.path)?;
            Some((r.span.0, r.span.1, to.new.as_str()))
        })
        .collect();
    // From the end, so earlier spans keep their offsets.
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut applied: Vec<String> = Vec::new();
    for (start, end, new) in spans {
        out.replace_range(start..end, new);
        applied.push(new.to_string());
    }
    rewrites.retain(|w| applied.contains(&w.new));
    Ok((!rewrites.is_empty()).then_some((out, rewrites)))
}

/// What is known of one path at the book's `HEAD`.
#[derive(Debug, Clone)]
enum Fact {
    /// A file at `HEAD`.
    File(Oid),
    /// A folder at `HEAD`, or a path the index holds that no commit has yet (being added).
    Present,
    /// Gone from `HEAD` (and the index).
    Gone(Gone),
}

/// A path gone from `HEAD`: the commit that removed it, when history shows one, and where a
/// walk the clock stopped may go on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Gone {
    removal: Option<Removal>,
    resume: Option<WalkFrom>,
}

/// The saved file's format version.
const SAVED_VERSION: u32 = 1;
/// The most gone paths and line counts the saved file keeps; past that it starts again.
const SAVED_MAX: usize = 20_000;

/// What is kept between processes, per project: the paths gone from `HEAD` and what history
/// said of each (the walk is the costly part, and must not run again at every session start),
/// and line counts by blob (a blob's lines never change, whatever `HEAD` is). Paths that hold
/// are not kept: a lookup in `HEAD`'s tree is cheaper than reading them back.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    version: u32,
    /// The `HEAD` the gone paths are for.
    head: String,
    gone: HashMap<String, Gone>,
    lines: HashMap<String, Option<usize>>,
}

/// Where the saved facts of `project` live: its state folder under teammem's base folder,
/// outside the work tree.
fn saved_file(project: &Project) -> Option<PathBuf> {
    Some(
        project
            .layout
            .outside_state_dir(ScopeKind::Private)?
            .join("references.json"),
    )
}

/// What this process has learned, for one repository and one `HEAD`, with what it read
/// from and will write to the saved file.
#[derive(Default)]
struct Book {
    root: PathBuf,
    head: Option<Oid>,
    facts: HashMap<String, Fact>,
    /// Line counts by blob.
    lines: HashMap<Oid, Option<usize>>,
    /// The gone paths of the `HEAD` the saved file was for, when `HEAD` has moved since: a
    /// walk from the new `HEAD` that reaches it takes its answers from there.
    before: Option<(Oid, HashMap<String, Gone>)>,
    file: Option<PathBuf>,
    /// Whether the saved file is behind what the book knows.
    dirty: bool,
    /// The paths gone from `HEAD` that the index holds, as of the last check.
    staged: HashSet<String>,
}

impl Book {
    /// Turns to `root` at `head`: the book as it is when both are its own, else what the saved
    /// `file` holds for them (a file that cannot be read counts as none).
    fn turn_to(&mut self, root: &Path, head: Option<Oid>, file: Option<PathBuf>) {
        if self.root == root && self.head == head && self.file == file {
            return;
        }
        *self = Book {
            root: root.to_path_buf(),
            head,
            file,
            ..Book::default()
        };
        let saved = self
            .file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| serde_json::from_slice::<Saved>(&bytes).ok())
            .filter(|s| s.version == SAVED_VERSION);
        let Some(saved) = saved else {
            return;
        };
        self.lines = saved
            .lines
            .into_iter()
            .filter_map(|(blob, count)| Some((Oid::from_str(&blob).ok()?, count)))
            .collect();
        match (Oid::from_str(&saved.head).ok(), head) {
            (Some(was), Some(now)) if was == now => {
                self.facts = saved
                    .gone
                    .into_iter()
                    .map(|(path, gone)| (path, Fact::Gone(gone)))
                    .collect();
            }
            (Some(was), Some(_)) => {
                self.before = Some((was, saved.gone));
                self.dirty = true;
            }
            _ => self.dirty = true,
        }
    }

    /// Looks up every path not yet known, then walks history for those gone (or goes on with
    /// a walk the clock stopped before).
    fn learn<'a>(
        &mut self,
        repo: &Repository,
        head: &HeadTree<'_>,
        paths: impl Iterator<Item = (&'a str, Form)>,
    ) -> Result<(), OpError> {
        let Some(commit) = head.commit() else {
            for (path, _) in paths {
                self.facts
                    .entry(path.to_string())
                    .or_insert(Fact::Gone(Gone::default()));
            }
            return Ok(());
        };
        let mut missing: Vec<(String, bool)> = Vec::new();
        let mut gone_named: Vec<(&str, Form)> = Vec::new();
        for (path, form) in paths {
            let fact = self
                .facts
                .entry(path.to_string())
                .or_insert_with(|| match head.at(path) {
                    AtHead::File(blob) => Fact::File(blob),
                    AtHead::Folder => Fact::Present,
                    AtHead::Missing => {
                        missing.push((path.to_string(), form == Form::Folder));
                        Fact::Gone(Gone::default())
                    }
                });
            if matches!(fact, Fact::Gone(_)) {
                gone_named.push((path, form));
            }
        }
        // A path being added (in the index, not yet in a commit) holds. The index is read
        // only when a path is missing from `HEAD`, at every check (it changes without `HEAD`
        // moving), and what it says is not saved.
        self.staged.clear();
        if !gone_named.is_empty() {
            if let Ok(index) = repo.index() {
                for (path, form) in &gone_named {
                    let staged = match form {
                        Form::Folder => index.find_prefix(Path::new(&format!("{path}/"))).is_ok(),
                        _ => index.get_path(Path::new(path), 0).is_some(),
                    };
                    if staged {
                        self.staged.insert(path.to_string());
                    }
                }
            }
        }
        missing.retain(|(path, _)| !self.staged.contains(path));
        let mut resumed: HashMap<WalkFrom, Vec<(String, bool)>> = HashMap::new();
        for (path, form) in gone_named {
            if let Some(Fact::Gone(Gone {
                resume: Some(from), ..
            })) = self.facts.get(path)
            {
                let asked = resumed.entry(*from).or_default();
                if !self.staged.contains(path) && !asked.iter().any(|(p, _)| p == path) {
                    asked.push((path.to_string(), form == Form::Folder));
                }
            }
        }
        resumed.retain(|_, asked| !asked.is_empty());
        let limit = WalkLimit {
            commits: HISTORY_COMMITS,
            deadline: Instant::now() + HISTORY_BUDGET,
        };
        if !missing.is_empty() {
            self.dirty = true;
            let start = WalkFrom { commit, walked: 0 };
            let stop_at = self.before.as_ref().map(|(was, _)| *was);
            let walk = removal::walk_removals(repo, start, &missing, limit, stop_at)?;
            // The walk reached the `HEAD` the saved file was for: what it knew of a path
            // still gone holds; the paths it did not know go on from there.
            if let Some(from) = self.record(&missing, walk) {
                let before = self.before.take().map(|(_, gone)| gone).unwrap_or_default();
                let mut unknown = Vec::new();
                for (path, folder) in &missing {
                    if self.found(path) {
                        continue;
                    }
                    match before.get(path) {
                        Some(gone) => {
                            self.facts.insert(path.clone(), Fact::Gone(gone.clone()));
                        }
                        None => unknown.push((path.clone(), *folder)),
                    }
                }
                self.before = Some((from.commit, before));
                if !unknown.is_empty() {
                    let walk = removal::walk_removals(repo, from, &unknown, limit, None)?;
                    self.record(&unknown, walk);
                }
            }
        }
        for (from, asked) in resumed {
            self.dirty = true;
            let walk = removal::walk_removals(repo, from, &asked, limit, None)?;
            self.record(&asked, walk);
        }
        Ok(())
    }

    /// Whether history named the commit that removed `path`.
    fn found(&self, path: &str) -> bool {
        matches!(self.facts.get(path), Some(Fact::Gone(g)) if g.removal.is_some())
    }

    /// Records what a walk for `asked` found; returns where it stopped when it reached the
    /// commit it was told to stop at.
    fn record(&mut self, asked: &[(String, bool)], walk: removal::Walk) -> Option<WalkFrom> {
        let resume = match walk.end {
            WalkEnd::Paused(from) => Some(from),
            WalkEnd::Done | WalkEnd::Reached(_) => None,
        };
        for (path, _) in asked {
            let removal = walk.found.get(path).cloned();
            let resume = resume.filter(|_| removal.is_none());
            self.facts
                .insert(path.clone(), Fact::Gone(Gone { removal, resume }));
        }
        match walk.end {
            WalkEnd::Reached(from) => Some(from),
            _ => None,
        }
    }

    /// The line count of `blob`, counted once.
    fn line_count(&mut self, head: &HeadTree<'_>, blob: Oid) -> Option<usize> {
        if let Some(count) = self.lines.get(&blob) {
            return *count;
        }
        let count = head.line_count(blob);
        self.lines.insert(blob, count);
        self.dirty = true;
        count
    }

    /// One memory's references against what is known.
    fn judge(&mut self, head: &HeadTree<'_>, refs: &[Reference]) -> MemoryReferences {
        let mut out = MemoryReferences::default();
        let mut seen: Vec<&str> = Vec::new();
        for r in references::distinct(refs) {
            let first_time = !seen.contains(&r.path.as_str());
            seen.push(&r.path);
            let Some(fact) = self.facts.get(&r.path).cloned() else {
                continue;
            };
            let fact = match fact {
                Fact::Gone(_) if self.staged.contains(&r.path) => Fact::Present,
                fact => fact,
            };
            match fact {
                Fact::Gone(Gone {
                    removal: Some(removal),
                    ..
                }) if first_time => out.broken.push(Broken::Removed {
                    path: r.path.clone(),
                    removal,
                }),
                // A bare name may live in any folder: only history shows it left the root.
                Fact::Gone(Gone { removal: None, .. }) if first_time && r.form != Form::Bare => {
                    out.broken.push(Broken::Missing {
                        path: r.path.clone(),
                    })
                }
                Fact::Gone(_) => {}
                Fact::Present => out.holding += usize::from(first_time),
                Fact::File(blob) => {
                    let Some(lines) = r.lines else {
                        out.holding += usize::from(first_time);
                        continue;
                    };
                    match self.line_count(head, blob) {
                        Some(count) if lines.start as usize > count => {
                            out.broken.push(Broken::PastEnd {
                                path: r.path.clone(),
                                lines,
                                count,
                            })
                        }
                        _ => out.holding += usize::from(first_time),
                    }
                }
            }
        }
        out
    }

    /// Writes what the book knows to the saved file, when it knows more than the file says
    /// (atomically: a reader sees the old file or the new; one that cannot be written only
    /// costs the next run its speed).
    fn save(&mut self) {
        let (Some(file), Some(head), true) = (&self.file, self.head, self.dirty) else {
            return;
        };
        let mut gone: HashMap<String, Gone> = self
            .facts
            .iter()
            .filter_map(|(path, fact)| match fact {
                Fact::Gone(gone) => Some((path.clone(), gone.clone())),
                _ => None,
            })
            .collect();
        if gone.len() > SAVED_MAX {
            gone.clear();
        }
        if self.lines.len() > SAVED_MAX {
            self.lines.clear();
        }
        let saved = Saved {
            version: SAVED_VERSION,
            head: head.to_string(),
            gone,
            lines: self
                .lines
                .iter()
                .map(|(blob, count)| (blob.to_string(), *count))
                .collect(),
        };
        if let Ok(bytes) = serde_json::to_vec(&saved) {
            let _ = store::write_cache(file, &bytes);
        }
        self.dirty = false;
    }
}

/// The process's book, opened by the first check.
static BOOK: Mutex<Option<Book>> = Mutex::new(None);

fn short(commit: Oid) -> String {
    let hex = commit.to_string();
    hex[..7.min(hex.len())].to_string()
}

#[cfg(test)]
mod tests;
