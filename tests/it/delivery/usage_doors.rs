//! Usage counted at every door, on this machine only: a memory found by MCP `memory_search`
//! or opened by `memory_read` counts as read, and `teammem stale` takes that as a use.

use serde_json::{Value, json};

use crate::common::mcp_sdk::{call, drive, ok_text};
use crate::common::{Sandbox, memory_text, write};

#[test]
fn mcp_search_and_read_count_as_reads_for_stale() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    for (slug, name) in [
        ("rollback", "How to roll back a release"),
        ("unused", "Coffee machine"),
    ] {
        write(
            &repo.join(format!(".qwen/team-memory/project/{slug}.md")),
            &memory_text(name, "A note", "project", "Noted.\n"),
        );
    }
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-qm", "memories"]);
    let out = drive(
        &sb,
        &repo,
        json!([
            call("memory_search", json!({"query": "roll back a release"})),
            call("memory_read", json!({"id": "team:project/rollback.md"})),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert!(
        ok_text(&steps[0]).contains("team:project/rollback.md"),
        "{out}"
    );
    assert!(ok_text(&steps[1]).contains("Noted."), "{out}");

    let run = sb.teammem(&repo, ["stale", "--days", "0", "--scope", "team", "--json"]);
    run.expect_code(0);
    let stale: Value = serde_json::from_str(&run.stdout).unwrap();
    let find = |id: &str| {
        stale
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in {stale}"))
    };
    let read = find("project/rollback.md");
    assert_eq!(read["read_count"], 2, "{read}");
    assert_eq!(read["since_what"], "last-usage", "{read}");
    let unused = find("project/unused.md");
    assert_eq!(unused["read_count"], 0, "{unused}");
    assert_eq!(unused["since_what"], "first-commit", "{unused}");
    // Counted beside the memory folder's state, never in the repository.
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
}
