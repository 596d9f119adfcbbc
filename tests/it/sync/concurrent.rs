//! Twenty clones syncing the same remote at once through `teammem sync`, 5 new memories each:
//! every one of them publishes in that concurrent round (a push that lost the race is retried
//! with jittered backoff within the budget), and one more round brings every clone all 100,
//! none lost and none twice. The budget is one the machine's load cannot use up (ten minutes:
//! twenty processes on two loaded cores can take seconds each), so the test shows the retry
//! loop converging, not the machine being fast.

use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use netsync::Team;
use servers::GitDaemon;
use syncrun::{files_at, reason, sync_json, write_memory};

const CLONES: usize = 20;
const MEMORIES: usize = 5;
/// Each sync's budget: more than any load makes twenty syncs take, so no sync stops early.
const BUDGET_SECS: &str = "600";
/// Rounds of concurrent syncs allowed before the test calls it a failure to converge.
const MAX_ROUNDS: usize = 8;

#[test]
fn twenty_clones_syncing_at_once_publish_and_end_with_every_memory_exactly_once() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let url = daemon.url("team.git");
    let clones: Vec<_> = (0..CLONES)
        .map(|c| {
            let name = format!("clone{c}");
            team.sb.git(team.sb.path(), ["clone", "-q", &url, &name]);
            let dir = team.sb.path().join(name);
            for m in 0..MEMORIES {
                write_memory(&dir, "project", &format!("clone{c}-note{m}"), "Body.\n");
            }
            dir
        })
        .collect();

    let mut converged = false;
    for round in 0..MAX_ROUNDS {
        let reports: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = clones
                .iter()
                .map(|dir| {
                    scope.spawn(|| sync_json(&team.sb, dir, &["--timeout", BUDGET_SECS], &[]))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for report in &reports {
            // With a budget no load uses up, no sync stops early: each retries until it wins.
            assert_eq!(reason(report), "", "{report:#}");
            assert_eq!(report["quarantined"], serde_json::json!([]));
        }
        if round == 0 {
            let published = reports.iter().filter(|r| r["pushed"] == true).count();
            assert_eq!(
                published, CLONES,
                "only {published} of {CLONES} concurrent syncs published:\n{reports:#?}"
            );
        }
        let remote = team.rev(&team.bare, "main");
        if reports.iter().all(|r| reason(r).is_empty())
            && clones.iter().all(|dir| team.rev(dir, "HEAD") == remote)
        {
            converged = true;
            break;
        }
    }
    assert!(
        converged,
        "the clones did not converge in {MAX_ROUNDS} rounds"
    );

    let remote_files = files_at(&team.sb, &team.bare, "main");
    for dir in &clones {
        assert_eq!(team.status(dir), "", "{}", dir.display());
        assert_eq!(files_at(&team.sb, dir, "HEAD"), remote_files);
        team.sb
            .teammem(dir, ["index", "--scope", "team", "--check"])
            .expect_code(0);
    }
    for c in 0..CLONES {
        for m in 0..MEMORIES {
            let name = format!("project/clone{c}-note{m}.md");
            assert_eq!(
                remote_files.matches(&name).count(),
                1,
                "{name} missing or twice"
            );
        }
    }
    assert!(!remote_files.contains(".conflict-"), "{remote_files}");
    assert_eq!(
        team.sb.git(&team.bare, ["rev-list", "--merges", "main"]),
        ""
    );
    let subjects = team.sb.git(&team.bare, ["log", "--format=%s", "main"]);
    assert!(
        subjects.lines().count() == 2 + CLONES,
        "one sync commit per clone:\n{subjects}"
    );
}
