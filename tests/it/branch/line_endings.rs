//! Branch mode and line endings (issue 37): a memory saved with CRLF line ends in a clone that
//! converts them (`core.autocrlf`, `.gitattributes` `eol`) is compared as git stores it, so
//! sync after sync makes no conflict copy — nor a copy of a copy — and stores what `git add`
//! would store.

use crate::common::branch_team::{BranchTeam, TEAM, write_memory};
use crate::common::write;

use std::path::Path;

/// `me` saves `project/crlf.md` with CRLF line ends and syncs three times, a teammate syncing
/// in between; then edits it (still CRLF) and syncs three more times. Returns the blob the
/// remote's memory branch holds for it.
fn three_syncs_make_no_copy(team: &BranchTeam, me: &Path, mate: &Path) -> Vec<u8> {
    let text = crate::common::memory_text("crlf", "Saved on Windows", "project", "Line one.\n");
    write(
        &me.join(format!("{TEAM}/project/crlf.md")),
        &text.replace('\n', "\r\n"),
    );
    for round in 0..6 {
        if round == 3 {
            let edited = text.replace("Line one.", "Line one, edited.");
            write(
                &me.join(format!("{TEAM}/project/crlf.md")),
                &edited.replace('\n', "\r\n"),
            );
        }
        let report = team.sync(me);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
        assert!(
            report["warnings"].as_array().unwrap().is_empty(),
            "round {round}: {report:#}"
        );
        write_memory(
            mate,
            "feedback",
            &format!("mate-{round}"),
            "From the teammate.\n",
        );
        let report = team.sync(mate);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
    }
    let files = team.remote_files("team-memory");
    assert!(
        !files.iter().any(|f| f.contains(".conflict-")),
        "conflict copies on the branch: {files:#?}"
    );
    for dir in [me, mate] {
        let on_disk = std::fs::read_dir(dir.join(format!("{TEAM}/project"))).unwrap();
        let names: Vec<String> = on_disk
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.contains(".conflict-")), "{names:?}");
    }
    let blob = team.sb.git_output(
        &team.remote,
        ["show", &format!("team-memory:{TEAM}/project/crlf.md")],
    );
    assert!(blob.status.success());
    assert!(
        String::from_utf8_lossy(&blob.stdout).contains("edited"),
        "the edit did not reach the branch"
    );
    blob.stdout
}

#[test]
fn autocrlf_true_and_input_store_lf_and_make_no_conflict_copy() {
    for setting in ["true", "input"] {
        let team = BranchTeam::new();
        let me = team.clone_as("me");
        team.sb.git(&me, ["config", "core.autocrlf", setting]);
        let mate = team.clone_as("mate");
        let blob = three_syncs_make_no_copy(&team, &me, &mate);
        assert!(!blob.contains(&b'\r'), "{setting}: git would store LF");
    }
}

#[test]
fn autocrlf_false_stores_crlf_as_is_and_makes_no_conflict_copy() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    team.sb.git(&me, ["config", "core.autocrlf", "false"]);
    let mate = team.clone_as("mate");
    let blob = three_syncs_make_no_copy(&team, &me, &mate);
    assert!(
        blob.windows(2).any(|w| w == b"\r\n"),
        "git would store CRLF"
    );
}

#[test]
fn gitattributes_eol_crlf_stores_lf_and_makes_no_conflict_copy() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    write(&me.join(".gitattributes"), "*.md text eol=crlf\n");
    let mate = team.clone_as("mate");
    let blob = three_syncs_make_no_copy(&team, &me, &mate);
    assert!(!blob.contains(&b'\r'), "git would store LF");
}

/// Two people change one conflict copy differently: both versions are kept, the second copy
/// beside the original memory, never as a copy of the copy.
#[test]
fn a_conflict_copy_changed_on_both_sides_is_not_copied_into_a_copy_of_a_copy() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    let copy = format!("{TEAM}/project/x.md.conflict-abc1234.md");
    let text = |body: &str| crate::common::memory_text("x", "A kept version", "project", body);
    write(&me.join(&copy), &text("Original.\n"));
    assert_eq!(team.sync(&me)["pushed"], true);
    assert!(team.sync(&mate)["skipped_reason"].is_null());
    write(&mate.join(&copy), &text("The teammate's version.\n"));
    assert_eq!(team.sync(&mate)["pushed"], true);
    write(&me.join(&copy), &text("My version.\n"));
    let report = team.sync(&me);
    assert_eq!(report["pushed"], true, "{report:#}");
    let files = team.remote_files("team-memory");
    assert!(
        !files.iter().any(|f| f.matches(".conflict-").count() > 1),
        "{files:#?}"
    );
    let copies = files
        .iter()
        .filter(|f| f.contains("x.md.conflict-"))
        .count();
    assert_eq!(copies, 2, "{files:#?}");
    let all: String = files
        .iter()
        .filter(|f| f.contains("x.md"))
        .map(|f| {
            team.sb
                .git(&team.remote, ["show", &format!("team-memory:{f}")])
        })
        .collect();
    assert!(all.contains("My version."), "{all}");
    assert!(all.contains("The teammate's version."), "{all}");
}

/// The bytes `git add` would store for `rel` in `dir` (`git hash-object --path`, with the
/// clone's config and attributes), as an id.
fn id_git_would_store(team: &BranchTeam, dir: &Path, rel: &str) -> String {
    let path = format!("--path={rel}");
    team.sb
        .git(dir, ["hash-object", &path, rel])
        .trim()
        .to_string()
}

/// A way to save a memory's text: a name and the bytes it makes of the text.
type Shape = (&'static str, fn(&str) -> String);

/// `core.eol=crlf` with `* text=auto`, memories saved with mixed line ends, a final CR and a
/// lone CR, on the libgit2 path and on the git path (a reftable clone): each is stored as
/// `git add` stores it, no conflict copy is made, and once recorded, syncs commit nothing.
#[test]
fn mixed_endings_and_stray_carriage_returns_are_stored_as_git_stores_them_on_both_paths() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let other = team.clone_reftable("git-path");
    let mate = team.clone_as("mate");
    let shapes: [Shape; 3] = [
        ("mixed", |t| t.replacen('\n', "\r\n", 2)),
        ("final-cr", |t| format!("{t}\r")),
        ("lone-cr", |t| t.replace("Line one.", "Line\rone.")),
    ];
    for (who, dir) in [("me", &me), ("git-path", &other)] {
        team.sb.git(dir, ["config", "core.eol", "crlf"]);
        write(&dir.join(".gitattributes"), "* text=auto\n");
        for (shape, make) in shapes {
            let slug = format!("{who}-{shape}");
            let text = crate::common::memory_text(&slug, "Saved oddly", "project", "Line one.\n");
            write(&dir.join(format!("{TEAM}/project/{slug}.md")), &make(&text));
        }
    }
    for round in 0..4 {
        for dir in [&me, &other] {
            let report = team.sync(dir);
            assert!(report["skipped_reason"].is_null(), "{report:#}");
            assert!(
                report["warnings"].as_array().unwrap().is_empty(),
                "{report:#}"
            );
            if round >= 2 {
                assert_eq!(report["committed"], false, "round {round}: {report:#}");
            }
        }
        write_memory(&mate, "feedback", &format!("mate-{round}"), "x\n");
        assert!(team.sync(&mate)["skipped_reason"].is_null());
    }
    let files = team.remote_files("team-memory");
    assert!(
        !files.iter().any(|f| f.contains(".conflict-")),
        "{files:#?}"
    );
    for (who, dir) in [("me", &me), ("git-path", &other)] {
        for (shape, _) in shapes {
            let rel = format!("{TEAM}/project/{who}-{shape}.md");
            let stored = team
                .sb
                .git(&team.remote, ["rev-parse", &format!("team-memory:{rel}")]);
            assert_eq!(stored.trim(), id_git_would_store(&team, dir, &rel), "{rel}");
        }
    }
}

/// `working-tree-encoding=UTF-16LE-BOM` on a memory saved in UTF-8 (odd length: git cannot
/// read it as UTF-16, and `git add` fails). On the git path every sync failed with `error`
/// ("failed to encode … from UTF-16LE-BOM to UTF-8"); now that one file is held back and named
/// (`quarantined`), and the clone's other memories still go out.
#[test]
fn a_memory_git_cannot_convert_is_held_back_alone_on_the_git_path() {
    let team = BranchTeam::new();
    team.sb.git(
        team.sb.path(),
        [
            "clone",
            "-q",
            "--ref-format=reftable",
            &team.url,
            "git-path",
        ],
    );
    let me = team.sb.path().join("git-path");
    let mate = team.clone_as("mate");
    write(
        &me.join(".gitattributes"),
        "odd.md working-tree-encoding=UTF-16LE-BOM\n",
    );
    let text = crate::common::memory_text("odd", "Saved in UTF-8", "project", "Odd.\n");
    let text = if text.len() % 2 == 0 {
        format!("{text}\n")
    } else {
        text
    };
    write(&me.join(format!("{TEAM}/project/odd.md")), &text);
    write_memory(&me, "project", "fine", "A plain memory.\n");
    for _ in 0..2 {
        let report = team.sync(&me);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
        let held = report["quarantined"].to_string();
        assert!(held.contains("project/odd.md"), "{report:#}");
        assert!(held.contains("git cannot store it"), "{report:#}");
    }
    assert!(team.sync(&mate)["skipped_reason"].is_null());
    assert!(crate::common::branch_team::has_memory(
        &mate, "project", "fine"
    ));
    assert!(!crate::common::branch_team::has_memory(
        &mate, "project", "odd"
    ));
}
