//! `teammem demo`: a throwaway team in a temp folder — a bare remote and two clones, Alice's
//! and Bob's — driven by teammem's own operations, to show the main job end to end: memories
//! a memory file as written, synced both ways, a secret refused, the context an agent
//! receives, a memory both edited kept in two versions and then resolved, and the review of
//! what a sync brought. git2 only: no git program is needed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use git2::Repository;

use crate::domain::memory::MemoryType;
use crate::domain::scope::{Environment, ScopeKind, TEAM_DIR};

use super::add::{self, NewMemory};
use super::context::{self, HookFormat};
use super::resolve::{self, Keep};
use super::review;
use super::review::format as review_format;
use super::sync::{self, SyncOptions, SyncOutcome};
use super::{OpError, Project};

/// What the demo leaves behind.
#[derive(Debug, Clone)]
pub struct DemoRun {
    /// The temp folder, when it was kept (`--keep`).
    pub kept: Option<PathBuf>,
    /// How long it took.
    pub elapsed: Duration,
}

/// One teammate: a clone and the project seen from it.
struct Teammate {
    name: &'static str,
    dir: PathBuf,
    project: Project,
}

/// Runs the demo, writing its story to `out`. The temp folder is removed afterwards unless
/// `keep`.
pub fn run(keep: bool, out: &mut dyn Write) -> Result<DemoRun, OpError> {
    let started = Instant::now();
    let root = make_root()?;
    let result = story(&root, out);
    let kept = if keep {
        Some(root.clone())
    } else {
        let _ = fs::remove_dir_all(&root);
        None
    };
    result?;
    Ok(DemoRun {
        kept,
        elapsed: started.elapsed(),
    })
}

fn story(root: &Path, out: &mut dyn Write) -> Result<(), OpError> {
    let io = |e: std::io::Error| OpError::io(Path::new("<stdout>"), e);
    let remote = root.join("team.git");
    Repository::init_bare(&remote)
        .and_then(|r| r.set_head("refs/heads/main"))
        .map_err(|e| git("creating the bare remote", e))?;

    heading(out, "Alice starts the team memory and syncs")?;
    let alice = new_clone(root, "alice", "Alice", &remote, false)?;
    remember(
        &alice,
        MemoryType::Feedback,
        "Use the real database in tests",
        "Integration tests hit a real Postgres, never a mock",
        "A mocked test passed while the real migration failed.\n",
    )?;
    remember(
        &alice,
        MemoryType::Project,
        "Release train",
        "Releases leave every Tuesday",
        "Releases go out on Tuesday at 10:00 UTC.\n",
    )?;
    say_sync(out, &alice, &sync_now(&alice)?)?;

    heading(out, "The memory file as Alice's add wrote it")?;
    let release = format!("{TEAM_DIR}/project/release-train.md");
    let written = fs::read_to_string(alice.dir.join(&release))
        .map_err(|e| OpError::io(alice.dir.join(&release), e))?;
    writeln!(out, "alice$ cat {release}\n{written}").map_err(io)?;

    heading(out, "Bob clones, adds a memory and syncs")?;
    let bob = new_clone(root, "bob", "Bob", &remote, true)?;
    remember(
        &bob,
        MemoryType::Reference,
        "On-call runbooks",
        "Runbooks live in the ops wiki under /oncall",
        "See the ops wiki, section On-call.\n",
    )?;
    say_sync(out, &bob, &sync_now(&bob)?)?;

    heading(out, "Bob tries to save a token in team memory")?;
    // Built at run time so the demo's source holds no token-shaped text.
    let token = format!("ghp_{}{}", "x7Kq9ZpR2mWv4LtN", "8bYc1HdJ6sFg3AeU0oQi");
    let refused = add::add(
        &bob.project,
        &NewMemory {
            scope: ScopeKind::Team,
            kind: MemoryType::Reference,
            name: "CI token".into(),
            description: "The token CI uses".into(),
            keywords: None,
            body: format!("token: {token}\n"),
        },
    );
    match refused {
        Err(err) => {
            let text = err.to_string().replace(&token, "[hidden]");
            let first = text.lines().next().unwrap_or_default();
            writeln!(out, "refused: {first}").map_err(io)?;
            for line in text.lines().skip(1).take(1) {
                writeln!(out, "  {line}").map_err(io)?;
            }
        }
        Ok(_) => writeln!(out, "not refused (unexpected)").map_err(io)?,
    }

    heading(out, "Alice and Bob both edit the release train memory")?;
    edit_body(
        &alice,
        &release,
        "Releases go out on Wednesday at 10:00 UTC.\n",
    )?;
    edit_body(&bob, &release, "Releases go out on Tuesday at 14:00 UTC.\n")?;
    say_sync(out, &alice, &sync_now(&alice)?)?;
    let bobs = sync_now(&bob)?;
    say_sync(out, &bob, &bobs)?;
    for warning in &bobs.warnings {
        writeln!(out, "  {warning}").map_err(io)?;
    }
    writeln!(out, "Bob's team memory now holds:").map_err(io)?;
    for file in team_files(&bob.dir.join(TEAM_DIR).join("project"))? {
        writeln!(out, "  project/{file}").map_err(io)?;
    }

    heading(out, "What Bob's agent receives at session start")?;
    let bob_now = Project::open_with(&bob.dir, bob.project.env.clone())?;
    let shown = context::build(&bob_now, None)?;
    writeln!(out, "bob$ teammem context").map_err(io)?;
    write!(out, "{}", context::render(&shown, HookFormat::Plain)).map_err(io)?;

    heading(out, "Alice syncs and reviews what Bob's sync brought")?;
    let alice_repo = crate::git::repo::open(&alice.dir)?;
    let before = head(&alice_repo)?;
    say_sync(out, &alice, &sync_now(&alice)?)?;
    let after = head(&alice_repo)?;
    let review = review::review_range(&alice_repo, &before, &after)?;
    write!(out, "{}", review_format::markdown(&review)).map_err(io)?;

    heading(
        out,
        "Bob keeps Alice's version, and both agents see one memory again",
    )?;
    let conflict = resolve::find(&bob_now, "project/release-train.md")?;
    let done = resolve::resolve(&bob_now, &conflict, Keep::Theirs)?;
    writeln!(
        out,
        "bob$ teammem resolve project/release-train.md --theirs\nResolved {}:{}: kept the \
         version at {}; removed {}.",
        done.scope, done.memory, done.memory, done.copy
    )
    .map_err(io)?;
    say_sync(out, &bob, &sync_now(&bob)?)?;
    say_sync(out, &alice, &sync_now(&alice)?)?;
    let alice_now = Project::open_with(&alice.dir, alice.project.env.clone())?;
    let shown = context::build(&alice_now, None)?;
    writeln!(out, "alice$ teammem context").map_err(io)?;
    write!(out, "{}", context::render(&shown, HookFormat::Plain)).map_err(io)?;
    Ok(())
}

/// A new empty folder under the system temp folder.
fn make_root() -> Result<PathBuf, OpError> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let root = std::env::temp_dir().join(format!("teammem-demo-{}-{nanos}", std::process::id()));
    fs::create_dir(&root).map_err(|e| OpError::io(&root, e))?;
    Ok(root)
}

/// A clone for `name`: cloned from `remote` (Bob), or a new repository pushing to it (Alice,
/// the remote being empty). Its own identity, no signing, its own memory base folder.
fn new_clone(
    root: &Path,
    folder: &str,
    name: &'static str,
    remote: &Path,
    clone: bool,
) -> Result<Teammate, OpError> {
    let dir = root.join(folder);
    let repo = if clone {
        Repository::clone(&remote.to_string_lossy(), &dir).map_err(|e| git("cloning", e))?
    } else {
        let repo = Repository::init(&dir).map_err(|e| git("creating a clone", e))?;
        repo.set_head("refs/heads/main")
            .and_then(|_| repo.remote("origin", &remote.to_string_lossy()).map(|_| ()))
            .map_err(|e| git("adding the remote", e))?;
        repo
    };
    let mut config = repo.config().map_err(|e| git("reading config", e))?;
    let email = format!("{}@example.com", name.to_lowercase());
    for (key, value) in [
        ("user.name", name),
        ("user.email", email.as_str()),
        ("branch.main.remote", "origin"),
        ("branch.main.merge", "refs/heads/main"),
    ] {
        config
            .set_str(key, value)
            .map_err(|e| git("writing config", e))?;
    }
    // The demo's commits are throwaway: never ask the user's gpg or ssh key to sign them.
    config
        .set_bool("commit.gpgsign", false)
        .map_err(|e| git("writing config", e))?;
    let home = root.join(format!("home-{folder}"));
    let env = Environment {
        base_dir: Some(home.join(".qwen")),
        home: Some(home),
        memory_local: None,
        team: Some("1".into()),
        team_sync: Some("1".into()),
        ..Default::default()
    };
    let project = Project::open_with(&dir, env)?;
    Ok(Teammate { name, dir, project })
}

fn remember(
    who: &Teammate,
    kind: MemoryType,
    name: &str,
    description: &str,
    body: &str,
) -> Result<(), OpError> {
    add::add(
        &who.project,
        &NewMemory {
            scope: ScopeKind::Team,
            kind,
            name: name.into(),
            description: description.into(),
            keywords: None,
            body: body.into(),
        },
    )?;
    Ok(())
}

/// Replaces a memory's body as an editor would, keeping its frontmatter.
fn edit_body(who: &Teammate, rel: &str, body: &str) -> Result<(), OpError> {
    let path = who.dir.join(rel);
    let text = fs::read_to_string(&path).map_err(|e| OpError::io(&path, e))?;
    let end = text
        .match_indices("---\n")
        .nth(1)
        .map(|(at, m)| at + m.len())
        .unwrap_or(0);
    fs::write(&path, format!("{}{body}", &text[..end])).map_err(|e| OpError::io(&path, e))
}

fn sync_now(who: &Teammate) -> Result<SyncOutcome, OpError> {
    // The project is read again: the team folder may have appeared since.
    let project = Project::open_with(&who.dir, who.project.env.clone())?;
    sync::sync(
        &project,
        &SyncOptions {
            timeout: Duration::from_secs(10),
            ..SyncOptions::default()
        },
    )
}

/// `teammem sync`'s line, counting memories apart from the regenerated index (the line's
/// "team memory files" count MEMORY.md too).
fn say_sync(out: &mut dyn Write, who: &Teammate, outcome: &SyncOutcome) -> Result<(), OpError> {
    let mut line = outcome.summary();
    if let (true, Some(sha)) = (outcome.committed, &outcome.commit) {
        let (memories, index_too) = changed_in_commit(&who.dir, sha)?;
        let tail = line.split_once("; ").map(|(_, t)| format!("; {t}"));
        line = format!(
            "Committed {memories} memor{}{} as {}{}",
            if memories == 1 { "y" } else { "ies" },
            if index_too { " and MEMORY.md" } else { "" },
            &sha[..sha.len().min(7)],
            tail.unwrap_or_default()
        );
    }
    writeln!(out, "{}$ teammem sync\n{line}", who.name.to_lowercase())
        .map_err(|e| OpError::io(Path::new("<stdout>"), e))
}

/// How many memory files commit `sha` changed in the team folder (against its first parent),
/// and whether it changed the index too.
fn changed_in_commit(dir: &Path, sha: &str) -> Result<(usize, bool), OpError> {
    let repo = crate::git::repo::open(dir)?;
    let commit = git2::Oid::from_str(sha)
        .and_then(|oid| repo.find_commit(oid))
        .map_err(|e| git("reading the sync commit", e))?;
    let tree = commit
        .tree()
        .map_err(|e| git("reading the sync commit", e))?;
    let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let mut options = git2::DiffOptions::new();
    options.pathspec(TEAM_DIR);
    let diff = repo
        .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut options))
        .map_err(|e| git("comparing the sync commit", e))?;
    let index = format!("{TEAM_DIR}/{}", crate::domain::scope::INDEX_FILE);
    let (mut memories, mut index_too) = (0, false);
    for delta in diff.deltas() {
        let path = delta.new_file().path().or(delta.old_file().path());
        match path.and_then(Path::to_str) {
            Some(p) if p == index => index_too = true,
            Some(_) => memories += 1,
            None => {}
        }
    }
    Ok((memories, index_too))
}

fn heading(out: &mut dyn Write, title: &str) -> Result<(), OpError> {
    writeln!(out, "\n== {title}").map_err(|e| OpError::io(Path::new("<stdout>"), e))
}

fn team_files(dir: &Path) -> Result<Vec<String>, OpError> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map_err(|e| OpError::io(dir, e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

fn head(repo: &Repository) -> Result<String, OpError> {
    repo.refname_to_id("HEAD")
        .map(|id| id.to_string())
        .map_err(|e| git("reading HEAD", e))
}

fn git(what: &str, err: git2::Error) -> OpError {
    crate::git::GitError::git(format!("demo: {what}"), err).into()
}
