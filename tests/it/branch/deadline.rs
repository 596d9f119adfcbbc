//! Branch mode keeps the hard deadline (invariant 5): with 50,000 memories on the memory branch
//! and a remote that trickles its answers (a `git daemon` behind a loopback proxy sending a
//! byte every half second), a fresh clone's session start with a 3 s budget has every step —
//! the remote's listing, recording the user's memory (which lists the whole branch to
//! regenerate `MEMORY.md`), writing the folder — stop at the deadline. What the user sees: the
//! context printed, the skip said as `timeout`, no lock left, the memory still in the folder,
//! and the next sync on a healthy remote publishes it.

use std::time::{Duration, Instant};

use crate::common::branch_team::{BranchTeam, TEAM, write_memory};
use crate::common::servers::{GitDaemon, Trickle};
use crate::common::syncrun::leftovers;

/// The budget given to session start.
const BUDGET: Duration = Duration::from_secs(3);

/// docs/sync.md's margin (1 s) plus generous headroom for a loaded machine: not a timing of
/// the work, only a bound that a run which ignored the deadline (here before the
/// fix: 12.2 s, reading 50,000 memories after the budget was gone) does not meet.
const BOUND: Duration = Duration::from_secs(3 + 1 + 3);

#[test]
fn a_flooded_branch_behind_a_slow_remote_stops_at_the_deadline_and_loses_nothing() {
    let team = BranchTeam::new();
    let flooder = team.clone_as("flooder");
    team.push_flood(&flooder, 50_000);
    // A fresh clone: the flood is in its remote-tracking ref, nothing is materialised yet.
    let me = team.clone_as("me");
    write_memory(
        &me,
        "feedback",
        "mine-in-time",
        "Written before a slow start.\n",
    );
    let mine = me.join(format!("{TEAM}/feedback/mine-in-time.md"));
    let written = std::fs::read(&mine).unwrap();

    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let slow = Trickle::start(daemon.port, 0, Duration::from_millis(500));
    let trickled = format!("git://127.0.0.1:{}/remote.git", slow.port());
    team.sb.git(&me, ["remote", "set-url", "origin", &trickled]);
    let started = Instant::now();
    let run = team
        .sb
        .teammem(&me, ["session-start", "--hook", "plain", "--timeout", "3"]);
    let took = started.elapsed();
    eprintln!("session start reported after {took:?} (budget {BUDGET:?})");
    run.expect_code(0);
    assert!(run.stdout.contains("kipped (timeout)"), "{}", run.stdout);
    assert!(run.stdout.contains("## Team memory"), "{}", run.stdout);
    assert!(run.stdout.contains("mine-in-time"), "{}", run.stdout);
    assert!(
        took < BOUND,
        "session start took {took:?} with a {BUDGET:?} budget:\n{}",
        run.stderr
    );
    assert_eq!(leftovers(&me), Vec::<String>::new());
    assert_eq!(std::fs::read(&mine).unwrap(), written);

    // The remote healthy again, with time enough: my memory goes out.
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &daemon.url("remote.git")],
    );
    let mut on_remote = false;
    for _ in 0..3 {
        let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "600"]);
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        on_remote = team
            .remote_files("team-memory")
            .iter()
            .any(|f| f.ends_with("feedback/mine-in-time.md"));
        if on_remote {
            break;
        }
    }
    assert!(on_remote, "my memory never reached the remote");
    assert_eq!(leftovers(&me), Vec::<String>::new());
}
