//! `teammem forget` and `teammem remember`.

use crate::common;
use crate::common::lifecycle;

use std::fs;

use common::{Sandbox, write};
use lifecycle::{private_dir, put, team_dir};

const LEGACY: &str = "---\nname: Feedback\ndescription: Old topic file\ntype: feedback\n---\n- First rule here\n  - Why: one\n- Second rule here\n  - Why: two\n- Third rule here\n";

#[test]
fn forget_removes_exactly_the_entry_or_file() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    write(&dir.join("feedback/topic.md"), LEGACY);
    put(&dir, "project/keep.md", "Keep me", "stays", "x\n");
    put(&dir, "project/drop.md", "Drop me", "goes", "y\n");
    sb.teammem(&repo, ["index", "--scope", "private"])
        .expect_code(0);

    let run = sb.teammem(&repo, ["forget", "feedback/topic.md:2", "project/drop.md"]);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        "Forgot private:feedback/topic.md:2 — Second rule here\nForgot private:project/drop.md — Drop me\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("feedback/topic.md")).unwrap(),
        "---\nname: Feedback\ndescription: Old topic file\ntype: feedback\n---\n- First rule here\n  - Why: one\n- Third rule here\n"
    );
    assert!(!dir.join("project/drop.md").exists());
    assert!(dir.join("project/keep.md").exists());
    let index = fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(
        !index.contains("drop.md") && index.contains("keep.md"),
        "{index}"
    );

    // One bad id: nothing is deleted.
    let bad = sb.teammem(&repo, ["forget", "project/keep.md", "project/nope.md"]);
    bad.expect_code(2);
    assert!(dir.join("project/keep.md").exists());
    sb.teammem(&repo, ["forget", "feedback/topic.md:9"])
        .expect_code(2);
}

#[test]
fn forget_by_query_lists_then_deletes_only_with_yes() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    put(
        &team_dir(&repo),
        "project/staging.md",
        "Staging server address",
        "where staging is",
        "x\n",
    );
    put(
        &private_dir(&sb, &repo),
        "project/other.md",
        "Unrelated memory",
        "nothing",
        "y\n",
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "team memory"]);

    let list = sb.teammem(&repo, ["forget", "--query", "staging"]);
    list.expect_code(0);
    assert_eq!(
        list.stdout,
        "Would forget (run again with --yes to delete):\n  team:project/staging.md — Staging server address\n"
    );
    assert!(team_dir(&repo).join("project/staging.md").exists());

    sb.teammem(&repo, ["forget", "--query", "staging", "--yes"])
        .expect_code(0);
    assert!(!team_dir(&repo).join("project/staging.md").exists());
    assert!(private_dir(&sb, &repo).join("project/other.md").exists());
    // Left for the next sync to commit: a work-tree change, nothing committed.
    assert_eq!(sb.git(&repo, ["log", "--oneline"]).lines().count(), 2);
    let status = sb.git(&repo, ["status", "--porcelain"]);
    assert!(
        status.contains(" D .qwen/team-memory/project/staging.md"),
        "{status}"
    );
}

#[test]
fn remember_writes_good_patches_and_drops_each_bad_one_with_its_reason() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &private_dir(&sb, &repo),
        "feedback/existing.md",
        "Prefer small pull requests",
        "d",
        "x\n",
    );
    let input = r#"[
      {"type": "feedback", "name": "Use the real database in tests", "description": "Integration tests hit Postgres", "why": "mocks lied", "how_to_apply": "start the test database"},
      {"type": "project", "summary": "Too short"},
      {"type": "project", "summary": "Should we pin the toolchain?"},
      {"type": "project", "summary": "Currently refactoring the parser"},
      {"type": "project", "summary": "Parser work is temporary for now"},
      {"type": "project", "summary": "Notes kept for this task only"},
      {"type": "feedback", "summary": "prefer small pull requests"},
      {"type": "feedback", "name": "Use the REAL database in tests"},
      {"type": "opinion", "summary": "Something long enough here"}
    ]"#;
    let run = sb.teammem_with_input(&repo, ["remember", "--json"], input);
    run.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["written"],
        serde_json::json!([{"patch": 0, "scope": "private", "id": "feedback/use-the-real-database-in-tests.md"}])
    );
    let reasons: Vec<(u64, String)> = v["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["patch"].as_u64().unwrap(),
                d["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (1, "too-short".to_string()),
            (2, "question".to_string()),
            (3, "about-the-moment".to_string()),
            (4, "about-the-moment".to_string()),
            (5, "about-the-moment".to_string()),
            (6, "duplicate".to_string()),
            (7, "duplicate".to_string()),
            (8, "invalid".to_string()),
        ]
    );
    assert_eq!(
        fs::read_to_string(
            private_dir(&sb, &repo).join("feedback/use-the-real-database-in-tests.md")
        )
        .unwrap(),
        "---\nname: Use the real database in tests\ndescription: Integration tests hit Postgres\ntype: feedback\n---\nWhy: mocks lied\nHow to apply: start the test database\n"
    );
    let index = fs::read_to_string(private_dir(&sb, &repo).join("MEMORY.md")).unwrap();
    assert!(
        index.contains("use-the-real-database-in-tests.md"),
        "{index}"
    );

    // One patch per line works too; "now" inside a word ("known") is not about the moment.
    let lines = "{\"type\": \"project\", \"summary\": \"The known flaky test is in io.rs\"}\n";
    let run = sb.teammem_with_input(&repo, ["remember"], lines);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        "Remembered private:project/the-known-flaky-test-is-in-io-rs.md\n"
    );
}

#[test]
fn remember_refuses_a_secret_bound_for_team_memory() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let secret = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
    let input = format!(
        "{{\"type\": \"reference\", \"name\": \"GitHub token for the release bot\", \"why\": \"use {secret}\", \"scope\": \"team\"}}\n\
         {{\"type\": \"reference\", \"name\": \"Release bot lives in the ops vault\", \"scope\": \"team\"}}\n"
    );
    let run = sb.teammem_with_input(&repo, ["remember"], &input);
    run.expect_code(1);
    assert!(run.stdout.contains("Dropped \"GitHub token for the release bot\" (secret): refusing to write .qwen/team-memory/reference/github-token-for-the-release-bot.md"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("Remembered team:reference/release-bot-lives-in-the-ops-vault.md"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
    // The fix offered is one a remember user can take: remember has no --redact.
    assert!(
        run.stdout.contains("remove the secret from the patch"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("teammem redact"), "{}", run.stdout);
    assert!(!run.stdout.contains("--redact"), "{}", run.stdout);
    assert!(
        !team_dir(&repo)
            .join("reference/github-token-for-the-release-bot.md")
            .exists()
    );
    let status = sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("github-token"), "{status}");
}

#[test]
fn forget_refuses_to_rewrite_a_team_file_that_already_holds_a_secret() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    // A legacy team file that came in with a secret (written by hand, not through teammem).
    let secret = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
    let text = format!(
        "---\nname: Feedback\ndescription: Old topic file\ntype: feedback\n---\n- First rule here\n- Release bot token {secret}\n"
    );
    let file = team_dir(&repo).join("feedback/topic.md");
    write(&file, &text);

    let run = sb.teammem(&repo, ["forget", "team:feedback/topic.md:1"]);
    run.expect_code(1);
    assert!(
        run.stderr.contains("the file already holds the secret"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("--redact"), "{}", run.stderr);
    assert!(!run.stderr.contains(secret) && !run.stdout.contains(secret));
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
}
