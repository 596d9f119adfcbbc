//! `sync --json` prints its report on every exit path, also when the project cannot be read
//! at all (a broken `.git/config`): the report says `error` and why, the error goes to stderr.

use crate::common;

use common::Sandbox;
use serde_json::Value;

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// A repository whose `.git/config` git and libgit2 refuse to parse.
fn broken_repo(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("project");
    let config = repo.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core\n\tbroken\n");
    std::fs::write(&config, text).unwrap();
    repo
}

#[test]
fn sync_json_reports_a_project_it_cannot_open() {
    let sb = Sandbox::new();
    let repo = broken_repo(&sb);
    let run = sb.teammem(&repo, ["sync", "--json"]);
    run.expect_code(2);
    let report = json(&run.stdout);
    assert_eq!(report["skipped_reason"], "error", "{report:#}");
    assert_eq!(report["committed"], false);
    assert_eq!(report["pulled"], false);
    assert_eq!(report["pushed"], false);
    assert_eq!(report["commit"], Value::Null);
    let why = report["warnings"][0].as_str().unwrap();
    assert!(why.contains(".git/config"), "{why}");
    assert!(run.stderr.contains(".git/config"), "{}", run.stderr);

    // --format json is the same report; without JSON only the error is printed.
    let run = sb.teammem(&repo, ["sync", "--format", "json"]);
    run.expect_code(2);
    assert_eq!(json(&run.stdout)["skipped_reason"], "error");
    let run = sb.teammem(&repo, ["sync"]);
    run.expect_code(2);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains(".git/config"), "{}", run.stderr);
}

#[test]
fn sync_json_outside_a_repository_says_not_a_git_repo() {
    let sb = Sandbox::new();
    let dir = sb.path().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let run = sb.teammem(&dir, ["sync", "--json"]);
    run.expect_code(2);
    assert_eq!(json(&run.stdout)["skipped_reason"], "not-a-git-repo");
}

#[test]
fn session_start_json_carries_the_report_when_the_project_cannot_be_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    // Discovery reads no config (git does not either to find a repository); a `GIT_DIR` that
    // names nothing is a project git itself cannot open.
    let missing = sb.path().join("no-such-git-dir");
    let run = common::syncrun::teammem_env(
        &sb,
        &repo,
        &["session-start", "--json"],
        &[("GIT_DIR", missing.to_str().unwrap())],
    );
    run.expect_code(0);
    let started = json(&run.stdout);
    assert_eq!(started["sync"]["skipped_reason"], "error", "{started:#}");
    assert!(
        started["sync_line"]
            .as_str()
            .unwrap()
            .contains("could not read this project"),
        "{started:#}"
    );
}
