//! The live recall handle a long-lived process (the MCP server) keeps: told which paths
//! changed, it answers every query exactly as `recall_unaged` reads the files — through a
//! teammate's pushed memories pulled with git, CLI writes, and a new process reopening it.

use crate::common;
use crate::common::lifecycle;

use std::path::{Path, PathBuf};

use common::Sandbox;
use lifecycle::{private_dir, put, team_dir};
use teammem::ops::{LiveRecall, Project, recall_live, recall_unaged};
use teammem::scope::{Environment, ScopeKind};

const QUERIES: &[&str] = &[
    "postgres migration",
    "rollback deploy",
    "release checklist",
    "feedback on tests",
    "数据库",
    "nothing matches this",
];

fn project(sb: &Sandbox, repo: &Path) -> Project {
    let env = Environment {
        base_dir: Some(sb.base()),
        home: Some(sb.home()),
        ..Default::default()
    };
    Project::open_with(repo, env).unwrap()
}

/// Every query through `live` gives the JSON that `recall_unaged` gives.
fn same_answers(project: &Project, live: &mut LiveRecall, scopes: &[ScopeKind]) {
    for query in QUERIES {
        for max in [3, 50] {
            let want = recall_unaged(project, scopes, query, max, 200).unwrap();
            let got = recall_live(project, live, scopes, query, max, 200).unwrap();
            assert_eq!(
                serde_json::to_value(&got).unwrap(),
                serde_json::to_value(&want).unwrap(),
                "query {query:?}"
            );
        }
    }
}

fn names(sb: &Sandbox, repo: &Path, range: &str) -> Vec<PathBuf> {
    sb.git(repo, ["diff", "--name-only", range])
        .lines()
        .map(|l| repo.join(l))
        .collect()
}

#[test]
fn a_live_handle_follows_a_teammates_pushed_memories_and_cli_writes() {
    let sb = Sandbox::new();
    let remote = sb.bare("remote");
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let team = team_dir(&repo);
    for i in 0..40 {
        let body = match i % 4 {
            0 => "The postgres migration runs before the deploy.\n",
            1 => "Rollback the deploy when the smoke test fails.\n",
            2 => "Use the release checklist; 数据库 backups first.\n",
            _ => "Tests hit a real database, never a mock.\n",
        };
        let kind = ["project", "feedback", "reference", "user"][i % 4];
        put(
            &team,
            &format!("{kind}/note-{i:02}.md"),
            &format!("Note {i}"),
            "What we learnt",
            body,
        );
    }
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "team memories"]);
    sb.git(&repo, ["remote", "add", "origin", remote.to_str().unwrap()]);
    sb.git(&repo, ["push", "-q", "-u", "origin", "main"]);
    let mate = sb.path().join("mate");
    sb.git(
        sb.path(),
        [
            "clone",
            "-q",
            remote.to_str().unwrap(),
            mate.to_str().unwrap(),
        ],
    );
    let private = private_dir(&sb, &repo);
    put(
        &private,
        "feedback/tests.md",
        "Feedback on tests",
        "Tests",
        "Postgres in every test.\n",
    );

    let p = project(&sb, &repo);
    let scopes = [ScopeKind::Team, ScopeKind::Private, ScopeKind::User];
    let mut live = LiveRecall::open(&p, &scopes).unwrap();
    same_answers(&p, &mut live, &scopes);
    let warm = live.report();
    same_answers(&p, &mut live, &scopes);
    assert_eq!(
        live.report(),
        warm,
        "nothing noted: nothing statted or read"
    );

    // The teammate edits, adds (in a new folder), removes and renames memories and pushes.
    let mate_team = team_dir(&mate);
    put(
        &mate_team,
        "project/note-00.md",
        "Note 0",
        "What we learnt",
        "The postgres migration now runs after the deploy, with a rollback.\n",
    );
    put(
        &mate_team,
        "project/db/new-migration.md",
        "Postgres migration order",
        "Migrations",
        "Run migrations in a transaction.\n",
    );
    std::fs::remove_file(mate_team.join("feedback/note-01.md")).unwrap();
    sb.git(
        &mate,
        [
            "mv",
            ".qwen/team-memory/reference/note-02.md",
            ".qwen/team-memory/project/release-checklist.md",
        ],
    );
    sb.git(&mate, ["add", "-A"]);
    sb.git(&mate, ["commit", "-q", "-m", "teammate's memories"]);
    sb.git(&mate, ["push", "-q"]);
    sb.git(&repo, ["pull", "-q", "--ff-only"]);
    // What a watcher reports: each changed file, and the new folder.
    let mut changed = names(&sb, &repo, "HEAD@{1}..HEAD");
    changed.push(team.join("project/db"));
    assert!(changed.len() >= 5, "{changed:?}");
    for path in &changed {
        assert!(live.note_changed(path), "{}", path.display());
    }
    same_answers(&p, &mut live, &scopes);

    // A memory written by `teammem add` in another process, reported by the watcher.
    sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "private",
            "--type",
            "project",
            "--name",
            "Postgres migration rollback",
            "--description",
            "How to undo a migration",
            "--body",
            "Rollback with the down script, then deploy.",
        ],
    )
    .expect_code(0);
    live.note_changed(&private.join("project"));
    same_answers(&p, &mut live, &scopes);

    // A watcher that overflowed: everything is looked at again, answers unchanged.
    live.note_all_changed();
    same_answers(&p, &mut live, &scopes);

    // Another process opens the scopes afresh and answers the same.
    let mut again = LiveRecall::open(&p, &scopes).unwrap();
    same_answers(&p, &mut again, &scopes);
}
