//! Finding the repository as git does (issue 41): `GIT_DIR` and `GIT_WORK_TREE` name the
//! repository a sync works in, whatever folder it starts in — inside another clone (`decoy`,
//! which must not change at all) or outside any repository — in both sync modes.

use crate::common;
use crate::common::branch_team;
use crate::common::netsync;
use crate::common::syncrun;

use std::path::Path;

use branch_team::{BranchTeam, has_memory, outside};
use common::Sandbox;
use netsync::Team;
use syncrun::{files_at, reason, sync_json, write_memory};

/// What a user sees of a clone that a sync must not touch: HEAD, refs, status, the index, the
/// exclude file.
fn snapshot(sb: &Sandbox, dir: &Path) -> Vec<String> {
    let text =
        |args: &[&str]| String::from_utf8_lossy(&sb.git_output(dir, args).stdout).into_owned();
    vec![
        text(&["for-each-ref"]),
        text(&["status", "--porcelain", "--untracked-files=all"]),
        text(&["ls-files", "-s"]),
        std::fs::read_to_string(dir.join(".git/info/exclude")).unwrap_or_default(),
    ]
}

fn env_for(repo: &Path) -> [(&'static str, String); 2] {
    [
        ("GIT_DIR", repo.join(".git").display().to_string()),
        ("GIT_WORK_TREE", repo.display().to_string()),
    ]
}

fn sync_with(sb: &Sandbox, cwd: &Path, env: &[(&'static str, String)]) -> serde_json::Value {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    sync_json(sb, cwd, &[], &env)
}

#[test]
fn from_inside_a_decoy_clone_git_dir_and_work_tree_name_the_repository_synced() {
    let team = Team::new();
    let decoy = team.sb.path().join("decoy");
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", team.bare.to_str().unwrap(), "decoy"],
    );
    write_memory(&decoy, "project", "decoy-only", "Must stay here.\n");
    write_memory(&team.me, "project", "from-me", "Mine.\n");
    let before = snapshot(&team.sb, &decoy);

    let report = sync_with(&team.sb, &decoy, &env_for(&team.me));
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains("project/from-me.md"), "{remote}");
    assert!(!remote.contains("decoy-only"), "{remote}");
    assert_eq!(
        snapshot(&team.sb, &decoy),
        before,
        "the decoy clone changed"
    );
    assert_eq!(team.status(&team.me), "");

    // With relative paths too (taken from where the command starts, as git takes them).
    write_memory(&team.me, "project", "relative", "Relative paths.\n");
    let report = sync_with(
        &team.sb,
        &decoy,
        &[
            ("GIT_DIR", "../me/.git".to_string()),
            ("GIT_WORK_TREE", "../me".to_string()),
        ],
    );
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("project/relative.md"));
    assert_eq!(
        snapshot(&team.sb, &decoy),
        before,
        "the decoy clone changed"
    );
}

#[test]
fn outside_any_repository_git_dir_finds_it() {
    let team = Team::new();
    let elsewhere = team.sb.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    write_memory(
        &team.me,
        "feedback",
        "from-outside",
        "Synced from outside.\n",
    );
    let report = sync_with(&team.sb, &elsewhere, &env_for(&team.me));
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("feedback/from-outside.md"));

    // Without the variables the same folder is no repository.
    let run = team.sb.teammem(&elsewhere, ["sync", "--json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("not-a-git-repo"), "{}", run.stdout);

    // A GIT_DIR that names nothing says so, with git's words and the fix.
    let run = syncrun::teammem_env(
        &team.sb,
        &elsewhere,
        &["sync"],
        &[("GIT_DIR", "/nonexistent/.git")],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("GIT_DIR"), "{}", run.stderr);
}

#[test]
fn a_ceiling_directory_stops_the_walk_up_as_in_git() {
    let team = Team::new();
    let deep = team.me.join("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let run = syncrun::teammem_env(
        &team.sb,
        &deep,
        &["sync", "--json"],
        &[("GIT_CEILING_DIRECTORIES", team.me.to_str().unwrap())],
    );
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("not-a-git-repo"), "{}", run.stdout);
}

#[test]
fn in_branch_mode_the_named_repository_gets_the_memory_branch_and_the_decoy_nothing() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let decoy = team.clone_as("decoy");
    write_memory(&me, "project", "from-me", "Mine.\n");
    let before = snapshot(&team.sb, &decoy);
    let outside_before = outside(&team.sb, &decoy);

    let env = env_for(&me);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let report = team.sync_env(&decoy, &env);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        has_memory(&me, "project", "seeded"),
        "the branch was not written into me"
    );
    let remote = team.remote_files("team-memory");
    assert!(
        remote.iter().any(|f| f.ends_with("project/from-me.md")),
        "{remote:?}"
    );
    assert_eq!(
        snapshot(&team.sb, &decoy),
        before,
        "the decoy clone changed"
    );
    assert_eq!(outside(&team.sb, &decoy), outside_before);
    assert!(!decoy.join(".qwen").exists());

    // Outside any repository, the same.
    let elsewhere = team.sb.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    write_memory(&me, "feedback", "from-outside", "Again.\n");
    let report = team.sync_env(&elsewhere, &env);
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = team.remote_files("team-memory");
    assert!(
        remote
            .iter()
            .any(|f| f.ends_with("feedback/from-outside.md")),
        "{remote:?}"
    );
}

#[test]
fn git_common_dir_names_a_linked_worktree_synced_through_git() {
    let team = Team::new();
    let sb = &team.sb;
    sb.git(
        &team.me,
        [
            "worktree",
            "add",
            "-q",
            "../wt",
            "-b",
            "feature",
            "origin/main",
        ],
    );
    let wt = sb.path().join("wt");
    sb.git(&wt, ["push", "-q", "-u", "origin", "feature"]);
    sb.git(
        sb.path(),
        ["clone", "-q", team.bare.to_str().unwrap(), "decoy"],
    );
    let decoy = sb.path().join("decoy");
    write_memory(
        &wt,
        "project",
        "from-worktree",
        "Written in the worktree.\n",
    );
    let before = snapshot(sb, &decoy);

    // As git takes them: relative to where the command starts.
    let env = [
        ("GIT_DIR", "../me/.git/worktrees/wt".to_string()),
        ("GIT_COMMON_DIR", "../me/.git".to_string()),
        ("GIT_WORK_TREE", "../wt".to_string()),
    ];
    let report = sync_with(sb, &decoy, &env);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = files_at(sb, &team.bare, "feature");
    assert!(remote.contains("project/from-worktree.md"), "{remote}");
    assert!(!files_at(sb, &team.bare, "main").contains("from-worktree"));
    assert_eq!(snapshot(sb, &decoy), before, "the decoy clone changed");
    assert_eq!(team.status(&wt), "");

    // The commit-time check finds the same repository.
    let env: Vec<(&str, Option<&str>)> = env.iter().map(|(k, v)| (*k, Some(v.as_str()))).collect();
    let check = crate::common::invoke::teammem_with(sb, &decoy, ["check", "--all"], &env, None);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(
        check.stdout.contains("(HEAD): 0 error(s)"),
        "{}",
        check.stdout
    );
}
