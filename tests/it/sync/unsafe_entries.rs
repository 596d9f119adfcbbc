//! A teammate pushes, with plain git, an entry into the team folder that no checkout should
//! read through (issues #37 and #40): a symlink to `/etc/passwd`, a symlink pointing nowhere, a
//! gitlink. In current-branch mode git writes it into the victim's work tree; it withholds
//! only itself. The victim's next syncs still commit, pull and push everything else, the entry
//! is named in the report, never followed, and left exactly as the teammate committed it.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::netsync::Team;
use crate::common::syncrun::{files_at, reason, sync_json, write_memory};
use crate::common::{self, Sandbox};

const TEAM: &str = ".qwen/team-memory";

/// What the attacker plants, at `.qwen/team-memory/<rel>`.
enum Planted {
    /// A symlink with this target.
    Symlink(String),
    /// A gitlink (submodule entry) to the teammate's own tip.
    Gitlink,
    /// Nothing more than what the teammate's folder already holds.
    Nothing,
}

/// The teammate commits the planted entry and a good memory with the git CLI (no teammem, no
/// hook) and pushes.
fn mate_plants(team: &Team, rel: &str, planted: &Planted) {
    let sb = &team.sb;
    write_memory(
        &team.mate,
        "project",
        "mate-good",
        "The teammate's good memory.\n",
    );
    let path = format!("{TEAM}/{rel}");
    match planted {
        Planted::Symlink(target) => {
            std::os::unix::fs::symlink(target, team.mate.join(&path)).unwrap();
            sb.git(&team.mate, ["add", "-A"]);
        }
        Planted::Gitlink => {
            sb.git(&team.mate, ["add", "-A"]);
            let tip = team.rev(&team.mate, "HEAD");
            let info = format!("160000,{tip},{path}");
            sb.git(
                &team.mate,
                ["update-index", "--add", "--cacheinfo", info.as_str()],
            );
        }
        Planted::Nothing => {
            sb.git(&team.mate, ["add", "-A"]);
        }
    }
    sb.git(
        &team.mate,
        ["commit", "-q", "--no-verify", "-m", "mate: plant an entry"],
    );
    sb.git(&team.mate, ["push", "-q", "origin", "main"]);
}

/// The planted entry as the remote's `main` holds it (`ls-tree` line: mode, type, id, path).
fn entry_on_remote(sb: &Sandbox, bare: &Path, rel: &str) -> String {
    sb.git(bare, ["ls-tree", "main", &format!("{TEAM}/{rel}")])
}

/// One sync of the victim after writing its own memory `slug`: it must finish and push.
fn victim_syncs(team: &Team, slug: &str) -> Value {
    write_memory(&team.me, "project", slug, "The victim's own memory.\n");
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(report["quarantined"], Value::Array(vec![]), "{report:#}");
    report
}

/// The report's `withheld` lines naming `rel`.
fn named(report: &Value, rel: &str) -> Vec<Value> {
    report["withheld"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|w| w["path"] == format!("{TEAM}/{rel}"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The whole scenario for one planted entry.
fn planted_entry_withholds_only_itself(rel: &str, planted: Planted, because: &str) {
    let team = Team::new();
    let sb = &team.sb;
    mate_plants(&team, rel, &planted);
    let planted_before = entry_on_remote(sb, &team.bare, rel);
    assert!(!planted_before.is_empty());

    // The sync that brings the entry in names it, in one line, with its reason.
    let first = victim_syncs(&team, "victim-one");
    assert_eq!(first["pulled"], true, "{first:#}");
    let lines = named(&first, rel);
    assert_eq!(lines.len(), 1, "{first:#}");
    let why = lines[0]["reasons"][0].as_str().unwrap();
    assert!(why.contains(because), "{why}");
    assert!(why.contains("left as git checked it out"), "{why}");
    let second = victim_syncs(&team, "victim-two");
    assert!(named(&second, rel).is_empty(), "{second:#}");

    // The victim's memories reached the remote; the planted entry is there as the teammate
    // committed it, neither re-committed nor deleted.
    let remote = files_at(sb, &team.bare, "main");
    for slug in ["victim-one", "victim-two", "mate-good"] {
        assert!(
            remote.contains(&format!("{TEAM}/project/{slug}.md")),
            "{remote}"
        );
    }
    assert_eq!(entry_on_remote(sb, &team.bare, rel), planted_before);
    let index = sb.git(&team.bare, ["show", &format!("main:{TEAM}/MEMORY.md")]);
    assert!(index.contains("victim-two"), "{index}");
    assert!(!index.contains(rel), "{index}");

    // The teammate's good memory reached the victim; nothing teammem did shows in git status.
    assert!(team.me.join(TEAM).join("project/mate-good.md").is_file());
    assert_eq!(team.status(&team.me), "");

    // Session start (which syncs too) delivers the good memories and nothing read through
    // the entry.
    let start = sb.teammem(&team.me, ["session-start", "--hook", "qwen"]);
    start.expect_code(0);
    let context = common::hook_context(&start, "SessionStart");
    for title in ["Release train", "mate good", "victim two"] {
        assert!(context.contains(title), "{title}: {context}");
    }
    assert!(!context.contains("root:"), "{context}");
    assert_eq!(team.status(&team.me), "");
    assert_eq!(entry_on_remote(sb, &team.bare, rel), planted_before);
}

#[test]
fn a_pushed_symlink_to_etc_passwd_withholds_only_itself() {
    planted_entry_withholds_only_itself(
        "project/passwd.md",
        Planted::Symlink("/etc/passwd".into()),
        "a symlink that points outside the team folder",
    );
}

#[test]
fn a_pushed_dangling_symlink_withholds_only_itself() {
    planted_entry_withholds_only_itself(
        "project/gone.md",
        Planted::Symlink("nowhere.md".into()),
        "a symlink that points nowhere",
    );
}

#[test]
fn a_pushed_gitlink_withholds_only_itself() {
    // Named like a memory: no step may take the commit it names for a file.
    planted_entry_withholds_only_itself("project/module.md", Planted::Gitlink, "a gitlink");
}

/// A symlink the user makes in the team folder — to a file outside it, or to a memory inside
/// it — is never published: each is quarantined (named, with the fix), never followed, and the
/// user's other memories are committed and pushed; the next sync says the same again.
#[test]
fn a_symlink_the_user_makes_is_quarantined_and_the_rest_is_published() {
    let team = Team::new();
    let sb = &team.sb;
    let outside = sb.path().join("outside.md");
    fs::write(
        &outside,
        "---\nname: Outside\ndescription: x\ntype: project\n---\nroot:x\n",
    )
    .unwrap();
    let links = ["project/out.md", "project/alias.md"];
    std::os::unix::fs::symlink(&outside, team.me.join(TEAM).join(links[0])).unwrap();
    std::os::unix::fs::symlink("release-train.md", team.me.join(TEAM).join(links[1])).unwrap();

    for slug in ["mine-one", "mine-two"] {
        write_memory(&team.me, "project", slug, "My own memory.\n");
        let report = sync_json(sb, &team.me, &[], &[]);
        assert_eq!(reason(&report), "", "{report:#}");
        assert_eq!(report["pushed"], true, "{report:#}");
        let quarantined = report["quarantined"].as_array().unwrap();
        assert_eq!(quarantined.len(), 2, "{report:#}");
        for (held, rel) in quarantined.iter().zip(links.iter().rev()) {
            assert_eq!(held["path"], format!("{TEAM}/{rel}"), "{report:#}");
            let why = held["reasons"][0].as_str().unwrap();
            assert!(
                why.contains("path-symlink") && why.contains("delete it"),
                "{why}"
            );
        }
    }
    let remote = files_at(sb, &team.bare, "main");
    assert!(
        remote.contains(&format!("{TEAM}/project/mine-two.md")),
        "{remote}"
    );
    for rel in links {
        assert!(!remote.contains(rel), "{remote}");
    }
    let index = sb.git(&team.bare, ["show", &format!("main:{TEAM}/MEMORY.md")]);
    assert!(
        !index.contains("out.md") && !index.contains("alias.md"),
        "{index}"
    );
    // Both links are still there, untouched, for the user to replace.
    for rel in links {
        let meta = fs::symlink_metadata(team.me.join(TEAM).join(rel)).unwrap();
        assert!(meta.file_type().is_symlink(), "{rel}");
    }
}

/// A folder where the generated `MEMORY.md` belongs, pulled by a plain fast-forward: the
/// victim's next syncs still commit and push its own memories, and leave the folder as git
/// checked it out.
#[test]
fn a_pushed_memory_md_folder_withholds_only_itself() {
    let team = Team::new();
    let sb = &team.sb;
    let index = team.mate.join(TEAM).join("MEMORY.md");
    fs::remove_file(&index).unwrap();
    common::write(&index.join("note.md"), "not an index\n");
    mate_plants(&team, "MEMORY.md", &Planted::Nothing);
    let planted_before = entry_on_remote(sb, &team.bare, "MEMORY.md");

    let pulled = sync_json(sb, &team.me, &[], &[]);
    assert_eq!(reason(&pulled), "", "{pulled:#}");
    assert_eq!(pulled["pulled"], true, "{pulled:#}");
    assert_eq!(named(&pulled, "MEMORY.md").len(), 1, "{pulled:#}");
    victim_syncs(&team, "victim-one");
    victim_syncs(&team, "victim-two");

    let remote = files_at(sb, &team.bare, "main");
    assert!(
        remote.contains(&format!("{TEAM}/project/victim-two.md")),
        "{remote}"
    );
    assert_eq!(entry_on_remote(sb, &team.bare, "MEMORY.md"), planted_before);
    assert!(team.me.join(TEAM).join("project/mate-good.md").is_file());
    assert_eq!(team.status(&team.me), "");
    let start = sb.teammem(&team.me, ["session-start", "--hook", "qwen"]);
    start.expect_code(0);
    let context = common::hook_context(&start, "SessionStart");
    for title in ["Release train", "mate good", "victim two"] {
        assert!(context.contains(title), "{title}: {context}");
    }
}

/// The line naming a planted entry prints its name as every other path is printed: a token in
/// it redacted, a terminal escape escaped.
#[test]
fn a_planted_entry_is_named_redacted_and_escaped() {
    let team = Team::new();
    let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
    let rel = format!("project/{token}\u{1b}[2J.md");
    mate_plants(&team, &rel, &Planted::Symlink("/etc/passwd".into()));

    write_memory(
        &team.me,
        "project",
        "victim-one",
        "The victim's own memory.\n",
    );
    let run = team.sb.teammem(&team.me, ["sync"]);
    run.expect_code(0);
    assert!(
        run.stdout.contains("1 teammate file(s) withheld"),
        "{}",
        run.stdout
    );
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("withheld .qwen/team-memory/project/"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains("a symlink that points outside the team folder"),
        "{}",
        lines[0]
    );
    for output in [&run.stdout, &run.stderr] {
        assert!(!output.contains(token), "{output}");
        assert!(!output.contains('\u{1b}'), "{output:?}");
    }
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains("project/victim-one.md"), "{remote}");
}

/// A type folder committed as a symlink to a folder outside the team folder is never
/// followed: not even sync's clean-up of its own stale temp files reaches through it.
#[test]
fn a_pushed_symlinked_type_folder_is_never_followed() {
    let team = Team::new();
    let outside = team.sb.path().join("outside");
    // Named like a temp file a dead sync left (a PID no process has).
    let bait = outside.join(".keep.md.4194000.tmp");
    common::write(&bait, "not teammem's\n");
    let target = outside.display().to_string();
    mate_plants(&team, "reference", &Planted::Symlink(target));

    let first = victim_syncs(&team, "victim-one");
    let lines = named(&first, "reference");
    assert_eq!(lines.len(), 1, "{first:#}");
    assert!(
        lines[0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("a symlink that points outside the team folder"),
        "{first:#}"
    );
    victim_syncs(&team, "victim-two");
    assert_eq!(fs::read_to_string(&bait).unwrap(), "not teammem's\n");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains("project/victim-two.md"), "{remote}");
    assert_eq!(team.status(&team.me), "");
}

/// The entry reached the victim through its own `git pull`, not a sync: sync does not name it
/// (it did not bring it), and does not stop for it either.
#[test]
fn an_entry_from_the_users_own_git_pull_does_not_stop_sync() {
    let team = Team::new();
    mate_plants(
        &team,
        "project/passwd.md",
        &Planted::Symlink("/etc/passwd".into()),
    );
    team.sb.git(&team.me, ["pull", "-q", "--ff-only"]);
    let report = victim_syncs(&team, "victim-one");
    assert!(named(&report, "project/passwd.md").is_empty(), "{report:#}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains("project/victim-one.md"), "{remote}");
    assert_eq!(team.status(&team.me), "");
}

/// Only what a pull brings is named: the user's own memory with a name longer than a
/// teammate's checkout takes (branch mode withholds such a name) is committed and pushed by
/// this sync, and not reported as a teammate's entry.
#[test]
fn the_users_own_long_name_is_not_named_as_a_teammates_entry() {
    let team = Team::new();
    crate::common::syncrun::mate_pushes_memory(&team.sb, &team.mate, "from-mate");
    let slug = "x".repeat(230);
    let report = victim_syncs(&team, &slug);
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report.get("withheld"), None, "{report:#}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(remote.contains(&slug), "{remote}");
}
