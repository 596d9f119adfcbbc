//! Invariant 6: a sync killed with SIGKILL at any moment leaves a repository `git fsck`
//! accepts, and the next sync finishes the job with no memory lost.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, memory_text, write};

const TEAM: &str = ".qwen/team-memory";
const MEMORIES: usize = 500;
const TRIALS: u64 = 50;

fn memory(round: u64, i: usize) -> (String, String) {
    let rel = format!("{TEAM}/project/memory-{i:03}.md");
    let text = memory_text(
        &format!("Memory {i}"),
        &format!("Round {round} of memory {i}"),
        "project",
        &format!("Written in round {round}.\n"),
    );
    (rel, text)
}

fn write_round(repo: &Path, round: u64) {
    for i in 0..MEMORIES {
        let (rel, text) = memory(round, i);
        write(&repo.join(rel), &text);
    }
}

/// xorshift: reproducible "random" kill moments without a crate.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn kill_nine_at_random_moments_never_corrupts_or_loses_memories() {
    let sb = Sandbox::new();
    let sync = |repo: &Path| sb.teammem(repo, ["sync", "--no-pull", "--no-push"]);
    // Each trial starts from a fresh repository whose memories were committed once, so `git
    // fsck` checks a few thousand objects, not everything the earlier trials wrote.
    let fresh_repo = |round: u64| {
        let repo = sb.repo(&format!("trial-{round}"));
        write_round(&repo, 0);
        sb.git(&repo, ["add", "-A"]);
        sb.git(&repo, ["commit", "-q", "-m", "memories"]);
        write_round(&repo, round);
        repo
    };

    let repo = fresh_repo(0);
    write_round(&repo, 1000);
    let started = Instant::now();
    sync(&repo).expect_code(0);
    let full = started.elapsed().as_micros().max(1) as u64;

    let mut seed = 0x9E37_79B9_7F4A_7C15;
    for round in 1..=TRIALS {
        let repo = fresh_repo(round);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
        sb.isolate(&mut cmd)
            .current_dir(&repo)
            .args(["sync", "--no-pull", "--no-push"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(Duration::from_micros(next(&mut seed) % full));
        let _ = child.kill();
        let _ = child.wait();

        sb.git(&repo, ["fsck", "--strict", "--no-progress"]);
        let run = sync(&repo);
        run.expect_code(0);
        assert_eq!(
            sb.git(&repo, ["status", "--porcelain"]),
            "",
            "round {round}: the next sync did not finish the job"
        );
        for i in 0..MEMORIES {
            let (rel, text) = memory(round, i);
            assert_eq!(
                fs::read_to_string(repo.join(&rel)).unwrap(),
                text,
                "round {round}: {rel} changed on disk"
            );
        }
        let committed = sb.git(
            &repo,
            ["show", &format!("HEAD:{TEAM}/project/memory-499.md")],
        );
        assert_eq!(committed, memory(round, 499).1);
        sb.git(&repo, ["fsck", "--strict", "--no-progress"]);
        fs::remove_dir_all(&repo).unwrap();
    }
}

/// A sync killed inside libgit2's ref update leaves `refs/heads/main.lock` behind, and with it
/// its note of the move. The next sync proves the lock is that dead sync's and removes it; a
/// lock no sync announced is another program's and stays, with nothing changed.
#[test]
fn a_ref_lock_left_by_a_killed_sync_is_removed_but_a_foreign_one_is_kept() {
    let sb = Sandbox::new();
    let repo = sb.repo("team");
    write_round(&repo, 0);
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "memories"]);
    let head = sb.git(&repo, ["rev-parse", "HEAD"]).trim().to_string();
    write_round(&repo, 1);
    let git_dir = repo.join(".git");
    let lock = git_dir.join("refs/heads/main.lock");

    // Another program's lock: sync stops before moving anything and says which file it is.
    fs::write(&lock, "").unwrap();
    let run = sb.teammem(&repo, ["sync", "--no-pull", "--no-push"]);
    run.expect_code(1);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("another git process holds") && said.contains("refs/heads/main.lock"),
        "{said}"
    );
    assert!(
        lock.exists(),
        "a lock teammem cannot prove is its own must stay"
    );
    assert_eq!(sb.git(&repo, ["rev-parse", "HEAD"]).trim(), head);

    // What a sync killed between libgit2's lock and its rename leaves: its note, then the lock.
    fs::remove_file(&lock).unwrap();
    fs::write(
        git_dir.join("teammem-ref-move"),
        format!("refs/heads/main {}\n", "1".repeat(40)),
    )
    .unwrap();
    fs::write(&lock, "").unwrap();
    let run = sb.teammem(&repo, ["sync", "--no-pull", "--no-push"]);
    run.expect_code(0);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("removed refs/heads/main.lock"),
        "the user is told about the removed lock:\n{said}"
    );
    assert!(!lock.exists());
    assert!(!git_dir.join("teammem-ref-move").exists());
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
    assert_eq!(
        sb.git(
            &repo,
            ["show", &format!("HEAD:{TEAM}/project/memory-007.md")]
        ),
        memory(1, 7).1
    );
    sb.git(&repo, ["fsck", "--strict", "--no-progress"]);
}
