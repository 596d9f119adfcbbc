//! Sync commits re-created on top of a moved upstream: per-memory three-way merge, both
//! versions kept on a real conflict, MEMORY.md regenerated; and the user's own commits
//! recognised and left alone.

use crate::common;
use crate::common::netsync;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::{memory_text, write};
use netsync::{SYNC_MESSAGE, Team, oid};
use teammem::git::Transport;
use teammem::git::fetch;
use teammem::git::{BranchMove, CheckoutBudget, move_branch};
use teammem::git::{Divergence, KeptConflict, Replayed, classify, replay_sync_commits};

const POSTGRES: &str = ".qwen/team-memory/feedback/use-postgres.md";
const RELEASE: &str = ".qwen/team-memory/project/release-train.md";

fn postgres(lines: &[(usize, &str)]) -> String {
    let mut body: Vec<String> = (1..=8).map(|i| format!("line {i}")).collect();
    for (at, text) in lines {
        body[at - 1] = text.to_string();
    }
    memory_text(
        "Use the real database",
        "Integration tests hit a real Postgres",
        "feedback",
        &format!("{}\n", body.join("\n")),
    )
}

fn release(body: &str) -> String {
    memory_text(
        "Release train",
        "Releases leave every Tuesday",
        "project",
        body,
    )
}

/// I change the team folder and make a sync commit; the teammate changes it and pushes; I
/// fetch, replay and land the result. Returns the replay and my old tip.
fn diverge(
    team: &Team,
    mine: impl FnOnce(&Path),
    theirs: impl FnOnce(&Path),
) -> (Replayed, String) {
    mine(&team.me);
    team.sb
        .teammem(&team.me, ["index", "--scope", "team"])
        .expect_code(0);
    let local = team.sync_commit(&team.me);
    theirs(&team.mate);
    team.sb
        .teammem(&team.mate, ["index", "--scope", "team"])
        .expect_code(0);
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "mate: team memory"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let upstream_tip = team.rev(&team.mate, "HEAD");

    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    let fetched = fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap();
    let tip = fetched.tip.unwrap();
    assert_eq!(
        classify(&repo, Some(oid(&local)), Some(tip)).unwrap(),
        Divergence::Replayable {
            commits: vec![oid(&local)]
        }
    );
    let replayed =
        replay_sync_commits(&repo, oid(&local), tip, &teammem::ops::TeamMemoryIndexGate).unwrap();
    let moved = move_branch(
        &repo,
        &up.local_ref,
        Some(oid(&local)),
        replayed.commit,
        &CheckoutBudget::unbounded(),
    )
    .unwrap();
    assert!(matches!(moved, BranchMove::Moved { .. }), "{moved:?}");

    // One sync commit on top of the teammate's, the work tree clean, the index fresh.
    assert_eq!(team.rev(&team.me, "HEAD^"), upstream_tip);
    let message = team.sb.git(&team.me, ["log", "-1", "--format=%B"]);
    assert!(message.starts_with(SYNC_MESSAGE[0]), "{message}");
    assert!(message.contains(SYNC_MESSAGE[1]), "{message}");
    assert_eq!(team.status(&team.me), "");
    team.sb
        .teammem(&team.me, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    (replayed, local)
}

fn read(team: &Team, path: &str) -> String {
    fs::read_to_string(team.me.join(path)).unwrap()
}

#[test]
fn a_change_on_each_side_keeps_both() {
    let team = Team::new();
    let (replayed, _) = diverge(
        &team,
        |me| write(&me.join(POSTGRES), &postgres(&[(2, "mine")])),
        |mate| {
            write(
                &mate.join(".qwen/team-memory/project/deploy-friday.md"),
                &memory_text(
                    "No Friday deploys",
                    "Never deploy on Friday",
                    "project",
                    "No.\n",
                ),
            )
        },
    );
    assert!(replayed.conflicts.is_empty());
    assert!(replayed.text_merged.is_empty());
    assert_eq!(read(&team, POSTGRES), postgres(&[(2, "mine")]));
    assert!(read(&team, ".qwen/team-memory/MEMORY.md").contains("deploy-friday.md"));
    // Only the team folder changed between the teammate's commit and mine.
    let touched = team
        .sb
        .git(&team.me, ["diff", "--name-only", "HEAD^", "HEAD"]);
    assert!(
        touched.lines().all(|p| p.starts_with(".qwen/team-memory/")),
        "{touched}"
    );
}

#[test]
fn the_same_change_on_both_sides_is_kept_once() {
    let team = Team::new();
    let (replayed, _) = diverge(
        &team,
        |me| write(&me.join(RELEASE), &release("Wednesday now.\n")),
        |mate| write(&mate.join(RELEASE), &release("Wednesday now.\n")),
    );
    assert!(replayed.conflicts.is_empty());
    assert_eq!(read(&team, RELEASE), release("Wednesday now.\n"));
    let files = team
        .sb
        .git(&team.me, ["ls-files", ".qwen/team-memory/project"]);
    assert_eq!(files, ".qwen/team-memory/project/release-train.md\n");
}

#[test]
fn changes_to_different_lines_are_merged_by_gits_text_merge() {
    let team = Team::new();
    let (replayed, _) = diverge(
        &team,
        |me| write(&me.join(POSTGRES), &postgres(&[(2, "mine")])),
        |mate| write(&mate.join(POSTGRES), &postgres(&[(7, "theirs")])),
    );
    assert!(replayed.conflicts.is_empty());
    assert_eq!(replayed.text_merged, vec![POSTGRES.to_string()]);
    assert_eq!(
        read(&team, POSTGRES),
        postgres(&[(2, "mine"), (7, "theirs")])
    );
}

#[test]
fn a_real_conflict_keeps_both_versions_as_two_files() {
    let team = Team::new();
    let (replayed, local) = diverge(
        &team,
        |me| write(&me.join(POSTGRES), &postgres(&[(4, "mine")])),
        |mate| write(&mate.join(POSTGRES), &postgres(&[(4, "theirs")])),
    );
    let kept = format!(
        ".qwen/team-memory/feedback/use-postgres.md.conflict-{}.md",
        &local[..7]
    );
    assert_eq!(
        replayed.conflicts,
        vec![KeptConflict {
            path: POSTGRES.into(),
            kept_as: kept.clone()
        }]
    );
    assert_eq!(read(&team, POSTGRES), postgres(&[(4, "theirs")]));
    assert_eq!(read(&team, &kept), postgres(&[(4, "mine")]));
    let index = read(&team, ".qwen/team-memory/MEMORY.md");
    assert!(index.contains("use-postgres.md"), "{index}");
    // Same title and description: one index line naming both files, the memory first and its
    // other version second.
    assert!(
        index.starts_with(&format!(
            "- [Use the real database](feedback/use-postgres.md) — Integration tests hit a real Postgres (also: feedback/use-postgres.md.conflict-{}.md)\n",
            &local[..7]
        )),
        "{index}"
    );
}

#[test]
fn a_memory_deleted_on_one_side_and_changed_on_the_other_is_kept_changed() {
    let team = Team::new();
    let (replayed, _) = diverge(
        &team,
        |me| {
            fs::remove_file(me.join(RELEASE)).unwrap();
            write(&me.join(POSTGRES), &postgres(&[(1, "mine")]));
        },
        |mate| {
            write(&mate.join(RELEASE), &release("Thursday.\n"));
            fs::remove_file(mate.join(POSTGRES)).unwrap();
        },
    );
    assert!(replayed.conflicts.is_empty());
    assert_eq!(read(&team, RELEASE), release("Thursday.\n"));
    assert_eq!(read(&team, POSTGRES), postgres(&[(1, "mine")]));
}

#[test]
fn memory_md_is_regenerated_never_merged() {
    let team = Team::new();
    diverge(
        &team,
        |me| {
            write(
                &me.join(".qwen/team-memory/reference/dashboards.md"),
                &memory_text(
                    "Dashboards",
                    "Where the dashboards are",
                    "reference",
                    "Grafana.\n",
                ),
            )
        },
        |mate| {
            write(
                &mate.join(RELEASE),
                &memory_text(
                    "Release train",
                    "Releases leave every Thursday",
                    "project",
                    "Tuesday.\n",
                ),
            )
        },
    );
    let index = read(&team, ".qwen/team-memory/MEMORY.md");
    assert!(index.contains("dashboards.md"), "{index}");
    assert!(index.contains("every Thursday"), "{index}");
    assert!(!index.contains("<<<<<<<"), "{index}");
}

#[test]
fn classify_tells_sync_commits_from_the_users_own() {
    let team = Team::new();
    let repo = team.open(&team.me);
    let start = oid(&team.rev(&team.me, "HEAD"));
    assert_eq!(
        classify(&repo, Some(start), Some(start)).unwrap(),
        Divergence::UpToDate
    );

    write(&team.me.join(RELEASE), &release("Monday.\n"));
    let sync = oid(&team.sync_commit(&team.me));
    assert_eq!(
        classify(&repo, Some(sync), Some(start)).unwrap(),
        Divergence::SyncAhead {
            commits: vec![sync]
        }
    );
    assert_eq!(
        classify(&repo, Some(start), Some(sync)).unwrap(),
        Divergence::Behind
    );

    // A commit with the sync message that touches a file outside the team folder is the user's.
    write(&team.me.join("README.md"), "# changed\n");
    team.sb.git(&team.me, ["add", "README.md"]);
    team.sb.git(
        &team.me,
        ["commit", "-q", "-m", SYNC_MESSAGE[0], "-m", SYNC_MESSAGE[1]],
    );
    let user = oid(&team.rev(&team.me, "HEAD"));
    assert_eq!(
        classify(&repo, Some(user), Some(start)).unwrap(),
        Divergence::LocalAhead {
            user_commits: vec![user]
        }
    );
    let pushed = oid(&team.mate_pushes("a.txt", "a\n"));
    let up = team.upstream(&repo);
    fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap();
    assert_eq!(
        classify(&repo, Some(user), Some(pushed)).unwrap(),
        Divergence::Diverged {
            user_commits: vec![user]
        }
    );
}

#[test]
fn nothing_is_replayed_for_a_user_who_signs_commits() {
    let team = Team::new();
    write(&team.me.join(RELEASE), &release("Monday.\n"));
    let local = oid(&team.sync_commit(&team.me));
    let pushed = team.mate_pushes("a.txt", "a\n");
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap();
    team.sb.git(&team.me, ["config", "commit.gpgsign", "true"]);
    let repo = team.open(&team.me);
    assert!(
        replay_sync_commits(
            &repo,
            local,
            oid(&pushed),
            &teammem::ops::TeamMemoryIndexGate
        )
        .is_err()
    );
    assert_eq!(team.rev(&team.me, "HEAD"), local.to_string());
}

#[test]
fn replay_works_in_a_shallow_clone() {
    let team = Team::new();
    let shallow = team.shallow_clone();
    write(&shallow.join(RELEASE), &release("Shallow Monday.\n"));
    let local = oid(&team.sync_commit(&shallow));
    let pushed = team.mate_pushes("a.txt", "a\n");
    let repo = team.open(&shallow);
    let up = team.upstream(&repo);
    let tip = fetch(
        &repo,
        &up,
        &team.options(Transport::Builtin, Duration::from_secs(20)),
    )
    .unwrap()
    .tip
    .unwrap();
    assert_eq!(
        classify(&repo, Some(local), Some(tip)).unwrap(),
        Divergence::Replayable {
            commits: vec![local]
        }
    );
    let replayed =
        replay_sync_commits(&repo, local, tip, &teammem::ops::TeamMemoryIndexGate).unwrap();
    let moved = move_branch(
        &repo,
        &up.local_ref,
        Some(local),
        replayed.commit,
        &CheckoutBudget::unbounded(),
    )
    .unwrap();
    assert!(matches!(moved, BranchMove::Moved { .. }), "{moved:?}");
    assert_eq!(team.rev(&shallow, "HEAD^"), pushed);
    assert_eq!(
        fs::read_to_string(shallow.join(RELEASE)).unwrap(),
        release("Shallow Monday.\n")
    );
    assert_eq!(team.status(&shallow), "");
    let fsck = team.sb.git_output(&shallow, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn replay_with_autocrlf_on_leaves_a_clean_work_tree() {
    let team = Team::new();
    team.sb.git(&team.me, ["config", "core.autocrlf", "true"]);
    let (replayed, _) = diverge(
        &team,
        |me| {
            write(
                &me.join(POSTGRES),
                &postgres(&[(2, "mine")]).replace('\n', "\r\n"),
            )
        },
        |mate| write(&mate.join(POSTGRES), &postgres(&[(7, "theirs")])),
    );
    assert_eq!(replayed.text_merged, vec![POSTGRES.to_string()]);
    assert_eq!(
        read(&team, POSTGRES),
        postgres(&[(2, "mine"), (7, "theirs")]).replace('\n', "\r\n")
    );
    let committed = team.sb.git(&team.me, ["show", &format!("HEAD:{POSTGRES}")]);
    assert_eq!(committed, postgres(&[(2, "mine"), (7, "theirs")]));
}
