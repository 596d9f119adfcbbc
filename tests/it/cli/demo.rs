//! `teammem demo`: the whole story runs, prints its key lines, never a full secret, and
//! cleans up after itself unless --keep.

use crate::common;

use std::fs;
use std::process::Command;

use common::{Run, Sandbox};

pub(crate) fn demo(sb: &Sandbox, args: &[&str]) -> Run {
    let tmp = sb.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    sb.isolate(&mut cmd)
        .env("TMPDIR", &tmp)
        .current_dir(sb.path())
        .arg("demo")
        .args(args);
    Run::from(cmd.output().unwrap())
}

pub(crate) fn leftovers(sb: &Sandbox) -> Vec<String> {
    fs::read_dir(sb.path().join("tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn the_demo_tells_the_whole_story_and_removes_its_folder() {
    let sb = Sandbox::new();
    let run = demo(&sb, &[]);
    run.expect_code(0);
    let out = &run.stdout;
    for line in [
        "== The setup this demo stands for",
        "  alice$ teammem init --current-branch --fix-gitignore   # commits its .gitignore lines alone\n  alice$ git push\n  alice$ teammem install-hooks\n  alice$ teammem install-agent --client claude",
        "== Alice starts the team memory and syncs",
        "== Bob clones, adds a memory and syncs",
        "== Bob tries to save a token in team memory",
        "refused: refusing to write .qwen/team-memory/reference/ci-token.md: it contains a secret",
        "== The memory file as Alice's add wrote it",
        "alice$ cat .qwen/team-memory/project/release-train.md\n---\nname: Release train\n\
         description: Releases leave every Tuesday\ntype: project\n---\nReleases go out on \
         Tuesday at 10:00 UTC.\n",
        "== Alice and Bob both edit the release train memory",
        "  project/release-train.md\n  project/release-train.md.conflict-",
        "== What Bob's agent receives at session start",
        "bob$ teammem context\n# Memory\n",
        "- [Release train](project/release-train.md) — Releases leave every Tuesday (also: \
         project/release-train.md.conflict-",
        "Team memory conflict: 1 memory is kept in two versions",
        "== Alice syncs and reviews what Bob's sync brought",
        "## Team memory review",
        "### Added `project/release-train.md.conflict-",
        "changed by `Bob`",
        "== Bob keeps Alice's version, and both agents see one memory again",
        "bob$ teammem resolve project/release-train.md --theirs\nResolved \
         team:project/release-train.md: kept the version at project/release-train.md; removed \
         project/release-train.md.conflict-",
        "alice$ teammem context\n",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    // Alice's first sync pushed; Bob's sync of the shared edit pulled and pushed.
    // MEMORY.md is not counted as a memory.
    assert!(
        out.contains("alice$ teammem sync\nCommitted 2 memories and MEMORY.md as"),
        "{out}"
    );
    // After the resolution, the context Alice's agent receives lists the memory once.
    let last = &out[out.rfind("alice$ teammem context").unwrap()..];
    assert!(!last.contains("conflict"), "{last}");
    assert!(
        last.contains(
            "- [Release train](project/release-train.md) — Releases leave every Tuesday\n"
        ),
        "{last}"
    );
    assert!(out.contains("pulled teammates' changes; pushed"), "{out}");
    // It ends pointing to the same setup in the user's own repository.
    let end = &out[out
        .rfind("== Now in your repository")
        .expect("no pointer at the end")..];
    assert!(end.contains("README.md, \"Quick start\""), "{end}");
    for command in [
        "  teammem init\n  teammem sync\n",
        "  teammem install-hooks\n",
        "  teammem install-agent --client claude\n  teammem install-agent --client qwen\n  teammem install-agent --client codex\n",
    ] {
        assert!(end.contains(command), "missing {command:?} in:\n{end}");
    }
    // The fake token is shown redacted only.
    assert!(!out.contains("ghp_x7Kq"), "{out}");
    assert!(out.contains("ghp_…"), "{out}");
    assert_eq!(leftovers(&sb), Vec::<String>::new());
}

#[test]
fn keep_leaves_the_team_to_look_at() {
    let sb = Sandbox::new();
    let run = demo(&sb, &["--keep"]);
    run.expect_code(0);
    let kept = leftovers(&sb);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let root = sb.path().join("tmp").join(&kept[0]);
    assert!(
        run.stdout.contains(&format!("Kept: {}", root.display())),
        "{}",
        run.stdout
    );
    for dir in ["alice", "bob", "team.git"] {
        assert!(root.join(dir).is_dir(), "{dir}");
    }
    // Both clones ended on the remote's tip, with clean work trees.
    let tip = sb.git(&root.join("team.git"), ["rev-parse", "main"]);
    assert_eq!(sb.git(&root.join("alice"), ["rev-parse", "HEAD"]), tip);
    assert_eq!(sb.git(&root.join("bob"), ["rev-parse", "HEAD"]), tip);
    assert_eq!(sb.git(&root.join("alice"), ["status", "--porcelain"]), "");
}
