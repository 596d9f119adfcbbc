//! A first `teammem prompt-context` turn at a new `HEAD` walks git's history for every
//! memory's age for at most 300 ms. In a history too long for that, the turn still tells its
//! memories' authors (git is asked about those few alone), notes the `HEAD` at which the walk
//! was abandoned so that later turns do not pay for it again, and walks again once `HEAD`
//! moves; a memory whose last commit lies deeper than even that walk is shown without an age,
//! never as changed "today" (its file's time is only when it was checked out).
//!
//! The walks are bounded here by the commits they may read, or given no time at all, so that
//! what the tests see does not depend on how loaded the machine is.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::invoke::EnvChange;
use crate::common::lifecycle::private_state;
use crate::common::{Sandbox, hook_context, memory_text};

/// Commits that do not touch the team folder, between the oldest memory and the newest: the
/// walk for every memory's age must go through all of them to reach the oldest one's commit.
const LONG_HISTORY: usize = 2_000;

/// The walk for every memory's age may read this many commits: far fewer than
/// [`LONG_HISTORY`].
const WALKED: &str = "500";

/// The context one new session's turn gets for `prompt`, its walks bounded by `env`.
fn turn_with(
    sb: &Sandbox,
    repo: &Path,
    session: &str,
    prompt: &str,
    env: &[EnvChange<'_>],
) -> String {
    let input = serde_json::json!({
        "session_id": session,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string();
    let run = crate::common::prompt_turn(sb, repo, "claude", &input, env);
    hook_context(&run, "UserPromptSubmit")
}

/// [`turn_with`] whose walk for every memory's age reads at most [`WALKED`] commits.
fn turn(sb: &Sandbox, repo: &Path, session: &str, prompt: &str) -> String {
    let env = [("TEAMMEM_TURN_WALK_COMMITS", Some(WALKED))];
    turn_with(sb, repo, session, prompt, &env)
}

/// `git fast-import` data for one file.
fn data(out: &mut Vec<u8>, bytes: &[u8]) {
    writeln!(out, "data {}", bytes.len()).unwrap();
    out.extend_from_slice(bytes);
    out.push(b'\n');
}

/// A commit on `main` by `who` at `time`, setting each file of `files`.
fn commit(out: &mut Vec<u8>, who: &str, time: u64, message: &str, files: &[(&str, &str)]) {
    writeln!(out, "commit refs/heads/main").unwrap();
    writeln!(
        out,
        "author {who} <{}@example.com> {time} +0000",
        who.to_lowercase().replace(' ', ".")
    )
    .unwrap();
    writeln!(out, "committer {who} <ci@example.com> {time} +0000").unwrap();
    data(out, message.as_bytes());
    for (path, text) in files {
        writeln!(out, "M 100644 inline {path}").unwrap();
        data(out, text.as_bytes());
    }
}

/// A repository whose oldest memory (added by Olive Old) lies [`LONG_HISTORY`] commits below
/// the newest (added by Zed Keeper), written by `git fast-import`.
fn long_history(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.path().join("project");
    std::fs::create_dir_all(&repo).unwrap();
    sb.git(&repo, ["init", "-q", "-b", "main"]);
    let old = memory_text(
        "Okapi enclosure",
        "Zoo notes",
        "user",
        "The okapi enclosure closes at dusk.\n",
    );
    let zebra = memory_text(
        "Zebra crossing",
        "Zoo notes",
        "project",
        "The zebra crossing by the office is repainted every spring.\n",
    );
    // Notes enough that a rare word of a prompt stands out, as in any real team folder.
    let notes: Vec<(String, String)> = (0..40)
        .map(|i| {
            let path = format!(".qwen/team-memory/reference/note-{i:02}.md");
            let text = memory_text(
                &format!("Note {i}"),
                "Build notes",
                "reference",
                "The cache is warmed before the deploy.\n",
            );
            (path, text)
        })
        .collect();
    let mut first: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (&p[..], &t[..])).collect();
    first.push((".qwen/team-memory/user/okapi.md", &old));
    let mut stream = Vec::new();
    let start = 1_600_000_000;
    commit(&mut stream, "Olive Old", start, "okapi", &first);
    for n in 0..LONG_HISTORY {
        let line = format!("{n}\n");
        commit(
            &mut stream,
            "Bot",
            start + 1 + n as u64,
            "log",
            &[("log.txt", &line)],
        );
    }
    let end = start + 1 + LONG_HISTORY as u64;
    commit(
        &mut stream,
        "Zed Keeper",
        end,
        "zebra",
        &[(".qwen/team-memory/project/zebra.md", &zebra)],
    );
    let mut import = Command::new("git");
    sb.isolate(&mut import)
        .current_dir(&repo)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped());
    let mut child = import.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success(), "git fast-import failed");
    sb.git(&repo, ["reset", "-q", "--hard", "main"]);
    repo
}

#[test]
fn a_history_too_long_to_walk_still_gives_each_memory_its_author() {
    let sb = Sandbox::new();
    let repo = long_history(&sb);
    let head = sb.git(&repo, ["rev-parse", "HEAD"]).trim().to_string();
    let marker = private_state(&sb, &repo).join("ages-walk-abandoned");
    let ages = repo.join(".git/teammem-mcp-ages");

    let zebra = turn(&sb, &repo, "a", "When is the zebra crossing repainted?");
    assert!(zebra.contains("team:project/zebra.md"), "{zebra}");
    assert!(zebra.contains("last changed by Zed Keeper"), "{zebra}");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some(head.as_str()),
        "the walk was abandoned at HEAD, and that is noted"
    );
    assert!(!ages.exists(), "no ages are kept from an abandoned walk");

    // Later turns at the same HEAD do not walk again for every memory; git is asked about
    // their few memories alone, however deep their last commit.
    let okapi = turn(&sb, &repo, "b", "When does the okapi enclosure close?");
    assert!(okapi.contains("team:user/okapi.md"), "{okapi}");
    assert!(okapi.contains("closes at dusk"), "{okapi}");
    assert!(okapi.contains("last changed by Olive Old"), "{okapi}");
    let zebra = turn(&sb, &repo, "b2", "When is the zebra crossing repainted?");
    assert!(zebra.contains("last changed by Zed Keeper"), "{zebra}");
    assert!(!ages.exists());

    // HEAD moved: the walk is tried again there, and abandoned again.
    std::fs::write(repo.join("log.txt"), "moved\n").unwrap();
    sb.git(&repo, ["commit", "-qam", "move HEAD"]);
    let moved = sb.git(&repo, ["rev-parse", "HEAD"]).trim().to_string();
    let zebra = turn(&sb, &repo, "c", "When is the zebra crossing repainted?");
    assert!(zebra.contains("last changed by Zed Keeper"), "{zebra}");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some(moved.as_str())
    );
}

#[test]
fn a_memory_deeper_than_the_walk_is_shown_without_an_age_never_as_today() {
    let sb = Sandbox::new();
    let repo = long_history(&sb);
    // No time to walk at all: no commit is reached, by either walk.
    let no_time = [("TEAMMEM_TURN_WALK_MS", Some("0"))];
    let okapi = turn_with(
        &sb,
        &repo,
        "a",
        "When does the okapi enclosure close?",
        &no_time,
    );
    assert!(okapi.contains("team:user/okapi.md"), "{okapi}");
    assert!(
        okapi.contains("(team:user/okapi.md, user, age not known)"),
        "{okapi}"
    );
    assert!(!okapi.contains("today"), "{okapi}");
    assert!(!okapi.contains("last changed by"), "{okapi}");

    // Edited since HEAD, its file's time is its age.
    let path = repo.join(".qwen/team-memory/user/okapi.md");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"Keepers lock the gate.\n").unwrap();
    drop(file);
    let okapi = turn_with(
        &sb,
        &repo,
        "b",
        "When does the okapi enclosure close?",
        &no_time,
    );
    assert!(
        okapi.contains("(team:user/okapi.md, user, today)"),
        "{okapi}"
    );
    assert!(!okapi.contains("last changed by"), "{okapi}");
}
