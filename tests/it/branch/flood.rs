//! Branch mode against a flood (issue 37): a teammate pushes 20,000 memories onto the memory
//! branch in one commit. Every other teammate's session start still prints its context, the
//! memories past the limit are withheld and named in one line, and the user's own new memory
//! is recorded and pushed (on that run or the next).

use crate::common::branch_team::{BranchTeam, TEAM, write_memory};

#[test]
fn a_flood_of_memories_is_bounded_and_my_own_memory_still_goes_out() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    let flooder = team.clone_as("flooder");
    team.push_flood(&flooder, 20_000);
    write_memory(&me, "feedback", "mine-after-flood", "My own memory.\n");
    // The user's own limit (git config), far below the default so the test is quick.
    team.sb.git(&me, ["config", "teammem.maxMemories", "500"]);
    let run = team.sb.teammem(&me, ["session-start", "--hook", "plain"]);
    run.expect_code(0);
    assert!(run.stdout.contains("## Team memory"), "{}", run.stdout);
    assert!(run.stdout.contains("mine-after-flood"), "{}", run.stdout);
    let on_remote = || {
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.contains("mine-after-flood"))
    };
    let mut pushed = on_remote();
    let mut report = team.sync(&me);
    pushed = pushed || on_remote();
    assert!(pushed, "my own memory never reached the remote: {report:#}");
    // The flood is named in one line, not listed (once the time budget let the folder fill).
    for _ in 0..3 {
        if report.get("withheld").is_some() {
            break;
        }
        report = team.sync(&me);
    }
    let too_many: Vec<_> = report["withheld"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.to_string().contains("too-many"))
        .collect();
    assert_eq!(too_many.len(), 1, "{report:#}");
    let written = std::fs::read_dir(me.join(format!("{TEAM}/project")))
        .unwrap()
        .count();
    assert!(written <= 500, "{written} files written");
    // A later sync of mine still shares: a teammate receives my next memory.
    write_memory(&me, "feedback", "mine-later", "Later.\n");
    assert_eq!(team.sync(&me)["pushed"], true);
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.contains("mine-later"))
    );
}
