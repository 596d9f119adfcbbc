//! The index after `teammem sync --no-pull --no-push` commits the team folder: git reads it,
//! its cache tree and untracked cache do not lie, the entries outside the team folder are byte
//! for byte what they were, and index forms sync does not patch itself (version 4) still work.

use crate::common;

use std::fs;
use std::path::Path;

use common::{Sandbox, memory_text, write};

const TEAM: &str = ".qwen/team-memory";

fn add_memory(repo: &Path, name: &str) {
    write(
        &repo.join(TEAM).join(format!("project/{name}.md")),
        &memory_text(name, &format!("About {name}"), "project", "Body.\n"),
    );
}

fn sync(sb: &Sandbox, repo: &Path) {
    let run = sb.teammem(repo, ["sync", "--no-pull", "--no-push", "--json"]);
    run.expect_code(0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["committed"], true, "{report}");
}

/// `git ls-files -s --debug` (mode, id, stage, path, stat data and flags) outside the team
/// folder.
fn entries_outside_team(sb: &Sandbox, repo: &Path) -> String {
    let text = sb.git(repo, ["ls-files", "-s", "--debug"]);
    let mut out = String::new();
    let mut keep = false;
    for line in text.lines() {
        if !line.starts_with(' ') {
            keep = !line.contains(&format!("\t{TEAM}/"));
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A repository with code in folders, a team folder committed by sync, and a cache tree
/// (written by `git commit`).
fn project(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("project");
    for dir in ["a", "b/c", "z"] {
        write(&repo.join(dir).join("file.txt"), &format!("{dir}\n"));
    }
    write(&repo.join(".qwen/settings.json"), "{}\n");
    add_memory(&repo, "first");
    add_memory(&repo, "second");
    sync(sb, &repo);
    sb.git(&repo, ["add", "."]);
    sb.git(&repo, ["commit", "-q", "-m", "code"]);
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
    repo
}

/// What a user checks after a sync: git reads the index, sees nothing to commit in the team
/// folder, and its objects are sound.
fn assert_git_accepts_the_index(sb: &Sandbox, repo: &Path) {
    sb.git(repo, ["update-index", "--refresh"]);
    assert_eq!(sb.git(repo, ["status", "--porcelain", "--", TEAM]), "");
    assert_eq!(sb.git(repo, ["diff", "--cached", "--", TEAM]), "");
    sb.git(repo, ["fsck", "--strict", "--no-progress"]);
}

#[test]
fn the_cache_tree_is_invalidated_so_the_next_git_commit_is_right() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    add_memory(&repo, "third");
    fs::remove_file(repo.join(TEAM).join("project/first.md")).unwrap();

    let outside = entries_outside_team(&sb, &repo);
    sync(&sb, &repo);

    assert_eq!(entries_outside_team(&sb, &repo), outside);
    assert_git_accepts_the_index(&sb, &repo);
    // `git write-tree` trusts the cache tree: a stale one would give the tree before the sync.
    assert_eq!(
        sb.git(&repo, ["write-tree"]),
        sb.git(&repo, ["rev-parse", "HEAD^{tree}"])
    );

    // The user's next commit holds exactly what they staged, on top of the sync commit.
    write(&repo.join("b/c/file.txt"), "changed\n");
    sb.git(&repo, ["add", "b/c/file.txt"]);
    sb.git(&repo, ["commit", "-q", "-m", "user change"]);
    assert_eq!(
        sb.git(&repo, ["diff", "--name-only", "HEAD~1", "HEAD"]),
        "b/c/file.txt\n"
    );
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
    let team = sb.git(&repo, ["ls-tree", "-r", "--name-only", "HEAD", "--", TEAM]);
    assert_eq!(
        team,
        format!("{TEAM}/MEMORY.md\n{TEAM}/project/second.md\n{TEAM}/project/third.md\n")
    );
}

#[test]
fn staged_changes_beside_the_team_folder_survive_byte_for_byte() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    // Staged next to the team folder, before it and after it in index order.
    write(&repo.join(".qwen/settings.json"), "{\"memory\": {}}\n");
    write(&repo.join(".qwen/zz.txt"), "after the team folder\n");
    write(&repo.join("a/file.txt"), "staged\n");
    sb.git(
        &repo,
        ["add", ".qwen/settings.json", ".qwen/zz.txt", "a/file.txt"],
    );
    sb.git(&repo, ["rm", "-q", "--cached", "z/file.txt"]);
    add_memory(&repo, "third");

    let outside = entries_outside_team(&sb, &repo);
    let cached = sb.git(
        &repo,
        ["diff", "--cached", "--", ".", ":!.qwen/team-memory"],
    );
    sync(&sb, &repo);

    assert_eq!(entries_outside_team(&sb, &repo), outside);
    assert_eq!(
        sb.git(
            &repo,
            ["diff", "--cached", "--", ".", ":!.qwen/team-memory"]
        ),
        cached
    );
    assert_git_accepts_the_index(&sb, &repo);
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain"]),
        "M  .qwen/settings.json\nA  .qwen/zz.txt\nM  a/file.txt\nD  z/file.txt\n?? z/\n"
    );
}

#[test]
fn an_untracked_cache_never_shows_a_committed_memory_as_untracked() {
    let sb = Sandbox::new();
    let repo = project(&sb);
    sb.git(&repo, ["config", "core.untrackedCache", "true"]);
    sb.git(&repo, ["update-index", "--untracked-cache"]);
    write(&repo.join("b/untracked.txt"), "u\n");
    add_memory(&repo, "third");
    // git records the new memory as untracked in its cache.
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain"]),
        format!("?? {TEAM}/project/third.md\n?? b/untracked.txt\n")
    );

    sync(&sb, &repo);

    assert_git_accepts_the_index(&sb, &repo);
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain"]),
        "?? b/untracked.txt\n"
    );
}

/// In a repository whose index git was told to write in another form (`setup`), a sync with
/// one new memory and a change staged outside the team folder: the staged change survives to
/// the entry, and git accepts the index sync wrote.
fn a_staged_change_survives_a_sync_after(setup: &[&str]) {
    let sb = Sandbox::new();
    let repo = project(&sb);
    sb.git(&repo, setup);
    write(&repo.join("a/file.txt"), "staged\n");
    sb.git(&repo, ["add", "a/file.txt"]);
    add_memory(&repo, "third");

    let outside = entries_outside_team(&sb, &repo);
    sync(&sb, &repo);

    assert_eq!(entries_outside_team(&sb, &repo), outside);
    assert_git_accepts_the_index(&sb, &repo);
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "M  a/file.txt\n");
}

#[test]
fn an_index_written_with_skip_hash_is_read_and_written_the_same_way() {
    a_staged_change_survives_a_sync_after(&["config", "index.skipHash", "true"]);
}

#[test]
fn an_index_version_4_is_updated_through_libgit2() {
    a_staged_change_survives_a_sync_after(&["update-index", "--index-version", "4"]);
}

/// `git ls-files -s --debug` for the team folder's entries: mode, id, path, and the stat data
/// (ctime, mtime, device, inode, owner, group, size) that lets `git status` trust an entry
/// without reading its file.
fn team_entries(sb: &Sandbox, repo: &Path) -> String {
    let text = sb.git(repo, ["ls-files", "-s", "--debug", "--", TEAM]);
    assert!(text.contains("  mtime: "), "{text}");
    text
}

/// A sync that commits a new and a changed memory (in an index of the form `setup` gives, if
/// any) writes their entries with the stat data git itself writes when it stages the same files.
fn team_entries_are_what_git_add_writes(setup: Option<&[&str]>) {
    let sb = Sandbox::new();
    let repo = project(&sb);
    if let Some(setup) = setup {
        sb.git(&repo, setup);
    }
    add_memory(&repo, "third");
    write(
        &repo.join(TEAM).join("project/first.md"),
        &memory_text("first", "About first, changed", "project", "Longer body.\n"),
    );

    sync(&sb, &repo);
    let written = team_entries(&sb, &repo);
    assert!(
        !written.contains("  size: 0\t"),
        "sync left an entry for git to re-read:\n{written}"
    );
    sb.git(&repo, ["rm", "-q", "--cached", "-r", TEAM]);
    sb.git(&repo, ["add", TEAM]);

    assert_eq!(written, team_entries(&sb, &repo));
    assert_eq!(sb.git(&repo, ["status", "--porcelain"]), "");
}

#[test]
fn team_entries_get_the_stat_data_git_would_write() {
    team_entries_are_what_git_add_writes(None);
}

#[test]
fn team_entries_written_through_libgit2_get_the_stat_data_git_would_write() {
    team_entries_are_what_git_add_writes(Some(&["update-index", "--index-version", "4"]));
}
