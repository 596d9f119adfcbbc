//! The command line's conventions, as a user meets them: a reader that closes the pipe early,
//! every exit status of the README's table, memories in two versions resolved end to end with
//! git CLI teammates, shell completions loaded in real shells, the manual page, `-q`/`-v`,
//! `--json`/`--format json`, `--dry-run` and `forget --undo`.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::invoke::{self, stdout_json};
use common::{Run, Sandbox, memory_text, write};
use serde_json::Value;

const TEAM: &str = ".qwen/team-memory";

/// Runs teammem with `env` added and standard output a pipe whose reader is already closed,
/// so the first write meets EPIPE whatever the timing.
fn closed_stdout(sb: &Sandbox, dir: &Path, args: &[&str]) -> Run {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: pipe(2) just opened both descriptors; nothing else owns them.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    sb.isolate(&mut cmd)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped());
    let out = cmd.output().expect("run teammem");
    Run::from(out)
}

fn run_env(sb: &Sandbox, dir: &Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Run {
    invoke::teammem_with(sb, dir, args, &invoke::set(env), Some(input))
}

/// A repository with team memory on, two team memories committed, one private memory.
fn project(sb: &Sandbox) -> PathBuf {
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    write(
        &repo.join(TEAM).join("feedback/use-postgres.md"),
        &memory_text(
            "Use the real database",
            "Integration tests hit a real Postgres",
            "feedback",
            "Postgres 16 in the test harness.\n",
        ),
    );
    write(
        &repo.join(TEAM).join("project/release-train.md"),
        &memory_text(
            "Release train",
            "Releases leave every Tuesday",
            "project",
            "Tuesday 10:00 UTC.\n",
        ),
    );
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "team memory"]);
    sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "private",
            "--type",
            "user",
            "--name",
            "Prefers short answers",
            "--description",
            "Keep replies brief",
            "--body",
            "Code first.",
        ],
    )
    .expect_code(0);
    repo
}

#[test]
fn every_output_command_into_a_closed_pipe_exits_141_quietly() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    sb.git(&repo, ["branch", "base", "HEAD~1"]);
    let commands: &[&[&str]] = &[
        &["list"],
        &["list", "--json"],
        &["show", "feedback/use-postgres.md"],
        &["show", "feedback/use-postgres.md", "--json"],
        &["context"],
        &["context", "--json"],
        &["validate"],
        &["validate", "--json"],
        &["index", "--scope", "team", "--check"],
        &["index", "--json"],
        &["recall", "postgres"],
        &["recall", "postgres", "--json"],
        &["scan"],
        &["scan", "--format", "json"],
        &["check", "--all"],
        &["check", "--all", "--format", "sarif"],
        &["review", "base..HEAD"],
        &["review", "base..HEAD", "--json"],
        &["stale", "--days", "0"],
        &["stale", "--days", "0", "--json"],
        &["resolve", "--list"],
        &["sync", "--dry-run"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
    ];
    for args in commands {
        let run = closed_stdout(&sb, &repo, args);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (141, ""),
            "teammem {}: a closed pipe must end the command quietly with 141",
            args.join(" ")
        );
    }
    // The hook contract wins: session start exits 0 whatever happened, a closed pipe included
    // (its stderr may carry sync's warnings, but never a panic).
    for args in [
        &["session-start", "--hook", "qwen"][..],
        &["session-start", "--json"],
    ] {
        let run = closed_stdout(&sb, &repo, args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert!(!run.stderr.contains("Broken pipe"), "{}", run.stderr);
    }
}

#[test]
fn a_write_finishes_when_its_reader_went_away() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let run = closed_stdout(
        &sb,
        &repo,
        &[
            "add",
            "--scope",
            "team",
            "--type",
            "project",
            "--name",
            "On call",
            "--description",
            "Who is on call",
            "--body",
            "Ada this week.",
        ],
    );
    assert_eq!((run.code, run.stderr.as_str()), (141, ""));
    let written = fs::read_to_string(repo.join(TEAM).join("project/on-call.md")).unwrap();
    assert!(written.ends_with("Ada this week.\n"), "{written}");
    let index = fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains("(project/on-call.md)"), "{index}");
}

#[test]
fn quiet_hides_status_lines_and_verbose_or_teammem_log_adds_debug_lines() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let add = |extra: &[&str], name: &str, env: &[(&str, &str)]| {
        let mut args = vec![
            "add",
            "--scope",
            "private",
            "--type",
            "project",
            "--name",
            name,
            "--description",
            "d",
            "--body",
            "b",
        ];
        args.extend_from_slice(extra);
        run_env(&sb, &repo, &args, env, "")
    };
    let quiet = add(&["-q"], "Quiet one", &[]);
    quiet.expect_code(0);
    assert_eq!((quiet.stdout.as_str(), quiet.stderr.as_str()), ("", ""));
    let normal = add(&[], "Normal one", &[]);
    assert!(
        normal
            .stdout
            .starts_with("Added private:project/normal-one.md")
    );
    assert!(!normal.stderr.contains("debug"), "{}", normal.stderr);
    let verbose = add(&["-v"], "Verbose one", &[]);
    assert!(
        verbose.stderr.contains("teammem: debug: working in"),
        "{}",
        verbose.stderr
    );
    let logged = add(&[], "Logged one", &[("TEAMMEM_LOG", "debug")]);
    assert!(
        logged.stderr.contains("teammem: debug: "),
        "{}",
        logged.stderr
    );
    // -q still lets the result through: list prints its listing.
    let list = sb.teammem(&repo, ["list", "-q", "--scope", "private"]);
    assert!(
        list.stdout.contains("project/quiet-one.md"),
        "{}",
        list.stdout
    );
}

#[test]
fn json_and_format_json_are_the_same_everywhere() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    sb.git(&repo, ["branch", "base", "HEAD~1"]);
    for (a, b) in [
        (&["list", "--json"][..], &["list", "--format", "json"][..]),
        (
            &["check", "--all", "--json"],
            &["check", "--all", "--format", "json"],
        ),
        (&["scan", "--json"], &["scan", "--format", "json"]),
        (
            &["review", "base..HEAD", "--json"],
            &["review", "base..HEAD", "--format", "json"],
        ),
        (&["validate", "--json"], &["validate", "--format", "json"]),
        (
            &["resolve", "--list", "--json"],
            &["resolve", "--list", "--format", "json"],
        ),
    ] {
        let (x, y) = (sb.teammem(&repo, a), sb.teammem(&repo, b));
        assert_eq!(stdout_json(&x), stdout_json(&y), "{a:?} vs {b:?}");
    }
    let init = sb.teammem(&repo, ["init", "--current-branch", "--json"]);
    init.expect_code(0);
    assert_eq!(stdout_json(&init)["created"], false);
    let hooks = sb.teammem(&repo, ["install-hooks", "--json"]);
    hooks.expect_code(0);
    let hooks = stdout_json(&hooks);
    assert_eq!(hooks[0]["name"], "pre-commit", "{hooks:#}");
    let started = sb.teammem(&repo, ["session-start", "--json"]);
    started.expect_code(0);
    let started = stdout_json(&started);
    assert!(
        started["context"]
            .as_str()
            .unwrap()
            .contains("(feedback/use-postgres.md)"),
        "{started:#}"
    );
    assert!(
        started["sync_line"]
            .as_str()
            .unwrap()
            .starts_with("Team memory sync")
    );
    let token = format!("ghp_{}", "02onXJM82LK5Y57Wo3gwZt7SkbeB1FeZzEXf");
    let redacted = sb.teammem_with_input(
        &repo,
        ["redact", "--format", "json"],
        &format!("key {token}\n"),
    );
    redacted.expect_code(0);
    assert_eq!(
        stdout_json(&redacted),
        serde_json::json!({"text": "key [REDACTED_SECRET]\n", "redactions": 1})
    );
    let baseline = sb.teammem(&repo, ["baseline", "diff", "--json"]);
    baseline.expect_code(0);
    assert_eq!(stdout_json(&baseline)["scope"], "private");
    let context = stdout_json(&sb.teammem(&repo, ["context", "--format", "json"]));
    assert_eq!(context["scopes"], serde_json::json!(["private", "team"]));
}

#[test]
fn old_limit_spellings_still_work_beside_the_one_name() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let new = stdout_json(&sb.teammem(
        &repo,
        [
            "recall",
            "postgres",
            "--limit",
            "1",
            "--max-chars",
            "5",
            "--json",
        ],
    ));
    let old = stdout_json(&sb.teammem(
        &repo,
        ["recall", "postgres", "--max", "1", "--chars", "5", "--json"],
    ));
    assert_eq!(new, old);
    assert_eq!(new["hits"].as_array().unwrap().len(), 1);
    let help = sb.teammem(&repo, ["recall", "--help"]).stdout;
    assert!(
        help.contains("--limit") && help.contains("--max-chars"),
        "{help}"
    );
    assert!(
        !help.contains("--chars ") && !help.contains("--max "),
        "{help}"
    );
}

// ---- The exit status table of the README ----

/// The README's exit status table: (status, meaning) per row.
fn readme_exit_table() -> Vec<(i32, String)> {
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("\n## Exit status\n")
        .nth(1)
        .expect("an exit status section");
    section
        .lines()
        .skip_while(|l| !l.starts_with("| status"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').splitn(2, " | ").collect();
            (
                cells[0].trim().parse().expect("a status"),
                cells[1].to_string(),
            )
        })
        .collect()
}

#[test]
fn every_row_of_the_readme_exit_status_table_is_what_the_binary_does() {
    let table = readme_exit_table();
    let statuses: Vec<i32> = table.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [0, 1, 2, 141]);
    let sb = Sandbox::new();
    let repo = project(&sb);
    let plain = sb.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let add = |name: &str, body: &str| -> Run {
        sb.teammem_with_input(
            &repo,
            [
                "add",
                "--scope",
                "team",
                "--type",
                "project",
                "--name",
                name,
                "--description",
                "d",
            ],
            body,
        )
    };
    let token = format!("ghp_{}", "riYhXHD9DE9a17gKVXGyEv1hLXVBL5GaBLOA");
    // Each claim of the table, with a run that shows it.
    let cases: Vec<(i32, &str, Run)> = vec![
        (0, "success", sb.teammem(&repo, ["list"])),
        (1, "a duplicate name", add("Release train", "again")),
        (1, "a memory over 64 KiB", add("Huge", &"x".repeat(70_000))),
        (1, "a secret", add("Token", &format!("token {token}\n"))),
        (1, "invalid memories", {
            write(&repo.join(TEAM).join("project/broken.md"), "---\nname: x\n");
            let run = sb.teammem(&repo, ["validate"]);
            fs::remove_file(repo.join(TEAM).join("project/broken.md")).unwrap();
            run
        }),
        (1, "a stale index", {
            write(
                &repo.join(TEAM).join("project/extra.md"),
                &memory_text("Extra", "d", "project", "x\n"),
            );
            let run = sb.teammem(&repo, ["index", "--scope", "team", "--check"]);
            fs::remove_file(repo.join(TEAM).join("project/extra.md")).unwrap();
            run
        }),
        (1, "an ignored team folder", {
            let ignored = sb.repo("ignored");
            write(&ignored.join(".gitignore"), ".qwen/\n");
            sb.teammem(&ignored, ["init", "--current-branch"])
        }),
        (1, "a sync that stopped early", sb.teammem(&repo, ["sync"])),
        (
            2,
            "a bad argument",
            sb.teammem(&repo, ["list", "--scope", "everywhere"]),
        ),
        (
            2,
            "an unknown id",
            sb.teammem(&repo, ["show", "project/nope.md"]),
        ),
        (
            2,
            "a `-C` folder that does not exist",
            sb.teammem(&repo, ["-C", "/nonexistent-teammem", "list"]),
        ),
        (2, "`sync` outside one", sb.teammem(&plain, ["sync"])),
        (
            2,
            "no repository where one is needed",
            sb.teammem(&plain, ["init", "--current-branch"]),
        ),
        (
            141,
            "closed standard output",
            closed_stdout(&sb, &repo, &["list"]),
        ),
    ];
    for (status, claim, run) in &cases {
        let row = &table.iter().find(|(s, _)| s == status).unwrap().1;
        assert!(
            row.contains(claim),
            "the README's row for {status} does not say {claim:?}: {row}"
        );
        assert_eq!(
            run.code, *status,
            "{claim}: exit status\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        );
    }
}

#[test]
fn a_missing_dash_c_folder_is_a_usage_error_and_nothing_is_written() {
    let sb = Sandbox::new();
    let missing = sb.path().join("nonexistent");
    let run = sb.teammem(
        sb.path(),
        [
            "-C",
            missing.to_str().unwrap(),
            "add",
            "--scope",
            "user",
            "--type",
            "user",
            "--name",
            "x y z",
            "--description",
            "d",
            "--body",
            "b",
        ],
    );
    run.expect_code(2);
    assert_eq!(
        run.stderr,
        format!(
            "teammem: cannot change to {}: no such folder\n",
            missing.display()
        )
    );
    assert!(!sb.base().join("memories").exists());
}

#[test]
fn sync_outside_a_repository_exits_2_and_still_reports() {
    let sb = Sandbox::new();
    let plain = sb.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let run = sb.teammem(&plain, ["sync", "--json"]);
    run.expect_code(2);
    assert_eq!(stdout_json(&run)["skipped_reason"], "not-a-git-repo");
    let human = sb.teammem(&plain, ["sync"]);
    human.expect_code(2);
    assert!(
        human.stdout.contains("not inside a git work tree"),
        "{}",
        human.stdout
    );
}

#[test]
fn an_oversized_add_is_a_refused_write_and_its_piped_body_is_kept() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let body = "word ".repeat(14_000);
    let run = sb.teammem_with_input(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "project",
            "--name",
            "Huge",
            "--description",
            "d",
        ],
        &body,
    );
    run.expect_code(1);
    assert!(
        run.stderr.contains("over the 65536 byte limit"),
        "{}",
        run.stderr
    );
    assert!(!repo.join(TEAM).join("project/huge.md").exists());
    assert_eq!(fs::read_to_string(kept_path(&run.stderr)).unwrap(), body);
}

/// The file a refusal says the text is kept in.
fn kept_path(stderr: &str) -> PathBuf {
    let at = stderr.find("Your text is kept in ").expect(stderr) + "Your text is kept in ".len();
    let rest = &stderr[at..];
    PathBuf::from(&rest[..rest.find(" (readable by you only)").expect(stderr)])
}

#[test]
fn a_body_refused_for_a_secret_is_kept_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let repo = project(&sb);
    let token = format!("ghp_{}", "02onXJM82LK5Y57Wo3gwZt7SkbeB1FeZzEXf");
    let body = format!("Deploy with the token {token}\nand then wait for CI.\n");
    let run = sb.teammem_with_input(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "reference",
            "--name",
            "Deploy token",
            "--description",
            "How to deploy",
        ],
        &body,
    );
    run.expect_code(1);
    assert!(!run.stderr.contains(&token), "the secret is never printed");
    let kept = kept_path(&run.stderr);
    assert!(
        !kept.starts_with(&repo),
        "kept outside the repository: {}",
        kept.display()
    );
    assert_eq!(fs::read_to_string(&kept).unwrap(), body);
    let mode = fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(!repo.join(TEAM).join("reference/deploy-token.md").exists());
}

#[test]
fn add_without_scope_says_it_writes_private_memory() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let run = sb.teammem(
        &repo,
        [
            "add",
            "--type",
            "project",
            "--name",
            "Where logs are",
            "--description",
            "d",
            "--body",
            "b",
        ],
    );
    run.expect_code(0);
    assert!(
        run.stderr
            .contains("no --scope given: adding to private memory"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout
            .starts_with("Added private:project/where-logs-are.md")
    );
}

#[test]
fn a_team_switch_that_is_neither_1_nor_0_falls_back_to_the_setting() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    write(
        &repo.join(".qwen/settings.json"),
        r#"{"memory": {"enableTeamMemory": false}}"#,
    );
    let scopes = |value: &str| {
        let run = run_env(
            &sb,
            &repo,
            &["list", "--json"],
            &[("QWEN_CODE_MEMORY_TEAM", value)],
            "",
        );
        run.expect_code(0);
        let listed = stdout_json(&run);
        listed["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["scope"] == "team")
    };
    assert!(!scopes("maybe"), "maybe: the setting (off) decides");
    assert!(!scopes("yes"), "yes is not 1: the setting decides");
    assert!(scopes("1"));
    write(
        &repo.join(".qwen/settings.json"),
        r#"{"memory": {"enableTeamMemory": true}}"#,
    );
    assert!(scopes("maybe"), "maybe: the setting (on) decides");
    assert!(!scopes("0"));
}

#[test]
fn a_missing_local_remote_is_named_plainly() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let gone = sb.path().join("gone.git");
    sb.git(&repo, ["remote", "add", "origin", gone.to_str().unwrap()]);
    sb.git(&repo, ["config", "branch.main.remote", "origin"]);
    sb.git(&repo, ["config", "branch.main.merge", "refs/heads/main"]);
    let run = sb.teammem(&repo, ["sync"]);
    run.expect_code(1);
    assert!(
        run.stdout.contains(&format!(
            "the remote `origin` is the local folder {}, which does not exist",
            gone.display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn a_range_past_the_first_commit_says_how_long_the_history_is() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let run = sb.teammem(&repo, ["check", "--range", "HEAD~100..HEAD"]);
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("`HEAD` has only 1 commit before it, so `HEAD~100` is past the first commit"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_check_that_cannot_run_still_writes_a_valid_sarif_log() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let run = sb.teammem(
        &repo,
        ["check", "--range", "nope..HEAD", "--format", "sarif"],
    );
    run.expect_code(2);
    let log = stdout_json(&run);
    assert_eq!(log["version"], "2.1.0");
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let note = invocation["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(note.contains("nope"), "{note}");
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert!(run.stderr.contains("nope"), "the error is on stderr too");

    let scan = sb.teammem(&repo, ["scan", "no-such-folder", "--format", "sarif"]);
    scan.expect_code(2);
    let scan = stdout_json(&scan);
    assert_eq!(
        scan["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    let rule = &scan["runs"][0]["tool"]["driver"]["rules"][0];
    assert_eq!(rule["properties"]["security-severity"], "9.0", "{rule:#}");

    let ok = stdout_json(&sb.teammem(&repo, ["check", "--all", "--format", "sarif"]));
    let rules = ok["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    let severity = |id: &str| {
        rules.iter().find(|r| r["id"] == id).unwrap()["properties"]["security-severity"].clone()
    };
    assert_eq!(severity("secret"), "9.0");
    assert_eq!(severity("trust-instruction-override"), "7.5");
    assert_eq!(severity("memory-invalid"), Value::Null);
}

#[test]
fn list_has_a_header_and_long_ids_keep_the_columns_aligned() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let long = "project/a-memory-whose-file-name-is-much-longer-than-forty-characters.md";
    write(
        &repo.join(TEAM).join(long),
        &memory_text("Long one", "Has a long id", "project", "x\n"),
    );
    let run = sb.teammem(&repo, ["list", "--scope", "team"]);
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("SCOPE  ID "), "{}", run.stdout);
    let type_column = lines[0].find("TYPE").unwrap();
    for line in &lines[1..] {
        let kind = &line[type_column..];
        assert!(
            kind.starts_with("feedback ") || kind.starts_with("project "),
            "column out of line: {line:?}\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains(long));
}

#[test]
fn stale_says_never_cited_and_when_it_was_added() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let run = sb.teammem(&repo, ["stale", "--days", "0", "--scope", "team"]);
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("team:feedback/use-postgres.md — Use the real database (never cited; first committed today)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("0 days"), "{}", run.stdout);
}

#[test]
fn a_slow_sync_shows_progress_on_a_terminal_only() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // A server that accepts and never answers: the fetch waits until the time budget ends.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("git://127.0.0.1:{port}/team.git");
    sb.git(&repo, ["remote", "add", "origin", &url]);
    sb.git(&repo, ["config", "branch.main.remote", "origin"]);
    sb.git(&repo, ["config", "branch.main.merge", "refs/heads/main"]);
    let piped = sb.teammem(&repo, ["sync", "--timeout", "2"]);
    piped.expect_code(1);
    assert!(
        !piped.stderr.contains("Syncing"),
        "no progress off a terminal: {}",
        piped.stderr
    );

    // `script` runs the command on a pseudo-terminal (util-linux, in every Debian).
    let mut cmd = Command::new("script");
    sb.isolate(&mut cmd)
        .current_dir(&repo)
        .args(["-qec"])
        .arg(format!(
            "{} sync --timeout 2",
            env!("CARGO_BIN_EXE_teammem")
        ))
        .arg("/dev/null")
        .stdin(Stdio::null());
    let out = cmd.output().expect("script (util-linux)");
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(seen.contains("\rSyncing team memory… 1 s"), "{seen:?}");
    assert!(
        seen.contains("\r\u{1b}[K"),
        "the line is erased at the end: {seen:?}"
    );
    assert_eq!(
        seen.matches("… 1 s").count(),
        1,
        "redrawn once a second: {seen:?}"
    );
    drop(listener);
}

// ---- Completions and the manual page ----

fn completions(sb: &Sandbox, shell: &str) -> PathBuf {
    let run = sb.teammem(sb.path(), ["completions", shell]);
    run.expect_code(0);
    let path = sb.path().join(format!("teammem.{shell}"));
    fs::write(&path, &run.stdout).unwrap();
    path
}

/// Runs a shell (required: `.ci/install.d/10-shells.sh` installs it) with the binary on PATH.
fn shell(sb: &Sandbox, program: &str, args: &[&str]) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap();
    assert!(
        found.status.success(),
        "{program} is not installed: the completion test loads the script in it \
         (apt-get install -y {program}; .ci/run installs it with .ci/install.d/10-shells.sh)"
    );
    let bin = Path::new(env!("CARGO_BIN_EXE_teammem")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(program);
    sb.isolate(&mut cmd)
        .env("PATH", path)
        .current_dir(sb.path())
        .args(args)
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn completions_load_and_complete_in_bash_zsh_fish_and_elvish() {
    let sb = Sandbox::new();
    let bash = completions(&sb, "bash");
    let got = shell(
        &sb,
        "bash",
        &[
            "-c",
            &format!(
                "source {}; COMP_WORDS=(teammem res); COMP_CWORD=1; _teammem teammem res teammem; \
                 echo \"${{COMPREPLY[@]}}\"",
                bash.display()
            ),
        ],
    );
    assert_eq!(got.trim(), "resolve");

    let zsh = completions(&sb, "zsh");
    let got = shell(
        &sb,
        "zsh",
        &[
            "-f",
            "-c",
            &format!(
                "autoload -U compinit; compinit -u -D; source {}; print -r -- ${{_comps[teammem]}}",
                zsh.display()
            ),
        ],
    );
    assert_eq!(got.trim(), "_teammem");

    let fish = completions(&sb, "fish");
    let got = shell(
        &sb,
        "fish",
        &[
            "-c",
            &format!("source {}; complete -C 'teammem res'", fish.display()),
        ],
    );
    assert!(got.starts_with("resolve\t"), "{got}");

    // Elvish's line editor exists only interactively: the script runs against a stand-in
    // `edit:` namespace, then its completer is called as the editor would.
    let elvish = completions(&sb, "elvish");
    let got = shell(
        &sb,
        "elvish",
        &[
            "-c",
            &format!(
                "var c = (ns [&arg-completer=[&]]); \
                 var e = (ns [&completion:=$c &complex-candidate~={{|t &display=''| put $t}}]); \
                 eval &ns=(ns [&edit:=$e]) (slurp < {}); \
                 $c[arg-completer][teammem] teammem res | each {{|x| echo $x}}",
                elvish.display()
            ),
        ],
    );
    assert!(got.lines().any(|l| l.trim() == "resolve"), "{got}");

    // PowerShell is not packaged by Debian: the script is checked for its registration.
    let ps = fs::read_to_string(completions(&sb, "powershell")).unwrap();
    assert!(
        ps.contains("Register-ArgumentCompleter -Native -CommandName 'teammem'"),
        "{ps}"
    );
    assert!(ps.contains("'resolve'"));
}

#[test]
fn the_manual_page_renders_with_man() {
    let sb = Sandbox::new();
    let page = sb.teammem(sb.path(), ["man"]);
    page.expect_code(0);
    let file = sb.path().join("teammem.1");
    fs::write(&file, &page.stdout).unwrap();
    let rendered = shell(&sb, "man", &["-l", file.to_str().unwrap()]);
    for part in [
        "NAME",
        "SYNOPSIS",
        "teammem-resolve(1)",
        "--quiet",
        "--verbose",
    ] {
        assert!(rendered.contains(part), "missing {part} in:\n{rendered}");
    }
    let warnings = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .arg(&file)
        .output()
        .expect("groff (apt-get install -y groff-base; .ci/install.d/10-shells.sh installs it)");
    assert_eq!(String::from_utf8_lossy(&warnings.stderr), "");
}

// ---- Dry runs and undo ----

#[test]
fn forget_keeps_what_it_removed_and_undo_puts_it_back() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    let file = repo.join(TEAM).join("project/release-train.md");
    let index = repo.join(TEAM).join("MEMORY.md");
    let (before, index_before) = (fs::read(&file).unwrap(), fs::read(&index).unwrap());

    let dry = sb.teammem(&repo, ["forget", "project/release-train.md", "--dry-run"]);
    dry.expect_code(0);
    assert_eq!(
        dry.stdout,
        "Would forget team:project/release-train.md — Release train\n"
    );
    assert_eq!(
        fs::read(&file).unwrap(),
        before,
        "a dry run deletes nothing"
    );

    let gone = sb.teammem(&repo, ["forget", "project/release-train.md"]);
    gone.expect_code(0);
    assert!(!file.exists());
    assert!(
        gone.stderr.contains("teammem forget --undo"),
        "{}",
        gone.stderr
    );

    let undo = sb.teammem(&repo, ["forget", "--undo"]);
    undo.expect_code(0);
    assert_eq!(undo.stdout, "Restored team:project/release-train.md\n");
    assert_eq!(fs::read(&file).unwrap(), before);
    assert_eq!(fs::read(&index).unwrap(), index_before);
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
    sb.teammem(&repo, ["forget", "--undo"]).expect_code(2);

    // A file changed after the forget is not overwritten by an undo.
    sb.teammem(&repo, ["forget", "project/release-train.md"])
        .expect_code(0);
    write(
        &file,
        &memory_text("Release train", "New text", "project", "Thursday.\n"),
    );
    let refused = sb.teammem(&repo, ["forget", "--undo"]);
    refused.expect_code(1);
    assert!(
        refused.stderr.contains("changed after it was forgotten"),
        "{}",
        refused.stderr
    );
    assert!(fs::read_to_string(&file).unwrap().contains("Thursday."));
}

#[test]
fn dream_and_sync_dry_runs_change_nothing() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    write(
        &repo.join(TEAM).join("project/release-day.md"),
        &memory_text(
            "Release train",
            "Releases leave every Tuesday",
            "project",
            "Tuesday.\n",
        ),
    );
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    let files = |repo: &Path| {
        let mut all = Vec::new();
        for entry in walk(&repo.join(TEAM)) {
            all.push((entry.clone(), fs::read(&entry).unwrap()));
        }
        all
    };
    let before = files(&repo);
    let dry = sb.teammem(
        &repo,
        ["dream", "--force", "--dry-run", "--scope", "team", "--json"],
    );
    dry.expect_code(0);
    let report = stdout_json(&dry);
    assert_eq!(report[0]["dry_run"], true);
    assert_eq!(report[0]["deduped_entries"], 1, "{report:#}");
    assert_eq!(files(&repo), before);

    let head = sb.git(&repo, ["rev-parse", "HEAD"]);
    let plan = stdout_json(&sb.teammem(&repo, ["sync", "--dry-run", "--json"]));
    assert_eq!(plan["dry_run"], true);
    let planned: Vec<String> = plan["would_commit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["change"].as_str().unwrap(),
                c["path"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        planned,
        [
            "modified .qwen/team-memory/MEMORY.md",
            "added .qwen/team-memory/project/release-day.md"
        ]
    );
    assert_eq!(plan["skipped_reason"], "no-upstream");
    assert_eq!(
        sb.git(&repo, ["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

// ---- Memories in two versions, end to end ----

/// A bare remote and two clones: Alice uses teammem, Bob only the git CLI.
struct Pair {
    sb: Sandbox,
    alice: PathBuf,
    bob: PathBuf,
}

impl Pair {
    fn new() -> Pair {
        let sb = Sandbox::new();
        let bare = sb.bare("team.git");
        let seed = project(&sb);
        sb.git(&seed, ["remote", "add", "origin", bare.to_str().unwrap()]);
        sb.git(&seed, ["push", "-q", "-u", "origin", "main"]);
        for name in ["alice", "bob"] {
            sb.git(sb.path(), ["clone", "-q", bare.to_str().unwrap(), name]);
        }
        let (alice, bob) = (sb.path().join("alice"), sb.path().join("bob"));
        Pair { sb, alice, bob }
    }

    /// Bob and Alice both change the release train; Bob pushes with git, Alice syncs.
    fn both_edit(&self) -> Value {
        let rel = "project/release-train.md";
        write(
            &self.bob.join(TEAM).join(rel),
            &memory_text(
                "Release train",
                "Releases leave every Tuesday",
                "project",
                "Wednesday 09:00 UTC now.\n",
            ),
        );
        self.sb
            .git(&self.bob, ["commit", "-q", "-am", "bob: release day"]);
        self.sb.git(&self.bob, ["push", "-q", "origin", "main"]);
        write(
            &self.alice.join(TEAM).join(rel),
            &memory_text(
                "Release train",
                "Releases leave every Tuesday",
                "project",
                "Thursday 14:00 UTC now.\n",
            ),
        );
        let run = self.sb.teammem(&self.alice, ["sync", "--json"]);
        run.expect_code(0);
        stdout_json(&run)
    }
}

#[test]
fn a_memory_both_changed_is_named_checked_kept_from_dream_and_resolved() {
    let pair = Pair::new();
    let (sb, alice) = (&pair.sb, &pair.alice);
    let report = pair.both_edit();
    assert_eq!(
        (&report["pulled"], &report["pushed"]),
        (&true.into(), &true.into()),
        "{report:#}"
    );

    let copies: Vec<String> = fs::read_dir(alice.join(TEAM).join("project"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("release-train.md.conflict-"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = format!("project/{}", copies[0]);

    // The index lists the memory first and its other version after it.
    let index = fs::read_to_string(alice.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(
        index.contains(&format!(
            "- [Release train](project/release-train.md) — Releases leave every Tuesday (also: {copy})"
        )),
        "{index}"
    );

    // What an agent receives names both versions and the command that resolves them.
    let started = sb.teammem(alice, ["session-start", "--hook", "plain"]);
    started.expect_code(0);
    assert!(
        started.stdout.contains(&format!(
            "Team memory conflict: 1 memory is kept in two versions that may contradict each \
             other: project/release-train.md (other version: {copy})"
        )),
        "{}",
        started.stdout
    );
    assert!(
        started.stdout.contains(
            "teammem resolve project/release-train.md --theirs | --ours | --both | --edit"
        )
    );

    // check reports it as a warning (exit 0), validate warns.
    let check = sb.teammem(alice, ["check", "--all", "--json"]);
    check.expect_code(0);
    let check = stdout_json(&check);
    let finding = check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "conflict-copy")
        .unwrap_or_else(|| panic!("no conflict-copy finding: {check:#}"));
    assert_eq!(finding["severity"], "warning");
    assert_eq!(finding["path"], format!("{TEAM}/{copy}"));
    let validate = sb.teammem(alice, ["validate"]);
    assert!(
        validate.stderr.contains("is kept in two versions"),
        "{}",
        validate.stderr
    );

    // dream leaves the pair alone, even though the two share a title and a description.
    let dream = sb.teammem(alice, ["dream", "--force", "--scope", "team", "--json"]);
    dream.expect_code(0);
    let dream = stdout_json(&dream);
    assert_eq!(dream[0]["deduped_entries"], 0, "{dream:#}");
    assert_eq!(
        dream[0]["skipped_conflicts"],
        serde_json::json!(["project/release-train.md", copy.clone()])
    );
    assert!(alice.join(TEAM).join(&copy).is_file());

    // Keep Alice's version; the next sync shares it and Bob's git pull gets one memory.
    let resolved = sb.teammem(alice, ["resolve", "project/release-train.md", "--ours"]);
    resolved.expect_code(0);
    assert_eq!(
        resolved.stdout,
        format!(
            "Resolved team:project/release-train.md: kept the other version (from {copy}); \
             removed {copy}.\n"
        )
    );
    let synced = sb.teammem(alice, ["sync", "--json"]);
    synced.expect_code(0);
    sb.git(&pair.bob, ["pull", "-q", "--ff-only"]);
    let bobs = fs::read_to_string(pair.bob.join(TEAM).join("project/release-train.md")).unwrap();
    assert!(bobs.contains("Thursday 14:00 UTC now."), "{bobs}");
    assert!(!pair.bob.join(TEAM).join(&copy).exists());
    let bob_index = fs::read_to_string(pair.bob.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(!bob_index.contains("conflict-"), "{bob_index}");
    sb.teammem(&pair.bob, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    let context = sb.teammem(alice, ["context"]);
    assert!(
        !context.stdout.contains("Team memory conflict"),
        "{}",
        context.stdout
    );
}

#[test]
fn resolve_keeps_theirs_both_or_an_edit_from_the_editor() {
    let pair = Pair::new();
    let (sb, alice) = (&pair.sb, &pair.alice);
    let release = alice.join(TEAM).join("project/release-train.md");
    let snapshot = |dir: &Path| {
        walk(&dir.join(TEAM))
            .into_iter()
            .map(|p| (p.clone(), fs::read(p).unwrap()))
            .collect::<Vec<_>>()
    };
    pair.both_edit();
    let conflicted = snapshot(alice);
    let theirs = fs::read_to_string(&release).unwrap();

    // Without a choice nothing changes and the message lists the choices.
    let ask = sb.teammem(alice, ["resolve", "project/release-train.md"]);
    ask.expect_code(2);
    assert!(
        ask.stderr.contains("--theirs") && ask.stderr.contains("--edit"),
        "{}",
        ask.stderr
    );

    // --theirs: Bob's version stays, the copy goes.
    sb.teammem(alice, ["resolve", "project/release-train.md", "--theirs"])
        .expect_code(0);
    assert_eq!(fs::read_to_string(&release).unwrap(), theirs);
    assert!(
        sb.teammem(alice, ["resolve", "--list"])
            .stdout
            .starts_with("No memory")
    );
    restore(&conflicted, alice);

    // --both: two memories, the second titled apart so the index tells them apart.
    sb.teammem(alice, ["resolve", "project/release-train.md", "--both"])
        .expect_code(0);
    let second = fs::read_to_string(alice.join(TEAM).join("project/release-train-2.md")).unwrap();
    assert!(
        second.starts_with("---\nname: Release train (second version)\n"),
        "{second}"
    );
    assert!(second.contains("Thursday 14:00 UTC now."));
    let index = fs::read_to_string(alice.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(
        index.contains("(project/release-train-2.md)") && !index.contains("conflict-"),
        "{index}"
    );
    restore(&conflicted, alice);

    // --edit: the editor gets both merged with markers; a save that keeps a marker is refused.
    let editor = sb.path().join("editor.sh");
    write(&editor, "#!/bin/sh\ncp \"$1\" \"$EDITOR_SEEN\"\n");
    make_executable(&editor);
    let seen = sb.path().join("seen.md");
    let run = run_env(
        sb,
        alice,
        &["resolve", "project/release-train.md", "--edit"],
        &[
            ("EDITOR", editor.to_str().unwrap()),
            ("EDITOR_SEEN", seen.to_str().unwrap()),
        ],
        "",
    );
    run.expect_code(1);
    assert!(
        run.stderr.contains("still a conflict marker"),
        "{}",
        run.stderr
    );
    let merged = fs::read_to_string(&seen).unwrap();
    assert!(merged.starts_with("---\nname: Release train\n"), "{merged}");
    assert!(merged.contains("<<<<<<< theirs (project/release-train.md)\nWednesday 09:00 UTC now.\n=======\nThursday 14:00 UTC now.\n>>>>>>> yours ("), "{merged}");
    assert_eq!(
        snapshot(alice),
        conflicted,
        "a refused edit changes nothing"
    );

    // A copy whose memory was deleted since: --theirs would delete the only version left.
    fs::remove_file(&release).unwrap();
    let refused = sb.teammem(alice, ["resolve", "project/release-train.md", "--theirs"]);
    refused.expect_code(1);
    assert!(
        refused
            .stderr
            .contains("would delete the only version left"),
        "{}",
        refused.stderr
    );
    restore(&conflicted, alice);

    let editor = sb.path().join("merge.sh");
    write(
        &editor,
        "#!/bin/sh\nsed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' \"$1\"\n",
    );
    make_executable(&editor);
    run_env(
        sb,
        alice,
        &["resolve", "project/release-train.md", "--edit"],
        &[("VISUAL", editor.to_str().unwrap())],
        "",
    )
    .expect_code(0);
    let edited = fs::read_to_string(&release).unwrap();
    assert!(
        edited.ends_with("Wednesday 09:00 UTC now.\nThursday 14:00 UTC now.\n"),
        "{edited}"
    );
    assert!(
        sb.teammem(alice, ["resolve", "--list"])
            .stdout
            .starts_with("No memory")
    );
}

fn restore(files: &[(PathBuf, Vec<u8>)], repo: &Path) {
    for path in walk(&repo.join(TEAM)) {
        fs::remove_file(path).unwrap();
    }
    for (path, bytes) in files {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}
