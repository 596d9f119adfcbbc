//! Repository configurations libgit2 cannot handle alone (issue 41), in current-branch mode:
//! each with a bare remote, a git CLI teammate and the user's own work outside the team folder.
//! The memory arrives both ways; `git status`, `git fsck`, the index outside the folder and
//! `git diff --cached` are as git would leave them — or the sync refuses naming cause and fix.

use crate::common::netsync;
use crate::common::syncrun;

use std::path::Path;

use netsync::Team;
use syncrun::{files_at, mate_pushes_memory, reason, sync_json, write_memory};

const TEAM: &str = ".qwen/team-memory";

/// The user's staged and unstaged work outside the team folder, as git shows it.
fn outside(team: &Team, dir: &Path) -> (String, String, String) {
    let text = |args: &[&str]| team.sb.git(dir, args);
    let entries = text(&["ls-files", "-s"])
        .lines()
        .filter(|l| !l.contains(TEAM))
        .map(|l| format!("{l}\n"))
        .collect();
    (
        text(&["diff", "--cached", "--", ":!.qwen"]),
        text(&["diff", "--", ":!.qwen"]),
        entries,
    )
}

/// `configure` sets up `me`; then the teammate's memory and mine cross in one sync each.
fn shares_both_ways(case: &str, configure: impl Fn(&Team)) {
    let team = Team::new();
    configure(&team);
    // My own work: a staged change and an unstaged one, outside the folder.
    crate::common::write(&team.me.join("src/staged.rs"), "// staged\n");
    team.sb.git(&team.me, ["add", "src/staged.rs"]);
    crate::common::write(&team.me.join("README.md"), "# project, edited\n");
    let before = outside(&team, &team.me);

    mate_pushes_memory(&team.sb, &team.mate, &format!("mate-{case}"));
    write_memory(&team.me, "feedback", &format!("me-{case}"), "From me.\n");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{case}: {report:#}");
    assert_eq!(report["committed"], true, "{case}: {report:#}");
    assert_eq!(report["pulled"], true, "{case}: {report:#}");
    assert_eq!(report["pushed"], true, "{case}: {report:#}");
    assert!(
        team.me
            .join(TEAM)
            .join(format!("project/mate-{case}.md"))
            .is_file(),
        "{case}: the teammate's memory did not arrive"
    );
    assert!(files_at(&team.sb, &team.bare, "main").contains(&format!("feedback/me-{case}.md")));
    assert_eq!(
        outside(&team, &team.me),
        before,
        "{case}: work outside changed"
    );
    let status = team.sb.git(&team.me, ["status", "--porcelain"]);
    assert_eq!(status, " M README.md\nA  src/staged.rs\n", "{case}");
    let fsck = team.sb.git_output(&team.me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );

    // The teammate pulls mine with git.
    team.sb.git(&team.mate, ["pull", "-q", "--ff-only"]);
    assert!(
        team.mate
            .join(TEAM)
            .join(format!("feedback/me-{case}.md"))
            .is_file()
    );
}

#[test]
fn a_split_index_is_updated_by_git_itself() {
    shares_both_ways("split", |team| {
        team.sb.git(&team.me, ["config", "core.splitIndex", "true"]);
        team.sb.git(&team.me, ["update-index", "--split-index"]);
    });
}

#[test]
fn a_sparse_index_with_the_folder_in_the_cone_is_updated_by_git_itself() {
    shares_both_ways("sparse", |team| {
        team.sb.git(
            &team.me,
            [
                "sparse-checkout",
                "set",
                "--cone",
                "--sparse-index",
                ".qwen",
                "src",
            ],
        );
    });
}

/// An extension libgit2 does not know, other than reftable: the refusal names it, and gives no
/// `git refs migrate` advice, which converts refs only.
#[test]
fn an_unknown_extension_is_refused_naming_it_without_the_reftable_advice() {
    let sb = crate::common::Sandbox::new();
    let dir = sb.path().join("repo");
    std::fs::create_dir_all(dir.join(TEAM)).unwrap();
    sb.git(&dir, ["init", "-q"]);
    sb.git(&dir, ["config", "core.repositoryformatversion", "1"]);
    sb.git(&dir, ["config", "extensions.compatObjectFormat", "sha256"]);
    let run = sb.teammem(&dir, ["sync", "--json"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["skipped_reason"], "error");
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("extensions.compatobjectformat"),
        "{warning}"
    );
    assert!(warning.contains("git config --get-regexp"), "{warning}");
    assert!(!warning.contains("refs migrate"), "{warning}");
}

/// The ignored-folder trap: the team's `.gitignore` ignores `.qwen/` (only `MEMORY.md` was
/// force-added). A new memory in that clone is not published, and neither is a `MEMORY.md`
/// line for it; the warning names the rule and the exact lines to commit.
#[test]
fn an_ignored_team_folder_is_never_half_published() {
    let team = Team::new();
    crate::common::write(&team.mate.join(".gitignore"), ".qwen/\n");
    team.sb.git(&team.mate, ["add", ".gitignore"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "ignore .qwen"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    team.sb.git(&team.me, ["pull", "-q", "--ff-only"]);
    let index_before = team
        .sb
        .git(&team.bare, ["show", &format!("main:{TEAM}/MEMORY.md")]);

    write_memory(&team.me, "project", "bobs-new-memory", "Bob's.\n");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(!remote.contains("bobs-new-memory"), "{remote}");
    let index_after = team
        .sb
        .git(&team.bare, ["show", &format!("main:{TEAM}/MEMORY.md")]);
    assert_eq!(
        index_after, index_before,
        "an index line for an unpublished file"
    );
    let local_index = std::fs::read_to_string(team.me.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(!local_index.contains("bobs-new-memory"), "{local_index}");
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains(".gitignore:1:.qwen/"), "{report:#}");
    assert!(
        warnings.contains("!/.qwen/")
            && warnings.contains("/.qwen/*")
            && warnings.contains("!/.qwen/team-memory/"),
        "{report:#}"
    );
    assert_eq!(team.sb.git(&team.me, ["status", "--porcelain"]), "");

    // `check` finds it too, naming the same rule and lines: an error on the folder at HEAD; in
    // the pre-commit check an error for a commit touching the folder, else a warning.
    let all = team
        .sb
        .teammem(&team.me, ["check", "--all", "--format", "json"]);
    all.expect_code(1);
    let finding = ignored_finding(&all.stdout);
    assert_eq!(finding["severity"], "error", "{finding:#}");
    assert_eq!(finding["path"], format!("{TEAM}/"));
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("`.gitignore:1:.qwen/`"), "{message}");
    assert!(
        message.ends_with(
            "commit it:\n!/.qwen/\n/.qwen/*\n!/.qwen/team-memory/\n!/.qwen/team-memory/**"
        ),
        "{message}"
    );
    let staged = team
        .sb
        .teammem(&team.me, ["check", "--staged", "--format", "json"]);
    staged.expect_code(0);
    assert_eq!(ignored_finding(&staged.stdout)["severity"], "warning");
    team.sb.git(
        &team.me,
        ["add", "-f", &format!("{TEAM}/project/bobs-new-memory.md")],
    );
    let staged = team
        .sb
        .teammem(&team.me, ["check", "--staged", "--format", "json"]);
    assert_eq!(ignored_finding(&staged.stdout)["severity"], "error");
    team.sb.git(
        &team.me,
        [
            "rm",
            "-q",
            "--cached",
            &format!("{TEAM}/project/bobs-new-memory.md"),
        ],
    );

    // The advice works: with those lines committed, the next sync publishes the memory.
    let lines = "!/.qwen/\n/.qwen/*\n!/.qwen/team-memory/\n!/.qwen/team-memory/**\n";
    crate::common::write(&team.me.join(".gitignore"), &format!(".qwen/\n{lines}"));
    team.sb.git(&team.me, ["add", ".gitignore"]);
    team.sb
        .git(&team.me, ["commit", "-q", "-m", "share team memory"]);
    team.sb.git(&team.me, ["push", "-q", "origin", "main"]);
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains("project/bobs-new-memory.md"), "{remote}");
    let all = team.sb.teammem(&team.me, ["check", "--all"]);
    assert!(
        !all.stdout.contains("team-folder-ignored"),
        "{}",
        all.stdout
    );
}

/// The `team-folder-ignored` finding of a `check --format json` report.
fn ignored_finding(json: &str) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_str(json).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "team-folder-ignored")
        .unwrap_or_else(|| panic!("no team-folder-ignored finding: {report:#}"))
        .clone()
}

/// `git rm --cached` of a team memory is never silently undone: a sync that would commit
/// refuses naming the file and both ways out; deleting the file then publishes the removal.
#[test]
fn a_staged_removal_is_refused_then_published_as_a_removal() {
    let team = Team::new();
    let gone = format!("{TEAM}/project/release-train.md");
    team.sb.git(&team.me, ["rm", "-q", "--cached", &gone]);
    write_memory(
        &team.me,
        "feedback",
        "another-change",
        "Something to commit.\n",
    );

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "staged-removal", "{report:#}");
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains(&gone) && warning.contains("git restore --staged"),
        "{warning}"
    );
    let status = team
        .sb
        .git(&team.me, ["status", "--porcelain", "--", &gone]);
    assert_eq!(
        status,
        format!("D  {gone}\n?? {gone}\n"),
        "the removal was undone"
    );
    assert!(files_at(&team.sb, &team.bare, "main").contains("project/release-train.md"));

    std::fs::remove_file(team.me.join(&gone)).unwrap();
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(!remote.contains("project/release-train.md"), "{remote}");
    assert!(remote.contains("feedback/another-change.md"), "{remote}");
    assert_eq!(team.sb.git(&team.me, ["status", "--porcelain"]), "");
}

/// A partial clone (`--filter=blob:none`): the teammate's memory blob is not in the clone after
/// the fetch; git fetches it from the promisor remote, and the sync goes through.
#[test]
fn a_partial_clone_fetches_the_team_blobs_it_lacks() {
    let team = Team::new();
    team.sb
        .git(&team.bare, ["config", "uploadpack.allowFilter", "true"]);
    team.sb.git(
        &team.bare,
        ["config", "uploadpack.allowAnySHA1InWant", "true"],
    );
    let url = format!("file://{}", team.bare.display());
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "--filter=blob:none", &url, "partial"],
    );
    let me = team.sb.path().join("partial");
    mate_pushes_memory(&team.sb, &team.mate, "mate-partial");
    write_memory(&me, "feedback", "me-partial", "From the partial clone.\n");

    let report = sync_json(&team.sb, &me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(me.join(TEAM).join("project/mate-partial.md").is_file());
    assert!(files_at(&team.sb, &team.bare, "main").contains("feedback/me-partial.md"));
    assert_eq!(team.sb.git(&me, ["status", "--porcelain"]), "");
    let fsck = team.sb.git_output(&me, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// Branch mode in a partial clone: `init --branch` and the first sync read the memory branch's
/// files, which the clone lacks before any fetch round; git fetches them within the budget, and
/// the memory crosses both ways with a teammate using the git CLI alone.
#[test]
fn a_partial_clone_in_branch_mode_shares_both_ways_from_its_first_sync() {
    use crate::common::branch_team::{self, BranchTeam};
    let team = BranchTeam::new();
    team.sb
        .git(&team.remote, ["config", "uploadpack.allowFilter", "true"]);
    team.sb.git(
        &team.remote,
        ["config", "uploadpack.allowAnySHA1InWant", "true"],
    );
    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "--filter=blob:none", &team.url, "partial"],
    );
    let me = team.sb.path().join("partial");
    team.teammem(&me, &["init", "--branch"], 0);
    assert!(branch_team::has_memory(&me, "project", "seeded"));

    team.sb.git(
        team.sb.path(),
        ["clone", "-q", "-b", "team-memory", &team.url, "mate"],
    );
    let mate = team.sb.path().join("mate");
    branch_team::write_memory(&mate, "project", "mate-partial", "From the teammate.\n");
    team.sb.git(&mate, ["add", "-A"]);
    team.sb.git(&mate, ["commit", "-q", "-m", "mate: a memory"]);
    team.sb.git(&mate, ["push", "-q", "origin", "team-memory"]);

    branch_team::write_memory(&me, "feedback", "me-partial", "From the partial clone.\n");
    let before = branch_team::outside(&team.sb, &me);
    let report = team.sync(&me);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(branch_team::has_memory(&me, "project", "mate-partial"));
    branch_team::assert_untouched(&team.sb, &me, &before);

    team.sb.git(&mate, ["pull", "-q", "--ff-only"]);
    assert!(branch_team::has_memory(&mate, "feedback", "me-partial"));
}

/// `core.autocrlf=true` and a `.gitattributes` `text=auto eol=crlf`: a fast-forward checks
/// `MEMORY.md` out with CRLF; the next sync regenerates the same lines and leaves the file as
/// git wrote it, so `git status` stays empty sync after sync.
#[test]
fn crlf_line_endings_leave_no_status_noise_sync_after_sync() {
    let team = Team::new();
    crate::common::write(&team.mate.join(".gitattributes"), "* text=auto eol=crlf\n");
    team.sb.git(&team.mate, ["add", ".gitattributes"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "line endings"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    team.sb.git(&team.me, ["config", "core.autocrlf", "true"]);
    team.sb.git(&team.me, ["pull", "-q", "--ff-only"]);

    for round in 1..=3 {
        // The teammate uses git alone: their commit leaves MEMORY.md as it was.
        team.sb.git(&team.mate, ["pull", "-q", "--ff-only"]);
        write_memory(
            &team.mate,
            "project",
            &format!("mate-crlf-{round}"),
            "Theirs.\n",
        );
        team.sb.git(&team.mate, ["add", "-A"]);
        team.sb
            .git(&team.mate, ["commit", "-q", "-m", "mate: a memory"]);
        team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
        if round != 2 {
            write_memory(&team.me, "feedback", &format!("me-crlf-{round}"), "Mine.\n");
        }
        let report = sync_json(&team.sb, &team.me, &[], &[]);
        assert_eq!(reason(&report), "", "round {round}: {report:#}");
        assert_eq!(report["pulled"], true, "round {round}: {report:#}");
        assert_eq!(
            team.sb.git(&team.me, ["status", "--porcelain"]),
            "",
            "round {round}"
        );
    }
    let index = std::fs::read(team.me.join(TEAM).join("MEMORY.md")).unwrap();
    let index = String::from_utf8(index).unwrap().replace("\r\n", "\n");
    assert!(
        index.contains("mate-crlf-3.md") && index.contains("me-crlf-3.md"),
        "{index}"
    );
}

/// A clone owned by another user: git refuses to work in it until it is marked safe, and so
/// does every teammem command, naming the exact `safe.directory` command; once it is run as
/// advised, the sync goes through.
#[test]
fn a_clone_owned_by_another_user_is_refused_with_the_safe_directory_fix() {
    let team = Team::new();
    write_memory(&team.me, "feedback", "not-mine-yet", "Waits for safety.\n");
    if !crate::common::give_to_another_user(&team.me) {
        println!("skipped: only root can give the clone another owner here");
        return;
    }
    let canonical = team.me.canonicalize().unwrap();
    let fix = format!(
        "git config --global --add safe.directory {}",
        canonical.display()
    );
    for args in [&["sync"][..], &["check", "--all"], &["context"]] {
        let run = syncrun::teammem_env(&team.sb, &team.me, args, &[]);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("belongs to another user") && run.stderr.contains(&fix),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert!(!files_at(&team.sb, &team.bare, "main").contains("not-mine-yet"));

    team.sb.git(
        team.sb.path(),
        [
            "config",
            "--global",
            "--add",
            "safe.directory",
            canonical.to_str().unwrap(),
        ],
    );
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("feedback/not-mine-yet.md"));
}

/// A teammate's commit holds a team memory at a path longer than any file system takes: no
/// checkout can write it (git's cannot either). The pull is refused before anything is
/// written, naming the path and who can fix it — at every sync the same, never a half-done
/// checkout to finish — and once the teammate removes it, the sync goes through.
#[test]
fn a_pulled_path_no_checkout_can_write_is_refused_before_anything_is_written() {
    let team = Team::new();
    let folder = syncrun::mate_pushes_unwritable_path(&team.sb, &team.mate);
    write_memory(&team.me, "feedback", "mine", "Waits for the pull.\n");
    for round in ["first", "second"] {
        let report = sync_json(&team.sb, &team.me, &[], &[]);
        assert_eq!(reason(&report), "unwritable", "{round}: {report:#}");
        let warning = report["warnings"].to_string();
        assert!(
            warning.contains(&folder) && warning.contains("ask its author to remove it"),
            "{round}: {warning}"
        );
        assert_eq!(report["committed"], round == "first", "{round}: {report:#}");
        assert!(!team.me.join(&folder).exists(), "{round}: written");
        assert_eq!(
            team.sb.git(&team.me, ["status", "--porcelain"]),
            "",
            "{round}"
        );
        assert!(syncrun::leftovers(&team.me).is_empty(), "{round}");
    }

    team.sb
        .git(&team.mate, ["rm", "-r", "-q", "--cached", &folder]);
    team.sb
        .git(&team.mate, ["commit", "-q", "-m", "mate: removed"]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "HEAD"]);
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(&team.sb, &team.bare, "main").contains("feedback/mine.md"));
}

/// A half-done checkout of such a commit, as an older teammem left it (its note names a sync
/// that is gone): finishing it would fail at every sync, so the next sync puts its files back,
/// drops the note and says so — then refuses the pull as above, never `locked` again.
#[test]
fn a_half_done_checkout_that_cannot_be_finished_is_rolled_back_once() {
    let team = Team::new();
    syncrun::mate_pushes_unwritable_path(&team.sb, &team.mate);
    team.sb.git(&team.me, ["fetch", "-q", "origin"]);
    let from = team.sb.git(&team.me, ["rev-parse", "HEAD"]);
    let to = team.sb.git(&team.me, ["rev-parse", "origin/main"]);
    crate::common::write(
        &team.me.join(".git/teammem-checkout"),
        &format!("999999 refs/heads/main {} {}\n", from.trim(), to.trim()),
    );
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("could not be finished") && warnings.contains("rolled back"),
        "{report:#}"
    );
    assert_eq!(reason(&report), "unwritable", "{report:#}");
    assert!(!team.me.join(".git/teammem-checkout").exists());
    assert_eq!(team.sb.git(&team.me, ["status", "--porcelain"]), "");
    let again = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&again), "unwritable", "{again:#}");
}
