//! `teammem session-start` reads the hook's input: a new, cleared or compacted context gets
//! the whole memory context, a resumed one nothing already in its transcript — at most one
//! line naming what changed — for every client's shape.

use std::fs;
use std::path::Path;

use crate::common::{Run, Sandbox, memory_text, write};

/// A repository with two team memories, committed.
fn project(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("project");
    write(
        &repo.join(".qwen/team-memory/feedback/real-database.md"),
        &memory_text(
            "Use the real database in integration tests",
            "Integration tests must hit a real Postgres, never a mock",
            "feedback",
            "Integration tests connect to a real Postgres instance.\n",
        ),
    );
    write(
        &repo.join(".qwen/team-memory/project/release-train.md"),
        &memory_text(
            "Releases leave on Tuesdays",
            "The release train leaves every Tuesday at noon",
            "project",
            "Merge by Monday evening to make the train.\n",
        ),
    );
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "team memory"]);
    repo
}

fn hook_input(session: &str, source: &str) -> String {
    serde_json::json!({
        "session_id": session,
        "transcript_path": null,
        "cwd": "/ignored",
        "hook_event_name": "SessionStart",
        "source": source,
    })
    .to_string()
}

fn start(sb: &Sandbox, repo: &Path, hook: &str, input: &str) -> Run {
    let run = sb.teammem_with_input(repo, ["session-start", "--hook", hook], input);
    run.expect_code(0);
    run
}

/// The injected text of a hook's output; empty when nothing was printed.
fn context(run: &Run) -> String {
    crate::common::hook_context(run, "SessionStart")
}

#[test]
fn startup_gives_everything_resume_nothing_and_compact_everything_again() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    for hook in ["claude", "codex"] {
        let session = format!("session-{hook}");
        let full = context(&start(&sb, &repo, hook, &hook_input(&session, "startup")));
        assert_eq!(full.matches("Use the real database").count(), 1, "{full}");
        assert_eq!(
            full.matches("Releases leave on Tuesdays").count(),
            1,
            "{full}"
        );

        // Resumed: the transcript holds all of it already.
        let resumed = start(&sb, &repo, hook, &hook_input(&session, "resume"));
        assert_eq!(resumed.stdout, "", "{hook}: {}", resumed.stdout);

        // A teammate's memory arrives between two resumes: one line names it, once.
        write(
            &repo.join(".qwen/team-memory/project/friday-freeze.md"),
            &memory_text(
                "No deploys on Fridays",
                "Friday is frozen",
                "project",
                "Wait.\n",
            ),
        );
        let line = context(&start(&sb, &repo, hook, &hook_input(&session, "resume")));
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.contains("added \"No deploys on Fridays\""), "{line}");
        assert!(line.contains("team:project/friday-freeze.md"), "{line}");
        assert!(!line.contains("Use the real database"), "{line}");
        let again = start(&sb, &repo, hook, &hook_input(&session, "resume"));
        assert_eq!(again.stdout, "", "{}", again.stdout);

        // Compacted or cleared: the context is gone, so all of it comes again.
        for source in ["compact", "clear"] {
            let full = context(&start(&sb, &repo, hook, &hook_input(&session, source)));
            assert_eq!(full.matches("Use the real database").count(), 1, "{full}");
            assert_eq!(full.matches("No deploys on Fridays").count(), 1, "{full}");
        }
        fs::remove_file(repo.join(".qwen/team-memory/project/friday-freeze.md")).unwrap();
        let line = context(&start(&sb, &repo, hook, &hook_input(&session, "resume")));
        assert!(line.contains("removed \"No deploys on Fridays\""), "{line}");
    }
}

#[test]
fn no_input_or_a_malformed_one_gives_the_whole_context() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    for input in ["", "not json", "[1, 2]", "{\"source\": 7}"] {
        let text = context(&start(&sb, &repo, "claude", input));
        assert!(text.contains("Use the real database"), "{input:?}: {text}");
        assert!(text.contains("Team memory sync:"), "{input:?}: {text}");
    }
    // A resume without a session id cannot know what the session holds.
    let text = context(&start(&sb, &repo, "claude", r#"{"source": "resume"}"#));
    assert!(text.contains("Use the real database"), "{text}");
}

#[test]
fn a_resume_under_a_new_id_reads_the_transcript_and_a_corrupt_record_is_ignored() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let full = context(&start(
        &sb,
        &repo,
        "claude",
        &hook_input("first", "startup"),
    ));

    // The client gave the resumed session a new id; its transcript holds the context.
    let transcript = sb.path().join("transcript.jsonl");
    fs::write(
        &transcript,
        format!("{}\n", serde_json::json!({"type": "user", "content": full})),
    )
    .unwrap();
    let input = serde_json::json!({
        "session_id": "second",
        "transcript_path": transcript,
        "hook_event_name": "SessionStart",
        "source": "resume",
    })
    .to_string();
    assert_eq!(start(&sb, &repo, "claude", &input).stdout, "");
    // A transcript without it (or none) gets the context.
    fs::write(&transcript, "{\"type\":\"user\",\"content\":\"hello\"}\n").unwrap();
    let text = context(&start(
        &sb,
        &repo,
        "claude",
        &input.replace("second", "third"),
    ));
    assert!(text.contains("Use the real database"), "{text}");

    // Every record unreadable: a resume is a session teammem knows nothing of.
    let sessions: Vec<_> = fs::read_dir(sb.base().join("projects"))
        .unwrap()
        .flatten()
        .map(|p| p.path().join("sessions"))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    for record in fs::read_dir(&sessions[0]).unwrap().flatten() {
        fs::write(record.path(), "{ torn").unwrap();
    }
    let text = context(&start(&sb, &repo, "claude", &hook_input("first", "resume")));
    assert!(text.contains("Use the real database"), "{text}");
    // Never written into the repository.
    assert_eq!(sb.git(&repo, ["status", "--porcelain", "--ignored"]), "");
}

#[test]
fn qwen_hook_leaves_out_what_qwen_shows_and_still_names_withheld_team_memories() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // A private memory: Qwen Code shows and recalls it itself.
    let projects = sb.base().join("projects");
    let key: String = repo
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    write(
        &projects.join(&key).join("memory/user/editor.md"),
        &memory_text(
            "Prefers vim keybindings",
            "Editor of choice",
            "user",
            "vim\n",
        ),
    );
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    write(
        &repo.join(".qwen/team-memory/reference/ci-token.md"),
        &memory_text(
            "CI token",
            "The CI token",
            "reference",
            &format!("{token}\n"),
        ),
    );
    // Committed past teammem (as a teammate without its hooks would): sync leaves it be.
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "a teammate's token"]);
    let claude = context(&start(&sb, &repo, "claude", &hook_input("c", "startup")));
    assert!(claude.contains("Prefers vim keybindings"), "{claude}");

    let qwen = context(&start(&sb, &repo, "qwen", &hook_input("q", "startup")));
    assert!(!qwen.contains("Prefers vim keybindings"), "{qwen}");
    assert!(
        qwen.contains("Qwen Code shows and recalls them itself"),
        "{qwen}"
    );
    // Qwen Code's team memory off: the team index comes from teammem, gated.
    assert!(qwen.contains("Use the real database"), "{qwen}");
    assert!(
        qwen.contains("Withheld by the memory gate: 1 memory"),
        "{qwen}"
    );
    assert!(!qwen.contains(&token), "{qwen}");
    // Qwen Code does not keep a SessionStart hook's output in the conversation it saves: a
    // resumed Qwen session gets the index again (a Claude Code one gets nothing repeated).
    let resumed = context(&start(&sb, &repo, "qwen", &hook_input("q", "resume")));
    assert!(resumed.contains("Use the real database"), "{resumed}");
    let claude_resumed = start(&sb, &repo, "claude", &hook_input("c", "resume"));
    assert!(
        !claude_resumed.stdout.contains("Use the real database"),
        "{}",
        claude_resumed.stdout
    );

    // Qwen Code's team memory on (current-branch mode): its own index lists the withheld
    // file, and the context says so, with the way out.
    write(
        &repo.join(".qwen/settings.json"),
        r#"{"memory": {"enableTeamMemory": true}}"#,
    );
    let qwen = context(&start(&sb, &repo, "qwen", &hook_input("q2", "startup")));
    assert!(!qwen.contains("Use the real database"), "{qwen}");
    assert!(qwen.contains("Qwen Code shows the team index"), "{qwen}");
    let withheld = qwen
        .lines()
        .find(|l| l.starts_with("Withheld by the memory gate: 1 memory"))
        .unwrap_or_else(|| panic!("no withheld line: {qwen}"));
    assert!(
        withheld.contains("Qwen Code's own team index"),
        "{withheld}"
    );
    assert!(withheld.contains("teammem init --branch"), "{withheld}");
    assert!(!qwen.contains(&token), "{qwen}");
}
