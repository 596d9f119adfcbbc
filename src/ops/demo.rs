//! `teammem demo`: a throwaway team in a temp folder — a bare remote and two clones, Alice's
//! and Bob's — driven by teammem's own operations, to show the main job end to end: the setup
//! commands it stands for, a memory file as written, synced both ways, a secret refused, the context an agent
//! receives, a memory both edited kept in two versions and then resolved, and the review of
//! what a sync brought; it ends with the same setup for the user's own repository. git2
//! only: no git program is needed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use git2::Repository;
use serde::Serialize;

use crate::domain::memory::MemoryType;
use crate::domain::scope::{Environment, ScopeKind, TEAM_DIR};

use super::add::{self, NewMemory};
use super::context::{self, HookFormat};
use super::resolve::{self, Keep};
use super::review;
use super::review::format as review_format;
use super::sync::{self, SyncOptions, SyncOutcome};
use super::{OpError, Project};

/// What the demo showed and leaves behind (`teammem demo --json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct DemoRun {
    /// Each part of the story, in order, with what it showed.
    pub sections: Vec<DemoSection>,
    /// The temp folder, when it was kept (`--keep`).
    pub kept: Option<PathBuf>,
    /// How long it took.
    #[serde(rename = "elapsed_ms", serialize_with = "millis")]
    pub elapsed: Duration,
}

/// One part of the story: its heading and what it showed.
#[derive(Debug, Clone, Serialize)]
pub struct DemoSection {
    /// The heading the text output prints after `==`.
    pub title: String,
    /// What happened, in order.
    pub steps: Vec<DemoStep>,
}

/// One thing the demo showed. Every text is what the text output prints; no secret is in any.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum DemoStep {
    /// A teammate ran `teammem sync`.
    Sync {
        /// `alice` or `bob`.
        who: String,
        /// The line `teammem sync` prints, counting memories apart from MEMORY.md.
        summary: String,
        /// What sync warned about (a memory kept in two versions).
        warnings: Vec<String>,
    },
    /// A memory file exactly as `teammem add` wrote it.
    MemoryWritten {
        /// Whose clone holds it.
        who: String,
        /// Its path in the repository.
        path: String,
        /// Its bytes, frontmatter and body.
        text: String,
    },
    /// A team write refused because its body holds a secret; the secret is shown as `[hidden]`.
    SecretRefused {
        /// Who tried.
        who: String,
        /// The refusal, as `teammem add` reports it.
        message: String,
        /// Whether the write was refused (anything else is a failure of the demo).
        refused: bool,
    },
    /// The files of a folder after a memory both edited was synced: the memory and its
    /// conflict copy.
    TwoVersions {
        /// Whose clone.
        who: String,
        /// The files, relative to the team folder.
        files: Vec<String>,
    },
    /// The context an agent receives at session start, as `teammem context` prints it.
    AgentContext {
        /// Whose agent.
        who: String,
        /// The context text.
        text: String,
    },
    /// `teammem review` of what a sync brought, as markdown.
    Review {
        /// Who reviewed.
        who: String,
        /// The review.
        markdown: String,
    },
    /// Commands a person runs: the setup the demo stands for, or the same in your repository.
    Commands {
        /// What they do.
        purpose: String,
        /// The command lines, as typed.
        commands: Vec<String>,
    },
    /// A memory kept in two versions made one again by `teammem resolve`.
    ConflictResolved {
        /// Who resolved it.
        who: String,
        /// The memory, `scope:path`.
        memory: String,
        /// The version kept (its path).
        kept: String,
        /// The conflict copy removed.
        removed: String,
    },
}

fn millis<S: serde::Serializer>(elapsed: &Duration, to: S) -> Result<S::Ok, S::Error> {
    to.serialize_u64(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

/// The story as it is told: written to `out` as text, and recorded for `--json`.
struct Story<'a> {
    out: &'a mut dyn Write,
    sections: Vec<DemoSection>,
}

impl Story<'_> {
    fn heading(&mut self, title: &str) -> Result<(), OpError> {
        self.sections.push(DemoSection {
            title: title.to_string(),
            steps: Vec::new(),
        });
        writeln!(self.out, "\n== {title}").map_err(io)
    }

    /// Shows command lines a person would type, and records them.
    fn commands(&mut self, purpose: &str, lines: &[&str]) -> Result<(), OpError> {
        writeln!(self.out, "{purpose}:").map_err(io)?;
        for line in lines {
            writeln!(self.out, "  {line}").map_err(io)?;
        }
        self.record(DemoStep::Commands {
            purpose: purpose.to_string(),
            commands: lines.iter().map(|l| l.to_string()).collect(),
        });
        Ok(())
    }

    fn record(&mut self, step: DemoStep) {
        if let Some(section) = self.sections.last_mut() {
            section.steps.push(step);
        }
    }
}

fn io(e: std::io::Error) -> OpError {
    OpError::io(Path::new("<stdout>"), e)
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
    let mut told = Story {
        out,
        sections: Vec::new(),
    };
    let result = story(&root, &mut told);
    let kept = if keep {
        Some(root.clone())
    } else {
        let _ = fs::remove_dir_all(&root);
        None
    };
    result?;
    Ok(DemoRun {
        sections: told.sections,
        kept,
        elapsed: started.elapsed(),
    })
}

fn story(root: &Path, story: &mut Story<'_>) -> Result<(), OpError> {
    let remote = root.join("team.git");
    Repository::init_bare(&remote)
        .and_then(|r| r.set_head("refs/heads/main"))
        .map_err(|e| git("creating the bare remote", e))?;

    story.heading("The setup this demo stands for")?;
    story.commands(
        "What Alice runs once in her clone, and Bob after cloning; below, the demo shows the \
         team memory at work through teammem's library (it wires no agent and touches nothing \
         outside its temp folder)",
        &[
            "alice$ teammem init --current-branch --fix-gitignore   # commits its .gitignore lines alone",
            "alice$ git push",
            "alice$ teammem install-hooks",
            "alice$ teammem install-agent --client claude   # and --client qwen, --client codex",
            "bob$ git clone TEAM-REMOTE && teammem install-hooks && teammem install-agent --client claude",
        ],
    )?;

    story.heading("Alice starts the team memory and syncs")?;
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
    say_sync(story, &alice, &sync_now(&alice)?)?;

    story.heading("The memory file as Alice's add wrote it")?;
    let release = format!("{TEAM_DIR}/project/release-train.md");
    let written = fs::read_to_string(alice.dir.join(&release))
        .map_err(|e| OpError::io(alice.dir.join(&release), e))?;
    writeln!(story.out, "alice$ cat {release}\n{written}").map_err(io)?;
    story.record(DemoStep::MemoryWritten {
        who: "alice".into(),
        path: release.clone(),
        text: written,
    });

    story.heading("Bob clones, adds a memory and syncs")?;
    let bob = new_clone(root, "bob", "Bob", &remote, true)?;
    remember(
        &bob,
        MemoryType::Reference,
        "On-call runbooks",
        "Runbooks live in the ops wiki under /oncall",
        "See the ops wiki, section On-call.\n",
    )?;
    say_sync(story, &bob, &sync_now(&bob)?)?;

    story.heading("Bob tries to save a token in team memory")?;
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
    let (message, refused) = match refused {
        Err(err) => {
            let text = err.to_string().replace(&token, "[hidden]");
            let shown: Vec<&str> = text.lines().take(2).collect();
            writeln!(story.out, "refused: {}", shown.join("\n  ")).map_err(io)?;
            (shown.join("\n"), true)
        }
        Ok(_) => {
            writeln!(story.out, "not refused (unexpected)").map_err(io)?;
            ("not refused (unexpected)".to_string(), false)
        }
    };
    story.record(DemoStep::SecretRefused {
        who: "bob".into(),
        message,
        refused,
    });

    story.heading("Alice and Bob both edit the release train memory")?;
    edit_body(
        &alice,
        &release,
        "Releases go out on Wednesday at 10:00 UTC.\n",
    )?;
    edit_body(&bob, &release, "Releases go out on Tuesday at 14:00 UTC.\n")?;
    say_sync(story, &alice, &sync_now(&alice)?)?;
    let bobs = sync_now(&bob)?;
    say_sync(story, &bob, &bobs)?;
    for warning in &bobs.warnings {
        writeln!(story.out, "  {warning}").map_err(io)?;
    }
    writeln!(story.out, "Bob's team memory now holds:").map_err(io)?;
    let files: Vec<String> = team_files(&bob.dir.join(TEAM_DIR).join("project"))?
        .into_iter()
        .map(|file| format!("project/{file}"))
        .collect();
    for file in &files {
        writeln!(story.out, "  {file}").map_err(io)?;
    }
    story.record(DemoStep::TwoVersions {
        who: "bob".into(),
        files,
    });

    story.heading("What Bob's agent receives at session start")?;
    let bob_now = Project::open_with(&bob.dir, bob.project.env.clone())?;
    say_context(story, "bob", &bob_now)?;

    story.heading("Alice syncs and reviews what Bob's sync brought")?;
    let alice_repo = crate::git::repo::open_work_tree(&alice.dir)?;
    let before = head(&alice_repo)?;
    say_sync(story, &alice, &sync_now(&alice)?)?;
    let after = head(&alice_repo)?;
    let review = review::review_range(&alice_repo, &before, &after)?;
    let markdown = review_format::markdown(&review);
    write!(story.out, "{markdown}").map_err(io)?;
    story.record(DemoStep::Review {
        who: "alice".into(),
        markdown,
    });

    story.heading("Bob keeps Alice's version, and both agents see one memory again")?;
    let conflict = resolve::find(&bob_now, "project/release-train.md")?;
    let done = resolve::resolve(&bob_now, &conflict, Keep::Theirs)?;
    writeln!(
        story.out,
        "bob$ teammem resolve project/release-train.md --theirs\nResolved {}:{}: kept the \
         version at {}; removed {}.",
        done.scope, done.memory, done.memory, done.copy
    )
    .map_err(io)?;
    story.record(DemoStep::ConflictResolved {
        who: "bob".into(),
        memory: format!("{}:{}", done.scope, done.memory),
        kept: done.memory.to_string(),
        removed: done.copy.to_string(),
    });
    say_sync(story, &bob, &sync_now(&bob)?)?;
    say_sync(story, &alice, &sync_now(&alice)?)?;
    let alice_now = Project::open_with(&alice.dir, alice.project.env.clone())?;
    say_context(story, "alice", &alice_now)?;

    story.heading("Now in your repository")?;
    story.commands(
        "In a clone of your repository, with its remote: `teammem init` there sets up branch \
         mode, the team memory on a branch of its own (the demo above shows current-branch \
         mode, `teammem init --current-branch`, Qwen Code's own model); README.md, \"Quick \
         start\", says each step and what each client then asks of you",
        &[
            "teammem init",
            "teammem sync",
            "teammem install-hooks",
            "teammem install-agent --client claude",
            "teammem install-agent --client qwen",
            "teammem install-agent --client codex",
        ],
    )?;
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
fn say_sync(story: &mut Story<'_>, who: &Teammate, outcome: &SyncOutcome) -> Result<(), OpError> {
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
    let name = who.name.to_lowercase();
    writeln!(story.out, "{name}$ teammem sync\n{line}").map_err(io)?;
    story.record(DemoStep::Sync {
        who: name,
        summary: line,
        warnings: outcome.warnings.clone(),
    });
    Ok(())
}

/// `teammem context` as `who`'s agent receives it at session start.
fn say_context(story: &mut Story<'_>, who: &str, project: &Project) -> Result<(), OpError> {
    let text = context::render(&context::build(project, None)?, HookFormat::Plain);
    writeln!(story.out, "{who}$ teammem context").map_err(io)?;
    write!(story.out, "{text}").map_err(io)?;
    story.record(DemoStep::AgentContext {
        who: who.into(),
        text,
    });
    Ok(())
}

/// How many memory files commit `sha` changed in the team folder (against its first parent),
/// and whether it changed the index too.
fn changed_in_commit(dir: &Path, sha: &str) -> Result<(usize, bool), OpError> {
    let repo = crate::git::repo::open_work_tree(dir)?;
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
