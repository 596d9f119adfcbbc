//! What the hooks make of inputs no client test sends: a field of another type, a number for
//! a session id, ids that are long or look like paths, bytes that are not UTF-8, lone
//! surrogates, and a client that keeps stdin open after its JSON. Each still reaches the
//! memory once per session, and no state is written outside teammem's state folder.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::{Run, Sandbox, hook_context, prompt_turn, write};

/// A word no other memory holds, so that a turn that gets the memory says so by it.
const MARKER: &str = "a mocked test passed";

const PROMPT: &str = "How should the integration tests reach the Postgres database?";

fn project(sb: &Sandbox) -> PathBuf {
    let repo = sb.repo("project");
    crate::common::write_database_and_release_memories(&repo);
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "team memory"]);
    repo
}

/// The memory a turn with `input` adds (`--hook codex`: exactly Codex's schema).
fn turn(sb: &Sandbox, repo: &Path, input: &str) -> String {
    hook_context(
        &prompt_turn(sb, repo, "codex", input, &[]),
        "UserPromptSubmit",
    )
}

#[test]
fn an_odd_field_or_a_numeric_id_keeps_the_prompt_and_the_session() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // A number for the id, a number for the transcript, null and nested values elsewhere: the
    // prompt and the session still count, so the second turn gets nothing again.
    let input = json!({
        "session_id": 42,
        "transcript_path": 7,
        "cwd": null,
        "hook_event_name": {"name": "UserPromptSubmit"},
        "turn_id": ["x"],
        "prompt": PROMPT,
    })
    .to_string();
    assert!(turn(&sb, &repo, &input).contains(MARKER));
    assert_eq!(turn(&sb, &repo, &input), "");

    // Session start: a resume whose transcript path is of another type is still a resume.
    let start = |source: &str| {
        let input = json!({"session_id": "odd", "transcript_path": {"path": 1}, "source": source});
        let run = sb.teammem_with_input(
            &repo,
            ["session-start", "--hook", "codex"],
            &input.to_string(),
        );
        run.expect_code(0);
        hook_context(&run, "SessionStart")
    };
    assert!(start("startup").contains("Releases leave on Tuesdays"));
    assert_eq!(start("resume"), "");
}

#[test]
fn long_and_path_like_session_ids_stay_apart_and_write_only_hashed_names() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let long = "L".repeat(10_000);
    let long_too = format!("{}M", "L".repeat(9_999));
    let ids = [
        long.as_str(),
        long_too.as_str(),
        "../../../escaped",
        "/etc/passwd",
        "a\u{0}b",
        "セッション-🎉",
        ".",
    ];
    for id in ids {
        let input = json!({"session_id": id, "prompt": PROMPT}).to_string();
        assert!(
            turn(&sb, &repo, &input).contains(MARKER),
            "{}: first turn",
            &id[..id.len().min(12)]
        );
        assert_eq!(
            turn(&sb, &repo, &input),
            "",
            "{}: the same session again",
            &id[..id.len().min(12)]
        );
    }
    let sessions = find_dir(&sb.base(), "sessions").expect("a sessions folder");
    let mut names: Vec<String> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(names.len(), ids.len(), "{names:?}");
    for name in &names {
        let stem = name.trim_end_matches(".json");
        assert!(
            stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
    }
    assert!(!sb.path().join("escaped").exists());
}

#[test]
fn bytes_that_are_not_utf8_and_a_lone_surrogate_still_get_the_memory() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // JSON.stringify writes a string cut inside an emoji as a lone surrogate escape.
    let input = format!(
        "{{\"session_id\":\"half-emoji\",\"prompt\":\"{} \\ud83d\"}}",
        PROMPT
    );
    assert!(turn(&sb, &repo, &input).contains(MARKER));
    let mut bytes = format!("{{\"session_id\":\"latin1\",\"prompt\":\"{PROMPT} caf").into_bytes();
    bytes.extend_from_slice(b"\xe9\"}");
    let run = spawn_turn(&sb, &repo, &bytes, false);
    assert!(hook_context(&run, "UserPromptSubmit").contains(MARKER));
}

#[test]
fn a_client_that_keeps_stdin_open_is_answered_once_its_json_is_whole() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let input = json!({"session_id": "open", "prompt": PROMPT}).to_string();
    let run = spawn_turn(&sb, &repo, input.as_bytes(), true);
    assert!(
        hook_context(&run, "UserPromptSubmit").contains(MARKER),
        "{run:?}"
    );
}

/// `teammem prompt-context --hook codex` given `input` on stdin; with `keep_open`, stdin
/// stays open until the hook has exited (its budget, 20 s here, ends it at the latest).
fn spawn_turn(sb: &Sandbox, repo: &Path, input: &[u8], keep_open: bool) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    sb.isolate(&mut cmd)
        .current_dir(repo)
        .args(["prompt-context", "--hook", "codex", "--timeout-ms", "20000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run teammem");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    stdin.flush().unwrap();
    let held = keep_open.then_some(stdin);
    let run = Run::from(child.wait_with_output().unwrap());
    drop(held);
    run.expect_code(0);
    run
}

fn find_dir(root: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() == name {
                return Some(path);
            }
            if let Some(found) = find_dir(&path, name) {
                return Some(found);
            }
        }
    }
    None
}

/// Session start with `input` (`--hook codex`): the context it adds, empty when none.
fn start(sb: &Sandbox, repo: &Path, input: serde_json::Value) -> String {
    let run = sb.teammem_with_input(
        repo,
        ["session-start", "--hook", "codex"],
        &input.to_string(),
    );
    run.expect_code(0);
    hook_context(&run, "SessionStart")
}

const TRAIN_PROMPT: &str = "When does the release train leave, and when must I merge?";
const TRAIN_BODY: &str = "Merge by Monday evening";

#[test]
fn a_codex_fork_holds_what_its_parent_was_given_and_gets_none_of_it_again() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let parent = "019f-parent";
    assert!(
        start(
            &sb,
            &repo,
            json!({"session_id": parent, "source": "startup"})
        )
        .contains("Releases leave on Tuesdays")
    );
    let ask = |session: &str, prompt: &str| {
        turn(
            &sb,
            &repo,
            &json!({"session_id": session, "prompt": prompt}).to_string(),
        )
    };
    assert!(ask(parent, PROMPT).contains(MARKER));

    // `codex exec fork`: a new id, and a rollout whose first line names the parent (the
    // parent's turns are not copied into it).
    let rollout = sb.path().join("rollout-fork.jsonl");
    write(
        &rollout,
        &format!(
            "{}\n",
            json!({"type": "session_meta", "payload": {"id": "019f-fork", "forked_from_id": parent, "base_instructions": {"text": "…"}}})
        ),
    );
    let fork = json!({"session_id": "019f-fork", "transcript_path": rollout, "source": "fork"});
    assert_eq!(
        start(&sb, &repo, fork),
        "",
        "the fork's history holds the context"
    );
    assert_eq!(
        ask("019f-fork", PROMPT),
        "",
        "the fork's history holds the body"
    );
    assert!(ask("019f-fork", TRAIN_PROMPT).contains(TRAIN_BODY));
    // The parent goes on as it was.
    assert!(ask(parent, TRAIN_PROMPT).contains(TRAIN_BODY));

    // A fork that names no parent and whose transcript is not there yet (Claude Code writes
    // it after the first turn): a new context, in full.
    let claude_fork = json!({"session_id": "c-fork", "transcript_path": sb.path().join("absent.jsonl"), "source": "fork"});
    assert!(start(&sb, &repo, claude_fork).contains("Releases leave on Tuesdays"));
}

#[test]
fn a_resume_without_a_record_takes_the_bodies_its_transcript_holds() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // A session whose record is gone (forgotten, or a state folder reset): its transcript, as
    // Claude Code writes it (JSON lines, quotes escaped), holds the context and one body.
    let first = start(
        &sb,
        &repo,
        json!({"session_id": "gone", "source": "startup"}),
    );
    let body = turn(
        &sb,
        &repo,
        &json!({"session_id": "gone", "prompt": PROMPT}).to_string(),
    );
    assert!(body.contains(MARKER));
    let transcript = sb.path().join("transcript.jsonl");
    let lines = [
        json!({"type": "attachment", "attachment": {"hookEvent": "SessionStart", "content": first}}),
        json!({"type": "attachment", "attachment": {"hookEvent": "UserPromptSubmit", "content": body}}),
    ];
    write(
        &transcript,
        &lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    );
    std::fs::remove_dir_all(find_dir(&sb.base(), "sessions").unwrap()).unwrap();
    let resume = json!({"session_id": "gone", "transcript_path": transcript, "source": "resume"});
    assert_eq!(start(&sb, &repo, resume), "");
    assert_eq!(
        turn(
            &sb,
            &repo,
            &json!({"session_id": "gone", "prompt": PROMPT}).to_string()
        ),
        ""
    );
    assert!(
        turn(
            &sb,
            &repo,
            &json!({"session_id": "gone", "prompt": TRAIN_PROMPT}).to_string()
        )
        .contains(TRAIN_BODY)
    );
}

#[test]
fn turns_of_one_session_at_the_same_time_give_each_memory_once() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // Warm the recall index, so that the turns below race on the session's record alone.
    turn(
        &sb,
        &repo,
        &json!({"session_id": "warm", "prompt": PROMPT}).to_string(),
    );
    let input = json!({"session_id": "busy", "prompt": PROMPT}).to_string();
    let children: Vec<_> = (0..6)
        .map(|_| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
            sb.isolate(&mut cmd)
                .current_dir(&repo)
                .args([
                    "prompt-context",
                    "--hook",
                    "codex",
                    "--timeout-ms",
                    "600000",
                ])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().expect("run teammem");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child
        })
        .collect();
    let given = children
        .into_iter()
        .map(|child| Run::from(child.wait_with_output().unwrap()))
        .filter(|run| hook_context(run, "UserPromptSubmit").contains(MARKER))
        .count();
    assert_eq!(given, 1, "turns that gave the memory");
    // And the record kept it: a later turn gives it no more.
    assert_eq!(turn(&sb, &repo, &input), "");
}

#[test]
fn a_state_folder_that_cannot_be_written_still_repeats_nothing_the_transcript_holds() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // The project's state folder cannot hold session records (a file where their folder goes:
    // root ignores permissions, so a read-only folder would not stop this test's writes).
    turn(
        &sb,
        &repo,
        &json!({"session_id": "probe", "prompt": "nothing relevant at all"}).to_string(),
    );
    let sessions = find_dir(&sb.base(), "sessions").expect("a sessions folder");
    std::fs::remove_dir_all(&sessions).unwrap();
    write(&sessions, "not a folder\n");

    // The client keeps its transcript; each turn's output goes into it, as Codex and Claude
    // Code write it (JSON lines).
    let transcript = sb.path().join("transcript.jsonl");
    write(&transcript, "");
    let ask = |prompt: &str| {
        let input = json!({"session_id": "ro", "transcript_path": transcript, "prompt": prompt});
        let run = prompt_turn(&sb, &repo, "codex", &input.to_string(), &[]);
        let added = hook_context(&run, "UserPromptSubmit");
        let mut log = std::fs::read_to_string(&transcript).unwrap();
        log.push_str(&format!(
            "{}\n",
            json!({"type": "hook_additional_context", "content": added})
        ));
        std::fs::write(&transcript, log).unwrap();
        (added, run.stderr)
    };
    let (first, stderr) = ask(PROMPT);
    assert!(first.contains(MARKER), "{first}");
    assert!(stderr.contains("could not record"), "{stderr}");
    let (again, _) = ask(PROMPT);
    assert_eq!(again, "", "the transcript holds it already");
    assert!(ask(TRAIN_PROMPT).0.contains(TRAIN_BODY));
}
