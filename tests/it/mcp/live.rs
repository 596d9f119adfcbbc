//! A long-lived `teammem mcp` answers every search from recall's indexes in memory, told by
//! its folder watches what changed — and answers exactly as a fresh `teammem recall` does at
//! the same moment, while other processes change the memory folders under it: a shell
//! appending, making nested folders, moving and renaming over (as editors save), the git CLI
//! pulling a teammate's memory, a folder removed, a user-scope edit, the CLI adding a private
//! memory in a folder that did not exist, and a save through the server itself.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::mcp_sdk::{self, call, ok_text, save};
use crate::common::netsync::Team;
use crate::common::{memory_text, write};

const QUERIES: [&str; 3] = ["postgres database", "release deploy", "staging port"];

/// What a search answered: each memory's id and name, best first.
type Hits = Vec<(String, String)>;

/// Another process acting while the server runs.
fn run(argv: &[&str], cwd: &Path) -> Value {
    json!({"run": {"argv": argv, "cwd": cwd}})
}

fn sh(script: &str, cwd: &Path) -> Value {
    run(&["sh", "-c", script], cwd)
}

/// The ids a `memory_search` answer shows, best first, with each memory's name.
fn server_hits(step: &Value) -> Hits {
    let text = ok_text(step);
    let mut hits = Vec::new();
    for block in text.split("<memory id=\"").skip(1) {
        let id = block.split('"').next().unwrap().to_string();
        let name = block
            .lines()
            .find_map(|l| l.strip_prefix("name: "))
            .unwrap_or_else(|| panic!("no name in {block}"))
            .to_string();
        hits.push((id, name));
    }
    hits
}

/// The ids `teammem recall --json` printed, best first, with each memory's name.
fn cli_hits(step: &Value) -> Hits {
    assert_eq!(step["status"], json!(0), "{step}");
    let out: Value = serde_json::from_str(step["stdout"].as_str().unwrap()).unwrap();
    out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                format!(
                    "{}:{}",
                    h["scope"].as_str().unwrap(),
                    h["id"].as_str().unwrap()
                ),
                h["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_long_lived_server_answers_as_a_fresh_recall_through_edits_from_other_processes() {
    let team = Team::new();
    // The user let agents write team memory directly (not pending for a person).
    team.sb.allow_agent_team_saves("commit");
    let sb = &team.sb;
    let me = &team.me;
    let dir = me.join(".qwen/team-memory");
    write(
        &dir.join("project/staging-host.md"),
        &memory_text(
            "Staging host",
            "Where staging runs",
            "project",
            "Staging runs on db-staging, port 5433, beside the release tooling.\n",
        ),
    );
    write(
        &sb.base().join("memories/user/database-habits.md"),
        &memory_text(
            "Database habits",
            "How the user works with databases",
            "user",
            "The user reads postgres query plans before any database change.\n",
        ),
    );
    // The teammate's memory waits on the remote until my clone pulls it.
    write(
        &team
            .mate
            .join(".qwen/team-memory/project/postgres-upgrade.md"),
        &memory_text(
            "Postgres upgrade",
            "The database moves to Postgres 16",
            "project",
            "The postgres database upgrade lands after the next release deploy.\n",
        ),
    );
    sb.git(&team.mate, ["add", "-A"]);
    sb.git(
        &team.mate,
        ["commit", "-q", "-m", "teammate: postgres upgrade"],
    );
    sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let staged = sb.path().join("staged");
    std::fs::create_dir_all(&staged).unwrap();
    write(
        &staged.join("staging-db.md"),
        &memory_text(
            "Staging database",
            "The staging database and its port",
            "reference",
            "The staging postgres database listens on port 5433 of db-staging.\n",
        ),
    );
    write(
        &staged.join("use-postgres.md"),
        &memory_text(
            "Use the real database",
            "Integration tests hit a real Postgres",
            "feedback",
            "Integration tests hit a real postgres database; a release deploy waits for them.\n",
        ),
    );

    let teammem = env!("CARGO_BIN_EXE_teammem");
    let mut steps: Vec<Value> = Vec::new();
    // Each checkpoint: every query through the server, then through the CLI, at one moment.
    let mut checkpoints: Vec<(&str, usize)> = Vec::new();
    let mut checkpoint = |steps: &mut Vec<Value>, label: &'static str| {
        checkpoints.push((label, steps.len()));
        for query in QUERIES {
            steps.push(call("memory_search", json!({"query": query, "limit": 5})));
            steps.push(run(&[teammem, "recall", "--json", "--max", "5", query], me));
        }
    };
    checkpoint(&mut steps, "at start");
    steps.push(sh(
        "printf 'Deploys wait for the release train.\\n' >> .qwen/team-memory/project/release-train.md && \
         mkdir -p .qwen/team-memory/reference/infra/db && \
         cp ../staged/staging-db.md .qwen/team-memory/reference/infra/db/staging-db.md",
        me,
    ));
    steps.push(sh(
        &format!(
            "printf 'It also checks the staging port first.\\n' >> {}",
            sb.base().join("memories/user/database-habits.md").display()
        ),
        me,
    ));
    checkpoint(&mut steps, "after appends and a nested new folder");
    steps.push(run(&["git", "pull", "-q", "--ff-only"], me));
    checkpoint(&mut steps, "after git pull of a teammate's memory");
    steps.push(sh(
        "mv .qwen/team-memory/project/postgres-upgrade.md .qwen/team-memory/reference/postgres-upgrade.md && \
         cp ../staged/use-postgres.md .qwen/team-memory/feedback/.use-postgres.md.tmp && \
         mv .qwen/team-memory/feedback/.use-postgres.md.tmp .qwen/team-memory/feedback/use-postgres.md",
        me,
    ));
    checkpoint(&mut steps, "after a move and a rename-over");
    steps.push(sh("rm -r .qwen/team-memory/reference/infra", me));
    // The private memory folder does not exist until this CLI run makes it.
    steps.push(run(
        &[
            teammem,
            "add",
            "--scope",
            "private",
            "--type",
            "project",
            "--name",
            "Staging port note",
            "--description",
            "Which port staging listens on",
            "--body",
            "The staging postgres database listens on port 5433.",
        ],
        me,
    ));
    checkpoint(
        &mut steps,
        "after rm -r of a folder and a private memory in a new folder",
    );
    steps.push(save(
        "team",
        "project",
        "Database failover",
        "The postgres database fails over to the staging port 5434 replica.",
    ));
    checkpoint(&mut steps, "after a save through the server");

    let out = mcp_sdk::drive(sb, me, Value::Array(steps));
    let done = out["steps"].as_array().unwrap();
    for step in done.iter().filter(|s| s.get("status").is_some()) {
        assert_eq!(step["status"], json!(0), "{step}");
    }
    let mut seen: Vec<(&str, Vec<Hits>)> = Vec::new();
    for (label, at) in &checkpoints {
        let mut answers = Vec::new();
        for (n, query) in QUERIES.iter().enumerate() {
            let server = server_hits(&done[at + 2 * n]);
            let cli = cli_hits(&done[at + 2 * n + 1]);
            assert_eq!(
                server, cli,
                "{label}, query {query:?}: the server differs from recall"
            );
            answers.push(server);
        }
        seen.push((label, answers));
    }
    let ids = |checkpoint: usize, query: usize| -> Vec<&str> {
        seen[checkpoint].1[query]
            .iter()
            .map(|(id, _)| id.as_str())
            .collect()
    };
    // The changes themselves are in the answers (a server that never looked again would
    // differ from recall above; these say what a user sees).
    assert!(!ids(0, 2).contains(&"team:reference/infra/db/staging-db.md"));
    assert!(
        ids(1, 2).contains(&"team:reference/infra/db/staging-db.md"),
        "{:?}",
        ids(1, 2)
    );
    assert!(
        ids(1, 2).contains(&"user:user/database-habits.md"),
        "{:?}",
        ids(1, 2)
    );
    assert!(!ids(1, 0).contains(&"team:project/postgres-upgrade.md"));
    assert!(
        ids(2, 0).contains(&"team:project/postgres-upgrade.md"),
        "{:?}",
        ids(2, 0)
    );
    assert!(
        ids(3, 0).contains(&"team:reference/postgres-upgrade.md"),
        "{:?}",
        ids(3, 0)
    );
    assert!(!ids(3, 0).contains(&"team:project/postgres-upgrade.md"));
    assert!(!ids(2, 1).contains(&"team:feedback/use-postgres.md"));
    assert!(
        ids(3, 1).contains(&"team:feedback/use-postgres.md"),
        "{:?}",
        ids(3, 1)
    );
    assert!(ids(3, 2).contains(&"team:reference/infra/db/staging-db.md"));
    assert!(!ids(4, 2).contains(&"team:reference/infra/db/staging-db.md"));
    assert!(!ids(3, 2).contains(&"private:project/staging-port-note.md"));
    assert!(
        ids(4, 2).contains(&"private:project/staging-port-note.md"),
        "{:?}",
        ids(4, 2)
    );
    assert!(
        ids(5, 0).contains(&"team:project/database-failover.md"),
        "{:?}",
        ids(5, 0)
    );
}
