//! Invariant 6: a sync killed with SIGKILL at any moment leaves a repository `git fsck`
//! accepts, and the next sync finishes the job with no memory lost.

use crate::common;
use crate::common::servers;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::syncrun::leftovers;
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

/// Copies a folder tree (the trial's fresh remote and clone) with `cp -a`.
fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Invariants 1 and 6 over the whole network sync: my new memory is committed, the teammate's
/// commit (100 files outside the team folder and a memory) fetched, my sync commit re-created
/// on top of it and checked out, then pushed — and `teammem sync` is killed with SIGKILL at a
/// seeded random moment of that, as a hook timeout kills it. The next sync, with no person's
/// help, leaves a repository `git fsck` accepts, clean, with no lock or temp file behind, at
/// the remote's tip, and the remote holds my memory. Half the trials go through a local path
/// (libgit2's fetch, git's receive-pack), half through git daemon.
#[test]
fn kill_nine_across_a_whole_network_sync_never_needs_a_person() {
    const NETWORK_TRIALS: u64 = 200;
    const LANES: u64 = 8;
    let sb = Sandbox::new();
    let srv = sb.path().join("srv");
    fs::create_dir_all(&srv).unwrap();
    sb.git(&srv, ["init", "-q", "--bare", "-b", "main", "seed.git"]);
    let seed_bare = srv.join("seed.git");
    let mate = sb.repo("mate");
    for i in 0..10 {
        let (rel, text) = memory(0, i);
        write(&mate.join(rel), &text);
    }
    sb.teammem(&mate, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(&mate, ["add", "-A"]);
    sb.git(&mate, ["commit", "-q", "-m", "memories"]);
    sb.git(&mate, ["push", "-q", seed_bare.to_str().unwrap(), "main"]);
    let template = sb.path().join("template");
    sb.git(
        sb.path(),
        ["clone", "-q", seed_bare.to_str().unwrap(), "template"],
    );
    for f in 0..100 {
        write(
            &mate.join(format!("src/file-{f:03}.txt")),
            &format!("file {f}\n"),
        );
    }
    let (rel, text) = memory(1, 3);
    write(&mate.join(rel), &text);
    sb.teammem(&mate, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(&mate, ["add", "-A"]);
    sb.git(
        &mate,
        ["commit", "-q", "-m", "teammate: files and a memory"],
    );
    sb.git(&mate, ["push", "-q", seed_bare.to_str().unwrap(), "main"]);
    let daemon = servers::GitDaemon::start(&sb, &srv);

    let mine = |trial: u64| {
        let rel = format!("{TEAM}/project/mine-{trial}.md");
        let text = memory_text(
            &format!("Mine {trial}"),
            &format!("Written before trial {trial}"),
            "project",
            "Mine.\n",
        );
        (rel, text)
    };
    let fresh = |trial: u64| {
        let bare = srv.join(format!("trial-{trial}.git"));
        copy_tree(&seed_bare, &bare);
        let me = sb.path().join(format!("me-{trial}"));
        copy_tree(&template, &me);
        let url = if trial % 2 == 0 {
            bare.display().to_string()
        } else {
            daemon.url(&format!("trial-{trial}.git"))
        };
        sb.git(&me, ["remote", "set-url", "origin", &url]);
        let (rel, text) = mine(trial);
        write(&me.join(rel), &text);
        (bare, me)
    };
    let sync = |dir: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
        sb.isolate(&mut cmd)
            .current_dir(dir)
            .args(["sync", "--json", "--timeout", "60"]);
        cmd
    };

    // How long an uninterrupted sync takes: kill moments are drawn from it.
    let (bare, me) = fresh(NETWORK_TRIALS);
    let started = Instant::now();
    let out = sync(&me).output().unwrap();
    // Half as long again: trials side by side run slower than this lone sync.
    let full = (started.elapsed().as_micros().max(1) as u64) * 3 / 2;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        sb.git(&me, ["rev-parse", "HEAD"]),
        sb.git(&bare, ["rev-parse", "main"])
    );

    // Eight trials run at a time: most of a trial is waiting on processes. Each trial's kill
    // moment comes from its own number, so a failing trial is the same on every run.
    let trial = |trial: u64| {
        let mut seed = 0x5DEE_CE66_D1CE_4E5B ^ (trial + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        next(&mut seed);
        let (bare, me) = fresh(trial);
        let mut child = sync(&me)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(next(&mut seed) % full));
        let _ = child.kill();
        let _ = child.wait();

        let out = sync(&me).output().unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "trial {trial}: the next sync needed help:\n{report}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        sb.git(&me, ["fsck", "--strict", "--no-progress"]);
        assert_eq!(
            sb.git(&me, ["status", "--porcelain", "--untracked-files=all"]),
            "",
            "trial {trial}: {report}"
        );
        assert_eq!(leftovers(&me), Vec::<String>::new(), "trial {trial}");
        let tip = sb.git(&bare, ["rev-parse", "main"]);
        assert_eq!(sb.git(&me, ["rev-parse", "HEAD"]), tip, "trial {trial}");
        let (rel, text) = mine(trial);
        assert_eq!(
            sb.git(&bare, ["show", &format!("main:{rel}")]),
            text,
            "trial {trial}: my memory did not reach the remote"
        );
        assert_eq!(
            sb.git(&bare, ["show", "main:src/file-099.txt"]),
            "file 99\n"
        );
        fs::remove_dir_all(&me).unwrap();
        fs::remove_dir_all(&bare).unwrap();
    };
    std::thread::scope(|scope| {
        for lane in 0..LANES {
            let trial = &trial;
            scope.spawn(move || {
                for t in (lane..NETWORK_TRIALS).step_by(LANES as usize) {
                    trial(t);
                }
            });
        }
    });
}

/// What a sync killed in the middle of a fast-forward's checkout leaves: its note, HEAD on the
/// old tip, one new file written and one cut short. The next sync finishes the move; when a
/// person has edited one of the pulled files since, it rolls the dead checkout back instead,
/// keeps the edit, and says the pull is blocked by it — never untracked files in the way.
#[test]
fn a_checkout_left_half_done_is_finished_or_rolled_back_by_the_next_sync() {
    for edited in [false, true] {
        let sb = Sandbox::new();
        let bare = sb.bare("remote.git");
        let me = sb.repo("me");
        write(&me.join("a.txt"), "old a\n");
        let (rel, text) = memory(0, 1);
        write(&me.join(rel), &text);
        sb.teammem(&me, ["index", "--scope", "team"]).expect_code(0);
        sb.git(&me, ["add", "-A"]);
        sb.git(&me, ["commit", "-q", "-m", "base"]);
        sb.git(&me, ["remote", "add", "origin", bare.to_str().unwrap()]);
        sb.git(&me, ["push", "-q", "-u", "origin", "main"]);
        let from = sb.git(&me, ["rev-parse", "HEAD"]).trim().to_string();
        let mate = sb.path().join("mate");
        sb.git(sb.path(), ["clone", "-q", bare.to_str().unwrap(), "mate"]);
        let new_a = "new a, a longer line than before\n".repeat(20);
        write(&mate.join("a.txt"), &new_a);
        write(&mate.join("b.txt"), "new b\n");
        sb.git(&mate, ["add", "-A"]);
        sb.git(&mate, ["commit", "-q", "-m", "teammate"]);
        sb.git(&mate, ["push", "-q", "origin", "main"]);
        let to = sb.git(&mate, ["rev-parse", "HEAD"]).trim().to_string();
        sb.git(&me, ["fetch", "-q", "origin"]);

        // The dead checkout: its note (a PID that never runs), b.txt written, a.txt cut short.
        fs::write(
            me.join(".git/teammem-checkout"),
            format!("4194399 refs/heads/main {from} {to}\n"),
        )
        .unwrap();
        write(&me.join("b.txt"), "new b\n");
        let a = if edited {
            "my own edit\n"
        } else {
            &new_a[..37]
        };
        write(&me.join("a.txt"), a);

        let run = sb.teammem(&me, ["sync", "--json"]);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(!me.join(".git/teammem-checkout").exists(), "{said}");
        if edited {
            run.expect_code(1);
            assert!(
                said.contains("rolled back") && said.contains("a.txt"),
                "{said}"
            );
            assert!(said.contains("pull-blocked"), "{said}");
            assert_eq!(sb.git(&me, ["rev-parse", "HEAD"]).trim(), from);
            assert_eq!(
                fs::read_to_string(me.join("a.txt")).unwrap(),
                "my own edit\n"
            );
            assert!(
                !me.join("b.txt").exists(),
                "the dead checkout's file is put back"
            );
            assert_eq!(sb.git(&me, ["status", "--porcelain"]), " M a.txt\n");
        } else {
            run.expect_code(0);
            assert!(said.contains("finished a pull"), "{said}");
            assert_eq!(sb.git(&me, ["rev-parse", "HEAD"]).trim(), to);
            assert_eq!(fs::read_to_string(me.join("a.txt")).unwrap(), new_a);
            assert_eq!(sb.git(&me, ["status", "--porcelain"]), "");
        }
        sb.git(&me, ["fsck", "--strict", "--no-progress"]);
    }
}
