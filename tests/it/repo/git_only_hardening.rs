//! The git-CLI sync path (reftable refs, SHA-256 objects) doing what the libgit2 path does
//! (issue 41): the first sync to a remote without the branch creates it, an unreachable remote
//! leaves the offline note session starts read, `commit.gpgSign` signs with the user's own
//! key, and a sync killed at a git step leaves nothing the next sync does not clear.

use crate::common::syncrun::{files_at, leftovers, reason, sync_json, write_memory};
use crate::common::{Sandbox, write};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEAM: &str = ".qwen/team-memory";

/// A bare remote, a teammate's clone with code and a seeded memory pushed, and my clone made
/// with `my_args` (`None` when this git cannot make it; the reason printed).
struct World {
    sb: Sandbox,
    remote: PathBuf,
    mate: PathBuf,
    me: PathBuf,
}

impl World {
    fn new(remote_args: &[&str], my_args: &[&str]) -> Option<World> {
        let sb = Sandbox::new();
        let mut init = vec!["init", "-q", "--bare", "-b", "main"];
        init.extend_from_slice(remote_args);
        init.push("remote.git");
        let made = sb.git_output(sb.path(), &init);
        if !made.status.success() {
            println!(
                "skipped: this git cannot make {remote_args:?}: {}",
                String::from_utf8_lossy(&made.stderr)
            );
            return None;
        }
        let remote = sb.path().join("remote.git");
        sb.git(sb.path(), ["clone", "-q", "remote.git", "mate"]);
        let mate = sb.path().join("mate");
        write(&mate.join("README.md"), "# project\n");
        write(&mate.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
        write_memory(&mate, "project", "seeded", "The first memory.\n");
        sb.git(&mate, ["add", "-A"]);
        sb.git(&mate, ["commit", "-q", "-m", "initial"]);
        sb.git(&mate, ["push", "-q", "origin", "main"]);
        let me = clone(&sb, my_args, "me")?;
        Some(World {
            sb,
            remote,
            mate,
            me,
        })
    }

    /// The teammate commits a memory (and a code file) with the git CLI alone and pushes it.
    fn mate_pushes(&self, slug: &str) {
        write_memory(&self.mate, "project", slug, "From the teammate.\n");
        write(
            &self.mate.join(format!("src/{slug}.rs")),
            "// the teammate's code\n",
        );
        self.sb.git(&self.mate, ["add", "-A"]);
        self.sb
            .git(&self.mate, ["commit", "-q", "-m", &format!("mate: {slug}")]);
        self.sb.git(&self.mate, ["push", "-q", "origin", "main"]);
    }

    fn fsck_clean(&self, dir: &Path) {
        let fsck = self.sb.git_output(dir, ["fsck", "--no-progress"]);
        assert!(
            fsck.status.success(),
            "git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
    }
}

/// `git clone -q ARGS remote.git NAME` in the sandbox; `None` when this git cannot.
fn clone(sb: &Sandbox, args: &[&str], name: &str) -> Option<PathBuf> {
    let mut clone = vec!["clone", "-q"];
    clone.extend_from_slice(args);
    clone.extend(["remote.git", name]);
    let cloned = sb.git_output(sb.path(), &clone);
    if !cloned.status.success() {
        println!(
            "skipped: this git cannot clone with {args:?}: {}",
            String::from_utf8_lossy(&cloned.stderr)
        );
        return None;
    }
    Some(sb.path().join(name))
}

/// A new, empty remote: the first sync creates its branch, as the libgit2 path does — and
/// with a commit of my own on the branch, it is `local-ahead` (sync never publishes it).
#[test]
fn the_first_sync_to_an_empty_remote_creates_the_branch() {
    let sb = Sandbox::new();
    sb.git(
        sb.path(),
        ["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    let remote = sb.path().join("remote.git");
    let Some(me) = clone(&sb, &["--ref-format=reftable"], "me") else {
        return;
    };
    sb.teammem(&me, ["init", "--current-branch"]).expect_code(0);
    write_memory(&me, "project", "first", "The first memory.\n");
    let report = sync_json(&sb, &me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(
        sb.git(&remote, ["log", "--format=%s", "main"]),
        "chore(memory): sync team memory\n"
    );
    assert!(files_at(&sb, &remote, "main").contains("project/first.md"));
    assert_eq!(
        sb.git(&me, ["rev-parse", "HEAD"]),
        sb.git(&remote, ["rev-parse", "main"])
    );

    // The branch removed on the remote and a commit of mine on top: never published.
    sb.git(&remote, ["update-ref", "-d", "refs/heads/main"]);
    write(&me.join("src/mine.rs"), "// mine\n");
    sb.git(&me, ["add", "src/mine.rs"]);
    sb.git(&me, ["commit", "-q", "-m", "my own work"]);
    let mine = sb.git(&me, ["rev-parse", "--short=7", "HEAD"]);
    write_memory(&me, "project", "second", "The second memory.\n");
    let report = sync_json(&sb, &me, &[], &[]);
    assert_eq!(reason(&report), "local-ahead", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    let said = report["warnings"].to_string();
    assert!(
        said.contains(&format!(
            "your own commit ({}) on main is not pushed",
            mine.trim()
        )),
        "{said}"
    );
    let listed = sb.git_output(&remote, ["rev-parse", "--verify", "-q", "main"]);
    assert!(!listed.status.success(), "the remote branch came back");
}

/// An unreachable remote leaves the offline note: the next session start skips the network
/// and says so; once a sync reaches the remote, the note is gone.
#[test]
fn an_unreachable_remote_is_remembered_for_session_starts() {
    let Some(world) = World::new(&["--object-format=sha256"], &[]) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let away = sb.path().join("remote-away.git");
    std::fs::rename(&world.remote, &away).unwrap();
    write_memory(me, "project", "offline", "Written offline.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert!(me.join(".git/teammem-offline").is_file());

    let start = ["session-start", "--hook", "plain", "--timeout", "5"];
    let run = sb.teammem(me, start);
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("Network skipped: the remote could not be reached 0 min ago"),
        "{}",
        run.stdout
    );

    std::fs::rename(&away, &world.remote).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(!me.join(".git/teammem-offline").exists());
    let run = sb.teammem(me, start);
    assert!(!run.stdout.contains("Network skipped"), "{}", run.stdout);
}

/// `commit.gpgSign` with an SSH key: the sync commit is signed with the user's key (git
/// verifies it against an allowed-signers file), the repository's own signing program is not
/// run, and a key that cannot sign commits nothing, as on the libgit2 path.
fn signs_with_the_users_key(remote_args: &[&str], my_args: &[&str]) {
    let Some(world) = World::new(remote_args, my_args) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    if sb.ssh_signing_key().is_none() {
        return;
    }
    let global = |k: &str, v: &str| sb.git(sb.path(), ["config", "--global", k, v]);
    sb.git(me, ["config", "commit.gpgSign", "true"]);
    // A signing program the repository names: never run.
    let marker = sb.path().join("planted-ran");
    let planted = sb.path().join("planted-keygen");
    write(
        &planted,
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.git(me, ["config", "gpg.ssh.program", planted.to_str().unwrap()]);

    write_memory(me, "feedback", "signed", "Signed.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        report["warnings"].to_string().contains("planted-keygen"),
        "{report:#}"
    );
    assert!(!marker.exists(), "the repository's signing program ran");
    let verified = sb.git_output(&world.remote, ["verify-commit", "main"]);
    let said = String::from_utf8_lossy(&verified.stderr);
    assert!(
        verified.status.success() && said.contains("Good \"git\" signature for test@example.com"),
        "{said}"
    );
    // `G`: a good signature by a key the allowed-signers file trusts (read on the remote:
    // git in my clone would run the planted program to check it).
    assert_eq!(
        sb.git(&world.remote, ["log", "-1", "--format=%G?", "main"]),
        "G\n"
    );
    world.fsck_clean(me);

    // A key that cannot sign: nothing committed, the reason and the fix said.
    global("user.signingkey", "/nowhere/key");
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    write_memory(me, "feedback", "unsigned", "Not signed.\n");
    let run = sb.teammem(me, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(run.code, 1, "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    let said = report["warnings"].to_string();
    assert!(
        said.contains("could not be signed") && said.contains("git config commit.gpgsign false"),
        "{said}"
    );
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert!(!files_at(sb, &world.remote, "main").contains("unsigned.md"));
}

#[test]
fn a_reftable_clone_signs_with_the_users_key() {
    signs_with_the_users_key(&[], &["--ref-format=reftable"]);
}

#[test]
fn a_sha256_clone_signs_with_the_users_key() {
    signs_with_the_users_key(&["--object-format=sha256"], &[]);
}

/// Where the slow git wrapper stops the sync: each a real git holding its real lock.
#[derive(Debug, Clone, Copy)]
enum Stall {
    /// Committing: `update-ref` of the branch, its lock taken (`update-ref --stdin`,
    /// `prepare`).
    CommitRef,
    /// Committed: the branch moved, `update-index --index-info` of the index's team entries
    /// holding `index.lock`.
    CommitIndex,
    /// Pulling: `read-tree -m -u` has written the new tip's files, the index not yet
    /// (`index.lock` held).
    CheckoutFiles,
    /// Pulled: files and index as in the new tip, the branch's `update-ref` holding its lock.
    CheckoutRef,
}

/// A `git` for PATH that runs the real one, except at the step `STALL` names: there it runs
/// the real git so far as that step gets before its lock is let go, writes its process group
/// to `$STALL_SIGNAL` and waits (the test kills the sync and that group).
fn slow_git(sb: &Sandbox) -> PathBuf {
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8_lossy(&real.stdout).trim().to_string();
    let dir = sb.path().join("slow-git");
    let script = r#"#!/bin/bash
REAL='@REAL@'
sub=""; opts=(); rest=(); i=0
args=("$@")
while [ $i -lt ${#args[@]} ]; do
  if [ "${args[$i]}" = "-c" ]; then opts+=("-c" "${args[$((i+1))]}"); i=$((i+2)); continue; fi
  sub="${args[$i]}"; rest=("${args[@]:$((i+1))}"); break
done
hold() { echo $$ > "$STALL_SIGNAL.tmp"; mv "$STALL_SIGNAL.tmp" "$STALL_SIGNAL"; sleep 600; }
case "$STALL:$sub:${rest[*]}" in
  "CommitRef:update-ref:-m teammem: sync team memory "*|"CheckoutRef:update-ref:-m teammem: sync to "*)
    { printf 'start\nupdate %s %s %s\nprepare\n' "${rest[2]}" "${rest[3]}" "${rest[4]}"; hold; } \
      | "$REAL" "${opts[@]}" update-ref --stdin
    exit 1 ;;
  "CommitIndex:update-index:-z --index-info")
    if [ -z "$GIT_INDEX_FILE" ]; then
      { cat; hold; } | "$REAL" "${opts[@]}" update-index -z --index-info
      exit 1
    fi ;;
  "CheckoutFiles:read-tree:-m -u "*)
    copy="$GIT_DIR/index.stall-copy"
    cp "$GIT_DIR/index" "$copy"
    GIT_INDEX_FILE="$copy" "$REAL" "$@" || exit 1
    rm -f "$copy"
    hold | "$REAL" "${opts[@]}" update-index -z --index-info
    exit 1 ;;
esac
exec "$REAL" "$@"
"#
    .replace("@REAL@", &real);
    write(&dir.join("git"), &script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The sync, stopped at `stall` and killed with SIGKILL there — teammem and the git it ran.
fn sync_killed_at(world: &World, stall: Stall, slow: &Path) {
    let sb = &world.sb;
    let signal = sb.path().join(format!("stalled-{stall:?}"));
    let path = format!(
        "{}:{}",
        slow.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    sb.isolate(&mut cmd)
        .current_dir(&world.me)
        .env("PATH", path)
        .env("STALL", format!("{stall:?}"))
        .env("STALL_SIGNAL", &signal)
        .args(["sync", "--json", "--timeout", "600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut sync = cmd.spawn().expect("start teammem sync");
    // The bound only keeps a broken test from hanging: the kill waits for the stall itself.
    let started = Instant::now();
    while !signal.exists() && started.elapsed() < Duration::from_secs(120) {
        if sync.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let group = std::fs::read_to_string(&signal)
        .unwrap_or_else(|_| panic!("the sync never reached {stall:?}"));
    // The git holding its lock is a step behind the signal: the kill waits for its lock.
    let git_dir = world.me.join(".git");
    let locks = match stall {
        Stall::CommitRef | Stall::CheckoutRef => vec![
            git_dir.join("reftable/tables.list.lock"),
            git_dir.join("refs/heads/main.lock"),
        ],
        Stall::CommitIndex | Stall::CheckoutFiles => vec![git_dir.join("index.lock")],
    };
    let waited = Instant::now();
    while !locks.iter().any(|l| l.exists()) && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    sync.kill().expect("SIGKILL the sync");
    sync.wait().expect("reap the sync");
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", group.trim())])
        .status()
        .unwrap();
    assert!(killed.success(), "the stalled git's group was not killed");
}

/// A sync killed at `stall` in a clone made with `my_args` (remote with `remote_args`): the
/// killed git's lock is still there; the next sync, with no person's help, succeeds — my
/// memory on the remote, the teammate's here — and leaves `git fsck` clean, the status clean,
/// my work outside the folder as it was, no lock or note behind.
fn killed_at_then_synced(remote_args: &[&str], my_args: &[&str], stall: Stall) {
    let Some(world) = World::new(remote_args, my_args) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let slow = slow_git(sb);
    write(&me.join("README.md"), "# project, my unstaged edit\n");
    let before = sb.git(me, ["status", "--porcelain"]);
    world.mate_pushes("from-mate");
    write_memory(me, "feedback", "mine", "Written before the kill.\n");

    sync_killed_at(&world, stall, &slow);
    // Almost always the killed git's lock is left for the next sync to clear. Under heavy
    // load it was once gone after the kill (seen once in a full run, cause not found): the
    // recovery below is then still asserted, without a lock to clear, and the run says so.
    let left = leftovers(me);
    if !left
        .iter()
        .any(|f| f.ends_with(".lock") && f != "teammem-sync.lock")
    {
        println!("{stall:?}: no git lock left by the kill this time: {left:?}");
    }

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{stall:?}: {report:#}");
    assert_eq!(report["pushed"], true, "{stall:?}: {report:#}");
    let remote = files_at(sb, &world.remote, "main");
    assert!(remote.contains("feedback/mine.md"), "{stall:?}: {remote}");
    assert!(me.join(TEAM).join("project/from-mate.md").is_file());
    assert!(me.join("src/from-mate.rs").is_file());
    assert_eq!(
        sb.git(me, ["rev-parse", "HEAD"]),
        sb.git(&world.remote, ["rev-parse", "main"])
    );
    assert_eq!(sb.git(me, ["status", "--porcelain"]), before, "{stall:?}");
    assert_eq!(
        std::fs::read_to_string(me.join("README.md")).unwrap(),
        "# project, my unstaged edit\n"
    );
    world.fsck_clean(me);
    assert_eq!(leftovers(me), Vec::<String>::new(), "{stall:?}");
    sb.git(&world.mate, ["pull", "-q", "--ff-only"]);
    assert!(world.mate.join(TEAM).join("feedback/mine.md").is_file());
}

#[test]
fn a_reftable_sync_killed_while_moving_the_branch_is_cleared_by_the_next() {
    killed_at_then_synced(&[], &["--ref-format=reftable"], Stall::CommitRef);
}

#[test]
fn a_sha256_sync_killed_while_moving_the_branch_is_cleared_by_the_next() {
    killed_at_then_synced(&["--object-format=sha256"], &[], Stall::CommitRef);
}

#[test]
fn a_sync_killed_before_the_index_caught_up_is_cleared_by_the_next() {
    killed_at_then_synced(&[], &["--ref-format=reftable"], Stall::CommitIndex);
}

#[test]
fn a_sync_killed_half_way_through_a_pull_is_cleared_by_the_next() {
    killed_at_then_synced(&[], &["--ref-format=reftable"], Stall::CheckoutFiles);
}

#[test]
fn a_sync_killed_before_the_pulled_branch_moved_is_cleared_by_the_next() {
    killed_at_then_synced(&["--object-format=sha256"], &[], Stall::CheckoutRef);
}

/// A live git's `index.lock` (another command of the user's, still running) is never taken
/// for a killed sync's: after a sync killed while moving its branch, the user's git holds the
/// index; the next sync clears the dead git's ref lock, leaves the live one's `index.lock`
/// and says `locked`; once that git is done, the sync goes through.
#[test]
fn a_live_gits_index_lock_is_left_alone() {
    let Some(world) = World::new(&["--object-format=sha256"], &[]) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let slow = slow_git(sb);
    world.mate_pushes("from-mate");
    write_memory(me, "feedback", "mine", "Written before the kill.\n");
    sync_killed_at(&world, Stall::CommitRef, &slow);
    // Seen once under a full run's load (as in `killed_at_then_synced`): the kill left no ref
    // lock. What this test is about — the live git's index lock — stands either way.
    if !me.join(".git/refs/heads/main.lock").exists() {
        println!("no ref lock left by the kill this time");
    }

    let mut holder = Command::new("git");
    sb.isolate(&mut holder)
        .current_dir(me)
        .args(["update-index", "-z", "--index-info"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut holder = holder.spawn().unwrap();
    let lock = me.join(".git/index.lock");
    let started = Instant::now();
    while !lock.exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lock.exists(), "the user's git never took the index");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "locked", "{report:#}");
    assert!(lock.exists(), "the live git's lock was removed");
    assert!(!me.join(".git/refs/heads/main.lock").exists());
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(sb, &world.remote, "main").contains("feedback/mine.md"));
    assert_eq!(leftovers(me), Vec::<String>::new());
    world.fsck_clean(me);
}

/// The entries a pull brings that teammem leaves alone are named once, in the report of the
/// sync that brought them, with the libgit2 path's reasons: a symlink out of the folder, one
/// to nowhere. The rest syncs both ways and the entries stay on the remote as committed.
#[test]
fn entries_a_pull_brings_and_sync_leaves_alone_are_named_once() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    let folder = mate.join(TEAM).join("project");
    std::os::unix::fs::symlink("/etc/passwd", folder.join("passwd.md")).unwrap();
    std::os::unix::fs::symlink("nowhere.md", folder.join("gone.md")).unwrap();
    world.mate_pushes("mate-good");
    write_memory(me, "feedback", "mine", "Mine.\n");

    let run = sb.teammem(me, ["sync", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let withheld = |report: &serde_json::Value, rel: &str| -> Vec<String> {
        report["withheld"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|w| w["path"] == format!("{TEAM}/{rel}"))
            .map(|w| w["reasons"][0].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (rel, because) in [
        (
            "project/passwd.md",
            "a symlink that points outside the team folder",
        ),
        ("project/gone.md", "a symlink that points nowhere"),
    ] {
        let said = withheld(&report, rel);
        assert_eq!(said.len(), 1, "{rel}: {report:#}");
        assert!(
            said[0].contains(because) && said[0].contains("left as git checked it out"),
            "{said:?}"
        );
    }
    assert!(me.join(TEAM).join("project/mate-good.md").is_file());
    let remote = files_at(sb, &world.remote, "main");
    assert!(
        remote.contains("feedback/mine.md") && remote.contains("project/passwd.md"),
        "{remote}"
    );

    write_memory(me, "feedback", "again", "Again.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        withheld(&report, "project/passwd.md").is_empty(),
        "{report:#}"
    );
}

/// With signing on, a sync commit a teammate's push got ahead of is never re-created
/// unsigned: `diverged` with the libgit2 path's words, nothing moved; my commit is signed.
#[test]
fn a_signed_sync_commit_is_not_replayed_unsigned() {
    let Some(world) = World::new(&["--object-format=sha256"], &[]) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    if sb.ssh_signing_key().is_none() {
        return;
    }
    sb.git(me, ["config", "commit.gpgSign", "true"]);
    write_memory(me, "feedback", "mine", "Mine.\n");
    let report = sync_json(sb, me, &["--no-pull", "--no-push"], &[]);
    assert_eq!(report["committed"], true, "{report:#}");
    let signed = sb.git(me, ["cat-file", "commit", "HEAD"]);
    assert!(
        signed.contains("\ngpgsig-sha256 -----BEGIN SSH SIGNATURE-----"),
        "{signed}"
    );
    world.mate_pushes("from-mate");
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    let remote_tip = sb.git(&world.remote, ["rev-parse", "main"]);

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "diverged", "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("cannot sign the replayed sync commit"),
        "{report:#}"
    );
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert_eq!(sb.git(&world.remote, ["rev-parse", "main"]), remote_tip);
}

/// A pull killed half-way, then a file it wrote edited by hand before the next sync: the
/// edit is kept (never overwritten or deleted), the rest of the dead pull is rolled back, and
/// the report names the file — in the way of the pull, as `git merge --ff-only` would say.
#[test]
fn a_file_edited_after_a_killed_pull_is_kept() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let slow = slow_git(sb);
    world.mate_pushes("from-mate");
    write_memory(me, "feedback", "mine", "Written before the kill.\n");
    sync_killed_at(&world, Stall::CheckoutFiles, &slow);
    let written = me.join("src/from-mate.rs");
    assert!(written.is_file(), "the killed pull wrote nothing");
    write(&written, "// my edit, made after the kill\n");

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "pull-blocked", "{report:#}");
    let said = report["warnings"].to_string();
    assert!(
        said.contains("rolled back: src/from-mate.rs changed since it stopped"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "// my edit, made after the kill\n"
    );
    // Everything else the dead pull wrote is as before it.
    assert!(!me.join(TEAM).join("project/from-mate.md").exists());
    assert!(me.join(TEAM).join("feedback/mine.md").is_file());
    assert_eq!(leftovers(me), Vec::<String>::new());
    world.fsck_clean(me);

    std::fs::remove_file(&written).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(sb, &world.remote, "main").contains("feedback/mine.md"));
    assert!(me.join(TEAM).join("project/from-mate.md").is_file());
}
