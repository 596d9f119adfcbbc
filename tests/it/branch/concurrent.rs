//! Branch mode under load: ten clones, each on a feature branch of its own (made with the git
//! CLI, with a commit of their own code), write 20 new memories each and sync at the same time,
//! round after round, until quiet. Every clone ends with all 200 (and the seed's), none lost and
//! none twice, on the memory branch and in its folder; its history is a line (no merge
//! commit); the feature branches, HEAD and the index
//! are untouched; `git fsck` is clean everywhere.

use crate::common;
use crate::common::servers;
use crate::common::syncrun;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use common::Sandbox;
use servers::GitDaemon;
use syncrun::{reason, sync_json, write_memory};

const CLONES: usize = 10;
const MEMORIES: usize = 20;
/// Rounds of concurrent syncs before the test calls it a failure to converge.
const MAX_ROUNDS: usize = 10;
const TEAM: &str = ".qwen/team-memory";

/// The memory files of a folder, relative to it (`project/x.md`), `MEMORY.md` left out.
fn memories_in(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md")
                && path.file_name().is_some_and(|n| n != "MEMORY.md")
            {
                out.insert(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out
}

/// The memory files on a ref's tree, relative to the team folder.
fn memories_at(sb: &Sandbox, repo: &Path, rev: &str) -> Vec<String> {
    sb.git(repo, ["ls-tree", "-r", "--name-only", rev, "--", TEAM])
        .lines()
        .filter_map(|l| l.strip_prefix(".qwen/team-memory/"))
        .filter(|l| *l != "MEMORY.md")
        .map(String::from)
        .collect()
}

fn fsck_is_clean(sb: &Sandbox, repo: &Path) {
    let out = sb.git_output(repo, ["fsck", "--no-progress", "--strict"]);
    assert!(
        out.status.success(),
        "git fsck in {}: {}{}",
        repo.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn ten_clones_on_feature_branches_sync_concurrently_and_end_with_every_memory_once() {
    let sb = Sandbox::new();
    let srv = sb.path().join("srv");
    fs::create_dir_all(&srv).unwrap();
    sb.git(&srv, ["init", "-q", "--bare", "-b", "main", "team.git"]);
    let bare = srv.join("team.git");
    let daemon = GitDaemon::start(&sb, &srv);
    let url = daemon.url("team.git");

    // The seed: code on main, the team memory on the memory branch (teammem init --branch).
    let seed = sb.repo("seed");
    sb.git(&seed, ["remote", "add", "origin", &url]);
    sb.git(&seed, ["push", "-q", "-u", "origin", "main"]);
    write_memory(&seed, "project", "seed-note", "From the seed.\n");
    sb.teammem(&seed, ["init", "--branch"]).expect_code(0);
    let seeded = sync_json(&sb, &seed, &[], &[]);
    assert_eq!(reason(&seeded), "", "{seeded:#}");
    assert_eq!(
        memories_at(&sb, &bare, "team-memory"),
        ["project/seed-note.md"]
    );

    // Ten teammates: a clone each (no setup: the remote has the memory branch), a feature branch
    // with a commit of their own, twenty new memories.
    let clones: Vec<PathBuf> = (0..CLONES)
        .map(|c| {
            let name = format!("clone{c}");
            sb.git(sb.path(), ["clone", "-q", &url, &name]);
            let dir = sb.path().join(&name);
            sb.git(&dir, ["checkout", "-q", "-b", &format!("feature-{c}")]);
            common::write(&dir.join(format!("src/feature{c}.txt")), "code\n");
            sb.git(&dir, ["add", "src"]);
            sb.git(&dir, ["commit", "-q", "-m", &format!("feature {c}")]);
            for m in 0..MEMORIES {
                write_memory(&dir, "project", &format!("clone{c}-note{m}"), "Body.\n");
            }
            dir
        })
        .collect();
    let heads: Vec<String> = clones
        .iter()
        .map(|d| sb.git(d, ["rev-parse", "HEAD"]))
        .collect();

    let mut converged = false;
    for _round in 0..MAX_ROUNDS {
        let reports: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = clones
                .iter()
                .map(|dir| scope.spawn(|| sync_json(&sb, dir, &["--timeout", "30"], &[])))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for report in &reports {
            assert_eq!(report["mode"], "branch", "{report:#}");
            // Losing the race within the whole budget is the only acceptable way to stop early.
            assert!(["", "remote-busy"].contains(&reason(report)), "{report:#}");
            assert_eq!(report["quarantined"], serde_json::json!([]), "{report:#}");
        }
        let remote = sb.git(&bare, ["rev-parse", "team-memory"]);
        if reports.iter().all(|r| reason(r).is_empty())
            && clones
                .iter()
                .all(|d| sb.git(d, ["rev-parse", "refs/heads/team-memory"]) == remote)
        {
            converged = true;
            break;
        }
    }
    assert!(
        converged,
        "the clones did not converge in {MAX_ROUNDS} rounds"
    );

    let mut expected: BTreeSet<String> = (0..CLONES)
        .flat_map(|c| (0..MEMORIES).map(move |m| format!("project/clone{c}-note{m}.md")))
        .collect();
    expected.insert("project/seed-note.md".into());
    let on_remote = memories_at(&sb, &bare, "team-memory");
    assert_eq!(on_remote.len(), CLONES * MEMORIES + 1, "none twice");
    assert_eq!(
        on_remote.iter().cloned().collect::<BTreeSet<_>>(),
        expected,
        "none lost"
    );
    for (dir, head) in clones.iter().zip(&heads) {
        assert_eq!(memories_in(&dir.join(TEAM)), expected, "{}", dir.display());
        assert_eq!(&sb.git(dir, ["rev-parse", "HEAD"]), head, "HEAD untouched");
        assert!(
            sb.git(dir, ["symbolic-ref", "HEAD"])
                .starts_with("refs/heads/feature-"),
            "still on the feature branch"
        );
        assert_eq!(
            sb.git(dir, ["status", "--porcelain"]),
            "",
            "{}",
            dir.display()
        );
        assert_eq!(sb.git(dir, ["diff", "--cached", "--stat"]), "");
        sb.teammem(dir, ["index", "--scope", "team", "--check"])
            .expect_code(0);
        fsck_is_clean(&sb, dir);
    }
    fsck_is_clean(&sb, &bare);
    // Disjoint edits: each clone's record re-created on the tip it lost to, never a merge.
    assert_eq!(sb.git(&bare, ["rev-list", "--merges", "team-memory"]), "");
    // The feature branches were never pushed by sync.
    let remote_heads = sb.git(&bare, ["for-each-ref", "--format=%(refname)", "refs/heads"]);
    assert!(!remote_heads.contains("feature-"), "{remote_heads}");
}

/// Another push is landing on the server — its lock on the memory branch's ref is held — when
/// mine arrives: git's receive-pack refuses mine with "cannot lock ref …: File exists". That is
/// a lost race, not the server refusing my memory: sync tries again within its budget and never
/// proposes (a proposal branch would make the next syncs keep the commits with merge commits);
/// once the other push is done, mine goes out and the history stays a line.
#[test]
fn a_ref_locked_by_another_push_is_a_lost_race_not_a_refusal() {
    use crate::common::branch_team::BranchTeam;
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let me = team.clone_as("me");
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &daemon.url("remote.git")],
    );
    write_memory(
        &me,
        "project",
        "while-locked",
        "Pushed while the ref was locked.\n",
    );
    let lock = team.remote.join("refs/heads/team-memory.lock");
    assert!(
        team.remote.join("refs/heads/team-memory").is_file(),
        "the remote's memory branch is a loose ref"
    );
    fs::write(&lock, "").unwrap();
    let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "3"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert!(
        ["remote-busy", "timeout"].contains(&reason(&report)),
        "{report:#}"
    );
    let proposals = team.sb.git(
        &team.remote,
        [
            "for-each-ref",
            "--format=%(refname)",
            "refs/heads/team-memory-proposals/",
        ],
    );
    assert_eq!(proposals.trim(), "", "{report:#}");

    fs::remove_file(&lock).unwrap();
    // A budget no load on a shared test machine uses up. What the user must see is the memory
    // on the remote and nothing left to do: under load this sync has found it already pushed
    // (a no-op reporting pushed=false), so which sync pushed it is not asserted.
    let run = team.sb.teammem(&me, ["sync", "--json", "--timeout", "120"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    assert!(
        report["skipped_reason"].is_null(),
        "{report:#}\n{}",
        run.stderr
    );
    assert!(
        team.remote_files("team-memory")
            .iter()
            .any(|f| f.ends_with("project/while-locked.md")),
        "{report:#}\n{}",
        run.stderr
    );
    let local = team.sb.git(&me, ["rev-parse", "refs/heads/team-memory"]);
    let remote = team
        .sb
        .git(&team.remote, ["rev-parse", "refs/heads/team-memory"]);
    assert_eq!(local, remote, "{report:#}");
    let merges = team
        .sb
        .git(&team.remote, ["rev-list", "--merges", "team-memory"]);
    assert_eq!(merges.trim(), "");
}
