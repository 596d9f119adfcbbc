//! A team in branch mode: a bare remote whose `main` holds code only and whose `team-memory`
//! branch holds the team memory, clones driven with the git CLI and `teammem` as users would,
//! and the checks that sync left everything outside the team folder as it was.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Sandbox, memory_text, write};

/// The team folder.
pub const TEAM: &str = ".qwen/team-memory";

/// A bare remote and the clones made from it.
pub struct BranchTeam {
    /// The sandbox everything lives in.
    pub sb: Sandbox,
    /// The bare remote.
    pub remote: PathBuf,
    /// The URL clones use.
    pub url: String,
}

impl BranchTeam {
    /// A remote whose `main` has a README and a source file, and whose memory branch was
    /// created by a first user's `teammem init --branch` and `teammem sync`, holding one memory.
    pub fn new() -> BranchTeam {
        let sb = Sandbox::new();
        let remote = sb.bare("remote.git");
        let url = format!("file://{}", remote.display());
        let team = BranchTeam { sb, remote, url };
        let seed = team.sb.path().join("seed");
        team.sb
            .git(team.sb.path(), ["clone", "-q", &team.url, "seed"]);
        write(&seed.join("README.md"), "# project\n");
        write(&seed.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
        team.sb.git(&seed, ["add", "-A"]);
        team.sb.git(&seed, ["commit", "-q", "-m", "initial"]);
        team.sb.git(&seed, ["push", "-q", "origin", "main"]);
        team.teammem(&seed, &["init", "--branch"], 0);
        write_memory(&seed, "project", "seeded", "The first memory.\n");
        let report = team.sync(&seed);
        assert_eq!(report["pushed"], true, "{report:#}");
        team
    }

    /// A new clone of the remote with its own identity.
    pub fn clone_as(&self, name: &str) -> PathBuf {
        self.sb
            .git(self.sb.path(), ["clone", "-q", &self.url, name]);
        let dir = self.sb.path().join(name);
        self.sb.git(&dir, ["config", "user.name", name]);
        self.sb.git(
            &dir,
            ["config", "user.email", &format!("{name}@example.com")],
        );
        dir
    }

    /// A new clone of the remote with reftable refs, which teammem works on through git (the
    /// git path), with the sandbox's identity.
    pub fn clone_reftable(&self, name: &str) -> PathBuf {
        self.sb.git(
            self.sb.path(),
            ["clone", "-q", "--ref-format=reftable", &self.url, name],
        );
        self.sb.path().join(name)
    }

    /// A clone of `main` alone (`--single-branch`): it has no remote-tracking ref for the
    /// memory branch until teammem finds the branch in the remote's refs.
    pub fn clone_main_only(&self, name: &str) -> PathBuf {
        self.sb.git(
            self.sb.path(),
            [
                "clone",
                "-q",
                "--single-branch",
                "-b",
                "main",
                &self.url,
                name,
            ],
        );
        self.sb.path().join(name)
    }

    /// Runs teammem in `dir`, requiring exit status `code`; returns stdout.
    pub fn teammem(&self, dir: &Path, args: &[&str], code: i32) -> String {
        let run = self.sb.teammem(dir, args);
        run.expect_code(code);
        run.stdout
    }

    /// `teammem sync --json` in `dir`: the report (exit 0 or 1).
    pub fn sync(&self, dir: &Path) -> Value {
        self.sync_env(dir, &[])
    }

    /// [`BranchTeam::sync`] with more environment variables.
    pub fn sync_env(&self, dir: &Path, env: &[(&str, &str)]) -> Value {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teammem"));
        self.sb
            .isolate(&mut cmd)
            .current_dir(dir)
            .args(["sync", "--json"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null());
        let run = crate::common::Run::from(cmd.output().expect("run teammem"));
        assert!(
            run.code == 0 || run.code == 1,
            "sync exited {}\n{}\n{}",
            run.code,
            run.stdout,
            run.stderr
        );
        let report: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr));
        assert_eq!(report["mode"], "branch", "{report:#}");
        report
    }

    /// The files under the team folder of `rev` in the remote.
    pub fn remote_files(&self, rev: &str) -> Vec<String> {
        self.sb
            .git(&self.remote, ["ls-tree", "-r", "--name-only", rev])
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Writes a valid memory `.qwen/team-memory/<kind>/<slug>.md` in `dir`.
pub fn write_memory(dir: &Path, kind: &str, slug: &str, body: &str) {
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

/// Whether `dir`'s team folder holds `<kind>/<slug>.md`.
pub fn has_memory(dir: &Path, kind: &str, slug: &str) -> bool {
    dir.join(format!("{TEAM}/{kind}/{slug}.md")).is_file()
}

/// What a user sees of a work tree outside the team folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    head: String,
    branch: String,
    staged: String,
    unstaged: String,
    untracked: Vec<(String, Vec<u8>)>,
    status: String,
}

/// Takes [`Outside`] of `dir`.
pub fn outside(sb: &Sandbox, dir: &Path) -> Outside {
    let text =
        |args: &[&str]| String::from_utf8_lossy(&sb.git_output(dir, args).stdout).into_owned();
    let untracked = text(&["ls-files", "--others", "--exclude-standard", "-z"])
        .split('\0')
        .filter(|p| !p.is_empty() && !p.starts_with(TEAM))
        .map(|p| {
            (
                p.to_string(),
                std::fs::read(dir.join(p)).unwrap_or_default(),
            )
        })
        .collect();
    Outside {
        head: text(&["rev-parse", "HEAD"]),
        branch: text(&["symbolic-ref", "-q", "HEAD"]),
        staged: text(&["diff", "--cached", "--binary"]),
        unstaged: text(&["diff", "--binary"]),
        untracked,
        // Before its first sync a fresh clone shows the folder as untracked; after, never
        // (checked on its own in `assert_untouched`).
        status: text(&["status", "--porcelain"])
            .lines()
            .filter(|l| !l.contains(".qwen"))
            .map(|l| format!("{l}\n"))
            .collect(),
    }
}

/// After a sync: everything outside the folder is as it was, `git status` shows nothing from
/// the folder, and `git fsck` is clean.
pub fn assert_untouched(sb: &Sandbox, dir: &Path, before: &Outside) {
    let after = outside(sb, dir);
    assert_eq!(&after, before, "sync changed something outside {TEAM}");
    let status =
        String::from_utf8_lossy(&sb.git_output(dir, ["status", "--porcelain"]).stdout).into_owned();
    assert!(
        !status.contains(".qwen"),
        "git status shows the team folder:\n{status}"
    );
    let fsck = sb.git_output(dir, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "git fsck: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// One entry of a tree as git stores it: mode, name (any bytes), object id (hex). The git CLI
/// writes such entries verbatim, so a teammate can push trees no checkout can write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// `100644`, `100755`, `120000`, `160000` or `40000`.
    pub mode: String,
    /// The entry's name, byte for byte.
    pub name: Vec<u8>,
    /// The object it names.
    pub id: String,
}

impl RawEntry {
    /// An entry of `mode` named `name` for object `id`.
    pub fn new(mode: &str, name: impl AsRef<[u8]>, id: &str) -> RawEntry {
        RawEntry {
            mode: mode.to_string(),
            name: name.as_ref().to_vec(),
            id: id.trim().to_string(),
        }
    }

    fn is_tree(&self) -> bool {
        self.mode == "40000"
    }
}

impl BranchTeam {
    /// Runs git in `dir` with `input` on stdin; returns stdout, panicking when git fails.
    pub fn git_with_input(&self, dir: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut cmd = std::process::Command::new("git");
        self.sb
            .isolate(&mut cmd)
            .current_dir(dir)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("run git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write to git");
        let out = child.wait_with_output().expect("wait for git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Writes `bytes` as a blob in `dir`'s repository; returns its id.
    pub fn blob(&self, dir: &Path, bytes: &[u8]) -> String {
        let out = self.git_with_input(dir, &["hash-object", "-w", "--stdin"], bytes);
        String::from_utf8_lossy(&out).trim().to_string()
    }

    /// Writes a tree holding exactly `entries` (in git's order, duplicates kept) without any
    /// of git's checks; returns its id.
    pub fn raw_tree(&self, dir: &Path, entries: &[RawEntry]) -> String {
        let mut sorted = entries.to_vec();
        let key = |e: &RawEntry| {
            let mut k = e.name.clone();
            if e.is_tree() {
                k.push(b'/');
            }
            k
        };
        sorted.sort_by_key(key);
        let mut bytes = Vec::new();
        for e in &sorted {
            bytes.extend_from_slice(e.mode.as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(&e.name);
            bytes.push(0);
            bytes.extend(
                (0..e.id.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&e.id[i..i + 2], 16).expect("hex id")),
            );
        }
        let args = ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"];
        let out = self.git_with_input(dir, &args, &bytes);
        String::from_utf8_lossy(&out).trim().to_string()
    }

    /// The entries of tree `rev` in `dir`'s repository, names byte for byte.
    pub fn tree_entries(&self, dir: &Path, rev: &str) -> Vec<RawEntry> {
        let out = self.sb.git_output(dir, ["ls-tree", "-z", rev]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
            .split(|b| *b == 0)
            .filter(|line| !line.is_empty())
            .map(|line| {
                let tab = line.iter().position(|b| *b == b'\t').expect("a tab");
                let head = String::from_utf8_lossy(&line[..tab]).into_owned();
                let parts: Vec<&str> = head.split(' ').collect();
                let mode = parts[0].trim_start_matches('0');
                RawEntry::new(mode, &line[tab + 1..], parts[2])
            })
            .collect()
    }

    /// A teammate using the git CLI alone (`dir`, a clone) pushes onto the memory branch a
    /// commit whose team folder is the current one edited by `edit` (its top-level entries);
    /// returns the commit.
    pub fn push_crafted(&self, dir: &Path, edit: impl FnOnce(&mut Vec<RawEntry>)) -> String {
        self.sb.git(dir, ["fetch", "-q", "origin", "team-memory"]);
        let tip = self
            .sb
            .git(dir, ["rev-parse", "FETCH_HEAD"])
            .trim()
            .to_string();
        let qwen_id = self.sb.git(dir, ["rev-parse", &format!("{tip}:.qwen")]);
        let team_id = self.sb.git(dir, ["rev-parse", &format!("{tip}:{TEAM}")]);
        let mut team = self.tree_entries(dir, team_id.trim());
        edit(&mut team);
        let team = self.raw_tree(dir, &team);
        let mut qwen = self.tree_entries(dir, qwen_id.trim());
        qwen.retain(|e| e.name != b"team-memory");
        qwen.push(RawEntry::new("40000", "team-memory", &team));
        let qwen = self.raw_tree(dir, &qwen);
        let mut root = self.tree_entries(dir, &tip);
        root.retain(|e| e.name != b".qwen");
        root.push(RawEntry::new("40000", ".qwen", &qwen));
        let root = self.raw_tree(dir, &root);
        let commit = self.sb.git(
            dir,
            [
                "commit-tree",
                &root,
                "-p",
                &tip,
                "-m",
                "crafted team folder",
            ],
        );
        let commit = commit.trim().to_string();
        self.sb.git(
            dir,
            [
                "push",
                "-q",
                "origin",
                &format!("{commit}:refs/heads/team-memory"),
            ],
        );
        commit
    }
}

impl BranchTeam {
    /// A teammate using the git CLI alone (`dir`, a clone) pushes `count` small valid memories
    /// (`project/flood-<n>.md`) onto the memory branch in one commit, made with
    /// `git fast-import`; returns the commit.
    pub fn push_flood(&self, dir: &Path, count: usize) -> String {
        self.sb.git(dir, ["fetch", "-q", "origin", "team-memory"]);
        let tip = self
            .sb
            .git(dir, ["rev-parse", "FETCH_HEAD"])
            .trim()
            .to_string();
        let mut stream = Vec::new();
        let message = "a flood of memories\n";
        stream.extend_from_slice(
            format!(
                "commit refs/heads/flood\ncommitter Flood <flood@example.com> 0 +0000\n\
                 data {}\n{message}from {tip}\n",
                message.len()
            )
            .as_bytes(),
        );
        for n in 0..count {
            let slug = format!("flood-{n:06}");
            let text = memory_text(&slug, &format!("Flood {n}"), "project", "Flooded.\n");
            stream.extend_from_slice(
                format!(
                    "M 100644 inline {TEAM}/project/{slug}.md\ndata {}\n{text}\n",
                    text.len()
                )
                .as_bytes(),
            );
        }
        self.git_with_input(dir, &["fast-import", "--quiet"], &stream);
        self.sb.git(
            dir,
            [
                "push",
                "-q",
                "origin",
                "refs/heads/flood:refs/heads/team-memory",
            ],
        );
        self.sb
            .git(dir, ["rev-parse", "refs/heads/flood"])
            .trim()
            .to_string()
    }
}
