//! Memory-branch commits through the git CLI, with the libgit2 branch mode's rules
//! (`git/memory_branch.rs`): a record commit is its parent's tree with the folder's changes
//! and `MEMORY.md` regenerated from the branch's memories; two tips are brought together
//! memory by memory, this clone's unpublished commits re-created as one record commit on the
//! other tip (a merge commit only when a commit to keep is not teammem's own or a proposal
//! branch shows it). Every commit is signed when the user signs commits (`git/sign.rs`, as
//! the current-branch path signs its commit); a signature that fails makes no commit. Objects
//! only; the caller moves the ref.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::domain::memory;
use crate::domain::memory_index;
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::GitError;
use crate::git::cli_repo::{CliRepo, TreeEntry};
use crate::git::memory_branch::{MERGE_SUBJECT, PROPOSALS_PREFIX, RECORD_SUBJECT};
use crate::git::remote::Deadline;
use crate::git::replay::MemoryIndexGate;
use crate::git::sign::Signing;
use crate::ops::OpError;
use crate::ops::quarantine::TeamMemoryIndexGate;
use crate::ops::sync::{FALLBACK_AUTHOR, SyncOptions, SyncOutcome};

/// The trailer every teammem commit carries.
const TRAILER: &str = "Teammem-Sync: 1";

/// The subject of a memory branch's first commit (the libgit2 path's).
pub(super) const START_SUBJECT: &str = "chore(memory): start the team memory branch";

/// How many unpublished commits are re-created at most (the libgit2 path's limit).
const MAX_RECREATED: usize = 200;

/// Paths from the top set (`Some`) or removed (`None`).
type TreeUpdates = BTreeMap<String, Option<TreeEntry>>;

/// Who writes the memory-branch commits of one sync.
pub(super) struct Writer<'a> {
    pub(super) cli: &'a CliRepo,
    pub(super) options: &'a SyncOptions,
    pub(super) deadline: &'a Deadline,
    /// How commits are signed, read at the first commit (a sync that commits nothing never
    /// reads the configuration for it).
    pub(super) signing: OnceCell<Signing>,
}

/// A commit made, or the reason `commit.gpgsign` could not be honoured (nothing was made).
pub(super) type Made = Result<String, String>;

/// What a record commit came to.
pub(super) enum Recorded {
    /// The folder's changes change nothing on the branch.
    Nothing,
    /// The record commit.
    Commit(String),
    /// Signing was required and failed (why): nothing was recorded.
    NotSigned(String),
}

/// Two tips brought together.
pub(super) struct Combined {
    /// The tip holding both.
    pub(super) tip: Option<String>,
    /// Memories kept in two versions: (path, where ours is kept).
    pub(super) conflicts: Vec<(String, String)>,
    /// Signing was required and failed (why): nothing was combined.
    pub(super) not_signed: Option<String>,
}

impl Writer<'_> {
    /// A writer for one sync.
    pub(super) fn new<'a>(
        cli: &'a CliRepo,
        options: &'a SyncOptions,
        deadline: &'a Deadline,
    ) -> Writer<'a> {
        Writer {
            cli,
            options,
            deadline,
            signing: OnceCell::new(),
        }
    }

    /// A commit of `tree` with `parents` and `subject` (the sync trailer added), by git's
    /// identity (or `--author`, or the fallback with one warning), signed when the user signs
    /// commits; `Err(why)` when that signature failed (no commit made).
    pub(super) fn commit(
        &self,
        tree: &str,
        parents: &[&str],
        subject: &str,
        outcome: &mut SyncOutcome,
    ) -> Result<Made, OpError> {
        let unsigned = self.unsigned_commit(tree, parents, subject, outcome)?;
        let signing = match self.signing.get() {
            Some(signing) => signing,
            None => {
                let plan = super::super::commit::signing_plan(self.cli, outcome)?;
                self.signing.get_or_init(|| plan.signing)
            }
        };
        if *signing == Signing::Off {
            return Ok(Ok(unsigned));
        }
        Ok(self
            .cli
            .signed_commit(&unsigned, signing, self.deadline)?
            .map_err(|why| why.to_string()))
    }

    fn unsigned_commit(
        &self,
        tree: &str,
        parents: &[&str],
        subject: &str,
        outcome: &mut SyncOutcome,
    ) -> Result<String, OpError> {
        let cli = self.cli;
        let mut ident = cli.command();
        ident.args(["var", "GIT_COMMITTER_IDENT"]);
        let configured = cli
            .try_run(
                ident,
                b"",
                self.deadline,
                "reading git's identity (git var)",
            )?
            .success;
        let author = match &self.options.author {
            Some(text) => Some(crate::ops::sync::team_commit::parse_person(text)?),
            None if configured => None,
            None => {
                let warning = format!(
                    "git has no user.name/user.email configured, so the memory-branch commit is \
                     by {FALLBACK_AUTHOR}; set them with `git config --global user.name …` and \
                     `git config --global user.email …`, or pass --author"
                );
                if !outcome.warnings.contains(&warning) {
                    outcome.warnings.push(warning);
                }
                Some(crate::ops::sync::team_commit::parse_person(
                    FALLBACK_AUTHOR,
                )?)
            }
        };
        let mut env: Vec<(&str, String)> = Vec::new();
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
        for parent in parents {
            args.extend(["-p", parent]);
        }
        let message = format!("{subject}\n\n{TRAILER}\n");
        let made = cli.run_with(
            &args,
            &env,
            message.as_bytes(),
            self.deadline,
            "making a memory-branch commit (git commit-tree)",
        )?;
        Ok(made.trim().to_string())
    }

    /// `root` with the team folder's `MEMORY.md` regenerated from the memories it holds
    /// (removed when it holds nothing else), as the libgit2 path renders it: the first
    /// [`memory_index::MAX_FILES`] memories by path whose line the gate keeps.
    pub(super) fn with_index(&self, root: &str) -> Result<String, OpError> {
        let (cli, deadline) = (self.cli, self.deadline);
        let prefix = format!("{TEAM_DIR}/");
        let files: BTreeMap<String, TreeEntry> = cli
            .tree_entries(root, TEAM_DIR, deadline)?
            .into_iter()
            .filter_map(|(path, e)| Some((path.strip_prefix(&prefix)?.to_string(), e)))
            .collect();
        let index_path = format!("{prefix}{INDEX_FILE}");
        let mut update = BTreeMap::new();
        if files.keys().all(|rel| rel == INDEX_FILE) {
            if files.is_empty() {
                return Ok(root.to_string());
            }
            update.insert(index_path, None);
            return Ok(cli.edit_tree(Some(root), &update, deadline)?);
        }
        let gate = TeamMemoryIndexGate;
        let mut configs: Vec<Option<(Vec<u8>, bool)>> = Vec::new();
        for rel in gate.config_files() {
            configs.push(match files.get(rel) {
                Some(e) if e.mode != "160000" => {
                    Some((cli.blob(&e.id, deadline)?, e.mode == "120000"))
                }
                _ => None,
            });
        }
        let judge = gate.judge([
            configs[0].as_ref().map(|(b, l)| (b.as_slice(), *l)),
            configs[1].as_ref().map(|(b, l)| (b.as_slice(), *l)),
        ]);
        let mut candidates: Vec<(&String, &TreeEntry)> = files
            .iter()
            .filter(|(rel, e)| {
                matches!(e.mode.as_str(), "100644" | "100755") && memory::is_memory_path(rel)
            })
            .collect();
        candidates.sort_by(|a, b| memory_index::utf16_cmp(a.0, b.0));
        let mut kept = Vec::new();
        for (rel, entry) in candidates {
            if kept.len() == memory_index::MAX_FILES {
                break;
            }
            if deadline.passed() {
                return Err(GitError::OutOfTime {
                    what: format!("regenerating {TEAM_DIR}/{INDEX_FILE}"),
                }
                .into());
            }
            let shown = format!("{prefix}{rel}");
            let bytes = match cli.blob(&entry.id, deadline) {
                Ok(bytes) => bytes,
                // A crafted entry with a file's mode naming a folder or a commit: no memory.
                Err(crate::git::GitError::Cli { .. })
                    if cli.holds_non_blob(&entry.id, deadline)? =>
                {
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(line) = memory::index_entry_of(&shown, rel, &bytes) {
                if judge(&line) {
                    kept.push(line);
                }
            }
        }
        let text = gate.render(kept);
        let id = cli.store_raw(text.as_bytes(), deadline)?;
        let entry = TreeEntry {
            mode: "100644".into(),
            id,
        };
        if files.get(INDEX_FILE) == Some(&entry) {
            return Ok(root.to_string());
        }
        update.insert(index_path, Some(entry));
        Ok(cli.edit_tree(Some(root), &update, deadline)?)
    }

    /// A record commit on `parent` (`None`: a first commit) holding `updates` (paths from the
    /// top) and the regenerated `MEMORY.md`; `None` when that changes nothing.
    pub(super) fn record(
        &self,
        parent: Option<&str>,
        updates: &BTreeMap<String, Option<TreeEntry>>,
        outcome: &mut SyncOutcome,
    ) -> Result<Recorded, OpError> {
        let base = match parent {
            Some(p) => Some(self.cli.tree_of(p, self.deadline)?),
            None => None,
        };
        let applied = self
            .cli
            .edit_tree(base.as_deref(), updates, self.deadline)?;
        let tree = self.with_index(&applied)?;
        if Some(&tree) == base.as_ref() {
            return Ok(Recorded::Nothing);
        }
        let parents: Vec<&str> = parent.into_iter().collect();
        Ok(
            match self.commit(&tree, &parents, RECORD_SUBJECT, outcome)? {
                Ok(id) => Recorded::Commit(id),
                Err(why) => Recorded::NotSigned(why),
            },
        )
    }

    /// Brings `ours` and `theirs` together (see the module doc); `remote` names the remote
    /// whose proposal branches are never rewritten.
    pub(super) fn combine(
        &self,
        ours: Option<&str>,
        theirs: Option<&str>,
        remote: Option<&str>,
        outcome: &mut SyncOutcome,
    ) -> Result<Combined, OpError> {
        let (cli, deadline) = (self.cli, self.deadline);
        let done = |tip: Option<&str>| Combined {
            tip: tip.map(str::to_string),
            conflicts: Vec::new(),
            not_signed: None,
        };
        let (o, t) = match (ours, theirs) {
            (None, other) | (other, None) => return Ok(done(other)),
            (Some(o), Some(t)) if o == t => return Ok(done(Some(o))),
            (Some(o), Some(t)) => (o, t),
        };
        if cli.is_ancestor(t, o, deadline)? {
            return Ok(done(Some(o)));
        }
        if cli.is_ancestor(o, t, deadline)? {
            return Ok(done(Some(t)));
        }
        let mut merge_base = cli.command();
        merge_base.args(["merge-base", o, t]);
        let found = cli.try_run(
            merge_base,
            b"",
            deadline,
            "finding the common commit (git merge-base)",
        )?;
        let base = found.stdout.trim();
        let base_files = if found.success && !base.is_empty() {
            cli.tree_entries(base, TEAM_DIR, deadline)?
        } else {
            BTreeMap::new()
        };
        let our_files = cli.tree_entries(o, TEAM_DIR, deadline)?;
        let their_files = cli.tree_entries(t, TEAM_DIR, deadline)?;
        let short = &o[..7.min(o.len())];
        let (updates, conflicts) =
            merge_folders(cli, &base_files, &our_files, &their_files, short, deadline)?;
        let their_tree = cli.tree_of(t, deadline)?;
        let applied = cli.edit_tree(Some(&their_tree), &updates, deadline)?;
        let tree = self.with_index(&applied)?;
        let recreate = self.recreatable(o, t, remote)?;
        if recreate && tree == their_tree {
            return Ok(done(Some(t)));
        }
        let made = if recreate {
            self.commit(&tree, &[t], RECORD_SUBJECT, outcome)?
        } else {
            self.commit(&tree, &[o, t], MERGE_SUBJECT, outcome)?
        };
        Ok(match made {
            Ok(tip) => Combined {
                tip: Some(tip),
                conflicts,
                not_signed: None,
            },
            Err(why) => Combined {
                tip: None,
                conflicts: Vec::new(),
                not_signed: Some(why),
            },
        })
    }

    /// Whether the commits only `ours` holds are teammem's own memory-branch commits (at most
    /// [`MAX_RECREATED`]), none shown on a proposal branch of `remote`.
    fn recreatable(&self, ours: &str, theirs: &str, remote: Option<&str>) -> Result<bool, OpError> {
        let (cli, deadline) = (self.cli, self.deadline);
        let only_ours = cli.commits_not_in(Some(theirs), ours, deadline)?;
        if only_ours.len() > MAX_RECREATED {
            return Ok(false);
        }
        for commit in &only_ours {
            let message = cli.run(
                &["log", "-1", "--format=%B", commit],
                deadline,
                "reading a commit (git log)",
            )?;
            let subject = message.lines().next().map(str::trim);
            let own = [RECORD_SUBJECT, MERGE_SUBJECT, START_SUBJECT]
                .iter()
                .any(|s| subject == Some(*s));
            if !own || !message.lines().any(|l| l.trim() == TRAILER) {
                return Ok(false);
            }
        }
        let Some(remote) = remote else {
            return Ok(true);
        };
        let proposals = cli.run(
            &[
                "for-each-ref",
                "--format=%(objectname)",
                &format!(
                    "refs/remotes/{remote}/{}",
                    PROPOSALS_PREFIX.trim_end_matches('/')
                ),
            ],
            deadline,
            "listing proposal branches (git for-each-ref)",
        )?;
        for tip in proposals.lines().filter(|l| !l.is_empty()) {
            for commit in &only_ours {
                if cli.is_ancestor(commit, tip, deadline)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// The folder of `theirs` updated with what `ours` changed since `base` (paths from the top;
/// `MEMORY.md` left for regeneration), memory by memory as the current-branch replay does: a
/// side that did not change a memory takes the other's; deleted on one side and changed on the
/// other keeps the change; two changes are text-merged when git merges them cleanly into a
/// valid memory, else theirs stays at the path and ours is kept beside it.
fn merge_folders(
    cli: &CliRepo,
    base: &BTreeMap<String, TreeEntry>,
    ours: &BTreeMap<String, TreeEntry>,
    theirs: &BTreeMap<String, TreeEntry>,
    short: &str,
    deadline: &Deadline,
) -> Result<(TreeUpdates, Vec<(String, String)>), OpError> {
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let prefix = format!("{TEAM_DIR}/");
    let mut updates: TreeUpdates = BTreeMap::new();
    let mut kept = Vec::new();
    let paths: BTreeSet<&String> = base
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    for path in paths {
        if *path == index_path {
            continue;
        }
        let (b, o, t) = (base.get(path), ours.get(path), theirs.get(path));
        let chosen = match (o, t) {
            _ if o == t || o == b => t.cloned(),
            _ if t == b => o.cloned(),
            (None, Some(t)) => Some(t.clone()),
            (Some(o), None) => Some(o.clone()),
            (Some(o), Some(t)) => match super::super::text_merged(cli, path, b, o, t, deadline)? {
                Some(id) => Some(TreeEntry {
                    mode: t.mode.clone(),
                    id,
                }),
                None => {
                    let rel = path.strip_prefix(&prefix).unwrap_or(path);
                    let mut beside =
                        format!("{prefix}{}", crate::domain::conflict::copy_path(rel, short));
                    // Theirs already keeps ours beside the memory: one edit gives one copy.
                    if theirs.get(&beside) != Some(o) {
                        let taken = [base, ours, theirs]
                            .iter()
                            .any(|side| side.contains_key(&beside))
                            || updates.contains_key(&beside);
                        if taken {
                            beside = format!(
                                "{prefix}{}",
                                crate::domain::conflict::plain_copy_path(rel, short)
                            );
                        }
                        updates.insert(beside.clone(), Some(o.clone()));
                        kept.push((path.clone(), beside));
                    }
                    Some(t.clone())
                }
            },
            (None, None) => None,
        };
        if chosen.as_ref() != t {
            updates.insert(path.clone(), chosen);
        }
    }
    Ok((updates, kept))
}
