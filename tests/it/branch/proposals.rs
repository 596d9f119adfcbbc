//! Proposals that belong to their owner (issue 37): someone pushes commits onto
//! `team-memory-proposals/<victim>` with a forged author, rewrites or deletes it, takes every
//! numbered name in advance, or makes a branch (`<victim>/x`) that stops the remote from
//! creating the victim's. The victim's next proposal adopts none of it and is not blocked: it
//! goes to a fresh name, and the report says so. A review names each commit's author and
//! committer as stated and never vouches for them.

use crate::common::branch_team::{BranchTeam, write_memory};
use crate::common::write;

const PROTECT: &str = "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/team-memory ]; then\n    echo \"team-memory is protected: open a proposal\" >&2\n    exit 1\n  fi\ndone\nexit 0\n";

/// Makes `team-memory` refuse pushes, as a protected branch does.
fn protect(team: &BranchTeam) {
    let hook = team.remote.join("hooks/pre-receive");
    write(&hook, PROTECT);
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();
}

/// An attacker's clone on a local branch `hijack` made from `team-memory`, holding one commit
/// whose author and committer are both forged as `me`.
fn attacker_forging_me(team: &BranchTeam) -> std::path::PathBuf {
    let attacker = team.clone_as("attacker");
    team.sb.git(
        &attacker,
        [
            "fetch",
            "-q",
            "origin",
            "team-memory:refs/remotes/origin/team-memory",
        ],
    );
    team.sb.git(
        &attacker,
        ["checkout", "-q", "-b", "hijack", "origin/team-memory"],
    );
    write_memory(
        &attacker,
        "project",
        "planted",
        "Planted by someone else.\n",
    );
    team.sb.git(
        &attacker,
        ["add", "-f", ".qwen/team-memory/project/planted.md"],
    );
    team.sb.git(
        &attacker,
        [
            "-c",
            "user.name=me",
            "-c",
            "user.email=me@example.com",
            "commit",
            "-q",
            "-m",
            "forged",
        ],
    );
    attacker
}

/// The warnings of a sync report, as one string.
fn warnings(report: &serde_json::Value) -> String {
    report["warnings"].to_string()
}

#[test]
fn a_hijacked_proposal_branch_is_not_adopted_and_does_not_block() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    protect(&team);

    // The attacker pushes a memory of theirs onto my proposal branch, authored as me.
    let attacker = team.clone_as("attacker");
    write_memory(
        &attacker,
        "project",
        "planted",
        "Planted by someone else.\n",
    );
    team.sb.git(
        &attacker,
        [
            "fetch",
            "-q",
            "origin",
            "team-memory:refs/remotes/origin/team-memory",
        ],
    );
    team.sb.git(
        &attacker,
        ["checkout", "-q", "-b", "hijack", "origin/team-memory"],
    );
    team.sb.git(
        &attacker,
        ["add", "-f", ".qwen/team-memory/project/planted.md"],
    );
    team.sb.git(
        &attacker,
        [
            "-c",
            "user.name=me",
            "-c",
            "user.email=me@example.com",
            "commit",
            "-q",
            "-m",
            "forged",
        ],
    );
    team.sb.git(
        &attacker,
        [
            "push",
            "-q",
            "origin",
            "hijack:refs/heads/team-memory-proposals/me",
        ],
    );

    write_memory(&me, "feedback", "mine", "My memory for review.\n");
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    assert_eq!(
        report["proposal"], "team-memory-proposals/me-2",
        "{report:#}"
    );
    assert!(
        report["warnings"]
            .to_string()
            .contains("team-memory-proposals/me holds commits this clone did not make"),
        "{report:#}"
    );
    let mine = team.remote_files("team-memory-proposals/me-2");
    assert!(
        mine.iter().any(|f| f.ends_with("feedback/mine.md")),
        "{mine:?}"
    );
    assert!(!mine.iter().any(|f| f.ends_with("planted.md")), "{mine:?}");
    // A reviewer sees who made each commit of the hijacked branch: the forged author is the
    // owner's name, but the committer and the flag on my own branch's review tell them apart.
    let reviewer = team.clone_as("reviewer");
    team.sb.git(&reviewer, ["fetch", "-q", "origin"]);
    let review = team.teammem(
        &reviewer,
        &[
            "review",
            "origin/team-memory..origin/team-memory-proposals/me-2",
        ],
        0,
    );
    assert!(review.contains("### Proposal commits"), "{review}");
    assert!(review.contains("author `me <me@example.com>`"), "{review}");
    assert!(!review.contains("not the proposal's owner"), "{review}");
    team.sb.git(
        &attacker,
        [
            "-c",
            "user.name=attacker",
            "-c",
            "user.email=attacker@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "unforged",
        ],
    );
    team.sb.git(
        &attacker,
        [
            "push",
            "-q",
            "origin",
            "hijack:refs/heads/team-memory-proposals/me",
        ],
    );
    team.sb.git(&reviewer, ["fetch", "-q", "origin"]);
    let review = team.teammem(
        &reviewer,
        &[
            "review",
            "origin/team-memory..origin/team-memory-proposals/me",
        ],
        0,
    );
    assert!(
        review.contains(
            "committer `attacker <attacker@example.com>` — **author is not the proposal's owner**"
        ),
        "{review}"
    );
    // Again: the same proposal, no new branch.
    let again = team.sync(&me);
    assert_eq!(again["proposal"], "team-memory-proposals/me-2", "{again:#}");
}

/// Someone makes `team-memory-proposals/me/x`: the remote can no longer create
/// `team-memory-proposals/me` (a ref cannot be both a branch and a folder of branches). My
/// proposal goes to the next name and the report quotes the remote's refusal; rewriting and
/// deleting that branch later makes me neither adopt anything nor stop proposing.
#[test]
fn a_branch_that_stops_the_remote_creating_my_proposal_is_passed_over() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    protect(&team);
    let attacker = attacker_forging_me(&team);
    let push = |refspec: &str| {
        team.sb
            .git(&attacker, ["push", "-q", "-f", "origin", refspec])
    };
    push("hijack:refs/heads/team-memory-proposals/me/x");

    write_memory(&me, "feedback", "mine", "My memory for review.\n");
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    assert_eq!(
        report["proposal"], "team-memory-proposals/me-2",
        "{report:#}"
    );
    assert!(
        warnings(&report).contains(
            "the remote refused to create or move team-memory-proposals/me (failed to update ref"
        ),
        "{report:#}"
    );
    let mine = team.remote_files("team-memory-proposals/me-2");
    assert!(
        mine.iter().any(|f| f.ends_with("feedback/mine.md")),
        "{mine:?}"
    );
    assert!(!mine.iter().any(|f| f.ends_with("planted.md")), "{mine:?}");

    // The attacker rewrites my proposal with the forged commit: my next memory goes to a fresh
    // name and none of the attacker's commits come with it.
    push("hijack:refs/heads/team-memory-proposals/me-2");
    write_memory(&me, "feedback", "second", "A second memory.\n");
    let report = team.sync(&me);
    assert_eq!(
        report["proposal"], "team-memory-proposals/me-3",
        "{report:#}"
    );
    assert!(
        warnings(&report)
            .contains("team-memory-proposals/me-2 holds commits this clone did not make"),
        "{report:#}"
    );
    let mine = team.remote_files("team-memory-proposals/me-3");
    assert!(
        mine.iter().any(|f| f.ends_with("feedback/second.md")),
        "{mine:?}"
    );
    assert!(!mine.iter().any(|f| f.ends_with("planted.md")), "{mine:?}");
    assert!(!crate::common::branch_team::has_memory(
        &me, "project", "planted"
    ));

    // The attacker deletes my proposal: the next sync proposes the same commits there again.
    push(":refs/heads/team-memory-proposals/me-3");
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    assert_eq!(
        report["proposal"], "team-memory-proposals/me-3",
        "{report:#}"
    );
    let again = team.remote_files("team-memory-proposals/me-3");
    assert!(
        again.iter().any(|f| f.ends_with("feedback/second.md")),
        "{again:?}"
    );
    assert!(
        !again.iter().any(|f| f.ends_with("planted.md")),
        "{again:?}"
    );
}

/// Someone takes all nine numbered names in advance, with commits forged as mine (author and
/// committer both). My proposal goes to the name made from my commit, which nobody could take
/// before it existed; its review flags nothing of mine, and the review of a forged branch
/// states the names without vouching for them.
#[test]
fn every_numbered_name_taken_in_advance_still_lets_me_propose() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    protect(&team);
    let attacker = attacker_forging_me(&team);
    for suffix in ["", "-2", "-3", "-4", "-5", "-6", "-7", "-8", "-9"] {
        team.sb.git(
            &attacker,
            [
                "push",
                "-q",
                "origin",
                &format!("hijack:refs/heads/team-memory-proposals/me{suffix}"),
            ],
        );
    }

    write_memory(&me, "feedback", "mine", "My memory for review.\n");
    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    let tip = team
        .sb
        .git(&me, ["rev-parse", "team-memory"])
        .trim()
        .to_string();
    let name = format!("team-memory-proposals/me-{}", &tip[..12]);
    assert_eq!(report["proposal"], name.as_str(), "{report:#}");
    assert!(
        warnings(&report).contains(
            "team-memory-proposals/me, team-memory-proposals/me-2, team-memory-proposals/me-3"
        ),
        "{report:#}"
    );
    assert_eq!(team.sb.git(&team.remote, ["rev-parse", &name]).trim(), tip);

    let reviewer = team.clone_as("reviewer");
    team.sb.git(&reviewer, ["fetch", "-q", "origin"]);
    let review = team.teammem(
        &reviewer,
        &["review", &format!("origin/team-memory..origin/{name}")],
        0,
    );
    assert!(
        review.contains("committer `me <me@example.com>`"),
        "{review}"
    );
    assert!(!review.contains("not the proposal's owner"), "{review}");
    // The forged commit names me as author and committer: the review states it as the commit
    // does and says that only a verified signature tells who made it.
    let forged = team.teammem(
        &reviewer,
        &[
            "review",
            "origin/team-memory..origin/team-memory-proposals/me-4",
        ],
        0,
    );
    assert!(
        forged.contains("author `me <me@example.com>`, committer `me <me@example.com>`"),
        "{forged}"
    );
    assert!(
        forged.contains("a name that is the owner's does not show who made a commit"),
        "{forged}"
    );
}
