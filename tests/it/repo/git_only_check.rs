//! The commit-time gate in repositories libgit2 cannot open — refs in reftable, objects in
//! SHA-256 (issue 41: every command finds and reads the repository as git does). The hooks go
//! in through git's own config, `check --staged` and `check --all` read the team folder
//! through git and find exactly what they find in a SHA-1 clone with files refs, a commit
//! carrying a secret is refused (`git commit` and `git commit -a`, which hands the hook a
//! temporary index), every hook is installed, and a range's check runs.

use crate::common::syncrun::write_memory;
use crate::common::{Run, Sandbox, write};

use std::path::{Path, PathBuf};

const TEAM: &str = ".qwen/team-memory";

/// A secret the scanner finds, split so this file holds no whole one.
pub(super) fn secret_body() -> String {
    format!(
        "aws_secret_access_key = \"{}{}\"\n",
        "wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYzq8Wv7Ut6S"
    )
}

/// A repository made by `git init ARGS` with code and one valid memory committed, or `None`
/// when this git cannot make it (the reason printed).
pub(super) fn project(sb: &Sandbox, name: &str, args: &[&str]) -> Option<PathBuf> {
    let mut init = vec!["init", "-q", "-b", "main"];
    init.extend_from_slice(args);
    init.push(name);
    let made = sb.git_output(sb.path(), &init);
    if !made.status.success() {
        println!(
            "skipped: this git cannot make {args:?}: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        return None;
    }
    let repo = sb.path().join(name);
    let old: String = (0..40)
        .map(|n| format!("pub fn step_{n}() -> u32 {{ {n} }}\n"))
        .collect();
    write(&repo.join("src/old.rs"), &old);
    write_memory(
        &repo,
        "project",
        "migrations",
        "The migrations live in `src/old.rs`.\n",
    );
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "initial"]);
    Some(repo)
}

/// What one scenario printed, for comparing a repository only git opens with a plain one.
#[derive(Debug, PartialEq)]
struct Seen {
    secret_staged: String,
    memory_reference: String,
}

fn commit(sb: &Sandbox, repo: &Path, args: &[&str]) -> (bool, String) {
    let mut all = vec!["commit", "-q"];
    all.extend_from_slice(args);
    let out = sb.git_output(repo, &all);
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success(), text)
}

/// A commit no hook sees (the reference-transaction hook would refuse a secret even with
/// `--no-verify`).
fn past_the_hooks(sb: &Sandbox, repo: &Path, args: &[&str]) {
    let mut all = vec!["-c", "core.hooksPath=/dev/null", "commit", "-q"];
    all.extend_from_slice(args);
    sb.git(repo, &all);
}

/// Paths in a report are the same in every clone; the check's own file count line too.
fn findings(run: &Run) -> String {
    run.stdout.clone()
}

/// The scenario: hooks installed, a clean commit through, a secret refused twice, the HEAD
/// check, a deletion a memory names. Returns what the checks printed.
fn gate_scenario(sb: &Sandbox, repo: &Path) -> Seen {
    let installed = sb.teammem(repo, ["install-hooks"]);
    installed.expect_code(0);
    let hooks = repo.join(".git/hooks");
    for hook in ["pre-commit", "pre-merge-commit"] {
        assert!(
            std::fs::read_to_string(hooks.join(hook))
                .unwrap()
                .contains("teammem"),
            "{hook}: {}",
            installed.stdout
        );
    }
    let attributes = std::fs::read_to_string(repo.join(".git/info/attributes")).unwrap();
    assert!(attributes.contains("merge=teammem-index"), "{attributes}");
    assert!(
        sb.git(repo, ["config", "merge.teammem-index.driver"])
            .contains("merge-index"),
    );
    // Every hook goes in, the reference-transaction one too (`git_only_ref_updates.rs`).
    assert!(
        std::fs::read_to_string(hooks.join("reference-transaction"))
            .unwrap()
            .contains("teammem"),
        "{}",
        installed.stdout
    );

    // A valid memory goes in through the hook.
    write_memory(
        repo,
        "feedback",
        "review",
        "Review every migration twice.\n",
    );
    sb.teammem(repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(repo, ["add", "-A"]);
    let (ok, out) = commit(sb, repo, &["-m", "a memory"]);
    assert!(ok, "{out}");
    let head = sb.git(repo, ["rev-parse", "HEAD"]).trim().to_string();

    // A new memory with a secret is refused, without printing the secret.
    write_memory(repo, "project", "keys", &secret_body());
    sb.teammem(repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(repo, ["add", "-A"]);
    let staged = sb.teammem(repo, ["check", "--staged"]);
    staged.expect_code(1);
    let (ok, out) = commit(sb, repo, &["-m", "a secret"]);
    assert!(!ok, "committed:\n{out}");
    assert!(out.contains("commit refused"), "{out}");
    assert!(!out.contains("bPxRfiCYzq8Wv7Ut6S"), "{out}");
    assert_eq!(sb.git(repo, ["rev-parse", "HEAD"]).trim(), head);
    sb.git(repo, ["reset", "-q", "--hard"]);
    let _ = std::fs::remove_file(repo.join(TEAM).join("project/keys.md"));

    // `git commit -a` hands the hook a temporary index: the secret in an edit of a tracked
    // memory is found there too.
    let tracked = repo.join(TEAM).join("feedback/review.md");
    let text = std::fs::read_to_string(&tracked).unwrap() + &secret_body();
    std::fs::write(&tracked, text).unwrap();
    let (ok, out) = commit(sb, repo, &["-a", "-m", "an edit with a secret"]);
    assert!(!ok, "committed:\n{out}");
    assert!(out.contains("secret"), "{out}");
    assert_eq!(sb.git(repo, ["rev-parse", "HEAD"]).trim(), head);

    // Committed past the hook, HEAD's check finds it.
    past_the_hooks(sb, repo, &["-a", "-m", "past the hooks"]);
    let all = sb.teammem(repo, ["check", "--all"]);
    all.expect_code(1);
    assert!(
        all.stdout.contains("feedback/review.md") && all.stdout.contains("secret"),
        "{}",
        all.stdout
    );
    sb.git(repo, ["reset", "-q", "--hard", &head]);
    sb.teammem(repo, ["check", "--all"]).expect_code(0);

    // Configured, a staged deletion of a file a memory names is reported.
    write(
        &repo.join(TEAM).join(".teammem-check.json"),
        r#"{"severity": {"memory-reference": "error"}}"#,
    );
    sb.git(repo, ["add", "-A"]);
    past_the_hooks(sb, repo, &["-m", "strict"]);
    sb.git(repo, ["rm", "-q", "src/old.rs"]);
    let reference = sb.teammem(repo, ["check", "--staged"]);
    reference.expect_code(1);
    assert!(
        reference.stdout.contains("memory-reference"),
        "{}",
        reference.stdout
    );
    sb.git(repo, ["reset", "-q", "--hard"]);

    // Uninstalling puts everything back.
    sb.teammem(repo, ["uninstall-hooks"]).expect_code(0);
    assert!(!hooks.join("pre-commit").exists());
    assert!(
        !std::fs::read_to_string(repo.join(".git/info/attributes"))
            .unwrap()
            .contains("teammem-index")
    );
    Seen {
        secret_staged: findings(&staged),
        memory_reference: findings(&reference),
    }
}

fn gates_like_a_plain_clone(args: &[&str], what: &str) {
    let sb = Sandbox::new();
    let Some(repo) = project(&sb, "odd", args) else {
        return;
    };
    let plain = project(&sb, "plain", &[]).unwrap();
    let seen = gate_scenario(&sb, &repo);
    assert_eq!(seen, gate_scenario(&sb, &plain), "{what}");

    // A range's check runs here too (`git_only_range.rs` compares it with a plain clone's).
    let range = sb.teammem(&repo, ["check", "--range", "HEAD~1..HEAD"]);
    range.expect_code(0);
    assert!(
        range.stdout.contains("1 commit(s)") && !range.stderr.contains("libgit2"),
        "{what}: {}{}",
        range.stdout,
        range.stderr
    );
}

#[test]
fn reftable_commits_are_gated_through_git() {
    gates_like_a_plain_clone(&["--ref-format=reftable"], "reftable");
}

#[test]
fn sha256_commits_are_gated_through_git() {
    gates_like_a_plain_clone(&["--object-format=sha256"], "SHA-256");
}

#[test]
fn an_ignored_team_folder_is_found_through_git() {
    let sb = Sandbox::new();
    let Some(repo) = project(&sb, "odd", &["--ref-format=reftable"]) else {
        return;
    };
    write(&repo.join(".gitignore"), ".qwen/\n");
    sb.git(&repo, ["add", ".gitignore"]);
    let check = sb.teammem(&repo, ["check", "--staged"]);
    assert!(
        check.stdout.contains("team-folder-ignored")
            && check.stdout.contains("the rule `.gitignore:1:.qwen/`")
            && check.stdout.contains("!/.qwen/team-memory/"),
        "{}",
        check.stdout
    );
}

#[test]
fn recall_and_stale_read_the_history_through_git() {
    let sb = Sandbox::new();
    let Some(repo) = project(&sb, "odd", &["--ref-format=reftable"]) else {
        return;
    };
    // A memory a teammate added long ago, edited once since; one I am still editing.
    write_memory(&repo, "project", "queue", "The queue holds 10 jobs.\n");
    sb.teammem(&repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(&repo, ["add", "-A"]);
    let when = |date: &str| format!("--date={date}T12:00:00Z");
    sb.git(
        &repo,
        [
            "commit",
            "-q",
            "--author=Mate <mate@example.com>",
            &when("2024-01-10"),
            "-m",
            "queue",
        ],
    );
    write_memory(&repo, "project", "queue", "The queue holds 12 jobs.\n");
    sb.git(&repo, ["add", "-A"]);
    sb.git(
        &repo,
        [
            "commit",
            "-q",
            "--author=Other <other@example.com>",
            &when("2024-03-01"),
            "-m",
            "queue again",
        ],
    );
    write_memory(
        &repo,
        "project",
        "draft",
        "The queue draft, not committed.\n",
    );

    let recall = sb.teammem(&repo, ["recall", "queue", "--json"]);
    recall.expect_code(0);
    let report: serde_json::Value = serde_json::from_str(&recall.stdout).unwrap();
    let hit = |id: &str| {
        report["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id}: {report:#}"))
    };
    let queue = hit("project/queue.md");
    assert_eq!(queue["changed_from"], "commit", "{queue:#}");
    assert_eq!(queue["changed_by"], "Other", "{queue:#}");
    // 2024-03-01T12:00:00Z
    assert_eq!(queue["changed_at"], 1_709_294_400, "{queue:#}");
    let draft = hit("project/draft.md");
    assert_eq!(draft["changed_from"], "file-time", "{draft:#}");

    // Never used, the queue memory counts from the commit that first added it.
    let stale = sb.teammem(&repo, ["stale", "--json"]);
    stale.expect_code(0);
    assert!(
        stale.stdout.contains("project/queue.md") && stale.stdout.contains("1704888000"),
        "{}",
        stale.stdout
    );

    // What the memories name is looked up at HEAD through git: a deleted file, a line past
    // a file's end; a file that holds is not listed.
    write_memory(
        &repo,
        "project",
        "lines",
        "Step 7 is at `src/lib.rs:3`, step 90 at `src/old.rs:90`.\n",
    );
    write(&repo.join("src/lib.rs"), "a\nb\nc\n");
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["rm", "-q", "src/old.rs"]);
    sb.git(&repo, ["commit", "-q", "-m", "drop the old steps"]);
    let stale = sb.teammem(&repo, ["stale", "--days", "100000"]);
    stale.expect_code(0);
    assert!(
        stale
            .stdout
            .contains("names src/old.rs, which does not exist at HEAD"),
        "{}",
        stale.stdout
    );
    assert!(!stale.stdout.contains("src/lib.rs"), "{}", stale.stdout);
    sb.git(&repo, ["checkout", "-q", "HEAD~1", "--", "src/old.rs"]);
    write(&repo.join("src/old.rs"), "one line\n");
    sb.git(&repo, ["add", "-A"]);
    sb.git(&repo, ["commit", "-q", "-m", "a short old.rs"]);
    let stale = sb.teammem(&repo, ["stale", "--days", "100000"]);
    assert!(
        stale
            .stdout
            .contains("src/old.rs:90 is past the file's end (1 line)"),
        "{}",
        stale.stdout
    );
}
