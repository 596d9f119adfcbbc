//! Branch mode found and kept cheap through the remote's ref advertisement (issue 11): a clone
//! with no mode recorded and no remote-tracking ref for the memory branch (made before the
//! branch existed, or with `--single-branch`) finds the branch at its next sync; a sync with
//! nothing to do still reports what a full one would (a withheld file, a folder to repair).

use std::fs;

use crate::common::branch_team::{
    BranchTeam, TEAM, assert_untouched, has_memory, outside, write_memory,
};
use crate::common::{Sandbox, write};

const TRACKING: &str = "refs/remotes/origin/team-memory";

/// Whether `dir` has the ref `name`.
fn has_ref(sb: &Sandbox, dir: &std::path::Path, name: &str) -> bool {
    sb.git_output(dir, ["rev-parse", "-q", "--verify", name])
        .status
        .success()
}

#[test]
fn a_clone_made_before_the_memory_branch_existed_finds_it_at_its_next_sync() {
    // The remote has code only; `old` clones it then.
    let sb = Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    let seed = sb.path().join("seed");
    sb.git(sb.path(), ["clone", "-q", &url, "seed"]);
    write(&seed.join("README.md"), "# project\n");
    sb.git(&seed, ["add", "-A"]);
    sb.git(&seed, ["commit", "-q", "-m", "initial"]);
    sb.git(&seed, ["push", "-q", "origin", "main"]);
    sb.git(sb.path(), ["clone", "-q", &url, "old"]);
    let old = sb.path().join("old");
    // Then a teammate starts the memory branch.
    let team = BranchTeam {
        sb,
        remote,
        url: url.clone(),
    };
    team.teammem(&seed, &["init", "--branch"], 0);
    write_memory(&seed, "project", "seeded", "The first memory.\n");
    assert_eq!(team.sync(&seed)["pushed"], true);
    assert!(!has_ref(&team.sb, &old, TRACKING));

    write_memory(&old, "feedback", "mine", "From the old clone.\n");
    let before = outside(&team.sb, &old);
    let head = team.sb.git(&old, ["rev-parse", "HEAD"]);
    let report = team.sync(&old);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(has_memory(&old, "project", "seeded"));
    assert!(has_ref(&team.sb, &old, TRACKING));
    // Nothing went onto the code branch.
    assert_eq!(team.sb.git(&old, ["rev-parse", "HEAD"]), head);
    assert_untouched(&team.sb, &old, &before);
    assert!(
        team.remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/mine.md"))
    );
    assert!(
        !team
            .remote_files("main")
            .iter()
            .any(|f| f.contains(".qwen"))
    );
}

#[test]
fn a_single_branch_clone_finds_the_memory_branch_at_its_first_sync() {
    let team = BranchTeam::new();
    let single = team.clone_main_only("single");
    assert!(!has_ref(&team.sb, &single, TRACKING));
    let before = outside(&team.sb, &single);
    let report = team.sync(&single);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&single, "project", "seeded"));
    assert_untouched(&team.sb, &single, &before);
    // The next sync has nothing to do and says so.
    let again = team.sync(&single);
    assert!(again["skipped_reason"].is_null(), "{again:#}");
    assert_eq!(again["committed"], false, "{again:#}");
    assert_eq!(again["pulled"], false, "{again:#}");
    assert_eq!(again["memory_tip"], report["memory_tip"], "{again:#}");
}

#[test]
fn switched_off_stays_in_current_branch_mode_though_the_remote_has_the_branch() {
    let team = BranchTeam::new();
    let off = team.clone_main_only("off");
    team.sb.git(&off, ["config", "teammem.branch", "false"]);
    let run = team.sb.teammem(&off, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["mode"], "current-branch", "{report:#}");
    assert!(!has_ref(&team.sb, &off, TRACKING));
}

#[test]
fn a_sync_with_nothing_new_still_repairs_the_folder_and_reports_what_is_withheld() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sync(&me);
    // Up to date: a sync changes nothing.
    let quiet = team.sync(&me);
    assert!(quiet["skipped_reason"].is_null(), "{quiet:#}");
    assert_eq!(quiet["committed"], false, "{quiet:#}");
    // The folder's MEMORY.md removed by hand comes back; a memory removed is recorded.
    fs::remove_file(me.join(TEAM).join("MEMORY.md")).unwrap();
    let report = team.sync(&me);
    assert_eq!(report["committed"], false, "{report:#}");
    let index = fs::read_to_string(me.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains("seeded.md"), "{index}");
    fs::remove_file(me.join(TEAM).join("project/seeded.md")).unwrap();
    let report = team.sync(&me);
    assert_eq!(report["committed"], true, "{report:#}");
    assert!(
        !team
            .remote_files("team-memory")
            .contains(&format!("{TEAM}/project/seeded.md"))
    );
    // A teammate's file the gate refuses is reported by every sync, not only the first.
    let key = format!("ghp_{}", "I9wOi9OvJcNDmFJJONko0LifpTe9NdaYVQyF");
    let mate = team.clone_as("mate");
    team.sb.git(&mate, ["checkout", "-q", "team-memory"]);
    write_memory(&mate, "reference", "leak", &format!("Use {key}\n"));
    team.sb.git(&mate, ["add", "-f", "-A", TEAM]);
    team.sb.git(&mate, ["commit", "-q", "-m", "leak"]);
    team.sb.git(&mate, ["push", "-q", "origin", "team-memory"]);
    for round in 0..2 {
        let report = team.sync(&me);
        assert_eq!(
            report["withheld"][0]["path"],
            format!("{TEAM}/reference/leak.md"),
            "round {round}: {report:#}"
        );
    }
    assert!(!has_memory(&me, "reference", "leak"));
}

#[test]
fn init_branch_adopts_the_remotes_memory_branch_with_no_extra_commit() {
    let team = BranchTeam::new();
    let remote_tip = team
        .sb
        .git(&team.remote, ["rev-parse", "refs/heads/team-memory"])
        .trim()
        .to_string();
    // A clone that has never seen the memory branch, whose folder holds what the branch holds
    // (a copy of a teammate's folder, say).
    let seed = team.sb.path().join("seed");
    for (name, extra) in [("same", false), ("more", true)] {
        let dir = team.clone_main_only(name);
        let copy = dir.join(TEAM).join("project");
        fs::create_dir_all(&copy).unwrap();
        fs::copy(
            seed.join(TEAM).join("project/seeded.md"),
            copy.join("seeded.md"),
        )
        .unwrap();
        if extra {
            write_memory(&dir, "feedback", "mine", "Only here.\n");
        }
        let said = team.teammem(&dir, &["init", "--branch"], 0);
        assert!(said.contains("from remote"), "{name}: {said}");
        let report = team.sync(&dir);
        assert!(report["skipped_reason"].is_null(), "{name}: {report:#}");
        let tip = report["memory_tip"].as_str().unwrap().to_string();
        let parents = team
            .sb
            .git(&dir, ["rev-list", "--parents", "-n", "1", &tip]);
        if extra {
            // `init` recorded the memory only this clone has: one commit on top of the
            // remote's tip (no merge), which this sync publishes.
            assert_eq!(report["pushed"], true, "{report:#}");
            assert_eq!(
                parents.split_whitespace().collect::<Vec<_>>(),
                [tip.as_str(), remote_tip.as_str()],
                "{name}"
            );
            assert!(
                team.remote_files("team-memory")
                    .contains(&format!("{TEAM}/feedback/mine.md"))
            );
        } else {
            assert_eq!(report["committed"], false, "{report:#}");
            assert_eq!(tip, remote_tip, "{name}: adopted as it is");
            assert_eq!(report["pushed"], false, "{report:#}");
        }
        assert!(has_memory(&dir, "project", "seeded"));
        let history = team.sb.git(&dir, ["rev-list", "--count", "--merges", &tip]);
        assert_eq!(history.trim(), "0", "{name}: no merge of two histories");
    }
}

#[test]
fn a_sync_with_nothing_to_do_does_not_wait_for_a_running_one() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sync(&me);
    // Another sync holds the lock (a live process, started now).
    let mut holder = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let lock = me.join(".git/teammem-sync.lock");
    fs::write(&lock, format!("{} {now}\n", holder.id())).unwrap();
    // Nothing to record, fetch or push: done without the lock.
    let quiet = team.sync(&me);
    assert!(quiet["skipped_reason"].is_null(), "{quiet:#}");
    // A teammate's push is something to do: that sync waits its turn.
    let mate = team.clone_as("mate");
    write_memory(&mate, "project", "news", "News.\n");
    assert_eq!(team.sync(&mate)["pushed"], true);
    let busy = team.sync(&me);
    assert_eq!(busy["skipped_reason"], "locked", "{busy:#}");
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(
        lock.exists(),
        "the lock is the holder's, never removed by a no-op"
    );
    let report = team.sync(&me);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(has_memory(&me, "project", "news"));
}

/// A `--single-branch` clone (as `--depth 1` makes) knows nothing of the memory branch, and
/// its first sync runs with the remote unreachable: it cannot tell branch mode from
/// current-branch mode, so it records nothing (it committed the memory onto `main`, for the
/// next `git push` to publish on the code branch). Once the remote answers, the memory goes to
/// `team-memory` and `main` is as cloned.
#[test]
fn a_single_branch_clone_offline_at_its_first_sync_commits_nothing_on_main() {
    let team = BranchTeam::new();
    let me = team.clone_main_only("me");
    team.sb.git(&me, ["config", "user.email", "me@example.com"]);
    let head = team.sb.git(&me, ["rev-parse", "HEAD"]);
    write_memory(&me, "feedback", "mine", "From a single-branch clone.\n");

    let away = team.sb.path().join("remote.away");
    fs::rename(&team.remote, &away).unwrap();
    let report = team.sync(&me);
    fs::rename(&away, &team.remote).unwrap();
    assert_eq!(report["skipped_reason"], "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("the remote origin did not answer, so sync cannot tell"),
        "{report:#}"
    );
    assert_eq!(team.sb.git(&me, ["rev-parse", "HEAD"]), head);
    assert!(has_memory(&me, "feedback", "mine"));

    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(team.sb.git(&me, ["rev-parse", "HEAD"]), head);
    assert!(
        team.remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/mine.md"))
    );
    assert_eq!(team.remote_files("main"), ["README.md", "src/lib.rs"]);
}
