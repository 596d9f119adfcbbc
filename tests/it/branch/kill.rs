//! A branch-mode sync really killed (SIGKILL) in the middle of its fetch — the pack has begun
//! to arrive and the server holds the rest (`common::stall`), so the kill lands there every
//! time — and the next sync, with no person's help, converges: every memory on the remote and
//! in the folder, mine included, no lock or temp file left, `git fsck` clean.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::branch_team::{BranchTeam, TEAM, has_memory, write_memory};
use crate::common::servers::GitDaemon;
use crate::common::stall::PackStall;
use crate::common::syncrun::leftovers;

#[test]
fn a_sync_killed_while_the_pack_arrives_is_finished_by_the_next() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    // A teammate pushes five memories: my next sync has a pack to fetch.
    let mate = team.clone_as("mate");
    for i in 0..5 {
        write_memory(
            &mate,
            "project",
            &format!("mate-{i}"),
            "From the teammate.\n",
        );
    }
    assert_eq!(team.sync(&mate)["pushed"], true);
    // Mine, recorded before the fetch starts.
    write_memory(&me, "feedback", "mine", "Written before the kill.\n");

    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let stall = PackStall::start(daemon.port);
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &stall.url("remote.git")],
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    team.sb
        .isolate(&mut cmd)
        .current_dir(&me)
        .args(["sync", "--json", "--timeout", "600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut sync = cmd.spawn().expect("start teammem sync");
    // The bound only keeps a broken test from hanging; the kill waits for the stall itself.
    let stalled = stall.wait_for_stall(Duration::from_secs(120));
    sync.kill().expect("SIGKILL the sync");
    let status = sync.wait().expect("reap the sync");
    assert!(stalled, "the sync never began to receive the pack");
    assert!(!status.success(), "killed, not finished: {status:?}");
    // Killed in the middle: its lock is still there.
    assert!(
        leftovers(&me).iter().any(|f| f == "teammem-sync.lock"),
        "{:?}",
        leftovers(&me)
    );
    drop(stall);

    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &daemon.url("remote.git")],
    );
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    for i in 0..5 {
        assert!(has_memory(&me, "project", &format!("mate-{i}")), "mate-{i}");
    }
    assert!(has_memory(&me, "feedback", "mine"));
    let files = team.remote_files("team-memory");
    assert!(
        files.contains(&format!("{TEAM}/feedback/mine.md")),
        "{files:?}"
    );
    for i in 0..5 {
        assert!(files.contains(&format!("{TEAM}/project/mate-{i}.md")));
    }
    // The next sync has nothing left to do, and nothing is left behind.
    let again = team.sync(&me);
    assert!(again["skipped_reason"].is_null(), "{again:#}");
    assert_eq!(again["committed"], false, "{again:#}");
    assert_eq!(leftovers(&me), Vec::<String>::new());
    let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert_eq!(
        team.sb.git(&me, ["status", "--porcelain"]),
        "",
        "git status shows nothing from the folder"
    );
}
