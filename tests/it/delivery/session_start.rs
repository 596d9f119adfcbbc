//! `teammem session-start`: sync, then the context in the hook's shape — and exit 0 whatever
//! happened.

use crate::common;
use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::fs;

use netsync::Team;
use servers::free_port;
use syncrun::{files_at, teammem_env, write_memory};

fn additional_context(stdout: &str) -> String {
    let value: serde_json::Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!(value["hookSpecificOutput"]["hookEventName"], "SessionStart");
    value["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn qwen_hook_syncs_and_prints_the_context_with_what_sync_did() {
    let team = Team::new();
    write_memory(
        &team.mate,
        "project",
        "from-the-teammate",
        "Pushed by the mate.\n",
    );
    team.sb
        .teammem(&team.mate, ["index", "--scope", "team"])
        .expect_code(0);
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb.git(&team.mate, ["commit", "-qm", "mate"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    write_memory(&team.me, "feedback", "written-here", "Mine.\n");

    for hook in ["qwen", "claude"] {
        let run = team.sb.teammem(&team.me, ["session-start", "--hook", hook]);
        run.expect_code(0);
        let text = additional_context(&run.stdout);
        assert!(text.contains("point-in-time"), "{text}");
        // The team index, as pulled and regenerated, is in the context.
        assert!(text.contains("from-the-teammate"), "{text}");
        assert!(text.contains("written-here"), "{text}");
        let last = text.trim_end().lines().last().unwrap().to_lowercase();
        assert!(last.starts_with("team memory sync: "), "{last}");
        if hook == "qwen" {
            assert!(last.contains("pulled") && last.contains("pushed"), "{last}");
        } else {
            assert!(last.contains("no team memory changes"), "{last}");
        }
    }
    assert!(files_at(&team.sb, &team.bare, "main").contains("written-here.md"));
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn plain_prints_text_and_an_unreachable_remote_still_exits_0() {
    let team = Team::new();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", free_port()),
    );
    write_memory(&team.me, "project", "offline-note", "Offline.\n");
    let run = team.sb.teammem(
        &team.me,
        ["session-start", "--hook", "plain", "--timeout", "3"],
    );
    run.expect_code(0);
    assert!(run.stdout.starts_with("# Memory"), "{}", run.stdout);
    let last = run.stdout.trim_end().lines().last().unwrap().to_lowercase();
    assert!(last.contains("fetch-failed"), "{last}");
    assert!(last.contains("committed 2 team memory files"), "{last}");
}

#[test]
fn sync_switched_off_is_not_run_and_said_so() {
    let team = Team::new();
    write_memory(&team.me, "project", "stays-uncommitted", "Local.\n");
    let head = team.rev(&team.me, "HEAD");
    let run = teammem_env(
        &team.sb,
        &team.me,
        &["session-start", "--hook", "qwen"],
        &[("QWEN_CODE_MEMORY_TEAM_SYNC", "0")],
    );
    run.expect_code(0);
    let text = additional_context(&run.stdout);
    assert!(
        text.contains("Team memory sync: not run — switched off"),
        "{text}"
    );
    assert_eq!(team.rev(&team.me, "HEAD"), head);
}

#[test]
fn outside_a_repository_and_in_a_broken_one_it_still_exits_0() {
    let sb = common::Sandbox::new();
    let plain = sb.path().join("not-a-repo");
    fs::create_dir_all(&plain).unwrap();
    let run = sb.teammem(&plain, ["session-start", "--hook", "claude"]);
    run.expect_code(0);
    let text = additional_context(&run.stdout);
    assert!(text.contains("not inside a git repository"), "{text}");

    // A repository libgit2 cannot open: the line says what went wrong.
    let broken = sb.repo("broken");
    sb.git(&broken, ["config", "extensions.unknownthing", "true"]);
    sb.git(&broken, ["config", "core.repositoryformatversion", "1"]);
    let run = sb.teammem(&broken, ["session-start", "--hook", "qwen"]);
    run.expect_code(0);
    let text = additional_context(&run.stdout);
    assert!(
        text.contains("Team memory sync: not run — teammem could not read this project"),
        "{text}"
    );
    assert!(text.contains("point-in-time"), "{text}");
}

#[test]
fn the_hook_script_runs_session_start_and_never_fails_the_session() {
    let team = Team::new();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/session-start");
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_teammem"))
        .parent()
        .unwrap()
        .to_path_buf();
    let run_hook = |path: &str, args: &[&str]| {
        let mut cmd = std::process::Command::new(&script);
        team.sb.isolate(&mut cmd);
        let out = cmd
            .env("PATH", path)
            .current_dir(&team.me)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let with_teammem = format!("{}:/usr/bin:/bin", bin_dir.display());
    let (code, stdout) = run_hook(&with_teammem, &[]);
    assert_eq!(code, Some(0));
    assert!(
        additional_context(&stdout).contains("Team memory sync: "),
        "{stdout}"
    );
    let (code, stdout) = run_hook(&with_teammem, &["plain"]);
    assert_eq!(code, Some(0));
    assert!(stdout.starts_with("# Memory"), "{stdout}");
    let (code, stdout) = run_hook("/usr/bin:/bin", &[]);
    assert_eq!((code, stdout.as_str()), (Some(0), ""));
}

#[test]
fn the_example_settings_configure_the_qwen_session_start_hook() {
    let text = fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".qwen-example/settings.json"),
    )
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hook = &value["hooks"]["SessionStart"][0]["hooks"][0];
    assert_eq!(hook["type"], "command");
    assert_eq!(hook["command"], "teammem session-start --hook qwen");
    // Qwen Code 0.24 reads hook timeouts in seconds: above sync's 15 s budget.
    assert_eq!(hook["timeout"], 20);
}

/// Older than the 2-second window within which a stamp is not trusted: the context is then
/// built while the sync runs, from the files as they were.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2_300));
}

#[test]
fn a_teammate_s_memory_a_sync_pulls_is_in_the_same_session_start_with_every_folder_settled() {
    let team = Team::new();
    write_memory(&team.mate, "project", "first-note", "The first.\n");
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb.git(&team.mate, ["commit", "-qm", "mate"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let first = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "claude"]);
    assert!(additional_context(&first.stdout).contains("first note"));
    settle();
    let again = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "claude"]);
    let again = additional_context(&again.stdout);
    assert!(again.contains("first note"), "{again}");
    assert!(again.contains("No team memory changes"), "{again}");

    // The mate adds a memory and rewrites the first one's description; this clone's folders
    // are all settled, so its context is built while its sync pulls.
    write_memory(&team.mate, "feedback", "second-note", "The second.\n");
    let first_file = team.mate.join(".qwen/team-memory/project/first-note.md");
    let text = fs::read_to_string(&first_file).unwrap();
    fs::write(
        &first_file,
        text.replace("About first-note", "Rewritten by the mate"),
    )
    .unwrap();
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb.git(&team.mate, ["commit", "-qm", "mate again"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let pulled = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "claude"]);
    pulled.expect_code(0);
    let pulled = additional_context(&pulled.stdout);
    assert!(pulled.to_lowercase().contains("pulled"), "{pulled}");
    assert!(pulled.contains("second note"), "{pulled}");
    assert!(pulled.contains("Rewritten by the mate"), "{pulled}");
    assert!(!pulled.contains("About first-note"), "{pulled}");

    // A memory edited here in place (its folder untouched), committed by the sync: the
    // context holds the edit.
    settle();
    let mine = team.me.join(".qwen/team-memory/feedback/second-note.md");
    let text = fs::read_to_string(&mine).unwrap();
    fs::write(&mine, text.replace("About second-note", "Edited here")).unwrap();
    let edited = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "claude"]);
    let edited = additional_context(&edited.stdout);
    assert!(edited.contains("Edited here"), "{edited}");
    assert!(!edited.contains("About second-note"), "{edited}");
}
