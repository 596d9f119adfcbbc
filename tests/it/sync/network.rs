//! `teammem sync`, the whole flow through the real binary: a bare remote served by git daemon
//! or smart HTTP, my clone synced by teammem, a teammate's clone driven by the git CLI.

use crate::common;
use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::memory_text;
use netsync::{Team, without_hanging};
use servers::{BlackHole, GitDaemon, HttpGit, free_port};
use syncrun::{files_at, mate_pushes_memory, reason, subjects, sync_json, write_memory};

const TEAM: &str = ".qwen/team-memory";

fn install_hook(bare: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let hook = bare.join("hooks").join(name);
    fs::write(&hook, script).unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fresh clone of the remote, with its team index checked.
fn fresh_clone(team: &Team, name: &str) -> std::path::PathBuf {
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", team.bare.to_str().unwrap(), name],
    );
    let dir = team.sb.path().join(name);
    team.sb
        .teammem(&dir, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    dir
}

fn teammate_pushed_and_i_wrote(transport: &str) {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    mate_pushes_memory(&team.sb, &team.mate, "deploys-need-two-approvals");
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");
    // `teammem add` rewrites MEMORY.md too: the same file the teammate's push changed.
    team.sb
        .teammem(&team.me, ["index", "--scope", "team"])
        .expect_code(0);

    let report = sync_json(&team.sb, &team.me, &["--transport", transport], &[]);
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(reason(&report), "");
    assert_eq!(team.status(&team.me), "");
    assert_eq!(team.rev(&team.me, "HEAD"), team.rev(&team.bare, "main"));
    assert_eq!(
        report["commit"].as_str().unwrap(),
        team.rev(&team.bare, "main")
    );
    let subjects = subjects(&team.sb, &team.bare, "main");
    assert!(
        subjects.starts_with("chore(memory): sync team memory\nmate: deploys-need-two-approvals\n"),
        "{subjects}"
    );

    let fresh = fresh_clone(&team, "fresh");
    for file in [
        "project/deploys-need-two-approvals.md",
        "feedback/prefer-small-prs.md",
    ] {
        assert!(fresh.join(TEAM).join(file).is_file(), "{file}");
    }
    let index = fs::read_to_string(fresh.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains("deploys-need-two-approvals") && index.contains("prefer-small-prs"));

    // Nothing left to do: nothing committed, pulled or pushed.
    let again = sync_json(&team.sb, &team.me, &["--transport", transport], &[]);
    assert_eq!(
        (&again["committed"], &again["pulled"], &again["pushed"]),
        (&false.into(), &false.into(), &false.into())
    );
}

#[test]
fn teammate_pushed_and_i_wrote_a_memory_both_arrive_everywhere() {
    teammate_pushed_and_i_wrote("builtin");
}

#[test]
fn the_git_cli_transport_does_the_same() {
    teammate_pushed_and_i_wrote("git-cli");
}

#[test]
fn my_unpushed_commit_never_reaches_the_remote() {
    let team = Team::new();
    fs::write(team.me.join("README.md"), "my work in progress\n").unwrap();
    team.sb
        .git(&team.me, ["commit", "-qam", "wip: my own change"]);
    let mine = team.rev(&team.me, "HEAD");
    write_memory(&team.me, "project", "ledger-owner", "Payments.\n");

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "local-ahead", "{report:#}");
    assert_eq!(
        report["committed"], true,
        "the team change is committed locally"
    );
    assert_eq!(report["pushed"], false);
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(warning.contains(&mine[..7]), "{warning}");
    assert_eq!(team.rev(&team.me, "HEAD~1"), mine);

    // The teammate pushes: now both moved.
    mate_pushes_memory(&team.sb, &team.mate, "on-call-rota");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "diverged", "{report:#}");
    assert_eq!(report["pulled"], false);
    assert_eq!(
        team.rev(&team.me, "HEAD~1"),
        mine,
        "my commits are not rewritten"
    );

    let remote_log = team.sb.git(&team.bare, ["log", "--format=%H %s", "--all"]);
    assert!(!remote_log.contains(&mine), "{remote_log}");
    assert!(!remote_log.contains("wip: my own change"), "{remote_log}");
    assert!(!files_at(&team.sb, &team.bare, "main").contains("ledger-owner"));
}

#[test]
fn both_edited_the_same_memory_both_versions_are_kept_and_pushed() {
    let team = Team::new();
    let file = format!("{TEAM}/feedback/use-postgres.md");
    let mate_text = memory_text(
        "Use the real database",
        "Integration tests hit a real Postgres",
        "feedback",
        "Postgres 16, started by the test harness.\n",
    );
    team.mate_pushes(&file, &mate_text);
    let my_text = memory_text(
        "Use the real database",
        "Integration tests hit a real Postgres",
        "feedback",
        "Postgres 15 in docker compose.\n",
    );
    common::write(&team.me.join(&file), &my_text);

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(
        (&report["committed"], &report["pulled"], &report["pushed"]),
        (&true.into(), &true.into(), &true.into())
    );
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("use-postgres.md.conflict-"), "{warnings}");
    assert_eq!(team.status(&team.me), "");

    let fresh = fresh_clone(&team, "fresh");
    assert_eq!(fs::read_to_string(fresh.join(&file)).unwrap(), mate_text);
    let kept: Vec<_> = fs::read_dir(fresh.join(TEAM).join("feedback"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("use-postgres.md.conflict-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let mine = fs::read_to_string(fresh.join(TEAM).join("feedback").join(&kept[0])).unwrap();
    assert_eq!(mine, my_text);
    let index = fs::read_to_string(fresh.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains(&kept[0]), "{index}");
}

#[test]
fn a_teammate_pushing_between_fetch_and_push_is_retried_and_converges() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    mate_pushes_memory(&team.sb, &team.mate, "first-from-mate");
    // The teammate's next commit is ready but not pushed yet.
    write_memory(&team.mate, "project", "second-from-mate", "Raced.\n");
    team.sb
        .teammem(&team.mate, ["index", "--scope", "team"])
        .expect_code(0);
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "mate: raced"]);
    let raced = team.rev(&team.mate, "HEAD");
    // While the server packs what my fetch asked for, the teammate pushes (once): my fetch
    // sees the old tip, my push finds the remote moved.
    let marker = team.sb.path().join("race-once");
    fs::write(&marker, "").unwrap();
    let hook = team.sb.path().join("pack-hook.sh");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\nif rm {marker} 2>/dev/null; then (unset GIT_DIR; git -C {mate} push -q origin main >&2); fi\nexec \"$@\"\n",
            marker = marker.display(),
            mate = team.mate.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    }
    team.sb.git(
        team.sb.path(),
        [
            "config",
            "--global",
            "uploadpack.packObjectsHook",
            hook.to_str().unwrap(),
        ],
    );
    write_memory(&team.me, "reference", "mine-during-the-race", "Mine.\n");

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert!(
        !marker.exists(),
        "the teammate's push happened during my sync"
    );
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    // My sync commit sits on top of the teammate's raced commit: it was re-created and retried.
    assert_eq!(team.rev(&team.bare, "main~1"), raced);
    assert_eq!(team.rev(&team.bare, "main"), team.rev(&team.me, "HEAD"));
    let files = files_at(&team.sb, &team.bare, "main");
    for slug in [
        "first-from-mate",
        "second-from-mate",
        "mine-during-the-race",
    ] {
        assert_eq!(files.matches(slug).count(), 1, "{files}");
    }
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn a_pre_receive_rejection_is_reported_and_the_next_sync_pushes() {
    let team = Team::new();
    // libgit2 pushes to a local path without running the remote's hooks: serve it.
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    install_hook(
        &team.bare,
        "pre-receive",
        "#!/bin/sh\necho 'memory pushes are frozen until Monday' >&2\nexit 1\n",
    );
    let before = team.rev(&team.bare, "main");
    write_memory(&team.me, "project", "freeze", "Frozen.\n");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "push-rejected", "{report:#}");
    let why = report["warnings"][0].as_str().unwrap();
    assert!(why.contains("frozen until Monday"), "{why}");
    assert_eq!(report["committed"], true);
    assert!(team.me.join(TEAM).join("project/freeze.md").is_file());
    assert_eq!(team.rev(&team.bare, "main"), before);
    let local = team.rev(&team.me, "HEAD");

    fs::remove_file(team.bare.join("hooks/pre-receive")).unwrap();
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], false);
    assert_eq!(report["pushed"], true);
    assert_eq!(team.rev(&team.bare, "main"), local);
}

/// A remote that is a folder on this machine (a path or a `file://` URL) is pushed through
/// git's receive-pack, so its hooks run as they would for `git push`.
#[test]
fn a_local_folder_remote_runs_its_pre_receive_hook() {
    let team = Team::new();
    install_hook(
        &team.bare,
        "pre-receive",
        "#!/bin/sh\necho 'no pushes to the archive' >&2\nexit 1\n",
    );
    let before = team.rev(&team.bare, "main");
    let path = team.bare.display().to_string();
    for (n, url) in [path.clone(), format!("file://{path}")].iter().enumerate() {
        team.set_origin(&team.me, url);
        write_memory(&team.me, "project", &format!("archive-{n}"), "Archived.\n");
        let report = sync_json(&team.sb, &team.me, &[], &[]);
        assert_eq!(reason(&report), "push-rejected", "{url}: {report:#}");
        let why = report["warnings"][0].as_str().unwrap();
        assert!(why.contains("no pushes to the archive"), "{why}");
        assert_eq!(team.rev(&team.bare, "main"), before, "{url}");
    }
    fs::remove_file(team.bare.join("hooks/pre-receive")).unwrap();
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(team.rev(&team.bare, "main"), team.rev(&team.me, "HEAD"));
}

#[test]
fn an_unreachable_remote_is_reported_and_the_memory_committed() {
    let team = Team::new();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", free_port()),
    );
    write_memory(&team.me, "project", "offline", "Written on a plane.\n");
    let report = sync_json(&team.sb, &team.me, &["--timeout", "5"], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], true);
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("127.0.0.1")
    );
}

#[test]
fn a_server_that_never_answers_is_cut_off_by_the_budget() {
    let team = Team::new();
    let hole = BlackHole::start();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", hole.port()),
    );
    write_memory(&team.me, "project", "stalled", "No answer.\n");
    let sb_me = (team.me.clone(), team);
    let report = without_hanging(Duration::from_secs(30), move || {
        let (me, team) = sb_me;
        sync_json(&team.sb, &me, &["--timeout", "2"], &[])
    });
    assert_eq!(reason(&report), "timeout", "{report:#}");
    assert!(
        report["duration_ms"].as_u64().unwrap() < 10_000,
        "{report:#}"
    );
    assert_eq!(report["committed"], true);
    drop(hole);
}

#[test]
fn over_http_with_basic_auth_a_token_works_and_a_wrong_one_fails_without_hanging() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "s3cret-pass");
    team.set_origin(&team.me, &http.url("team.git"));
    write_memory(&team.me, "project", "over-http", "Smart HTTP.\n");

    let wrong = [
        ("TEAMMEM_GIT_TOKEN", "not-the-password"),
        ("TEAMMEM_GIT_USERNAME", "alice"),
    ];
    let (sb_team, env) = (team, wrong);
    let (report, team) = without_hanging(Duration::from_secs(40), move || {
        let report = sync_json(&sb_team.sb, &sb_team.me, &["--timeout", "10"], &env);
        (report, sb_team)
    });
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    let why = report["warnings"][0].as_str().unwrap();
    assert!(!why.contains("not-the-password"), "{why}");

    let right = [
        ("TEAMMEM_GIT_TOKEN", "s3cret-pass"),
        ("TEAMMEM_GIT_USERNAME", "alice"),
    ];
    let report = sync_json(&team.sb, &team.me, &[], &right);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    assert!(files_at(&team.sb, &team.bare, "main").contains("over-http.md"));
    drop(http);
}

#[test]
fn a_shallow_clone_pulls_and_pushes() {
    let team = Team::new();
    mate_pushes_memory(&team.sb, &team.mate, "before-the-clone");
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let url = daemon.url("team.git");
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = team.sb.path().join("shallow");
    mate_pushes_memory(&team.sb, &team.mate, "after-the-clone");
    write_memory(&shallow, "project", "from-the-shallow-clone", "Shallow.\n");

    let report = sync_json(&team.sb, &shallow, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(
        (&report["pulled"], &report["pushed"]),
        (&true.into(), &true.into())
    );
    assert!(shallow.join(".git/shallow").is_file(), "still shallow");
    team.sb.git(&shallow, ["fsck", "--no-progress"]);
    let files = files_at(&team.sb, &team.bare, "main");
    for slug in [
        "before-the-clone",
        "after-the-clone",
        "from-the-shallow-clone",
    ] {
        assert!(files.contains(slug), "{files}");
    }
}

#[test]
fn a_shallow_clone_of_a_local_folder_pushes_too() {
    let team = Team::new();
    let url = format!("file://{}", team.bare.display());
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = team.sb.path().join("shallow");
    mate_pushes_memory(&team.sb, &team.mate, "after-the-shallow-clone");
    write_memory(
        &shallow,
        "project",
        "from-a-local-shallow-clone",
        "Shallow.\n",
    );

    let report = sync_json(&team.sb, &shallow, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    assert!(shallow.join(".git/shallow").is_file(), "still shallow");
    assert!(files_at(&team.sb, &team.bare, "main").contains("from-a-local-shallow-clone"));
}

#[test]
fn a_linked_worktree_syncs_its_own_branch() {
    let team = Team::new();
    team.sb.git(
        &team.me,
        [
            "worktree",
            "add",
            "-q",
            "--track",
            "-b",
            "notes",
            "../linked",
            "origin/main",
        ],
    );
    let linked = team.sb.path().join("linked");
    mate_pushes_memory(&team.sb, &team.mate, "seen-from-the-worktree");
    write_memory(&linked, "project", "written-in-the-worktree", "Linked.\n");

    let report = sync_json(&team.sb, &linked, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    assert_eq!(team.rev(&linked, "HEAD"), team.rev(&team.bare, "main"));
    assert!(
        linked
            .join(TEAM)
            .join("project/seen-from-the-worktree.md")
            .is_file()
    );
    assert_eq!(team.status(&linked), "");
    // The main work tree's branch did not move.
    assert_ne!(team.rev(&team.me, "main"), team.rev(&linked, "HEAD"));
}

#[test]
fn with_autocrlf_on_the_remote_gets_lf_and_the_work_tree_stays_clean() {
    let team = Team::new();
    team.sb.git(&team.me, ["config", "core.autocrlf", "true"]);
    let text = memory_text("Crlf note", "Written on Windows", "project", "Line one.\n")
        .replace('\n', "\r\n");
    common::write(&team.me.join(TEAM).join("project/crlf-note.md"), &text);
    mate_pushes_memory(&team.sb, &team.mate, "from-linux");

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    assert_eq!(team.status(&team.me), "");
    let blob = team.sb.git(
        &team.bare,
        ["show", &format!("main:{TEAM}/project/crlf-note.md")],
    );
    assert!(!blob.contains('\r'), "{blob:?}");
    assert!(team.me.join(TEAM).join("project/from-linux.md").is_file());
}

#[test]
fn without_an_upstream_the_memory_is_committed_here() {
    let team = Team::new();
    team.sb.git(&team.me, ["switch", "-q", "-c", "local-only"]);
    write_memory(&team.me, "project", "no-upstream", "Here only.\n");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "no-upstream", "{report:#}");
    assert_eq!(report["committed"], true);
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn no_push_pulls_and_commits_and_a_later_sync_publishes() {
    let team = Team::new();
    mate_pushes_memory(&team.sb, &team.mate, "pulled-without-pushing");
    write_memory(&team.me, "project", "held-back", "Not yet.\n");
    let remote_before = team.rev(&team.bare, "main");

    let report = sync_json(&team.sb, &team.me, &["--no-push"], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(
        (&report["committed"], &report["pulled"], &report["pushed"]),
        (&true.into(), &true.into(), &false.into())
    );
    assert_eq!(team.rev(&team.bare, "main"), remote_before);
    assert!(
        team.me
            .join(TEAM)
            .join("project/pulled-without-pushing.md")
            .is_file()
    );

    // --no-pull still pushes: the remote has not moved since the last fetch.
    let report = sync_json(&team.sb, &team.me, &["--no-pull"], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true);
    assert_eq!(team.rev(&team.bare, "main"), team.rev(&team.me, "HEAD"));
    assert!(files_at(&team.sb, &team.bare, "main").contains("held-back.md"));
}
