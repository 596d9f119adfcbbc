//! A `teammem mcp` server keeps the ages its history walk found in the git folder for the
//! `HEAD` commit they were found at, and the next server at that commit reads them: each
//! memory's age and author are what `git log` says, whatever `HEAD` did in between — a
//! teammate's commit pulled, a checkout of an older commit, an edit git does not know.

use std::path::Path;

use serde_json::json;

use crate::common::mcp_sdk::{self, call, ok_text};
use crate::common::netsync::Team;
use crate::common::{memory_text, write};

const MEMORY: &str = ".qwen/team-memory/project/release-train.md";

/// The `changed_by` a fresh server's `memory_read` shows for the release-train memory.
fn changed_by(team: &Team, dir: &Path) -> String {
    let out = mcp_sdk::drive(
        &team.sb,
        dir,
        json!([call(
            "memory_read",
            json!({"id": "team:project/release-train.md"})
        )]),
    );
    let text = ok_text(&out["steps"][0]);
    let tag = text
        .lines()
        .find(|l| l.starts_with("<memory id="))
        .unwrap_or_else(|| panic!("no memory block in {text}"));
    match tag.split(" changed_by=\"").nth(1) {
        Some(rest) => rest.split('"').next().unwrap().to_string(),
        None => format!("no author: {tag}"),
    }
}

/// `git log`'s author of the memory's last change in `dir`.
fn git_log_author(team: &Team, dir: &Path) -> String {
    team.sb
        .git(dir, ["log", "-1", "--format=%an", "--", MEMORY])
        .trim()
        .to_string()
}

#[test]
fn each_fresh_server_tells_the_author_git_log_tells_through_pulls_and_checkouts() {
    let team = Team::new();
    let sb = &team.sb;
    let me = &team.me;
    let ages = me.join(".git/teammem-mcp-ages");
    assert!(!ages.exists());
    let seeded = changed_by(&team, me);
    assert_eq!(seeded, git_log_author(&team, me));
    assert!(ages.exists(), "the first server keeps what it walked");
    let first = team.rev(me, "HEAD");
    let kept = std::fs::read(&ages).unwrap();
    // A second server at the same commit: the same answer, and the file is left as it is.
    assert_eq!(changed_by(&team, me), seeded);
    assert_eq!(std::fs::read(&ages).unwrap(), kept);

    // A teammate changes the memory; my clone pulls it with the git CLI.
    sb.git(&team.mate, ["config", "user.name", "Mate Person"]);
    team.mate_pushes(
        MEMORY,
        &memory_text(
            "Release train",
            "Releases leave every Wednesday now",
            "project",
            "Wednesday.\n",
        ),
    );
    sb.git(me, ["pull", "-q", "--ff-only"]);
    assert_eq!(git_log_author(&team, me), "Mate Person");
    assert_eq!(changed_by(&team, me), "Mate Person");

    // Back to the older commit: the author of that commit again.
    sb.git(me, ["checkout", "-q", "--detach", &first]);
    assert_eq!(changed_by(&team, me), seeded);
    sb.git(me, ["checkout", "-q", "main"]);
    assert_eq!(changed_by(&team, me), "Mate Person");

    // An edit of my own that git does not know yet: the file's time, no author.
    write(
        &me.join(MEMORY),
        &memory_text(
            "Release train",
            "Releases leave on Thursdays",
            "project",
            "Thursday.\n",
        ),
    );
    let out = mcp_sdk::drive(
        sb,
        me,
        json!([call(
            "memory_read",
            json!({"id": "team:project/release-train.md"})
        )]),
    );
    let text = ok_text(&out["steps"][0]);
    assert!(
        text.contains("from=\"file-time\"") && !text.contains("changed_by="),
        "{text}"
    );
}
