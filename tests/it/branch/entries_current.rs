//! Crafted tree entries in current-branch mode (issue 37): there git's own checkout writes the
//! team folder, so an entry git refuses to check out (`.git` in an NTFS spelling) cannot be
//! withheld alone; the pull is refused with one line naming it (`unwritable`, exit status 1),
//! never an `error` at every sync, and once its author removes it the next sync shares again.

use crate::common::branch_team::{BranchTeam, RawEntry, TEAM, has_memory, write_memory};
use crate::common::write;

use serde_json::Value;
use std::path::Path;

/// A remote whose `main` holds code and a team memory set up by `init --current-branch`.
fn current_branch_team() -> BranchTeam {
    let sb = crate::common::Sandbox::new();
    let remote = sb.bare("remote.git");
    let url = format!("file://{}", remote.display());
    let team = BranchTeam { sb, remote, url };
    team.sb
        .git(team.sb.path(), ["clone", "-q", &team.url, "seed"]);
    let seed = team.sb.path().join("seed");
    write(&seed.join("README.md"), "# project\n");
    team.sb.git(&seed, ["add", "-A"]);
    team.sb.git(&seed, ["commit", "-q", "-m", "initial"]);
    team.sb.git(&seed, ["push", "-q", "origin", "main"]);
    team.teammem(&seed, &["init", "--current-branch"], 0);
    write_memory(&seed, "project", "seeded", "The first memory.\n");
    let (_, report) = sync(&team, &seed);
    assert_eq!(report["pushed"], true, "{report:#}");
    team
}

/// `teammem sync --json` in `dir`: exit status and report, in current-branch mode.
fn sync(team: &BranchTeam, dir: &Path) -> (i32, Value) {
    let run = team.sb.teammem(dir, ["sync", "--json"]);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert_eq!(report["mode"], "current-branch", "{report:#}");
    (run.code, report)
}

/// A teammate with the git CLI alone (`dir`) pushes onto `main` a commit whose team folder is
/// the current one edited by `edit`; returns the commit.
fn push_crafted_main(team: &BranchTeam, dir: &Path, edit: impl FnOnce(&mut Vec<RawEntry>)) {
    team.sb.git(dir, ["fetch", "-q", "origin", "main"]);
    let tip = team.sb.git(dir, ["rev-parse", "FETCH_HEAD"]);
    let tip = tip.trim();
    let mut folder = team.tree_entries(dir, &format!("{tip}:{TEAM}"));
    edit(&mut folder);
    let folder = team.raw_tree(dir, &folder);
    let mut qwen = team.tree_entries(dir, &format!("{tip}:.qwen"));
    qwen.retain(|e| e.name != b"team-memory");
    qwen.push(RawEntry::new("40000", "team-memory", &folder));
    let qwen = team.raw_tree(dir, &qwen);
    let mut root = team.tree_entries(dir, tip);
    root.retain(|e| e.name != b".qwen");
    root.push(RawEntry::new("40000", ".qwen", &qwen));
    let root = team.raw_tree(dir, &root);
    let commit = team
        .sb
        .git(dir, ["commit-tree", &root, "-p", tip, "-m", "crafted"]);
    let refspec = format!("{}:refs/heads/main", commit.trim());
    team.sb.git(dir, ["push", "-q", "origin", &refspec]);
}

/// `.git ` (trailing space: `.git` on Windows, refused by git's and libgit2's checkout on every
/// system) below the team folder on `main`. Before, each sync of each teammate failed with
/// `error` (exit 2, "cannot checkout to invalid path"), at every sync; now the pull is refused
/// naming the entry, on the libgit2 path and on the git path (a reftable clone), and after the
/// teammate removes it both clones share again.
#[test]
fn a_dot_git_spelling_on_the_current_branch_is_named_and_sharing_resumes_once_removed() {
    let team = current_branch_team();
    let me = team.clone_as("me");
    let other = team.clone_reftable("git-path");
    let mallory = team.clone_as("mallory");
    for dir in [&me, &other] {
        let (code, report) = sync(&team, dir);
        assert_eq!(code, 0, "{report:#}");
    }
    push_crafted_main(&team, &mallory, |entries| {
        let text = crate::common::memory_text("config", "Hooked", "project", "x\n");
        let blob = team.blob(&mallory, text.as_bytes());
        let sub = team.raw_tree(&mallory, &[RawEntry::new("100644", "config", &blob)]);
        entries.push(RawEntry::new("40000", ".git ", &sub));
    });
    write_memory(&me, "project", "mine", "Mine.\n");
    write_memory(&other, "project", "theirs", "Theirs.\n");
    for dir in [&me, &other] {
        for _ in 0..2 {
            let (code, report) = sync(&team, dir);
            assert_eq!(code, 1, "{report:#}");
            assert_eq!(report["skipped_reason"], "unwritable", "{report:#}");
            let said = report["warnings"].to_string();
            assert!(said.contains("\\\".git \\\""), "{report:#}");
        }
        assert!(std::fs::symlink_metadata(dir.join(TEAM).join(".git ")).is_err());
    }
    // The teammate takes it out again: both clones publish and receive.
    push_crafted_main(&team, &mallory, |entries| {
        entries.retain(|e| e.name != b".git ");
    });
    for dir in [&me, &other, &me] {
        let (code, report) = sync(&team, dir);
        assert_eq!(code, 0, "{report:#}");
        assert!(report["skipped_reason"].is_null(), "{report:#}");
    }
    assert!(has_memory(&me, "project", "theirs"));
    assert!(has_memory(&other, "project", "mine"));
}
