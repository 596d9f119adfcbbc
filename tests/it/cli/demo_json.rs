//! `teammem demo --json`: the same story as data — the memory as written, the secret refused
//! and never shown, the two versions, the context each agent receives, the conflict resolved.

use serde_json::Value;

use crate::cli::demo::{demo, leftovers};
use crate::common::Sandbox;

/// Every step of `kind`, in order, across the sections.
fn steps<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .flat_map(|s| s["steps"].as_array().expect("steps"))
        .filter(|step| step["step"] == kind)
        .collect()
}

#[test]
fn the_demo_as_json_holds_each_step_of_the_story() {
    let sb = Sandbox::new();
    let run = demo(&sb, &["--json"]);
    run.expect_code(0);
    // Nothing but the JSON document on stdout; no secret anywhere.
    let doc: Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON document");
    assert!(!run.stdout.contains("ghp_x7Kq"), "{}", run.stdout);
    assert!(!run.stderr.contains("ghp_x7Kq"), "{}", run.stderr);

    let titles: Vec<&str> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles[0], "The setup this demo stands for");
    assert_eq!(titles[1], "Alice starts the team memory and syncs");
    assert_eq!(titles.last(), Some(&"Now in your repository"));
    let commands = steps(&doc, "commands");
    assert_eq!(commands.len(), 2, "{doc}");
    assert_eq!(commands[1]["commands"][0], "teammem init");
    assert!(
        titles.contains(&"What Bob's agent receives at session start"),
        "{titles:?}"
    );
    assert!(doc["elapsed_ms"].is_u64(), "{doc}");
    assert!(doc["kept"].is_null(), "{doc}");

    let written = steps(&doc, "memory-written");
    assert_eq!(written.len(), 1, "{doc}");
    assert_eq!(
        written[0]["path"],
        ".qwen/team-memory/project/release-train.md"
    );
    assert_eq!(
        written[0]["text"],
        "---\nname: Release train\ndescription: Releases leave every Tuesday\ntype: project\n\
         ---\nReleases go out on Tuesday at 10:00 UTC.\n"
    );

    let refused = steps(&doc, "secret-refused");
    assert_eq!(refused.len(), 1, "{doc}");
    assert_eq!(refused[0]["refused"], true);
    let message = refused[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "refusing to write .qwen/team-memory/reference/ci-token.md: it contains a secret"
        ),
        "{message}"
    );

    let syncs = steps(&doc, "sync");
    assert!(syncs.len() >= 5, "{doc}");
    assert!(
        syncs[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("Committed 2 memories and MEMORY.md as"),
        "{}",
        syncs[0]
    );
    // Bob's sync of the memory both edited warned about the two versions.
    assert!(
        syncs
            .iter()
            .any(|s| s["who"] == "bob" && !s["warnings"].as_array().unwrap().is_empty()),
        "{doc}"
    );

    let versions = steps(&doc, "two-versions");
    let files: Vec<&str> = versions[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files[0], "project/release-train.md");
    assert!(
        files[1].starts_with("project/release-train.md.conflict-"),
        "{files:?}"
    );

    // Bob's agent is told about the two versions; after the resolution Alice's is not.
    let contexts = steps(&doc, "agent-context");
    assert_eq!(contexts.len(), 2, "{doc}");
    assert_eq!(contexts[0]["who"], "bob");
    let bobs = contexts[0]["text"].as_str().unwrap();
    assert!(bobs.starts_with("# Memory\n"), "{bobs}");
    assert!(
        bobs.contains("Team memory conflict: 1 memory is kept in two versions"),
        "{bobs}"
    );
    assert_eq!(contexts[1]["who"], "alice");
    let alices = contexts[1]["text"].as_str().unwrap();
    assert!(!alices.contains("conflict"), "{alices}");
    assert!(
        alices.contains(
            "- [Release train](project/release-train.md) — Releases leave every Tuesday\n"
        ),
        "{alices}"
    );

    let review = steps(&doc, "review");
    assert!(
        review[0]["markdown"]
            .as_str()
            .unwrap()
            .starts_with("## Team memory review"),
        "{doc}"
    );

    let resolved = steps(&doc, "conflict-resolved");
    assert_eq!(resolved.len(), 1, "{doc}");
    assert_eq!(resolved[0]["memory"], "team:project/release-train.md");
    assert_eq!(resolved[0]["kept"], "project/release-train.md");
    assert!(
        resolved[0]["removed"]
            .as_str()
            .unwrap()
            .starts_with("project/release-train.md.conflict-"),
        "{doc}"
    );
    assert_eq!(leftovers(&sb), Vec::<String>::new());
}

#[test]
fn format_json_is_the_same_as_json() {
    let sb = Sandbox::new();
    let run = demo(&sb, &["--format", "json"]);
    run.expect_code(0);
    let doc: Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON document");
    assert_eq!(steps(&doc, "conflict-resolved").len(), 1, "{doc}");
}
