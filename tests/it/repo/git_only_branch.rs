//! Branch mode in repositories libgit2 cannot open — refs in reftable, objects in SHA-256 —
//! through the git CLI (issue 41): a bare remote of the same format, a teammate using the git
//! CLI alone on `team-memory`, and my own staged and unstaged work outside the team folder.
//! The memory crosses both ways on the memory branch; HEAD, the index and `git status` stay as
//! I left them; a secret is quarantined; a crafted entry is withheld while the rest flows; two
//! edits of one memory keep both versions; with the remote gone the record commit is kept and
//! the next sync pushes it; `teammem init` chooses branch mode.

use crate::common::syncrun::{files_at, reason, sync_json, write_memory};
use crate::common::{Sandbox, write};

use std::path::{Path, PathBuf};

const TEAM: &str = ".qwen/team-memory";

/// A bare remote (`remote_args` given to its `git init`) whose `main` holds code and whose
/// `team-memory` holds a seeded memory, pushed by a teammate's clone; and my clone
/// (`my_args` given to `git clone`).
pub(super) struct World {
    pub(super) sb: Sandbox,
    pub(super) remote: PathBuf,
    pub(super) mate: PathBuf,
    pub(super) me: PathBuf,
}

impl World {
    /// `None` when the machine's git cannot make such a repository (the reason printed).
    pub(super) fn new(remote_args: &[&str], my_args: &[&str], with_branch: bool) -> Option<World> {
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
        sb.git(&mate, ["add", "-A"]);
        sb.git(&mate, ["commit", "-q", "-m", "initial"]);
        sb.git(&mate, ["push", "-q", "origin", "main"]);
        if with_branch {
            sb.git(&mate, ["switch", "-q", "--orphan", "team-memory"]);
            write_memory(&mate, "project", "seeded", "one\ntwo\nthree\n");
            sb.git(&mate, ["add", "-A"]);
            sb.git(&mate, ["commit", "-q", "-m", "seed the memory branch"]);
            sb.git(&mate, ["push", "-q", "-u", "origin", "team-memory"]);
        }
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

    /// The teammate, on `team-memory`, commits what `change` did and pushes it.
    pub(super) fn mate_pushes(&self, message: &str, change: impl FnOnce(&Path)) {
        self.sb.git(&self.mate, ["pull", "-q", "--ff-only"]);
        change(&self.mate);
        self.sb.git(&self.mate, ["add", "-A"]);
        self.sb.git(&self.mate, ["commit", "-q", "-m", message]);
        self.sb
            .git(&self.mate, ["push", "-q", "origin", "team-memory"]);
    }

    /// The teammate pushes a commit on `team-memory` whose `project/` folder also holds a
    /// `.GIT` folder: a tree no `git add` makes, built with `git mktree`.
    fn mate_pushes_dot_git(&self) {
        let (sb, mate) = (&self.sb, &self.mate);
        let blob = git_with_input(sb, mate, &["hash-object", "-w", "--stdin"], "planted\n");
        let inner = git_with_input(
            sb,
            mate,
            &["mktree"],
            &format!("100644 blob {blob}\tconfig\n"),
        );
        let mut below = format!("040000 tree {inner}\t.GIT\n");
        // From the innermost folder out: each level with the one below replaced.
        let levels = [
            ("HEAD:.qwen/team-memory/project".to_string(), None),
            ("HEAD:.qwen/team-memory".to_string(), Some("project")),
            ("HEAD:.qwen".to_string(), Some("team-memory")),
            ("HEAD".to_string(), Some(".qwen")),
        ];
        let mut made = String::new();
        for (tree, replaced) in levels {
            let listing = sb.git(mate, ["ls-tree", &tree]);
            let mut lines: String = listing
                .lines()
                .filter(|l| replaced.is_none_or(|name| !l.ends_with(&format!("\t{name}"))))
                .map(|l| format!("{l}\n"))
                .collect();
            match replaced {
                None => lines.push_str(&below),
                Some(name) => lines.push_str(&format!("040000 tree {made}\t{name}\n")),
            }
            made = git_with_input(sb, mate, &["mktree"], &lines);
            below.clear();
        }
        let commit = sb.git(
            mate,
            ["commit-tree", &made, "-p", "HEAD", "-m", "mate: crafted"],
        );
        sb.git(
            mate,
            ["update-ref", "refs/heads/team-memory", commit.trim()],
        );
        sb.git(mate, ["push", "-q", "origin", "team-memory"]);
        // No checkout can hold it: the teammate's index stays as it was, so their next commit
        // drops it again.
    }

    /// What the teammate sees of `path` in the team folder on the remote's memory branch,
    /// after a fetch (`git show origin/team-memory:…`).
    pub(super) fn mate_sees(&self, path: &str) -> Option<String> {
        self.sb.git(&self.mate, ["fetch", "-q", "origin"]);
        let shown = self.sb.git_output(
            &self.mate,
            ["show", &format!("origin/team-memory:{TEAM}/{path}")],
        );
        shown
            .status
            .success()
            .then(|| String::from_utf8_lossy(&shown.stdout).into_owned())
    }

    /// My HEAD, my staged and unstaged work outside the folder, and the index's entries there.
    pub(super) fn outside(&self) -> Vec<String> {
        let text = |args: &[&str]| self.sb.git(&self.me, args);
        vec![
            text(&["rev-parse", "HEAD"]),
            text(&["symbolic-ref", "HEAD"]),
            text(&["diff", "--cached", "--binary"]),
            text(&["diff", "--binary"]),
            text(&["ls-files", "-s"]),
        ]
    }

    pub(super) fn fsck_clean(&self, dir: &Path) {
        let fsck = self.sb.git_output(dir, ["fsck", "--no-progress"]);
        assert!(
            fsck.status.success(),
            "git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
    }
}

/// The scenario every such repository goes through in branch mode.
fn branch_mode_through_git(remote_args: &[&str], my_args: &[&str], format: (&str, &str)) {
    let Some(world) = World::new(remote_args, my_args, true) else {
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

    // Both ways in one sync: the teammate pushed to the memory branch, I wrote a memory.
    world.mate_pushes("mate: from-mate", |mate| {
        write_memory(mate, "project", "from-mate", "From the teammate.\n");
    });
    write_memory(me, "feedback", "from-me", "From me.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["mode"], "branch", "{report:#}");
    for key in ["committed", "pulled", "pushed"] {
        assert_eq!(report[key], true, "{key}: {report:#}");
    }
    assert!(me.join(TEAM).join("project/seeded.md").is_file());
    assert!(me.join(TEAM).join("project/from-mate.md").is_file());
    let mine = world.mate_sees("feedback/from-me.md").expect("published");
    assert!(mine.contains("From me."), "{mine}");
    let index = world.mate_sees("MEMORY.md").unwrap();
    assert!(
        index.contains("feedback/from-me.md") && index.contains("project/from-mate.md"),
        "{index}"
    );
    let on_disk = std::fs::read_to_string(me.join(TEAM).join("MEMORY.md")).unwrap();
    assert!(on_disk.contains("project/from-mate.md"), "{on_disk}");
    // Nothing of the memory branch reached HEAD, the index or `git status`.
    assert_eq!(
        world.outside(),
        before,
        "HEAD or work outside the folder changed"
    );
    assert_eq!(
        sb.git(me, ["status", "--porcelain"]),
        " M README.md\nA  src/staged.rs\n"
    );
    assert!(
        !files_at(sb, &world.remote, "main").contains(".qwen"),
        "the code branch got memory"
    );
    assert_eq!(
        sb.git(
            &world.remote,
            ["log", "--merges", "--format=%h", "team-memory"]
        ),
        ""
    );
    world.fsck_clean(me);

    // A memory holding a secret is quarantined: never recorded, never pushed.
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    write_memory(me, "reference", "token", &format!("The token is {token}\n"));
    let report = sync_json(sb, me, &[], &[]);
    let quarantined = report["quarantined"].to_string();
    assert!(quarantined.contains("reference/token.md"), "{report:#}");
    assert!(!report.to_string().contains(&token));
    assert!(world.mate_sees("reference/token.md").is_none());
    assert!(!files_at(sb, me, "team-memory").contains("reference/token.md"));
    std::fs::remove_file(me.join(TEAM).join("reference/token.md")).unwrap();

    // A crafted entry from the teammate (a symlink) is withheld; the rest of the push flows.
    world.mate_pushes("mate: a link and a memory", |mate| {
        std::os::unix::fs::symlink("/etc/passwd", mate.join(TEAM).join("project/link.md")).unwrap();
        write_memory(mate, "project", "beside-link", "Fine.\n");
        let token = format!("ghp_{}", "zY3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM7");
        write_memory(
            mate,
            "reference",
            "mate-token",
            &format!("Theirs: {token}\n"),
        );
    });
    world.mate_pushes_dot_git();
    let report = sync_json(sb, me, &[], &[]);
    let withheld = report["withheld"].to_string();
    assert!(withheld.contains("project/link.md"), "{report:#}");
    assert!(withheld.contains("project/.GIT"), "{report:#}");
    // A teammate's memory the gate refuses is never written either.
    assert!(withheld.contains("reference/mate-token.md"), "{report:#}");
    assert!(!me.join(TEAM).join("reference/mate-token.md").exists());
    assert!(!me.join(TEAM).join("project/.GIT").exists());
    assert!(
        std::fs::symlink_metadata(me.join(TEAM).join("project/link.md")).is_err(),
        "the symlink was written"
    );
    assert!(me.join(TEAM).join("project/beside-link.md").is_file());
    // Not taken for a deletion by the next sync: the teammate's entry stays on the branch.
    write_memory(me, "project", "after-link", "After.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(files_at(sb, &world.remote, "team-memory").contains("project/link.md"));

    // Both edit the same line of one memory: theirs stays at the path, mine beside it.
    // …and a memory the teammate deletes goes from my folder.
    world.mate_pushes("mate: two", |mate| {
        std::fs::remove_file(mate.join(TEAM).join("project/from-mate.md")).unwrap();
        let path = mate.join(TEAM).join("project/seeded.md");
        let text = std::fs::read_to_string(&path).unwrap();
        write(&path, &text.replace("two", "two, the teammate's"));
    });
    let path = me.join(TEAM).join("project/seeded.md");
    let text = std::fs::read_to_string(&path).unwrap();
    write(&path, &text.replace("two", "two, mine"));
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(
        report["warnings"].to_string().contains("beside it"),
        "{report:#}"
    );
    let theirs = world.mate_sees("project/seeded.md").unwrap();
    assert!(theirs.contains("two, the teammate's"), "{theirs}");
    let remote_files = files_at(sb, &world.remote, "team-memory");
    let copy = remote_files
        .lines()
        .find(|l| l.contains("seeded.md.conflict-"))
        .unwrap_or_else(|| panic!("no copy kept: {remote_files}"))
        .to_string();
    let kept = sb.git(&world.remote, ["show", &format!("team-memory:{copy}")]);
    assert!(kept.contains("two, mine"), "{kept}");
    assert!(me.join(&copy).is_file(), "the copy is not in my folder");
    assert!(!me.join(TEAM).join("project/from-mate.md").exists());

    // Offline: the remote is gone. The record commit is kept on the memory branch, the fetch
    // reported, and the next sync with the remote back publishes it.
    let away = sb.path().join("remote-away.git");
    std::fs::rename(&world.remote, &away).unwrap();
    write_memory(me, "project", "offline", "Written offline.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], true, "{report:#}");
    assert!(files_at(sb, me, "team-memory").contains("project/offline.md"));
    std::fs::rename(&away, &world.remote).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("project/offline.md").is_some());

    assert_eq!(
        world.outside(),
        before,
        "HEAD or work outside the folder changed"
    );
    assert_eq!(
        sb.git(me, ["status", "--porcelain"]),
        " M README.md\nA  src/staged.rs\n"
    );
    let exclude = std::fs::read_to_string(me.join(".git/info/exclude")).unwrap();
    assert!(exclude.contains("/.qwen/team-memory/"), "{exclude}");
    world.fsck_clean(me);
    world.fsck_clean(&world.remote);
}

/// Runs git in `dir` with `input` on stdin; its output, trimmed.
fn git_with_input(sb: &Sandbox, dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut cmd = std::process::Command::new("git");
    sb.isolate(&mut cmd)
        .current_dir(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_reftable_clone_syncs_its_memory_branch_through_git() {
    branch_mode_through_git(
        &[],
        &["--ref-format=reftable"],
        ("--show-ref-format", "reftable"),
    );
}

#[test]
fn a_sha256_clone_syncs_its_memory_branch_through_git() {
    branch_mode_through_git(
        &["--object-format=sha256"],
        &[],
        ("--show-object-format", "sha256"),
    );
}

/// A fresh reftable clone of a remote with no memory branch: `teammem init` chooses branch
/// mode, as it does elsewhere, and the first sync publishes `team-memory` with my memory.
#[test]
fn init_in_a_fresh_reftable_clone_chooses_branch_mode() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"], false) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    let run = sb.teammem(me, ["init"]);
    run.expect_code(0);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("Mode: branch mode (team-memory)") && said.contains("Branch mode:"),
        "{said}"
    );
    assert_eq!(
        sb.git(me, ["config", "teammem.branch"]).trim(),
        "team-memory"
    );
    write_memory(me, "project", "first", "The first memory.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["mode"], "branch", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("project/first.md").is_some());
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
    world.fsck_clean(me);
}

/// A protected memory branch (the remote's `pre-receive` hook refuses it) in a SHA-256 clone:
/// my memory is proposed on `team-memory-proposals/<me>`, the memory branch stays as it was,
/// and a second sync proposes on the same branch, not a new one.
#[test]
fn a_refused_push_is_proposed_through_git() {
    let Some(world) = World::new(&["--object-format=sha256"], &[], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let hook = world.remote.join("hooks/pre-receive");
    write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/team-memory ]; then\n    echo 'team-memory is protected' >&2; exit 1\n  fi\ndone\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let protected_tip = sb.git(&world.remote, ["rev-parse", "team-memory"]);

    write_memory(me, "project", "proposed", "Please merge.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "proposed", "{report:#}");
    let proposal = report["proposal"].as_str().unwrap().to_string();
    assert!(proposal.starts_with("team-memory-proposals/"), "{report:#}");
    assert!(
        report["warnings"].to_string().contains("protected"),
        "{report:#}"
    );
    assert!(files_at(sb, &world.remote, &proposal).contains("project/proposed.md"));
    assert_eq!(
        sb.git(&world.remote, ["rev-parse", "team-memory"]),
        protected_tip
    );

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "proposed", "{report:#}");
    assert_eq!(report["proposal"], proposal.as_str(), "{report:#}");
    assert_eq!(
        sb.git(
            &world.remote,
            [
                "for-each-ref",
                "--format=%(refname)",
                "refs/heads/team-memory-proposals/"
            ]
        )
        .lines()
        .count(),
        1
    );

    // A maintainer merges it: the next sync converges, nothing recorded or proposed again.
    std::fs::remove_file(&hook).unwrap();
    sb.git(&world.mate, ["fetch", "-q", "origin"]);
    sb.git(
        &world.mate,
        [
            "push",
            "-q",
            "origin",
            &format!("refs/remotes/origin/{proposal}:refs/heads/team-memory"),
        ],
    );
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    assert_eq!(
        sb.git(me, ["rev-parse", "team-memory"]),
        sb.git(&world.remote, ["rev-parse", "team-memory"])
    );
    world.fsck_clean(me);
}

/// A protected memory branch in a SHA-256 clone whose proposal names someone spoiled: a branch
/// `team-memory-proposals/me/x` (the remote cannot create `…/me` beside it), `…/me-2` holding
/// a commit of theirs, `…/me-3/x`. After two refusals the numbered names are given up and my
/// memory is proposed on the name made from my commit, the report saying why each was passed
/// over, nothing of theirs adopted.
#[test]
fn spoiled_proposal_names_are_passed_over_through_git() {
    let Some(world) = World::new(&["--object-format=sha256"], &[], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    sb.git(me, ["config", "user.email", "me@example.com"]);
    let hook = world.remote.join("hooks/pre-receive");
    write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = refs/heads/team-memory ]; then\n    echo 'team-memory is protected' >&2; exit 1\n  fi\ndone\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["me/x", "me-2", "me-3/x"] {
        let refspec = format!("main:refs/heads/team-memory-proposals/{name}");
        sb.git(&world.mate, ["push", "-q", "origin", &refspec]);
    }

    write_memory(me, "project", "proposed", "Please merge.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "proposed", "{report:#}");
    let tip = sb.git(me, ["rev-parse", "team-memory"]).trim().to_string();
    let name = format!("team-memory-proposals/me-{}", &tip[..12]);
    assert_eq!(report["proposal"], name.as_str(), "{report:#}");
    let warnings = report["warnings"].to_string();
    for said in [
        "the remote refused to create or move team-memory-proposals/me (",
        "team-memory-proposals/me-2 holds commits this clone did not make",
        "the remote refused to create or move team-memory-proposals/me-3 (",
    ] {
        assert!(warnings.contains(said), "{said}\n{report:#}");
    }
    let files = files_at(sb, &world.remote, &name);
    assert!(files.contains("project/proposed.md"), "{files}");
    assert!(!files.contains("src/lib.rs"), "{files}");
    assert_eq!(sb.git(&world.remote, ["rev-parse", &name]).trim(), tip);
    world.fsck_clean(me);
}

/// Partial reftable clones (`--filter=blob:none`, `--filter=tree:0`): the teammate's memories
/// beside mine have no objects here, and `git mktree` will not fetch them, so every sync
/// failed. Now: offline, the first sync stops with one line and keeps my memory; online, my
/// memory is published, the teammate's are written, and a later teammate memory (fetched
/// with the clone's filter) arrives too.
#[test]
fn a_partial_reftable_clone_syncs_its_memory_branch_through_git() {
    for filter in ["blob:none", "tree:0"] {
        let Some(world) = World::new(&[], &[], true) else {
            return;
        };
        let sb = &world.sb;
        sb.git(&world.remote, ["config", "uploadpack.allowFilter", "true"]);
        let url = format!("file://{}", world.remote.display());
        let filter_arg = format!("--filter={filter}");
        let clone = [
            "clone",
            "-q",
            "--ref-format=reftable",
            &filter_arg,
            &url,
            "partial",
        ];
        sb.git(sb.path(), clone);
        let me = sb.path().join("partial");
        let missing = sb.git(
            &me,
            [
                "rev-list",
                "--objects",
                "--missing=print",
                "origin/team-memory",
            ],
        );
        assert!(
            missing.contains('?'),
            "{filter}: nothing left out\n{missing}"
        );

        write_memory(&me, "project", "mine", "My memory.\n");
        let away = sb.path().join("remote.away");
        std::fs::rename(&world.remote, &away).unwrap();
        let report = sync_json(sb, &me, &[], &[]);
        assert_eq!(reason(&report), "fetch-failed", "{filter}: {report:#}");
        assert!(
            report["warnings"]
                .to_string()
                .contains("this partial clone lacks files of team-memory"),
            "{filter}: {report:#}"
        );
        assert!(me.join(TEAM).join("project/mine.md").is_file());
        std::fs::rename(&away, &world.remote).unwrap();

        let report = sync_json(sb, &me, &[], &[]);
        assert_eq!(reason(&report), "", "{filter}: {report:#}");
        assert_eq!(report["pushed"], true, "{filter}: {report:#}");
        assert!(world.mate_sees("project/mine.md").is_some(), "{filter}");
        assert!(
            me.join(TEAM).join("project/seeded.md").is_file(),
            "{filter}"
        );

        world.mate_pushes("a later memory", |mate| {
            write_memory(mate, "project", "later", "From the teammate, later.\n");
        });
        write_memory(&me, "project", "second", "My second memory.\n");
        let report = sync_json(sb, &me, &[], &[]);
        assert_eq!(reason(&report), "", "{filter}: {report:#}");
        assert_eq!(report["pushed"], true, "{filter}: {report:#}");
        assert!(me.join(TEAM).join("project/later.md").is_file(), "{filter}");
        assert!(world.mate_sees("project/second.md").is_some(), "{filter}");
        assert_eq!(sb.git(&me, ["status", "--porcelain"]), "", "{filter}");
        world.fsck_clean(&me);
    }
}

/// A reftable `--single-branch` clone whose first sync runs with the remote unreachable
/// records nothing (it committed the memory onto `main`); once the remote answers, the memory
/// goes to `team-memory` and `main` is as cloned.
#[test]
fn a_single_branch_reftable_clone_offline_commits_nothing_on_main() {
    let Some(world) = World::new(&[], &["--ref-format=reftable", "--single-branch"], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    write_memory(me, "project", "mine", "From a single-branch clone.\n");
    let away = sb.path().join("remote.away");
    std::fs::rename(&world.remote, &away).unwrap();
    let report = sync_json(sb, me, &[], &[]);
    std::fs::rename(&away, &world.remote).unwrap();
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(report["committed"], false, "{report:#}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("sync cannot tell whether the team memory lives"),
        "{report:#}"
    );
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);

    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(report["mode"], "branch", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert!(world.mate_sees("project/mine.md").is_some());
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
}

/// A flood on the memory branch of a reftable clone is bounded as elsewhere: past
/// `teammem.maxMemories` the memories are withheld in one `too-many` line, the rest written.
#[test]
fn a_flood_is_bounded_through_git() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"], true) else {
        return;
    };
    let (sb, me) = (&world.sb, &world.me);
    world.mate_pushes("mate: a flood", |mate| {
        for n in 0..4 {
            write_memory(mate, "project", &format!("flood-{n}"), "One of many.\n");
        }
    });
    sb.git(me, ["fetch", "-q"]);
    sb.git(me, ["config", "teammem.maxMemories", "3"]);
    let report = sync_json(sb, me, &[], &[]);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains(
            "too-many: 2 memories past the memory branch's limit (teammem.maxMemories = 3)"
        ),
        "{report:#}"
    );
    let written = std::fs::read_dir(me.join(TEAM).join("project"))
        .unwrap()
        .count();
    assert_eq!(written, 3, "{report:#}");
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
}

/// A reftable clone made before the memory branch existed finds it in the remote's ref
/// advertisement: my memory goes onto `team-memory`, never onto the code branch.
#[test]
fn a_clone_older_than_the_memory_branch_finds_it_through_git() {
    let Some(world) = World::new(&[], &["--ref-format=reftable"], false) else {
        return;
    };
    let (sb, me, mate) = (&world.sb, &world.me, &world.mate);
    sb.git(mate, ["switch", "-q", "--orphan", "team-memory"]);
    write_memory(mate, "project", "seeded", "On the branch.\n");
    sb.git(mate, ["add", "-A"]);
    sb.git(mate, ["commit", "-q", "-m", "seed the memory branch"]);
    sb.git(mate, ["push", "-q", "-u", "origin", "team-memory"]);
    let head = sb.git(me, ["rev-parse", "HEAD"]);
    let main = sb.git(&world.remote, ["rev-parse", "main"]);

    write_memory(me, "feedback", "mine", "Mine.\n");
    let report = sync_json(sb, me, &[], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["mode"], "branch", "{report:#}");
    assert!(world.mate_sees("feedback/mine.md").is_some());
    assert!(me.join(TEAM).join("project/seeded.md").is_file());
    assert_eq!(sb.git(me, ["rev-parse", "HEAD"]), head);
    assert_eq!(sb.git(&world.remote, ["rev-parse", "main"]), main);
}
