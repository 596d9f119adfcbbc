//! `teammem sync --no-pull --no-push`: the local half of sync, on real repositories, checked
//! with the git CLI.

use crate::common;

use std::fs;
use std::path::Path;

use common::{Run, Sandbox, memory_text, write};

const TEAM: &str = ".qwen/team-memory";

fn sync(sb: &Sandbox, repo: &Path) -> Run {
    sb.teammem(repo, ["sync", "--no-pull", "--no-push"])
}

fn sync_json(sb: &Sandbox, repo: &Path) -> serde_json::Value {
    let run = sb.teammem(repo, ["sync", "--no-pull", "--no-push", "--json"]);
    assert!(
        run.code == 0 || run.code == 1,
        "sync failed: {}\n{}",
        run.stdout,
        run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn add_memory(repo: &Path, rel: &str, name: &str) {
    let kind = rel.split('/').next().unwrap_or("project");
    let kind = if ["user", "feedback", "project", "reference"].contains(&kind) {
        kind
    } else {
        "project"
    };
    write(
        &repo.join(TEAM).join(rel),
        &memory_text(
            name,
            &format!("About {name}"),
            kind,
            &format!("Body of {name}.\n"),
        ),
    );
}

fn head(sb: &Sandbox, repo: &Path) -> String {
    sb.git(repo, ["rev-parse", "HEAD"]).trim().to_string()
}

fn commit_count(sb: &Sandbox, repo: &Path) -> usize {
    sb.git(repo, ["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

/// `git ls-files -s --debug` entries (mode, id, stage, path and stat data) outside the team
/// folder.
fn index_entries_outside_team(sb: &Sandbox, repo: &Path) -> Vec<String> {
    let text = sb.git(repo, ["ls-files", "-s", "--debug"]);
    let mut entries: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with(' ') {
            if let Some(last) = entries.last_mut() {
                last.push_str(line);
                last.push('\n');
            }
        } else {
            entries.push(format!("{line}\n"));
        }
    }
    entries
        .into_iter()
        .filter(|e| !e.contains(&format!("\t{TEAM}/")))
        .collect()
}

fn team_status(sb: &Sandbox, repo: &Path) -> String {
    sb.git(repo, ["status", "--porcelain", "--", TEAM])
}

#[test]
fn staged_and_unstaged_changes_outside_the_team_folder_survive_byte_for_byte() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(&repo.join("src/lib.rs"), "fn a() {}\n");
    write(&repo.join("notes.txt"), "one\n");
    sb.git(&repo, ["add", "."]);
    sb.git(&repo, ["commit", "-q", "-m", "code"]);
    // Staged: a new file, a modification, a deletion; unstaged on top of a staged change.
    write(&repo.join("staged-new.txt"), "new\n");
    write(&repo.join("src/lib.rs"), "fn a() { staged }\n");
    sb.git(&repo, ["add", "staged-new.txt", "src/lib.rs"]);
    sb.git(&repo, ["rm", "-q", "--cached", "notes.txt"]);
    write(&repo.join("src/lib.rs"), "fn a() { staged + unstaged }\n");
    write(&repo.join("README.md"), "# changed, not staged\n");
    write(&repo.join("untracked.txt"), "u\n");
    add_memory(&repo, "feedback/use-real-db.md", "Use the real database");

    let cached = sb.git(&repo, ["diff", "--cached", "--", ".", ":!.qwen"]);
    let unstaged = sb.git(&repo, ["diff", "--", ".", ":!.qwen"]);
    let entries = index_entries_outside_team(&sb, &repo);
    let before = head(&sb, &repo);

    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], true, "{report}");
    assert_eq!(report["skipped_reason"], serde_json::Value::Null);

    assert_eq!(
        sb.git(&repo, ["diff", "--cached", "--", ".", ":!.qwen"]),
        cached
    );
    assert_eq!(sb.git(&repo, ["diff", "--", ".", ":!.qwen"]), unstaged);
    assert_eq!(index_entries_outside_team(&sb, &repo), entries);
    assert_eq!(sb.git(&repo, ["rev-parse", "HEAD~1"]).trim(), before);
    let files = sb.git(&repo, ["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(
        files,
        format!("{TEAM}/MEMORY.md\n{TEAM}/feedback/use-real-db.md\n")
    );
    assert_eq!(team_status(&sb, &repo), "");
    assert_eq!(
        report["commit"].as_str().unwrap(),
        head(&sb, &repo),
        "the report names the new commit"
    );
    let message = sb.git(&repo, ["log", "-1", "--format=%B"]);
    assert_eq!(
        message,
        "chore(memory): sync team memory\n\nTeammem-Sync: 1\n\n"
    );
    assert_eq!(
        sb.git(&repo, ["log", "-1", "--format=%an <%ae>"]).trim(),
        "Test User <test@example.com>"
    );
    sb.git(&repo, ["fsck", "--strict"]);
}

#[test]
fn deletions_renames_and_odd_names_are_committed() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/keep-me.md", "Keep me");
    add_memory(&repo, "project/old-name.md", "Moving memory");
    add_memory(&repo, "project/drop-me.md", "Drop me");
    sync(&sb, &repo).expect_code(0);

    fs::rename(
        repo.join(TEAM).join("project/old-name.md"),
        repo.join(TEAM).join("project/new-name.md"),
    )
    .unwrap();
    fs::remove_file(repo.join(TEAM).join("project/drop-me.md")).unwrap();
    add_memory(&repo, "notes for ünïcode team/plain-slug.md", "Odd folder");
    write(
        &repo
            .join(TEAM)
            .join("attachments with spaces/日本語 notes.txt"),
        "plain text, no memory\n",
    );
    // A name that is not a slug is lint, not a reason to hold a memory back: Qwen Code reads
    // it, so it is shared. A file no client reads (no type) is quarantined.
    add_memory(&repo, "project/Not A Slug.md", "Odd name");
    write(
        &repo.join(TEAM).join("project/no-type.md"),
        "---\nname: No type\ndescription: d\n---\n",
    );

    let run = sync(&sb, &repo);
    run.expect_code(1);
    assert!(
        run.stderr.contains("no-type.md") && run.stderr.contains("type"),
        "{}",
        run.stderr
    );
    let changes = sb.git(
        &repo,
        ["show", "-M", "--name-status", "-z", "--format=", "HEAD"],
    );
    let changes: Vec<&str> = changes.split('\0').filter(|s| !s.is_empty()).collect();
    let text = changes.join(" ");
    assert!(
        text.contains(&format!(
            "{TEAM}/project/old-name.md {TEAM}/project/new-name.md"
        )),
        "{changes:?}"
    );
    assert!(
        text.contains(&format!("D {TEAM}/project/drop-me.md")),
        "{changes:?}"
    );
    assert!(
        text.contains(&format!("A {TEAM}/notes for ünïcode team/plain-slug.md")),
        "{changes:?}"
    );
    assert!(
        text.contains(&format!(
            "A {TEAM}/attachments with spaces/日本語 notes.txt"
        )),
        "{changes:?}"
    );
    assert!(
        text.contains(&format!("A {TEAM}/project/Not A Slug.md")),
        "{changes:?}"
    );
    assert!(!text.contains("no-type"), "{changes:?}");
    let index = fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(index.contains("project/new-name.md"), "{index}");
    assert!(!index.contains("drop-me"), "{index}");
    assert!(index.contains("Not%20A%20Slug"), "{index}");
    // Only the quarantined file is left over.
    assert_eq!(
        team_status(&sb, &repo),
        format!("?? {TEAM}/project/no-type.md\n")
    );
    sb.git(&repo, ["fsck", "--strict"]);
}

#[test]
fn invalid_memory_is_quarantined_and_left_on_disk_untouched() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/good.md", "Good one");
    // No client reads a memory without a type (a missing description is only lint).
    let broken = "---\nname: Broken\ndescription: no type\n---\nbody\n";
    write(&repo.join(TEAM).join("feedback/broken.md"), broken);

    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], true);
    let quarantined = report["quarantined"].as_array().unwrap();
    assert_eq!(quarantined.len(), 1, "{report}");
    assert_eq!(quarantined[0]["path"], format!("{TEAM}/feedback/broken.md"));
    let reasons = quarantined[0]["reasons"].to_string();
    assert!(reasons.contains("type"), "{reasons}");
    assert_eq!(
        fs::read_to_string(repo.join(TEAM).join("feedback/broken.md")).unwrap(),
        broken
    );
    let all = sb.git(&repo, ["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains("broken.md"), "{all}");
    let index = fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap();
    assert_eq!(index, "- [Good one](feedback/good.md) — About Good one");
}

#[test]
fn a_dirty_memory_index_never_blocks_and_is_regenerated() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/one.md", "One");
    sync(&sb, &repo).expect_code(0);
    let committed = fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap();
    let before = head(&sb, &repo);

    // Hand-edited index alone: regenerated, nothing to commit.
    fs::write(repo.join(TEAM).join("MEMORY.md"), "- my own notes\n").unwrap();
    let run = sync(&sb, &repo);
    run.expect_code(0);
    assert!(
        run.stdout.contains("No team memory changes"),
        "{}",
        run.stdout
    );
    assert_eq!(head(&sb, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap(),
        committed
    );

    // Hand-edited index plus a new memory: committed, index regenerated.
    fs::write(repo.join(TEAM).join("MEMORY.md"), "garbage\n").unwrap();
    add_memory(&repo, "feedback/two.md", "Two");
    sync(&sb, &repo).expect_code(0);
    let index = sb.git(&repo, ["show", &format!("HEAD:{TEAM}/MEMORY.md")]);
    assert_eq!(
        index,
        "- [One](feedback/one.md) — About One\n- [Two](feedback/two.md) — About Two"
    );
    assert_eq!(team_status(&sb, &repo), "");
}

#[test]
fn first_commit_on_an_unborn_branch() {
    let sb = Sandbox::new();
    let repo = sb.path().join("fresh");
    fs::create_dir_all(&repo).unwrap();
    sb.git(&repo, ["init", "-q", "-b", "main"]);
    add_memory(&repo, "project/start.md", "Start");
    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], true, "{report}");
    assert_eq!(commit_count(&sb, &repo), 1);
    assert_eq!(team_status(&sb, &repo), "");
}

#[test]
fn nothing_to_do_is_reported_as_such() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let run = sync(&sb, &repo);
    run.expect_code(0);
    assert_eq!(run.stdout, "No team memory changes to commit\n");
    assert_eq!(commit_count(&sb, &repo), 1);
}

fn assert_skipped(sb: &Sandbox, repo: &Path, reason: &str) -> serde_json::Value {
    let before = sb.git(repo, ["rev-parse", "HEAD"]);
    let run = sb.teammem(repo, ["sync", "--no-pull", "--no-push", "--json"]);
    run.expect_code(1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["skipped_reason"], reason, "{report}");
    assert_eq!(report["committed"], false);
    assert_eq!(sb.git(repo, ["rev-parse", "HEAD"]), before);
    report
}

#[test]
fn preflight_detached_head_and_operations_in_progress() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/pending.md", "Pending");

    sb.git(&repo, ["checkout", "-q", "--detach"]);
    let report = assert_skipped(&sb, &repo, "detached-head");
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("git switch")
    );
    sb.git(&repo, ["checkout", "-q", "main"]);

    // Each operation git can leave unfinished is refused with the commands that finish or
    // abort that operation, and no other's.
    let refused = |sb: &Sandbox, repo: &Path, said: &[&str]| {
        let report = assert_skipped(sb, repo, "operation-in-progress");
        let warning = report["warnings"][0].as_str().unwrap().to_string();
        for words in said {
            assert!(warning.contains(words), "{words:?} missing from {warning}");
        }
        warning
    };

    // A merge stopped on a conflict.
    write(&repo.join("f.txt"), "base\n");
    sb.git(&repo, ["add", "f.txt"]);
    sb.git(&repo, ["commit", "-q", "-m", "base"]);
    sb.git(&repo, ["checkout", "-q", "-b", "other"]);
    write(&repo.join("f.txt"), "other\n");
    sb.git(&repo, ["commit", "-q", "-am", "other"]);
    sb.git(&repo, ["checkout", "-q", "main"]);
    write(&repo.join("f.txt"), "main\n");
    sb.git(&repo, ["commit", "-q", "-am", "main"]);
    assert!(
        !sb.git_output(&repo, ["merge", "-q", "other"])
            .status
            .success()
    );
    let said = refused(
        &sb,
        &repo,
        &[
            "a merge is in progress",
            "`git merge --continue`",
            "`git merge --abort`",
        ],
    );
    assert!(!said.contains("rebase"), "{said}");
    sb.git(&repo, ["merge", "--abort"]);

    assert!(
        !sb.git_output(&repo, ["cherry-pick", "other"])
            .status
            .success()
    );
    refused(
        &sb,
        &repo,
        &[
            "a cherry-pick is in progress",
            "`git cherry-pick --continue`",
            "`git cherry-pick --abort`",
        ],
    );
    sb.git(&repo, ["cherry-pick", "--abort"]);

    assert!(
        !sb.git_output(&repo, ["revert", "--no-edit", "HEAD~1"])
            .status
            .success()
    );
    refused(
        &sb,
        &repo,
        &[
            "a revert is in progress",
            "`git revert --continue`",
            "`git revert --abort`",
        ],
    );
    sb.git(&repo, ["revert", "--abort"]);

    assert!(!sb.git_output(&repo, ["rebase", "other"]).status.success());
    let said = refused(
        &sb,
        &repo,
        &[
            "a rebase is in progress",
            "`git rebase --continue`",
            "`git rebase --abort`",
        ],
    );
    assert!(!said.contains("merge"), "{said}");
    sb.git(&repo, ["rebase", "--abort"]);

    // `git am` of a patch that does not apply.
    let patch = sb.git(&repo, ["format-patch", "-1", "--stdout", "other"]);
    let patch_file = sb.path().join("other.patch");
    write(&patch_file, &format!("{patch}\n"));
    assert!(
        !sb.git_output(&repo, ["am", "-q", patch_file.to_str().unwrap()])
            .status
            .success()
    );
    refused(
        &sb,
        &repo,
        &[
            "`git am` is in progress",
            "`git am --continue`",
            "`git am --abort`",
        ],
    );
    sb.git(&repo, ["am", "--abort"]);

    sb.git(&repo, ["bisect", "start"]);
    refused(
        &sb,
        &repo,
        &["a bisect is in progress", "`git bisect reset`"],
    );
    sb.git(&repo, ["bisect", "reset"]);

    // Back to normal, the pending memory is committed.
    sync(&sb, &repo).expect_code(0);
    assert_eq!(team_status(&sb, &repo), "");
}

/// `git cherry-pick A B C` stopped between its commits leaves only `.git/sequencer/` once the
/// user commits the resolved pick, and `--no-commit` never writes `CHERRY_PICK_HEAD`: sync still
/// names the cherry-pick and its commands, and commits nothing on the half-picked branch.
#[test]
fn preflight_a_cherry_pick_sequence_stopped_between_commits() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/pending.md", "Pending");
    write(&repo.join("f.txt"), "base\n");
    sb.git(&repo, ["add", "f.txt"]);
    sb.git(&repo, ["commit", "-q", "-m", "base"]);
    sb.git(&repo, ["checkout", "-q", "-b", "picks"]);
    write(&repo.join("a.txt"), "a\n");
    sb.git(&repo, ["add", "a.txt"]);
    sb.git(&repo, ["commit", "-q", "-m", "A"]);
    write(&repo.join("f.txt"), "picked\n");
    sb.git(&repo, ["commit", "-q", "-am", "B"]);
    write(&repo.join("c.txt"), "c\n");
    sb.git(&repo, ["add", "c.txt"]);
    sb.git(&repo, ["commit", "-q", "-m", "C"]);
    sb.git(&repo, ["checkout", "-q", "main"]);
    write(&repo.join("f.txt"), "main\n");
    sb.git(&repo, ["commit", "-q", "-am", "main"]);
    let main = sb.git(&repo, ["rev-parse", "HEAD"]);
    let cherry_pick_refused = |sb: &Sandbox, repo: &Path| {
        let report = assert_skipped(sb, repo, "operation-in-progress");
        let warning = report["warnings"][0].as_str().unwrap().to_string();
        for words in [
            "a cherry-pick is in progress",
            "`git cherry-pick --continue`",
            "`git cherry-pick --abort`",
        ] {
            assert!(warning.contains(words), "{words:?} missing from {warning}");
        }
    };

    // B conflicts; the user resolves it and commits, C is still to pick.
    let picks = ["cherry-pick", "picks~2", "picks~1", "picks"];
    assert!(!sb.git_output(&repo, picks).status.success());
    write(&repo.join("f.txt"), "resolved\n");
    sb.git(&repo, ["add", "f.txt"]);
    sb.git(&repo, ["commit", "-q", "--no-edit"]);
    assert!(!sb.path().join("project/.git/CHERRY_PICK_HEAD").exists());
    assert!(sb.path().join("project/.git/sequencer").is_dir());
    cherry_pick_refused(&sb, &repo);
    sb.git(&repo, ["cherry-pick", "--quit"]);
    sb.git(&repo, ["reset", "-q", "--hard", main.trim()]);

    // `--no-commit`: A is staged, B stopped on its conflict, no CHERRY_PICK_HEAD at all.
    let picks = ["cherry-pick", "--no-commit", "picks~2", "picks~1", "picks"];
    assert!(!sb.git_output(&repo, picks).status.success());
    assert!(!sb.path().join("project/.git/CHERRY_PICK_HEAD").exists());
    cherry_pick_refused(&sb, &repo);
    sb.git(&repo, ["cherry-pick", "--abort"]);
    assert_eq!(sb.git(&repo, ["rev-parse", "HEAD"]), main);

    // Finished, the pending memory is committed.
    sync(&sb, &repo).expect_code(0);
    assert_eq!(team_status(&sb, &repo), "");
}

#[test]
fn preflight_not_a_repository_and_an_unreadable_format() {
    let sb = Sandbox::new();
    let plain = sb.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let run = sb.teammem(&plain, ["sync", "--no-pull", "--no-push", "--json"]);
    run.expect_code(2);
    assert!(run.stdout.contains("\"not-a-git-repo\""), "{}", run.stdout);

    let reftable = sb.path().join("reftable");
    let out = sb.git_output(
        sb.path(),
        ["init", "-q", "--ref-format=reftable", "reftable"],
    );
    if out.status.success() {
        // Synced through git (`git/cli_repo/`): nothing to commit in an empty repository.
        let run = sync(&sb, &reftable);
        run.expect_code(0);
    }
}

#[test]
fn preflight_symlinked_team_folder_is_unsafe() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let elsewhere = sb.path().join("elsewhere");
    add_memory(&elsewhere, "feedback/outside.md", "Outside");

    fs::create_dir_all(repo.join(".qwen")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join(TEAM), repo.join(TEAM)).unwrap();
    assert_skipped(&sb, &repo, "unsafe-path");
    let all = sb.git(&repo, ["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains("team-memory"), "{all}");
    // A symlink below the folder withholds only itself: tests/it/sync/unsafe_entries.rs.
}

#[test]
fn preflight_ignored_team_folder_is_a_warning_with_the_fix() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    write(&repo.join(".gitignore"), ".qwen/\n");
    add_memory(&repo, "feedback/hidden.md", "Hidden");
    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], false);
    let warnings = report["warnings"].to_string();
    // The rule that ignores it, and the lines that un-ignore it under an ignored `.qwen/`.
    assert!(warnings.contains(".gitignore:1:.qwen/"), "{warnings}");
    assert!(warnings.contains("/.qwen/*") && warnings.contains("!/.qwen/team-memory/**"));
}

#[test]
fn sparse_checkout_without_the_team_folder_deletes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/one.md", "One");
    add_memory(&repo, "feedback/two.md", "Two");
    write(&repo.join("src/main.rs"), "fn main() {}\n");
    sb.git(&repo, ["add", "."]);
    sb.git(&repo, ["commit", "-q", "-m", "memories and code"]);
    sb.git(&repo, ["sparse-checkout", "set", "src"]);
    assert!(!repo.join(TEAM).join("feedback/one.md").exists());

    assert_skipped(&sb, &repo, "sparse-checkout");
    let tree = sb.git(&repo, ["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tree.contains(&format!("{TEAM}/feedback/one.md")), "{tree}");
    assert_eq!(commit_count(&sb, &repo), 2);

    // Skip-worktree set by hand, without sparse-checkout, is caught too.
    sb.git(&repo, ["sparse-checkout", "disable"]);
    sb.git(
        &repo,
        [
            "update-index",
            "--skip-worktree",
            &format!("{TEAM}/feedback/two.md"),
        ],
    );
    fs::remove_file(repo.join(TEAM).join("feedback/two.md")).unwrap();
    assert_skipped(&sb, &repo, "sparse-checkout");
}

#[test]
fn a_held_index_lock_is_waited_for_then_left_alone() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/wait.md", "Wait");
    let lock = repo.join(".git/index.lock");
    fs::write(&lock, "someone else's").unwrap();
    let report = assert_skipped(&sb, &repo, "locked");
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("index.lock")
    );
    assert_eq!(fs::read_to_string(&lock).unwrap(), "someone else's");
    fs::remove_file(&lock).unwrap();
    sync(&sb, &repo).expect_code(0);
    assert_eq!(commit_count(&sb, &repo), 2);
}

#[test]
fn a_running_sync_holds_the_lock() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "feedback/locked.md", "Locked");
    // This test process is alive, so its lock is not stale.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let lock = repo.join(".git/teammem-sync.lock");
    fs::write(&lock, format!("{} {now}\n", std::process::id())).unwrap();
    assert_skipped(&sb, &repo, "locked");
    // A lock left by a process that is gone is taken over.
    fs::write(&lock, format!("4194399 {now}\n")).unwrap();
    sync(&sb, &repo).expect_code(0);
    assert!(!lock.exists());
}

#[test]
fn two_syncs_started_together_commit_once() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    for i in 0..200 {
        add_memory(
            &repo,
            &format!("project/memory-{i}.md"),
            &format!("Memory {i}"),
        );
    }
    let spawn = || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
        sb.isolate(&mut cmd)
            .current_dir(&repo)
            .args(["sync", "--no-pull", "--no-push", "--json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let reports: Vec<serde_json::Value> = [a, b]
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            serde_json::from_slice(&out.stdout).unwrap()
        })
        .collect();
    let commits = reports.iter().filter(|r| r["committed"] == true).count();
    assert_eq!(commits, 1, "{reports:?}");
    for report in &reports {
        if report["committed"] == false {
            let skipped = &report["skipped_reason"];
            assert!(
                skipped == "locked" || skipped.is_null(),
                "the other sync was locked out or found nothing left: {report}"
            );
        }
    }
    assert_eq!(commit_count(&sb, &repo), 2);
    assert_eq!(team_status(&sb, &repo), "");
}

/// Config for git CLI checks that must not run the planted programs themselves.
const SAFE: [&str; 4] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
];

#[test]
fn planted_fsmonitor_hooks_and_signing_programs_never_run() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let marker = sb.path().join("pwned");
    let evil = repo.join("tools/evil.sh");
    write(
        &evil,
        &format!("#!/bin/sh\necho \"$0\" >> '{}'\nexit 0\n", marker.display()),
    );
    let make_executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    };
    make_executable(&evil);
    for dir in [repo.join(".git/hooks"), repo.join(".githooks")] {
        for hook in [
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
            "reference-transaction",
            "post-index-change",
            "pre-auto-gc",
        ] {
            let path = dir.join(hook);
            write(&path, &fs::read_to_string(&evil).unwrap());
            make_executable(&path);
        }
    }
    let key = sb.home().join(".ssh/id_ed25519");
    fs::create_dir_all(key.parent().unwrap()).unwrap();
    let keygen = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(keygen.status.success());
    let evil_path = evil.display().to_string();
    let key_path = key.display().to_string();
    for (name, value) in [
        ("core.fsmonitor", evil_path.as_str()),
        ("core.hooksPath", ".githooks"),
        ("gpg.program", evil_path.as_str()),
        ("gpg.ssh.program", evil_path.as_str()),
        ("commit.gpgsign", "true"),
        ("gpg.format", "ssh"),
        ("user.signingkey", key_path.as_str()),
    ] {
        sb.git(&repo, ["config", name, value]);
    }
    add_memory(&repo, "feedback/signed.md", "Signed");

    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], true, "{report}");
    assert!(
        report["warnings"].to_string().contains("evil.sh"),
        "the ignored program is named: {report}"
    );
    assert!(!marker.exists(), "a planted program ran");

    // Signed with the user's own key, the way git signs: git verifies it.
    let pubkey = fs::read_to_string(key.with_extension("pub")).unwrap();
    let allowed = sb.path().join("allowed_signers");
    fs::write(&allowed, format!("test@example.com {pubkey}")).unwrap();
    let allowed_config = format!("gpg.ssh.allowedSignersFile={}", allowed.display());
    let mut verify: Vec<&str> = SAFE.to_vec();
    verify.extend([
        "-c",
        "gpg.ssh.program=ssh-keygen",
        "-c",
        allowed_config.as_str(),
        "verify-commit",
        "HEAD",
    ]);
    let out = sb.git_output(&repo, verify);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut status: Vec<&str> = SAFE.to_vec();
    status.extend(["status", "--porcelain", "--", TEAM]);
    assert_eq!(sb.git(&repo, status), "");
    assert!(!marker.exists(), "a planted program ran");
}

#[test]
fn a_commit_that_cannot_be_signed_is_not_made() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.git(&repo, ["config", "commit.gpgsign", "true"]);
    sb.git(&repo, ["config", "gpg.format", "ssh"]);
    sb.git(&repo, ["config", "user.signingkey", "/nonexistent/key"]);
    add_memory(&repo, "feedback/unsigned.md", "Unsigned");
    let run = sync(&sb, &repo);
    run.expect_code(1);
    assert!(
        run.stdout
            .starts_with("Team memory not committed: commit.gpgsign is on"),
        "{}",
        run.stdout
    );
    let report = sync_json(&sb, &repo);
    assert_eq!(report["committed"], false, "{report}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("could not be signed"),
        "{report}"
    );
    assert_eq!(commit_count(&sb, &repo), 1);
}

#[test]
fn a_secret_typed_in_by_an_editor_is_quarantined_and_never_reaches_git() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    add_memory(&repo, "reference/deploy.md", "Deploy");
    sync(&sb, &repo).expect_code(0);

    // Built at run time so this source file holds no token.
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    let new_text = memory_text(
        "CI token",
        "Token the CI uses",
        "reference",
        &format!("The token is {token}\n"),
    );
    write(&repo.join(TEAM).join("reference/ci-token.md"), &new_text);
    let edited = memory_text(
        "Deploy",
        "About Deploy",
        "reference",
        &format!("Body of Deploy.\nexport GITHUB_TOKEN={token}\n"),
    );
    write(&repo.join(TEAM).join("reference/deploy.md"), &edited);
    add_memory(&repo, "project/clean.md", "Clean one");

    let run = sb.teammem(&repo, ["sync", "--no-pull", "--no-push", "--json"]);
    run.expect_code(1);
    assert!(!run.stdout.contains(&token) && !run.stderr.contains(&token));
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["committed"], true, "the clean memory is committed");
    let quarantined: Vec<String> = report["quarantined"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| format!("{} {}", q["path"], q["reasons"]))
        .collect();
    assert_eq!(quarantined.len(), 2, "{quarantined:?}");
    assert!(
        quarantined[0].contains("reference/ci-token.md"),
        "{quarantined:?}"
    );
    assert!(
        quarantined[0].contains("secret: github-pat on line 6"),
        "{quarantined:?}"
    );
    assert!(
        quarantined[1].contains("reference/deploy.md"),
        "{quarantined:?}"
    );

    // Untouched on disk, absent from every commit and every object.
    assert_eq!(
        fs::read_to_string(repo.join(TEAM).join("reference/ci-token.md")).unwrap(),
        new_text
    );
    assert_eq!(
        fs::read_to_string(repo.join(TEAM).join("reference/deploy.md")).unwrap(),
        edited
    );
    let history = sb.git(&repo, ["log", "-p", "--all"]);
    assert!(history.contains("project/clean.md"), "{history}");
    assert!(!history.contains(&token));
    let objects = sb.git_output(&repo, ["cat-file", "--batch-all-objects", "--batch"]);
    assert!(!String::from_utf8_lossy(&objects.stdout).contains(&token));
    let index = fs::read_to_string(repo.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(!index.contains("ci-token"), "{index}");
}
