//! The ignored-folder trap, on the README's path: Alice's `.gitignore` hides `.qwen/`, she runs
//! `teammem init --fix-gitignore`, pushes as it says and syncs; Bob clones, adds a memory and
//! syncs; Alice's next sync brings her Bob's memory file, not just its index line. init commits
//! its `.gitignore` lines alone, and says how to commit them when `.gitignore` has changes of
//! the user's.

use std::fs;
use std::path::Path;

use crate::common::{Sandbox, write};

const FIX_LINES: &str = "# teammem: share team memory through git\n!/.qwen/\n/.qwen/*\n!/.qwen/team-memory/\n!/.qwen/team-memory/**\n";

/// Alice's clone of a new shared remote: a README, a `.gitignore` hiding `.qwen/` (and her
/// settings there), pushed; then work of hers staged and not committed.
fn alice_with_qwen_ignored(sb: &Sandbox) -> std::path::PathBuf {
    let remote = sb.bare("team.git");
    let alice = sb.repo("alice");
    write(&alice.join(".gitignore"), "target/\n.qwen/\n");
    write(&alice.join(".qwen/settings.json"), "{}\n");
    sb.git(&alice, ["add", ".gitignore"]);
    sb.git(&alice, ["commit", "-q", "-m", "ignore build output"]);
    let url = format!("file://{}", remote.display());
    sb.git(&alice, ["remote", "add", "origin", &url]);
    sb.git(&alice, ["push", "-q", "-u", "origin", "main"]);
    write(&alice.join("src/lib.rs"), "// staged, not committed\n");
    sb.git(&alice, ["add", "src/lib.rs"]);
    alice
}

fn add_team_memory(sb: &Sandbox, repo: &Path, name: &str, body: &str) {
    sb.teammem(
        repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "reference",
            "--name",
            name,
            "--description",
            "Where the team keeps it",
            "--body",
            body,
        ],
    )
    .expect_code(0);
}

fn sync(sb: &Sandbox, repo: &Path) -> serde_json::Value {
    let run = sb.teammem(repo, ["sync", "--json"]);
    run.expect_code(0);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn fix_gitignore_commits_its_lines_and_the_memory_file_reaches_a_teammate_and_back() {
    let sb = Sandbox::new();
    let alice = alice_with_qwen_ignored(&sb);

    let run = sb.teammem(&alice, ["init", "--current-branch", "--fix-gitignore"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("Committed .gitignore alone as")
            && run.stdout.contains("push it (`git push`)"),
        "{}",
        run.stdout
    );
    // One commit, holding only the lines init added; Alice's staged work is still staged, and
    // nothing else shows in `git status`.
    assert_eq!(
        sb.git(&alice, ["log", "-1", "--format=%s"]),
        "chore(memory): let git see the team memory folder\n"
    );
    assert_eq!(
        sb.git(&alice, ["diff", "--name-only", "HEAD~1", "HEAD"]),
        ".gitignore\n"
    );
    assert_eq!(
        sb.git(&alice, ["show", "HEAD:.gitignore"]),
        format!("target/\n.qwen/\n{FIX_LINES}")
    );
    assert_eq!(
        sb.git(&alice, ["diff", "--cached", "--name-status"]),
        "A\tsrc/lib.rs\n"
    );
    assert_eq!(
        sb.git(&alice, ["status", "--porcelain", "-uall"]),
        "A  src/lib.rs\n?? .qwen/team-memory/MEMORY.md\n"
    );

    // As init says: push it. Then Alice's sync publishes her memory.
    sb.git(&alice, ["push", "-q"]);
    add_team_memory(&sb, &alice, "Release train", "Releases leave on Tuesday.\n");
    let report = sync(&sb, &alice);
    assert_eq!(report["pushed"], true, "{report:#}");

    // Bob clones: git sees the team folder in his clone too. He adds a memory and syncs.
    sb.git(
        sb.path(),
        [
            "clone",
            "-q",
            sb.path().join("team.git").to_str().unwrap(),
            "bob",
        ],
    );
    let bob = sb.path().join("bob");
    assert!(
        bob.join(".qwen/team-memory/reference/release-train.md")
            .is_file()
    );
    add_team_memory(
        &sb,
        &bob,
        "On-call runbooks",
        "See the ops wiki, On-call.\n",
    );
    let bobs_file = ".qwen/team-memory/reference/on-call-runbooks.md";
    let report = sync(&sb, &bob);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report:#}");
    assert_eq!(
        sb.git(&bob, ["ls-tree", "--name-only", "-r", "origin/main"])
            .lines()
            .filter(|l| l.starts_with(".qwen/"))
            .collect::<Vec<_>>(),
        [
            ".qwen/team-memory/MEMORY.md",
            bobs_file,
            ".qwen/team-memory/reference/release-train.md",
        ]
    );

    // Alice receives the file itself, byte for byte, with its index line.
    let report = sync(&sb, &alice);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(
        fs::read(alice.join(bobs_file)).unwrap(),
        fs::read(bob.join(bobs_file)).unwrap()
    );
    let index = fs::read_to_string(alice.join(".qwen/team-memory/MEMORY.md")).unwrap();
    assert!(index.contains("on-call-runbooks.md"), "{index}");
    sb.teammem(&alice, ["check", "--all"]).expect_code(0);
    assert_eq!(
        sb.git(&alice, ["status", "--porcelain", "-uall"]),
        "A  src/lib.rs\n"
    );
    sb.git(&alice, ["fsck", "--no-progress"]);
}

#[test]
fn fix_gitignore_leaves_a_gitignore_with_the_users_changes_uncommitted_and_says_how() {
    let sb = Sandbox::new();
    let alice = alice_with_qwen_ignored(&sb);
    // An edit of Alice's own, not committed: init's commit would carry it too. Its bytes (a
    // Latin-1 comment, no final newline) are kept as they are.
    let edited: &[u8] = b"target/\n.qwen/\n# caf\xe9\n*.log";
    fs::write(alice.join(".gitignore"), edited).unwrap();
    let head = sb.git(&alice, ["rev-parse", "HEAD"]);

    let run = sb.teammem(&alice, ["init", "--current-branch", "--fix-gitignore"]);
    run.expect_code(0);
    let command =
        "git commit -m \"chore(memory): let git see the team memory folder\" -- .gitignore";
    assert!(
        run.stderr.contains(".gitignore has changes of yours") && run.stderr.contains(command),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert_eq!(sb.git(&alice, ["rev-parse", "HEAD"]), head);
    assert_eq!(
        fs::read(alice.join(".gitignore")).unwrap(),
        [edited, b"\n", FIX_LINES.as_bytes()].concat()
    );

    // The command it gives commits .gitignore alone; the staged work stays staged.
    sb.git(
        &alice,
        [
            "commit",
            "-q",
            "-m",
            "chore(memory): let git see the team memory folder",
            "--",
            ".gitignore",
        ],
    );
    assert_eq!(
        sb.git(&alice, ["diff", "--name-only", "HEAD~1", "HEAD"]),
        ".gitignore\n"
    );
    assert_eq!(
        sb.git(&alice, ["diff", "--cached", "--name-status"]),
        "A\tsrc/lib.rs\n"
    );
}
