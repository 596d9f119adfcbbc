//! `check`: the team memory as git holds it — the staged index, every commit of a range, or the
//! HEAD tree — checked for secrets, invalid memories, a stale index, unsafe paths, size limits
//! and trust risks.
//!
//! Files are read from git objects, never from the work tree, so what is checked is exactly
//! what is (about to be) committed.

pub(crate) mod format;
pub(crate) mod references;
mod repo;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::check::{
    self, CONFIG_CHANGED, CONFIG_FILE, CONFIG_IGNORED, CONFIG_INVALID, CheckConfig, Depth,
    EntryKind, Finding, Findings, MEMORY_REFERENCE, SecretHit, Severity, TEAM_FOLDER_IGNORED,
    UNMERGED,
};
use crate::domain::check_config;
use crate::domain::gate::{self, Gate};
use crate::domain::memory;
use crate::domain::scope::Environment;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::domain::secrets::{self, SecretsIgnore};
use crate::git::cli_repo::range::RangeWalk;
use crate::git::team_files::{FolderFile, MODE_SUBMODULE, MODE_SYMLINK};

pub(crate) use repo::{CheckRepo, HistoryRepo};

use super::{OpError, Project};

/// What to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckSource {
    /// The index about to be committed (`$GIT_INDEX_FILE` when git set it).
    Staged,
    /// Every file version written by the commits of `base..head`.
    Range {
        /// Commits reachable from here are not checked.
        base: String,
        /// The tip of the range.
        head: String,
    },
    /// The HEAD commit's tree.
    All,
    /// The commits a ref transaction creates (the `reference-transaction` hook's input).
    RefUpdates(Vec<RefUpdate>),
}

impl CheckSource {
    /// Parses `BASE..HEAD` (`BASE...HEAD` is read the same way: commits in HEAD, not in BASE).
    pub fn range(spec: &str) -> Result<CheckSource, OpError> {
        let Some((base, head)) = spec.split_once("..") else {
            return Err(OpError::Usage(format!(
                "`{spec}` is not a range — write BASE..HEAD, for example origin/main..HEAD"
            )));
        };
        let head = head.trim_start_matches('.');
        if base.is_empty() {
            return Err(OpError::Usage(format!(
                "`{spec}` has no base — write BASE..HEAD, for example origin/main..HEAD"
            )));
        }
        Ok(CheckSource::Range {
            base: base.to_string(),
            head: if head.is_empty() { "HEAD" } else { head }.to_string(),
        })
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// What was checked: `staged`, `HEAD`, or the range as given.
    pub source: String,
    /// File versions checked.
    pub files_checked: usize,
    /// Commits walked (`--range` only).
    pub commits_checked: usize,
    /// Findings at error severity.
    pub errors: usize,
    /// Findings at warning severity.
    pub warnings: usize,
    /// Every finding, sorted by path, line, column and rule.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    fn new(source: String, files_checked: usize, mut findings: Vec<Finding>) -> Self {
        // A path (a file named after a token) or a message quoting one is printed in every
        // format: the report holds only redacted forms.
        for f in &mut findings {
            f.path = gate::redact_path(&f.path);
            // A message may lay itself out over lines (the lines to add to `.gitignore`).
            f.message = gate::printable(&f.message);
        }
        findings.sort_by(|a, b| {
            (&a.path, a.line, a.column, a.rule).cmp(&(&b.path, b.line, b.column, b.rule))
        });
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        CheckReport {
            source,
            files_checked,
            commits_checked: 0,
            errors,
            warnings: findings.len() - errors,
            findings,
        }
    }
}

/// Runs the check on the project's repository.
pub fn check(project: &Project, source: &CheckSource) -> Result<CheckReport, OpError> {
    let repo = CheckRepo::open(project)?;
    match source {
        CheckSource::Staged => {
            let index_file = std::env::var_os("GIT_INDEX_FILE").map(PathBuf::from);
            check_staged(&repo, index_file.as_deref())
        }
        CheckSource::All => check_head(&repo),
        CheckSource::Range { base, head } => check_range(repo.history(), base, head),
        CheckSource::RefUpdates(updates) => check_new_commits(repo.history(), updates),
    }
}

/// Checks the team folder in an index file (`None`: the repository's own index). A relative
/// `index_file` is taken from the current folder, as git does with `GIT_INDEX_FILE`.
fn check_staged(repo: &CheckRepo, index_file: Option<&Path>) -> Result<CheckReport, OpError> {
    let read = repo.staged(index_file)?;
    let files = read.files;
    let (config, config_problem) = config_from(&files);
    let mut out = Findings::new(&config);
    report_config_problem(&mut out, config_problem);
    let mut unmerged = BTreeSet::new();
    for file in files.iter().filter(|f| f.stage != 0) {
        unmerged.insert(file.rel.clone());
    }
    for rel in &unmerged {
        out.push(
            UNMERGED,
            &check::repo_path(rel),
            1,
            1,
            "unresolved merge conflict".into(),
            "",
            None,
        );
    }
    report_blockers(&mut out, &read.blockers, None);
    let resolved: Vec<&FolderFile> = files.iter().filter(|f| f.stage == 0).collect();
    check_tree_files(&mut out, &resolved, &accepted_secrets(&files), None);
    report_ignored_folder(repo, &mut out, !files.is_empty())?;
    let mut list = out.list;
    untouched_to_warnings(repo, &files, &mut list);
    // A commit that deletes a file is not refused for what a memory says of it, unless the
    // configuration asks: the pull request's check reports it.
    if config.configured(MEMORY_REFERENCE) {
        let removed = repo.removed_in_index(index_file)?;
        let mut named = Findings::new(&config);
        let files: Vec<FolderFile> = resolved.iter().map(|f| (*f).clone()).collect();
        references::report(&mut named, &files, &removed, |_| HashMap::new());
        list.extend(named.list);
    }
    Ok(CheckReport::new("staged".into(), resolved.len(), list))
}

/// Judges the change, not the folder: a problem in a file the commit does not touch (the same
/// blob as in HEAD) was already committed, so it is reported as a warning instead of refusing
/// every teammate's commit. Folder-wide problems (a stale index, the configuration) stay
/// errors when the commit touches any team file.
fn untouched_to_warnings(repo: &CheckRepo, staged: &[FolderFile], list: &mut [Finding]) {
    let Ok(Some(head)) = repo.at_head() else {
        return;
    };
    let head_ids: HashMap<&str, &str> = head
        .files
        .iter()
        .map(|f| (f.rel.as_str(), f.id.as_str()))
        .collect();
    let staged_ids: HashMap<&str, &str> = staged
        .iter()
        .filter(|f| f.stage == 0)
        .map(|f| (f.rel.as_str(), f.id.as_str()))
        .collect();
    let touched = |rel: &str| head_ids.get(rel) != staged_ids.get(rel);
    let any_touched = staged.iter().any(|f| f.stage != 0)
        || staged_ids.len() != head_ids.len()
        || staged_ids.keys().any(|rel| touched(rel));
    let prefix = format!("{TEAM_DIR}/");
    for f in list.iter_mut() {
        // Something standing where the folder should be is judged as it is now.
        let Some(rel) = f.path.strip_prefix(&prefix) else {
            continue;
        };
        let folder_wide = rel == INDEX_FILE || rel == CONFIG_FILE || !staged_ids.contains_key(rel);
        let untouched = if folder_wide {
            !any_touched
        } else {
            !touched(rel)
        };
        if untouched && f.severity == Severity::Error {
            f.severity = Severity::Warning;
            f.message
                .push_str(" (already committed in HEAD; this commit does not touch it)");
        }
    }
}

/// Checks the team folder in the HEAD commit's tree.
fn check_head(repo: &CheckRepo) -> Result<CheckReport, OpError> {
    let Some(read) = repo.at_head()? else {
        return Err(OpError::Usage(
            "HEAD has no commit yet — commit first, or use --staged".into(),
        ));
    };
    let files = read.files;
    let (config, config_problem) = config_from(&files);
    let mut out = Findings::new(&config);
    report_config_problem(&mut out, config_problem);
    report_blockers(&mut out, &read.blockers, None);
    let refs: Vec<&FolderFile> = files.iter().collect();
    check_tree_files(&mut out, &refs, &accepted_secrets(&files), None);
    report_ignored_folder(repo, &mut out, !files.is_empty())?;
    Ok(CheckReport::new("HEAD".into(), refs.len(), out.list))
}

/// A team folder git ignores in this clone (a `.gitignore` rule, `info/exclude`, a global
/// excludes file) is half-published: a memory added here never reaches the team, while a
/// force-added `MEMORY.md` would list it. Reported with the rule and the exact lines to commit,
/// when the folder is in use (tracked, or on disk). Not in branch mode, where the work tree's
/// branch ignores the folder on purpose.
fn report_ignored_folder(
    repo: &CheckRepo,
    out: &mut Findings<'_>,
    tracked: bool,
) -> Result<(), OpError> {
    let Some(advice) = repo.ignored_folder_advice(tracked)? else {
        return Ok(());
    };
    out.push(
        TEAM_FOLDER_IGNORED,
        &format!("{TEAM_DIR}/"),
        1,
        1,
        format!(
            "git ignores the team folder in this clone, so memories added here are never \
             published while MEMORY.md would list them {advice}"
        ),
        "",
        None,
    );
    Ok(())
}

/// Checks every file version that the commits of `base..head` wrote in the team folder.
///
/// Versions that a later commit replaced or deleted are checked for content risks (secrets,
/// trust risks): they stay in the history that is pushed. The final version of each changed
/// path gets every check, and the index is checked when anything changed. Each finding names
/// the commit that introduced the content. The configuration and the accepted secrets
/// (`.secretsignore`) are read from `base`, so a range cannot loosen its own check.
pub(crate) fn check_range(
    repo: HistoryRepo<'_>,
    base: &str,
    head: &str,
) -> Result<CheckReport, OpError> {
    let base_id = repo.resolve_commit(base)?;
    let head_id = repo.resolve_commit(head)?;
    let walked = repo.walk(&base_id, &head_id, TEAM_DIR)?;
    check_history(
        repo,
        &base_id,
        &head_id,
        &walked,
        format!("{base}..{head}"),
        ReferenceReport::Report,
    )
}

/// Whether a check reports the team memories whose paths the change deletes or renames
/// (rule `memory-reference`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceReport {
    /// Always: a pull request's check and review.
    Report,
    /// Only when a configuration names the rule: the local hooks, where deleting a file
    /// should not be blocked by memory.
    WhenConfigured,
}

/// [`check_range`] over a history already walked; `source` names the range in the report.
pub(crate) fn check_history(
    repo: HistoryRepo<'_>,
    base_id: &str,
    head_id: &str,
    walked: &RangeWalk,
    source: String,
    memory_references: ReferenceReport,
) -> Result<CheckReport, OpError> {
    let base_files = repo.folder_at(base_id)?.files;
    let (config, config_problem) = config_from(&base_files);
    let mut out = Findings::new(&config);
    report_config_problem(&mut out, config_problem);
    let head_read = repo.folder_at(head_id)?;
    report_blockers(&mut out, &head_read.blockers, None);
    let final_files = head_read.files;
    let accepted = accepted_secrets(&base_files);
    let files_checked = check_changes(repo, &mut out, walked, &final_files, &accepted)?;
    if memory_references == ReferenceReport::Report || config.configured(MEMORY_REFERENCE) {
        references::in_range(repo, &mut out, base_id, head_id, &final_files)?;
    }
    let mut report = CheckReport::new(source, files_checked, out.list);
    report.commits_checked = walked.commits.len();
    Ok(report)
}

/// One line of git's `reference-transaction` hook input: `<old> <new> <ref>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The value before, as hex (all zeros when the ref is created).
    pub old: String,
    /// The value after, as hex (all zeros when the ref is deleted).
    pub new: String,
    /// The ref's full name.
    pub name: String,
}

impl RefUpdate {
    /// Whether the ref is deleted by this update.
    fn deletes(&self) -> bool {
        self.new.bytes().all(|b| b == b'0')
    }
}

/// Reads the hook's input; symbolic updates (`ref:…`) and lines that do not parse are skipped.
/// An object id is 40 (SHA-1) or 64 (SHA-256) hex digits.
pub fn parse_ref_updates(text: &str) -> Vec<RefUpdate> {
    let object_id = |s: &str| {
        (matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| s.to_ascii_lowercase())
    };
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let old = object_id(parts.next()?)?;
            let new = object_id(parts.next()?)?;
            let name = parts.next()?.to_string();
            Some(RefUpdate { old, new, name })
        })
        .collect()
}

/// Checks the commits that a ref transaction brings into a branch and that no ref reaches
/// yet: the ones `git cherry-pick`, `git revert`, `git am` (and `git commit`, `git rebase`)
/// create locally. A fetch, a fast-forward to fetched commits, a reset or a new branch at an
/// existing commit brings none and costs one walk. Each such commit is checked as
/// `check --range PARENT..COMMIT` (the parent's configuration); merge commits are left to the
/// `pre-merge-commit` hook.
pub(crate) fn check_new_commits(
    repo: HistoryRepo<'_>,
    updates: &[RefUpdate],
) -> Result<CheckReport, OpError> {
    let mut tips: Vec<String> = Vec::new();
    for u in updates {
        let branch = u.name == "HEAD" || u.name.starts_with("refs/heads/");
        if branch && !u.deletes() && u.new != u.old && !tips.contains(&u.new) {
            tips.push(u.new.clone());
        }
    }
    let mut report = CheckReport::new("new commits".into(), 0, Vec::new());
    if tips.is_empty() {
        return Ok(report);
    }
    let mut findings = Vec::new();
    let mut files = 0;
    let mut commits = 0;
    for commit in repo.unreferenced_commits(&tips)? {
        if commit.parents.len() > 1 {
            continue;
        }
        commits += 1;
        let one = match commit.parents.first() {
            Some(parent) => {
                let walked = repo.walk(parent, &commit.id, TEAM_DIR)?;
                check_history(
                    repo,
                    parent,
                    &commit.id,
                    &walked,
                    String::new(),
                    ReferenceReport::WhenConfigured,
                )?
            }
            None => root_commit_report(repo, &commit.id)?,
        };
        files += one.files_checked;
        findings.extend(one.findings);
    }
    report = CheckReport::new("new commits".into(), files, findings);
    report.commits_checked = commits;
    Ok(report)
}

/// A root commit has no parent to compare with: its whole team folder is what it adds.
fn root_commit_report(repo: HistoryRepo<'_>, id: &str) -> Result<CheckReport, OpError> {
    let read = repo.folder_at(id)?;
    let (config, config_problem) = config_from(&read.files);
    let mut out = Findings::new(&config);
    report_config_problem(&mut out, config_problem);
    report_blockers(&mut out, &read.blockers, Some(id));
    let refs: Vec<&FolderFile> = read.files.iter().collect();
    check_tree_files(&mut out, &refs, &accepted_secrets(&read.files), Some(id));
    Ok(CheckReport::new(id.to_string(), refs.len(), out.list))
}

/// A configuration that could not be read, and each repository setting ignored because it
/// would loosen the gate, is a finding on the configuration's first line.
fn report_config_problem(
    out: &mut Findings<'_>,
    problems: Vec<(&'static str, &'static str, String)>,
) {
    for (rule, file, problem) in problems {
        out.push(
            rule,
            &check::repo_path(file),
            1,
            1,
            problem.clone(),
            &problem,
            None,
        );
    }
}

/// What [`check_changes`] does for one change of the range, in the range's order.
enum Step<'a> {
    /// `.secretsignore` or the configuration changed (change index, commit).
    ConfigChanged(&'a str, &'a str),
    /// A file version to check: path, commit, blob bytes, mode, depth, and whether its path
    /// is checked too (once per path of the range).
    File(&'a str, &'a str, Vec<u8>, u32, Depth, bool),
}

/// How many blob bytes are read before their secrets are scanned: scanning runs on every core
/// over one batch, which bounds the memory a long range holds at once.
const BATCH_BYTES: usize = 32 * 1024 * 1024;

/// How many file versions are read from git in one go (one `git cat-file --batch` run for a
/// repository only git can read).
const READ_AT_ONCE: usize = 256;

/// A file version of the range to check, before its bytes are read: path, commit, blob, mode,
/// depth, and whether its path is checked too (once per path of the range).
struct Planned<'a> {
    rel: &'a str,
    commit: &'a str,
    id: &'a str,
    mode: u32,
    depth: Depth,
    name: bool,
}

fn check_changes(
    repo: HistoryRepo<'_>,
    out: &mut Findings<'_>,
    walked: &RangeWalk,
    final_files: &[FolderFile],
    accepted: &SecretsIgnore,
) -> Result<usize, OpError> {
    let final_ids: HashMap<&str, &FolderFile> =
        final_files.iter().map(|f| (f.rel.as_str(), f)).collect();
    let mut seen = HashSet::new();
    let mut named = HashSet::new();
    let mut last_commit: HashMap<&str, &str> = HashMap::new();
    // What to check, in the range's order: the configuration changes, and each file version
    // once.
    let mut plan: Vec<Result<Planned<'_>, (&str, &str)>> = Vec::new();
    for change in &walked.changes {
        let commit = walked.commits[change.commit].id.as_str();
        last_commit.insert(change.rel.as_str(), commit);
        if change.rel == CONFIG_FILE || change.rel == secrets::IGNORE_FILE {
            plan.push(Err((change.rel.as_str(), commit)));
        }
        let Some((id, mode)) = &change.new else {
            continue;
        };
        if !seen.insert((change.rel.as_str(), id.as_str())) {
            continue;
        }
        let is_final = final_ids
            .get(change.rel.as_str())
            .is_some_and(|f| f.id == *id);
        let depth = if is_final {
            Depth::Full
        } else {
            Depth::Content
        };
        plan.push(Ok(Planned {
            rel: change.rel.as_str(),
            commit,
            id: id.as_str(),
            mode: *mode,
            depth,
            name: named.insert(change.rel.as_str()),
        }));
    }
    let checked = plan.iter().filter(|p| p.is_ok()).count();
    // Blobs are read in the range's order, their secrets scanned in parallel a batch at a
    // time, and the findings pushed in the range's order again, so the report does not depend
    // on the threads.
    let mut batch: Vec<Step<'_>> = Vec::new();
    let mut batch_bytes = 0;
    for part in plan.chunks(READ_AT_ONCE) {
        let wanted: Vec<(&str, u32)> = part
            .iter()
            .filter_map(|p| p.as_ref().ok().map(|f| (f.id, f.mode)))
            .collect();
        let mut read = repo.blobs(&wanted)?.into_iter();
        for step in part {
            match step {
                Err((rel, commit)) => batch.push(Step::ConfigChanged(rel, commit)),
                Ok(file) => {
                    let bytes = read.next().unwrap_or_default();
                    batch_bytes += bytes.len();
                    batch.push(Step::File(
                        file.rel,
                        file.commit,
                        bytes,
                        file.mode,
                        file.depth,
                        file.name,
                    ));
                    if batch_bytes >= BATCH_BYTES {
                        check_batch(out, std::mem::take(&mut batch), batch_bytes, accepted);
                        batch_bytes = 0;
                    }
                }
            }
        }
    }
    check_batch(out, batch, batch_bytes, accepted);
    if !walked.changes.is_empty() {
        let index_commit = last_commit.get(INDEX_FILE).copied();
        check_folder_index(out, final_files, accepted, index_commit);
    }
    Ok(checked)
}

/// Checks the batch's file versions on every core (secrets, trust risks, the memory's shape),
/// then adds their findings in the batch's order.
fn check_batch(
    out: &mut Findings<'_>,
    batch: Vec<Step<'_>>,
    bytes: usize,
    accepted: &SecretsIgnore,
) {
    let config = out.config();
    let found = super::scan::in_parallel(batch.len(), bytes, |i| match &batch[i] {
        Step::File(rel, commit, bytes, mode, depth, name) => check_one(
            config,
            rel,
            *mode,
            bytes,
            accepted,
            (*depth, *name),
            Some(commit),
        ),
        Step::ConfigChanged(..) => Vec::new(),
    });
    for (step, found) in batch.iter().zip(found) {
        match step {
            Step::ConfigChanged(rel, commit) => out.push(
                CONFIG_CHANGED,
                &check::repo_path(rel),
                1,
                1,
                format!(
                    "`{rel}` changes in this range; the range was checked with the base's copy"
                ),
                commit,
                Some(commit),
            ),
            Step::File(..) => out.list.extend(found),
        }
    }
}

/// Every check of one file version, its secrets scanned first: its findings under `config`.
/// `(depth, name)`: how much of the content is checked, and whether the path is too.
fn check_one(
    config: &CheckConfig,
    rel: &str,
    mode: u32,
    bytes: &[u8],
    accepted: &SecretsIgnore,
    (depth, name): (Depth, bool),
    commit: Option<&str>,
) -> Vec<Finding> {
    let kind = entry_kind(mode);
    let secrets = secrets_in(kind, bytes, accepted);
    let mut out = Findings::new(config);
    if name {
        check::check_name(&mut out, rel, accepted, commit);
    }
    check::check_file(&mut out, rel, kind, bytes, &secrets, depth, commit);
    out.list
}

/// Full checks of every file of one folder snapshot on every core (findings in the files'
/// order, as one thread would add them), then its index.
fn check_tree_files(
    out: &mut Findings<'_>,
    files: &[&FolderFile],
    accepted: &SecretsIgnore,
    commit: Option<&str>,
) {
    let config = out.config();
    let bytes = files.iter().map(|f| f.bytes.len()).sum();
    let found = super::scan::in_parallel(files.len(), bytes, |i| {
        let file = files[i];
        check_one(
            config,
            &file.rel,
            file.mode,
            &file.bytes,
            accepted,
            (Depth::Full, true),
            commit,
        )
    });
    out.list.extend(found.into_iter().flatten());
    check_folder_index(out, files.iter().copied(), accepted, commit);
}

/// Checks a folder snapshot's MEMORY.md against the memories beside it; `commit` names the
/// commit that last wrote the index.
fn check_folder_index<'a>(
    out: &mut Findings<'_>,
    files: impl IntoIterator<Item = &'a FolderFile>,
    accepted: &SecretsIgnore,
    commit: Option<&str>,
) {
    let mut memories: Vec<(&str, &[u8])> = Vec::new();
    let mut index = None;
    for file in files {
        if file.rel == INDEX_FILE {
            index = index.or(Some(file.bytes.as_slice()));
        } else if file.mode != MODE_SYMLINK && memory::is_memory_path(&file.rel) {
            memories.push((file.rel.as_str(), file.bytes.as_slice()));
        }
    }
    let policy = Gate::new(out.config().clone(), accepted.clone());
    check::check_index(out, &memories, index, commit, &policy);
}

/// Reports a file or symlink standing where the team folder (or `.qwen`) should be.
fn report_blockers(
    out: &mut Findings<'_>,
    blockers: &[(String, u32, Vec<u8>)],
    commit: Option<&str>,
) {
    for (path, mode, bytes) in blockers {
        let (rule, what) = if *mode == MODE_SYMLINK {
            (
                check::PATH_SYMLINK,
                format!(
                    "is a symlink to `{}`; the team memory folder must be a real folder",
                    String::from_utf8_lossy(bytes)
                ),
            )
        } else {
            (
                check::PATH_NOT_MARKDOWN,
                "is a file where the team memory folder should be".to_string(),
            )
        };
        out.push(rule, path, 1, 1, what, path, commit);
    }
}

fn entry_kind(mode: u32) -> EntryKind {
    match mode {
        MODE_SYMLINK => EntryKind::Symlink,
        MODE_SUBMODULE => EntryKind::Submodule,
        _ => EntryKind::File,
    }
}

/// The configuration in force for a folder snapshot: the user's own file (outside the
/// repository) with the snapshot's file layered on top, which can only tighten it (see
/// [`CheckConfig::layered`]). Returns the problems to report, each with the file it is about:
/// every setting of the file that could not be read (the rest is kept), a file that is a
/// symlink or over its size limit (left out), each repository setting that was ignored, and
/// a `.secretsignore` that is a symlink or over its limit (it then accepts nothing).
fn config_from(files: &[FolderFile]) -> (CheckConfig, Vec<(&'static str, &'static str, String)>) {
    let (user, notes) = super::guard::user_config(&Environment::from_process().base());
    let mut problems: Vec<(&'static str, &'static str, String)> = notes
        .into_iter()
        .map(|n| (CONFIG_INVALID, CONFIG_FILE, n))
        .collect();
    let repo = match team_file(files, CONFIG_FILE) {
        None => None,
        Some(file) => {
            let (config, notes) = check_config::repo_config(file);
            problems.extend(notes.into_iter().map(|n| (CONFIG_INVALID, CONFIG_FILE, n)));
            config
        }
    };
    if let Some(file) = team_file(files, secrets::IGNORE_FILE) {
        let (_, note) = check_config::secrets_ignore(file);
        problems.extend(note.map(|n| (CONFIG_INVALID, secrets::IGNORE_FILE, n)));
    }
    let (config, ignored) = CheckConfig::layered(user.as_ref(), repo.as_ref());
    problems.extend(
        ignored
            .into_iter()
            .map(|n| (CONFIG_IGNORED, CONFIG_FILE, n)),
    );
    (config, problems)
}

/// A resolved file of the team folder's top level, as the configuration readers take it.
fn team_file<'a>(files: &'a [FolderFile], rel: &str) -> Option<check_config::TeamFile<'a>> {
    files
        .iter()
        .find(|f| f.rel == rel && f.stage == 0)
        .map(|f| check_config::TeamFile {
            bytes: &f.bytes,
            symlink: f.mode == MODE_SYMLINK,
        })
}

/// The secrets in a file version that the team has not accepted in `.secretsignore` (a
/// submodule has no bytes; a binary blob is not text to scan).
fn secrets_in(kind: EntryKind, bytes: &[u8], accepted: &SecretsIgnore) -> Vec<SecretHit> {
    if kind == EntryKind::Submodule {
        return Vec::new();
    }
    let found = secrets::scan_bytes(bytes).unwrap_or_default();
    accepted
        .filter(found)
        .into_iter()
        .map(|f| SecretHit {
            rule: f.rule.to_string(),
            label: f.label.to_string(),
            line: f.line,
            column: f.column,
            redacted: f.redacted(),
            fingerprint: f.fingerprint(),
        })
        .collect()
}

/// The accepted secret fingerprints in a folder snapshot (none from a `.secretsignore` that is
/// a symlink or over its limit; [`config_from`] reports it).
fn accepted_secrets(files: &[FolderFile]) -> SecretsIgnore {
    team_file(files, secrets::IGNORE_FILE)
        .map(|f| check_config::secrets_ignore(f).0)
        .unwrap_or_default()
}
