//! Two reftable clones syncing branch mode through git at once onto one bare remote (issue
//! 41), made deterministic: the remote's `pre-receive` hook holds the first push on a fifo
//! while the other clone's sync runs to its end, so the held push finds the memory branch
//! moved and that sync must re-create its record on the new tip. Both memories arrive, the
//! history stays linear with no merge commit and no conflict copy; when both edited the same
//! memory, exactly one conflict copy is kept, and both versions with it.

use super::git_only_branch::World;
use crate::common::syncrun::{files_at, reason, sync_json, write_memory};
use crate::common::{Run, write};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TEAM: &str = ".qwen/team-memory";

/// How long a step may take before the test gives up waiting (never reached when it works).
const PATIENCE: Duration = Duration::from_secs(120);

/// A second reftable clone beside mine, synced once.
fn second_clone(world: &World) -> PathBuf {
    let sb = &world.sb;
    sb.git(
        sb.path(),
        [
            "clone",
            "-q",
            "--ref-format=reftable",
            "remote.git",
            "other",
        ],
    );
    let other = sb.path().join("other");
    let report = sync_json(sb, &other, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    other
}

/// The remote's `pre-receive` hook: the first push to reach it announces itself in `held`
/// and waits until the fifo is opened for writing and closed; every later push goes through.
struct Gate {
    fifo: PathBuf,
    held: PathBuf,
}

impl Gate {
    fn install(world: &World) -> Gate {
        let dir = world.sb.path().join("gate");
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success(), "mkfifo failed");
        let held = dir.join("held");
        let hook = world.remote.join("hooks/pre-receive");
        write(
            &hook,
            &format!(
                "#!/bin/sh\ncat > /dev/null\nif mkdir '{first}' 2>/dev/null; then\n  touch '{held}'\n  cat '{fifo}' > /dev/null\nfi\nexit 0\n",
                first = dir.join("first").display(),
                held = held.display(),
                fifo = fifo.display()
            ),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        Gate { fifo, held }
    }

    /// Waits until the first push is held in the hook.
    fn wait_held(&self, child: &mut Child) {
        let start = Instant::now();
        while !self.held.exists() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("the first sync ended ({status}) before its push was held");
            }
            assert!(start.elapsed() < PATIENCE, "the first push never arrived");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Lets the held push go on.
    fn release(&self) {
        drop(
            std::fs::OpenOptions::new()
                .write(true)
                .open(&self.fifo)
                .unwrap(),
        );
    }
}

/// `teammem sync --json` started in `dir`, not waited for.
fn start_sync(world: &World, dir: &Path) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    world
        .sb
        .isolate(&mut cmd)
        .current_dir(dir)
        .args(["sync", "--json", "--timeout", "120"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().expect("run teammem")
}

fn finish(child: Child) -> serde_json::Value {
    let run = Run::from(child.wait_with_output().unwrap());
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// My sync's push is held; the other clone syncs meanwhile and lands first; then mine goes on.
/// Returns (my report, the other's report).
fn race(world: &World, other: &Path) -> (serde_json::Value, serde_json::Value) {
    let gate = Gate::install(world);
    let mut mine = start_sync(world, &world.me);
    gate.wait_held(&mut mine);
    let theirs = sync_json(&world.sb, other, &["--timeout", "120"], &[]);
    gate.release();
    let mine = finish(mine);
    std::fs::remove_file(world.remote.join("hooks/pre-receive")).unwrap();
    (mine, theirs)
}

fn assert_linear(world: &World) {
    let merges = world.sb.git(
        &world.remote,
        ["log", "--merges", "--format=%h", "team-memory"],
    );
    assert_eq!(merges, "", "merge commits on the memory branch");
}

#[test]
fn two_reftable_clones_racing_both_publish_on_a_linear_branch() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    let other = second_clone(&world);

    write_memory(me, "project", "from-me", "Mine.\n");
    write_memory(&other, "project", "from-other", "The other clone's.\n");
    let (mine, theirs) = race(&world, &other);
    assert_eq!(reason(&theirs), "", "{theirs:#}");
    assert_eq!(theirs["pushed"], true, "{theirs:#}");
    assert_eq!(reason(&mine), "", "{mine:#}");
    assert_eq!(mine["pushed"], true, "{mine:#}");
    assert_eq!(mine["pulled"], true, "{mine:#}");

    let on_remote = files_at(sb, &world.remote, "team-memory");
    assert!(on_remote.contains("project/from-me.md"), "{on_remote}");
    assert!(on_remote.contains("project/from-other.md"), "{on_remote}");
    assert!(!on_remote.contains(".conflict-"), "{on_remote}");
    assert_linear(&world);
    // My folder has both; the other clone gets mine at its next sync.
    assert!(me.join(TEAM).join("project/from-other.md").is_file());
    let report = sync_json(sb, &other, &[], &[]);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(other.join(TEAM).join("project/from-me.md").is_file());
    let index = std::fs::read_to_string(other.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(
        index.contains("project/from-me.md") && index.contains("project/from-other.md"),
        "{index}"
    );
    world.fsck_clean(&world.remote);
}

#[test]
fn two_reftable_clones_editing_one_memory_keep_one_conflict_copy() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    let other = second_clone(&world);

    let edit = |dir: &Path, words: &str| {
        let path = dir.join(TEAM).join("project/seeded.md");
        let text = std::fs::read_to_string(&path).unwrap();
        write(&path, &text.replace("two", words));
    };
    edit(me, "two, mine");
    edit(&other, "two, the other clone's");
    let (mine, theirs) = race(&world, &other);
    assert_eq!(theirs["pushed"], true, "{theirs:#}");
    assert_eq!(reason(&mine), "", "{mine:#}");
    assert_eq!(mine["pushed"], true, "{mine:#}");
    assert!(
        mine["warnings"].to_string().contains("beside it"),
        "{mine:#}"
    );

    let on_remote = files_at(sb, &world.remote, "team-memory");
    let copies: Vec<&str> = on_remote
        .lines()
        .filter(|l| l.contains(".conflict-"))
        .collect();
    assert_eq!(copies.len(), 1, "{on_remote}");
    let at_path = sb.git(
        &world.remote,
        ["show", &format!("team-memory:{TEAM}/project/seeded.md")],
    );
    let beside = sb.git(
        &world.remote,
        ["show", &format!("team-memory:{}", copies[0])],
    );
    let both = format!("{at_path}{beside}");
    assert!(
        both.contains("two, mine") && both.contains("two, the other clone's"),
        "{both}"
    );
    assert_linear(&world);
    // The other clone takes the copy in, and makes none of its own.
    let report = sync_json(sb, &other, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    let on_remote = files_at(sb, &world.remote, "team-memory");
    assert_eq!(
        on_remote
            .lines()
            .filter(|l| l.contains(".conflict-"))
            .count(),
        1,
        "{on_remote}"
    );
    assert!(other.join(copies[0]).is_file());
    world.fsck_clean(&world.remote);
}
