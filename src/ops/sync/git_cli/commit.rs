//! The team folder committed through the git CLI (a repository libgit2 cannot open): the same
//! gate and `MEMORY.md` as the libgit2 path (`team_commit.rs`), the commit built with plumbing
//! on a temporary index — the user's index is only touched for the team entries the commit
//! changed (`git update-index --index-info`), so everything staged outside the folder stays
//! byte for byte.

use std::collections::{BTreeMap, HashSet};

use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::cli_repo::{CliRepo, TreeEntry};
use crate::git::remote::Deadline;
use crate::git::sign::{self, Signing, SigningPlan};
use crate::ops::quarantine::{self, Quarantined};
use crate::ops::{OpError, Project};

use super::super::team_commit::{SYMLINK_NOT_PUBLISHED, parse_person, regenerate_index};
use super::super::{FALLBACK_AUTHOR, SIGNING_FIX, SyncOptions, SyncOutcome};

/// The sync commit's message, as the libgit2 path writes it.
pub(super) const SYNC_MESSAGE: &str = "chore(memory): sync team memory\n\nTeammem-Sync: 1\n";

/// Hidden files that are committed all the same (the libgit2 path's list).
const HIDDEN_KEPT: &[&str] = &[".gitignore", ".gitattributes", ".gitkeep", ".secretsignore"];

/// What the commit step did.
pub(super) enum Committed {
    /// The branch now points at this new commit.
    Made(String),
    /// The folder matches `tree_of`'s: nothing to commit.
    Nothing,
    /// Not committed; the outcome says why.
    Refused,
}

/// Commits the team folder's changes against `tree_of`'s tree (the branch tip) as a child of
/// `parent`, moving `branch_ref` from `old` by compare-and-swap. `parent` differs from
/// `tree_of` only when a replayed commit (`tree_of`, not yet pushed) is amended with its
/// regenerated `MEMORY.md`.
#[allow(clippy::too_many_arguments)]
pub(super) fn commit_folder(
    project: &Project,
    cli: &CliRepo,
    branch_ref: &str,
    tree_of: Option<&str>,
    parent: Option<&str>,
    old: Option<&str>,
    options: &SyncOptions,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<Committed, OpError> {
    let workdir = project.git_root()?.to_path_buf();
    let team_dir = workdir.join(TEAM_DIR);
    let team_prefix = format!("{TEAM_DIR}/");
    let index_path = format!("{team_prefix}{INDEX_FILE}");
    super::super::remove_stale_temp_files(&team_dir);
    let head = match tree_of {
        Some(commit) => cli.tree_entries(commit, TEAM_DIR, deadline)?,
        None => BTreeMap::new(),
    };
    // What git sees in the folder: tracked files and untracked ones it does not ignore.
    let listed = cli.run(
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            &format!(":(literal){TEAM_DIR}/"),
        ],
        deadline,
        "listing the team folder (git ls-files)",
    )?;
    let team_pathspec = format!(":(literal){TEAM_DIR}/");
    let in_index = cli.run(
        &["ls-files", "-z", "--cached", "--", &team_pathspec],
        deadline,
        "listing the index's team entries (git ls-files)",
    )?;
    let in_index: HashSet<&str> = in_index.split('\0').filter(|p| !p.is_empty()).collect();
    // A `git rm --cached` of a memory still on disk: refused, as the libgit2 path does, never
    // undone by committing the file again.
    let removed: Vec<&String> = head
        .keys()
        .filter(|p| !in_index.contains(p.as_str()) && workdir.join(p).is_file())
        .collect();
    if !removed.is_empty() {
        outcome.skip_staged_removal(&removed);
        return Ok(Committed::Refused);
    }
    // Memories git ignores in this clone are never published, nor listed in MEMORY.md.
    let ignored = cli.run(
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
            &team_pathspec,
        ],
        deadline,
        "listing ignored team files (git ls-files)",
    )?;
    let ignored: Vec<String> = ignored
        .split('\0')
        .filter(|p| p.ends_with(".md"))
        .map(str::to_string)
        .collect();
    if !ignored.is_empty() {
        outcome
            .warnings
            .push(ignored_warning(cli, &ignored, deadline)?);
    }
    let mut candidates: Vec<String> = listed
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .chain(head.keys().cloned())
        .collect();
    candidates.sort();
    candidates.dedup();

    let mut updates: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
    let mut held_back: HashSet<String> = ignored.into_iter().collect();
    let mut files = Vec::new();
    for path in candidates {
        if path == index_path {
            continue;
        }
        let abs = workdir.join(&path);
        let meta = std::fs::symlink_metadata(&abs);
        let in_head = head.get(&path);
        match meta {
            Err(_) => {
                if in_head.is_some() {
                    updates.insert(path, None);
                }
            }
            Ok(m) if m.file_type().is_symlink() => {
                // A teammate's symlink stays as git has it; one of the user's is never published.
                if in_head.is_none_or(|e| e.mode != "120000") {
                    held_back.insert(path.clone());
                    outcome.quarantined.push(Quarantined::new(
                        &path,
                        vec![SYMLINK_NOT_PUBLISHED.to_string()],
                    ));
                }
            }
            Ok(m) if m.is_file() => {
                let name = path.rsplit('/').next().unwrap_or(&path);
                let hidden = name.starts_with('.') && !HIDDEN_KEPT.contains(&name);
                if hidden && in_head.is_none() {
                    continue;
                }
                files.push(path);
            }
            // A folder where git has a file or a gitlink: left as git checked it out.
            Ok(_) => {}
        }
    }
    hold_back_filtered(cli, &mut files, &mut held_back, deadline, outcome)?;
    let ids = cli.file_ids(&files, deadline)?;
    let (policy, _) = crate::ops::guard::policy(project);
    for (path, id) in files.iter().zip(ids) {
        let mode = head
            .get(path)
            .map_or_else(|| "100644".to_string(), |e| e.mode.clone());
        if head.get(path).is_some_and(|e| e.id == id) {
            continue;
        }
        let rel = path.strip_prefix(&team_prefix).unwrap_or(path);
        let checked = quarantine::check_team_file(path, rel, &workdir.join(path), &policy)?;
        if !checked.reasons.is_empty() {
            held_back.insert(path.clone());
            outcome
                .quarantined
                .push(Quarantined::new(path, checked.reasons));
            continue;
        }
        let Some(bytes) = checked.bytes else { continue };
        // The checked bytes are what is committed; a file changed since is left for later.
        let stored = match cli.store_file_blob(path, &bytes, deadline)? {
            Ok(id) => id,
            Err(why) => {
                held_back.insert(path.clone());
                outcome.quarantined.push(Quarantined::new(path, vec![why]));
                continue;
            }
        };
        if stored != id {
            outcome.quarantined.push(Quarantined::new(
                path,
                vec!["changed while sync ran — sync again".into()],
            ));
            continue;
        }
        updates.insert(path.clone(), Some(TreeEntry { mode, id: stored }));
    }

    // MEMORY.md: regenerated from the clean memories, gated, committed when it changed.
    let index_abs = workdir.join(&index_path);
    if !std::fs::symlink_metadata(&index_abs).is_ok_and(|m| m.is_dir()) {
        regenerate_index(project, &team_dir, &held_back, &team_prefix, &policy)?;
    }
    if index_abs.is_file() {
        let bytes = std::fs::read(&index_abs).map_err(|e| OpError::io(&index_abs, e))?;
        let reasons = quarantine::index_reasons(&bytes, &policy);
        if reasons.is_empty() {
            let id = cli.store_blob(&index_path, &bytes, deadline)?;
            if head.get(&index_path).is_none_or(|e| e.id != id) {
                let entry = TreeEntry {
                    mode: "100644".into(),
                    id,
                };
                updates.insert(index_path.clone(), Some(entry));
            }
        } else {
            outcome
                .quarantined
                .push(Quarantined::new(&index_path, reasons));
        }
    } else if head.contains_key(&index_path) && !index_abs.exists() {
        updates.insert(index_path.clone(), None);
    }
    commit_updates(
        cli, branch_ref, tree_of, parent, old, &updates, options, deadline, outcome,
    )
}

/// Commits `updates` (each path set to an entry, or removed) on `tree_of`'s tree as a child of
/// `parent`, signed as the user's config asks, moving `branch_ref` from `old` by
/// compare-and-swap; then sets only those entries of the user's index.
#[allow(clippy::too_many_arguments)]
fn commit_updates(
    cli: &CliRepo,
    branch_ref: &str,
    tree_of: Option<&str>,
    parent: Option<&str>,
    old: Option<&str>,
    updates: &BTreeMap<String, Option<TreeEntry>>,
    options: &SyncOptions,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<Committed, OpError> {
    if updates.is_empty() {
        return Ok(Committed::Nothing);
    }
    let plan = signing_plan(cli, outcome)?;
    let tree = cli.write_tree(tree_of, updates, deadline)?;
    let mut commit = commit_tree(cli, &tree, parent, options, deadline, outcome)?;
    if plan.signing != Signing::Off {
        match cli.signed_commit(&commit, &plan.signing, deadline)? {
            Ok(signed) => commit = signed,
            Err(why) => {
                // As the libgit2 path (`team_commit.rs`): never an unsigned commit instead.
                outcome.commit_refused = true;
                outcome.warnings.push(format!(
                    "commit.gpgsign is on but the sync commit could not be signed ({why}); \
                     nothing was committed{SIGNING_FIX}"
                ));
                return Ok(Committed::Refused);
            }
        }
    }
    let message = "teammem: sync team memory";
    // Killed between the branch move and the index's team entries, the next sync writes them
    // (`cli_repo/interrupted.rs`): a new memory would otherwise look unstaged by `git rm`.
    // Each note names only the locks of its own step: a lock a user's git takes later is
    // never one of them.
    let step = cli.announce_step(&CliRepo::ref_locks(branch_ref), Some((branch_ref, &commit)))?;
    if !cli.move_ref(branch_ref, &commit, old, message, deadline)? {
        step.done();
        outcome.commit_refused = true;
        outcome.warnings.push(
            "the branch moved while sync was committing; nothing was committed — sync again".into(),
        );
        return Ok(Committed::Refused);
    }
    let step = cli.announce_step(&["index.lock".to_string()], Some((branch_ref, &commit)))?;
    if update_user_index(cli, updates, deadline, outcome)? {
        step.done();
    } else {
        // Another git holds the index: the note stays for the next sync to write the entries,
        // naming no lock (that one is the other git's).
        cli.announce_step(&[], Some((branch_ref, &commit)))?;
    }
    outcome.committed = true;
    outcome.commit = Some(commit.clone());
    outcome.files_committed = updates.len();
    Ok(Committed::Made(commit))
}

/// `teammem init --branch --migrate` through git: commits the removal of the team folder the
/// current branch tracks, as a sync commit (only the folder's paths leave the branch and the
/// index; every file on disk stays, now the memory branch's view). `Ok(Err(why))` when it was
/// not done: an operation in progress, a detached HEAD, another sync, a key that cannot sign.
pub(crate) fn commit_folder_removal(cli: &CliRepo) -> Result<Result<String, String>, OpError> {
    use crate::git::preflight::{self, Blocker};
    let deadline = Deadline::after(super::super::DEFAULT_TIMEOUT);
    if let Some(operation) = preflight::operation_in_files(&cli.paths.git_dir) {
        return Ok(Err(Blocker::OperationInProgress(operation).to_string()));
    }
    let Some(branch_ref) = cli.head_branch(&deadline)? else {
        return Ok(Err(Blocker::DetachedHead.to_string()));
    };
    let Ok(_lock) = crate::git::recovery::lock::SyncLock::acquire_in(&cli.common_dir)? else {
        return Ok(Err("another sync is running in this repository".into()));
    };
    let tip = cli.resolve(&branch_ref, &deadline)?;
    let Some(tip) = tip else {
        return Ok(Err("the current branch has no commit".into()));
    };
    let updates: BTreeMap<String, Option<TreeEntry>> = cli
        .tree_entries(&tip, TEAM_DIR, &deadline)?
        .into_keys()
        .map(|path| (path, None))
        .collect();
    let mut outcome = SyncOutcome::default();
    let done = commit_updates(
        cli,
        &branch_ref,
        Some(&tip),
        Some(&tip),
        Some(&tip),
        &updates,
        &SyncOptions::default(),
        &deadline,
        &mut outcome,
    )?;
    Ok(match done {
        Committed::Made(commit) => Ok(commit),
        Committed::Nothing => Err("the current branch tracks no team file".into()),
        Committed::Refused => Err(outcome.warnings.join("; ")),
    })
}

/// Holds back and quarantines the team files a `filter` attribute sends through a filter
/// program (`git check-attr`): hashing them would run it, and teammem runs no filter program
/// from the repository. Both sync modes of this path record through it.
pub(super) fn hold_back_filtered(
    cli: &CliRepo,
    files: &mut Vec<String>,
    held_back: &mut HashSet<String>,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let filtered = cli.filtered(files, deadline)?;
    for (path, driver) in &filtered {
        held_back.insert(path.clone());
        outcome.quarantined.push(Quarantined::new(
            path,
            vec![format!(
                "invalid: a git `filter` attribute sends it through the filter driver \
                 `{driver}`, and teammem stores no file through a filter program; remove the attribute for the \
                 team folder (`git check-attr filter -- {path}` shows it)"
            )],
        ));
    }
    files.retain(|p| !filtered.iter().any(|(f, _)| f == p));
    Ok(())
}

/// How the sync commit is signed (`git/sign.rs`, read from every config level; the signing
/// program from the user's own levels only), with the libgit2 path's warning when the
/// repository's config names one (ignored).
pub(super) fn signing_plan(
    cli: &CliRepo,
    outcome: &mut SyncOutcome,
) -> Result<SigningPlan, OpError> {
    let plan = sign::signing_plan_in(&cli.full_config()?);
    if let Some(program) = &plan.ignored_program {
        outcome.warnings.push(format!(
            "the repository's own config names the signing program `{program}`; teammem never \
             runs programs named there, and uses the one from your global git config instead"
        ));
    }
    Ok(plan)
}

/// `git commit-tree` with the sync message, by git's identity (or `--author`, or the fallback
/// with a warning), not signed (`CliRepo::signed_commit` signs it).
pub(super) fn commit_tree(
    cli: &CliRepo,
    tree: &str,
    parent: Option<&str>,
    options: &SyncOptions,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<String, OpError> {
    let mut env: Vec<(&str, String)> = Vec::new();
    let mut ident = cli.command();
    ident.args(["var", "GIT_COMMITTER_IDENT"]);
    let configured = cli
        .try_run(ident, b"", deadline, "reading git's identity (git var)")?
        .success;
    let author = match &options.author {
        Some(text) => Some(parse_person(text)?),
        None if configured => None,
        None => {
            outcome.warnings.push(format!(
                "git has no user.name/user.email configured, so the sync commit is by \
                 {FALLBACK_AUTHOR}; set them with `git config --global user.name …` and \
                 `git config --global user.email …`, or pass --author"
            ));
            Some(parse_person(FALLBACK_AUTHOR)?)
        }
    };
    if let Some(person) = author {
        env.push(("GIT_AUTHOR_NAME", person.name.clone()));
        env.push(("GIT_AUTHOR_EMAIL", person.email.clone()));
        if !configured {
            env.push(("GIT_COMMITTER_NAME", person.name));
            env.push(("GIT_COMMITTER_EMAIL", person.email));
        }
    }
    let env: Vec<(&str, &std::ffi::OsStr)> = env
        .iter()
        .map(|(k, v)| (*k, std::ffi::OsStr::new(v.as_str())))
        .collect();
    let mut args = vec!["commit-tree", "--no-gpg-sign", tree];
    if let Some(parent) = parent {
        args.extend(["-p", parent]);
    }
    let made = cli.run_with(
        &args,
        &env,
        SYNC_MESSAGE.as_bytes(),
        deadline,
        "making the sync commit (git commit-tree)",
    )?;
    Ok(made.trim().to_string())
}

/// Brings the user's index entries for the committed team paths in line with the commit; no
/// other entry is written. A held `index.lock` leaves them for the next sync, with a warning.
/// Returns whether they were written.
fn update_user_index(
    cli: &CliRepo,
    updates: &BTreeMap<String, Option<TreeEntry>>,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<bool, GitError> {
    let input = cli.index_info(updates);
    let mut cmd = cli.command();
    cmd.args(["update-index", "-z", "--index-info"]);
    let what = "updating the index's team entries (git update-index)";
    let run = cli.try_run(cmd, input.as_bytes(), deadline, what)?;
    if run.success {
        return Ok(true);
    }
    if run.stderr.contains("index.lock") {
        outcome.warnings.push(
            "another git process held .git/index.lock, so the index's team entries were not \
             updated; the next sync updates them"
                .into(),
        );
        return Ok(false);
    }
    Err(GitError::Cli {
        context: what.into(),
        message: run.stderr.trim().to_string(),
    })
}

/// Names the ignored memories, the rule that ignores them (`git check-ignore -v`) and the
/// `.gitignore` lines that publish them — the advice of the libgit2 path
/// (`ops::init::ignored_advice`).
fn ignored_warning(
    cli: &CliRepo,
    ignored: &[String],
    deadline: &Deadline,
) -> Result<String, GitError> {
    let mut why = cli.command();
    why.args(["check-ignore", "-v", "--no-index", "--", &ignored[0]]);
    let run = cli.try_run(
        why,
        b"",
        deadline,
        "naming the ignore rule (git check-ignore)",
    )?;
    let rule = run
        .stdout
        .split('\t')
        .next()
        .map(str::trim)
        .filter(|r| run.success && !r.is_empty())
        .map_or_else(
            || "an ignore rule".to_string(),
            |r| format!("the rule `{r}`"),
        );
    let mut qwen = cli.command();
    qwen.args(["check-ignore", "-q", "--no-index", "--", ".qwen/"]);
    let qwen_ignored = cli
        .try_run(qwen, b"", deadline, "checking .qwen/ (git check-ignore)")?
        .success;
    let lines = crate::ops::init::gitignore_fix(qwen_ignored)[1..].join("\n");
    Ok(format!(
        "not published, and left out of MEMORY.md: {} — git ignores {} in this clone ({rule}); \
         to share them, add these lines at the end of .gitignore and commit it:\n{lines}",
        ignored.join(", "),
        if ignored.len() == 1 { "it" } else { "them" },
    ))
}
