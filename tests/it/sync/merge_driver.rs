//! `MEMORY.md` never conflicts once `teammem install-hooks` has set up its merge driver: two
//! teammates' new memories that sort next to each other — the lines git's text merge puts in
//! conflict — go through `git pull --rebase`, `git merge` and `git cherry-pick` with the git
//! CLI, and the index after each is the one `teammem index` writes (the hooks, which refuse a
//! stale index, let each commit through).

use crate::common;
use crate::common::netsync;

use std::fs;
use std::path::Path;

use common::memory_text;
use common::write;
use netsync::Team;

const INDEX: &str = ".qwen/team-memory/MEMORY.md";

/// Writes a memory that sorts right after `feedback/use-postgres.md`, reindexes and commits it.
fn commit_memory(team: &Team, dir: &Path, slug: &str, description: &str) -> String {
    write(
        &dir.join(format!(".qwen/team-memory/feedback/{slug}.md")),
        &memory_text(slug, description, "feedback", "Body.\n"),
    );
    team.sb
        .teammem(dir, ["index", "--scope", "team"])
        .expect_code(0);
    team.sb.git(dir, ["add", "-A"]);
    team.sb
        .git(dir, ["commit", "-q", "-m", &format!("memory {slug}")]);
    team.rev(dir, "HEAD")
}

/// Mine and the teammate's memory, adjacent lines of the index; the teammate's is pushed.
fn adjacent_memories(team: &Team) -> String {
    let theirs = commit_memory(team, &team.mate, "use-rust", "Write tools in Rust");
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    commit_memory(team, &team.me, "use-ruff", "Lint Python with ruff");
    team.sb.git(&team.me, ["fetch", "-q", "origin"]);
    theirs
}

/// The index is exactly what `teammem index` writes, lists both memories, and nothing is left
/// in conflict.
fn index_is_rebuilt(team: &Team) {
    let text = fs::read_to_string(team.me.join(INDEX)).unwrap();
    assert!(text.contains("(feedback/use-ruff.md)"), "{text}");
    assert!(text.contains("(feedback/use-rust.md)"), "{text}");
    assert!(!text.contains("<<<<<<<"), "{text}");
    team.sb
        .teammem(&team.me, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    assert_eq!(team.status(&team.me), "");
    let at_head = team.sb.git(&team.me, ["show", &format!("HEAD:{INDEX}")]);
    assert_eq!(at_head, text);
}

fn install_hooks(team: &Team) {
    team.sb.teammem(&team.me, ["install-hooks"]).expect_code(0);
}

#[test]
fn without_the_driver_git_conflicts_on_the_index() {
    // The scenario the driver exists for: git's own merge of the two indexes conflicts.
    let team = Team::new();
    adjacent_memories(&team);
    let out = team
        .sb
        .git_output(&team.me, ["merge", "-q", "origin/main", "-m", "merge"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("CONFLICT (content): Merge conflict in .qwen/team-memory/MEMORY.md"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn pull_rebase_does_not_conflict() {
    let team = Team::new();
    install_hooks(&team);
    adjacent_memories(&team);
    let out = team
        .sb
        .git_output(&team.me, ["pull", "-q", "--rebase", "origin", "main"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    index_is_rebuilt(&team);
    assert_eq!(
        team.rev(&team.me, "HEAD~1"),
        team.rev(&team.me, "origin/main")
    );
}

#[test]
fn merge_does_not_conflict() {
    let team = Team::new();
    install_hooks(&team);
    adjacent_memories(&team);
    let out = team
        .sb
        .git_output(&team.me, ["merge", "-q", "origin/main", "-m", "merge"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    index_is_rebuilt(&team);
    // A merge commit with both parents: pre-merge-commit's check let it through.
    let parents = team.sb.git(&team.me, ["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), 2, "{parents}");
}

#[test]
fn cherry_pick_does_not_conflict() {
    let team = Team::new();
    install_hooks(&team);
    let theirs = adjacent_memories(&team);
    let out = team.sb.git_output(&team.me, ["cherry-pick", &theirs]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    index_is_rebuilt(&team);
}

#[test]
fn install_hooks_reports_the_driver_is_idempotent_and_uninstall_removes_it() {
    let team = Team::new();
    let json = |args: &[&str]| -> serde_json::Value {
        let run = team.sb.teammem(&team.me, args);
        run.expect_code(0);
        serde_json::from_str(&run.stdout).unwrap()
    };
    let attributes = team.me.join(".git/info/attributes");
    let first = json(&["install-hooks", "--json"]);
    let driver = first
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "merge-driver")
        .cloned()
        .unwrap_or_else(|| panic!("{first:#}"));
    assert_eq!(driver["action"], "installed", "{first:#}");
    assert_eq!(
        driver["hook"].as_str().map(Path::new),
        Some(attributes.as_path())
    );
    let config = team.sb.git(
        &team.me,
        ["config", "--local", "merge.teammem-index.driver"],
    );
    assert!(config.contains("merge-index %O %A %B %P"), "{config}");
    let lines = fs::read_to_string(&attributes).unwrap();
    assert_eq!(lines.matches("merge=teammem-index").count(), 1, "{lines}");
    // git sees the attribute; the work tree and the index are untouched.
    let attr = team.sb.git(&team.me, ["check-attr", "merge", "--", INDEX]);
    assert_eq!(attr.trim(), format!("{INDEX}: merge: teammem-index"));
    assert_eq!(team.status(&team.me), "");

    let again = json(&["install-hooks", "--json"]);
    let driver = again
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "merge-driver")
        .cloned()
        .unwrap();
    assert_eq!(driver["action"], "unchanged", "{again:#}");
    assert_eq!(fs::read_to_string(&attributes).unwrap(), lines);

    let removed = json(&["uninstall-hooks", "--json"]);
    let driver = removed
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "merge-driver")
        .cloned()
        .unwrap();
    assert_eq!(driver["action"], "removed", "{removed:#}");
    assert!(!fs::read_to_string(&attributes).unwrap().contains("teammem"));
    let gone = team.sb.git_output(
        &team.me,
        ["config", "--local", "merge.teammem-index.driver"],
    );
    assert!(!gone.status.success());
}
