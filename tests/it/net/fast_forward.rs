//! Fast-forwarding to the fetched upstream: what `git merge --ff-only` does, and nothing at
//! all when a local change is in the way.

use crate::common;
use crate::common::netsync;

use std::fs;
use std::time::Duration;

use common::write;
use netsync::{Team, oid};
use teammem::git::Transport;
use teammem::git::fetch;
use teammem::git::{BranchMove, CheckoutBudget, fast_forward, move_branch};

/// Fetches in `me` and fast-forwards to what came.
fn fetch_and_fast_forward(team: &Team, dir: &std::path::Path) -> BranchMove {
    let repo = team.open(dir);
    let up = team.upstream(&repo);
    let fetched = fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap();
    fast_forward(
        &repo,
        &up.local_ref,
        fetched.tip.unwrap(),
        &CheckoutBudget::unbounded(),
    )
    .unwrap()
}

#[test]
fn fast_forward_keeps_staged_and_unstaged_changes_it_does_not_touch() {
    let team = Team::new();
    let pushed = team.mate_pushes("src/lib.rs", "pub fn mate() {}\n");
    write(&team.me.join("README.md"), "# project\nstaged\n");
    team.sb.git(&team.me, ["add", "README.md"]);
    write(&team.me.join("README.md"), "# project\nstaged\nunstaged\n");
    write(&team.me.join("scratch.txt"), "untracked\n");
    let cached = team.sb.git(&team.me, ["diff", "--cached"]);
    let unstaged = team.sb.git(&team.me, ["diff"]);
    let old = team.rev(&team.me, "HEAD");

    let moved = fetch_and_fast_forward(&team, &team.me);

    assert_eq!(
        moved,
        BranchMove::Moved {
            from: Some(oid(&old)),
            to: oid(&pushed)
        }
    );
    assert_eq!(team.rev(&team.me, "HEAD"), pushed);
    assert_eq!(
        fs::read_to_string(team.me.join("src/lib.rs")).unwrap(),
        "pub fn mate() {}\n"
    );
    assert_eq!(team.sb.git(&team.me, ["diff", "--cached"]), cached);
    assert_eq!(team.sb.git(&team.me, ["diff"]), unstaged);
    assert_eq!(
        team.status(&team.me),
        "MM README.md\n?? scratch.txt\n",
        "only my own changes are left"
    );
    let reflog = team.sb.git(&team.me, ["reflog", "-1", "--format=%gs"]);
    assert!(reflog.contains("teammem: fast-forward"), "{reflog}");
}

#[test]
fn a_local_edit_the_pull_would_overwrite_blocks_it_and_changes_nothing() {
    let team = Team::new();
    team.mate_pushes("README.md", "# project\nmate\n");
    write(&team.me.join("README.md"), "# project\nmine, unsaved\n");
    let old = team.rev(&team.me, "HEAD");

    let moved = fetch_and_fast_forward(&team, &team.me);

    assert_eq!(
        moved,
        BranchMove::Blocked {
            paths: vec!["README.md".into()]
        }
    );
    assert_eq!(team.rev(&team.me, "HEAD"), old);
    assert_eq!(
        fs::read_to_string(team.me.join("README.md")).unwrap(),
        "# project\nmine, unsaved\n"
    );
    assert_eq!(team.status(&team.me), " M README.md\n");
    // git agrees that this pull would be refused.
    let git = team
        .sb
        .git_output(&team.me, ["merge", "--ff-only", "origin/main"]);
    assert!(!git.status.success());
}

#[test]
fn a_staged_edit_the_pull_would_overwrite_blocks_it() {
    let team = Team::new();
    team.mate_pushes("README.md", "# project\nmate\n");
    write(&team.me.join("README.md"), "# project\nstaged\n");
    team.sb.git(&team.me, ["add", "README.md"]);
    write(&team.me.join("README.md"), "# project\n");
    let old = team.rev(&team.me, "HEAD");
    let cached = team.sb.git(&team.me, ["diff", "--cached"]);

    let moved = fetch_and_fast_forward(&team, &team.me);

    assert!(matches!(moved, BranchMove::Blocked { .. }), "{moved:?}");
    assert_eq!(team.rev(&team.me, "HEAD"), old);
    assert_eq!(team.sb.git(&team.me, ["diff", "--cached"]), cached);
}

#[test]
fn an_untracked_file_in_the_way_blocks_the_pull() {
    let team = Team::new();
    team.mate_pushes("notes/plan.md", "mate's plan\n");
    write(&team.me.join("notes/plan.md"), "my own plan, never added\n");

    let moved = fetch_and_fast_forward(&team, &team.me);

    assert_eq!(
        moved,
        BranchMove::Blocked {
            paths: vec!["notes/plan.md".into()]
        }
    );
    assert_eq!(
        fs::read_to_string(team.me.join("notes/plan.md")).unwrap(),
        "my own plan, never added\n"
    );
}

#[test]
fn a_branch_that_does_not_lead_to_the_target_is_not_fast_forwarded() {
    let team = Team::new();
    team.mate_pushes("a.txt", "a\n");
    write(&team.me.join("b.txt"), "b\n");
    team.sb.git(&team.me, ["add", "b.txt"]);
    team.sb.git(&team.me, ["commit", "-q", "-m", "mine"]);
    let old = team.rev(&team.me, "HEAD");

    assert_eq!(
        fetch_and_fast_forward(&team, &team.me),
        BranchMove::NotFastForward
    );
    assert_eq!(team.rev(&team.me, "HEAD"), old);
}

#[test]
fn the_branch_moves_only_if_it_is_still_where_the_plan_saw_it() {
    let team = Team::new();
    let pushed = team.mate_pushes("a.txt", "a\n");
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap();
    let stale = oid(&team.rev(&team.me, "HEAD~0"));
    // Someone commits between the plan and the move.
    write(&team.me.join("c.txt"), "c\n");
    team.sb.git(&team.me, ["add", "c.txt"]);
    team.sb.git(&team.me, ["commit", "-q", "-m", "meanwhile"]);
    let now = team.rev(&team.me, "HEAD");

    let moved = move_branch(
        &repo,
        &up.local_ref,
        Some(stale),
        oid(&pushed),
        &CheckoutBudget::unbounded(),
    )
    .unwrap();

    assert_eq!(moved, BranchMove::BranchMoved);
    assert_eq!(team.rev(&team.me, "HEAD"), now);
    assert!(!team.me.join("a.txt").exists());
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn autocrlf_checkouts_are_clean_after_the_pull() {
    let team = Team::new();
    team.sb.git(&team.me, ["config", "core.autocrlf", "true"]);
    // Re-check out the work tree with CRLF, as a Windows clone would have it.
    fs::remove_file(team.me.join("README.md")).unwrap();
    team.sb.git(&team.me, ["checkout", "--", "README.md"]);
    assert_eq!(
        fs::read(team.me.join("README.md")).unwrap(),
        b"# project\r\n"
    );
    team.mate_pushes("docs/guide.md", "one\ntwo\n");

    let moved = fetch_and_fast_forward(&team, &team.me);

    assert!(matches!(moved, BranchMove::Moved { .. }), "{moved:?}");
    assert_eq!(
        fs::read(team.me.join("docs/guide.md")).unwrap(),
        b"one\r\ntwo\r\n"
    );
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn a_shallow_clone_fast_forwards_and_stays_consistent() {
    let team = Team::new();
    let shallow = team.shallow_clone();
    let pushed = team.mate_pushes("a.txt", "a\n");

    let moved = fetch_and_fast_forward(&team, &shallow);

    assert!(matches!(moved, BranchMove::Moved { .. }), "{moved:?}");
    assert_eq!(team.rev(&shallow, "HEAD"), pushed);
    assert_eq!(team.status(&shallow), "");
    let fsck = team.sb.git_output(&shallow, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn a_linked_worktree_fast_forwards_its_own_branch() {
    let team = Team::new();
    team.sb.git(
        &team.me,
        [
            "worktree",
            "add",
            "-q",
            "../linked",
            "-b",
            "side",
            "origin/main",
        ],
    );
    let linked = team.sb.path().join("linked");
    team.sb.git(
        &linked,
        ["branch", "-q", "--set-upstream-to", "origin/main"],
    );
    let pushed = team.mate_pushes("a.txt", "a\n");

    let moved = fetch_and_fast_forward(&team, &linked);

    assert!(matches!(moved, BranchMove::Moved { .. }), "{moved:?}");
    assert_eq!(team.rev(&linked, "HEAD"), pushed);
    assert_eq!(team.status(&linked), "");
    assert_ne!(
        team.rev(&team.me, "HEAD"),
        pushed,
        "the main work tree stays"
    );
}
