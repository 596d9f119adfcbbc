//! Repositories libgit2 cannot open — refs in reftable, objects in SHA-256 — synced in
//! current-branch mode through the git CLI (issue 41): a bare remote, a teammate using the
//! git CLI alone, and my own staged and unstaged work outside the team folder. The memory
//! crosses both ways; `git status`, `git fsck` and `git diff --cached` are as git would leave
//! them; a secret is refused; with the remote gone the commit is kept and `fetch-failed`
//! reported. Branch mode there: `git_only_branch.rs`.

use crate::common::syncrun::{files_at, reason, sync_json, write_memory};
use crate::common::{Sandbox, write};

use std::path::{Path, PathBuf};

const TEAM: &str = ".qwen/team-memory";

/// A bare remote (`remote_args` given to its `git init`), a teammate's clone with code and a
/// seeded memory pushed, and my clone (`my_args` given to `git clone`).
struct World {
    sb: Sandbox,
    remote: PathBuf,
    mate: PathBuf,
    me: PathBuf,
}

impl World {
    /// `None` when the machine's git cannot make such a repository (the reason printed).
    fn new(remote_args: &[&str], my_args: &[&str]) -> Option<World> {
        let sb = Sandbox::new();
        let mut init = vec!["init", "-q", "--bare", "-b", "main"];
        init.extend_from_slice(remote_args);
        init.push("remote.git");
        let made = sb.git_output(sb.path(), &init);
        if !made.status.success() {
            println!(
                "skipped: this git cannot make {remote_args:?}: {}",
                String::from_utf8_lossy(&made.stderr)
            );
            return None;
        }
        let remote = sb.path().join("remote.git");
        sb.git(sb.path(), ["clone", "-q", "remote.git", "mate"]);
        let mate = sb.path().join("mate");
        write(&mate.join("README.md"), "# project\n");
        write(&mate.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
        write_memory(&mate, "project", "seeded", "The first memory.\n");
        sb.git(&mate, ["add", "-A"]);
        sb.git(&mate, ["commit", "-q", "-m", "initial"]);
        sb.git(&mate, ["push", "-q", "origin", "main"]);
        let mut clone = vec!["clone", "-q"];
        clone.extend_from_slice(my_args);
        clone.extend(["remote.git", "me"]);
        let cloned = sb.git_output(sb.path(), &clone);
        if !cloned.status.success() {
            println!(
                "skipped: this git cannot clone with {my_args:?}: {}",
                String::from_utf8_lossy(&cloned.stderr)
            );
            return None;
        }
        let me = sb.path().join("me");
        Some(World {
            sb,
            remote,
            mate,
            me,
        })
    }

    /// The teammate commits a memory with the git CLI alone and pushes it.
    fn mate_pushes(&self, slug: &str) {
        write_memory(&self.mate, "project", slug, "From the teammate.\n");
        self.sb.git(&self.mate, ["add", "-A"]);
        self.sb
            .git(&self.mate, ["commit", "-q", "-m", &format!("mate: {slug}")]);
        self.sb.git(&self.mate, ["push", "-q", "origin", "main"]);
    }

    /// My staged and unstaged work outside the team folder, and the index entries there.
    fn outside(&self) -> Vec<String> {
        let text = |args: &[&str]| self.sb.git(&self.me, args);
        vec![
            text(&["diff", "--cached", "--binary", "--", ":!.qwen"]),
            text(&["diff", "--binary", "--", ":!.qwen"]),
            text(&["ls-files", "-s", "--", ":!.qwen"]),
        ]
    }

    fn fsck_clean(&self, dir: &Path) {
        let fsck = self.sb.git_output(dir, ["fsck", "--no-progress"]);
        assert!(
            fsck.status.success(),
            "git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
    }
}

/// The scenario every such repository goes through.
fn syncs_through_git(remote_args: &[&str], my_args: &[&str], format: (&str, &str)) {
    let Some(world) = World::new(remote_args, my_args) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let (question, answer) = format;
    assert_eq!(sb.git(me, ["rev-parse", question]).trim(), answer);

    // My own work outside the folder: a staged file and an unstaged edit.
    write(&me.join("src/staged.rs"), "// staged\n");
    sb.git(me, ["add", "src/staged.rs"]);
    write(&me.join("README.md"), "# project, edited\n");
    let before = world.outside();

    // Both ways in one sync: the teammate pushed, I wrote a memory.
    world.mate_pushes("from-mate");
    write_memory(me, "feedback", "from-me", "From me.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    for key in ["committed", "pulled", "pushed"] {
        assert_eq!(report[key], true, "{key}: {report:#}");
    }
    assert!(me.join(TEAM).join("project/from-mate.md").is_file());
    let remote = files_at(sb, &world.remote, "main");
    assert!(remote.contains("feedback/from-me.md"), "{remote}");
    let index = sb.git(&world.remote, ["show", &format!("main:{TEAM}/MEMORY.md")]);
    assert!(
        index.contains("feedback/from-me.md") && index.contains("project/from-mate.md"),
        "{index}"
    );
    assert_eq!(world.outside(), before, "work outside the folder changed");
    assert_eq!(
        sb.git(me, ["status", "--porcelain"]),
        " M README.md\nA  src/staged.rs\n"
    );
    world.fsck_clean(me);
    sb.git(&world.mate, ["pull", "-q", "--ff-only"]);
    assert!(world.mate.join(TEAM).join("feedback/from-me.md").is_file());
    let last = sb.git(me, ["log", "-1", "--format=%B"]);
    assert!(last.contains("Teammem-Sync: 1"), "{last}");

    // A memory holding a secret is quarantined: never committed, never pushed.
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    write_memory(me, "reference", "token", &format!("The token is {token}\n"));
    let report = sync_json(sb, me, &[], &[]);
    let quarantined = report["quarantined"].to_string();
    assert!(quarantined.contains("reference/token.md"), "{report:#}");
    assert!(!report.to_string().contains(&token));
    assert!(!files_at(sb, &world.remote, "main").contains("reference/token.md"));
    assert!(!files_at(sb, me, "HEAD").contains("reference/token.md"));
    std::fs::remove_file(me.join(TEAM).join("reference/token.md")).unwrap();

    // Offline: the remote is gone. The commit is kept, the fetch reported, and the next sync
    // with the remote back publishes it.
    let away = sb.path().join("remote-away.git");
    std::fs::rename(&world.remote, &away).unwrap();
    write_memory(me, "project", "offline", "Written offline.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert!(files_at(sb, me, "HEAD").contains("project/offline.md"));
    std::fs::rename(&away, &world.remote).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(sb, &world.remote, "main").contains("project/offline.md"));
    assert_eq!(world.outside(), before, "work outside the folder changed");
    world.fsck_clean(me);
    world.fsck_clean(&world.remote);

    // The folder is tracked on the current branch, an existing setup: `init` keeps
    // current-branch mode (branch mode through git: `git_only_branch.rs`).
    let run = sb.teammem(me, ["init"]);
    run.expect_code(0);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("Mode: current-branch mode")
            && said.contains("tracked on the current branch"),
        "{said}"
    );
}

#[test]
fn a_reftable_clone_syncs_through_git() {
    syncs_through_git(
        &[],
        &["--ref-format=reftable"],
        ("--show-ref-format", "reftable"),
    );
}

#[test]
fn a_sha256_clone_syncs_through_git() {
    syncs_through_git(
        &["--object-format=sha256"],
        &[],
        ("--show-object-format", "sha256"),
    );
}

/// The libgit2 path's rules hold through git too (a SHA-256 clone): two changes of one memory
/// merged line by line, two clashing ones kept side by side, an ignored memory neither
/// published nor listed, a staged removal refused, an oversized fetched file never pulled.
#[test]
fn a_sha256_clone_merges_keeps_refuses_as_the_libgit2_path_does() {
    let Some(world) = World::new(&["--object-format=sha256"], &[]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    let seeded = format!("{TEAM}/project/seeded.md");
    let lines = "one\ntwo\nthree\nfour\nfive\nsix\n";
    write_memory(mate, "project", "seeded", lines);
    sb.git(mate, ["commit", "-q", "-am", "mate: lines"]);
    sb.git(mate, ["push", "-q", "origin", "main"]);
    sync_json(sb, me, &[], &[]);
    // My sync published the regenerated MEMORY.md.
    sb.git(mate, ["pull", "-q", "--ff-only"]);

    // Different lines: merged by git.
    let edit = |dir: &Path, from: &str, to: &str| {
        let path = dir.join(&seeded);
        let text = std::fs::read_to_string(&path).unwrap();
        write(&path, &text.replace(from, to));
    };
    edit(mate, "one", "one, the teammate's");
    sb.git(mate, ["commit", "-q", "-am", "mate: one"]);
    sb.git(mate, ["push", "-q", "origin", "main"]);
    edit(me, "six", "six, mine");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    let merged = sb.git(&world.remote, ["show", &format!("main:{seeded}")]);
    assert!(
        merged.contains("one, the teammate's") && merged.contains("six, mine"),
        "{merged}"
    );
    assert!(
        report["warnings"].to_string().contains("merged"),
        "{report:#}"
    );

    // The same line: theirs at the path, mine beside it, both published.
    sb.git(mate, ["pull", "-q", "--ff-only"]);
    edit(mate, "three", "three, the teammate's");
    sb.git(mate, ["commit", "-q", "-am", "mate: three"]);
    sb.git(mate, ["push", "-q", "origin", "main"]);
    edit(me, "three", "three, mine");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    let remote = files_at(sb, &world.remote, "main");
    let copy = remote
        .lines()
        .find(|l| l.contains("seeded.md.conflict-"))
        .unwrap_or_else(|| panic!("no copy kept: {remote}"))
        .to_string();
    assert!(
        sb.git(&world.remote, ["show", &format!("main:{copy}")])
            .contains("three, mine")
    );
    assert!(
        sb.git(&world.remote, ["show", &format!("main:{seeded}")])
            .contains("three, the teammate's")
    );
    assert!(
        report["warnings"].to_string().contains("beside it"),
        "{report:#}"
    );
    assert_eq!(sb.git(me, ["status", "--porcelain", "--", ".qwen"]), "");

    // A memory git ignores here: not published, not in MEMORY.md, the rule named.
    write(
        &me.join(".git/info/exclude"),
        "/.qwen/team-memory/project/hidden.md\n",
    );
    write_memory(me, "project", "hidden", "Ignored here.\n");
    write_memory(me, "project", "shown", "Not ignored.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("project/hidden.md") && warnings.contains(".git/info/exclude:1:"),
        "{warnings}"
    );
    let index = sb.git(&world.remote, ["show", &format!("main:{TEAM}/MEMORY.md")]);
    assert!(
        index.contains("project/shown.md") && !index.contains("hidden"),
        "{index}"
    );
    assert!(!files_at(sb, &world.remote, "main").contains("hidden.md"));

    // `git rm --cached` of a memory still on disk: refused, never committed back.
    sb.git(
        me,
        ["rm", "-q", "--cached", &format!("{TEAM}/project/shown.md")],
    );
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "staged-removal", "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("git restore --staged")
    );
    assert_eq!(
        sb.git(me, ["status", "--porcelain", "--", ".qwen"]),
        format!("D  {TEAM}/project/shown.md\n?? {TEAM}/project/shown.md\n")
    );
    sb.git(
        me,
        ["restore", "--staged", &format!("{TEAM}/project/shown.md")],
    );

    // An oversized file from the teammate: never pulled.
    sb.git(mate, ["pull", "-q", "--ff-only"]);
    write(
        &mate.join(TEAM).join("project/huge.md"),
        &"x".repeat(70 * 1024),
    );
    sb.git(mate, ["add", "-A"]);
    sb.git(mate, ["commit", "-q", "-m", "mate: huge"]);
    sb.git(mate, ["push", "-q", "origin", "main"]);
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "too-large", "{report:#}");
    assert!(report["warnings"].to_string().contains("project/huge.md"));
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert!(!me.join(TEAM).join("project/huge.md").exists());
    world.fsck_clean(me);
}

/// No program the repository's config names runs on the git path: hooks (`reference-transaction`
/// runs on every ref update git makes), fsmonitor, a filter driver on the files a pull checks
/// out.
#[test]
fn no_planted_program_runs_on_the_git_path() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    let marker = sb.path().join("planted-ran");
    let script = sb.path().join("planted/run");
    write(
        &script,
        &format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = sb.path().join("planted/hooks");
    for hook in [
        "reference-transaction",
        "post-checkout",
        "post-merge",
        "pre-push",
        "post-index-change",
    ] {
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::copy(&script, hooks.join(hook)).unwrap();
    }
    let script = script.to_str().unwrap();
    sb.git(me, ["config", "core.hooksPath", hooks.to_str().unwrap()]);
    sb.git(me, ["config", "core.fsmonitor", script]);
    sb.git(me, ["config", "filter.planted.smudge", script]);
    sb.git(me, ["config", "filter.planted.clean", script]);
    sb.git(me, ["config", "filter.planted.required", "true"]);

    write(&mate.join(".gitattributes"), "*.bin filter=planted\n");
    write(&mate.join("data.bin"), "raw bytes\n");
    world.mate_pushes("with-data");
    write_memory(me, "feedback", "mine", "Mine.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(!marker.exists(), "a planted program ran");
    assert_eq!(
        std::fs::read_to_string(me.join("data.bin")).unwrap(),
        "raw bytes\n"
    );
    assert!(me.join(TEAM).join("project/with-data.md").is_file());
}

/// A teammate's `.gitattributes` in the team folder gives every file a `filter` naming a driver
/// no config defines: git stores such files as they are, and so does the git path — nothing is
/// held back, and my own memory is published.
#[test]
fn a_filter_attribute_naming_no_driver_holds_nothing_back() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    write(
        &mate.join(TEAM).join(".gitattributes"),
        "* filter=nonesuch\n",
    );
    world.mate_pushes("under-attributes");
    write_memory(me, "feedback", "mine", "Mine.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["quarantined"], serde_json::json!([]), "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(sb, &world.remote, "main").contains("feedback/mine.md"));
    assert!(me.join(TEAM).join("project/under-attributes.md").is_file());
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
}

/// A driver the user's own config defines would change what is stored: the file it applies to
/// is held back alone, naming the driver, and never stored through it; the rest is published.
#[test]
fn a_team_file_a_defined_filter_driver_applies_to_is_held_back_alone() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    write(
        &mate.join(TEAM).join(".gitattributes"),
        "project/odd.md filter=real\n",
    );
    world.mate_pushes("odd");
    let script = sb.path().join("filter");
    write(&script, "#!/bin/sh\ncat\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.git(
        sb.path(),
        [
            "config",
            "--global",
            "filter.real.clean",
            script.to_str().unwrap(),
        ],
    );
    write_memory(me, "feedback", "mine", "Mine.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let quarantined = report["quarantined"].as_array().unwrap();
    assert_eq!(quarantined.len(), 1, "{report:#}");
    let text = quarantined[0].to_string();
    assert!(
        text.contains("project/odd.md") && text.contains("filter driver `real`"),
        "{text}"
    );
    // The teammate's file stays on the remote as the teammate stored it.
    assert_eq!(
        sb.git(
            &world.remote,
            ["rev-parse", "main:.qwen/team-memory/project/odd.md"]
        ),
        sb.git(mate, ["rev-parse", "HEAD:.qwen/team-memory/project/odd.md"])
    );
    assert!(files_at(sb, &world.remote, "main").contains("feedback/mine.md"));
}

/// A teammate's memories with names git's one-path-per-line input cannot carry (a line break,
/// a leading `"` it would unquote, a final carriage return it would drop): each sync goes
/// through and publishes mine, and theirs arrive as named.
#[test]
fn names_a_line_protocol_cannot_carry_do_not_wedge_the_sync() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    let odd = ["new\nline.md", "\"quoted.md", "trailing.md\r"];
    for name in odd {
        write(
            &mate.join(TEAM).join("project").join(name),
            &crate::common::memory_text("odd", "an odd name", "project", "Odd.\n"),
        );
    }
    world.mate_pushes("plain");
    for round in ["first", "second"] {
        write_memory(me, "feedback", &format!("mine-{round}"), "Mine.\n");
        let report = sync_json(sb, me, &[], &[]);
        assert_eq!(reason(&report), "", "{round}: {report:#}");
        assert_eq!(report["pushed"], true, "{round}: {report:#}");
        assert!(
            files_at(sb, &world.remote, "main").contains(&format!("feedback/mine-{round}.md")),
            "{round}"
        );
    }
    for name in odd {
        assert!(
            me.join(TEAM).join("project").join(name).is_file(),
            "{name:?} did not arrive"
        );
    }
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
}

/// As on the libgit2 path (`configs.rs`): a pulled path no checkout can write is refused
/// before `read-tree` writes anything, and once removed the sync goes through.
#[test]
fn a_pulled_path_no_checkout_can_write_is_refused_through_git_too() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    let folder = crate::common::syncrun::mate_pushes_unwritable_path(sb, mate);
    write_memory(me, "feedback", "mine", "Waits for the pull.\n");
    for round in ["first", "second"] {
        let report = sync_json(sb, me, &[], &[]);
        assert_eq!(reason(&report), "unwritable", "{round}: {report:#}");
        assert!(
            report["warnings"].to_string().contains(&folder),
            "{round}: {report:#}"
        );
        assert_eq!(sb.git(me, ["status", "--porcelain"]), "", "{round}");
    }
    sb.git(mate, ["rm", "-r", "-q", "--cached", &folder]);
    sb.git(mate, ["commit", "-q", "-m", "mate: removed"]);
    sb.git(mate, ["push", "-q", "origin", "HEAD"]);
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert!(files_at(sb, &world.remote, "main").contains("feedback/mine.md"));
}

/// `baseline --scope team` in a repository libgit2 cannot open: the baseline is kept beside
/// the other scopes' (a bare repository in the team scope's state folder), and the diff sees
/// what was added, recorded and changed.
#[test]
fn the_team_baseline_works_in_reftable_and_sha256_clones() {
    for (remote_args, my_args) in [
        (&[][..], &["--ref-format=reftable"][..]),
        (&["--object-format=sha256"][..], &[][..]),
    ] {
        let Some(world) = World::new(remote_args, my_args) else {
            continue;
        };
        let (sb, me) = (&world.sb, &world.me);
        let diff = |what: &str| {
            let run = sb.teammem(me, ["baseline", "diff", "--scope", "team"]);
            run.expect_code(0);
            assert!(
                run.stdout.contains(what),
                "{my_args:?}: {what:?} not in {}",
                run.stdout
            );
        };
        diff("- A project/seeded.md");
        sb.teammem(me, ["baseline", "commit", "--scope", "team"])
            .expect_code(0);
        diff("- none");
        write_memory(me, "project", "seeded", "Edited since the baseline.\n");
        diff("- M project/seeded.md");
    }
}

/// `init --branch --migrate` in a reftable clone whose current branch tracks the team folder:
/// the folder's removal is committed on the current branch alone (my staged work outside it
/// stays staged, every file on disk stays), and the memories live on the memory branch.
#[test]
fn init_branch_migrate_commits_the_folders_removal_through_git() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"]) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    write(&me.join("src/staged.rs"), "// staged\n");
    sb.git(me, ["add", "src/staged.rs"]);
    let run = sb.teammem(me, ["init", "--branch", "--migrate"]);
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("Committed the removal of .qwen/team-memory/"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    let head = sb.git(me, ["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!head.contains(".qwen"), "{head}");
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "A  src/staged.rs\n");
    assert!(me.join(TEAM).join("project/seeded.md").is_file());
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert!(files_at(sb, &world.remote, "team-memory").contains("project/seeded.md"));
}
