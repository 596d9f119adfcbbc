//! Invariant 5, from outside: whatever the server does — trickle its headers a byte every half
//! second, stall in the middle of a pack — and however big the pull's checkout, `teammem sync`
//! and `teammem session-start` report within the budget plus the margin docs/sync.md states;
//! what an interrupted transfer or checkout left is cleaned or finished by the next sync; no
//! budget panics; a full disk still gets its JSON report.

use crate::common;
use crate::common::invoke::stdout_json;
use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use netsync::Team;
use servers::{GitDaemon, Trickle, TrickleHttp};
use syncrun::{reason, teammem_env, write_memory};

/// The budget the tests give.
const BUDGET: Duration = Duration::from_secs(3);

/// The margin docs/sync.md promises past the budget (process start, killing the helper,
/// removing what it left, printing the report).
const MARGIN: Duration = Duration::from_secs(1);

/// Runs teammem with `args` in `dir`; returns the run and how long it took from start to exit.
fn timed(team: &Team, dir: &Path, args: &[&str]) -> (common::Run, Duration) {
    let started = Instant::now();
    let run = teammem_env(&team.sb, dir, args, &[]);
    (run, started.elapsed())
}

/// Files an interrupted transfer leaves in the pack folder.
fn temp_packs(repo: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(repo.join(".git/objects/pack")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pack_git2_") || n.starts_with("tmp_") || n.ends_with(".lock"))
        .collect()
}

/// teammem's own notes and any lock left in the git folder.
fn leftovers(repo: &Path) -> Vec<String> {
    let git = repo.join(".git");
    let mut found = temp_packs(repo);
    for name in [
        "teammem-transfer",
        "teammem-checkout",
        "teammem-ref-move",
        "index.lock",
    ] {
        if git.join(name).exists() {
            found.push(name.to_string());
        }
    }
    found
}

fn assert_within_budget(what: &str, took: Duration) {
    eprintln!("{what}: reported after {took:?} (budget {BUDGET:?})");
    assert!(
        took < BUDGET + MARGIN,
        "{what} took {took:?}, more than the {BUDGET:?} budget plus the {MARGIN:?} margin"
    );
}

#[test]
fn a_server_trickling_http_headers_is_cut_off_at_the_budget() {
    let team = Team::new();
    let server = TrickleHttp::start(Duration::from_millis(500));
    team.set_origin(&team.me, &server.url("team.git"));
    write_memory(&team.me, "project", "trickle", "Slow server.\n");
    // Session start first: after this failure, offline grace skips the network at the next.
    let (run, took) = timed(
        &team,
        &team.me,
        &["session-start", "--hook", "plain", "--timeout", "3"],
    );
    assert!(run.stdout.contains("kipped (timeout)"), "{}", run.stdout);
    assert_within_budget("session-start", took);
    for transport in ["builtin", "git-cli"] {
        let (run, took) = timed(
            &team,
            &team.me,
            &["sync", "--json", "--timeout", "3", "--transport", transport],
        );
        let report = stdout_json(&run);
        assert_eq!(reason(&report), "timeout", "{transport}: {report:#}");
        assert_within_budget(&format!("sync --transport {transport}"), took);
    }
    assert_eq!(leftovers(&team.me), Vec::<String>::new());
    team.sb.git(&team.me, ["fsck", "--no-progress"]);
}

#[test]
fn a_git_server_trickling_its_advertisement_is_cut_off_at_the_budget() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let slow = Trickle::start(daemon.port, 0, Duration::from_millis(500));
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", slow.port()),
    );
    write_memory(&team.me, "project", "trickle", "Slow server.\n");
    let (run, took) = timed(
        &team,
        &team.me,
        &["session-start", "--hook", "qwen", "--timeout", "3"],
    );
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("kipped (timeout)"), "{}", run.stdout);
    assert!(run.stdout.contains("hookSpecificOutput"), "{}", run.stdout);
    assert_within_budget("session-start", took);
    let (run, took) = timed(&team, &team.me, &["sync", "--json", "--timeout", "3"]);
    let report = stdout_json(&run);
    assert_eq!(reason(&report), "timeout", "{report:#}");
    assert_within_budget("sync", took);
}

/// A teammate pushed a megabyte the server then sends a byte every half second: the fetch is
/// stopped at the deadline, its temp pack removed, and the next sync (the server healthy
/// again) pulls it.
#[test]
fn a_server_stalling_mid_pack_is_cut_off_and_its_temp_pack_removed() {
    let team = Team::new();
    let mut noise = Vec::with_capacity(1 << 20);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    while noise.len() < 1 << 20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.extend_from_slice(&x.to_le_bytes());
    }
    fs::write(team.mate.join("noise.bin"), &noise).unwrap();
    team.sb.git(&team.mate, ["add", "noise.bin"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "a big file"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let stalls = Trickle::start(daemon.port, 64 * 1024, Duration::from_millis(500));
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", stalls.port()),
    );
    for transport in ["builtin", "git-cli"] {
        let (run, took) = timed(
            &team,
            &team.me,
            &["sync", "--json", "--timeout", "3", "--transport", transport],
        );
        let report = stdout_json(&run);
        assert_eq!(reason(&report), "timeout", "{transport}: {report:#}");
        assert_within_budget(&format!("sync --transport {transport}"), took);
        assert_eq!(leftovers(&team.me), Vec::<String>::new(), "{transport}");
    }
    team.sb.git(&team.me, ["fsck", "--no-progress"]);
    team.set_origin(&team.me, &daemon.url("team.git"));
    let (run, _) = timed(&team, &team.me, &["sync", "--json"]);
    let report = stdout_json(&run);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pulled"], true);
    assert_eq!(fs::read(team.me.join("noise.bin")).unwrap(), noise);
}

/// A teammate's commit adds 100,000 files: the checkout cannot finish in 3 s, so it is stopped
/// at the deadline, and the next sync (with time enough) finishes it — no untracked files
/// left in the way, nothing for a person to clean.
#[test]
fn a_checkout_too_big_for_the_budget_is_stopped_and_finished_by_the_next_sync() {
    let team = Team::new();
    let blob = {
        let mut cmd = Command::new("git");
        team.sb
            .isolate(&mut cmd)
            .current_dir(&team.mate)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"generated\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let mut listing = String::new();
    for d in 0..100 {
        for f in 0..1000 {
            listing.push_str(&format!(
                "100644 blob {blob}\tgenerated/d{d:03}/f{f:04}.txt\n"
            ));
        }
    }
    let mut cmd = Command::new("git");
    team.sb
        .isolate(&mut cmd)
        .current_dir(&team.mate)
        .args(["update-index", "--index-info"])
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(listing.as_bytes())
            .unwrap();
    }
    assert!(child.wait().unwrap().success());
    team.sb.git(
        &team.mate,
        ["commit", "-q", "-m", "100,000 generated files"],
    );
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    // The objects are fetched beforehand so that the budget goes to the checkout.
    team.sb.git(&team.me, ["fetch", "-q", "origin"]);
    let remote = team.rev(&team.bare, "main");

    let (run, took) = timed(&team, &team.me, &["sync", "--json", "--timeout", "3"]);
    let report = stdout_json(&run);
    assert_eq!(reason(&report), "timeout", "{report:#}");
    assert_within_budget("sync", took);
    assert_ne!(
        team.rev(&team.me, "HEAD"),
        remote,
        "the checkout finished in 3 s"
    );

    let (run, _) = timed(&team, &team.me, &["sync", "--json", "--timeout", "300"]);
    let report = stdout_json(&run);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(team.rev(&team.me, "HEAD"), remote);
    assert_eq!(team.status(&team.me), "");
    assert_eq!(leftovers(&team.me), Vec::<String>::new());
    assert!(team.me.join("generated/d099/f0999.txt").is_file());
}

#[test]
fn any_timeout_value_is_accepted_without_a_panic() {
    let team = Team::new();
    write_memory(&team.me, "project", "budget", "Big budgets.\n");
    for timeout in ["9223372036854775807", "18446744073709551615", "0"] {
        let (run, _) = timed(
            &team,
            &team.me,
            &["sync", "--json", "--no-push", "--timeout", timeout],
        );
        assert!(run.code == 0 || run.code == 1, "{timeout}: {}", run.stderr);
        assert!(
            !run.stderr.contains("panicked"),
            "{timeout}: {}",
            run.stderr
        );
        stdout_json(&run);
    }
    let run = teammem_env(
        &team.sb,
        &team.me,
        &[
            "session-start",
            "--hook",
            "plain",
            "--timeout",
            "18446744073709551615",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

/// `ENOSPC` on the sync lock: a clone on a full 1 MiB tmpfs (in a user and mount namespace of
/// its own, so no root is needed where unprivileged namespaces are allowed).
#[test]
fn a_full_disk_still_gets_the_json_report() {
    let team = Team::new();
    write_memory(&team.me, "project", "full", "No room.\n");
    let small = team.sb.path().join("small");
    fs::create_dir_all(&small).unwrap();
    let script = format!(
        "set -e; mount -t tmpfs -o size=1m tmpfs '{small}'; cp -a '{me}' '{small}/me'; \
         dd if=/dev/zero of='{small}/fill' bs=4k 2>/dev/null || true; cd '{small}/me'; \
         '{bin}' sync --json --no-pull --no-push; echo \"exit=$?\"",
        small = small.display(),
        me = team.me.display(),
        bin = env!("CARGO_BIN_EXE_teammem"),
    );
    let mut cmd = Command::new("unshare");
    team.sb
        .isolate(&mut cmd)
        .args(["-rm", "sh", "-c", &script.replace("set -e; ", "")]);
    let out = cmd.output().expect(
        "unshare (util-linux) is needed for the full-disk test: apt-get install util-linux",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("exit="),
        "unshare -rm failed (unprivileged namespaces off?):\n{stdout}\n{stderr}"
    );
    let (json, status) = stdout.rsplit_once("exit=").unwrap();
    assert_eq!(status.trim(), "2", "{stdout}\n{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("no report ({e}):\n{stdout}"));
    assert_eq!(reason(&report), "error", "{report:#}");
    let why = report["warnings"][0].as_str().unwrap();
    assert!(
        why.contains("No space left on device"),
        "{report:#}\n{stderr}"
    );
}

/// After a failed attempt, session starts within the grace skip the network and say so; a
/// `teammem sync` by hand still tries, and once the remote is reached the grace ends.
#[test]
fn after_a_network_failure_session_starts_skip_the_network_but_sync_tries() {
    let team = Team::new();
    let hole = servers::BlackHole::start();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", hole.port()),
    );
    let start = ["session-start", "--hook", "plain", "--timeout", "3"];
    let (first, took) = timed(&team, &team.me, &start);
    assert!(
        first.stdout.contains("kipped (timeout)"),
        "{}",
        first.stdout
    );
    assert!(
        took >= Duration::from_secs(2),
        "the first start did try: {took:?}"
    );

    write_memory(&team.me, "project", "plane", "Written offline.\n");
    let (second, took) = timed(&team, &team.me, &start);
    assert!(
        second
            .stdout
            .contains("Network skipped: the remote could not be reached 0 min ago"),
        "{}",
        second.stdout
    );
    assert!(
        second.stdout.contains("Committed 2 team memory files"),
        "{}",
        second.stdout
    );
    assert!(
        took < BUDGET,
        "the second start still paid the budget: {took:?}"
    );

    let (run, took) = timed(&team, &team.me, &["sync", "--json", "--timeout", "3"]);
    assert_eq!(reason(&stdout_json(&run)), "timeout");
    assert!(
        took >= Duration::from_secs(2),
        "sync by hand did not try: {took:?}"
    );

    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    let (run, _) = timed(&team, &team.me, &["sync", "--json"]);
    assert_eq!(reason(&stdout_json(&run)), "", "{}", run.stdout);
    let (third, _) = timed(&team, &team.me, &start);
    assert!(
        !third.stdout.contains("Network skipped"),
        "{}",
        third.stdout
    );
    drop(hole);
}

/// A teammate pushes an 8 MiB `MEMORY.md` of one repeated line: it is never checked out or
/// read whole; the report names the commit and the file, and the next sync says the same
/// without fetching it again.
#[test]
fn a_fetched_team_file_over_the_size_limit_is_refused_by_name() {
    let team = Team::new();
    let line = "- [Again](project/again.md) — the same line, over and over\n";
    let huge = line.repeat((8 << 20) / line.len());
    fs::write(team.mate.join(".qwen/team-memory/MEMORY.md"), &huge).unwrap();
    team.sb
        .git(&team.mate, ["commit", "-q", "-am", "a huge index"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    let culprit = team.rev(&team.mate, "HEAD");
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    write_memory(&team.me, "project", "mine", "Mine.\n");
    let before = team.rev(&team.me, "HEAD");
    for _ in 0..2 {
        let (run, _) = timed(&team, &team.me, &["sync", "--json", "--timeout", "3"]);
        let report = stdout_json(&run);
        assert_eq!(reason(&report), "too-large", "{report:#}");
        let why = report["warnings"][0].as_str().unwrap();
        assert!(
            why.contains(&culprit[..12]) && why.contains(".qwen/team-memory/MEMORY.md"),
            "{why}"
        );
        assert!(
            fs::metadata(team.me.join(".qwen/team-memory/MEMORY.md"))
                .unwrap()
                .len()
                < 1 << 20,
            "the huge file was checked out"
        );
    }
    assert_ne!(
        team.rev(&team.me, "HEAD"),
        before,
        "my memory is committed here"
    );
    assert_eq!(
        team.rev(&team.bare, "main"),
        culprit,
        "nothing of mine was pushed"
    );
}
