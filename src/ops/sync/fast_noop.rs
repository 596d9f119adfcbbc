//! The no-op sync decided from files alone, without libgit2 (issue 11). Starting libgit2
//! initialises OpenSSL, and over a local remote that start costs more than the git CLI's whole
//! fetch; a branch-mode sync with nothing to do needs none of it.
//!
//! Nothing to do means what [`super::branch`]'s own check means, read by hand
//! (`git/plain.rs`) against the record the last sync left (`git/noop_record.rs`): the remote
//! (a local path or `file://`, read from its files; a `git://` or `http://` one, from its ref
//! advertisement, `git/plain_remote.rs`) holds the memory branch at the tip this
//! clone's branch, its remote-tracking ref and the folder's materialised base stand on; every
//! file of the folder has the stat recorded when the folder held exactly that tip (a racy
//! entry, by its content); the folder is excluded; no ref move, transfer or offline note and
//! no lock of a sync that is gone is left; git knows who commits (so the report has no warning to give). Anything not fully
//! understood — a config `include`, `insteadOf`, another remote kind, a symbolic ref, a
//! reftable repository, layout from the environment, `--author`, `--no-pull`,
//! `--transport git-cli` — is no answer, and the full sync runs, as it did before.
//!
//! Reads only: the fast path writes nothing and takes no lock. A sync running meanwhile makes
//! a ref or a stat differ; the full sync then takes its turn at the lock.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use git2::Repository;

use crate::domain::scope::{INDEX_FILE, ScopeKind, TEAM_DIR};
use crate::domain::store;
use crate::git::memory_branch::{self, DEFAULT_BRANCH, MemoryBranch, PROPOSALS_PREFIX};
use crate::git::noop_record::{self, NoopRecord};
use crate::git::plain::{self, Config, PlainRepo};
use crate::git::plain_remote::{self, NetRemote};
use crate::git::remote::Transport;
use crate::git::status;
use crate::ops::Project;
use crate::ops::sync::{SyncMode, SyncOptions, SyncOutcome};

/// The environment variable that turns the fast no-op off (`0`): every sync then opens the
/// repository, as before. For comparing the two paths and for ruling the fast one out.
pub const SWITCH: &str = "TEAMMEM_SYNC_FAST";

/// The report of a branch-mode sync with nothing to do, when the files say so. Otherwise, or
/// when anything is not fully understood, the options the full sync then runs with: the time
/// this check took (a remote that did not answer, at worst) comes out of their budget.
pub fn try_noop(project: &Project, options: &SyncOptions) -> Result<SyncOutcome, SyncOptions> {
    let started = Instant::now();
    noop(project, options, started).ok_or_else(|| SyncOptions {
        timeout: options.timeout.saturating_sub(started.elapsed()),
        ..options.clone()
    })
}

fn noop(project: &Project, options: &SyncOptions, started: Instant) -> Option<SyncOutcome> {
    if !options.pull || options.transport != Transport::Builtin || options.author.is_some() {
        return None;
    }
    if std::env::var_os(SWITCH).is_some_and(|v| v == "0") {
        return None;
    }
    let paths = project.repo.as_ref()?;
    let repo = PlainRepo::of(paths)?;
    let user = plain::user_configs()?;
    let view = view(&repo, &user)?;
    if !identity_configured(&repo.config, &user) || names_signing_program(&repo.config) {
        return None;
    }
    let record = noop_record::read(&repo.git_dir)?;
    if record.branch != view.branch
        || record.remote != view.remote
        || record.url != view.url
        || record.materialised_ref != view.materialised_ref
    {
        return None;
    }
    let at = |refname: &str, id: &str| repo.read_ref(refname) == Some(Some(id.to_string()));
    if !at(&format!("refs/heads/{}", view.branch), &record.tip)
        || !at(&view.tracking_ref(), &record.tip)
        || !at(&view.materialised_ref, &record.materialised)
    {
        return None;
    }
    let common = &repo.common_dir;
    // The offline note too: a full sync clears it once the remote answers.
    if super::branch::left_behind(common)
        || common.join(crate::git::recovery::OFFLINE_NOTE).exists()
    {
        return None;
    }
    let exclude = std::fs::read_to_string(common.join("info/exclude")).unwrap_or_default();
    if !exclude.lines().any(super::branch::is_exclude_line) {
        return None;
    }
    let dir = project.check_scope_safe(ScopeKind::Team).ok()?;
    store::memory_paths(&dir).ok()?;
    if let Some((limits, _)) = &record.kept_out {
        if user_limits(&repo.config)? != *limits {
            return None;
        }
    }
    if !noop_record::folder_unchanged(&paths.workdir, &record, 40)? {
        return None;
    }
    // Last, as it may be the one network round trip.
    let remote = Remote::of(&view.url, &repo.config, &user)?;
    let remote_tip = remote.read_ref(&format!("refs/heads/{}", view.branch), options.timeout)?;
    if remote_tip.as_deref() != Some(record.tip.as_str()) {
        return None;
    }
    let mut outcome = SyncOutcome {
        mode: SyncMode::Branch,
        memory_branch: Some(view.branch),
        memory_tip: Some(record.tip),
        ..SyncOutcome::default()
    };
    if let Some((_, lines)) = &record.kept_out {
        super::branch::say_kept_out(lines, &mut outcome);
    }
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Some(outcome)
}

/// The user's limits on the folder (memories, bytes) as the repository's config gives them;
/// `None` when they are set in a way not read by hand (a user-level `teammem` setting already
/// rules the fast no-op out).
fn user_limits(config: &Config) -> Option<(u64, u64)> {
    let limit = |key: &str, default: u64| match config.values("teammem", None, key).pop() {
        None => Some(default),
        Some(value) => {
            let value = value?;
            // git's own suffixes and signs are left to libgit2.
            if !value.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            match value.parse::<u64>().ok()? {
                0 => Some(default),
                n if n <= i64::MAX as u64 => Some(n),
                _ => None,
            }
        }
    };
    let (memories, bytes) = super::branch::DEFAULT_LIMITS;
    Some((limit("maxmemories", memories)?, limit("maxbytes", bytes)?))
}

/// Leaves the record for the next sync's fast no-op, after a branch-mode sync that ended with
/// nothing left to do: the refs all on one tip, the folder holding exactly that tip (checked
/// against its tree between two stats of the folder, so an edit made meanwhile is never
/// recorded as clean). Otherwise, or when the record cannot be made, an earlier record is
/// removed, as it is when the remote is not one read by hand (the fast no-op never runs then). Never
/// fails the sync: the record only saves the next one time.
pub(crate) fn record(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    outcome: &SyncOutcome,
) {
    if build_record(project, repo, memory, outcome)
        .and_then(|record| noop_record::write(repo.path(), &record).ok())
        .is_none()
    {
        noop_record::remove(repo.path());
    }
}

fn build_record(
    project: &Project,
    repo: &Repository,
    memory: &MemoryBranch,
    outcome: &SyncOutcome,
) -> Option<NoopRecord> {
    // What the folder's limits keep out (and nothing else withheld) is a steady state too: the
    // record says it again.
    let note = memory_branch::materialised_note(repo).ok()?;
    let said: Vec<&[String]> = outcome.withheld.iter().map(|w| &w.reasons[..]).collect();
    let noted: Vec<&[String]> = note
        .iter()
        .flat_map(|n| n.lines.iter().map(std::slice::from_ref))
        .collect();
    let clean = outcome.skipped_reason.is_none()
        && outcome.quarantined.is_empty()
        && said == noted
        && !outcome.commit_refused;
    if !clean {
        return None;
    }
    let paths = project.repo.as_ref()?;
    let plain_repo = PlainRepo::of(paths)?;
    let user = plain::user_configs()?;
    let view = view(&plain_repo, &user)?;
    // Over any other remote the fast no-op never runs: no record to keep up.
    Remote::of(&view.url, &plain_repo.config, &user)?;
    if view.branch != memory.name
        || memory.remote.as_deref() != Some(view.remote.as_str())
        || view.materialised_ref != memory_branch::materialised_ref(repo)
    {
        return None;
    }
    let tip = repo.refname_to_id(&memory.local_ref()).ok()?;
    let up = memory.upstream()?;
    if up.tracking_ref != view.tracking_ref() || repo.refname_to_id(&up.tracking_ref).ok()? != tip {
        return None;
    }
    let base = memory_branch::materialised(repo).ok()??;
    let tip_tree = memory_branch::tree_of(repo, Some(tip)).ok()?;
    if base.source != Some(tip) || (base.tree != tip_tree.id()) != note.is_some() {
        return None;
    }
    // Over the limits the folder holds the materialised base, and its `MEMORY.md` is the one
    // regenerated from the folder's memories (the branch's lists what was kept out too).
    let tree = repo.find_tree(base.tree).ok()?;
    let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
    let materialised = repo.refname_to_id(&view.materialised_ref).ok()?;
    let first = noop_record::stamp_folder(&paths.workdir, TEAM_DIR)?;
    let changes = status::folder_changes(repo, Some(&tree), TEAM_DIR, false).ok()?;
    if changes
        .iter()
        .any(|c| note.is_none() || c.path != index_path)
    {
        return None;
    }
    let index_blob = match note {
        Some(_) => std::fs::read(paths.workdir.join(&index_path))
            .ok()
            .map(|bytes| noop_record::blob_id(&bytes)),
        None => None,
    };
    let written = noop_record::now();
    let second = noop_record::stamp_folder(&paths.workdir, TEAM_DIR)?;
    if first != second {
        return None;
    }
    let blobs = status::tree_files(repo, Some(&tree), TEAM_DIR).ok()?;
    let files = second
        .into_iter()
        .map(|s| {
            let blob = match &index_blob {
                Some(id) if s.path == index_path => Some(id.clone()),
                _ => blobs.get(&s.path).map(|f| f.id.to_string()),
            };
            (s, blob)
        })
        .collect();
    Some(NoopRecord {
        branch: view.branch,
        remote: view.remote,
        url: view.url,
        tip: tip.to_string(),
        materialised_ref: view.materialised_ref,
        materialised: materialised.to_string(),
        written,
        kept_out: note.map(|n| (n.limits, n.lines)),
        files,
    })
}

/// A remote whose memory-branch tip is read by hand: a local one from its files, a `git://`
/// or `http://` one from its ref advertisement (`git/plain_remote.rs`).
enum Remote {
    Local(PathBuf),
    Net(NetRemote),
}

impl Remote {
    /// `None` for a remote read only through libgit2 (or one behind a proxy).
    fn of(url: &str, repo: &Config, user: &[(Config, bool)]) -> Option<Remote> {
        if let Some(dir) = plain::local_remote(url) {
            return Some(Remote::Local(dir));
        }
        let configs: Vec<&Config> = user.iter().map(|(c, _)| c).chain([repo]).collect();
        plain_remote::net_remote(url, &configs).map(Remote::Net)
    }

    /// The commit `refname` points at there (`Some(None)`: no such ref); `None` when unknown.
    fn read_ref(&self, refname: &str, budget: Duration) -> Option<Option<String>> {
        match self {
            Remote::Local(dir) => plain::read_ref_in(dir, refname),
            Remote::Net(remote) => remote.read_ref(refname, budget),
        }
    }
}

/// Branch mode as the repository's files show it: the memory branch, the remote it is
/// shared through and that remote's URL, and this worktree's materialised-base ref.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PlainView {
    branch: String,
    remote: String,
    url: String,
    materialised_ref: String,
}

impl PlainView {
    fn tracking_ref(&self) -> String {
        format!("refs/remotes/{}/{}", self.remote, self.branch)
    }
}

/// [`memory_branch::mode`] and [`memory_branch::choose_remote`] read by hand. `None` for
/// current-branch mode, a repository with no remote, or anything not fully understood (the
/// memory branch's settings in a user-level config, a name not plainly valid, several URLs).
fn view(repo: &PlainRepo, user: &[(Config, bool)]) -> Option<PlainView> {
    let config = &repo.config;
    // A user-level `[branch "x"]` or `[remote "x"]` can change the mode or the remote; a
    // `[branch]` setting with no name (`autoSetupRebase`) cannot.
    if user.iter().any(|(c, _)| {
        c.entries.iter().any(|e| {
            e.section == "teammem"
                || (matches!(e.section.as_str(), "branch" | "remote") && e.subsection.is_some())
        })
    }) {
        return None;
    }
    let branch = match config.values("teammem", None, "branch").pop() {
        None => DEFAULT_BRANCH.to_string(),
        Some(Some(name)) if plainly_valid_name(name) => name.to_string(),
        // Switched off (current-branch mode), a bare key, or a name left to libgit2's rules.
        Some(_) => return None,
    };
    let has_remote = |name: &str| {
        config.entries.iter().any(|e| {
            e.section == "remote"
                && e.subsection.as_deref() == Some(name)
                && (e.key == "url" || e.key == "pushurl")
        })
    };
    let mut remote = None;
    if let Some(head) = repo.head_branch()? {
        let up = config.last("branch", Some(&head), "remote");
        let merge = config.last("branch", Some(&head), "merge");
        if let (Some(up), Some(_)) = (up, merge) {
            if up != "." && !up.is_empty() && has_remote(up) {
                remote = Some(up.to_string());
            }
        }
    }
    let remote = match remote {
        Some(remote) => remote,
        None => {
            let mut names: Vec<&str> = Vec::new();
            for e in &config.entries {
                if e.section == "remote" && (e.key == "url" || e.key == "pushurl") {
                    if let Some(name) = e.subsection.as_deref() {
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
            }
            match names.as_slice() {
                _ if names.contains(&"origin") => "origin".to_string(),
                [only] => (*only).to_string(),
                _ => return None,
            }
        }
    };
    let url = match config.values("remote", Some(&remote), "url").as_slice() {
        [Some(url)] => url.to_string(),
        _ => return None,
    };
    let materialised_ref = if repo.is_linked_worktree() {
        let name = repo.git_dir.file_name()?.to_str()?;
        let plain_name = !name.is_empty()
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !plain_name {
            return None;
        }
        format!("{}{name}", crate::git::recovery::MATERIALISED_REFS)
    } else {
        format!("{}main", crate::git::recovery::MATERIALISED_REFS)
    };
    Some(PlainView {
        branch,
        remote,
        url,
        materialised_ref,
    })
}

/// A branch name that is valid by any of git's rules and [`memory_branch::valid_name`]'s: plain
/// characters, no empty, dot-led or `.lock` component, not a proposal branch. A name this
/// refuses may still be valid; libgit2 then decides.
fn plainly_valid_name(name: &str) -> bool {
    let off = matches!(
        name.to_ascii_lowercase().as_str(),
        "false" | "off" | "no" | "0"
    );
    !off && !name.starts_with(PROPOSALS_PREFIX)
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
        && name.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && !part.ends_with('.')
                && !part.ends_with(".lock")
        })
        && !name.contains("..")
}

/// Whether git's config gives a valid `user.name` and `user.email` (so the report has no
/// identity warning): every value set anywhere is a usable one, and each is set in a file
/// libgit2 surely reads too (the repository's, `~/.gitconfig`, `~/.config/git/config`).
fn identity_configured(repo: &Config, user: &[(Config, bool)]) -> bool {
    let usable =
        |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty() && !v.contains(['<', '>', '\n']));
    ["name", "email"].iter().all(|key| {
        let files = user
            .iter()
            .map(|(c, sure)| (c, *sure))
            .chain([(repo, true)]);
        let mut surely_set = false;
        for (config, sure) in files {
            for value in config.values("user", None, key) {
                if !usable(value) {
                    return false;
                }
                surely_set |= sure;
            }
        }
        surely_set
    })
}

/// Whether the repository's own config names a signing program (the report would warn that
/// it is ignored).
fn names_signing_program(repo: &Config) -> bool {
    repo.entries
        .iter()
        .any(|e| e.section == "gpg" && e.key == "program")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        plain::parse_config(text.as_bytes()).unwrap()
    }

    #[test]
    fn only_plain_branch_names_are_decided_by_hand() {
        for ok in ["team-memory", "memory/team", "team_memory.v2"] {
            assert!(plainly_valid_name(ok), "{ok}");
        }
        for not in [
            "false",
            "Off",
            "team-memory-proposals/ada",
            "-x",
            "a..b",
            "a/.b",
            "a.lock",
            "a//b",
            "a b",
            "a~1",
            "",
        ] {
            assert!(!plainly_valid_name(not), "{not}");
        }
    }

    #[test]
    fn the_identity_counts_only_when_every_value_is_usable_and_one_is_surely_read() {
        let named = config("[user]\n\tname = Ada\n\temail = ada@example.com\n");
        let empty = Config::default();
        assert!(identity_configured(&named, &[]));
        assert!(identity_configured(&empty, &[(named.clone(), true)]));
        // Only in a file libgit2 might not read (the system config under GIT_CONFIG_NOSYSTEM).
        assert!(!identity_configured(&empty, &[(named.clone(), false)]));
        let blank = config("[user]\n\tname =\n");
        assert!(!identity_configured(&blank, &[(named, true)]));
        assert!(!identity_configured(&empty, &[]));
    }
}
