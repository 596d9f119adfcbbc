//! The configuration matrix (issue 41): every repository configuration a team really has, in
//! both sync modes (current-branch, and branch mode set up with `init --branch`). Each case
//! has a bare remote, a teammate using the git CLI alone, and the user's own staged and
//! unstaged work outside the team folder. Either the memory crosses both ways in one sync each,
//! with `git status`, `git fsck`, the index entries and `git diff --cached` outside the folder
//! unchanged — or the sync refuses, its report naming the cause and the command that fixes it,
//! and nothing is pushed. A planted program (hook, fsmonitor, gpg) never runs.
//!
//! One table row per configuration; a row needing a newer git than the machine's is skipped
//! with the reason printed.

use crate::common::syncrun::{reason, teammem_env};
use crate::common::{Sandbox, memory_text, write};

use std::path::{Path, PathBuf};

use serde_json::Value;

const TEAM: &str = ".qwen/team-memory";

/// The two sync modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Sync commits on the current branch (the team folder tracked there).
    Current,
    /// The memory branch `team-memory`, set up in my clone with `teammem init --branch`.
    Branch,
}

/// A bare remote whose `main` holds code (and, in current-branch mode, the team folder), and
/// whose memory holds one seeded memory — all made with the git CLI alone, so a remote git
/// can make and teammem cannot open is made all the same.
struct World {
    sb: Sandbox,
    mode: Mode,
    remote: PathBuf,
    url: String,
}

/// What a row changes about the world before any clone.
#[derive(Clone, Copy, Default)]
struct WorldOptions {
    /// `.gitattributes` committed on `main`.
    attributes: Option<&'static str>,
    /// `--object-format` of every repository.
    object_format: Option<&'static str>,
    /// `--ref-format` of the bare remote alone (clones keep git's default).
    remote_ref_format: Option<&'static str>,
}

impl World {
    fn new(mode: Mode, options: WorldOptions) -> World {
        let sb = Sandbox::new();
        let mut init = vec!["init", "-q", "--bare", "-b", "main"];
        let format = options
            .object_format
            .map(|f| format!("--object-format={f}"));
        init.extend(format.as_deref());
        let refs = options
            .remote_ref_format
            .map(|f| format!("--ref-format={f}"));
        init.extend(refs.as_deref());
        init.push("remote.git");
        sb.git(sb.path(), &init);
        let remote = sb.path().join("remote.git");
        // A partial clone asks for objects by id.
        sb.git(&remote, ["config", "uploadpack.allowFilter", "true"]);
        sb.git(&remote, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
        let url = format!("file://{}", remote.display());
        let world = World {
            sb,
            mode,
            remote,
            url,
        };
        let seed = world.clone_to("seed", &[]);
        write(&seed.join("README.md"), "# project\n");
        write(&seed.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
        if let Some(attributes) = options.attributes {
            write(&seed.join(".gitattributes"), attributes);
        }
        if mode == Mode::Current {
            write_memory(&seed, "project", "seeded", "The first memory.\n");
        }
        world.sb.git(&seed, ["add", "-A"]);
        world.sb.git(&seed, ["commit", "-q", "-m", "initial"]);
        world.sb.git(&seed, ["push", "-q", "origin", "main"]);
        if mode == Mode::Branch {
            world
                .sb
                .git(&seed, ["switch", "-q", "--orphan", "team-memory"]);
            write_memory(&seed, "project", "seeded", "The first memory.\n");
            world.sb.git(&seed, ["add", "-A"]);
            world.sb.git(&seed, ["commit", "-q", "-m", "team memory"]);
            world.sb.git(&seed, ["push", "-q", "origin", "team-memory"]);
        }
        world
    }

    /// `git clone [ARGS] URL NAME` in the sandbox; the clone's folder.
    fn clone_to(&self, name: &str, args: &[&str]) -> PathBuf {
        let mut all = vec!["clone", "-q"];
        all.extend_from_slice(args);
        all.extend([self.url.as_str(), name]);
        self.sb.git(self.sb.path(), &all);
        self.sb.path().join(name)
    }

    /// The branch the memory lives on.
    fn memory_branch(&self) -> &'static str {
        match self.mode {
            Mode::Current => "main",
            Mode::Branch => "team-memory",
        }
    }

    /// A teammate using the git CLI alone commits a memory on the memory's branch and pushes.
    fn teammate_pushes(&self, slug: &str) -> PathBuf {
        let mate = self.clone_to("mate", &["-b", self.memory_branch()]);
        write_memory(&mate, "project", slug, "From the teammate.\n");
        self.sb.git(&mate, ["add", "-A"]);
        self.sb
            .git(&mate, ["commit", "-q", "-m", &format!("mate: {slug}")]);
        self.sb.git(&mate, ["push", "-q", "origin", "HEAD"]);
        mate
    }
}

impl World {
    /// The teammate of [`World::teammate_pushes`] pushes one more memory.
    fn teammate_pushes_again(&self, slug: &str) {
        let mate = self.sb.path().join("mate");
        write_memory(&mate, "project", slug, "From the teammate, again.\n");
        self.sb.git(&mate, ["add", "-A"]);
        self.sb
            .git(&mate, ["commit", "-q", "-m", &format!("mate: {slug}")]);
        self.sb.git(&mate, ["push", "-q", "origin", "HEAD"]);
    }
}

/// My clone as a row makes it.
struct Me {
    /// The work tree.
    work: PathBuf,
    /// Where teammem runs.
    run_in: PathBuf,
    /// Environment teammem runs with.
    env: Vec<(String, String)>,
    /// A file a planted program creates when it runs: it must not exist after the sync.
    marker: Option<PathBuf>,
}

impl Me {
    fn at(work: PathBuf) -> Me {
        Me {
            run_in: work.clone(),
            work,
            env: Vec::new(),
            marker: None,
        }
    }

    fn teammem(&self, world: &World, args: &[&str]) -> crate::common::Run {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        teammem_env(&world.sb, &self.run_in, args, &env)
    }
}

/// What the row's sync must do.
enum Expect {
    /// The memory crosses both ways.
    Shares,
    /// The sync refuses with this skip reason, its warnings holding every word given.
    Refused(&'static str, &'static [&'static str]),
}

/// One configuration.
struct Row {
    /// The oldest git that can make it.
    needs_git: (u32, u32),
    world: WorldOptions,
    /// Makes my clone (after the world exists).
    me: fn(&World) -> Me,
    /// What the sync does in a mode.
    expect: fn(Mode) -> Expect,
    /// Run once the teammate pushed, before my sync.
    before_sync: fn(&World),
    /// More checks once the memory crossed.
    after: fn(&World, &Me),
}

impl Row {
    fn new(me: fn(&World) -> Me) -> Row {
        Row {
            needs_git: (2, 0),
            world: WorldOptions::default(),
            me,
            expect: |_| Expect::Shares,
            before_sync: |_| {},
            after: |_, _| {},
        }
    }
}

/// The user's work outside the team folder, as git shows it.
fn outside(sb: &Sandbox, dir: &Path) -> Vec<String> {
    let text =
        |args: &[&str]| String::from_utf8_lossy(&sb.git_output(dir, args).stdout).into_owned();
    let not_team = |text: String| -> String {
        text.lines()
            .filter(|l| !l.contains(".qwen"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    vec![
        text(&["diff", "--cached", "--binary", "--", ":!.qwen"]),
        text(&["diff", "--binary", "--", ":!.qwen"]),
        not_team(text(&["ls-files", "-s"])),
        not_team(text(&["status", "--porcelain"])),
        text(&["symbolic-ref", "-q", "HEAD"]),
    ]
}

/// The git on this machine, `(major, minor)`.
fn git_version(sb: &Sandbox) -> (u32, u32) {
    let text = sb.git(sb.path(), ["--version"]);
    let mut parts = text
        .trim()
        .trim_start_matches("git version ")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

fn run(mode: Mode, case: &str, row: Row) {
    let probe = Sandbox::new();
    let have = git_version(&probe);
    if have < row.needs_git {
        println!(
            "skipped {case}: needs git {}.{} or newer, this machine has {}.{}",
            row.needs_git.0, row.needs_git.1, have.0, have.1
        );
        return;
    }
    let world = World::new(mode, row.world);
    let me = (row.me)(&world);
    let sb = &world.sb;
    if mode == Mode::Branch {
        let init = me.teammem(&world, &["init", "--branch"]);
        if let Expect::Shares = (row.expect)(mode) {
            init.expect_code(0);
        }
    }
    // My own work: a staged file and an unstaged edit, outside the team folder.
    write(&me.work.join("src/staged.rs"), "// staged\n");
    sb.git(&me.work, ["add", "src/staged.rs"]);
    write(&me.work.join("README.md"), "# project, edited\n");
    let before = outside(sb, &me.work);

    let mate = world.teammate_pushes(&format!("mate-{case}"));
    write_memory(&me.work, "feedback", &format!("me-{case}"), "From me.\n");
    (row.before_sync)(&world);
    if let Some(marker) = &me.marker {
        let _ = std::fs::remove_file(marker);
    }
    let run = me.teammem(&world, &["sync", "--json"]);
    if let Some(marker) = &me.marker {
        assert!(!marker.exists(), "{case}: a planted program ran");
    }
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{case}: not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
    let mine = format!("feedback/me-{case}.md");
    let remote_files = |rev: &str| {
        String::from_utf8_lossy(
            &sb.git_output(&world.remote, ["ls-tree", "-r", "--name-only", rev])
                .stdout,
        )
        .into_owned()
    };
    match (row.expect)(mode) {
        Expect::Refused(skip, words) => {
            assert_eq!(reason(&report), skip, "{case}: {report:#}");
            let warnings = report["warnings"].to_string();
            for word in words {
                assert!(warnings.contains(word), "{case}: no {word:?} in {report:#}");
            }
            assert!(!remote_files(world.memory_branch()).contains(&mine));
            assert_eq!(
                outside(sb, &me.work),
                before,
                "{case}: work outside changed"
            );
        }
        Expect::Shares => {
            assert_eq!(reason(&report), "", "{case}: {report:#}\n{}", run.stderr);
            assert_eq!(run.code, 0, "{case}: {report:#}");
            for key in ["committed", "pulled", "pushed"] {
                assert_eq!(report[key], true, "{case}: {key}: {report:#}");
            }
            assert!(
                me.work
                    .join(TEAM)
                    .join(format!("project/mate-{case}.md"))
                    .is_file(),
                "{case}: the teammate's memory did not arrive"
            );
            assert!(remote_files(world.memory_branch()).contains(&mine));
            assert_eq!(
                outside(sb, &me.work),
                before,
                "{case}: work outside changed"
            );
            let status = sb.git(&me.work, ["status", "--porcelain"]);
            assert!(!status.contains(".qwen"), "{case}: git status:\n{status}");
            let fsck = sb.git_output(&me.work, ["fsck", "--no-progress"]);
            assert!(
                fsck.status.success(),
                "{case}: git fsck: {}",
                String::from_utf8_lossy(&fsck.stderr)
            );
            sb.git(&mate, ["pull", "-q", "--ff-only"]);
            assert!(
                mate.join(TEAM).join(&mine).is_file(),
                "{case}: mine did not reach the teammate"
            );
            (row.after)(&world, &me);
        }
    }
}

/// Writes a valid memory `.qwen/team-memory/<kind>/<slug>.md` in `dir`.
fn write_memory(dir: &Path, kind: &str, slug: &str, body: &str) {
    write(
        &dir.join(format!("{TEAM}/{kind}/{slug}.md")),
        &memory_text(
            &slug.replace('-', " "),
            &format!("About {slug}"),
            kind,
            body,
        ),
    );
}

/// A plain clone, configured by `git ARGS` commands run in it.
fn configured(world: &World, commands: &[&[&str]]) -> Me {
    let me = world.clone_to("me", &[]);
    for args in commands {
        world.sb.git(&me, *args);
    }
    Me::at(me)
}

/// A script at `path` that creates `marker` and fails.
fn planted(path: &Path, marker: &Path) {
    write(
        path,
        &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn index_v4() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[
                &["config", "index.version", "4"],
                &["update-index", "--index-version", "4"],
            ],
        )
    })
}

fn skip_hash() -> Row {
    Row {
        needs_git: (2, 40),
        ..Row::new(|w| {
            configured(
                w,
                &[
                    &["config", "index.skipHash", "true"],
                    &["update-index", "--force-write-index", "--refresh"],
                ],
            )
        })
    }
}

fn untracked_cache() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[
                &["config", "core.untrackedCache", "true"],
                &["update-index", "--untracked-cache"],
                &["status", "--porcelain"],
            ],
        )
    })
}

fn fsmonitor() -> Row {
    Row::new(|w| {
        let mut me = configured(w, &[]);
        let script = w.sb.path().join("planted/fsmonitor");
        let marker = w.sb.path().join("fsmonitor-ran");
        planted(&script, &marker);
        w.sb.git(
            &me.work,
            ["config", "core.fsmonitor", script.to_str().unwrap()],
        );
        me.marker = Some(marker);
        me
    })
}

fn sparse_cone() -> Row {
    Row::new(|w| configured(w, &[&["sparse-checkout", "set", "--cone", ".qwen", "src"]]))
}

fn linked_worktree() -> Row {
    Row::new(|w| {
        let main = w.clone_to("me-main", &[]);
        w.sb.git(&main, ["switch", "-q", "-c", "elsewhere"]);
        let me = w.sb.path().join("me");
        w.sb.git(
            &main,
            ["worktree", "add", "-q", me.to_str().unwrap(), "main"],
        );
        Me::at(me)
    })
}

fn submodule() -> Row {
    Row::new(|w| {
        let sup = w.sb.path().join("super");
        w.sb.git(w.sb.path(), ["init", "-q", "super"]);
        w.sb.git(&sup, ["submodule", "add", "-q", &w.url, "app"]);
        Me::at(sup.join("app"))
    })
}

fn separate_git_dir() -> Row {
    Row::new(|w| {
        let gitdir = w.sb.path().join("me-gitdir");
        Me::at(w.clone_to("me", &[&format!("--separate-git-dir={}", gitdir.display())]))
    })
}

fn shallow() -> Row {
    Row::new(|w| Me::at(w.clone_to("me", &["--depth", "1", "--no-single-branch"])))
}

fn eol_crlf() -> Row {
    Row {
        world: WorldOptions {
            attributes: Some("* text=auto eol=crlf\n"),
            ..WorldOptions::default()
        },
        // A second round: what the first checked out with CRLF is not rewritten as noise.
        after: |w, me| {
            w.teammate_pushes_again("mate-crlf-again");
            let run = me.teammem(w, &["sync", "--json"]);
            run.expect_code(0);
            let status = w.sb.git(&me.work, ["status", "--porcelain"]);
            assert!(!status.contains(".qwen"), "git status:\n{status}");
            assert!(
                me.work
                    .join(TEAM)
                    .join("project/mate-crlf-again.md")
                    .is_file()
            );
        },
        ..Row::new(|w| Me::at(w.clone_to("me", &["-c", "core.autocrlf=true"])))
    }
}

fn lfs_without_git_lfs() -> Row {
    Row {
        world: WorldOptions {
            attributes: Some("*.bin filter=lfs diff=lfs merge=lfs -text\n"),
            ..WorldOptions::default()
        },
        ..Row::new(|w| {
            configured(
                w,
                &[
                    &["config", "filter.lfs.clean", "git-lfs clean -- %f"],
                    &["config", "filter.lfs.smudge", "git-lfs smudge -- %f"],
                    &["config", "filter.lfs.process", "git-lfs filter-process"],
                    &["config", "filter.lfs.required", "true"],
                ],
            )
        })
    }
}

fn intent_to_add() -> Row {
    Row::new(|w| {
        let me = configured(w, &[]);
        write(&me.work.join("src/new.rs"), "// new\n");
        w.sb.git(&me.work, ["add", "-N", "src/new.rs"]);
        me
    })
}

fn merge_in_progress() -> Row {
    Row {
        expect: |mode| match mode {
            Mode::Current => Expect::Refused(
                "operation-in-progress",
                &["a merge is in progress", "`git merge --abort`"],
            ),
            Mode::Branch => Expect::Shares,
        },
        ..Row::new(|w| {
            configured(
                w,
                &[
                    &["switch", "-q", "-c", "side"],
                    &["commit", "-q", "--allow-empty", "-m", "side work"],
                    &["switch", "-q", "main"],
                    &["merge", "-q", "--no-ff", "--no-commit", "side"],
                ],
            )
        })
    }
}

fn rebase_in_progress() -> Row {
    Row {
        expect: |mode| match mode {
            Mode::Current => Expect::Refused(
                "operation-in-progress",
                &["a rebase is in progress", "`git rebase --abort`"],
            ),
            Mode::Branch => Expect::Shares,
        },
        ..Row::new(|w| {
            configured(
                w,
                &[
                    &["commit", "-q", "--allow-empty", "-m", "mine, unpushed"],
                    &[
                        "-c",
                        "sequence.editor=sed -i s/^pick/edit/",
                        "rebase",
                        "-q",
                        "-i",
                        "HEAD~1",
                    ],
                ],
            )
        })
    }
}

fn hooks_path() -> Row {
    Row::new(|w| {
        let mut me = configured(w, &[]);
        let hooks = w.sb.path().join("planted/hooks");
        let marker = w.sb.path().join("hook-ran");
        for hook in [
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
            "pre-push",
            "post-checkout",
            "post-merge",
            "reference-transaction",
            "post-index-change",
        ] {
            planted(&hooks.join(hook), &marker);
        }
        w.sb.git(
            &me.work,
            ["config", "core.hooksPath", hooks.to_str().unwrap()],
        );
        me.marker = Some(marker);
        me
    })
}

fn unsigned_gpg_sign() -> Row {
    Row {
        expect: |_| Expect::Refused("", &["No secret key", "git config commit.gpgsign false"]),
        ..Row::new(|w| {
            let mut me = configured(w, &[&["config", "commit.gpgSign", "true"]]);
            let gpg = w.sb.path().join("planted/gpg");
            let marker = w.sb.path().join("gpg-ran");
            planted(&gpg, &marker);
            w.sb.git(&me.work, ["config", "gpg.program", gpg.to_str().unwrap()]);
            me.marker = Some(marker);
            me
        })
    }
}

fn upstream_not_origin() -> Row {
    Row::new(|w| configured(w, &[&["remote", "rename", "origin", "team"]]))
}

fn git_dir_env() -> Row {
    Row::new(|w| {
        let me = w.clone_to("me", &[]);
        let decoy = w.sb.repo("decoy");
        Me {
            env: vec![
                ("GIT_DIR".into(), me.join(".git").display().to_string()),
                ("GIT_WORK_TREE".into(), me.display().to_string()),
            ],
            run_in: decoy,
            work: me,
            marker: None,
        }
    })
}

fn two_push_urls() -> Row {
    Row {
        // The mirror is kept up to date (a lagging one refuses: `push-partial`, see
        // sync_push_urls.rs).
        before_sync: |w| {
            let mirror = w.sb.path().join("mirror.git");
            w.sb.git(
                &mirror,
                ["fetch", "-q", &w.url, "+refs/heads/*:refs/heads/*"],
            );
        },
        after: |w, _| {
            let mirror = w.sb.path().join("mirror.git");
            let files =
                w.sb.git(&mirror, ["ls-tree", "-r", "--name-only", w.memory_branch()]);
            assert!(
                files.contains("feedback/me-"),
                "the mirror lacks it: {files}"
            );
        },
        ..Row::new(|w| {
            w.sb.git(w.sb.path(), ["clone", "-q", "--bare", &w.url, "mirror.git"]);
            let mirror = format!("file://{}", w.sb.path().join("mirror.git").display());
            configured(
                w,
                &[
                    &["remote", "set-url", "--add", "--push", "origin", &w.url],
                    &["remote", "set-url", "--add", "--push", "origin", &mirror],
                ],
            )
        })
    }
}

fn partial_clone() -> Row {
    Row::new(|w| Me::at(w.clone_to("me", &["--filter=blob:none"])))
}

fn split_index() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[
                &["config", "core.splitIndex", "true"],
                &["update-index", "--split-index"],
            ],
        )
    })
}

fn sparse_index() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[&[
                "sparse-checkout",
                "set",
                "--cone",
                "--sparse-index",
                ".qwen",
                "src",
            ]],
        )
    })
}

fn autocrlf_true() -> Row {
    Row {
        // A second round: what the first checked out with CRLF is not rewritten as noise.
        after: |w, me| no_noise_on_a_second_round(w, me, "mate-autocrlf-again"),
        ..Row::new(|w| Me::at(w.clone_to("me", &["-c", "core.autocrlf=true"])))
    }
}

fn autocrlf_input() -> Row {
    Row {
        after: |w, me| no_noise_on_a_second_round(w, me, "mate-input-again"),
        ..Row::new(|w| Me::at(w.clone_to("me", &["-c", "core.autocrlf=input"])))
    }
}

/// The teammate pushes again; my sync brings it, and leaves `git status` clean.
fn no_noise_on_a_second_round(w: &World, me: &Me, slug: &str) {
    w.teammate_pushes_again(slug);
    let run = me.teammem(w, &["sync", "--json"]);
    run.expect_code(0);
    let status = w.sb.git(&me.work, ["status", "--porcelain"]);
    assert!(!status.contains(".qwen"), "git status:\n{status}");
    assert!(
        me.work
            .join(TEAM)
            .join(format!("project/{slug}.md"))
            .is_file()
    );
}

/// My clone owned by another user, let in by `safe.directory` (as root does for a CI
/// checkout it did not make).
fn other_owner_safe_directory() -> Row {
    Row::new(|w| {
        let me = w.clone_to("me", &[]);
        w.sb.git(
            w.sb.path(),
            [
                "config",
                "--global",
                "--add",
                "safe.directory",
                me.to_str().unwrap(),
            ],
        );
        if !crate::common::give_to_another_user(&me) {
            println!("not root: the clone keeps its owner");
        }
        Me::at(me)
    })
}

/// `GIT_DIR` alone, the work tree named by the repository's `core.worktree`, run from another
/// clone.
fn core_worktree_with_git_dir() -> Row {
    Row::new(|w| {
        let gitdir = w.sb.path().join("me-gitdir");
        let me = w.clone_to("me", &[&format!("--separate-git-dir={}", gitdir.display())]);
        w.sb.git(&me, ["config", "core.worktree", me.to_str().unwrap()]);
        let decoy = w.sb.repo("decoy");
        Me {
            env: vec![("GIT_DIR".into(), gitdir.display().to_string())],
            run_in: decoy,
            work: me,
            marker: None,
        }
    })
}

/// `origin` is a short name that `url.<base>.insteadOf` expands.
fn url_instead_of() -> Row {
    Row::new(|w| {
        let base = format!("file://{}/", w.sb.path().display());
        configured(
            w,
            &[
                &["config", &format!("url.{base}.insteadOf"), "team:"],
                &["remote", "set-url", "origin", "team:remote.git"],
            ],
        )
    })
}

/// Fetching from a read-only mirror, pushing where `url.<remote>.pushInsteadOf` sends the
/// mirror's URL (git ignores pushInsteadOf for an explicit `pushurl`, and so does teammem).
fn push_instead_of() -> Row {
    Row {
        before_sync: |w| {
            let mirror = w.sb.path().join("mirror.git");
            w.sb.git(
                &mirror,
                ["fetch", "-q", &w.url, "+refs/heads/*:refs/heads/*"],
            );
        },
        ..Row::new(|w| {
            w.sb.git(w.sb.path(), ["clone", "-q", "--bare", &w.url, "mirror.git"]);
            let mirror = format!("file://{}", w.sb.path().join("mirror.git").display());
            configured(
                w,
                &[
                    &["remote", "set-url", "origin", &mirror],
                    &["config", &format!("url.{}.pushInsteadOf", w.url), &mirror],
                ],
            )
        })
    }
}

fn single_branch() -> Row {
    Row::new(|w| Me::at(w.clone_to("me", &["--single-branch", "--no-tags"])))
}

/// Objects borrowed from another repository (`objects/info/alternates`).
fn shared_alternates() -> Row {
    Row::new(|w| {
        let local = w.sb.path().join("remote.git");
        Me::at(w.clone_to("me", &["--shared", "--reference", local.to_str().unwrap()]))
    })
}

/// Refs packed, objects in one pack with a bitmap, a multi-pack index and a commit graph.
fn packed_with_graphs() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[
                &["pack-refs", "--all"],
                &["repack", "-q", "-a", "-d", "-b", "--write-midx"],
                &["commit-graph", "write", "--reachable"],
                &["config", "fetch.writeCommitGraph", "true"],
                &["config", "core.commitGraph", "true"],
            ],
        )
    })
}

/// `extensions.worktreeConfig`, with a setting in `config.worktree`.
fn worktree_config() -> Row {
    Row::new(|w| {
        configured(
            w,
            &[
                &["config", "core.repositoryformatversion", "1"],
                &["config", "extensions.worktreeConfig", "true"],
                &["config", "--worktree", "core.fileMode", "false"],
            ],
        )
    })
}

/// A work tree whose path has spaces and non-ASCII letters.
fn unicode_path() -> Row {
    Row::new(|w| Me::at(w.clone_to("mé dossier partagé", &[])))
}

/// Settings that change what git prints, and programs git would run for a person: teammem's
/// own git runs read none of them wrongly and run none of the programs.
const HOSTILE: &[(&str, &str)] = &[
    ("color.ui", "always"),
    ("color.diff", "always"),
    ("color.status", "always"),
    ("log.showSignature", "true"),
    ("log.decorate", "full"),
    ("log.follow", "true"),
    ("format.pretty", "fuller"),
    ("core.abbrev", "5"),
    ("core.quotePath", "true"),
    ("diff.noprefix", "true"),
    ("diff.relative", "true"),
    ("diff.renames", "copies"),
    ("i18n.logOutputEncoding", "ISO-8859-1"),
    ("status.showUntrackedFiles", "all"),
    ("pull.rebase", "true"),
    ("merge.ff", "only"),
    ("commit.verbose", "true"),
    ("commit.cleanup", "verbatim"),
    ("core.commentChar", "auto"),
    ("fetch.prune", "true"),
    ("fetch.recurseSubmodules", "true"),
    ("submodule.recurse", "true"),
    ("push.recurseSubmodules", "check"),
    ("push.followTags", "true"),
    ("core.safecrlf", "true"),
];

/// The settings git would run a program for.
const HOSTILE_PROGRAMS: &[&str] = &[
    "core.editor",
    "sequence.editor",
    "diff.external",
    "core.pager",
    "pager.log",
    "credential.helper",
    "core.sshCommand",
    "core.askPass",
];

/// My clone (made with `git clone ARGS`) configured with [`HOSTILE`] and a planted program
/// behind each of [`HOSTILE_PROGRAMS`].
fn hostile(w: &World, args: &[&str]) -> Me {
    let work = w.clone_to("me", args);
    for (key, value) in HOSTILE {
        w.sb.git(&work, ["config", key, value]);
    }
    let program = w.sb.path().join("planted/program");
    let marker = w.sb.path().join("program-ran");
    planted(&program, &marker);
    for key in HOSTILE_PROGRAMS {
        w.sb.git(&work, ["config", key, program.to_str().unwrap()]);
    }
    let mut me = Me::at(work);
    me.env
        .push(("GIT_PAGER".into(), program.display().to_string()));
    me.env.push(("PAGER".into(), program.display().to_string()));
    me.env
        .push(("EDITOR".into(), program.display().to_string()));
    me.marker = Some(marker);
    me
}

fn hostile_settings() -> Row {
    Row::new(|w| hostile(w, &[]))
}

fn hostile_settings_partial_clone() -> Row {
    Row::new(|w| hostile(w, &["--filter=blob:none"]))
}

/// A remote folder on this machine whose refs are in reftable (a plain clone of it): libgit2
/// cannot open it, so the fetch goes through git.
fn reftable_remote() -> Row {
    Row {
        needs_git: (2, 45),
        world: WorldOptions {
            remote_ref_format: Some("reftable"),
            ..WorldOptions::default()
        },
        ..Row::new(|w| Me::at(w.clone_to("me", &[])))
    }
}

fn hostile_settings_split_index() -> Row {
    Row::new(|w| {
        let me = hostile(w, &[]);
        w.sb.git(&me.work, ["config", "core.splitIndex", "true"]);
        w.sb.git(&me.work, ["update-index", "--split-index"]);
        me
    })
}

fn hostile_settings_reftable() -> Row {
    Row {
        needs_git: (2, 45),
        expect: git_only_expect,
        ..Row::new(|w| hostile(w, &["--ref-format=reftable"]))
    }
}

fn hostile_settings_sha256() -> Row {
    Row {
        world: WorldOptions {
            object_format: Some("sha256"),
            ..WorldOptions::default()
        },
        expect: git_only_expect,
        ..Row::new(|w| hostile(w, &[]))
    }
}

/// libgit2 cannot open these: both modes' sync runs through git (`git/cli_repo/`,
/// `ops/sync/git_cli/`).
fn git_only_expect(_: Mode) -> Expect {
    Expect::Shares
}

fn reftable() -> Row {
    Row {
        needs_git: (2, 45),
        expect: git_only_expect,
        ..Row::new(|w| Me::at(w.clone_to("me", &["--ref-format=reftable"])))
    }
}

fn sha256() -> Row {
    Row {
        world: WorldOptions {
            object_format: Some("sha256"),
            ..WorldOptions::default()
        },
        expect: git_only_expect,
        ..Row::new(|w| Me::at(w.clone_to("me", &[])))
    }
}

macro_rules! matrix {
    ($($name:ident),* $(,)?) => {
        /// Current-branch mode.
        mod current_branch {
            $(#[test]
            fn $name() {
                super::run(super::Mode::Current, stringify!($name), super::$name());
            })*
        }
        /// Branch mode, set up with `init --branch`.
        mod branch {
            $(#[test]
            fn $name() {
                super::run(super::Mode::Branch, stringify!($name), super::$name());
            })*
        }
    };
}

matrix!(
    index_v4,
    skip_hash,
    untracked_cache,
    fsmonitor,
    sparse_cone,
    linked_worktree,
    submodule,
    separate_git_dir,
    shallow,
    eol_crlf,
    lfs_without_git_lfs,
    intent_to_add,
    merge_in_progress,
    rebase_in_progress,
    hooks_path,
    unsigned_gpg_sign,
    upstream_not_origin,
    git_dir_env,
    two_push_urls,
    partial_clone,
    split_index,
    sparse_index,
    reftable,
    sha256,
    autocrlf_true,
    autocrlf_input,
    other_owner_safe_directory,
    core_worktree_with_git_dir,
    url_instead_of,
    push_instead_of,
    single_branch,
    shared_alternates,
    packed_with_graphs,
    worktree_config,
    unicode_path,
    hostile_settings,
    hostile_settings_partial_clone,
    hostile_settings_split_index,
    reftable_remote,
    hostile_settings_reftable,
    hostile_settings_sha256,
);
