//! Which sync mode `teammem init` sets up: branch mode in a repository with a remote, unless
//! `--current-branch` is given or an existing setup says otherwise; current-branch mode without
//! a remote. Each run says the mode and why in one line.

use crate::common::branch_team::{BranchTeam, TEAM, write_memory};
use crate::common::{Run, Sandbox};

/// What init printed, both streams.
fn said(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

/// `git config teammem.branch` in `dir` (empty when unset).
fn mode_config(sb: &Sandbox, dir: &std::path::Path) -> String {
    let out = sb.git_output(dir, ["config", "--local", "teammem.branch"]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_clone_with_a_remote_gets_branch_mode_and_publishes_the_memory_branch() {
    let sb = Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    let seed = sb.repo("seed");
    sb.git(&seed, ["remote", "add", "origin", &url]);
    sb.git(&seed, ["push", "-q", "-u", "origin", "main"]);
    sb.git(sb.path(), ["clone", "-q", &url, "me"]);
    let me = sb.path().join("me");

    let run = sb.teammem(&me, ["init"]);
    run.expect_code(0);
    let out = said(&run);
    assert!(
        out.contains("Mode: branch mode (team-memory): the repository has a remote (origin)"),
        "{out}"
    );
    assert_eq!(out.matches("Mode:").count(), 1, "one line: {out}");
    assert_eq!(mode_config(&sb, &me), "team-memory");
    write_memory(&me, "project", "first", "The first memory.\n");
    sb.teammem(&me, ["sync"]).expect_code(0);
    let files = sb.git(&remote, ["ls-tree", "-r", "--name-only", "team-memory"]);
    assert!(
        files.contains(&format!("{TEAM}/project/first.md")),
        "{files}"
    );
    // The code branch holds no team folder, and git status does not show it.
    let main = sb.git(&remote, ["ls-tree", "-r", "--name-only", "main"]);
    assert!(!main.contains(TEAM), "{main}");
    assert_eq!(sb.git(&me, ["status", "--porcelain"]), "");
}

#[test]
fn a_repository_without_a_remote_gets_current_branch_mode() {
    let sb = Sandbox::new();
    let repo = sb.repo("solo");
    let run = sb.teammem(&repo, ["init"]);
    run.expect_code(0);
    let out = said(&run);
    assert!(
        out.contains("Mode: current-branch mode: the repository has no remote yet"),
        "{out}"
    );
    assert_eq!(mode_config(&sb, &repo), "");
    assert!(repo.join(TEAM).join("MEMORY.md").is_file());
}

#[test]
fn a_team_folder_tracked_on_the_branch_keeps_current_branch_mode() {
    let sb = Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    let repo = sb.repo("tracked");
    sb.git(&repo, ["remote", "add", "origin", &url]);
    write_memory(&repo, "project", "kept", "Committed like code.\n");
    sb.git(&repo, ["add", TEAM]);
    sb.git(&repo, ["commit", "-q", "-m", "team memory"]);
    sb.git(&repo, ["push", "-q", "-u", "origin", "main"]);

    let run = sb.teammem(&repo, ["init"]);
    run.expect_code(0);
    let out = said(&run);
    assert!(
        out.contains("Mode: current-branch mode: .qwen/team-memory/ is tracked"),
        "{out}"
    );
    assert_eq!(mode_config(&sb, &repo), "");
    write_memory(&repo, "project", "next", "Also on main.\n");
    sb.teammem(&repo, ["sync"]).expect_code(0);
    let main = sb.git(&remote, ["ls-tree", "-r", "--name-only", "main"]);
    assert!(main.contains(&format!("{TEAM}/project/next.md")), "{main}");
}

#[test]
fn an_existing_branch_setup_keeps_branch_mode_and_current_branch_switches_it_off() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    // The remote has the memory branch: a plain init adopts it.
    let run = team.sb.teammem(&me, ["init"]);
    run.expect_code(0);
    assert!(
        said(&run).contains("the remote already has the memory branch team-memory"),
        "{}",
        said(&run)
    );
    let again = team.sb.teammem(&me, ["init"]);
    again.expect_code(0);
    assert!(
        said(&again).contains("already uses branch mode (teammem.branch = team-memory)"),
        "{}",
        said(&again)
    );

    // A teammate who wants Qwen Code's model says so: the remote's memory branch is left alone.
    let other = team.clone_as("other");
    let run = team.sb.teammem(&other, ["init", "--current-branch"]);
    run.expect_code(0);
    assert_eq!(mode_config(&team.sb, &other), "false");
    let report = team.sb.teammem(&other, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(report["mode"], "current-branch", "{report:#}");
}

#[test]
fn fix_gitignore_asks_for_current_branch_mode_even_with_a_remote() {
    let sb = Sandbox::new();
    let remote = sb.bare("remote.git");
    let repo = sb.repo("ignored");
    sb.git(
        &repo,
        [
            "remote",
            "add",
            "origin",
            &format!("file://{}", remote.display()),
        ],
    );
    crate::common::write(&repo.join(".gitignore"), ".qwen/\n");
    let run = sb.teammem(&repo, ["init", "--fix-gitignore"]);
    run.expect_code(0);
    assert!(!said(&run).contains("Mode: branch"), "{}", said(&run));
    assert_eq!(mode_config(&sb, &repo), "");
    let ignore = std::fs::read_to_string(repo.join(".gitignore")).unwrap();
    assert!(ignore.contains("!/.qwen/team-memory/"), "{ignore}");
}
