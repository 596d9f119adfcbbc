//! A branch-mode sync really killed (SIGKILL) in the middle of its fetch — the pack has begun
//! to arrive and the server holds the rest (`common::stall`), so the kill lands there every
//! time — and the next sync, with no person's help, converges: every memory on the remote and
//! in the folder, mine included, no lock or temp file left, `git fsck` clean.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::branch_team::{BranchTeam, TEAM, has_memory, write_memory};
use crate::common::servers::GitDaemon;
use crate::common::stall::PackStall;
use crate::common::syncrun::leftovers;

#[test]
fn a_sync_killed_while_the_pack_arrives_is_finished_by_the_next() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    // A teammate pushes five memories: my next sync has a pack to fetch.
    let mate = team.clone_as("mate");
    for i in 0..5 {
        write_memory(
            &mate,
            "project",
            &format!("mate-{i}"),
            "From the teammate.\n",
        );
    }
    assert_eq!(team.sync(&mate)["pushed"], true);
    // Mine, recorded before the fetch starts.
    write_memory(&me, "feedback", "mine", "Written before the kill.\n");

    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let stall = PackStall::start(daemon.port);
    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &stall.url("remote.git")],
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    team.sb
        .isolate(&mut cmd)
        .current_dir(&me)
        .args(["sync", "--json", "--timeout", "600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut sync = cmd.spawn().expect("start teammem sync");
    // The bound only keeps a broken test from hanging; the kill waits for the stall itself.
    let stalled = stall.wait_for_stall(Duration::from_secs(120));
    sync.kill().expect("SIGKILL the sync");
    let status = sync.wait().expect("reap the sync");
    assert!(stalled, "the sync never began to receive the pack");
    assert!(!status.success(), "killed, not finished: {status:?}");
    // Killed in the middle: its lock is still there.
    assert!(
        leftovers(&me).iter().any(|f| f == "teammem-sync.lock"),
        "{:?}",
        leftovers(&me)
    );
    drop(stall);

    team.sb.git(
        &me,
        ["remote", "set-url", "origin", &daemon.url("remote.git")],
    );
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    for i in 0..5 {
        assert!(has_memory(&me, "project", &format!("mate-{i}")), "mate-{i}");
    }
    assert!(has_memory(&me, "feedback", "mine"));
    let files = team.remote_files("team-memory");
    assert!(
        files.contains(&format!("{TEAM}/feedback/mine.md")),
        "{files:?}"
    );
    for i in 0..5 {
        assert!(files.contains(&format!("{TEAM}/project/mate-{i}.md")));
    }
    // The next sync has nothing left to do, and nothing is left behind.
    let again = team.sync(&me);
    assert!(again["skipped_reason"].is_null(), "{again:#}");
    assert_eq!(again["committed"], false, "{again:#}");
    assert_eq!(leftovers(&me), Vec::<String>::new());
    let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert_eq!(
        team.sb.git(&me, ["status", "--porcelain"]),
        "",
        "git status shows nothing from the folder"
    );
}

/// The conflict copies of the team folder's memories, in `listing` (one path a line).
fn copies(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.contains(".conflict-"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_sync_killed_after_landing_a_conflict_copy_and_before_writing_the_folder_makes_no_second() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    assert!(team.sync(&mate)["skipped_reason"].is_null());
    write_memory(&mate, "project", "seeded", "The teammate's version.\n");
    assert_eq!(team.sync(&mate)["pushed"], true);
    write_memory(&me, "project", "seeded", "My version.\n");
    let mine = std::fs::read(me.join(TEAM).join("project/seeded.md")).unwrap();
    let materialised = "refs/teammem/materialised/main";
    let base = team.sb.git(&me, ["rev-parse", materialised]);

    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    let on_remote = team.remote_files("team-memory").join("\n");
    assert_eq!(copies(&on_remote).len(), 1, "{on_remote}");

    // What a kill between pushing and writing the folder leaves: the folder as before the
    // sync (my edit at the path, no copy yet) and its recorded base the old one.
    let folder = me.join(TEAM).join("project");
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains(".conflict-") {
            std::fs::remove_file(path).unwrap();
        }
    }
    std::fs::write(folder.join("seeded.md"), &mine).unwrap();
    team.sb.git(&me, ["update-ref", materialised, base.trim()]);

    // The next sync records the edit again. (Another author makes that commit differ from the
    // first even within the same second, as a sync run later would.)
    let run = team.sb.teammem(
        &me,
        ["sync", "--json", "--author", "Me Later <me@example.com>"],
    );
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    let on_remote = team.remote_files("team-memory").join("\n");
    assert_eq!(
        copies(&on_remote).len(),
        1,
        "one edit, one copy: {on_remote}"
    );
    let in_folder: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(in_folder.len(), 2, "{in_folder:?}");
    let texts: Vec<String> = in_folder
        .iter()
        .map(|n| std::fs::read_to_string(folder.join(n)).unwrap())
        .collect();
    assert!(texts.iter().any(|t| t.contains("The teammate's version.")));
    assert!(texts.iter().any(|t| t.contains("My version.")));
    assert_eq!(
        team.sb
            .git(&team.remote, ["rev-list", "--merges", "team-memory"]),
        ""
    );
}

/// xorshift: reproducible "random" kill moments without a crate (as `sync_kill.rs`).
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A team where a teammate pushed a new memory and a version of `seeded`, and `me` holds a
/// version of `seeded` too and a new memory of its own, not synced yet.
fn conflicting_edits(trial: u64) -> (BranchTeam, std::path::PathBuf) {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    assert!(team.sync(&mate)["skipped_reason"].is_null());
    write_memory(&mate, "project", "seeded", "The teammate's version.\n");
    write_memory(&mate, "project", "from-mate", "Theirs.\n");
    assert_eq!(team.sync(&mate)["pushed"], true);
    write_memory(&me, "project", "seeded", "My version.\n");
    write_memory(&me, "project", &format!("mine-{trial}"), "Mine.\n");
    (team, me)
}

fn sync_command(team: &BranchTeam, dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    team.sb
        .isolate(&mut cmd)
        .current_dir(dir)
        .args(["sync", "--json", "--timeout", "60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

#[test]
fn kill_nine_at_random_moments_of_a_conflicting_branch_sync_keeps_one_copy_and_needs_no_person() {
    const TRIALS: u64 = 4;
    // How long an uninterrupted sync takes: kill moments are drawn from it.
    let (team, me) = conflicting_edits(TRIALS);
    let started = std::time::Instant::now();
    assert!(sync_command(&team, &me).status().unwrap().success());
    let full = (started.elapsed().as_micros().max(1) as u64) * 3 / 2;

    for trial in 0..TRIALS {
        let mut seed = 0x5DEE_CE66_D1CE_4E5B ^ (trial + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        next(&mut seed);
        let (team, me) = conflicting_edits(trial);
        let mut child = sync_command(&team, &me).spawn().unwrap();
        std::thread::sleep(Duration::from_micros(next(&mut seed) % full));
        let _ = child.kill();
        let _ = child.wait();

        let report = team.sync(&me);
        assert!(
            report["skipped_reason"].is_null(),
            "trial {trial}: {report:#}"
        );
        team.sb.git(&me, ["fsck", "--strict", "--no-progress"]);
        assert_eq!(leftovers(&me), Vec::<String>::new(), "trial {trial}");
        assert_eq!(
            team.sb.git(&me, ["status", "--porcelain"]),
            "",
            "trial {trial}"
        );
        let files = team.remote_files("team-memory");
        for slug in [format!("mine-{trial}"), "from-mate".to_string()] {
            assert!(
                files.contains(&format!("{TEAM}/project/{slug}.md")),
                "trial {trial}: {files:?}"
            );
        }
        let listing = files.join("\n");
        assert_eq!(
            copies(&listing).len(),
            1,
            "trial {trial}: one copy: {listing}"
        );
        let texts: String = files
            .iter()
            .filter(|f| f.contains("/project/seeded.md"))
            .map(|f| {
                team.sb
                    .git(&team.remote, ["show", &format!("team-memory:{f}")])
            })
            .collect();
        assert!(texts.contains("My version."), "trial {trial}: {texts}");
        assert!(
            texts.contains("The teammate's version."),
            "trial {trial}: {texts}"
        );
        assert_eq!(
            team.sb
                .git(&team.remote, ["rev-list", "--merges", "team-memory"]),
            "",
            "trial {trial}"
        );
        assert!(has_memory(&me, "project", "from-mate"), "trial {trial}");
    }
}

/// Files of a held push: the fifo that releases it, and the markers `held` (it reached the
/// hook) and `done` (the hook finished).
struct Held {
    fifo: std::path::PathBuf,
    held: std::path::PathBuf,
    done: std::path::PathBuf,
}

/// Installs the remote's `pre-receive` hook: pushes to `team-memory` are refused when
/// `protected`; the first other push (a proposal's, or the memory branch's when not
/// protected) announces itself in `held`, waits until the fifo is opened for writing and
/// closed, writes `done` and exits `exit` (1: the killed push never lands; 0: it lands though
/// its client is gone); later pushes go through.
fn hold_first_push(team: &BranchTeam, protected: bool, exit: i32) -> Held {
    let dir = team.sb.path().join("gate");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (held, done) = (dir.join("held"), dir.join("done"));
    let refuse = if protected {
        "  case \"$ref\" in\n    refs/heads/team-memory) echo protected >&2; exit 1 ;;\n  esac\n"
    } else {
        ""
    };
    let hook = team.remote.join("hooks/pre-receive");
    crate::common::write(
        &hook,
        &format!(
            "#!/bin/sh\nwhile read old new ref; do\n{refuse}  :\ndone\nif mkdir '{first}' 2>/dev/null; then\n  touch '{held}'\n  cat '{fifo}' > /dev/null\n  touch '{done}'\n  exit {exit}\nfi\nexit 0\n",
            first = dir.join("first").display(),
            held = held.display(),
            fifo = fifo.display(),
            done = done.display(),
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    Held { fifo, held, done }
}

/// Starts `teammem sync` in `dir`, waits until its push is held, kills it (SIGKILL), then
/// lets the hook finish.
fn kill_while_held(team: &BranchTeam, dir: &std::path::Path, gate: &Held) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    team.sb
        .isolate(&mut cmd)
        .current_dir(dir)
        .args(["sync", "--json", "--timeout", "600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut sync = cmd.spawn().expect("start teammem sync");
    wait_for(&gate.held, "the push reaching the hook");
    sync.kill().expect("SIGKILL the sync");
    assert!(!sync.wait().expect("reap the sync").success());
    drop(
        std::fs::OpenOptions::new()
            .write(true)
            .open(&gate.fifo)
            .unwrap(),
    );
    wait_for(&gate.done, "the held hook finishing");
}

/// Waits (bounded, so a broken test cannot hang) until `path` exists.
fn wait_for(path: &std::path::Path, what: &str) {
    let start = std::time::Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} never happened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A sync killed while its proposal push is in the remote's hook (the memory branch is
/// protected): the next sync, with no person's help, proposes the same commit on my first
/// proposal name (not a fresh one: nothing of anyone else's is there), leaves no lock, and a
/// third sync has nothing to add.
#[test]
fn a_sync_killed_during_its_proposal_push_is_finished_by_the_next() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    let gate = hold_first_push(&team, true, 1);
    write_memory(&me, "feedback", "mine", "Proposed when the kill came.\n");
    kill_while_held(&team, &me, &gate);
    let proposals = |team: &BranchTeam| {
        team.sb.git(
            &team.remote,
            [
                "for-each-ref",
                "--format=%(refname)",
                "refs/heads/team-memory-proposals/",
            ],
        )
    };
    assert_eq!(proposals(&team), "", "the killed push did not land");

    let report = team.sync(&me);
    assert_eq!(report["skipped_reason"], "proposed", "{report:#}");
    assert_eq!(report["proposal"], "team-memory-proposals/me", "{report:#}");
    assert_eq!(proposals(&team), "refs/heads/team-memory-proposals/me\n");
    let files = team.remote_files("team-memory-proposals/me");
    assert!(
        files.contains(&format!("{TEAM}/feedback/mine.md")),
        "{files:?}"
    );
    let tip = team.sb.git(&me, ["rev-parse", "team-memory"]);
    let again = team.sync(&me);
    assert_eq!(again["committed"], false, "{again:#}");
    assert_eq!(again["proposal"], "team-memory-proposals/me", "{again:#}");
    assert_eq!(team.sb.git(&me, ["rev-parse", "team-memory"]), tip);
    assert_eq!(leftovers(&me), Vec::<String>::new());
    assert!(has_memory(&me, "feedback", "mine"));
    let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// Killed between record and push's answer: my record commit's push is in the remote's hook
/// when the kill comes, and the hook then accepts it. Usually the remote takes it though my
/// sync is gone (its remote-tracking ref never moved), and a teammate then edits the memory I
/// recorded: my next sync sees its own commit on the remote, records nothing twice and makes no
/// conflict copy (only the teammate changed the memory since). Should receive-pack stop with
/// its client instead, the next sync pushes the commit once. Either way no lock is left and the
/// remote's history adds my memory in one commit, with no merge commit.
#[test]
fn a_sync_killed_while_the_remote_takes_its_push_makes_no_second_commit_or_copy() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    assert!(team.sync(&me)["skipped_reason"].is_null());
    assert!(team.sync(&mate)["skipped_reason"].is_null());
    let gate = hold_first_push(&team, false, 0);
    // No keepalive written to the gone client while the hook waits.
    team.sb
        .git(&team.remote, ["config", "receive.keepAlive", "0"]);
    write_memory(&me, "feedback", "mine", "Recorded before the kill.\n");
    kill_while_held(&team, &me, &gate);
    let path = format!("{TEAM}/feedback/mine.md");
    let landed = team.remote_files("team-memory").contains(&path);

    if landed {
        assert!(team.sync(&mate)["skipped_reason"].is_null());
        write_memory(&mate, "feedback", "mine", "Edited by the teammate.\n");
        assert_eq!(team.sync(&mate)["pushed"], true);
    }
    let report = team.sync(&me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    // Landed, the push whose answer was lost is reported by this sync (`branch::lost_answer`);
    // not landed, this sync pushes it.
    assert_eq!(report["pushed"], true, "{report:#}");
    let text = std::fs::read_to_string(me.join(&path)).unwrap();
    let expected = if landed {
        "Edited by the teammate."
    } else {
        "Recorded before the kill."
    };
    assert!(text.contains(expected), "{text}");
    let listing = team.remote_files("team-memory").join("\n");
    assert_eq!(copies(&listing), Vec::<String>::new());
    let adding = team.sb.git(
        &team.remote,
        [
            "log",
            "--format=%h",
            "--diff-filter=A",
            "team-memory",
            "--",
            &path,
        ],
    );
    assert_eq!(adding.lines().count(), 1, "{adding}");
    let merges = team.sb.git(
        &team.remote,
        ["log", "--merges", "--format=%h", "team-memory"],
    );
    assert_eq!(merges, "", "no merge commit");
    assert_eq!(leftovers(&me), Vec::<String>::new());
    let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}
