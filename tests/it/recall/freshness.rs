//! `teammem recall` with several results of different histories: each hit carries its own
//! freshness and author (the history is walked once for all of them).

use crate::common;
use crate::common::lifecycle;

use common::Sandbox;
use lifecycle::{private_dir, put, team_dir};

fn commit_as(sb: &Sandbox, repo: &std::path::Path, who: &str, days_ago: i64, message: &str) {
    let date = format!("--date=@{}", lifecycle::now() - days_ago * 86_400 - 60);
    let name = format!("user.name={who}");
    let email = format!("user.email={}@example.com", who.to_lowercase());
    sb.git(repo, ["add", "-A"]);
    sb.git(
        repo,
        [
            "-c", &name, "-c", &email, "commit", "-q", "-m", message, &date,
        ],
    );
}

#[test]
fn every_hit_has_its_own_commit_author_and_age_or_its_file_time() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let team = team_dir(&repo);
    put(
        &team,
        "project/rollback-a.md",
        "Rollback a",
        "Rollback",
        "Rollback one.\n",
    );
    commit_as(&sb, &repo, "Alice", 10, "a");
    put(
        &team,
        "project/rollback-b.md",
        "Rollback b",
        "Rollback",
        "Rollback two.\n",
    );
    commit_as(&sb, &repo, "Bob", 3, "b");
    put(
        &team,
        "project/rollback-c.md",
        "Rollback c",
        "Rollback",
        "Rollback three.\n",
    );
    commit_as(&sb, &repo, "Carol", 1, "c");
    // Committed, then edited in the work tree: as fresh as its file, no author.
    put(
        &team,
        "project/rollback-c.md",
        "Rollback c",
        "Rollback",
        "Rollback 3.\n",
    );
    // Never committed, and a private memory outside the repository.
    put(
        &team,
        "project/rollback-d.md",
        "Rollback d",
        "Rollback",
        "Rollback four.\n",
    );
    put(
        &private_dir(&sb, &repo),
        "project/rollback-e.md",
        "Rollback e",
        "Rollback",
        "Rollback five.\n",
    );

    let run = sb.teammem(&repo, ["recall", "rollback", "--max", "10", "--json"]);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut seen: Vec<(String, String, String, String)> = v["hits"]
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
                h["changed_from"].as_str().unwrap().to_string(),
                h["changed_by"].as_str().unwrap_or("-").to_string(),
                h["age"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let row = |id: &str, from: &str, by: &str, age: &str| {
        (
            id.to_string(),
            from.to_string(),
            by.to_string(),
            age.to_string(),
        )
    };
    assert_eq!(
        seen,
        [
            row("private:project/rollback-e.md", "file-time", "-", "today"),
            row(
                "team:project/rollback-a.md",
                "commit",
                "Alice",
                "10 days old"
            ),
            row("team:project/rollback-b.md", "commit", "Bob", "3 days old"),
            row("team:project/rollback-c.md", "file-time", "-", "today"),
            row("team:project/rollback-d.md", "file-time", "-", "today"),
        ]
    );
}
