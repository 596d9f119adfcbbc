//! The memory branch: the team memory on a branch of its own (`refs/heads/team-memory` by
//! default), never checked out. Its tree holds the team folder at `.qwen/team-memory/`, as on
//! any code branch, so `review`, `check --range` and baselines read its ranges unchanged.
//!
//! The git operations of branch mode, all on objects and refs (never HEAD, the index or the
//! work tree): which branch and remote, commits built from trees, bringing two tips together
//! memory by memory (this clone's unpublished record commits re-created as one record commit
//! on top of the other tip, so the branch's history stays a line; a merge commit only when a
//! commit to keep is not teammem's own or is already on a proposal branch, which only ever
//! moves forward), and the record of what the work tree's folder was last made to hold (the
//! materialised base), per worktree.

use std::path::Path;

use git2::{Commit, ErrorCode, ObjectType, Oid, Repository, Signature, Tree};

use super::GitError;
use super::commit::{self, CommitSettings, SYNC_TRAILER, TeamUpdate};
use super::history;
use super::recovery::ref_move::RefIntent;
use super::remote::Deadline;
use super::replay::{self, KeptConflict, MemoryIndexGate};
use super::sign;
use super::upstream::{self, Upstream, UpstreamLookup};
use crate::domain::scope::TEAM_DIR;

/// The memory branch's default name.
pub const DEFAULT_BRANCH: &str = "team-memory";

/// The repository config key (`.git/config`) naming the memory branch: branch mode is on.
pub const CONFIG_KEY: &str = "teammem.branch";

/// Where proposal branches live on the remote: `team-memory-proposals/<user>`.
pub const PROPOSALS_PREFIX: &str = "team-memory-proposals/";

/// How many numbered proposal branch names a sync tries for one user.
const PROPOSAL_NAMES: usize = 9;

/// How many names [`proposal_names`] gives.
pub const PROPOSAL_TRIES: usize = PROPOSAL_NAMES + 1;

/// How many hex digits of the tip name the last proposal branch a sync tries.
const TIP_SUFFIX: usize = 12;

/// The proposal branch names a sync tries for `user`, in order: `<user>`, then `<user>-2` …
/// `<user>-9`, then `<user>-<first 12 hex digits of tip>` (a name nobody can take before the
/// commit exists, so someone who took the nine names in advance cannot stop a proposal). One
/// holding commits the clone lacks, or one the remote refuses to create, is passed over. Each
/// as the part after [`PROPOSALS_PREFIX`] and as the whole branch name.
pub fn proposal_names<'a>(
    user: &'a str,
    tip: &'a str,
) -> impl Iterator<Item = (String, String)> + 'a {
    let numbered = (1..=PROPOSAL_NAMES).map(move |n| {
        if n == 1 {
            user.to_string()
        } else {
            format!("{user}-{n}")
        }
    });
    let by_tip = std::iter::once(format!("{user}-{}", &tip[..tip.len().min(TIP_SUFFIX)]));
    numbered.chain(by_tip).map(|branch| {
        let name = format!("{PROPOSALS_PREFIX}{branch}");
        (branch, name)
    })
}

/// The proposal branch names a sync passed over, each as a clause for the report, and when to
/// stop trying numbered names: after two the remote refused (a server refusing every proposal
/// costs three round trips, not ten), only the name made from the tip is still tried.
#[derive(Debug, Default)]
pub struct PassedOver {
    foreign: Vec<String>,
    refused: Vec<String>,
}

impl PassedOver {
    /// `name` holds commits this clone lacks.
    pub fn foreign(&mut self, name: &str) {
        self.foreign.push(name.to_string());
    }

    /// The remote refused to create or move `name` (`message`, its answer).
    pub fn refused(&mut self, name: &str, message: &str) {
        self.refused.push(format!(
            "the remote refused to create or move {name} ({}), so it was not used",
            message.trim()
        ));
    }

    /// Whether the name at `index` of `count` is not tried: after two refusals, all but the
    /// last (made from the tip).
    pub fn skips(&self, index: usize, count: usize) -> bool {
        self.refused.len() >= 2 && index + 1 < count
    }

    /// One clause per reason a name was passed over, for the report.
    pub fn clauses(&self) -> Vec<String> {
        let mut clauses = Vec::new();
        match self.foreign.as_slice() {
            [] => {}
            [one] => clauses.push(format!(
                "{one} holds commits this clone did not make, so it was not used"
            )),
            many => clauses.push(format!(
                "{} hold commits this clone did not make, so they were not used",
                many.join(", ")
            )),
        }
        clauses.extend(self.refused.iter().cloned());
        clauses
    }
}

/// The owners a proposal branch named `branch` (the part after [`PROPOSALS_PREFIX`]) may
/// belong to: `branch` itself, and the user it is a fresh name of (`<user>-2` … `<user>-9`,
/// `<user>-<12 hex digits>`; see [`proposal_names`]).
pub fn proposal_owners(branch: &str) -> Vec<&str> {
    let mut owners = vec![branch];
    if let Some((user, suffix)) = branch.rsplit_once('-') {
        let numbered = suffix
            .parse::<usize>()
            .is_ok_and(|n| (2..=PROPOSAL_NAMES).contains(&n))
            && !suffix.starts_with('0');
        let by_tip = suffix.len() == TIP_SUFFIX && suffix.bytes().all(|b| b.is_ascii_hexdigit());
        if (numbered || by_tip) && !user.is_empty() {
            owners.push(user);
        }
    }
    owners
}

/// The subject of a commit that records the folder's changes on the memory branch.
pub const RECORD_SUBJECT: &str = "chore(memory): record team memory";

/// The subject of a commit that merges two tips of the memory branch.
pub const MERGE_SUBJECT: &str = "chore(memory): merge team memory";

use super::recovery::MATERIALISED_REFS;

/// The memory branch a sync works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryBranch {
    /// The branch name (`team-memory`).
    pub name: String,
    /// The remote it is shared through, if the repository has one.
    pub remote: Option<String>,
}

impl MemoryBranch {
    /// `refs/heads/<name>`.
    pub fn local_ref(&self) -> String {
        format!("refs/heads/{}", self.name)
    }

    /// The fetch and push target: the remote's branch of the same name, tracked at
    /// `refs/remotes/<remote>/<name>`.
    pub fn upstream(&self) -> Option<Upstream> {
        self.target(&self.name)
    }

    /// The proposal branch of `user` on the remote.
    pub fn proposal(&self, user: &str) -> Option<Upstream> {
        self.target(&format!("{PROPOSALS_PREFIX}{user}"))
    }

    fn target(&self, remote_branch: &str) -> Option<Upstream> {
        let remote = self.remote.as_ref()?;
        Some(Upstream {
            local_ref: self.local_ref(),
            remote: remote.clone(),
            merge_ref: format!("refs/heads/{remote_branch}"),
            tracking_ref: format!("refs/remotes/{remote}/{remote_branch}"),
        })
    }
}

/// Branch mode, if this repository uses it: the branch named by `teammem.branch`, or — when
/// nothing is recorded — `team-memory` if the remote is known to have it (its remote-tracking
/// ref exists, as after a clone or a fetch), so a teammate's clone needs no setup.
pub fn mode(repo: &Repository) -> Result<Option<MemoryBranch>, GitError> {
    if switched_off(repo) {
        return Ok(None);
    }
    let remote = choose_remote(repo)?;
    if let Some(name) = configured(repo) {
        return Ok(Some(MemoryBranch { name, remote }));
    }
    let Some(remote) = remote else {
        return Ok(None);
    };
    let tracking = format!("refs/remotes/{remote}/{DEFAULT_BRANCH}");
    if repo.refname_to_id(&tracking).is_ok() {
        return Ok(Some(MemoryBranch {
            name: DEFAULT_BRANCH.to_string(),
            remote: Some(remote),
        }));
    }
    Ok(None)
}

/// Nothing decides the mode yet: no memory branch recorded or switched off, no
/// remote-tracking ref of it, no team folder tracked on the current branch (an existing
/// current-branch setup), but a remote that may have a memory branch. Its name, if so: only
/// the remote's refs can tell.
pub fn undecided(repo: &Repository) -> Result<Option<String>, GitError> {
    if switched_off(repo) || configured(repo).is_some() || tracked_folder(repo).is_some() {
        return Ok(None);
    }
    if mode(repo)?.is_some() {
        return Ok(None);
    }
    choose_remote(repo)
}

/// Whether `remote` has the default memory branch, asked with `git ls-remote` under the git
/// CLI transport's rules: for an [`undecided`] clone whose listing through libgit2 gave no
/// answer (libgit2 cannot read every remote git can, a local reftable one among them).
pub fn remote_has_default_branch(
    repo: &Repository,
    remote: &str,
    options: &super::remote::NetworkOptions,
) -> Result<bool, super::remote::NetFailure> {
    let refname = format!("refs/heads/{DEFAULT_BRANCH}");
    let what = format!("git ls-remote {remote} {refname}");
    let mut cmd = super::remote::git_cli::git_cli_network_command(repo, options)?;
    cmd.args([
        "ls-remote",
        "--upload-pack=git-upload-pack",
        "--",
        remote,
        &refname,
    ]);
    let run = super::remote::git_cli::run_git(cmd, b"", &options.deadline, &what)?;
    if !run.success {
        return Err(super::remote::NetFailure::failed(format!(
            "{what}: {}",
            run.stderr.trim()
        )));
    }
    Ok(run
        .stdout
        .lines()
        .any(|line| line.split('\t').nth(1) == Some(refname.as_str())))
}

/// Branch mode found in the remote's ref advertisement: nothing recorded, not switched off,
/// and the remote advertises `refs/heads/team-memory` though this clone has no remote-tracking
/// ref for it (a clone made before the branch existed, or with `--single-branch`).
pub fn advertised(
    repo: &Repository,
    advertisement: &super::remote::Advertisement,
) -> Option<MemoryBranch> {
    if switched_off(repo) || configured(repo).is_some() {
        return None;
    }
    let head = format!("refs/heads/{DEFAULT_BRANCH}");
    advertisement
        .refs
        .contains_key(&head)
        .then(|| MemoryBranch {
            name: DEFAULT_BRANCH.to_string(),
            remote: Some(advertisement.remote.clone()),
        })
}

/// A cheap look at the git folder (no repository opened): does branch mode seem to be in use —
/// `teammem.branch` in the config, or a remote-tracking `team-memory` ref? [`mode`] decides.
pub fn likely_in_use(git_dir: &Path) -> bool {
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(rel) => git_dir.join(rel.trim()),
        Err(_) => git_dir.to_path_buf(),
    };
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    if config.contains("[teammem]") && config.to_lowercase().contains("branch") {
        return true;
    }
    let suffix = format!("/{DEFAULT_BRANCH}");
    let packed = std::fs::read_to_string(common.join("packed-refs")).unwrap_or_default();
    if packed
        .lines()
        .any(|l| l.contains(" refs/remotes/") && l.ends_with(&suffix))
    {
        return true;
    }
    std::fs::read_dir(common.join("refs/remotes"))
        .map(|remotes| {
            remotes
                .flatten()
                .any(|r| r.path().join(DEFAULT_BRANCH).is_file())
        })
        .unwrap_or(false)
}

/// The memory branch named in the repository's config, if it is a valid branch name.
pub fn configured(repo: &Repository) -> Option<String> {
    let name = repo.config().ok()?.get_string(CONFIG_KEY).ok()?;
    valid_name(&name).then_some(name)
}

/// Whether the config switches branch mode off for this repository (`teammem.branch = false`):
/// current-branch mode, even when the remote has a memory branch.
pub fn switched_off(repo: &Repository) -> bool {
    repo.config()
        .ok()
        .and_then(|c| c.get_string(CONFIG_KEY).ok())
        .is_some_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "off" | "no" | "0"
            )
        })
}

/// Whether `name` can be a memory branch: a valid branch name, not a proposal branch.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !matches!(
            name.to_ascii_lowercase().as_str(),
            "false" | "off" | "no" | "0"
        )
        && !name.starts_with(PROPOSALS_PREFIX)
        && git2::Reference::is_valid_name(&format!("refs/heads/{name}"))
}

/// The remote the memory branch is shared through: the current branch's upstream remote,
/// else `origin`, else the only remote.
pub fn choose_remote(repo: &Repository) -> Result<Option<String>, GitError> {
    if let UpstreamLookup::Found(up) = upstream::resolve(repo)? {
        if repo.find_remote(&up.remote).is_ok() {
            return Ok(Some(up.remote));
        }
    }
    let names = repo
        .remotes()
        .map_err(|e| GitError::git("listing the remotes", e))?;
    let mut found: Vec<String> = Vec::new();
    for name in names.iter().flatten().flatten() {
        found.push(String::from(name));
    }
    let names = found;
    if names.iter().any(|n| n == "origin") {
        return Ok(Some("origin".into()));
    }
    Ok(match names.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    })
}

/// The names of the repository's remotes.
pub fn remote_names(repo: &Repository) -> Vec<String> {
    repo.remotes()
        .map(|names| {
            names
                .iter()
                .flatten()
                .flatten()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Why no remote was chosen for `branch` (see [`choose_remote`]), and the fix: there is none,
/// or there are several (`remotes`), none is `origin` and the current branch has no upstream.
pub fn no_remote_line(branch: &str, remotes: &[String]) -> String {
    if remotes.is_empty() {
        return format!(
            "the repository has no remote, so {branch} is kept here only; add one with `git \
             remote add origin <url>`"
        );
    }
    format!(
        "the repository has {} remotes ({}), none is `origin` and the current branch has no \
         upstream, so sync cannot tell which one to share {branch} through and keeps it here \
         only; set the current branch's upstream (`git branch --set-upstream-to \
         <remote>/<branch>`) or name one `origin` (`git remote rename <remote> origin`)",
        remotes.len(),
        remotes.join(", ")
    )
}

/// What the work tree's team folder was last made to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Materialised {
    /// The memory-branch commit it was materialised from.
    pub source: Option<Oid>,
    /// The folder as written (the source's tree, less what the gate withheld).
    pub tree: Oid,
}

/// This worktree's materialised-base ref: `refs/teammem/materialised/<worktree>`.
pub fn materialised_ref(repo: &Repository) -> String {
    let id = if repo.is_worktree() {
        repo.path()
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| git2::Reference::is_valid_name(&format!("{MATERIALISED_REFS}{n}")))
            .unwrap_or("worktree")
            .to_string()
    } else {
        "main".to_string()
    };
    format!("{MATERIALISED_REFS}{id}")
}

/// Reads this worktree's materialised base; `None` when the folder was never materialised.
pub fn materialised(repo: &Repository) -> Result<Option<Materialised>, GitError> {
    let Ok(id) = repo.refname_to_id(&materialised_ref(repo)) else {
        return Ok(None);
    };
    let commit = repo
        .find_commit(id)
        .map_err(|e| GitError::git("reading the materialised base", e))?;
    Ok(Some(Materialised {
        source: commit.parent_id(0).ok(),
        tree: commit.tree_id(),
    }))
}

/// What the folder's limits on memories and bytes kept out of a materialisation that wrote
/// everything else: the lines that named them, and the user's limits (memories, bytes) they
/// were drawn under. Kept in the materialised base's message, so a sync with nothing to do
/// says them again without going over the kept-out entries: a flood costs once, not on every
/// sync.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LimitNote {
    /// The user's limits (git config) the lines were drawn under.
    pub limits: (u64, u64),
    /// One line per limit passed (`too-many: …`, `too-large: …`).
    pub lines: Vec<String>,
}

const MATERIALISED_MESSAGE: &str = "teammem: the team folder as materialised in this worktree\n";
const NOTE_LIMITS: &str = "Kept-out-limits: ";
const NOTE_LINE: &str = "Kept-out: ";

impl LimitNote {
    fn message(&self) -> String {
        let mut message = format!(
            "{MATERIALISED_MESSAGE}\n{NOTE_LIMITS}{} {}\n",
            self.limits.0, self.limits.1
        );
        for line in &self.lines {
            message.push_str(&format!("{NOTE_LINE}{line}\n"));
        }
        message
    }

    fn of_message(message: &str) -> Option<LimitNote> {
        let mut note = LimitNote::default();
        let mut limits = None;
        for line in message.lines() {
            if let Some(rest) = line.strip_prefix(NOTE_LIMITS) {
                let (files, bytes) = rest.split_once(' ')?;
                limits = Some((files.parse().ok()?, bytes.parse().ok()?));
            } else if let Some(rest) = line.strip_prefix(NOTE_LINE) {
                note.lines.push(rest.to_string());
            }
        }
        note.limits = limits?;
        (!note.lines.is_empty()).then_some(note)
    }
}

/// The [`LimitNote`] of this worktree's materialised base, if it has one.
pub fn materialised_note(repo: &Repository) -> Result<Option<LimitNote>, GitError> {
    let Ok(id) = repo.refname_to_id(&materialised_ref(repo)) else {
        return Ok(None);
    };
    let commit = repo
        .find_commit(id)
        .map_err(|e| GitError::git("reading the materialised base", e))?;
    Ok(LimitNote::of_message(&String::from_utf8_lossy(
        commit.message_bytes(),
    )))
}

/// Records that the folder now holds `tree`, materialised from `source`: a commit of ours
/// (parent `source`, so the source stays reachable) under the worktree's ref.
pub fn set_materialised(repo: &Repository, source: Option<Oid>, tree: Oid) -> Result<(), GitError> {
    set_materialised_with(repo, source, tree, None)
}

/// [`set_materialised`], with what the folder's limits kept out (lines holding no line
/// break), if they kept anything out.
pub fn set_materialised_with(
    repo: &Repository,
    source: Option<Oid>,
    tree: Oid,
    note: Option<&LimitNote>,
) -> Result<(), GitError> {
    if materialised(repo)? == Some(Materialised { source, tree })
        && materialised_note(repo)?.as_ref() == note
    {
        return Ok(());
    }
    let context = "recording the materialised base";
    let tree = repo
        .find_tree(tree)
        .map_err(|e| GitError::git(context, e))?;
    let parent = match source {
        Some(id) => Some(
            repo.find_commit(id)
                .map_err(|e| GitError::git(context, e))?,
        ),
        None => None,
    };
    let parents: Vec<&Commit<'_>> = parent.iter().collect();
    let who =
        Signature::now("teammem", "teammem@localhost").map_err(|e| GitError::git(context, e))?;
    let message = note.map_or_else(|| MATERIALISED_MESSAGE.to_string(), LimitNote::message);
    let id = repo
        .commit(None, &who, &who, &message, &tree, &parents)
        .map_err(|e| GitError::git(context, e))?;
    let refname = materialised_ref(repo);
    let _intent = RefIntent::announce(repo, &refname, Some(id))?;
    repo.reference(&refname, id, true, "teammem: materialised")
        .map_err(|e| GitError::git(context, e))?;
    Ok(())
}

/// The tree of `commit`, or the empty tree.
pub fn tree_of<'r>(repo: &'r Repository, commit: Option<Oid>) -> Result<Tree<'r>, GitError> {
    match commit {
        Some(id) => repo
            .find_commit(id)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(format!("reading the tree of {id}"), e)),
        None => commit::empty_tree(repo),
    }
}

/// A memory-branch root tree holding `team` (the team folder's tree) at `.qwen/team-memory`,
/// and every other entry of `on` as it is (a memory branch someone else started may hold
/// other files: a sync commit never removes them).
fn root_with(repo: &Repository, on: Option<&Tree<'_>>, team: Option<Oid>) -> Result<Oid, GitError> {
    match replay::replace_subtree(repo, on, &[".qwen", "team-memory"], team)? {
        Some(root) => Ok(root),
        None => Ok(commit::empty_tree(repo)?.id()),
    }
}

/// What [`record`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The updates change nothing.
    Nothing,
    /// A commit on top of the parent (not yet on any branch).
    Commit(Oid),
    /// `commit.gpgsign` is on and the commit could not be signed (why).
    NotSigned(String),
}

/// A commit whose tree is `parent`'s with `updates` applied (paths relative to the work tree,
/// under the team folder) and `MEMORY.md` regenerated from the result; [`GitError::OutOfTime`]
/// once `deadline` passes during the regeneration. Objects only.
pub fn record(
    repo: &Repository,
    parent: Option<Oid>,
    updates: &[TeamUpdate],
    settings: &CommitSettings,
    gate: &dyn MemoryIndexGate,
    deadline: Deadline,
) -> Result<Recorded, GitError> {
    let base = tree_of(repo, parent)?;
    let applied = commit::updated_tree(repo, &base, updates)?;
    let team = replay::regenerated_team_tree(repo, &applied, gate, Some(deadline))?;

    let root = root_with(repo, Some(&base), team)?;
    if root == base.id() {
        return Ok(Recorded::Nothing);
    }
    let message = format!("{RECORD_SUBJECT}\n\n{SYNC_TRAILER}\n");
    let parents: Vec<Oid> = parent.into_iter().collect();
    match write_commit(repo, root, &parents, &message, settings)? {
        Ok(id) => Ok(Recorded::Commit(id)),
        Err(why) => Ok(Recorded::NotSigned(why)),
    }
}

/// The first commit of a memory branch with no memory yet: the folder with an empty
/// `MEMORY.md`, so the branch can be pushed and teammates' clones find it. Objects only;
/// `Err(why)` when signing failed.
pub fn start(
    repo: &Repository,
    settings: &CommitSettings,
) -> Result<Result<Oid, String>, GitError> {
    let context = "writing the memory branch's first commit";
    let blob = repo.blob(b"").map_err(|e| GitError::git(context, e))?;
    let mut team = repo
        .treebuilder(None)
        .map_err(|e| GitError::git(context, e))?;
    team.insert(
        crate::domain::scope::INDEX_FILE,
        blob,
        i32::from(git2::FileMode::Blob),
    )
    .map_err(|e| GitError::git(context, e))?;
    let team = team.write().map_err(|e| GitError::git(context, e))?;
    let root = root_with(repo, None, Some(team))?;
    let message = format!("{START_SUBJECT}\n\n{SYNC_TRAILER}\n");
    write_commit(repo, root, &[], &message, settings)
}

/// Writes a commit, signed when the user signs commits; `Err(why)` when signing failed.
fn write_commit(
    repo: &Repository,
    tree: Oid,
    parents: &[Oid],
    message: &str,
    settings: &CommitSettings,
) -> Result<Result<Oid, String>, GitError> {
    let context = "writing a memory-branch commit";
    let identity = &settings.identity;
    let author = Signature::now(&identity.author.name, &identity.author.email)
        .map_err(|e| GitError::git(format!("the author {}", identity.author), e))?;
    let committer = Signature::now(&identity.committer.name, &identity.committer.email)
        .map_err(|e| GitError::git(format!("the committer {}", identity.committer), e))?;
    let tree = repo
        .find_tree(tree)
        .map_err(|e| GitError::git(context, e))?;
    let parents: Vec<Commit<'_>> = parents
        .iter()
        .map(|id| repo.find_commit(*id))
        .collect::<Result<_, _>>()
        .map_err(|e| GitError::git(context, e))?;
    let parents: Vec<&Commit<'_>> = parents.iter().collect();
    let buffer = repo
        .commit_create_buffer(&author, &committer, message, &tree, &parents)
        .map_err(|e| GitError::git(context, e))?;
    let payload = String::from_utf8_lossy(&buffer).into_owned();
    let scratch = repo.path().join(super::recovery::SIGN_SCRATCH);
    let signature = match sign::sign(
        &settings.signing,
        &payload,
        &identity.committer.to_string(),
        &scratch,
        settings.sign_budget,
    ) {
        Ok(signature) => signature,
        Err(why) => return Ok(Err(why.to_string())),
    };
    let id = match signature {
        Some(signature) => repo
            .commit_signed(&payload, &signature, None)
            .map_err(|e| GitError::git(context, e))?,
        None => repo
            .odb()
            .and_then(|odb| odb.write(ObjectType::Commit, payload.as_bytes()))
            .map_err(|e| GitError::git(context, e))?,
    };
    Ok(Ok(id))
}

/// Two tips brought together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combined {
    /// The tip holding both (one of them when the other is its ancestor).
    pub tip: Option<Oid>,
    /// Memories kept in two versions (`theirs` at the path, `ours` beside it).
    pub conflicts: Vec<KeptConflict>,
    /// Signing was required and failed: nothing was merged (why).
    pub not_signed: Option<String>,
}

/// The subject of the first commit of a memory branch.
const START_SUBJECT: &str = "chore(memory): start the team memory branch";

/// How many unpublished commits are re-created at most; past it, a merge commit keeps them.
const MAX_RECREATED: usize = 200;

/// Brings `ours` and `theirs` together: the one that contains the other; else, when every
/// commit only `ours` holds is teammem's own (a record, merge or start commit) and none is on
/// a branch in `published`, one record commit on top of `theirs` whose team folder is the two
/// merged memory by memory against their merge base (none: unrelated histories, every memory
/// added on both sides) — the history stays a line; else a merge commit (parents ours,
/// theirs) with that folder, so a commit of someone else's, or one a proposal branch already
/// shows, is never rewritten. [`GitError::OutOfTime`] once `deadline` passes during the
/// merge's regeneration of `MEMORY.md`. Objects only.
pub fn combine(
    repo: &Repository,
    ours: Option<Oid>,
    theirs: Option<Oid>,
    published: &[Oid],
    settings: &CommitSettings,
    gate: &dyn MemoryIndexGate,
    deadline: Deadline,
) -> Result<Combined, GitError> {
    let done = |tip| Combined {
        tip,
        conflicts: Vec::new(),
        not_signed: None,
    };
    let (o, t) = match (ours, theirs) {
        (None, other) | (other, None) => return Ok(done(other)),
        (Some(o), Some(t)) if o == t => return Ok(done(Some(o))),
        (Some(o), Some(t)) => (o, t),
    };
    if history::contains(repo, o, t)? {
        return Ok(done(Some(o)));
    }
    if history::contains(repo, t, o)? {
        return Ok(done(Some(t)));
    }
    let base = match repo.merge_base(o, t) {
        Ok(base) => Some(tree_of(repo, Some(base))?),
        Err(e) if e.code() == ErrorCode::NotFound => None,
        Err(e) => {
            return Err(GitError::git(
                format!("finding the merge base of {o} and {t}"),
                e,
            ));
        }
    };
    let short = o.to_string()[..7].to_string();
    let merged = replay::merge_team_folders(
        repo,
        base.as_ref(),
        &tree_of(repo, Some(o))?,
        &tree_of(repo, Some(t))?,
        &short,
        gate,
        Some(deadline),
    )?;
    // Files outside the team folder (a branch someone else started) are kept as their tip
    // has them: teammem's commits change the team folder only.
    let their_root = tree_of(repo, Some(t))?;
    let root = root_with(repo, Some(&their_root), merged.team_tree)?;
    let recreate = recreatable(repo, o, t, published)?;
    if recreate && root == their_root.id() {
        // Everything this clone had to add is on their tip already.
        return Ok(done(Some(t)));
    }
    let (parents, message) = if recreate {
        (vec![t], format!("{RECORD_SUBJECT}\n\n{SYNC_TRAILER}\n"))
    } else {
        (vec![o, t], format!("{MERGE_SUBJECT}\n\n{SYNC_TRAILER}\n"))
    };
    match write_commit(repo, root, &parents, &message, settings)? {
        Ok(id) => Ok(Combined {
            tip: Some(id),
            conflicts: merged.conflicts,
            not_signed: None,
        }),
        Err(why) => Ok(Combined {
            tip: Some(o),
            conflicts: Vec::new(),
            not_signed: Some(why),
        }),
    }
}

/// Whether the commits `ours` holds and `theirs` lacks may be re-created on top of `theirs`:
/// teammem's own memory-branch commits (subject and trailer), at most [`MAX_RECREATED`], none
/// reachable from a `published` tip (a proposal branch only moves forward).
fn recreatable(
    repo: &Repository,
    ours: Oid,
    theirs: Oid,
    published: &[Oid],
) -> Result<bool, GitError> {
    let only_ours = history::local_only(repo, ours, Some(theirs))?;
    if only_ours.len() > MAX_RECREATED {
        return Ok(false);
    }
    for id in &only_ours {
        let commit = repo
            .find_commit(*id)
            .map_err(|e| GitError::git(format!("reading commit {id}"), e))?;
        if !is_own_commit(&commit) {
            return Ok(false);
        }
    }
    for tip in published {
        for id in &only_ours {
            if history::contains(repo, *tip, *id)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Whether `commit` is one teammem's branch-mode sync writes: a record, merge or start commit,
/// with the sync trailer.
fn is_own_commit(commit: &Commit<'_>) -> bool {
    let message = String::from_utf8_lossy(commit.message_bytes());
    let subject = message.lines().next().map(str::trim);
    let ours = [RECORD_SUBJECT, MERGE_SUBJECT, START_SUBJECT]
        .iter()
        .any(|s| subject == Some(*s));
    ours && message.lines().any(|l| l.trim() == SYNC_TRAILER)
}

/// The tips of the proposal branches of `remote` this clone has fetched: commits on them are
/// shown to reviewers and are never re-created.
pub fn proposal_tips(repo: &Repository, remote: &str) -> Vec<Oid> {
    let glob = format!("refs/remotes/{remote}/{PROPOSALS_PREFIX}*");
    let Ok(refs) = repo.references_glob(&glob) else {
        return Vec::new();
    };
    refs.flatten().filter_map(|r| r.target()).collect()
}

/// Moves `refname` from `from` to `to` by compare-and-swap, announced for kill recovery.
/// Returns false when the ref was not at `from` (someone else moved it).
pub fn move_ref(
    repo: &Repository,
    refname: &str,
    from: Option<Oid>,
    to: Oid,
    reflog: &str,
) -> Result<bool, GitError> {
    if from == Some(to) {
        return Ok(true);
    }
    let _intent = RefIntent::announce(repo, refname, Some(to))?;
    let moved = match from {
        Some(from) => repo.reference_matching(refname, to, true, from, reflog),
        None => repo.reference(refname, to, false, reflog),
    };
    match moved {
        Ok(_) => Ok(true),
        Err(e) if matches!(e.code(), ErrorCode::Modified | ErrorCode::Exists) => Ok(false),
        Err(e) => Err(GitError::git(format!("moving {refname}"), e)),
    }
}

/// The team folder's tree of HEAD, if the folder is tracked on the current branch.
pub fn tracked_folder(repo: &Repository) -> Option<Oid> {
    let tree = repo.head().ok()?.peel_to_tree().ok()?;
    let entry = tree.get_path(Path::new(TEAM_DIR)).ok()?;
    (entry.kind() == Some(ObjectType::Tree)).then(|| entry.id())
}

/// Re-creates the history of the team folder along HEAD's first parents (at most `limit`
/// commits looked at) as a chain of memory-branch commits, each with the original author,
/// committer and message, ending with HEAD's folder. Objects only; `None` when HEAD does not
/// track the folder.
pub fn import_history(repo: &Repository, limit: usize) -> Result<Option<Oid>, GitError> {
    let context = "reading the team folder's history";
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        return Ok(None);
    };
    let folder_of = |c: &Commit<'_>| -> Option<Oid> {
        let tree = c.tree().ok()?;
        let entry = tree.get_path(Path::new(TEAM_DIR)).ok()?;
        (entry.kind() == Some(ObjectType::Tree)).then(|| entry.id())
    };
    if folder_of(&head).is_none() {
        return Ok(None);
    }
    // Newest first: the commits where the folder's tree changed.
    let mut changes: Vec<Oid> = Vec::new();
    let mut current = Some(head);
    let mut looked = 0;
    while let Some(c) = current {
        looked += 1;
        let parent = c.parent(0).ok();
        let here = folder_of(&c);
        let before = parent.as_ref().and_then(&folder_of);
        if here != before {
            changes.push(c.id());
        }
        if looked >= limit {
            break;
        }
        current = parent;
    }
    let mut tip: Option<Oid> = None;
    for id in changes.into_iter().rev() {
        let c = repo
            .find_commit(id)
            .map_err(|e| GitError::git(context, e))?;
        let root = root_with(repo, None, folder_of(&c))?;
        if tip.is_some_and(|t| tree_of(repo, Some(t)).map(|tr| tr.id()).ok() == Some(root)) {
            continue;
        }
        let root = repo
            .find_tree(root)
            .map_err(|e| GitError::git(context, e))?;
        let parent = match tip {
            Some(t) => Some(repo.find_commit(t).map_err(|e| GitError::git(context, e))?),
            None => None,
        };
        let parents: Vec<&Commit<'_>> = parent.iter().collect();
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        tip = Some(
            repo.commit(None, &c.author(), &c.committer(), &message, &root, &parents)
                .map_err(|e| GitError::git(context, e))?,
        );
    }
    Ok(tip)
}

/// The user part of a proposal branch name: `user.email`'s local part, else `user.name`,
/// lowercased, each character outside `[a-z0-9._-]` made `-`; `user` when neither is set.
pub fn proposal_user(repo: &Repository) -> String {
    let config = repo.config().ok();
    let get = |key: &str| config.as_ref().and_then(|c| c.get_string(key).ok());
    proposal_user_of(get("user.email").as_deref(), get("user.name").as_deref())
}

/// The proposal-branch user part for a person with `email` and `name` (see [`proposal_user`]):
/// how a review tells whether a proposal's commit was made by the branch's owner.
pub fn proposal_user_of(email: Option<&str>, name: Option<&str>) -> String {
    let raw = email
        .and_then(|e| e.split('@').next().map(str::to_string))
        .filter(|s| !s.trim().is_empty())
        .or_else(|| name.map(str::to_string))
        .unwrap_or_default();
    let mut user: String = raw
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    user = user.trim_matches(['.', '-']).to_string();
    while user.contains("..") {
        user = user.replace("..", ".");
    }
    if user.is_empty() || user.ends_with(".lock") {
        "user".into()
    } else {
        user
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_name("team-memory"));
        assert!(valid_name("memory/team"));
        assert!(!valid_name(""));
        assert!(!valid_name("a..b"));
        assert!(!valid_name("team-memory-proposals/alice"));
    }

    #[test]
    fn proposal_users_are_branch_safe() {
        let (_dir, repo) = crate::git::scratch_repo();
        let mut config = repo.config().unwrap();
        config
            .set_str("user.email", "Ada.Lovelace+x@example.com")
            .unwrap();
        assert_eq!(proposal_user(&repo), "ada.lovelace-x");
        config.set_str("user.email", "@example.com").unwrap();
        config.set_str("user.name", "Grace Hopper").unwrap();
        assert_eq!(proposal_user(&repo), "grace-hopper");
    }

    #[test]
    fn proposal_names_end_with_one_nobody_can_take_in_advance() {
        let tip = "0123456789abcdef0123456789abcdef01234567";
        let names: Vec<String> = proposal_names("ada", tip).map(|(b, _)| b).collect();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "ada");
        assert_eq!(names[8], "ada-9");
        assert_eq!(names[9], "ada-0123456789ab");
        for name in &names {
            assert!(proposal_owners(name).contains(&"ada"), "{name}");
        }
        assert_eq!(proposal_owners("build-10"), vec!["build-10"]);
        assert_eq!(proposal_owners("me-02"), vec!["me-02"]);
        assert_eq!(proposal_owners("-3"), vec!["-3"]);
    }
}
