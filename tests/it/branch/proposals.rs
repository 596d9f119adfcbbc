//! Proposals that belong to their owner (issue 37): someone pushes commits onto
//! `team-memory-proposals/<victim>` with a forged author. The victim's next proposal does not
//! adopt them and is not blocked: it goes to `team-memory-proposals/<victim>-2`, and the
//! report says so.

use crate::common::branch_team::{BranchTeam, write_memory};
use crate::common::write;

const PROTECT: &str = "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/team-memory ]; then\n    echo \"team-memory is protected: open a proposal\" >&2\n    exit 1\n  fi\ndone\nexit 0\n";

#[test]
fn a_hijacked_proposal_branch_is_not_adopted_and_does_not_block() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let hook = team.remote.join("hooks/pre-receive");
    write(&hook, PROTECT);
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();

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
