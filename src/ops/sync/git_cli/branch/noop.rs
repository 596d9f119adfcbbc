//! The no-op of branch mode through git, decided with two or three git runs where a full sync
//! takes some thirty: what the libgit2 fast no-op (`ops/sync/fast_noop.rs`) decides from the
//! repository's files, for a repository whose refs only git reads (reftable) or whose objects
//! libgit2 cannot (SHA-256).
//!
//! Nothing to do means: the configuration (`git config --list`, every level, includes and the
//! environment as git reads them) gives the memory branch, remote and URL the last clean sync
//! recorded (`git/noop_record.rs`), and gives them whatever branch HEAD is on; the local
//! memory branch, its remote-tracking ref and this worktree's materialised base stand where
//! they stood (`git for-each-ref`); every file of the folder has its recorded stat (a racy
//! one, its recorded content); the folder is excluded; no note or lock of an interrupted sync
//! is left; and the remote holds the same tip (read from a local remote's files, else `git
//! ls-remote`). Anything else — `insteadOf` rewriting, several URLs, legacy `.git/remotes`, a
//! branch-specific remote HEAD could choose — is no answer, and the full sync runs.
//!
//! Reads only, no lock: a sync running meanwhile makes a ref or a stat differ.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use super::CliMemory;
use super::materialise::materialised_ref;
use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store;
use crate::git::cli_repo::CliRepo;
use crate::git::memory_branch::{self, DEFAULT_BRANCH};
use crate::git::noop_record::{self, NoopRecord};
use crate::git::remote::{Deadline, NetworkOptions};
use crate::ops::Project;
use crate::ops::sync::{SyncMode, SyncOptions, SyncOutcome};

/// Branch mode as git's configuration gives it, the same whatever branch HEAD is on.
#[derive(Debug, PartialEq, Eq)]
struct View {
    branch: String,
    remote: String,
    url: String,
}

impl View {
    fn local_ref(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }

    fn tracking_ref(&self) -> String {
        format!("refs/remotes/{}/{}", self.remote, self.branch)
    }
}

/// The report of a sync with nothing to do, when git's answers say so (see the module doc);
/// `None` when the full sync must run.
pub(crate) fn nothing_to_do(
    project: &Project,
    cli: &CliRepo,
    options: &SyncOptions,
    deadline: Instant,
) -> Option<SyncOutcome> {
    let started = Instant::now();
    if !options.pull || options.author.is_some() {
        return None;
    }
    if std::env::var_os(crate::ops::sync::fast_noop::SWITCH).is_some_and(|v| v == "0") {
        return None;
    }
    let record = noop_record::read(&cli.paths.git_dir)?;
    if record.kept_out.is_some() {
        return None;
    }
    let budget = Deadline::at(deadline);
    let common = &cli.common_dir;
    if crate::ops::sync::branch::left_behind(common)
        || [
            crate::git::recovery::OFFLINE_NOTE,
            crate::git::recovery::GIT_STEP_NOTE,
            crate::git::recovery::CHECKOUT_NOTE,
        ]
        .iter()
        .any(|note| common.join(note).exists() || cli.paths.git_dir.join(note).exists())
    {
        return None;
    }
    let exclude = std::fs::read_to_string(common.join("info/exclude")).unwrap_or_default();
    if !exclude
        .lines()
        .any(crate::ops::sync::branch::is_exclude_line)
    {
        return None;
    }
    let dir = project.check_scope_safe(ScopeKind::Team).ok()?;
    store::memory_paths(&dir).ok()?;
    if !noop_record::folder_unchanged(&cli.paths.workdir, &record, cli.hex_len)? {
        return None;
    }
    let view = view(cli, &budget)?;
    let materialised = materialised_ref(cli);
    if record.branch != view.branch
        || record.remote != view.remote
        || record.url != view.url
        || record.materialised_ref != materialised
    {
        return None;
    }
    let refs = refs(
        cli,
        &[&view.local_ref(), &view.tracking_ref(), &materialised],
        &budget,
    )?;
    if refs.get(&view.local_ref()) != Some(&record.tip)
        || refs.get(&view.tracking_ref()) != Some(&record.tip)
        || refs.get(&materialised) != Some(&record.materialised)
    {
        return None;
    }
    // Last, as it may be the one network round trip.
    let remote_tip = match crate::git::plain::local_remote(&view.url)
        .and_then(|dir| crate::git::plain::read_ref_in(&dir, &view.local_ref()))
    {
        Some(tip) => tip,
        None => {
            let mut net = NetworkOptions::from_process(budget.remaining(), options.transport);
            net.deadline = budget;
            cli.advertised_tip(&view.url, &view.local_ref(), &net)
                .ok()?
        }
    };
    if remote_tip.as_deref() != Some(record.tip.as_str()) {
        return None;
    }
    Some(SyncOutcome {
        mode: SyncMode::Branch,
        memory_branch: Some(view.branch),
        memory_tip: Some(record.tip),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        ..SyncOutcome::default()
    })
}

/// After a full sync of `memory`: leaves the record the next sync's [`nothing_to_do`] reads
/// when this one ended clean with the folder holding exactly the memory branch's tip (checked
/// between two stats of the folder, so an edit made meanwhile is never recorded as clean);
/// otherwise removes an earlier record. Never fails the sync.
pub(crate) fn record(
    project: &Project,
    cli: &CliRepo,
    memory: &CliMemory,
    outcome: &SyncOutcome,
    deadline: Instant,
) {
    let made = build_record(project, cli, memory, outcome, &Deadline::at(deadline));
    if made
        .and_then(|record| noop_record::write(&cli.paths.git_dir, &record).ok())
        .is_none()
    {
        noop_record::remove(&cli.paths.git_dir);
    }
}

fn build_record(
    project: &Project,
    cli: &CliRepo,
    memory: &CliMemory,
    outcome: &SyncOutcome,
    budget: &Deadline,
) -> Option<NoopRecord> {
    let clean = outcome.skipped_reason.is_none()
        && outcome.quarantined.is_empty()
        && outcome.withheld.is_empty()
        && outcome.warnings.is_empty()
        && !outcome.commit_refused;
    if !clean || budget.passed() {
        return None;
    }
    let view = view(cli, budget)?;
    if view.branch != memory.name || memory.remote.as_deref() != Some(view.remote.as_str()) {
        return None;
    }
    let materialised = materialised_ref(cli);
    let refs = refs(
        cli,
        &[&view.local_ref(), &view.tracking_ref(), &materialised],
        budget,
    )?;
    let tip = refs.get(&view.local_ref())?;
    let base = refs.get(&materialised)?;
    if refs.get(&view.tracking_ref()) != Some(tip) {
        return None;
    }
    // The folder was made from the tip, whole: the base's parent is the tip, its tree the tip's.
    let said = cli
        .run(
            &[
                "rev-parse",
                "--verify",
                "--end-of-options",
                &format!("{base}^1"),
            ],
            budget,
            "reading the materialised base (git rev-parse)",
        )
        .ok()?;
    if said.trim() != tip || cli.tree_of(base, budget).ok()? != cli.tree_of(tip, budget).ok()? {
        return None;
    }
    let workdir = project.git_root().ok()?.to_path_buf();
    let first = noop_record::stamp_folder(&workdir, TEAM_DIR)?;
    // `MEMORY.md` is left out: the folder's is the one regenerated from its memories (a
    // teammate's plain `git push` does not update the branch's), and a full sync neither
    // records it nor writes it again while the memories stay as they are.
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let mut on_branch = cli.tree_entries(tip, TEAM_DIR, budget).ok()?;
    on_branch.remove(&index_path);
    let paths: Vec<String> = first.iter().map(|s| s.path.clone()).collect();
    let memories: BTreeSet<&String> = paths.iter().filter(|p| **p != index_path).collect();
    if memories != on_branch.keys().collect::<BTreeSet<_>>() {
        return None;
    }
    let executable_kept = !cli.config("core.filemode", budget).ok()?.is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "false" | "no" | "off" | "0"
        )
    });
    for stamp in &first {
        if stamp.mode & 0o170000 != 0o100000 {
            return None;
        }
        let Some(entry) = on_branch.get(&stamp.path) else {
            continue;
        };
        let expected = if stamp.mode & 0o100 != 0 {
            "100755"
        } else {
            "100644"
        };
        if executable_kept && entry.mode != expected {
            return None;
        }
    }
    let ids = cli.file_ids(&paths, budget).ok()?;
    if paths
        .iter()
        .zip(&ids)
        .any(|(path, id)| *path != index_path && on_branch.get(path).map(|e| &e.id) != Some(id))
    {
        return None;
    }
    let written = noop_record::now();
    let second = noop_record::stamp_folder(&workdir, TEAM_DIR)?;
    if first != second {
        return None;
    }
    Some(NoopRecord {
        branch: view.branch,
        remote: view.remote,
        url: view.url,
        tip: tip.clone(),
        materialised_ref: materialised,
        materialised: base.clone(),
        written,
        kept_out: None,
        files: second.into_iter().zip(ids.into_iter().map(Some)).collect(),
    })
}

/// [`super::memory_branch`] and [`super::choose_remote`] over one `git config --list`: `None`
/// for current-branch mode, or when the answer could depend on HEAD's branch or on rules not
/// read here (`insteadOf`, several URLs, remotes in `.git/remotes` or `.git/branches`).
fn view(cli: &CliRepo, budget: &Deadline) -> Option<View> {
    let listed = cli
        .run(
            &["config", "--list", "-z"],
            budget,
            "reading the configuration (git config)",
        )
        .ok()?;
    for legacy in ["remotes", "branches"] {
        let dir = cli.common_dir.join(legacy);
        if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
            return None;
        }
    }
    let mut recorded = None;
    let mut remotes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut branch_remotes = Vec::new();
    for entry in listed.split('\0').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        let lower = key.to_ascii_lowercase();
        if lower == memory_branch::CONFIG_KEY.to_ascii_lowercase() {
            recorded = Some(value);
        } else if lower.starts_with("url.") {
            return None;
        } else if let Some(rest) = key.strip_prefix("remote.") {
            // `remote.pushDefault` and the like name no remote.
            if let Some((name, setting)) = rest.rsplit_once('.') {
                let urls = remotes.entry(name).or_default();
                if setting.eq_ignore_ascii_case("url") {
                    urls.push(value);
                }
            }
        } else if let Some(rest) = key.strip_prefix("branch.") {
            if rest.to_ascii_lowercase().ends_with(".remote") {
                branch_remotes.push(value);
            }
        }
    }
    if recorded.is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "false" | "off" | "no" | "0"
        )
    }) {
        return None;
    }
    let remote = if remotes.contains_key("origin") {
        "origin"
    } else if remotes.len() == 1 {
        *remotes.keys().next()?
    } else {
        return None;
    };
    // HEAD's `branch.<name>.remote` wins when it names a remote: only one naming this remote
    // (or none) leaves the choice the same on every branch.
    if branch_remotes
        .iter()
        .any(|r| *r != remote && remotes.contains_key(r))
    {
        return None;
    }
    let [url] = remotes.get(remote)?.as_slice() else {
        return None;
    };
    let branch = recorded
        .filter(|n| memory_branch::valid_name(n))
        .unwrap_or(DEFAULT_BRANCH);
    Some(View {
        branch: branch.to_string(),
        remote: remote.to_string(),
        url: (*url).to_string(),
    })
}

/// The ids of those of `names` that exist, by name, in one `git for-each-ref`.
fn refs(cli: &CliRepo, names: &[&str], budget: &Deadline) -> Option<BTreeMap<String, String>> {
    let mut args = vec!["for-each-ref", "--format=%(objectname) %(refname)"];
    args.extend_from_slice(names);
    let listed = cli
        .run(
            &args,
            budget,
            "reading the memory branch's refs (git for-each-ref)",
        )
        .ok()?;
    Some(
        listed
            .lines()
            .filter_map(|line| {
                let (id, name) = line.split_once(' ')?;
                names
                    .contains(&name)
                    .then(|| (name.to_string(), id.to_string()))
            })
            .collect(),
    )
}
