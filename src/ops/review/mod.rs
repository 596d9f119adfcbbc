//! `review`: what a pull request changes in the team memory, for the humans who approve it —
//! each memory added, removed, modified or renamed, its frontmatter and body changes, the risks
//! `check` finds in it, and who changed it when.
//!
//! The old side is the merge base of BASE and HEAD (what a pull request page compares); risks
//! come from `check --range BASE..HEAD`, so content added and removed again is still shown.

pub(crate) mod format;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use git2::Repository;
use serde::Serialize;

use crate::domain::check::{self, Finding};
use crate::domain::gate;
use crate::domain::memory;
use crate::domain::memory_diff::{self, FieldChange, MemoryParts};
use crate::domain::recall::usage::utc_date;
use crate::domain::scope::TEAM_DIR;
use crate::domain::secrets;
use crate::git::history::folder::{CommitInfo, RevisionChange};
use crate::git::team_files::MODE_SYMLINK;

use super::check::{CheckRepo, CheckSource, HistoryRepo, ReferenceReport, check_history};
use super::{OpError, Project};

/// Counts shown at the top.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReviewSummary {
    /// Memories added.
    pub added: usize,
    /// Memories removed.
    pub removed: usize,
    /// Memories modified in place.
    pub modified: usize,
    /// Memories renamed (possibly also modified).
    pub renamed: usize,
    /// Check findings at error severity.
    pub errors: usize,
    /// Check findings at warning severity.
    pub warnings: usize,
}

/// Who made a commit that touched a memory, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Full commit id.
    pub commit: String,
    /// Author name.
    pub author: String,
    /// Author email.
    pub email: String,
    /// Author date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The commit's first line.
    pub summary: String,
}

/// One changed memory.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryChange {
    /// `added`, `removed`, `modified` or `renamed`.
    pub status: &'static str,
    /// Path relative to the team folder (the new path; the old one when removed).
    pub path: String,
    /// The old path of a renamed memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// The memory's `name` (new side, else old).
    pub name: Option<String>,
    /// The memory's `description` (new side, else old).
    pub description: Option<String>,
    /// The memory's `type` (new side, else old).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Frontmatter fields that differ (modified and renamed memories).
    pub frontmatter: Vec<FieldChange>,
    /// Word-level body diff (modified and renamed); the whole body for an added memory.
    pub body: String,
    /// Lines in `body`.
    pub body_lines: usize,
    /// Risks `check` found in this memory (any version of it in the range).
    pub risks: Vec<Finding>,
    /// Commits of the range that touched it, oldest first.
    pub changes: Vec<Change>,
}

/// The whole review.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    /// BASE as given.
    pub base: String,
    /// HEAD as given.
    pub head: String,
    /// The merge base compared with (full id).
    pub merge_base: String,
    /// HEAD's commit (full id).
    pub head_commit: String,
    /// Counts.
    pub summary: ReviewSummary,
    /// Changed memories, sorted by path.
    pub memories: Vec<MemoryChange>,
    /// Other changed files of the team folder (`MEMORY.md`, configuration), `status path`.
    pub other_files: Vec<String>,
    /// Risks in files that are not among the changed memories (e.g. added and deleted in the
    /// range, or not memories).
    pub other_risks: Vec<Finding>,
    /// Team memories naming a path the change deletes or renames (rule `memory-reference`),
    /// whether or not the change touches them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stale_references: Vec<Finding>,
    /// When HEAD names a proposal branch (`team-memory-proposals/<owner>`): each commit of the
    /// range, oldest first, with who made it. Anyone who can push may push there with any
    /// author, so a commit whose author is not the owner is flagged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proposal_commits: Vec<ProposalCommit>,
}

/// One commit of a proposal branch under review.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalCommit {
    /// Its id (full).
    pub commit: String,
    /// Its subject line.
    pub subject: String,
    /// `Name <email>` of its author.
    pub author: String,
    /// `Name <email>` of its committer.
    pub committer: String,
    /// Whether the author is not the proposal branch's owner.
    pub not_the_owner: bool,
}

/// The commits of `base..head` with their authors, when `head` names a proposal branch.
fn proposal_commits(
    repo: HistoryRepo<'_>,
    base: &str,
    head_spec: &str,
    head: &str,
) -> Result<Vec<ProposalCommit>, OpError> {
    let prefix = crate::git::memory_branch::PROPOSALS_PREFIX;
    let Some((_, owner)) = head_spec.split_once(prefix) else {
        return Ok(Vec::new());
    };
    // `<owner>-2` …, `<owner>-<tip>` are the same owner's fresh names (a taken branch was not
    // adopted).
    let owners = crate::git::memory_branch::proposal_owners(owner);
    let person = |p: &crate::git::cli_repo::range::Person| format!("{} <{}>", p.name, p.email);
    Ok(repo
        .commits_between(base, head)?
        .into_iter()
        .map(|commit| {
            let made_by = crate::git::memory_branch::proposal_user_of(
                Some(&commit.author.email),
                Some(&commit.author.name),
            );
            ProposalCommit {
                subject: commit.summary.clone(),
                author: person(&commit.author),
                committer: person(&commit.committer),
                not_the_owner: !owners.contains(&made_by.as_str()),
                commit: commit.id,
            }
        })
        .collect())
}

/// Builds the review of `spec` (`BASE..HEAD`), through git where libgit2 cannot open the
/// repository (reftable refs, SHA-256 objects).
pub fn review(project: &Project, spec: &str) -> Result<Review, OpError> {
    let CheckSource::Range { base, head } = CheckSource::range(spec)? else {
        return Err(OpError::Usage(format!("`{spec}` is not BASE..HEAD")));
    };
    let repo = CheckRepo::open(project)?;
    review_in(repo.history(), &base, &head)
}

/// Builds the review of `base..head` in `repo`.
pub fn review_range(repo: &Repository, base: &str, head: &str) -> Result<Review, OpError> {
    review_in(HistoryRepo::Libgit2(repo), base, head)
}

/// Builds the review of `base..head` from `repo`'s history.
fn review_in(repo: HistoryRepo<'_>, base: &str, head: &str) -> Result<Review, OpError> {
    let base_id = repo.resolve_commit(base)?;
    let head_id = repo.resolve_commit(head)?;
    let fork = repo.merge_base(&base_id, &head_id)?;
    let walked = repo.walk(&base_id, &head_id, TEAM_DIR)?;
    let report = check_history(
        repo,
        &base_id,
        &head_id,
        &walked,
        format!("{base}..{head}"),
        ReferenceReport::Report,
    )?;
    let mut touched: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for change in &walked.changes {
        touched
            .entry(change.rel.as_str())
            .or_default()
            .insert(change.commit);
    }
    let entries = repo.folder_diff(&fork, &head_id)?;
    // Every side's bytes in one read (one `git cat-file --batch` on the git path).
    let memory_side = |side: &Option<(String, String, u32)>| {
        side.as_ref()
            .is_some_and(|(p, _, m)| *m != MODE_SYMLINK && memory::is_memory_path(p))
    };
    let sides: Vec<(&str, u32)> = entries
        .iter()
        .filter(|e| memory_side(&e.old) || memory_side(&e.new))
        .flat_map(|e| [&e.old, &e.new])
        .flatten()
        .map(|(_, id, mode)| (id.as_str(), *mode))
        .collect();
    let blobs: HashMap<String, Vec<u8>> = sides
        .iter()
        .map(|(id, _)| id.to_string())
        .zip(repo.blobs(&sides)?)
        .collect();

    let mut risks_by_path: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    let (stale_references, findings): (Vec<Finding>, Vec<Finding>) = report
        .findings
        .into_iter()
        .partition(|f| f.rule == check::MEMORY_REFERENCE);
    for finding in findings {
        risks_by_path
            .entry(finding.path.clone())
            .or_default()
            .push(finding);
    }
    let mut summary = ReviewSummary::default();
    let mut memories = Vec::new();
    let mut other_files = Vec::new();
    for entry in entries {
        let path = entry
            .new
            .as_ref()
            .or(entry.old.as_ref())
            .map(|(p, _, _)| p.clone())
            .unwrap_or_default();
        if !memory_side(&entry.old) && !memory_side(&entry.new) {
            let letter = match entry.kind {
                RevisionChange::Added => "A",
                RevisionChange::Deleted => "D",
                RevisionChange::Modified => "M",
                RevisionChange::Renamed => "R",
            };
            other_files.push(format!("{letter} {}", gate::redact_path(&path)));
            continue;
        }
        // Secrets are replaced before anything is diffed, so no output can show one.
        let read = |side: &Option<(String, String, u32)>| {
            side.as_ref().map(|(_, id, _)| {
                let bytes = blobs
                    .get(id.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                secrets::redact_text(&String::from_utf8_lossy(bytes))
            })
        };
        let old_text = read(&entry.old);
        let new_text = read(&entry.new);
        let old_parts = old_text.as_deref().map(MemoryParts::read);
        let new_parts = new_text.as_deref().map(MemoryParts::read);
        let shown = new_parts.as_ref().or(old_parts.as_ref());
        let field = |key: &str| shown.and_then(|p| p.field(key)).map(str::to_string);
        let (status, frontmatter, body) = match (&old_parts, &new_parts) {
            (None, Some(new)) => {
                summary.added += 1;
                ("added", Vec::new(), new.body.clone())
            }
            (Some(_), None) => {
                summary.removed += 1;
                ("removed", Vec::new(), String::new())
            }
            (Some(old), Some(new)) => {
                let status = if entry.kind == RevisionChange::Renamed {
                    summary.renamed += 1;
                    "renamed"
                } else {
                    summary.modified += 1;
                    "modified"
                };
                (
                    status,
                    memory_diff::field_changes(old, new),
                    memory_diff::word_diff(&old.body, &new.body),
                )
            }
            (None, None) => continue,
        };
        let old_path = (entry.kind == RevisionChange::Renamed)
            .then(|| entry.old.as_ref().map(|(p, _, _)| p.clone()))
            .flatten();
        // The check's findings name paths as they may be printed; so does the review.
        let mut risks = risks_by_path
            .remove(&gate::redact_path(&check::repo_path(&path)))
            .unwrap_or_default();
        if let Some(old) = &old_path {
            risks.extend(
                risks_by_path
                    .remove(&gate::redact_path(&check::repo_path(old)))
                    .unwrap_or_default(),
            );
        }
        let mut commits: BTreeSet<usize> = BTreeSet::new();
        for p in std::iter::once(&path).chain(old_path.iter()) {
            commits.extend(touched.get(p.as_str()).into_iter().flatten());
        }
        let changes = commits
            .into_iter()
            .map(|i| change_of(&walked.commits[i]))
            .collect();
        memories.push(MemoryChange {
            status,
            body_lines: body.lines().count(),
            path: gate::redact_path(&path),
            old_path: old_path.as_deref().map(gate::redact_path),
            name: field("name"),
            description: field("description"),
            kind: field("type"),
            frontmatter,
            body,
            risks,
            changes,
        });
    }
    memories.sort_by(|a, b| a.path.cmp(&b.path));
    let other_risks: Vec<Finding> = risks_by_path.into_values().flatten().collect();
    summary.errors = report.errors;
    summary.warnings = report.warnings;
    Ok(Review {
        base: base.to_string(),
        head: head.to_string(),
        merge_base: fork,
        head_commit: head_id.clone(),
        summary,
        memories,
        other_files,
        other_risks,
        stale_references,
        proposal_commits: proposal_commits(repo, &base_id, head, &head_id)?,
    })
}

fn change_of(commit: &CommitInfo) -> Change {
    Change {
        commit: commit.id.clone(),
        author: commit.author.clone(),
        email: commit.email.clone(),
        date: utc_date(commit.time),
        summary: commit.summary.clone(),
    }
}
