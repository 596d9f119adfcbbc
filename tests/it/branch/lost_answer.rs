//! A push whose answer is lost: the remote's receive-pack holds the push (a `pre-receive`
//! hook waiting for the test's word) past the sync's budget, and takes it once the word comes.
//! The sync that stopped waiting must not say the push failed: it says whether the remote took
//! it is not known. The next sync, finding the record commit on the remote, says pushed.

use std::fs;
use std::path::Path;

use crate::common::branch_team::{BranchTeam, write_memory};
use crate::common::servers::GitDaemon;
use crate::common::syncrun::reason;

/// A `pre-receive` hook that notes it was reached, then holds the push until `release` exists
/// (two minutes at most: a test that fails never leaves a hook waiting).
fn hold_pushes(remote: &Path, reached: &Path, release: &Path) {
    let hook = remote.join("hooks/pre-receive");
    fs::create_dir_all(hook.parent().unwrap()).unwrap();
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat >/dev/null\n: >'{}'\nn=0\nwhile [ ! -e '{}' ]; do\n  n=$((n + 1))\n  \
             [ \"$n\" -gt 1200 ] && exit 1\n  sleep 0.1\ndone\nexit 0\n",
            reached.display(),
            release.display()
        ),
    )
    .unwrap();
    let mut perms = fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).unwrap();
}

#[test]
fn a_push_the_remote_takes_after_the_budget_is_unknown_then_reported_pushed() {
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let me = team.clone_as("me");
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &daemon.url("remote.git")],
    );
    let tip = |dir: &Path| team.sb.git(dir, ["rev-parse", "refs/heads/team-memory"]);
    let before = tip(&team.remote);
    let reached = team.sb.path().join("hook-reached");
    let release = team.sb.path().join("hook-release");
    hold_pushes(&team.remote, &reached, &release);

    write_memory(&me, "project", "held", "Held by the remote's hook.\n");
    let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "8"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert!(
        reached.exists(),
        "the push never reached the remote's hook: {report:#}"
    );
    assert_eq!(reason(&report), "timeout", "{report:#}");
    assert_eq!(report["pushed"], false, "{report:#}");
    let why = report["warnings"][0].as_str().unwrap_or("");
    assert!(why.contains("is not known"), "{report:#}");
    assert_eq!(tip(&team.remote), before, "the hook still holds the push");

    // The remote's receive-pack goes on without the client: the push lands.
    fs::write(&release, "").unwrap();
    let mut landed = false;
    for _ in 0..1200 {
        if tip(&team.remote) != before {
            landed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(landed, "the held push never landed");
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.ends_with("project/held.md"))
    );

    let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "120"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(tip(&me), tip(&team.remote), "{report:#}");
    let merges = team
        .sb
        .git(&team.remote, ["rev-list", "--merges", "team-memory"]);
    assert_eq!(merges.trim(), "");

    // And a sync after it has nothing to report as pushed.
    let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "120"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["pushed"], false, "{report:#}");
}
