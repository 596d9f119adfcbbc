//! What `docs/sync.md` promises of the ref listing, counted at a proxy in front of a real
//! `git daemon`: when the listing shows the remote still at the tip this clone already has, a
//! pulling sync talks to the remote once (the listing) and fetches nothing; when a teammate has
//! pushed, it fetches too, and the teammate's memory arrives. Both modes.

use crate::common::branch_team::{self, BranchTeam};
use crate::common::count_proxy::CountProxy;
use crate::common::netsync::Team;
use crate::common::servers::GitDaemon;
use crate::common::syncrun::{mate_pushes_memory, reason, sync_json};

const TEAM: &str = ".qwen/team-memory";

#[test]
fn current_branch_mode_fetches_only_when_the_listing_shows_a_change() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let proxy = CountProxy::start(daemon.port);
    team.set_origin(&team.me, &proxy.url("team.git"));
    let first = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&first), "", "{first:#}");
    proxy.take();

    let again = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&again), "", "{again:#}");
    assert_eq!(again["pulled"], false, "{again:#}");
    assert_eq!(proxy.take(), 1, "the listing alone, no fetch");

    mate_pushes_memory(&team.sb, &team.mate, "deploys-need-two-approvals");
    let pulled = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&pulled), "", "{pulled:#}");
    assert_eq!(pulled["pulled"], true, "{pulled:#}");
    assert!(
        proxy.take() >= 2,
        "the listing showed a change, so the sync fetched"
    );
    assert!(
        team.me
            .join(TEAM)
            .join("project/deploys-need-two-approvals.md")
            .is_file()
    );
}

#[test]
fn branch_mode_fetches_only_when_the_listing_shows_a_change() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let proxy = CountProxy::start(daemon.port);
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &proxy.url("remote.git")],
    );
    let first = team.sync(&me);
    assert!(first["skipped_reason"].is_null(), "{first:#}");
    proxy.take();

    let again = team.sync(&me);
    assert!(again["skipped_reason"].is_null(), "{again:#}");
    assert_eq!(again["pulled"], false, "{again:#}");
    assert_eq!(proxy.take(), 1, "the listing alone, no fetch");

    branch_team::write_memory(&mate, "project", "from-mate", "From the teammate.\n");
    assert_eq!(team.sync(&mate)["pushed"], true);
    let pulled = team.sync(&me);
    assert!(pulled["skipped_reason"].is_null(), "{pulled:#}");
    assert_eq!(pulled["pulled"], true, "{pulled:#}");
    assert!(
        proxy.take() >= 2,
        "the listing showed a change, so the sync fetched"
    );
    assert!(branch_team::has_memory(&me, "project", "from-mate"));
}
