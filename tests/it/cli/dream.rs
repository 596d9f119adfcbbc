//! `teammem dream`: merging within and across files, the gate and the lock.

use crate::common;
use crate::common::lifecycle;

use std::fs;

use common::{Sandbox, write};
use lifecycle::{private_dir, private_state, put};

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap()
}

#[test]
fn merges_within_and_across_files_keeping_every_line() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    write(
        &dir.join("feedback/testing.md"),
        "---\nname: Testing\ndescription: Testing feedback\ntype: feedback\n---\n- Use the real database\n  - Why: mocks lied\n- Keep tests fast\n- use the REAL database\n  - Why: mocks lied\n  - How to apply: start postgres first\n",
    );
    put(
        &dir,
        "feedback/use-the-real-database.md",
        "Use the real database",
        "Never mock SQL",
        "Why: a migration broke in prod.\n",
    );
    put(
        &dir,
        "project/use-the-real-database.md",
        "Use the real database",
        "Same summary, other type",
        "Stays.\n",
    );

    let run = sb.teammem(&repo, ["dream", "--force", "--scope", "private", "--json"]);
    run.expect_code(0);
    let report = &json(&run.stdout)[0];
    assert_eq!(report["status"], "done");
    assert_eq!(report["deduped_entries"], 2);
    assert_eq!(
        report["touched_topics"],
        serde_json::json!(["feedback/testing.md", "feedback/use-the-real-database.md"])
    );
    assert_eq!(
        fs::read_to_string(dir.join("feedback/testing.md")).unwrap(),
        "---\nname: Testing\ndescription: Testing feedback\ntype: feedback\n---\n- Use the real database\n  - Why: mocks lied\n  - How to apply: start postgres first\n  Also: Never mock SQL\n  Why: a migration broke in prod.\n- Keep tests fast\n"
    );
    assert!(!dir.join("feedback/use-the-real-database.md").exists());
    assert!(dir.join("project/use-the-real-database.md").exists());
    let index = fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(
        !index.contains("feedback/use-the-real-database.md"),
        "{index}"
    );
    assert!(index.contains("feedback/testing.md"), "{index}");

    // A second run finds nothing left to merge.
    let again = sb.teammem(&repo, ["dream", "--force", "--scope", "private", "--json"]);
    assert_eq!(json(&again.stdout)[0]["deduped_entries"], 0);
}

#[test]
fn gate_needs_a_day_and_five_sessions() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &private_dir(&sb, &repo),
        "project/a.md",
        "Alpha memory",
        "a",
        "x\n",
    );
    let status = |sb: &Sandbox| {
        let run = sb.teammem(&repo, ["dream", "--scope", "private", "--json"]);
        run.expect_code(0);
        json(&run.stdout)[0].clone()
    };
    let first = status(&sb);
    assert_eq!(first["status"], "gated");
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .contains("0 sessions since (needs 5)"),
        "{first}"
    );
    for _ in 0..4 {
        sb.teammem(&repo, ["context"]).expect_code(0);
    }
    assert_eq!(status(&sb)["status"], "gated");
    sb.teammem(&repo, ["context"]).expect_code(0);
    assert_eq!(status(&sb)["status"], "done");

    // Just ran: five more sessions are not enough until 24 hours have passed.
    for _ in 0..5 {
        sb.teammem(&repo, ["context"]).expect_code(0);
    }
    let gated = status(&sb);
    assert_eq!(gated["status"], "gated");
    assert!(
        gated["reason"]
            .as_str()
            .unwrap()
            .contains("last run 0 h ago (needs 24 h)"),
        "{gated}"
    );
    let meta_path = private_state(&sb, &repo).join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&meta_path).unwrap()).unwrap();
    assert_eq!(meta["sessions_since_dream"], 5);
    meta["last_dream"] = (lifecycle::now() - 23 * 3600 - 3500).into();
    meta["qwen_key"] = "kept".into();
    fs::write(&meta_path, meta.to_string()).unwrap();
    assert_eq!(status(&sb)["status"], "gated");
    meta["last_dream"] = (lifecycle::now() - 24 * 3600).into();
    fs::write(&meta_path, meta.to_string()).unwrap();
    assert_eq!(status(&sb)["status"], "done");
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&meta_path).unwrap()).unwrap();
    assert_eq!(meta["sessions_since_dream"], 0);
    assert_eq!(meta["qwen_key"], "kept");
}

#[test]
fn one_dream_at_a_time_and_stale_locks_are_taken_over() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &private_dir(&sb, &repo),
        "project/a.md",
        "Alpha memory",
        "a",
        "x\n",
    );
    let lock = private_state(&sb, &repo).join("consolidation.lock");
    let run = |sb: &Sandbox| {
        let run = sb.teammem(&repo, ["dream", "--force", "--scope", "private", "--json"]);
        run.expect_code(0);
        json(&run.stdout)[0].clone()
    };
    // This test process is alive: its lock holds.
    let me = std::process::id();
    write(
        &lock,
        &format!("{{\"pid\": {me}, \"started\": {}}}", lifecycle::now()),
    );
    let held = run(&sb);
    assert_eq!(held["status"], "locked");
    assert!(
        held["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {me}")),
        "{held}"
    );
    assert!(lock.exists());

    // Over an hour old: stale even though the process lives.
    write(
        &lock,
        &format!(
            "{{\"pid\": {me}, \"started\": {}}}",
            lifecycle::now() - 3601
        ),
    );
    assert_eq!(run(&sb)["status"], "done");
    assert!(!lock.exists(), "the lock is released after a run");

    // A process that has exited: stale at once.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    write(
        &lock,
        &format!("{{\"pid\": {dead}, \"started\": {}}}", lifecycle::now()),
    );
    assert_eq!(run(&sb)["status"], "done");
}
