//! Branch mode against crafted trees (issue 37): a teammate using the git CLI pushes onto the
//! memory branch tree entries no checkout can write safely — names git refuses, names the file
//! system refuses once teammem's temporary suffix is added, a folder where `MEMORY.md` should
//! be, duplicate entries, symlinks, gitlinks, names that are not UTF-8. Each is withheld on its
//! own and named in the report; every other memory keeps flowing both ways, sync after sync.

use crate::common::branch_team::{BranchTeam, RawEntry, TEAM, has_memory, write_memory};

use std::path::Path;

/// How a case edits the team folder's top-level entries.
type Edit = Box<dyn Fn(&BranchTeam, &Path, &mut Vec<RawEntry>)>;

/// One crafted case: what the teammate adds to the team folder, and a piece of the name the
/// report gives the withheld entry (`None`: the merge sync makes rewrites that entry into one
/// git accepts — a folder where the generated `MEMORY.md` belongs gives way to it, duplicate
/// entries become one).
struct Case {
    name: &'static str,
    edit: Edit,
    named: Option<&'static str>,
    /// A piece of the name reported when a clone with nothing to record takes the crafted tip
    /// as it is.
    direct: &'static str,
}

fn memory_blob(team: &BranchTeam, dir: &Path, slug: &str) -> String {
    let text = crate::common::memory_text(slug, &format!("About {slug}"), "project", "Crafted.\n");
    team.blob(dir, text.as_bytes())
}

/// A folder holding one memory file.
fn folder_with_memory(team: &BranchTeam, dir: &Path, slug: &str) -> String {
    let blob = memory_blob(team, dir, slug);
    team.raw_tree(dir, &[RawEntry::new("100644", format!("{slug}.md"), &blob)])
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "dot-git-upper",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "config");
                e.push(RawEntry::new("40000", ".GIT", &sub));
            }),
            named: Some(".GIT"),
            direct: ".GIT",
        },
        Case {
            name: "dot-git-mixed-file",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "hooked");
                e.push(RawEntry::new("100644", ".Git", &blob));
            }),
            named: Some(".Git"),
            direct: ".Git",
        },
        Case {
            name: "dot-dot",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "escape");
                e.push(RawEntry::new("40000", "..", &sub));
            }),
            named: Some("team-memory/.."),
            direct: "team-memory/..",
        },
        Case {
            name: "slash",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "slashed");
                e.push(RawEntry::new("100644", "project/slashed.md", &blob));
            }),
            named: Some("slashed.md"),
            direct: "slashed.md",
        },
        Case {
            name: "long-250",
            edit: Box::new(|t, d, e| {
                let slug = "l".repeat(247);
                let sub = folder_with_memory(t, d, &slug);
                e.push(RawEntry::new("40000", "long", &sub));
            }),
            named: Some("llll"),
            direct: "llll",
        },
        Case {
            name: "long-300-folder",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "inside");
                e.push(RawEntry::new("40000", "f".repeat(300), &sub));
            }),
            named: Some("ffff"),
            direct: "ffff",
        },
        Case {
            name: "memory-index-as-folder",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "index-folder");
                e.retain(|x| x.name != b"MEMORY.md");
                e.push(RawEntry::new("40000", "MEMORY.md", &sub));
            }),
            named: None,
            direct: "MEMORY.md",
        },
        Case {
            name: "duplicate",
            edit: Box::new(|t, d, e| {
                let one = memory_blob(t, d, "twice-one");
                let two = memory_blob(t, d, "twice-two");
                e.push(RawEntry::new("100644", "twice.md", &one));
                e.push(RawEntry::new("100644", "twice.md", &two));
            }),
            named: None,
            direct: "twice.md",
        },
        Case {
            name: "symlink",
            edit: Box::new(|t, d, e| {
                let target = t.blob(d, b"/etc/passwd");
                e.push(RawEntry::new("120000", "linked.md", &target));
            }),
            named: Some("linked.md"),
            direct: "linked.md",
        },
        Case {
            name: "gitlink",
            edit: Box::new(|t, d, e| {
                let head = t.sb.git(d, ["rev-parse", "HEAD"]);
                e.push(RawEntry::new("160000", "submodule", &head));
            }),
            named: Some("submodule"),
            direct: "submodule",
        },
        Case {
            name: "not-utf8",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "latin");
                e.push(RawEntry::new("100644", b"caf\xe9.md", &blob));
            }),
            named: Some("caf"),
            direct: "caf",
        },
    ]
}

/// Every crafted entry at once stays on the branch, withheld from each clone's folder, while
/// two teammates keep sharing memories both ways over several syncs.
#[test]
fn crafted_entries_are_withheld_and_memory_keeps_flowing() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let mate = team.clone_as("mate");
    let mallory = team.clone_as("mallory");
    for dir in [&me, &mate] {
        let report = team.sync(dir);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
    }
    for case in cases() {
        team.push_crafted(&mallory, |entries| (case.edit)(&team, &mallory, entries));
        let report = team.sync(&mate);
        assert!(
            report["skipped_reason"].is_null(),
            "{}: {report:#}",
            case.name
        );
        let withheld = report["withheld"].to_string();
        assert!(withheld.contains(case.direct), "{}: {report:#}", case.name);
        for round in 0..2 {
            let slug = format!("me-{}-{round}", case.name);
            write_memory(&me, "project", &slug, "Mine.\n");
            let report = team.sync(&me);
            assert!(
                report["skipped_reason"].is_null(),
                "{}: {report:#}",
                case.name
            );
            assert_eq!(report["pushed"], true, "{}: {report:#}", case.name);
            let withheld = report["withheld"].to_string();
            match case.named {
                Some(named) if round == 0 => {
                    assert!(withheld.contains(named), "{}: {report:#}", case.name)
                }
                Some(_) => {}
                None => {
                    let index = format!("team-memory:{TEAM}/MEMORY.md");
                    let kind = team.sb.git(&team.remote, ["cat-file", "-t", &index]);
                    assert_eq!(kind.trim(), "blob", "{}", case.name);
                    let folder = team
                        .sb
                        .git(&team.remote, ["ls-tree", &format!("team-memory:{TEAM}")]);
                    assert!(folder.matches("\ttwice.md\n").count() <= 1, "{folder}");
                }
            }
            let report = team.sync(&mate);
            assert!(
                report["skipped_reason"].is_null(),
                "{}: {report:#}",
                case.name
            );
            assert!(has_memory(&mate, "project", &slug), "{}", case.name);
            write_memory(
                &mate,
                "feedback",
                &format!("mate-{}-{round}", case.name),
                "x\n",
            );
            let report = team.sync(&mate);
            assert_eq!(report["pushed"], true, "{}: {report:#}", case.name);
        }
        let report = team.sync(&me);
        assert!(report["skipped_reason"].is_null(), "{report:#}");
        assert!(has_memory(
            &me,
            "feedback",
            &format!("mate-{}-1", case.name)
        ));
    }
    // Nothing crafted reached a work tree; the folder's MEMORY.md is a file.
    for dir in [&me, &mate] {
        let folder = dir.join(TEAM);
        assert!(folder.join("MEMORY.md").is_file());
        for bad in [".GIT", ".Git", "linked.md", "submodule", "long"] {
            assert!(
                std::fs::symlink_metadata(folder.join(bad)).is_err(),
                "{bad} was written into {}",
                dir.display()
            );
        }
        assert!(!dir.join(".qwen/escape.md").exists());
        let status = team.sb.git(dir, ["status", "--porcelain"]);
        assert!(status.is_empty(), "{status}");
    }
}

/// A teammate commits a memory executable (mode 100755) with plain git. This clone writes it as
/// a plain file, and its later syncs record nothing for it: a mode alone is never a change, so
/// the branch gets no commit from a clone that changed nothing. On the libgit2 path and on the
/// git path (a reftable clone).
#[test]
fn an_executable_memory_is_never_recorded_back_as_a_mode_change() {
    let team = BranchTeam::new();
    let mate = team.clone_as("mate");
    team.sb.git(&mate, ["switch", "-q", "team-memory"]);
    write_memory(&mate, "project", "runnable", "Committed executable.\n");
    let file = mate.join(TEAM).join("project/runnable.md");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    team.sb.git(&mate, ["add", "-A"]);
    team.sb.git(&mate, ["commit", "-q", "-m", "mate: runnable"]);
    team.sb.git(&mate, ["push", "-q", "origin", "team-memory"]);
    let tip = team.sb.git(&team.remote, ["rev-parse", "team-memory"]);
    for (name, args) in [
        ("me", &[][..]),
        ("me-reftable", &["--ref-format=reftable"][..]),
    ] {
        let mut clone = vec!["clone", "-q"];
        clone.extend_from_slice(args);
        clone.extend([team.url.as_str(), name]);
        team.sb.git(team.sb.path(), &clone);
        let me = team.sb.path().join(name);
        team.sync(&me);
        assert!(has_memory(&me, "project", "runnable"), "{name}");
        for round in 0..2 {
            let report = team.sync(&me);
            assert_eq!(report["committed"], false, "{name} {round}: {report:#}");
        }
        assert_eq!(
            team.sb.git(&team.remote, ["rev-parse", "team-memory"]),
            tip,
            "{name}: the branch got a commit"
        );
    }
}

/// A crafted case of [`more_crafted_entries_flow_past_on_both_paths`]: what the teammate adds,
/// and a piece of the `withheld` report that names it on the first pull (`None`: nothing is
/// withheld, the entry is written as a plain memory).
struct Probe {
    name: &'static str,
    edit: Edit,
    named: Option<&'static str>,
}

fn more_cases() -> Vec<Probe> {
    vec![
        Probe {
            // macOS ignores U+200C in names: this folder is `.git` there.
            name: "hfs-dot-git",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "hfs");
                e.push(RawEntry::new("40000", ".g\u{200c}it", &sub));
            }),
            // The report shows the hidden character escaped.
            named: Some(".g\\\\u{200c}it"),
        },
        Probe {
            name: "control-character",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "tabbed");
                e.push(RawEntry::new("100644", "a\tb.md", &blob));
            }),
            named: Some("b.md\",\"reasons\":[\"a name with a control character"),
        },
        Probe {
            // `git mktree` refuses it: the git path carried it through a tree write.
            name: "slash-on-the-git-path",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "slashed");
                e.push(RawEntry::new("100644", "nested/slashed.md", &blob));
            }),
            named: Some("slashed.md"),
        },
        Probe {
            // The merge's MEMORY.md (a file) could not replace a gitlink in a tree update.
            name: "memory-index-as-gitlink",
            edit: Box::new(|t, d, e| {
                let head = t.sb.git(d, ["rev-parse", "HEAD"]);
                e.retain(|x| x.name != b"MEMORY.md");
                e.push(RawEntry::new("160000", "MEMORY.md", &head));
            }),
            named: Some("MEMORY.md"),
        },
        Probe {
            // git2's diff panicked on a mode outside its list.
            name: "mode-100600",
            edit: Box::new(|t, d, e| {
                let blob = memory_blob(t, d, "oddmode");
                e.push(RawEntry::new("100600", "oddmode.md", &blob));
            }),
            named: None,
        },
        Probe {
            // A file's mode naming a folder: no blob to read when the index is regenerated.
            name: "file-mode-naming-a-folder",
            edit: Box::new(|t, d, e| {
                let sub = folder_with_memory(t, d, "inside-treeblob");
                e.push(RawEntry::new("100644", "treeblob.md", &sub));
            }),
            named: Some("treeblob.md"),
        },
    ]
}

/// More crafted entries, each pushed with plain git onto the memory branch, and synced by a
/// clone on the libgit2 path and by one on the git path (reftable refs): no sync fails or
/// panics, the entry is withheld and named (or, for an odd file mode, written as a plain
/// memory), and both clones keep sharing their own memories, sync after sync.
#[test]
fn more_crafted_entries_flow_past_on_both_paths() {
    let team = BranchTeam::new();
    let me = team.clone_as("me");
    let other = team.clone_reftable("git-path");
    let mallory = team.clone_as("mallory");
    for dir in [&me, &other] {
        assert!(team.sync(dir)["skipped_reason"].is_null());
    }
    for case in more_cases() {
        team.push_crafted(&mallory, |entries| (case.edit)(&team, &mallory, entries));
        for dir in [&me, &other] {
            let report = team.sync(dir);
            assert!(
                report["skipped_reason"].is_null(),
                "{}: {report:#}",
                case.name
            );
            if let Some(named) = case.named {
                let withheld = report["withheld"].to_string();
                assert!(withheld.contains(named), "{}: {report:#}", case.name);
            }
        }
        for round in 0..2 {
            let mine = format!("me-{}-{round}", case.name);
            let theirs = format!("git-path-{}-{round}", case.name);
            write_memory(&me, "project", &mine, "Mine.\n");
            write_memory(&other, "project", &theirs, "Theirs.\n");
            for dir in [&me, &other, &me] {
                let report = team.sync(dir);
                assert!(
                    report["skipped_reason"].is_null(),
                    "{} {round}: {report:#}",
                    case.name
                );
            }
            assert!(has_memory(&me, "project", &theirs), "{}", case.name);
            assert!(has_memory(&other, "project", &mine), "{}", case.name);
        }
    }
    for dir in [&me, &other] {
        let folder = dir.join(TEAM);
        assert!(folder.join("MEMORY.md").is_file());
        assert!(folder.join("oddmode.md").is_file(), "{}", dir.display());
        for bad in [".g\u{200c}it", "a\tb.md", "treeblob.md", "nested"] {
            assert!(
                std::fs::symlink_metadata(folder.join(bad)).is_err(),
                "{bad:?} was written into {}",
                dir.display()
            );
        }
        let status = team.sb.git(dir, ["status", "--porcelain"]);
        assert!(status.is_empty(), "{status}");
    }
}
