//! Writing the memory branch into the team folder through the git CLI, with the libgit2
//! path's rules (`ops/sync/branch/materialise.rs`): only the entries that differ from the
//! materialised base, never over an edit no commit holds, never what the gate withholds, never
//! an entry a checkout cannot write safely (the name check of `git/tree_entries.rs`, asked of
//! an in-memory libgit2 repository since libgit2 cannot open this one), within the folder's
//! limits on memories and bytes; then the materialised base is recorded, the same ref and
//! commit the libgit2 path keeps.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::domain::store;
use crate::git::GitError;
use crate::git::cli_repo::trees::LevelEntry;
use crate::git::cli_repo::{CliRepo, TreeEntry};
use crate::git::remote::Deadline;
use crate::git::tree_entries::{self, NameCheck};
use crate::ops::quarantine::{self, Quarantined};
use crate::ops::sync::{self, SyncOutcome};
use crate::ops::{OpError, Project};

/// The materialised base's message: the libgit2 path's (`git/memory_branch.rs`).
const MATERIALISED_MESSAGE: &str = "teammem: the team folder as materialised in this worktree\n";

/// The largest repository check configuration read for its limits (the libgit2 path's).
const CHECK_FILE_MAX_BYTES: u64 = 64 * 1024;

/// What this worktree's folder was last made to hold.
#[derive(Debug, Clone)]
pub(super) struct Materialised {
    /// The memory-branch commit it came from.
    pub(super) source: Option<String>,
    /// The root tree as written.
    pub(super) tree: String,
}

/// This worktree's materialised-base ref: `refs/teammem/materialised/<worktree>` (`main` for
/// the main work tree), as the libgit2 path names it.
pub(super) fn materialised_ref(cli: &CliRepo) -> String {
    let prefix = crate::git::recovery::MATERIALISED_REFS;
    let linked = cli.paths.git_dir.join("commondir").is_file();
    let id = if linked {
        cli.paths
            .git_dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| git2::Reference::is_valid_name(&format!("{prefix}{n}")))
            .unwrap_or("worktree")
            .to_string()
    } else {
        "main".to_string()
    };
    format!("{prefix}{id}")
}

/// Reads this worktree's materialised base; `None` when the folder was never materialised.
pub(super) fn materialised(
    cli: &CliRepo,
    deadline: &Deadline,
) -> Result<Option<Materialised>, GitError> {
    let Some(id) = cli.resolve(&materialised_ref(cli), deadline)? else {
        return Ok(None);
    };
    Ok(Some(Materialised {
        source: cli.resolve(&format!("{id}^1"), deadline)?,
        tree: cli.tree_of(&id, deadline)?,
    }))
}

/// One path that differs between the materialised folder and the new tip's.
struct Change {
    rel: String,
    old: Option<TreeEntry>,
    new: Option<TreeEntry>,
    refused: Option<&'static str>,
}

/// Writes the memory branch's `tip` into the folder against `base` (see the module doc);
/// `recorded` is this sync's record commit (a file holding what it holds may be replaced),
/// `held_back` what the record quarantined.
#[allow(clippy::too_many_arguments)]
pub(super) fn materialise(
    project: &Project,
    cli: &CliRepo,
    base: Option<&Materialised>,
    recorded: Option<&str>,
    held_back: HashSet<String>,
    tip: &str,
    deadline: &Deadline,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let workdir = project.git_root()?.to_path_buf();
    let team_dir = workdir.join(TEAM_DIR);
    let team_prefix = format!("{TEAM_DIR}/");
    let tip_tree = cli.tree_of(tip, deadline)?;
    let old_team = match base {
        Some(b) => cli.subtree_at(&b.tree, TEAM_DIR, deadline)?,
        None => None,
    };
    let new_team = cli.subtree_at(&tip_tree, TEAM_DIR, deadline)?;
    let names = tree_entries::name_check_repository()?;
    let mut check = NameCheck::new(&names)?;
    let mut changes = Vec::new();
    diff(
        cli,
        &mut check,
        old_team.as_deref(),
        new_team.as_deref(),
        "",
        deadline,
        &mut changes,
    )?;
    let limits = Limits::of(cli, &tip_tree, deadline)?;
    let mut room = match &old_team {
        Some(team) => {
            let files = files_below(cli, team, deadline)?;
            let ids: Vec<&str> = files.values().map(|e| e.id.as_str()).collect();
            (files.len(), sizes(cli, &ids, deadline)?.iter().sum::<u64>())
        }
        None => (0, 0),
    };
    let recorded_blobs: HashSet<String> = match recorded {
        Some(id) => cli
            .tree_entries(id, TEAM_DIR, deadline)?
            .into_values()
            .map(|e| e.id)
            .collect(),
        None => HashSet::new(),
    };
    // Sizes and what the folder holds, asked of git once for every change.
    let ids: Vec<String> = changes
        .iter()
        .flat_map(|c| c.old.iter().chain(c.new.iter()))
        .map(|e| e.id.clone())
        .collect();
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let size_of: HashMap<String, u64> = ids
        .iter()
        .cloned()
        .zip(sizes(cli, &id_refs, deadline)?)
        .collect();
    let size = |entry: &Option<TreeEntry>| {
        entry
            .as_ref()
            .map_or(0, |e| size_of.get(e.id.as_str()).copied().unwrap_or(0))
    };
    let on_disk_files: Vec<String> = changes
        .iter()
        .map(|c| format!("{team_prefix}{}", c.rel))
        .filter(|p| std::fs::symlink_metadata(workdir.join(p)).is_ok_and(|m| m.is_file()))
        .collect();
    let disk_ids: HashMap<String, String> = on_disk_files
        .iter()
        .cloned()
        .zip(cli.file_ids(&on_disk_files, deadline)?)
        .collect();
    let (policy, _) = crate::ops::guard::policy(project);
    let short = &tip[..7.min(tip.len())];
    let mut taken: BTreeMap<String, Option<TreeEntry>> = BTreeMap::new();
    let mut batch = store::Batch::new();
    let mut kept_out = false;
    let mut withheld = held_back;
    let mut past_limit: Vec<(&'static str, String)> = Vec::new();
    let mut unfinished = 0usize;
    for change in changes {
        let path = format!("{team_prefix}{}", change.rel);
        if change.rel == INDEX_FILE && change.refused.is_none() {
            // Never written: regenerated from the memories on disk.
            taken.insert(path, change.new);
            continue;
        }
        if unfinished > 0 || deadline.passed() {
            unfinished += 1;
            kept_out = true;
            continue;
        }
        let old_size = size(&change.old);
        if change.new.is_none() && change.old.is_some() {
            room = (room.0.saturating_sub(1), room.1.saturating_sub(old_size));
        }
        if change.new.is_some() {
            let files = room.0 + usize::from(change.old.is_none());
            let bytes = (room.1 + size(&change.new)).saturating_sub(old_size);
            let limit = if files > limits.memories {
                Some(TOO_MANY)
            } else if bytes > limits.bytes {
                Some(TOO_LARGE)
            } else {
                room = (files, bytes);
                None
            };
            if let Some(limit) = limit {
                withheld.insert(path.clone());
                past_limit.push((limit, path));
                kept_out = true;
                continue;
            }
        }
        let refusal = change.refused.or_else(|| {
            change
                .new
                .as_ref()
                .and_then(|_| crate::ops::sync::branch::disk_refusal(&team_dir, &change.rel))
        });
        if let Some(why) = refusal {
            withhold(&path, vec![why.to_string()], &mut withheld, outcome);
            kept_out = true;
            continue;
        }
        let incoming = match &change.new {
            None => None,
            Some(file) => {
                let bytes = match cli.blob(&file.id, deadline) {
                    Ok(bytes) => bytes,
                    // A timeout is not a crafted entry: it stops the sync.
                    Err(GitError::Cli { .. }) if cli.holds_non_blob(&file.id, deadline)? => {
                        let why = "the entry does not name a file git holds".to_string();
                        withhold(&path, vec![why], &mut withheld, outcome);
                        kept_out = true;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                let reasons = quarantine::check_team_bytes(&path, &change.rel, &bytes, &policy);
                if !reasons.is_empty() {
                    withhold(&path, reasons, &mut withheld, outcome);
                    kept_out = true;
                    continue;
                }
                Some(bytes)
            }
        };
        taken.insert(path.clone(), change.new.clone());
        let abs = workdir.join(&path);
        // Only a regular file has an id: a symlink or a folder there is no version of it.
        let on_disk = match std::fs::symlink_metadata(&abs) {
            Ok(meta) if meta.is_file() => match disk_ids.get(&path) {
                Some(id) => Some(id.clone()),
                // Appeared while the sync ran: read now.
                None => cli.file_ids(std::slice::from_ref(&path), deadline)?.pop(),
            },
            _ => None,
        };
        if on_disk.as_deref() == change.new.as_ref().map(|f| f.id.as_str()) {
            continue;
        }
        let untouched = on_disk.as_deref() == change.old.as_ref().map(|f| f.id.as_str())
            || on_disk.as_ref().is_some_and(|d| recorded_blobs.contains(d));
        match (&incoming, untouched, on_disk.is_some()) {
            (Some(bytes), true, _) | (Some(bytes), false, false) => {
                batch.write(&abs, bytes)?;
            }
            (Some(bytes), false, true) => {
                // An edit here that no commit holds yet: kept beside the teammate's version.
                let mut copy = crate::domain::conflict::copy_path(&path, short);
                if workdir.join(&copy).exists() {
                    copy = crate::domain::conflict::plain_copy_path(&path, short);
                }
                let copy_abs = workdir.join(&copy);
                std::fs::rename(&abs, &copy_abs).map_err(|e| OpError::io(&copy_abs, e))?;
                batch.write(&abs, bytes)?;
                outcome.warnings.push(format!(
                    "{path} changed here while a teammate changed it too: theirs is at that path, \
                     yours beside it as {copy}; keep one and delete the other"
                ));
            }
            (None, true, _) => remove_file(&abs)?,
            // Deleted by a teammate, changed here: the change stays and is recorded next.
            (None, false, _) => {}
        }
    }
    for limit in [TOO_MANY, TOO_LARGE] {
        let over: Vec<&String> = past_limit
            .iter()
            .filter(|(l, _)| *l == limit)
            .map(|(_, p)| p)
            .collect();
        let Some(first) = over.first() else { continue };
        let (key, value, lowered) = if limit == TOO_MANY {
            (
                "teammem.maxMemories",
                limits.memories as u64,
                limits.memories_lowered,
            )
        } else {
            ("teammem.maxBytes", limits.bytes, limits.bytes_lowered)
        };
        let fix = if lowered {
            format!(
                "the repository's {TEAM_DIR}/{} lowers it",
                crate::domain::check::CONFIG_FILE
            )
        } else {
            format!("raise it with `git config --global {key} N`")
        };
        let line = format!(
            "{limit}: {} memories past the memory branch's limit ({key} = {value}) are not \
             written, first {}; {fix}",
            over.len(),
            crate::domain::gate::redact_path(first)
        );
        outcome
            .withheld
            .push(Quarantined::new(TEAM_DIR, vec![line.clone()]));
        outcome.warnings.push(line);
    }
    if unfinished > 0 {
        outcome.warnings.push(format!(
            "the time budget ran out while writing the team folder: {unfinished} changes wait \
             for the next sync"
        ));
    }
    // Every file written reaches the disk before it takes its place and before the base says
    // the folder holds it.
    batch.finish()?;
    if team_dir.is_dir() {
        sync::regenerate_index(project, &team_dir, &withheld, &team_prefix, &policy)?;
    }
    let tree = if kept_out {
        let base_tree = base.map(|b| b.tree.as_str());
        cli.edit_tree(base_tree, &taken, deadline)?
    } else {
        tip_tree
    };
    set_materialised(cli, tip, &tree, deadline)
}

/// Records that the folder holds `tree`, materialised from `source`: a commit of teammem's
/// (parent `source`) under the worktree's ref.
pub(super) fn set_materialised(
    cli: &CliRepo,
    source: &str,
    tree: &str,
    deadline: &Deadline,
) -> Result<(), OpError> {
    let refname = materialised_ref(cli);
    if let Some(current) = materialised(cli, deadline)? {
        if current.source.as_deref() == Some(source) && current.tree == tree {
            return Ok(());
        }
    }
    let who = [
        ("GIT_AUTHOR_NAME", "teammem"),
        ("GIT_AUTHOR_EMAIL", "teammem@localhost"),
        ("GIT_COMMITTER_NAME", "teammem"),
        ("GIT_COMMITTER_EMAIL", "teammem@localhost"),
    ];
    let env: Vec<(&str, &std::ffi::OsStr)> = who
        .iter()
        .map(|(k, v)| (*k, std::ffi::OsStr::new(*v)))
        .collect();
    let commit = cli.run_with(
        &["commit-tree", "--no-gpg-sign", tree, "-p", source],
        &env,
        MATERIALISED_MESSAGE.as_bytes(),
        deadline,
        "recording the materialised base (git commit-tree)",
    )?;
    cli.run(
        &[
            "update-ref",
            "-m",
            "teammem: materialised",
            &refname,
            commit.trim(),
        ],
        deadline,
        "recording the materialised base (git update-ref)",
    )?;
    Ok(())
}

/// The changes from `old` to `new` (team folder trees), as `tree_entries::diff` gives them:
/// only folders whose ids differ are read; an incoming entry a checkout cannot write safely
/// comes with its reason and no new version.
fn diff(
    cli: &CliRepo,
    check: &mut NameCheck<'_>,
    old: Option<&str>,
    new: Option<&str>,
    prefix: &str,
    deadline: &Deadline,
    out: &mut Vec<Change>,
) -> Result<(), OpError> {
    let group = |entries: Vec<LevelEntry>| {
        let mut by_name: BTreeMap<String, Vec<LevelEntry>> = BTreeMap::new();
        for e in entries {
            by_name.entry(e.name.clone()).or_default().push(e);
        }
        by_name
    };
    let old_entries = match old {
        Some(t) => group(cli.level(t, deadline)?),
        None => BTreeMap::new(),
    };
    let new_entries = match new {
        Some(t) => group(cli.level(t, deadline)?),
        None => BTreeMap::new(),
    };
    let names: std::collections::BTreeSet<&String> =
        old_entries.keys().chain(new_entries.keys()).collect();
    for name in names {
        let o = old_entries
            .get(name)
            .filter(|v| v.len() == 1)
            .map(|v| &v[0]);
        let n = new_entries.get(name);
        if let (Some(o), Some([n])) = (o, n.map(Vec::as_slice)) {
            if o.id == n.id && o.mode == n.mode {
                continue;
            }
        }
        let rel = format!("{prefix}{name}");
        let refused = match n.map(Vec::as_slice) {
            None | Some([]) => None,
            Some([_, _, ..]) => Some("a duplicate entry: the tree names it more than once"),
            Some([e]) if prefix.is_empty() && name == INDEX_FILE && e.is_tree() => {
                Some("a folder where the generated MEMORY.md belongs")
            }
            Some([e]) => {
                let bytes = if name.contains('\u{FFFD}') {
                    // `git ls-tree` printed a name that is not UTF-8.
                    &[0xff_u8][..]
                } else {
                    name.as_bytes()
                };
                let mode = i32::from_str_radix(&e.mode, 8).unwrap_or(-1);
                check
                    .refusal(bytes)
                    .or_else(|| tree_entries::entry_refusal(bytes, &rel, mode))
            }
        };
        let mut old_files = BTreeMap::new();
        if let Some(o) = o {
            if o.is_tree() {
                old_files = files_below(cli, &o.id, deadline)?
                    .into_iter()
                    .map(|(k, v)| (format!("{rel}/{k}"), v))
                    .collect();
            } else {
                old_files.insert(rel.clone(), entry_of(o));
            }
        }
        if let Some(why) = refused {
            out.push(Change {
                rel: rel.clone(),
                old: old_files.remove(&rel),
                new: None,
                refused: Some(why),
            });
            continue;
        }
        let n = n.and_then(|v| v.first());
        match (o, n) {
            (Some(o), Some(n)) if o.is_tree() && n.is_tree() => {
                let sub = format!("{rel}/");
                diff(cli, check, Some(&o.id), Some(&n.id), &sub, deadline, out)?;
            }
            (_, Some(n)) if n.is_tree() => {
                out.extend(removed(old_files));
                diff(
                    cli,
                    check,
                    None,
                    Some(&n.id),
                    &format!("{rel}/"),
                    deadline,
                    out,
                )?;
            }
            (_, n) => {
                let here = old_files.remove(&rel);
                out.extend(removed(old_files));
                let new_file = n.map(entry_of);
                if here != new_file {
                    out.push(Change {
                        rel,
                        old: here,
                        new: new_file,
                        refused: None,
                    });
                }
            }
        }
    }
    Ok(())
}

fn removed(files: BTreeMap<String, TreeEntry>) -> impl Iterator<Item = Change> {
    files.into_iter().map(|(rel, old)| Change {
        rel,
        old: Some(old),
        new: None,
        refused: None,
    })
}

fn entry_of(e: &LevelEntry) -> TreeEntry {
    TreeEntry {
        mode: e.mode.clone(),
        id: e.id.clone(),
    }
}

/// Every file below the folder `tree`, by path relative to it.
fn files_below(
    cli: &CliRepo,
    tree: &str,
    deadline: &Deadline,
) -> Result<BTreeMap<String, TreeEntry>, GitError> {
    let out = cli.run(
        &["ls-tree", "-r", "-z", tree],
        deadline,
        "listing the team folder (git ls-tree)",
    )?;
    let mut files = BTreeMap::new();
    for record in out.split('\0').filter(|r| !r.is_empty()) {
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let fields: Vec<&str> = meta.split(' ').collect();
        if let [mode, _, id] = fields.as_slice() {
            files.insert(
                path.to_string(),
                TreeEntry {
                    mode: mode.to_string(),
                    id: id.to_string(),
                },
            );
        }
    }
    Ok(files)
}

/// The sizes of objects from their headers alone (0 for one git cannot read).
fn sizes(cli: &CliRepo, ids: &[&str], deadline: &Deadline) -> Result<Vec<u64>, GitError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let out = cli.run_with(
        &["cat-file", "--batch-check=%(objectsize)"],
        &[],
        input.as_bytes(),
        deadline,
        "reading the memory branch's sizes (git cat-file)",
    )?;
    let mut found: Vec<u64> = out.lines().map(|l| l.trim().parse().unwrap_or(0)).collect();
    found.resize(ids.len(), 0);
    Ok(found)
}

/// The `withheld` reason of a memory past the count limit.
const TOO_MANY: &str = "too-many";
/// The `withheld` reason of a memory past the size limit.
const TOO_LARGE: &str = "too-large";

/// How much of the memory branch the folder takes (the libgit2 path's limits: git config's
/// `teammem.maxMemories` / `teammem.maxBytes`, lowered only by the branch's check file).
struct Limits {
    memories: usize,
    bytes: u64,
    memories_lowered: bool,
    bytes_lowered: bool,
}

impl Limits {
    fn of(cli: &CliRepo, tip_tree: &str, deadline: &Deadline) -> Result<Limits, OpError> {
        let (default_memories, default_bytes) = sync::branch::DEFAULT_LIMITS;
        let get = |key: &str| -> Result<Option<u64>, GitError> {
            Ok(cli
                .config(key, deadline)?
                .and_then(|v| v.trim().parse::<i64>().ok())
                .filter(|v| *v > 0)
                .and_then(|v| u64::try_from(v).ok()))
        };
        let mut limits = Limits {
            memories: usize::try_from(get("teammem.maxMemories")?.unwrap_or(default_memories))
                .unwrap_or(usize::MAX),
            bytes: get("teammem.maxBytes")?.unwrap_or(default_bytes),
            memories_lowered: false,
            bytes_lowered: false,
        };
        let path = format!("{TEAM_DIR}/{}", crate::domain::check::CONFIG_FILE);
        let found = cli
            .tree_entries(tip_tree, TEAM_DIR, deadline)?
            .remove(&path);
        let Some(entry) = found.filter(|e| e.mode == "100644" || e.mode == "100755") else {
            return Ok(limits);
        };
        if sizes(cli, &[entry.id.as_str()], deadline)?[0] > CHECK_FILE_MAX_BYTES {
            return Ok(limits);
        }
        let bytes = cli.blob(&entry.id, deadline)?;
        let config = crate::domain::check_config::read_lenient(&String::from_utf8_lossy(&bytes)).0;
        if let Some(max) = config.max_memories.filter(|m| *m < limits.memories) {
            limits.memories = max;
            limits.memories_lowered = true;
        }
        if let Some(max) = config.max_total_bytes.filter(|m| *m < limits.bytes) {
            limits.bytes = max;
            limits.bytes_lowered = true;
        }
        Ok(limits)
    }
}

/// Leaves a teammate's file out of the work tree and reports it.
fn withhold(
    path: &str,
    reasons: Vec<String>,
    withheld: &mut HashSet<String>,
    outcome: &mut SyncOutcome,
) {
    withheld.insert(path.to_string());
    outcome.withheld.push(Quarantined::new(path, reasons));
}

/// Removes a file or symlink; a folder in its place is left alone.
fn remove_file(abs: &Path) -> Result<(), OpError> {
    if std::fs::symlink_metadata(abs).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    match std::fs::remove_file(abs) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(OpError::io(abs, e)),
    }
}
