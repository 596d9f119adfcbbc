//! Branch mode (issue 11): the team memory on a memory branch of its own shares in both
//! directions within one sync each, whatever the work tree's state — an unpushed commit, a
//! feature branch with or without upstream, detached HEAD, a rebase under way, a dirty file a
//! teammate changed upstream, linked worktrees — and sync leaves HEAD, the branch, the index,
//! the work tree and untracked files outside the team folder byte-identical.

use crate::common;
use crate::common::branch_team;
use crate::common::servers;

use std::fs;
use std::path::Path;

use branch_team::{BranchTeam, TEAM, assert_untouched, has_memory, outside, write_memory};
use common::write;

/// A teammate (a fresh clone, no setup) shares a memory; `me`, in whatever state the test put
/// it in, syncs once and both receives it and publishes its own; the teammate syncs once and
/// has mine. Everything outside the folder in `me` is as it was.
fn shares_both_ways(team: &BranchTeam, me: &Path, case: &str) {
    let mate = team.clone_as(&format!("mate-{case}"));
    write_memory(
        &mate,
        "project",
        &format!("mate-{case}"),
        "From the teammate.\n",
    );
    let report = team.sync(&mate);
    assert_eq!(report["pushed"], true, "{report:#}");

    write_memory(me, "feedback", &format!("me-{case}"), "From me.\n");
    let before = outside(&team.sb, me);
    let report = team.sync(me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(report["memory_branch"], "team-memory");
    assert!(
        has_memory(me, "project", &format!("mate-{case}")),
        "the teammate's memory did not arrive"
    );
    assert_untouched(&team.sb, me, &before);
    let tip = report["memory_tip"].as_str().unwrap().to_string();
    assert_eq!(
        team.sb
            .git(&team.remote, ["rev-parse", "refs/heads/team-memory"])
            .trim(),
        tip
    );

    let report = team.sync(&mate);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&mate, "feedback", &format!("me-{case}")));
    let index = fs::read_to_string(mate.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains(&format!("me-{case}.md")), "{index}");
    // The code branch never saw the memory.
    let main = team
        .sb
        .git(&team.remote, ["ls-tree", "-r", "--name-only", "main"]);
    assert!(!main.contains(".qwen"), "{main}");
}

#[test]
fn an_unpushed_commit_of_mine_does_not_stop_sharing() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    write(&me.join("src/lib.rs"), "pub fn answer() -> u32 { 43 }\n");
    team.sb
        .git(&me, ["commit", "-q", "-am", "work in progress"]);
    write(&me.join("src/new.rs"), "// staged\n");
    team.sb.git(&me, ["add", "src/new.rs"]);
    shares_both_ways(&team, &me, "unpushed");
    // My own commit was not published.
    let remote_main = team.sb.git(&team.remote, ["rev-parse", "main"]);
    assert_ne!(remote_main, team.sb.git(&me, ["rev-parse", "HEAD"]));
}

#[test]
fn a_feature_branch_with_upstream_shares_with_main() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb.git(&me, ["checkout", "-q", "-b", "feature"]);
    write(&me.join("src/feature.rs"), "// feature\n");
    team.sb.git(&me, ["add", "-A"]);
    team.sb.git(&me, ["commit", "-q", "-m", "feature"]);
    team.sb.git(&me, ["push", "-q", "-u", "origin", "feature"]);
    write(&me.join("src/feature.rs"), "// feature, more\n");
    team.sb
        .git(&me, ["commit", "-q", "-am", "unpushed on feature"]);
    shares_both_ways(&team, &me, "feature");
}

#[test]
fn a_feature_branch_without_upstream_shares() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb.git(&me, ["checkout", "-q", "-b", "topic"]);
    write(&me.join("notes.txt"), "untracked notes\n");
    shares_both_ways(&team, &me, "topic");
}

#[test]
fn a_detached_head_shares() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb.git(&me, ["checkout", "-q", "--detach", "HEAD"]);
    shares_both_ways(&team, &me, "detached");
}

#[test]
fn a_rebase_under_way_shares() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb.git(&me, ["checkout", "-q", "-b", "side"]);
    write(&me.join("README.md"), "# side\n");
    team.sb.git(&me, ["commit", "-q", "-am", "side"]);
    team.sb.git(&me, ["checkout", "-q", "main"]);
    write(&me.join("README.md"), "# main\n");
    team.sb.git(&me, ["commit", "-q", "-am", "main"]);
    let rebase = team.sb.git_output(&me, ["rebase", "side"]);
    assert!(
        !rebase.status.success(),
        "the rebase should stop on the conflict"
    );
    assert!(me.join(".git/rebase-merge").exists() || me.join(".git/rebase-apply").exists());
    shares_both_ways(&team, &me, "rebase");
    assert!(me.join(".git/rebase-merge").exists() || me.join(".git/rebase-apply").exists());
}

#[test]
fn a_dirty_file_a_teammate_changed_upstream_does_not_block() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let coder = team.clone_as("coder");
    write(&coder.join("README.md"), "# project, changed upstream\n");
    team.sb.git(&coder, ["commit", "-q", "-am", "readme"]);
    team.sb.git(&coder, ["push", "-q", "origin", "main"]);
    write(&me.join("README.md"), "# project, my unsaved edit\n");
    write(&me.join("src/lib.rs"), "pub fn answer() -> u32 { 7 }\n");
    team.sb.git(&me, ["add", "src/lib.rs"]);
    shares_both_ways(&team, &me, "dirty");
    assert_eq!(
        fs::read_to_string(me.join("README.md")).unwrap(),
        "# project, my unsaved edit\n"
    );
}

#[test]
fn over_git_daemon_too() {
    let team = BranchTeam::new();
    let daemon = servers::GitDaemon::start(&team.sb, team.sb.path());
    let url = daemon.url("remote.git");
    team.sb.git(team.sb.path(), ["clone", "-q", &url, "me"]);
    let me = team.sb.path().join("me");
    team.sb.git(&me, ["config", "user.email", "me@example.com"]);
    shares_both_ways(&team, &me, "daemon");
}

#[test]
fn over_smart_http_with_a_token() {
    let team = BranchTeam::new();
    let http = servers::HttpGit::start(&team.sb, team.sb.path(), "alice", "s3cret-pass");
    let me = team.clone_as("me");
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &http.url("remote.git")],
    );
    write_memory(&me, "feedback", "over-http", "Smart HTTP.\n");
    let before = outside(&team.sb, &me);
    let token = [
        ("TEAMMEM_GIT_TOKEN", "s3cret-pass"),
        ("TEAMMEM_GIT_USERNAME", "alice"),
    ];
    let report = team.sync_env(&me, &token);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(has_memory(&me, "project", "seeded"));
    assert!(
        team.remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/over-http.md"))
    );
    assert_untouched(&team.sb, &me, &before);
    drop(http);
}

#[test]
fn two_linked_worktrees_share_one_memory_branch() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let other = team.sb.path().join("me-wt");
    team.sb.git(
        &me,
        ["worktree", "add", "-q", "-b", "wt", other.to_str().unwrap()],
    );
    let report = team.sync(&other);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&other, "project", "seeded"));
    write_memory(&other, "reference", "from-the-worktree", "Linked.\n");
    let before = outside(&team.sb, &other);
    let report = team.sync(&other);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_untouched(&team.sb, &other, &before);

    let before = outside(&team.sb, &me);
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&me, "reference", "from-the-worktree"));
    assert_untouched(&team.sb, &me, &before);
    shares_both_ways(&team, &me, "worktrees");
    let report = team.sync(&other);
    assert!(has_memory(&other, "feedback", "me-worktrees"), "{report:#}");
    assert!(
        has_memory(&other, "project", "mate-worktrees"),
        "{report:#}"
    );
}

#[test]
fn both_versions_of_a_memory_both_changed_are_kept() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    team.sync(&me);
    team.sync(&mate);
    write_memory(&mate, "project", "seeded", "The teammate's version.\n");
    assert_eq!(team.sync(&mate)["pushed"], true);
    write_memory(&me, "project", "seeded", "My version.\n");
    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    let said = report["warnings"].to_string();
    assert!(said.contains("both changed"), "{report:#}");
    let folder = me.join(TEAM).join("project");
    let texts: Vec<String> = fs::read_dir(&folder)
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("The teammate's version.")));
    assert!(texts.iter().any(|t| t.contains("My version.")));
    // The resolution is one record commit on top of the teammate's: no merge commit, and the
    // teammate's commit is kept as it was pushed.
    let remote = &team.remote;
    assert_eq!(
        team.sb.git(remote, ["rev-list", "--merges", "team-memory"]),
        ""
    );
    let mine = team
        .sb
        .git(remote, ["rev-list", "-n", "1", "--parents", "team-memory"]);
    let theirs = team.sb.git(&mate, ["rev-parse", "refs/heads/team-memory"]);
    assert_eq!(
        mine.split_whitespace().nth(1),
        Some(theirs.trim()),
        "{mine}"
    );
    let report = team.sync(&mate);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(
        fs::read_dir(mate.join(TEAM).join("project"))
            .unwrap()
            .count(),
        2
    );
}

const PROTECT: &str = "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/team-memory ]; then\n    echo \"team-memory is protected: open a proposal\" >&2\n    exit 1\n  fi\ndone\nexit 0\n";

#[test]
fn a_protected_memory_branch_gets_a_proposal_that_converges_once_merged() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let hook = team.remote.join("hooks/pre-receive");
    write(&hook, PROTECT);
    let mut perms = fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).unwrap();

    write_memory(&me, "feedback", "reviewed", "Needs a maintainer.\n");
    let before = outside(&team.sb, &me);
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    assert_eq!(report["proposal"], "team-memory-proposals/me", "{report:#}");
    assert_untouched(&team.sb, &me, &before);
    let proposed = team.remote_files("team-memory-proposals/me");
    assert!(
        proposed.contains(&format!("{TEAM}/feedback/reviewed.md")),
        "{proposed:?}"
    );
    assert!(
        !team
            .remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/reviewed.md"))
    );
    // Syncing again proposes nothing new and stays `proposed`.
    let again = team.sync(&me);
    assert_eq!(again["skipped_reason"], "proposed", "{again:#}");
    assert_eq!(again["committed"], false, "{again:#}");

    // The maintainer reviews it with teammem review, then merges it (allowed to push).
    let maintainer = team.clone_as("maintainer");
    team.sb.git(&maintainer, ["fetch", "-q", "origin"]);
    let review = team.teammem(
        &maintainer,
        &[
            "review",
            "origin/team-memory..origin/team-memory-proposals/me",
        ],
        0,
    );
    assert!(review.contains("reviewed"), "{review}");
    team.teammem(
        &maintainer,
        &[
            "check",
            "--range",
            "origin/team-memory..origin/team-memory-proposals/me",
        ],
        0,
    );
    team.sb.git(&maintainer, ["checkout", "-q", "team-memory"]);
    team.sb.git(
        &maintainer,
        [
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge proposal",
            "origin/team-memory-proposals/me",
        ],
    );
    fs::remove_file(&hook).unwrap();
    team.sb
        .git(&maintainer, ["push", "-q", "origin", "team-memory"]);
    write(&hook, PROTECT);

    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    let tip = team
        .sb
        .git(&team.remote, ["rev-parse", "team-memory"])
        .trim()
        .to_string();
    assert_eq!(report["memory_tip"], tip, "{report:#}");
    let files = team.remote_files("team-memory");
    let reviewed: Vec<_> = files.iter().filter(|f| f.contains("reviewed")).collect();
    assert_eq!(reviewed.len(), 1, "{files:?}");
}

#[test]
fn a_tracked_folder_with_history_migrates_with_every_memory() {
    let sb = common::Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    sb.git(sb.path(), ["clone", "-q", &url, "me"]);
    let me = sb.path().join("me");
    write(&me.join("README.md"), "# project\n");
    write_memory(&me, "project", "first", "One.\n");
    sb.git(&me, ["add", "-A"]);
    sb.git(&me, ["commit", "-q", "-m", "first memory"]);
    write_memory(&me, "feedback", "second", "Two.\n");
    write_memory(&me, "project", "first", "One, revised.\n");
    sb.git(&me, ["add", "-A"]);
    sb.git(&me, ["commit", "-q", "-m", "second memory"]);
    sb.git(&me, ["push", "-q", "origin", "main"]);
    write_memory(&me, "reference", "uncommitted", "Three, on disk only.\n");
    write(&me.join("src/wip.rs"), "// staged\n");
    sb.git(&me, ["add", "src/wip.rs"]);

    let run = sb.teammem(&me, ["init", "--branch", "--migrate", "--json"]);
    run.expect_code(0);
    let done: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(done["created_from"], "history", "{done:#}");
    assert_eq!(done["still_tracked"], false, "{done:#}");
    let tree = sb.git(&me, ["ls-tree", "-r", "--name-only", "team-memory"]);
    for memory in [
        "project/first.md",
        "feedback/second.md",
        "reference/uncommitted.md",
    ] {
        assert!(tree.contains(&format!("{TEAM}/{memory}")), "{tree}");
    }
    let history = sb.git(&me, ["log", "--format=%s", "team-memory"]);
    assert!(
        history.contains("first memory") && history.contains("second memory"),
        "{history}"
    );
    let first = sb.git(
        &me,
        ["show", &format!("team-memory:{TEAM}/project/first.md")],
    );
    assert!(first.contains("One, revised."), "{first}");
    // The current branch no longer tracks the folder; the user's staged file is still staged.
    let head = sb.git(&me, ["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!head.contains(".qwen"), "{head}");
    assert_eq!(
        sb.git(&me, ["diff", "--cached", "--name-only"]),
        "src/wip.rs\n"
    );
    let status = sb.git(&me, ["status", "--porcelain"]);
    assert!(!status.contains(".qwen"), "{status}");
    assert!(has_memory(&me, "project", "first"));
    assert!(has_memory(&me, "reference", "uncommitted"));

    let run = sb.teammem(&me, ["sync", "--json"]);
    run.expect_code(0);
    let files = sb.git(&remote, ["ls-tree", "-r", "--name-only", "team-memory"]);
    assert!(files.contains("reference/uncommitted.md"), "{files}");
}

#[test]
fn a_sync_killed_after_writing_part_of_the_folder_is_finished_by_the_next() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sync(&me);
    let mate = team.clone_as("mate");
    for i in 0..5 {
        write_memory(&mate, "project", &format!("batch-{i}"), "A batch.\n");
    }
    assert_eq!(team.sync(&mate)["pushed"], true);

    let base_ref = "refs/teammem/materialised/main";
    let base_before = team.sb.git(&me, ["rev-parse", base_ref]).trim().to_string();
    let report = team.sync(&me);
    assert_eq!(report["pulled"], true, "{report:#}");
    let tip = report["memory_tip"].as_str().unwrap().to_string();
    // What a kill in the middle of the materialisation leaves: some files written, the base
    // not yet moved, and the lock and ref-move note of a process that is gone.
    team.sb.git(&me, ["update-ref", base_ref, &base_before]);
    for i in 0..2 {
        fs::remove_file(me.join(format!("{TEAM}/project/batch-{i}.md"))).unwrap();
    }
    let dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    let mut dead = dead;
    dead.wait().unwrap();
    fs::write(me.join(".git/teammem-sync.lock"), format!("{pid} 1\n")).unwrap();

    let before = outside(&team.sb, &me);
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    assert_eq!(report["memory_tip"], tip.as_str(), "{report:#}");
    for i in 0..5 {
        assert!(
            has_memory(&me, "project", &format!("batch-{i}")),
            "batch-{i}"
        );
    }
    assert_untouched(&team.sb, &me, &before);
    assert!(!me.join(".git/teammem-sync.lock").exists());
}

#[test]
fn a_secret_stays_out_of_the_branch_and_a_teammates_secret_out_of_the_folder() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let key = format!("ghp_{}", "I9wOi9OvJcNDmFJJONko0LifpTe9NdaYVQyF");
    write_memory(&me, "reference", "token", &format!("The token is {key}\n"));
    let report = team.sync(&me);
    assert_eq!(
        report["quarantined"][0]["path"],
        format!("{TEAM}/reference/token.md")
    );
    assert!(
        !team
            .remote_files("team-memory")
            .iter()
            .any(|f| f.contains("token"))
    );
    let index = fs::read_to_string(me.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(!index.contains("token.md"), "{index}");
    assert!(
        has_memory(&me, "reference", "token"),
        "a quarantined file stays on disk"
    );
    // A teammate's commit that carries one (pushed with the git CLI) is never written here.
    let mate = team.clone_as("mate");
    team.sb.git(&mate, ["checkout", "-q", "team-memory"]);
    write_memory(&mate, "reference", "leak", &format!("Use {key}\n"));
    team.sb.git(&mate, ["add", "-f", "-A", TEAM]);
    team.sb.git(&mate, ["commit", "-q", "-m", "leak"]);
    team.sb.git(&mate, ["push", "-q", "origin", "team-memory"]);
    let report = team.sync(&me);
    assert_eq!(
        report["withheld"][0]["path"],
        format!("{TEAM}/reference/leak.md"),
        "{report:#}"
    );
    assert!(!has_memory(&me, "reference", "leak"));
    // Withheld is not deleted: the next sync records nothing.
    let again = team.sync(&me);
    assert_eq!(again["committed"], false, "{again:#}");
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.contains("leak"))
    );
}

#[test]
fn session_start_in_a_fresh_clone_brings_the_team_memory_with_no_setup() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(!me.join(TEAM).exists());
    let before = outside(&team.sb, &me);
    let run = team.sb.teammem(&me, ["session-start", "--hook", "plain"]);
    run.expect_code(0);
    assert!(run.stdout.contains("About seeded"), "{}", run.stdout);
    assert!(
        run.stdout.contains("memory branch team-memory"),
        "{}",
        run.stdout
    );
    assert!(has_memory(&me, "project", "seeded"));
    assert_untouched(&team.sb, &me, &before);
    let dry = team.teammem(&me, &["sync", "--dry-run"], 0);
    assert!(dry.contains("origin/team-memory"), "{dry}");
}

#[test]
fn a_sparse_checkout_shares() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb
        .git(&me, ["sparse-checkout", "set", "--no-cone", "/src/"]);
    assert!(!me.join("README.md").exists());
    shares_both_ways(&team, &me, "sparse");
}

#[test]
fn init_branch_with_no_memory_yet_publishes_a_branch_teammates_find() {
    let sb = common::Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    sb.git(sb.path(), ["clone", "-q", &url, "first"]);
    let first = sb.path().join("first");
    write(&first.join("README.md"), "# project\n");
    sb.git(&first, ["add", "-A"]);
    sb.git(&first, ["commit", "-q", "-m", "initial"]);
    sb.git(&first, ["push", "-q", "origin", "main"]);
    sb.teammem(&first, ["init", "--branch"]).expect_code(0);
    assert_eq!(
        sb.git(&first, ["config", "teammem.branch"]).trim(),
        "team-memory"
    );
    sb.teammem(&first, ["sync"]).expect_code(0);
    assert!(
        sb.git(&remote, ["ls-tree", "-r", "--name-only", "team-memory"])
            .contains(".qwen/team-memory/MEMORY.md")
    );
    sb.git(sb.path(), ["clone", "-q", &url, "second"]);
    let second = sb.path().join("second");
    write_memory(&second, "project", "hello", "Hello.\n");
    let run = sb.teammem(&second, ["sync", "--json"]);
    run.expect_code(0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["mode"], "branch", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    sb.teammem(&first, ["sync"]).expect_code(0);
    assert!(has_memory(&first, "project", "hello"));
}

#[test]
fn a_fresh_clone_with_its_own_version_of_a_memory_keeps_both_on_one_history() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    write_memory(&me, "project", "seeded", "A stale copy of mine.\n");
    write_memory(&me, "project", "mine", "Only here.\n");
    let before = outside(&team.sb, &me);
    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_untouched(&team.sb, &me, &before);
    let texts: Vec<String> = fs::read_dir(me.join(TEAM).join("project"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("The first memory.")));
    assert!(texts.iter().any(|t| t.contains("A stale copy of mine.")));
    let roots = team
        .sb
        .git(&team.remote, ["rev-list", "--max-parents=0", "team-memory"]);
    assert_eq!(roots.lines().count(), 1, "one history: {roots}");
    // The next sync records nothing more.
    assert_eq!(team.sync(&me)["committed"], false);
}

/// `teammem init` in a repository with two remotes, neither `origin`, and a branch without
/// upstream: branch mode (the repository has remotes), saying which remotes and what to set; a
/// sync then names the same fix instead of claiming there is no remote (both said "no remote"
/// and init chose current-branch mode). Once the branch has an upstream, the memory is shared
/// through that remote, and nothing goes to the other.
#[test]
fn init_with_two_remotes_and_no_origin_chooses_branch_mode_and_names_the_fix() {
    let sb = common::Sandbox::new();
    let up = sb.bare("up.git");
    let fork = sb.bare("fork.git");
    let me = sb.path().join("me");
    sb.git(sb.path(), ["init", "-q", "-b", "main", "me"]);
    write(&me.join("README.md"), "# project\n");
    sb.git(&me, ["add", "-A"]);
    sb.git(&me, ["commit", "-q", "-m", "initial"]);
    for (name, path) in [("up", &up), ("fork", &fork)] {
        let url = format!("file://{}", path.display());
        sb.git(&me, ["remote", "add", name, &url]);
    }
    let run = sb.teammem(&me, ["init"]);
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("Mode: branch mode (team-memory): the repository has 2 remotes (fork, up)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("git branch --set-upstream-to"),
        "{}",
        run.stdout
    );

    write_memory(
        &me,
        "project",
        "mine",
        "Shared once there is an upstream.\n",
    );
    let team = BranchTeam {
        sb,
        remote: up.clone(),
        url: format!("file://{}", up.display()),
    };
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "no-remote", "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("the repository has 2 remotes (fork, up), none is `origin`"),
        "{report:#}"
    );
    team.sb.git(&me, ["push", "-q", "-u", "up", "main"]);
    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        team.remote_files("team-memory")
            .contains(&format!("{TEAM}/project/mine.md"))
    );
    let fork_refs = team.sb.git(&fork, ["for-each-ref"]);
    assert_eq!(fork_refs, "", "nothing goes to the other remote");
}

/// The remote already has a `team-memory` branch that someone else started, holding files
/// that are not memories (`notes.txt`, `scripts/run.sh`). `init` adopts it and says so; my
/// syncs add my memories and never remove their files (the record commit deleted both, and
/// the push published that), also when they push in between and my commit is re-created on
/// their tip.
#[test]
fn a_memory_branch_someone_else_started_keeps_its_other_files() {
    let sb = common::Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    sb.git(sb.path(), ["clone", "-q", &url, "owner"]);
    let owner = sb.path().join("owner");
    write(&owner.join("README.md"), "# project\n");
    sb.git(&owner, ["add", "-A"]);
    sb.git(&owner, ["commit", "-q", "-m", "initial"]);
    sb.git(&owner, ["push", "-q", "origin", "main"]);
    sb.git(&owner, ["switch", "-q", "--orphan", "team-memory"]);
    write(&owner.join("notes.txt"), "not a memory\n");
    write(&owner.join("scripts/run.sh"), "echo hi\n");
    sb.git(&owner, ["add", "-A"]);
    sb.git(&owner, ["commit", "-q", "-m", "someone's branch"]);
    sb.git(&owner, ["push", "-q", "-u", "origin", "team-memory"]);
    let team = BranchTeam { sb, remote, url };
    let me = team.clone_as("me");

    let init = team.teammem(&me, &["init"], 0);
    assert!(
        init.contains("the remote already has the memory branch team-memory"),
        "{init}"
    );
    write_memory(&me, "project", "mine", "My memory.\n");
    assert_eq!(team.sync(&me)["pushed"], true);
    let files = team.remote_files("team-memory");
    for kept in ["notes.txt", "scripts/run.sh"] {
        assert!(files.contains(&kept.to_string()), "{kept}: {files:?}");
    }
    assert!(
        files.contains(&format!("{TEAM}/project/mine.md")),
        "{files:?}"
    );

    // They change their notes; my next memory is re-created on their tip.
    team.sb.git(&owner, ["pull", "-q", "--ff-only"]);
    write(&owner.join("notes.txt"), "not a memory, edited\n");
    team.sb.git(&owner, ["commit", "-q", "-am", "edit notes"]);
    team.sb.git(&owner, ["push", "-q", "origin", "team-memory"]);
    write_memory(&me, "project", "second", "My second memory.\n");
    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    let files = team.remote_files("team-memory");
    assert!(files.contains(&"scripts/run.sh".to_string()), "{files:?}");
    assert!(
        files.contains(&format!("{TEAM}/project/second.md")),
        "{files:?}"
    );
    assert_eq!(
        team.sb.git(&team.remote, ["show", "team-memory:notes.txt"]),
        "not a memory, edited\n"
    );
    assert!(!me.join("notes.txt").exists());
}
