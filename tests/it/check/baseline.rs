//! `teammem baseline`: the report's exact shape, the lease, and baselines that keep no history.

use crate::common;
use crate::common::lifecycle;

use std::fs;
use std::path::Path;

use common::Sandbox;
use lifecycle::{all_objects, private_dir, private_state, put, team_dir};

fn b_text(third: &str) -> String {
    format!(
        "---\nname: B\ndescription: b\ntype: project\n---\nline1\nline2\n{third}\nline4\nline5\nline6\nline7\n"
    )
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn report_shows_added_modified_deleted_and_mode_changes_then_none() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    put(&dir, "project/a.md", "A", "a", "alpha\n");
    lifecycle_write(&dir.join("project/b.md"), &b_text("line3"));
    put(&dir, "project/c.md", "C", "c", "gamma\n");

    let first = sb.teammem(&repo, ["baseline", "diff"]);
    first.expect_code(0);
    assert!(first.stdout.starts_with("# Memory changes in the private scope (no baseline yet: everything is new)\n\n## Status\n\n- A project/a.md\n- A project/b.md\n- A project/c.md\n"), "{}", first.stdout);
    sb.teammem(&repo, ["baseline", "commit"]).expect_code(0);

    make_executable(&dir.join("project/a.md"));
    lifecycle_write(&dir.join("project/b.md"), &b_text("LINE3"));
    fs::remove_file(dir.join("project/c.md")).unwrap();
    put(&dir, "project/d.md", "D", "d", "delta\n");

    let run = sb.teammem(&repo, ["baseline", "diff"]);
    run.expect_code(0);
    let commit = sb.git(
        &private_state(&sb, &repo).join("memory-baseline.git"),
        ["rev-parse", "HEAD"],
    );
    let expected = format!(
        "# Memory changes in the private scope since baseline {}\n\n## Status\n\n- M project/a.md\n- M project/b.md\n- D project/c.md\n- A project/d.md\n\n## Diff\n\n```diff\n\
diff --git a/project/a.md b/project/a.md\nold mode 100644\nnew mode 100755\n\
diff --git a/project/b.md b/project/b.md\n--- a/project/b.md\n+++ b/project/b.md\n@@ -5,7 +5,7 @@\n ---\n line1\n line2\n-line3\n+LINE3\n line4\n line5\n line6\n\
diff --git a/project/c.md b/project/c.md\ndeleted file mode 100644\n--- a/project/c.md\n+++ /dev/null\n@@ -1,6 +0,0 @@\n----\n-name: C\n-description: c\n-type: project\n----\n-gamma\n\
diff --git a/project/d.md b/project/d.md\nnew file mode 100644\n--- /dev/null\n+++ b/project/d.md\n@@ -0,0 +1,6 @@\n+---\n+name: D\n+description: d\n+type: project\n+---\n+delta\n```\n",
        &commit.trim()[..12]
    );
    assert_eq!(run.stdout, expected);

    sb.teammem(&repo, ["baseline", "commit"]).expect_code(0);
    let none = sb.teammem(&repo, ["baseline", "diff", "--out", "report.md"]);
    none.expect_code(0);
    assert!(
        none.stdout.starts_with("Wrote report.md (0 changed files)"),
        "{}",
        none.stdout
    );
    let report = fs::read_to_string(repo.join("report.md")).unwrap();
    assert!(
        report.ends_with("\n\n## Status\n\n- none\n\n## Diff\n\nNo changes.\n"),
        "{report}"
    );
}

fn lifecycle_write(path: &Path, text: &str) {
    common::write(path, text);
}

#[test]
fn report_is_cut_at_4_mib_with_a_note() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    let line = "x".repeat(99) + "\n";
    for i in 0..70 {
        put(
            &dir,
            &format!("project/m{i:03}.md"),
            "M",
            "m",
            &line.repeat(640),
        );
    }
    let run = sb.teammem(&repo, ["baseline", "diff", "--out", "r.md"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("70 changed files, diff cut at 4 MiB"),
        "{}",
        run.stdout
    );
    let report = fs::read_to_string(repo.join("r.md")).unwrap();
    assert!(report.len() <= 4 * 1024 * 1024, "{}", report.len());
    assert!(
        report.len() > 4 * 1024 * 1024 - 70 * 1024,
        "{}",
        report.len()
    );
    assert_eq!(report.matches("\n- A project/m").count(), 70);
    assert!(
        report.ends_with(
            "of 70 changed files are not shown in full — read them in the memory folder.\n"
        ),
        "{}",
        &report[report.len() - 300..]
    );
}

#[test]
fn lease_keeps_two_consolidations_apart() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &private_dir(&sb, &repo),
        "project/a.md",
        "A",
        "a",
        "alpha\n",
    );

    let first = sb.teammem(&repo, ["baseline", "diff", "--claim", "--out", "r.md"]);
    first.expect_code(0);
    let token = first
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("lease token: "))
        .unwrap()
        .to_string();
    assert_eq!(token.len(), 32);

    let second = sb.teammem(&repo, ["baseline", "diff", "--claim"]);
    second.expect_code(1);
    assert!(
        second
            .stderr
            .contains("another consolidation holds the private baseline lease"),
        "{}",
        second.stderr
    );
    sb.teammem(&repo, ["baseline", "commit"]).expect_code(1);
    sb.teammem(&repo, ["baseline", "commit", "--token", "0123"])
        .expect_code(1);
    sb.teammem(&repo, ["baseline", "release", "--token", "0123"])
        .expect_code(1);
    assert!(
        !private_state(&sb, &repo)
            .join("memory-baseline.git")
            .exists()
    );

    sb.teammem(&repo, ["baseline", "commit", "--token", &token])
        .expect_code(0);
    let again = sb.teammem(&repo, ["baseline", "commit", "--token", &token]);
    again.expect_code(1);
    assert!(
        again.stderr.contains("not held any more"),
        "{}",
        again.stderr
    );

    // A lease older than an hour has expired: its token is refused, and a new claim takes over.
    let claim = sb.teammem(&repo, ["baseline", "diff", "--claim"]);
    claim.expect_code(0);
    let token = claim
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("lease token: "))
        .unwrap()
        .to_string();
    let lease = private_state(&sb, &repo).join("memory-baseline.lease");
    let text = fs::read_to_string(&lease).unwrap();
    let old = lifecycle::now() - 3601;
    let aged = regex_replace_claimed(&text, old);
    fs::write(&lease, aged).unwrap();
    let expired = sb.teammem(&repo, ["baseline", "commit", "--token", &token]);
    expired.expect_code(1);
    assert!(expired.stderr.contains("expired"), "{}", expired.stderr);
    let taken = sb.teammem(&repo, ["baseline", "diff", "--claim"]);
    taken.expect_code(0);
    let token2 = taken
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("lease token: "))
        .unwrap()
        .to_string();
    sb.teammem(&repo, ["baseline", "release", "--token", &token2])
        .expect_code(0);
    assert!(!lease.exists());
}

fn regex_replace_claimed(text: &str, at: i64) -> String {
    let start = text.find("\"claimed_at\":").unwrap() + "\"claimed_at\":".len();
    let end = start + text[start..].find(|c: char| !c.is_ascii_digit()).unwrap();
    format!("{}{at}{}", &text[..start], &text[end..])
}

#[test]
fn parentless_baseline_keeps_no_forgotten_content() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    let secret_body = "The old staging password rotation plan.\n";
    put(&dir, "project/old.md", "Old", "old", secret_body);
    sb.teammem(&repo, ["baseline", "commit"]).expect_code(0);
    let bare = private_state(&sb, &repo).join("memory-baseline.git");
    let old_blob = sb
        .git(&bare, ["rev-parse", "HEAD:project/old.md"])
        .trim()
        .to_string();

    fs::remove_file(dir.join("project/old.md")).unwrap();
    put(&dir, "project/new.md", "New", "new", "Fresh.\n");
    sb.teammem(&repo, ["baseline", "commit"]).expect_code(0);

    assert_eq!(sb.git(&bare, ["rev-list", "--all", "--count"]).trim(), "1");
    assert_eq!(
        sb.git(&bare, ["rev-list", "--max-parents=0", "--count", "HEAD"])
            .trim(),
        "1"
    );
    let fsck = sb.git_output(&bare, ["fsck", "--unreachable", "--no-reflogs", "--full"]);
    assert!(fsck.status.success());
    assert_eq!(String::from_utf8_lossy(&fsck.stdout), "");
    let objects = all_objects(&sb, &bare);
    // One commit, the root tree, the project/ tree and the new file's blob: nothing else.
    assert_eq!(objects.len(), 4, "{objects:?}");
    assert!(!objects.iter().any(|o| o.starts_with(&old_blob)));
    assert!(!dir.join(".git").exists() && !dir.parent().unwrap().join("memory/.git").exists());
}

#[test]
fn team_baseline_is_a_ref_and_diff_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    put(&team_dir(&repo), "feedback/a.md", "A", "a", "alpha\n");
    sb.git(&repo, ["add", "README.md"]);
    fs::write(repo.join("staged.txt"), "staged\n").unwrap();
    sb.git(&repo, ["add", "staged.txt"]);
    let git_dir = repo.join(".git");
    let before = (
        all_objects(&sb, &git_dir),
        sb.git(&repo, ["status", "--porcelain"]),
        sb.git(&repo, ["for-each-ref"]),
        fs::read(git_dir.join("index")).unwrap(),
    );
    let run = sb.teammem(&repo, ["baseline", "diff", "--scope", "team"]);
    run.expect_code(0);
    assert!(run.stdout.contains("- A feedback/a.md\n"), "{}", run.stdout);
    let after = (
        all_objects(&sb, &git_dir),
        sb.git(&repo, ["status", "--porcelain"]),
        sb.git(&repo, ["for-each-ref"]),
        fs::read(git_dir.join("index")).unwrap(),
    );
    assert_eq!(before, after, "baseline diff must write nothing");

    sb.teammem(&repo, ["baseline", "commit", "--scope", "team"])
        .expect_code(0);
    let refs = sb.git(&repo, ["for-each-ref", "--format=%(refname)"]);
    assert_eq!(refs, "refs/heads/main\nrefs/teammem/baseline\n");
    assert_eq!(
        sb.git(&repo, ["rev-parse", "--abbrev-ref", "HEAD"]),
        "main\n"
    );
    assert_eq!(fs::read(git_dir.join("index")).unwrap(), before.3);
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), before.1);
    assert_eq!(
        sb.git(&repo, ["show", "refs/teammem/baseline:feedback/a.md"]),
        fs::read_to_string(team_dir(&repo).join("feedback/a.md")).unwrap()
    );
    let none = sb.teammem(&repo, ["baseline", "diff", "--scope", "team"]);
    assert!(
        none.stdout.contains("## Status\n\n- none\n"),
        "{}",
        none.stdout
    );
}

#[test]
fn stat_cache_never_hides_an_edit_even_with_the_mtime_put_back() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let dir = private_dir(&sb, &repo);
    put(&dir, "project/a.md", "A", "a", "alpha\n");
    put(&dir, "project/b.md", "B", "b", "beta\n");
    // Older than the racy window, so the baseline's stat cache vouches for both files.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    sb.teammem(&repo, ["baseline", "commit"]).expect_code(0);
    let cache = private_state(&sb, &repo).join("memory-baseline.stat.json");
    assert!(fs::read_to_string(&cache).unwrap().contains("project/b.md"));
    let clean = sb.teammem(&repo, ["baseline", "diff"]);
    assert!(
        clean.stdout.contains("## Status\n\n- none\n"),
        "{}",
        clean.stdout
    );

    // Same size, same inode, mtime restored to the nanosecond: only ctime tells.
    let a = dir.join("project/a.md");
    let stamp = sb.path().join("stamp");
    fs::write(&stamp, "").unwrap();
    assert!(
        std::process::Command::new("touch")
            .arg("-r")
            .arg(&a)
            .arg(&stamp)
            .status()
            .unwrap()
            .success()
    );
    let text = fs::read_to_string(&a).unwrap().replace("alpha", "ALPHA");
    fs::write(&a, text).unwrap();
    assert!(
        std::process::Command::new("touch")
            .arg("-r")
            .arg(&stamp)
            .arg(&a)
            .status()
            .unwrap()
            .success()
    );
    let run = sb.teammem(&repo, ["baseline", "diff"]);
    assert!(
        run.stdout
            .contains("## Status\n\n- M project/a.md\n\n## Diff"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("-alpha\n+ALPHA\n"), "{}", run.stdout);
}
