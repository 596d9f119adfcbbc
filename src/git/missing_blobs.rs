//! Fetching the team files' objects a partial clone lacks (`git clone --filter=blob:none`
//! leaves out blobs, `--filter=tree:0` trees as well, `--filter=blob:limit=1k` the larger
//! blobs): libgit2 cannot ask the promisor remote for a missing object, so reading a
//! teammate's memory failed with `object not found`. git can: `git fetch --stdin` of the
//! missing ids brings them from the promisor remote in one request, under the sync's deadline, with
//! the git CLI transport's rules (no prompt, no hooks, no fsmonitor, no credential helper or
//! ssh command from the repository). Shared by both sync modes; the git path's branch mode
//! has its own ([`fetch_missing_through_git`]), since `git mktree` does not fetch lazily.

use std::collections::BTreeSet;

use git2::{ObjectType, Oid, Repository};

use super::GitError;
use super::cli_repo::CliRepo;
use super::remote::git_cli::{QUIET_FETCH, git_cli_network_command, run_git};
use super::remote::{NetFailure, NetworkOptions};

/// What a `git fetch` of objects by their ids (read from stdin) sets: they are wanted as they
/// are, so nothing is negotiated.
const BY_ID: [&str; 2] = ["-c", "fetch.negotiationAlgorithm=noop"];

/// Whether the repository is a partial clone (a promisor remote).
pub fn is_partial_clone(repo: &Repository) -> bool {
    repo.config().is_ok_and(|config| partial_in(&config))
}

/// Whether `config` makes its repository a partial clone: `extensions.partialClone`, or a
/// remote with `promisor = true`.
fn partial_in(config: &git2::Config) -> bool {
    if config.get_string("extensions.partialclone").is_ok() {
        return true;
    }
    let Ok(mut entries) = config.entries(Some("remote\\..*\\.promisor")) else {
        return false;
    };
    let mut found = false;
    while let Some(Ok(entry)) = entries.next() {
        found |= entry.value().is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    }
    found
}

/// [`fetch_missing`] for a repository libgit2 cannot open (reftable refs, SHA-256 objects),
/// through git alone: `git rev-list --objects --missing=print` on `commits` (memory-branch
/// commits, whose trees hold only the team folder) names what is missing without fetching it,
/// and one `git fetch` of those ids from `remote`'s URL brings them with all they hold, under
/// the git CLI transport's rules (no prompt, hook, credential helper or ssh command from the
/// repository), which git's own lazy fetch would not apply. `git mktree` refuses an entry whose
/// object is missing, and the folder is read with lazy fetching off, so both need them here.
pub fn fetch_missing_through_git(
    cli: &CliRepo,
    remote: &str,
    commits: &[&str],
    options: &NetworkOptions,
) -> Result<usize, NetFailure> {
    let what = "fetching the team files' missing objects (git)";
    let failed = |e: GitError| NetFailure::failed(format!("{what}: {e}"));
    let partial = cli.full_config().map_err(failed)?;
    if commits.is_empty() || !partial_in(&partial) {
        return Ok(0);
    }
    let mut fetched = 0;
    for _ in 0..MAX_ROUNDS {
        let mut args = vec!["rev-list", "--objects", "--no-walk", "--missing=print"];
        args.extend_from_slice(commits);
        let listed = cli
            .run_with(
                &args,
                &[("GIT_NO_LAZY_FETCH", std::ffi::OsStr::new("1"))],
                b"",
                &options.deadline,
                "listing the team files' objects (git rev-list)",
            )
            .map_err(failed)?;
        let missing: BTreeSet<&str> = listed.lines().filter_map(|l| l.strip_prefix('?')).collect();
        if missing.is_empty() {
            return Ok(fetched);
        }
        let url = cli
            .remote_urls(remote, false, &options.deadline)
            .map_err(failed)?
            .into_iter()
            .next()
            .ok_or_else(|| NetFailure::failed(format!("{what}: {remote} has no URL")))?;
        let mut cmd = cli.network_command(options)?;
        cmd.args(BY_ID)
            .args(QUIET_FETCH)
            .args(["--stdin", "--", &url]);
        let input: String = missing.iter().map(|id| format!("{id}\n")).collect();
        let what = format!(
            "fetching {} missing team memory objects (git)",
            missing.len()
        );
        let run = run_git(cmd, input.as_bytes(), &options.deadline, &what)?;
        if !run.success {
            let message = format!("{what}: {}", run.stderr.trim());
            return Err(if options.deadline.passed() {
                NetFailure::timeout(message)
            } else {
                NetFailure::failed(message)
            });
        }
        fetched += missing.len();
    }
    Err(NetFailure::failed(format!(
        "{what}: still missing after {MAX_ROUNDS} rounds"
    )))
}

/// How many rounds of fetching a walk down to the team files takes at most: one per tree level
/// still missing (the root tree, `.qwen`, `team-memory`, its folders), then the blobs.
const MAX_ROUNDS: usize = 12;

/// Makes sure every tree and blob under `dir` in the trees of `commits`, and of their merge
/// bases (a merge of two tips reads the base version of a file both changed), is in the object
/// database, fetching the missing ones through git one tree level per round. Nothing to do
/// outside a partial clone. Returns how many objects were fetched.
pub fn fetch_missing(
    repo: &Repository,
    commits: &[Oid],
    dir: &str,
    options: &NetworkOptions,
) -> Result<usize, NetFailure> {
    if !is_partial_clone(repo) {
        return Ok(0);
    }
    let odb = repo
        .odb()
        .map_err(|e| NetFailure::failed(format!("opening the object database: {}", e.message())))?;
    let mut roots: BTreeSet<Oid> = BTreeSet::new();
    let mut all: BTreeSet<Oid> = commits.iter().copied().collect();
    for (i, &a) in commits.iter().enumerate() {
        for &b in &commits[i + 1..] {
            if a != b {
                all.extend(repo.merge_base(a, b).ok());
            }
        }
    }
    for commit in all {
        // A commit's tree id is in the commit object itself: no tree is read here.
        if let Ok(c) = repo.find_commit(commit) {
            roots.insert(c.tree_id());
        }
    }
    let mut fetched = 0;
    for _ in 0..MAX_ROUNDS {
        let mut missing = BTreeSet::new();
        for root in &roots {
            missing_under(repo, &odb, *root, dir, &mut missing);
        }
        if missing.is_empty() {
            return Ok(fetched);
        }
        fetch_objects(repo, &odb, &missing, options)?;
        fetched += missing.len();
    }
    Err(NetFailure::failed(format!(
        "fetching the team files' missing objects (git): still missing after {MAX_ROUNDS} rounds"
    )))
}

/// Adds to `missing` the objects of the walk from the root tree `root` down to `dir` and all
/// it holds that are not in `odb`: a missing tree's own entries are the next round's.
fn missing_under(
    repo: &Repository,
    odb: &git2::Odb<'_>,
    root: Oid,
    dir: &str,
    missing: &mut BTreeSet<Oid>,
) {
    let mut at = root;
    for part in dir.split('/') {
        if !odb.exists(at) {
            missing.insert(at);
            return;
        }
        let Ok(tree) = repo.find_tree(at) else { return };
        match tree.get_name(part) {
            Some(entry) if entry.kind() == Some(ObjectType::Tree) => at = entry.id(),
            _ => return,
        }
    }
    let mut folders = vec![at];
    while let Some(folder) = folders.pop() {
        if !odb.exists(folder) {
            missing.insert(folder);
            continue;
        }
        let Ok(tree) = repo.find_tree(folder) else {
            continue;
        };
        for entry in tree.iter() {
            match entry.kind() {
                Some(ObjectType::Tree) => folders.push(entry.id()),
                Some(ObjectType::Blob) if !odb.exists(entry.id()) => {
                    missing.insert(entry.id());
                }
                _ => {}
            }
        }
    }
}

/// The URL of the promisor remote (`remote.<name>.promisor`, else `extensions.partialClone`).
fn promisor_url(repo: &Repository) -> Option<String> {
    let config = repo.config().ok()?;
    let mut name = config.get_string("extensions.partialclone").ok();
    if let Ok(mut entries) = config.entries(Some("remote\\..*\\.promisor")) {
        while let Some(Ok(entry)) = entries.next() {
            if entry.value().is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
                let key = entry.name().unwrap_or_default();
                name = key
                    .strip_prefix("remote.")
                    .and_then(|k| k.strip_suffix(".promisor"))
                    .map(str::to_string);
                break;
            }
        }
    }
    let remote = repo.find_remote(&name?).ok()?;
    remote.url().ok().map(str::to_string)
}

/// Fetches `missing` from the promisor remote in one request (`git fetch --stdin` of the ids
/// from its URL, nothing negotiated, no ref moved; `git cat-file --batch` would fetch them one
/// round trip each, and 1,000 memories ran past the budget); an error names how many are still
/// missing and what git said.
fn fetch_objects(
    repo: &Repository,
    odb: &git2::Odb<'_>,
    missing: &BTreeSet<Oid>,
    options: &NetworkOptions,
) -> Result<(), NetFailure> {
    let what = format!(
        "fetching {} missing team memory objects (git)",
        missing.len()
    );
    let Some(url) = promisor_url(repo) else {
        return Err(NetFailure::failed(format!(
            "{what}: the clone names no promisor remote with a URL"
        )));
    };
    let mut cmd = git_cli_network_command(repo, options)?;
    cmd.args(BY_ID)
        .args(QUIET_FETCH)
        .args(["--stdin", "--", &url]);
    let input: String = missing.iter().map(|id| format!("{id}\n")).collect();
    let run = run_git(cmd, input.as_bytes(), &options.deadline, &what)?;
    let still = missing.iter().filter(|id| !odb.exists(**id)).count();
    if !run.success || still > 0 {
        let message = format!("{what}: {still} still missing; {}", run.stderr.trim());
        return Err(if options.deadline.passed() {
            NetFailure::timeout(message)
        } else {
            NetFailure::failed(message)
        });
    }
    Ok(())
}
