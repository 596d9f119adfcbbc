//! The branch-mode no-op decided from the repository's files, without libgit2 (issue 11): it
//! runs when nothing happened (`-v` says so), reports what the full sync reports, and never
//! calls a change a no-op — a teammate's push (loose ref, packed ref, a remote gc), a local
//! edit that kept its size and mtime, a file added or removed, a deleted `MEMORY.md` — nor
//! decides what it does not fully understand (`insteadOf`, a proxy variable); linked worktrees
//! and a detached HEAD get it too, and so do a `git://` daemon and a smart-HTTP server (one
//! connection; a remote down, answering garbage or hanging leaves it to the full sync within
//! the budget; an HTTP answer is read to its end, not to the close; a `localhost` remote is
//! reached on whichever of its addresses listens), and `session-start`.

use std::fs;
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::Sandbox;
use crate::common::branch_team::{BranchTeam, TEAM, has_memory, write_memory};
use crate::common::count_proxy::CountProxy;
use crate::common::servers::{GitDaemon, HttpGit};
use crate::common::write;

/// What `teammem -v sync --json` printed, and whether the fast no-op decided it.
fn sync_v(team: &BranchTeam, dir: &Path, env: &[(&str, &str)]) -> (Value, bool) {
    let (report, fast, _) = sync_v_stderr(team, dir, env);
    (report, fast)
}

/// [`sync_v`], with its standard error.
fn sync_v_stderr(team: &BranchTeam, dir: &Path, env: &[(&str, &str)]) -> (Value, bool, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
    team.sb
        .isolate(&mut cmd)
        .current_dir(dir)
        .args(["-v", "sync", "--json"])
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{stdout}\n{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let fast = stderr.contains("(fast no-op;");
    (report, fast, stderr)
}

/// The report without its duration, which differs from run to run.
fn timeless(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("duration_ms");
    report
}

/// A sync that must be decided by the fast no-op: its report is the full sync's, field for
/// field (the full one run right after, with the fast path off).
fn fast_noop(team: &BranchTeam, dir: &Path) -> Value {
    let (fast, was_fast, stderr) = sync_v_stderr(team, dir, &[]);
    assert!(was_fast, "the fast no-op did not run: {fast:#}\n{stderr}");
    let (full, was_fast) = sync_v(team, dir, &[("TEAMMEM_SYNC_FAST", "0")]);
    assert!(!was_fast);
    assert_eq!(
        timeless(fast.clone()),
        timeless(full),
        "fast and full reports differ"
    );
    assert!(fast["skipped_reason"].is_null(), "{fast:#}");
    assert_eq!(fast["pulled"], false);
    assert_eq!(fast["committed"], false);
    fast
}

/// A sync the fast no-op must leave to the full one.
fn full_sync(team: &BranchTeam, dir: &Path) -> Value {
    let (report, was_fast) = sync_v(team, dir, &[]);
    assert!(
        !was_fast,
        "the fast no-op decided a sync with work to do: {report:#}"
    );
    report
}

/// A clone that synced and has nothing left to do.
fn settled(team: &BranchTeam, name: &str) -> std::path::PathBuf {
    let dir = team.clone_as(name);
    let report = team.sync(&dir);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&dir, "project", "seeded"));
    dir
}

/// A teammate working on the memory branch with the git CLI: writes a memory, regenerates
/// `MEMORY.md` (`teammem index`, as every teammem command that writes does), commits, pushes.
fn teammate_pushes(sb: &Sandbox, url: &str, slug: &str) {
    teammate_pushes_with(sb, url, slug, true);
}

/// [`teammate_pushes`], `MEMORY.md` regenerated or not.
fn teammate_pushes_with(sb: &Sandbox, url: &str, slug: &str, index: bool) {
    let dir = sb.path().join(format!("mate-{slug}"));
    sb.git(
        sb.path(),
        [
            "clone",
            "-q",
            "-b",
            "team-memory",
            url,
            dir.to_str().unwrap(),
        ],
    );
    write_memory(&dir, "project", slug, "A teammate's memory.\n");
    if index {
        sb.teammem(&dir, ["index", "--scope", "team"])
            .expect_code(0);
    }
    sb.git(&dir, ["add", "-A"]);
    sb.git(&dir, ["commit", "-q", "-m", &format!("memory {slug}")]);
    sb.git(&dir, ["push", "-q", "origin", "team-memory"]);
}

#[test]
fn a_settled_clone_decides_its_no_op_from_files_and_prints_what_the_full_sync_prints() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    let report = fast_noop(&team, &alice);
    assert_eq!(report["memory_branch"], "team-memory");
    let tip = team.sb.git(&alice, ["rev-parse", "refs/heads/team-memory"]);
    assert_eq!(report["memory_tip"].as_str().unwrap(), tip.trim());
    // The human line too, byte for byte.
    let fast = team.sb.teammem(&alice, ["sync"]);
    fast.expect_code(0);
    let run = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
        team.sb
            .isolate(&mut cmd)
            .current_dir(&alice)
            .arg("sync")
            .envs(env.iter().copied());
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert_eq!(run(&[]), run(&[("TEAMMEM_SYNC_FAST", "0")]));
    assert_eq!(
        fast.stdout,
        format!(
            "No team memory changes to commit; memory branch team-memory at {}\n",
            &tip.trim()[..7]
        )
    );
    // It wrote nothing: the record is as it was.
    let record = fs::read(alice.join(".git/teammem-noop")).unwrap();
    let (_, was_fast) = sync_v(&team, &alice, &[]);
    assert!(was_fast);
    assert_eq!(fs::read(alice.join(".git/teammem-noop")).unwrap(), record);
}

#[test]
fn a_teammates_push_is_never_missed_loose_packed_or_after_a_remote_gc() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    fast_noop(&team, &alice);

    // A loose ref on the remote.
    teammate_pushes(&team.sb, &team.url, "loose");
    let report = full_sync(&team, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(has_memory(&alice, "project", "loose"));
    fast_noop(&team, &alice);

    // The remote's refs packed: the tip is read from packed-refs.
    team.sb.git(&team.remote, ["pack-refs", "--all"]);
    assert!(!team.remote.join("refs/heads/team-memory").exists());
    fast_noop(&team, &alice);
    teammate_pushes(&team.sb, &team.url, "before-pack");
    team.sb.git(&team.remote, ["pack-refs", "--all"]);
    assert!(!team.remote.join("refs/heads/team-memory").exists());
    let report = full_sync(&team, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(has_memory(&alice, "project", "before-pack"));
    fast_noop(&team, &alice);

    // A push, then the remote's gc.
    teammate_pushes(&team.sb, &team.url, "before-gc");
    team.sb.git(&team.remote, ["gc", "-q", "--prune=now"]);
    let report = full_sync(&team, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(has_memory(&alice, "project", "before-gc"));
    fast_noop(&team, &alice);

    // A push whose MEMORY.md lacks the new memory: the folder's, regenerated, differs from the
    // branch's, so the folder never holds exactly the tip, and every sync is a full one (as
    // the full sync's own no-op check says too), until a teammem sync records MEMORY.md.
    teammate_pushes_with(&team.sb, &team.url, "no-index", false);
    let report = full_sync(&team, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(has_memory(&alice, "project", "no-index"));
    let report = full_sync(&team, &alice);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
}

#[test]
fn a_local_edit_that_keeps_size_and_mtime_is_still_recorded() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    fast_noop(&team, &alice);
    let file = alice.join(format!("{TEAM}/project/seeded.md"));
    let before = fs::read_to_string(&file).unwrap();
    let stamp = team.sb.path().join("stamp");
    fs::copy(&file, &stamp).unwrap();
    let after = before.replace("The first memory.", "The first mem0ry.");
    assert_eq!(after.len(), before.len());
    fs::write(&file, &after).unwrap();
    // Size and mtime as they were: only the ctime (and the content) tell.
    let status = std::process::Command::new("touch")
        .arg("-r")
        .arg(&stamp)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());
    let report = full_sync(&team, &alice);
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let shown = team.sb.git(
        &team.remote,
        ["show", &format!("team-memory:{TEAM}/project/seeded.md")],
    );
    assert!(shown.contains("The first mem0ry."), "{shown}");
    fast_noop(&team, &alice);
}

#[test]
fn a_file_added_or_removed_and_a_deleted_index_are_seen() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    fast_noop(&team, &alice);

    write_memory(&alice, "feedback", "added", "A new memory.\n");
    let report = full_sync(&team, &alice);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        team.remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/added.md"))
    );
    fast_noop(&team, &alice);

    fs::remove_file(alice.join(format!("{TEAM}/feedback/added.md"))).unwrap();
    let report = full_sync(&team, &alice);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        !team
            .remote_files("team-memory")
            .contains(&format!("{TEAM}/feedback/added.md"))
    );
    fast_noop(&team, &alice);

    // A file no memory: still a change in the folder, left to the full sync.
    write(&alice.join(format!("{TEAM}/.notes")), "scratch\n");
    full_sync(&team, &alice);
    fs::remove_file(alice.join(format!("{TEAM}/.notes"))).unwrap();

    let index = alice.join(format!("{TEAM}/MEMORY.md"));
    let text = fs::read_to_string(&index).unwrap();
    fs::remove_file(&index).unwrap();
    full_sync(&team, &alice);
    assert_eq!(fs::read_to_string(&index).unwrap(), text);
    fast_noop(&team, &alice);
}

#[test]
fn a_url_rewrite_anywhere_is_left_to_the_full_sync_which_still_works() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    fast_noop(&team, &alice);
    // In the repository's config.
    team.sb.git(
        &alice,
        [
            "config",
            "url.file:///nowhere/.insteadOf",
            "nothing-uses-this:",
        ],
    );
    let report = full_sync(&team, &alice);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    team.sb.git(
        &alice,
        ["config", "--remove-section", "url.file:///nowhere/"],
    );
    // The sync that could not read the config left no record: the next one makes it.
    full_sync(&team, &alice);
    fast_noop(&team, &alice);
    // In the user's global config, and an include there.
    let global = team.sb.home().join(".gitconfig");
    let original = fs::read_to_string(&global).unwrap();
    for extra in [
        "[url \"file:///nowhere/\"]\n\tpushInsteadOf = nothing-uses-this:\n",
        "[include]\n\tpath = missing.inc\n",
    ] {
        fs::write(&global, format!("{original}{extra}")).unwrap();
        let report = full_sync(&team, &alice);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
    }
    fs::write(&global, original).unwrap();
    full_sync(&team, &alice);
    fast_noop(&team, &alice);
    // A remote that is not a local path.
    team.sb.git(
        &alice,
        ["config", "remote.origin.url", "git://127.0.0.1:1/none.git"],
    );
    let report = full_sync(&team, &alice);
    assert!(!report["skipped_reason"].is_null(), "{report:#}");
}

#[test]
fn a_nameless_user_branch_setting_keeps_the_fast_no_op_and_a_named_one_does_not() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    let global = team.sb.home().join(".gitconfig");
    let original = fs::read_to_string(&global).unwrap();
    // `[branch] autoSetupRebase` changes neither the memory branch nor its remote.
    fs::write(
        &global,
        format!("{original}[branch]\n\tautoSetupRebase = always\n"),
    )
    .unwrap();
    fast_noop(&team, &alice);
    // A user-level `[branch "x"]` could name another upstream: the full sync decides.
    fs::write(
        &global,
        format!("{original}[branch \"team-memory\"]\n\trebase = true\n"),
    )
    .unwrap();
    let report = full_sync(&team, &alice);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    fs::write(&global, original).unwrap();
}

#[test]
fn a_linked_worktree_and_a_detached_head_get_the_fast_no_op_and_miss_no_push() {
    let team = BranchTeam::new();
    let alice = settled(&team, "alice");
    let linked = team.sb.path().join("alice-linked");
    team.sb.git(
        &alice,
        [
            "worktree",
            "add",
            "-q",
            "--detach",
            linked.to_str().unwrap(),
        ],
    );
    let report = team.sync(&linked);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(has_memory(&linked, "project", "seeded"));
    fast_noop(&team, &linked);
    assert!(
        team.sb
            .git(&alice, ["for-each-ref", "refs/teammem/materialised/"])
            .contains("materialised/alice-linked")
    );

    team.sb.git(&alice, ["checkout", "-q", "--detach"]);
    fast_noop(&team, &alice);

    teammate_pushes(&team.sb, &team.url, "for-both");
    // The first to sync fetches; the other finds the shared branch moved and writes its own
    // folder.
    let report = full_sync(&team, &linked);
    assert_eq!(report["pulled"], true, "{report:#}");
    full_sync(&team, &alice);
    for dir in [&linked, &alice] {
        assert!(has_memory(dir, "project", "for-both"));
        fast_noop(&team, dir);
    }
}

/// A clone of the team whose `origin` is `url`, synced once with nothing left to do.
fn settled_over(team: &BranchTeam, name: &str, url: &str) -> std::path::PathBuf {
    let dir = settled(team, name);
    team.sb.git(&dir, ["remote", "set-url", "origin", url]);
    let report = full_sync(team, &dir);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    dir
}

#[test]
fn over_git_daemon_and_smart_http_a_no_op_is_fast_and_a_teammates_push_is_received() {
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let http = HttpGit::open(&team.sb, team.sb.path());
    for (name, url) in [
        ("alice", daemon.url("remote.git")),
        ("bob", http.url("remote.git")),
    ] {
        let dir = settled_over(&team, name, &url);
        fast_noop(&team, &dir);
        teammate_pushes(&team.sb, &url, &format!("from-{name}-mate"));
        let report = full_sync(&team, &dir);
        assert_eq!(report["pulled"], true, "{url}: {report:#}");
        assert!(has_memory(&dir, "project", &format!("from-{name}-mate")));
        fast_noop(&team, &dir);
    }
}

/// How the front answers a connection.
const CARRY: u8 = 0;
const GARBAGE: u8 = 1;
const HANG: u8 = 2;
const REFUSE: u8 = 3;
/// Carries, but holds the connection open for 5 s after the server closed it (as Apache's
/// mod_cgi holds it after a complete answer, for less).
const LINGER: u8 = 4;

/// A loopback front to a git daemon that carries, answers garbage, hangs or drops each
/// connection, as the test says.
struct Front {
    port: u16,
    mode: Arc<AtomicU8>,
}

impl Front {
    fn start(backend: u16) -> Front {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(CARRY));
        let seen = mode.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { continue };
                match seen.load(Ordering::SeqCst) {
                    mode @ (CARRY | LINGER) => {
                        std::thread::spawn(move || {
                            let server = TcpStream::connect(("127.0.0.1", backend)).unwrap();
                            let (mut up_r, mut up_w) =
                                (client.try_clone().unwrap(), server.try_clone().unwrap());
                            let up = std::thread::spawn(move || {
                                let _ = std::io::copy(&mut up_r, &mut up_w);
                                let _ = up_w.shutdown(Shutdown::Write);
                            });
                            let mut server = server;
                            let _ = std::io::copy(&mut server, &mut client);
                            if mode == LINGER {
                                std::thread::sleep(Duration::from_secs(5));
                            }
                            let _ = client.shutdown(Shutdown::Write);
                            let _ = up.join();
                        });
                    }
                    GARBAGE => {
                        let _ = client.write_all(b"HTTP/1.0 200 OK\r\n\r\nzzzz not a pkt-line");
                    }
                    HANG => {
                        std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_secs(60));
                            drop(client);
                        });
                    }
                    _ => drop(client),
                }
            }
        });
        Front { port, mode }
    }

    fn url(&self) -> String {
        format!("git://127.0.0.1:{}/remote.git", self.port)
    }

    fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}/remote.git", self.port)
    }
}

#[test]
fn an_http_answer_is_read_to_its_end_while_the_server_holds_the_connection_open() {
    let team = BranchTeam::new();
    let http = HttpGit::open(&team.sb, team.sb.path());
    let front = Front::start(http.port());
    front.mode.store(LINGER, Ordering::SeqCst);
    // Waiting for the close would pass the fast no-op's two seconds: the full sync would run.
    let alice = settled_over(&team, "alice", &front.http_url());
    let started = Instant::now();
    fast_noop(&team, &alice);
    assert!(started.elapsed() < Duration::from_secs(5));
    teammate_pushes(&team.sb, &http.url("remote.git"), "while-lingering");
    let report = full_sync(&team, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    fast_noop(&team, &alice);
}

#[test]
fn a_remote_that_is_down_answers_garbage_or_hangs_gets_the_full_syncs_answer_in_the_budget() {
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let front = Front::start(daemon.port);
    let alice = settled_over(&team, "alice", &front.url());
    fast_noop(&team, &alice);
    let budget = 6;
    for mode in [REFUSE, GARBAGE, HANG] {
        front.mode.store(mode, Ordering::SeqCst);
        let started = Instant::now();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
        team.sb
            .isolate(&mut cmd)
            .current_dir(&alice)
            .args(["-v", "sync", "--json", "--timeout", &budget.to_string()])
            .stdin(std::process::Stdio::null());
        let out = cmd.output().unwrap();
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("(fast no-op;"), "mode {mode}: {stderr}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            !report["skipped_reason"].is_null(),
            "mode {mode}: the full sync reaches no remote: {report:#}"
        );
        assert!(
            took < Duration::from_secs(budget + 2),
            "mode {mode}: took {took:?}, budget {budget} s"
        );
    }
    front.mode.store(CARRY, Ordering::SeqCst);
    let report = full_sync(&team, &alice);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    fast_noop(&team, &alice);
}

#[test]
fn a_proxy_variable_leaves_a_network_remote_to_the_full_sync() {
    let team = BranchTeam::new();
    let http = HttpGit::open(&team.sb, team.sb.path());
    let alice = settled_over(&team, "alice", &http.url("remote.git"));
    fast_noop(&team, &alice);
    for var in ["NO_PROXY", "http_proxy", "ALL_PROXY"] {
        // No proxy listens there: only the full sync, through libgit2, can honour it (or not).
        let value = if var == "NO_PROXY" {
            "127.0.0.1"
        } else {
            "http://127.0.0.1:9"
        };
        let (report, fast) = sync_v(&team, &alice, &[(var, value)]);
        assert!(!fast, "{var}: {report:#}");
    }
    // A failed sync leaves no record: the next one goes the full way, then the fast one.
    full_sync(&team, &alice);
    fast_noop(&team, &alice);
}

#[test]
fn session_start_takes_the_fast_no_op_and_init_branch_and_a_fresh_clone_leave_a_record() {
    let team = BranchTeam::new();
    // `init --branch` and its first sync left a record: the next sync is the fast one.
    fast_noop(&team, &team.sb.path().join("seed"));
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let alice = settled_over(&team, "alice", &daemon.url("remote.git"));
    let record = alice.join(".git/teammem-noop");
    let before = fs::metadata(&record).unwrap();
    let out = team.sb.teammem(&alice, ["session-start", "--json"]);
    out.expect_code(0);
    let started: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(started["sync"]["skipped_reason"].is_null(), "{started:#}");
    assert_eq!(started["sync"]["pulled"], false);
    // The full sync rewrites the record; the fast no-op only reads it.
    let after = fs::metadata(&record).unwrap();
    assert_eq!(
        (before.ino(), before.mtime(), before.mtime_nsec()),
        (after.ino(), after.mtime(), after.mtime_nsec()),
        "session start ran the full sync"
    );
    teammate_pushes(&team.sb, &daemon.url("remote.git"), "from-mate");
    let out = team.sb.teammem(&alice, ["session-start", "--json"]);
    let started: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(started["sync"]["pulled"], true, "{started:#}");
    assert!(has_memory(&alice, "project", "from-mate"));
}

#[test]
fn the_fast_no_op_over_git_daemon_is_one_connection() {
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let proxy = CountProxy::start(daemon.port);
    let alice = settled_over(&team, "alice", &proxy.url("remote.git"));
    proxy.take();
    let (report, fast) = sync_v(&team, &alice, &[]);
    assert!(fast, "{report:#}");
    assert_eq!(
        proxy.take(),
        1,
        "the fast no-op reads one ref advertisement"
    );
}

#[test]
fn a_remote_named_localhost_gets_the_fast_no_op_on_whichever_of_its_addresses_listens() {
    let team = BranchTeam::new();
    let daemon = GitDaemon::start(&team.sb, team.sb.path());
    let http = HttpGit::open(&team.sb, team.sb.path());
    // Both servers listen on 127.0.0.1 only. Where `localhost` also resolves to ::1, the
    // resolver gives ::1 first: that address refuses, and the next one must be tried.
    for (name, port, url) in [
        ("alice", daemon.port, daemon.url("remote.git")),
        ("bob", http.port(), http.url("remote.git")),
    ] {
        let url = url.replace("127.0.0.1", "localhost");
        let addrs: Vec<_> = std::net::ToSocketAddrs::to_socket_addrs(&("localhost", port))
            .unwrap()
            .collect();
        assert!(
            addrs.iter().any(|a| a.ip().is_ipv4()),
            "localhost resolves to no IPv4 address here: {addrs:?}"
        );
        let dir = settled_over(&team, name, &url);
        fast_noop(&team, &dir);
        teammate_pushes(&team.sb, &url, &format!("via-localhost-{name}"));
        let report = full_sync(&team, &dir);
        assert_eq!(report["pulled"], true, "{url}: {report:#}");
        fast_noop(&team, &dir);
    }
}

/// The lines of a report naming what the folder's limits keep out.
fn kept_out_lines(report: &Value) -> Vec<String> {
    report["withheld"]
        .as_array()
        .map(|all| {
            all.iter()
                .flat_map(|w| w["reasons"].as_array().cloned().unwrap_or_default())
                .filter_map(|r| r.as_str().map(str::to_string))
                .filter(|r| r.starts_with("too-many:"))
                .collect()
        })
        .unwrap_or_default()
}

/// The memory files in a clone's team folder.
fn memories_in(dir: &Path) -> usize {
    let mut count = 0;
    for folder in fs::read_dir(dir.join(TEAM)).unwrap() {
        let folder = folder.unwrap().path();
        if folder.is_dir() {
            count += fs::read_dir(&folder).unwrap().count();
        }
    }
    count
}

#[test]
fn over_the_folders_limit_an_unchanged_branch_is_a_fast_no_op_that_still_names_what_is_kept_out() {
    let team = BranchTeam::new();
    let sb = &team.sb;
    let alice = settled(&team, "alice");
    // Alice's own limit, in the repository's config.
    sb.git(&alice, ["config", "teammem.maxMemories", "4"]);
    // A teammate pushes twelve memories at once with the git CLI.
    let mate = sb.path().join("mate-flood");
    sb.git(
        sb.path(),
        [
            "clone",
            "-q",
            "-b",
            "team-memory",
            &team.url,
            mate.to_str().unwrap(),
        ],
    );
    for i in 0..12 {
        write_memory(&mate, "project", &format!("flood-{i:02}"), "One of many.\n");
    }
    sb.git(&mate, ["add", "-A"]);
    sb.git(&mate, ["commit", "-q", "-m", "twelve memories"]);
    sb.git(&mate, ["push", "-q", "origin", "team-memory"]);

    let first = full_sync(&team, &alice);
    let lines = kept_out_lines(&first);
    assert_eq!(lines.len(), 1, "{first:#}");
    assert!(lines[0].contains("teammem.maxMemories = 4"), "{lines:?}");
    let written = memories_in(&alice);
    assert!(written <= 4, "{written} memories written");
    // Nothing changed since: the no-op is decided from the files, and says the same line.
    let again = fast_noop(&team, &alice);
    assert_eq!(kept_out_lines(&again), lines, "{again:#}");
    assert_eq!(memories_in(&alice), written);

    // A teammate's push is still received, and the line counts it.
    teammate_pushes(sb, &team.url, "one-more");
    let pulled = full_sync(&team, &alice);
    assert_eq!(pulled["pulled"], true, "{pulled:#}");
    let more = kept_out_lines(&pulled);
    assert_eq!(more.len(), 1, "{pulled:#}");
    assert_ne!(more, lines);
    assert_eq!(kept_out_lines(&fast_noop(&team, &alice)), more);

    // A raised limit is no no-op: the rest is written, and nothing is kept out any more.
    sb.git(&alice, ["config", "teammem.maxMemories", "100"]);
    let raised = full_sync(&team, &alice);
    assert!(kept_out_lines(&raised).is_empty(), "{raised:#}");
    assert!(has_memory(&alice, "project", "flood-11"));
    assert!(has_memory(&alice, "project", "one-more"));
    assert!(kept_out_lines(&fast_noop(&team, &alice)).is_empty());
}

#[test]
fn a_lock_left_by_a_killed_sync_is_taken_over_by_the_full_sync_not_kept_by_the_fast_no_op() {
    let team = BranchTeam::new();
    let me = settled(&team, "me");
    fast_noop(&team, &me);
    // What a sync killed after its last write and before letting go of the lock leaves: its
    // lock, naming a process that is gone.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let lock = me.join(".git/teammem-sync.lock");
    std::fs::write(&lock, format!("{pid} 1\n")).unwrap();
    let report = full_sync(&team, &me);
    assert!(report["skipped_reason"].is_null(), "{report:#}");
    assert!(!lock.exists(), "the dead sync's lock is still there");
    fast_noop(&team, &me);
}
