//! `teammem prompt-context`: a UserPromptSubmit hook that gives each turn the few gated
//! memories relevant to its prompt, each once per session, and nothing when nothing is
//! relevant — failing open and silent.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Run, Sandbox, memory_text, write};

const TOKEN_TAIL: &str = "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";

fn project(sb: &Sandbox) -> PathBuf {
    let repo = sb.repo("project");
    crate::common::write_database_and_release_memories(&repo);
    write(
        &repo.join(".qwen/team-memory/reference/staging-token.md"),
        &memory_text(
            "Staging deploy token",
            "How the staging deploy authenticates",
            "reference",
            &format!("The staging deploy uses ghp_{TOKEN_TAIL} as its token.\n"),
        ),
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "team memory"]);
    repo
}

fn prompt(session: &str, text: &str) -> String {
    serde_json::json!({
        "session_id": session,
        "transcript_path": "/nowhere/transcript.jsonl",
        "cwd": "/ignored",
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
    })
    .to_string()
}

fn ask(sb: &Sandbox, repo: &Path, hook: &str, input: &str) -> Run {
    crate::common::prompt_turn(sb, repo, hook, input, &[])
}

/// The injected text of a hook's output; empty when nothing was printed.
fn added(run: &Run) -> String {
    crate::common::hook_context(run, "UserPromptSubmit")
}

const DATABASE_PROMPT: &str = "How should the integration tests reach the Postgres database?";

#[test]
fn the_relevant_team_memory_comes_once_per_session() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    for hook in ["claude", "codex", "qwen"] {
        let session = format!("s-{hook}");
        let text = added(&ask(&sb, &repo, hook, &prompt(&session, DATABASE_PROMPT)));
        assert!(
            text.contains("Use the real database in integration tests"),
            "{text}"
        );
        assert!(text.contains("team:feedback/real-database.md"), "{text}");
        // Its body, delimited as data, with who last changed it and its age.
        assert!(
            text.contains("<memory-data source=\"team:feedback/real-database.md\">"),
            "{text}"
        );
        assert!(text.contains("a mocked test passed"), "{text}");
        assert!(text.contains("last changed by Test User"), "{text}");
        assert!(text.contains("today"), "{text}");
        assert!(!text.contains("Releases leave on Tuesdays"), "{text}");

        // The same prompt again in the same session: nothing new to give.
        let again = ask(&sb, &repo, hook, &prompt(&session, DATABASE_PROMPT));
        assert_eq!(again.stdout, "", "{hook}: {}", again.stdout);
        // A different question in the same session gets its own memory, not the first.
        let text = added(&ask(
            &sb,
            &repo,
            hook,
            &prompt(
                &session,
                "When does the release train leave, and when must I merge?",
            ),
        ));
        assert!(text.contains("Releases leave on Tuesdays"), "{text}");
        assert!(!text.contains("Use the real database"), "{text}");
    }
    // Another session has not seen it.
    let text = added(&ask(
        &sb,
        &repo,
        "claude",
        &prompt("other", DATABASE_PROMPT),
    ));
    assert!(text.contains("Use the real database"), "{text}");
}

#[test]
fn a_withheld_memory_never_comes_and_an_irrelevant_prompt_gets_nothing() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    for hook in ["claude", "plain"] {
        let run = ask(
            &sb,
            &repo,
            hook,
            &prompt(
                hook,
                "Which token does the staging deploy use to authenticate?",
            ),
        );
        assert!(
            !run.stdout.contains("Staging deploy token"),
            "{}",
            run.stdout
        );
        assert!(!run.stdout.contains(TOKEN_TAIL), "{}", run.stdout);
        assert!(!run.stderr.contains(TOKEN_TAIL), "{}", run.stderr);
    }
    for text in ["Please write a haiku about autumn leaves.", "ok", "   "] {
        let run = ask(&sb, &repo, "claude", &prompt("irrelevant", text));
        assert_eq!(run.stdout, "", "{text}: {}", run.stdout);
    }
}

#[test]
fn bad_input_and_no_project_fail_open_and_silent() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    for input in ["", "not json", "{\"prompt\": 5}", "[]", "{}"] {
        let run = ask(&sb, &repo, "codex", input);
        assert_eq!(run.stdout, "", "{input:?}");
    }
    // Without a session id it still answers (and cannot remember).
    let input = serde_json::json!({"prompt": DATABASE_PROMPT}).to_string();
    let text = added(&ask(&sb, &repo, "claude", &input));
    assert!(text.contains("Use the real database"), "{text}");

    // Outside a repository: the user scope only, here empty — nothing, exit 0.
    let plain = sb.path().join("elsewhere");
    std::fs::create_dir_all(&plain).unwrap();
    let run = ask(&sb, &plain, "claude", &prompt("x", DATABASE_PROMPT));
    assert_eq!(run.stdout, "");
    // A broken repository: nothing on stdout, a line on stderr, exit 0.
    let broken = sb.repo("broken");
    sb.git(&broken, ["config", "core.repositoryformatversion", "9"]);
    let run = ask(&sb, &broken, "claude", &prompt("x", DATABASE_PROMPT));
    assert_eq!(run.stdout, "");
}

#[test]
fn qwen_gets_team_memories_only_and_plain_prints_text() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let user = sb.base().join("memories/user/postgres-habit.md");
    write(
        &user,
        &memory_text(
            "I run integration tests against Postgres in Docker",
            "Postgres for integration tests runs in Docker",
            "user",
            "docker compose up postgres before the integration tests\n",
        ),
    );
    let claude = added(&ask(&sb, &repo, "claude", &prompt("c", DATABASE_PROMPT)));
    assert!(claude.contains("Postgres in Docker"), "{claude}");
    assert!(claude.contains("user:user/postgres-habit.md"), "{claude}");
    let qwen = added(&ask(&sb, &repo, "qwen", &prompt("q", DATABASE_PROMPT)));
    assert!(!qwen.contains("Postgres in Docker"), "{qwen}");
    assert!(qwen.contains("Use the real database"), "{qwen}");

    let plain = ask(&sb, &repo, "plain", &prompt("p", DATABASE_PROMPT));
    assert!(
        plain.stdout.starts_with("# Memory relevant to this prompt"),
        "{}",
        plain.stdout
    );
}

#[test]
fn a_session_started_with_the_index_still_gets_the_body_once() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let start = serde_json::json!({"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"});
    sb.teammem_with_input(
        &repo,
        ["session-start", "--hook", "claude"],
        &start.to_string(),
    )
    .expect_code(0);
    // The index gave the title; the turn gives the body, once.
    let text = added(&ask(&sb, &repo, "claude", &prompt("s", DATABASE_PROMPT)));
    assert!(text.contains("a mocked test passed"), "{text}");
    assert_eq!(
        ask(&sb, &repo, "claude", &prompt("s", DATABASE_PROMPT)).stdout,
        ""
    );
    // Compaction drops the turns: the body may come again.
    let compact = serde_json::json!({"session_id": "s", "source": "compact"});
    sb.teammem_with_input(
        &repo,
        ["session-start", "--hook", "claude"],
        &compact.to_string(),
    )
    .expect_code(0);
    let text = added(&ask(&sb, &repo, "claude", &prompt("s", DATABASE_PROMPT)));
    assert!(text.contains("a mocked test passed"), "{text}");
}

#[test]
fn surfaced_memories_are_counted_for_stale_and_never_committed() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    ask(&sb, &repo, "claude", &prompt("s", DATABASE_PROMPT));
    sb.teammem(&repo, ["cite", "team:project/release-train.md"])
        .expect_code(0);
    let run = sb.teammem(&repo, ["stale", "--days", "0", "--scope", "team", "--json"]);
    run.expect_code(0);
    let stale: Value = serde_json::from_str(&run.stdout).unwrap();
    let find = |id: &str| {
        stale
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in {stale}"))
    };
    let surfaced = find("feedback/real-database.md");
    assert_eq!(surfaced["surfaced_count"], 1, "{surfaced}");
    // Surfaced unasked is not a use: it still counts from its first commit.
    assert_eq!(surfaced["since_what"], "first-commit", "{surfaced}");
    let cited = find("project/release-train.md");
    assert_eq!(cited["usage_count"], 1, "{cited}");
    assert_eq!(cited["since_what"], "last-usage", "{cited}");
    let human = sb.teammem(&repo, ["stale", "--days", "0", "--scope", "team"]);
    assert!(
        human.stdout.contains("surfaced 1 time unasked"),
        "{}",
        human.stdout
    );
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
}
