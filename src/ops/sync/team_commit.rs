//! Committing the team folder: the repository checks before a sync, the guarded commit of the
//! folder's changes (with `MEMORY.md` regenerated and stale temp files removed), and the
//! commit's author and signing settings.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use git2::Repository;

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store::FileStamp;
use crate::domain::store::{self, StoreError};
use crate::git::commit::{self, CommitResult, CommitSettings, Identity, Person, TeamUpdate};
use crate::git::preflight::{self, Blocker, Branch, Preflight};
use crate::git::recovery::lock;
use crate::git::sign;
use crate::git::staging_index::update::{FreshFile, StagingUpdate};
use crate::git::status::{self, ChangeKind, TreeFile};
use crate::git::team_files;

use crate::ops::quarantine::{self, Quarantined};
use crate::ops::{OpError, Project};

use super::{FALLBACK_AUTHOR, INDEX_PATIENCE, SkipReason, SyncOptions, SyncOutcome};

/// Preflight and path safety, each refusal recorded in `outcome`. Returns the branch to commit
/// on when the sync may go on.
pub fn check_repository(
    project: &Project,
    repo: &Repository,
    outcome: &mut SyncOutcome,
) -> Result<Option<Branch>, OpError> {
    let branch = match preflight::preflight(repo, TEAM_DIR)? {
        Preflight::Ready(branch) => branch,
        Preflight::Blocked(blocker) => {
            let reason = match blocker {
                Blocker::DetachedHead => SkipReason::DetachedHead,
                Blocker::OperationInProgress(_) => SkipReason::OperationInProgress,
                Blocker::SparseCheckout(_) => SkipReason::SparseCheckout,
            };
            outcome.skip(reason, blocker.to_string());
            return Ok(None);
        }
    };
    let safe = project
        .check_scope_safe(ScopeKind::Team)
        .and_then(|dir| unreadable_folder(&dir));
    match safe {
        Ok(_) => {}
        Err(OpError::Store(err @ StoreError::UnsafePath { .. })) => {
            outcome.skip(SkipReason::UnsafePath, err.to_string());
            return Ok(None);
        }
        Err(err) => return Err(err),
    }
    Ok(Some(branch))
}

/// Refuses a team folder holding a folder that cannot be read: its files could not be told
/// apart from deleted ones. A symlink below the folder is no reason to stop: one a teammate
/// committed is left as git checked it out (and named when it arrives, [`name_arrived_entries`]),
/// one of the user's own is quarantined by the commit step ([`SYMLINK_NOT_PUBLISHED`]).
fn unreadable_folder(dir: &Path) -> Result<(), OpError> {
    let listing = store::memory_listing(dir)?;
    let unreadable = listing
        .withheld
        .into_iter()
        .find(|entry| entry.rule != crate::domain::check::PATH_SYMLINK);
    match unreadable {
        Some(bad) => Err(OpError::Store(StoreError::UnsafePath {
            path: dir.join(&bad.rel),
            why: bad.why,
        })),
        None => Ok(()),
    }
}

/// Why a symlink the user made (or changed) in the team folder stays out of the sync commit:
/// `check` and the pre-commit hook refuse any symlink there (`path-symlink`), branch mode never
/// writes one into a teammate's folder, and a link can point an agent outside the memory.
pub(crate) const SYMLINK_NOT_PUBLISHED: &str = "invalid: a symlink (path-symlink) is never \
     published from the team folder — replace it with the file itself, or delete it";

/// The local half: finds the team folder's changes against the branch tip, quarantines what
/// must not be committed, regenerates `MEMORY.md` from the clean memories, and commits the rest
/// with [`commit::commit_team_dir`]. Call it with the sync lock held.
pub fn commit_team_changes(
    project: &Project,
    repo: &Repository,
    branch: &Branch,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let workdir = project.git_root()?;
    let head_commit = match branch.tip {
        Some(tip) => Some(
            repo.find_commit(tip)
                .map_err(|e| crate::git::GitError::git("reading HEAD", e))?,
        ),
        None => None,
    };
    let head_tree = match &head_commit {
        Some(c) => Some(
            c.tree()
                .map_err(|e| crate::git::GitError::git("reading HEAD's tree", e))?,
        ),
        None => None,
    };
    remove_stale_temp_files(&workdir.join(TEAM_DIR));
    let changes = status::team_changes(repo, head_tree.as_ref(), TEAM_DIR)?;
    // Memories git ignores in this clone are never published, nor listed in MEMORY.md; one
    // ignore lookup rules the scan out when the folder is not ignored.
    let probe = format!("{TEAM_DIR}/{INDEX_FILE}");
    let ignored = match repo.is_path_ignored(&probe).unwrap_or(false) {
        true => ignored_memories(project, repo, head_tree.as_ref(), &changes)?,
        false => Vec::new(),
    };
    if !ignored.is_empty() {
        outcome.warnings.push(ignored_warning(repo, &ignored));
    }
    if changes.is_empty() && !commit::index_pending(repo) {
        return Ok(());
    }
    // Only now, when the commit would make the index match the folder: a `git rm --cached`
    // left alone by a sync with nothing to commit stays staged as the user left it. An index
    // that a killed sync left behind its branch lacks that sync's new files for the same
    // reason a `git rm --cached` would: that lag is teammem's own, finished here, not refused.
    let removed = match commit::index_pending(repo) {
        true => Vec::new(),
        false => crate::git::staged_removal::staged_removals(repo, head_tree.as_ref(), TEAM_DIR)?,
    };
    if !removed.is_empty() {
        outcome.skip_staged_removal(&removed);
        return Ok(());
    }
    if Instant::now() >= deadline {
        outcome.skip(
            SkipReason::Timeout,
            "the time budget ran out before the commit",
        );
        return Ok(());
    }
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let team_prefix = format!("{TEAM_DIR}/");
    let mut held_back: HashSet<String> = HashSet::new();
    let mut checked: HashMap<String, (FileStamp, Option<Vec<u8>>)> = HashMap::new();
    let (policy, _) = crate::ops::guard::policy(project);
    for change in &changes {
        if change.kind == ChangeKind::Deleted || change.path == index_path {
            continue;
        }
        let rel = change
            .path
            .strip_prefix(&team_prefix)
            .unwrap_or(&change.path);
        let abs = workdir.join(&change.path);
        let reasons = if change.unreadable_name {
            vec!["invalid: the file name is not valid UTF-8 — rename it".to_string()]
        } else if change.mode == Some(git2::FileMode::Link) {
            // Never followed: what it points at is not this change.
            vec![SYMLINK_NOT_PUBLISHED.to_string()]
        } else {
            let stamp = stamp_of(&abs)?;
            let file = quarantine::check_team_file(&change.path, rel, &abs, &policy)?;
            checked.insert(change.path.clone(), (stamp, file.bytes));
            file.reasons
        };
        if !reasons.is_empty() {
            held_back.insert(change.path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(&change.path, reasons));
        }
    }

    let team_dir = workdir.join(TEAM_DIR);
    // The index lists only what is published: no line for a file git leaves out.
    held_back.extend(ignored);
    let index_abs = workdir.join(&index_path);
    if std::fs::symlink_metadata(&index_abs).is_ok_and(|m| m.is_dir()) {
        // A teammate's folder where the generated index belongs: left as git checked it out
        // (named when it arrived), neither written into nor committed away.
        held_back.insert(index_path.clone());
    } else {
        regenerate_index(project, &team_dir, &held_back, &team_prefix, &policy)?;
    }
    if index_abs.is_file() {
        let stamp = stamp_of(&index_abs)?;
        let bytes = std::fs::read(&index_abs).map_err(|e| OpError::io(&index_abs, e))?;
        let reasons = quarantine::index_reasons(&bytes, &policy);
        if !reasons.is_empty() {
            held_back.insert(index_path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(&index_path, reasons));
        }
        checked.insert(index_path.clone(), (stamp, Some(bytes)));
    }

    let mut updates = Vec::new();
    let mut fresh = HashMap::new();
    let paths = changes
        .iter()
        .filter(|c| !held_back.contains(&c.path) && c.path != index_path)
        .map(|c| (c.path.as_str(), c.mode))
        .chain((!held_back.contains(&index_path)).then_some((
            index_path.as_str(),
            index_abs.is_file().then_some(git2::FileMode::Blob),
        )));
    for (path, mode) in paths {
        let Some(mode) = mode else {
            updates.push(TeamUpdate {
                path: path.to_string(),
                file: None,
            });
            continue;
        };
        let (stamp, bytes) = match checked.get(path) {
            Some((stamp, bytes)) => (*stamp, bytes.as_deref()),
            None => (stamp_of(&workdir.join(path))?, None),
        };
        let id = commit::store_blob(repo, path, bytes)?;
        if changed_since_checked(&workdir.join(path), bytes)? {
            outcome.quarantined.push(Quarantined::new(
                path,
                vec!["changed while sync ran — sync again".into()],
            ));
            continue;
        }
        fresh.insert(path.to_string(), FreshFile { id, stamp });
        updates.push(TeamUpdate {
            path: path.to_string(),
            file: Some(TreeFile { id, mode }),
        });
    }

    let settings = commit_settings(repo, options, deadline, outcome)?;
    let done = commit::commit_team_dir(repo, branch, TEAM_DIR, &updates, &fresh, &settings)?;
    match done.result {
        CommitResult::Committed(oid) => {
            outcome.committed = true;
            outcome.commit = Some(oid.to_string());
            outcome.files_committed = count_changed(repo, branch, oid)?;
        }
        CommitResult::NothingToCommit => {}
        CommitResult::HeadMoved => {
            outcome.commit_refused = true;
            outcome.warnings.push(
                "the branch moved while sync was committing; nothing was committed — sync again"
                    .into(),
            );
        }
        CommitResult::BranchLocked(lock) => {
            outcome.skip(
                SkipReason::Locked,
                format!(
                    "another git process holds {}; nothing was committed (it is not removed: if \
                     no git command is running, delete it yourself)",
                    lock.display()
                ),
            );
        }
        CommitResult::NotSigned(why) => {
            outcome.commit_refused = true;
            outcome.warnings.push(format!(
                "commit.gpgsign is on but the sync commit could not be signed ({why}); nothing \
                 was committed{SIGNING_FIX}"
            ));
        }
    }
    if done.index == StagingUpdate::Locked {
        outcome.warnings.push(
            "another git process held .git/index.lock, so the index's team entries were not \
             updated; the next sync updates them"
                .into(),
        );
    }
    Ok(())
}

/// The memories on disk that neither HEAD nor this commit holds because git ignores them in
/// this clone (a `.gitignore` rule, `info/exclude`, a global excludes file).
fn ignored_memories(
    project: &Project,
    repo: &Repository,
    head_tree: Option<&git2::Tree<'_>>,
    changes: &[status::TeamChange],
) -> Result<Vec<String>, OpError> {
    let team_prefix = format!("{TEAM_DIR}/");
    let team_dir = project.git_root()?.join(TEAM_DIR);
    let (entries, _) =
        store::load_index_entries(&team_dir, &project.shown_prefix(ScopeKind::Team))?;
    let mut ignored = Vec::new();
    for entry in entries {
        let full = format!("{team_prefix}{}", entry.path);
        let tracked = head_tree.is_some_and(|t| t.get_path(Path::new(&full)).is_ok());
        if tracked || changes.iter().any(|c| c.path == full) {
            continue;
        }
        if repo.is_path_ignored(&full).unwrap_or(false) {
            ignored.push(full);
        }
    }
    Ok(ignored)
}

/// Names the ignored memories, the rule that ignores them and the exact `.gitignore` lines
/// that publish them (the same `teammem init --fix-gitignore` writes).
fn ignored_warning(repo: &Repository, ignored: &[String]) -> String {
    format!(
        "not published, and left out of MEMORY.md: {} — git ignores {} in this clone {}",
        ignored.join(", "),
        if ignored.len() == 1 { "it" } else { "them" },
        crate::ops::init::ignored_advice(repo, &ignored[0]),
    )
}

/// What a user does when a commit could not be signed, said after every such refusal.
pub(crate) const SIGNING_FIX: &str = "; fix the key git signs with (`git config user.signingkey`), \
     or turn signing off in this repository with `git config commit.gpgsign false`";

/// Rewrites `MEMORY.md` from the memories on disk as Qwen Code would, leaving quarantined files
/// out (they are not committed) and any line that would carry a secret: a teammate's pulled
/// secret is never copied into the index this sync commits. A missing team folder stays missing.
pub(crate) fn regenerate_index(
    project: &Project,
    team_dir: &Path,
    held_back: &HashSet<String>,
    team_prefix: &str,
    policy: &crate::domain::gate::Gate,
) -> Result<(), OpError> {
    let (entries, _) = store::load_index_entries(team_dir, &project.shown_prefix(ScopeKind::Team))?;
    let kept = entries
        .into_iter()
        .filter(|e| !held_back.contains(&format!("{team_prefix}{}", e.path)));
    let text = crate::domain::gate::team_index_md(kept, Some(policy));
    if team_dir.is_dir() && !same_lines_as_checked_out(&team_dir.join(INDEX_FILE), &text) {
        store::write_index_unsynced(team_dir, &text)?;
    }
    Ok(())
}

/// Whether `path` holds `text` with CRLF line endings, as git checks it out under
/// `core.autocrlf=true` or a `.gitattributes` `eol=crlf`: such a file is left as it is.
/// Rewritten with LF it would hold the same blob but change size, and `git status` would show
/// it modified (git trusts a size change without reading the file) with no difference.
fn same_lines_as_checked_out(path: &Path, text: &str) -> bool {
    // Only a file is read: a symlinked MEMORY.md is replaced, never read through.
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(old) = std::fs::read(path) else {
        return false;
    };
    old.contains(&b'\r') && old.len() == text.len() + text.matches('\n').count() && {
        let mut normalised = Vec::with_capacity(old.len());
        let mut rest = old.as_slice();
        while let Some(at) = rest.windows(2).position(|w| w == b"\r\n") {
            normalised.extend_from_slice(&rest[..at]);
            normalised.push(b'\n');
            rest = &rest[at + 2..];
        }
        normalised.extend_from_slice(rest);
        normalised == text.as_bytes()
    }
}

/// Removes the temp files (`.<name>.<pid>[-n].tmp`) that an atomic write leaves when its process is
/// killed, in the team folder and its type folders, once their process is gone. They are never
/// committed (hidden), but `git status` would show them.
pub(crate) fn remove_stale_temp_files(team_dir: &Path) {
    let mut folders = vec![team_dir.to_path_buf()];
    folders.extend(
        crate::domain::memory::MemoryType::ALL
            .iter()
            .map(|t| team_dir.join(t.as_str())),
    );
    for folder in folders {
        // A type folder a teammate committed as a symlink is never followed out of the team
        // folder: what it points at is not teammem's to clean.
        if !std::fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let pid = name
                .strip_prefix('.')
                .and_then(|n| n.strip_suffix(".tmp"))
                .and_then(|n| n.rsplit_once('.'))
                .and_then(|(_, tag)| tag.split('-').next()?.parse::<u32>().ok());
            if pid.is_some_and(|pid| !lock::process_alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

pub(crate) fn stamp_of(abs: &Path) -> Result<FileStamp, OpError> {
    std::fs::symlink_metadata(abs)
        .map(|m| FileStamp::of(&m))
        .map_err(|e| OpError::io(abs, e))
}

/// When filters made libgit2 read the file itself (carriage returns, `$Id`), checks that it
/// still holds the bytes the guard checked.
fn changed_since_checked(abs: &Path, checked: Option<&[u8]>) -> Result<bool, OpError> {
    match checked {
        Some(bytes) if bytes.contains(&b'\r') || bytes.windows(3).any(|w| w == b"$Id") => {
            let now = std::fs::read(abs).map_err(|e| OpError::io(abs, e))?;
            Ok(now != bytes)
        }
        _ => Ok(false),
    }
}

fn count_changed(repo: &Repository, branch: &Branch, commit: git2::Oid) -> Result<usize, OpError> {
    let git = |e| crate::git::GitError::git("comparing the sync commit with its parent", e);
    let new_tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git)?;
    let old_tree = match branch.tip {
        Some(tip) => Some(repo.find_commit(tip).and_then(|c| c.tree()).map_err(git)?),
        None => None,
    };
    // A sync commit changes the team folder alone; libgit2 would walk every entry of both whole
    // trees (about 40 ms in a 100,000-file repository), so only its subtrees are
    // compared.
    let new_team = team_files::subtree(repo, &new_tree, TEAM_DIR)?;
    let old_team = match &old_tree {
        Some(tree) => team_files::subtree(repo, tree, TEAM_DIR)?,
        None => None,
    };
    let diff = repo
        .diff_tree_to_tree(old_team.as_ref(), new_team.as_ref(), None)
        .map_err(git)?;
    Ok(diff.deltas().len())
}

/// Who the commit is by and how it is signed, with warnings for a fallback identity and for a
/// signing program named by the repository's own config (ignored).
pub(crate) fn commit_settings(
    repo: &Repository,
    options: &SyncOptions,
    deadline: Instant,
    outcome: &mut SyncOutcome,
) -> Result<CommitSettings, OpError> {
    let configured = repo.signature().ok().and_then(|s| {
        Some(Person {
            name: s.name().ok()?.to_string(),
            email: s.email().ok()?.to_string(),
        })
    });
    let author = match &options.author {
        Some(text) => Some(parse_person(text)?),
        None => None,
    };
    let fallback = || {
        parse_person(FALLBACK_AUTHOR).unwrap_or(Person {
            name: "teammem".into(),
            email: "teammem@localhost".into(),
        })
    };
    let identity = match (author, configured) {
        (Some(author), Some(committer)) => Identity { author, committer },
        (Some(author), None) => Identity {
            committer: author.clone(),
            author,
        },
        (None, Some(person)) => Identity {
            author: person.clone(),
            committer: person,
        },
        (None, None) => {
            outcome.warnings.push(format!(
                "git has no user.name/user.email configured, so the sync commit is by \
                 {FALLBACK_AUTHOR}; set them with `git config --global user.name …` and \
                 `git config --global user.email …`, or pass --author"
            ));
            let person = fallback();
            Identity {
                author: person.clone(),
                committer: person,
            }
        }
    };
    let plan = sign::signing_plan(repo)?;
    if let Some(program) = &plan.ignored_program {
        outcome.warnings.push(format!(
            "the repository's own config names the signing program `{program}`; teammem never \
             runs programs named there, and uses the one from your global git config instead"
        ));
    }
    Ok(CommitSettings {
        identity,
        signing: plan.signing,
        index_patience: INDEX_PATIENCE,
        sign_budget: deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1)),
    })
}

/// Parses `Name <email>`.
pub fn parse_person(text: &str) -> Result<Person, OpError> {
    let bad = || {
        OpError::Usage(format!(
            "--author {text:?} is not of the form `Name <email>`"
        ))
    };
    let (name, rest) = text.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    let name = name.trim();
    if name.is_empty() || email.is_empty() || email.contains(['<', '>']) {
        return Err(bad());
    }
    Ok(Person {
        name: name.to_string(),
        email: email.to_string(),
    })
}
