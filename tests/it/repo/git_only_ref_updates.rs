//! The `reference-transaction` hook in repositories libgit2 cannot open — refs in reftable,
//! objects in SHA-256 (issue 41): `install-hooks` installs it, and its check of the commits a
//! ref update brings in runs through git, so a secret that arrives without any commit hook —
//! `git update-ref` to a commit made elsewhere, `git cherry-pick`, a push from a clone — is
//! refused, the ref left where it was, while a clean update goes through.

use super::git_only_check::{project, secret_body};
use crate::common::Sandbox;
use crate::common::syncrun::write_memory;

use std::path::Path;

fn rev(sb: &Sandbox, repo: &Path, name: &str) -> String {
    sb.git(repo, ["rev-parse", name]).trim().to_string()
}

/// A commit on `HEAD` made with every hook off (`core.hooksPath=/dev/null`), so no hook of
/// this clone judged it.
fn commit_past_the_hooks(sb: &Sandbox, repo: &Path, message: &str) {
    sb.teammem(repo, ["index", "--scope", "team"])
        .expect_code(0);
    sb.git(repo, ["add", "-A"]);
    sb.git(
        repo,
        [
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

/// The hook's refusal: the finding named, the secret not printed, git's own abort.
fn assert_refused(stderr: &str, what: &str) {
    assert!(
        stderr.contains("project/keys.md")
            && stderr.contains("aws-secret-access-key")
            && stderr.contains("ref update refused")
            && stderr.contains("ref updates aborted by hook"),
        "{what}: {stderr}"
    );
    assert!(!stderr.contains("bPxRfiCYzq8Wv7Ut6S"), "{what}: {stderr}");
}

fn refuses_secrets_arriving_by_ref_updates(args: &[&str]) {
    let sb = Sandbox::new();
    let Some(repo) = project(&sb, "odd", args) else {
        return;
    };
    let installed = sb.teammem(&repo, ["install-hooks"]);
    installed.expect_code(0);
    assert!(
        installed
            .stdout
            .contains("Installed the reference-transaction hook"),
        "{}",
        installed.stdout
    );
    let main = rev(&sb, &repo, "main");

    // A commit with a secret, made on a branch no hook saw (after other work, so that a
    // cherry-pick onto main makes a new commit, not this one again).
    sb.git(&repo, ["checkout", "-q", "-b", "side"]);
    write_memory(&repo, "project", "side", "Side work.\n");
    commit_past_the_hooks(&sb, &repo, "side work");
    write_memory(&repo, "project", "keys", &secret_body());
    commit_past_the_hooks(&sb, &repo, "a secret");
    let secret_tree = rev(&sb, &repo, "HEAD^{tree}");
    let secret_commit = rev(&sb, &repo, "HEAD");
    sb.git(&repo, ["checkout", "-q", "main"]);

    // `git update-ref` to a new commit holding it: refused, main stays.
    let made = sb.git(
        &repo,
        ["commit-tree", "-p", "main", "-m", "by hand", &secret_tree],
    );
    let by_hand = made.trim();
    let update = sb.git_output(&repo, ["update-ref", "refs/heads/main", by_hand]);
    assert!(!update.status.success(), "update-ref went through");
    assert_refused(&String::from_utf8_lossy(&update.stderr), "update-ref");
    assert_eq!(rev(&sb, &repo, "main"), main);

    // `git cherry-pick` runs no commit hook: refused too.
    let pick = sb.git_output(&repo, ["cherry-pick", &secret_commit]);
    assert!(!pick.status.success(), "cherry-pick went through");
    assert_refused(&String::from_utf8_lossy(&pick.stderr), "cherry-pick");
    assert_eq!(rev(&sb, &repo, "main"), main);
    sb.git(&repo, ["reset", "-q", "--merge"]);

    // A push from a clone into this repository: refused, no branch made.
    let clone = sb.path().join("clone");
    sb.git(
        sb.path(),
        ["clone", "-q", &repo.display().to_string(), "clone"],
    );
    write_memory(&clone, "project", "keys", &secret_body());
    commit_past_the_hooks(&sb, &clone, "pushed secret");
    let push = sb.git_output(&clone, ["push", "origin", "HEAD:refs/heads/incoming"]);
    assert!(!push.status.success(), "the push went through");
    assert_refused(&String::from_utf8_lossy(&push.stderr), "push");
    let branches = sb.git(&repo, ["branch", "--list", "incoming"]);
    assert!(branches.trim().is_empty(), "{branches}");

    // A clean update goes through, silently.
    sb.git(&clone, ["reset", "-q", "--hard", "origin/main"]);
    write_memory(&clone, "project", "queue", "The queue holds 10 jobs.\n");
    commit_past_the_hooks(&sb, &clone, "a clean memory");
    let push = sb.git_output(&clone, ["push", "origin", "HEAD:refs/heads/incoming"]);
    let stderr = String::from_utf8_lossy(&push.stderr);
    assert!(push.status.success(), "{stderr}");
    assert!(!stderr.contains("teammem"), "{stderr}");
    assert_eq!(rev(&sb, &repo, "incoming"), rev(&sb, &clone, "HEAD"));

    // The hook's own check, as it reads its input, judges the same way by hand.
    let zero = "0".repeat(main.len());
    let input = format!("{zero} {by_hand} refs/heads/elsewhere\n");
    let by_check = sb.teammem_with_input(&repo, ["check", "--ref-updates"], &input);
    by_check.expect_code(1);
    assert!(
        by_check.stdout.contains("project/keys.md") && by_check.stdout.contains("1 commit(s)"),
        "{}",
        by_check.stdout
    );
}

#[test]
fn reftable_ref_updates_with_a_secret_are_refused() {
    refuses_secrets_arriving_by_ref_updates(&["--ref-format=reftable"]);
}

#[test]
fn sha256_ref_updates_with_a_secret_are_refused() {
    refuses_secrets_arriving_by_ref_updates(&["--object-format=sha256"]);
}
