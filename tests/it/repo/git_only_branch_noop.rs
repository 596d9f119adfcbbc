//! The no-op of branch mode through git (issue 41): in a reftable and a SHA-256 clone, a sync
//! with nothing to do runs git a handful of times (a `git` first in PATH counts them), not the
//! thirty-odd of a full sync, and says nothing happened; and it stays sound — a teammate's
//! push, my edit (even one that keeps the file's size and modification time), my new memory,
//! my deletion and the teammate's deletion each still sync, both ways.

use super::git_only_branch::World;
use crate::common::syncrun::{reason, sync_json, write_memory};
use crate::common::write;

use std::path::{Path, PathBuf};

const TEAM: &str = ".qwen/team-memory";

/// A `git` that logs each run to a file, then runs the real one.
struct CountingGit {
    dir: PathBuf,
    log: PathBuf,
}

impl CountingGit {
    fn new(world: &World) -> CountingGit {
        let dir = world.sb.path().join("counting-git");
        let log = world.sb.path().join("git-runs.log");
        let real = std::env::var_os("PATH")
            .and_then(|path| {
                std::env::split_paths(&path)
                    .map(|p| p.join("git"))
                    .find(|p| p.is_file())
            })
            .expect("git on PATH");
        write(
            &dir.join("git"),
            &format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
        CountingGit { dir, log }
    }

    /// A sync's report and the git runs it made.
    fn sync(&self, world: &World) -> (serde_json::Value, Vec<String>) {
        let _ = std::fs::remove_file(&self.log);
        let path = format!(
            "{}:{}",
            self.dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let report = sync_json(&world.sb, &world.me, &[], &[("PATH", &path)]);
        let runs = std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        (report, runs)
    }
}

/// A sync that finds nothing to do: nothing committed, pulled or pushed, no warning, and
/// (when `fast`) at most `fast_runs` git runs.
fn assert_noop(world: &World, git: &CountingGit, fast_runs: usize) {
    let (report, runs) = git.sync(world);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["mode"], "branch", "{report:#}");
    for key in ["committed", "pulled", "pushed"] {
        assert_eq!(report[key], false, "{key}: {report:#}");
    }
    assert_eq!(report["warnings"], serde_json::json!([]), "{report:#}");
    assert!(
        runs.len() <= fast_runs,
        "a no-op ran git {} times:\n{}",
        runs.len(),
        runs.join("\n")
    );
}

fn file_text(me: &Path, rel: &str) -> String {
    std::fs::read_to_string(me.join(TEAM).join(rel)).unwrap()
}

/// `fast_runs`: finding the repository, `git config --list`, `git for-each-ref`, and a `git
/// ls-remote` where the remote's refs are not read from its files (a SHA-256 remote).
fn noop_through_git(remote_args: &[&str], my_args: &[&str], fast_runs: usize) {
    let Some(world) = World::new(remote_args, my_args, true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let git = CountingGit::new(&world);

    // Published once (the branch gets teammem's MEMORY.md), then found unchanged.
    write_memory(me, "feedback", "mine", "Mine, first version.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    let (report, _) = git.sync(&world);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_noop(&world, &git, fast_runs);
    assert_noop(&world, &git, fast_runs);

    // A teammate's push arrives.
    world.mate_pushes("mate: new", |mate| {
        write_memory(mate, "project", "from-mate", "From the teammate.\n");
    });
    let (report, _) = git.sync(&world);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(file_text(me, "project/from-mate.md").contains("From the teammate."));
    assert_noop(&world, &git, fast_runs);

    // My edit that keeps the size and the modification time is still recorded and pushed.
    let mine = me.join(TEAM).join("feedback/mine.md");
    let modified = std::fs::metadata(&mine).unwrap().modified().unwrap();
    let text = file_text(me, "feedback/mine.md");
    write(&mine, &text.replace("first", "FIRST"));
    std::fs::File::options()
        .write(true)
        .open(&mine)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let (report, _) = git.sync(&world);
    assert_eq!(report["pushed"], true, "{report:#}");
    let seen = world.mate_sees("feedback/mine.md").unwrap();
    assert!(seen.contains("Mine, FIRST version."), "{seen}");
    assert_noop(&world, &git, fast_runs);

    // A new memory of mine, then my deletion of it, each published.
    write_memory(me, "feedback", "second", "Second.\n");
    let (report, _) = git.sync(&world);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("feedback/second.md").is_some());
    std::fs::remove_file(me.join(TEAM).join("feedback/second.md")).unwrap();
    let (report, _) = git.sync(&world);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("feedback/second.md").is_none());
    assert_noop(&world, &git, fast_runs);

    // The teammate's deletion leaves my folder.
    world.mate_pushes("mate: delete", |mate| {
        std::fs::remove_file(mate.join(TEAM).join("project/from-mate.md")).unwrap();
    });
    let (report, _) = git.sync(&world);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert!(!me.join(TEAM).join("project/from-mate.md").exists());
    assert_noop(&world, &git, fast_runs);

    // Switched off, the full sync runs and says the same.
    let path = format!(
        "{}:{}",
        git.dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let _ = std::fs::remove_file(&git.log);
    let report = sync_json(sb, me, &[], &[("PATH", &path), ("TEAMMEM_SYNC_FAST", "0")]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    let full = std::fs::read_to_string(&git.log).unwrap().lines().count();
    assert!(full > fast_runs, "the full sync ran git {full} times");
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
    world.fsck_clean(me);
}

#[test]
fn a_reftable_clone_finds_nothing_to_do_with_three_git_runs() {
    noop_through_git(&[], &["--ref-format=reftable"], 3);
}

#[test]
fn a_sha256_clone_finds_nothing_to_do_with_four_git_runs() {
    noop_through_git(&["--object-format=sha256"], &[], 4);
}
