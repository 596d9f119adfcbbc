//! Shared helpers for integration tests: throwaway repositories with an isolated git config,
//! the git CLI as a teammate, and the `teammem` binary run as a user would run it.
//!
//! Every helper isolates `HOME`, the global and system git config and Qwen's base folder, so a
//! test never reads or writes the developer's own settings.

pub mod agents;
pub mod branch_team;
pub mod clients;
pub mod count_proxy;
pub mod invoke;
pub mod lifecycle;
pub mod mcp_sdk;
pub mod netsync;
pub mod servers;
pub mod stall;
pub mod syncrun;
pub mod team;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

/// A sandbox: a temp folder with its own HOME, git config and memory base folder.
pub struct Sandbox {
    /// Keeps the folder alive.
    pub dir: TempDir,
}

impl Sandbox {
    /// A new empty sandbox.
    pub fn new() -> Self {
        // All tests share one process, and with it libgit2's config search path: it is set
        // before any test's in-process repository, never while one reads its config.
        netsync::isolate_libgit2();
        let dir = tempfile::tempdir().expect("temp dir");
        let sandbox = Sandbox { dir };
        fs::create_dir_all(sandbox.home()).unwrap();
        fs::write(
            sandbox.home().join(".gitconfig"),
            "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n[protocol \"file\"]\n\tallow = always\n",
        )
        .unwrap();
        sandbox
    }

    /// The sandbox's root folder.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `$HOME` inside the sandbox.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `$QWEN_CODE_MEMORY_BASE_DIR` inside the sandbox.
    pub fn base(&self) -> PathBuf {
        self.dir.path().join("home/.qwen")
    }

    /// Applies the sandbox's environment to a command.
    pub fn isolate<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home().join(".gitconfig"))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("QWEN_CODE_MEMORY_BASE_DIR", self.base())
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            // A turn's walk of git's history for ages ends when it is done, not after 300 ms:
            // what a test sees does not depend on how loaded the machine is.
            .env("TEAMMEM_TURN_WALK_MS", "600000")
    }

    /// Sets the user's own `teammem.agentTeamSaves` (global git config): `commit` or `publish`
    /// let an agent's team saves through without a person; unset, they stay pending.
    pub fn allow_agent_team_saves(&self, how: &str) {
        self.git(
            self.path(),
            ["config", "--global", "teammem.agentTeamSaves", how],
        );
    }

    /// Runs git in `dir` and returns its output, panicking with stderr when it fails.
    pub fn git<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git in `dir` and returns the raw output, whatever the status.
    pub fn git_output<I, S>(&self, dir: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        self.isolate(&mut cmd)
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::null());
        cmd.output().expect("run git")
    }

    /// A new repository with one commit (a README), on branch `main`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.path().join(name);
        fs::create_dir_all(&dir).unwrap();
        self.git(&dir, ["init", "-q", "-b", "main"]);
        fs::write(dir.join("README.md"), "# project\n").unwrap();
        self.git(&dir, ["add", "README.md"]);
        self.git(&dir, ["commit", "-q", "-m", "initial"]);
        dir
    }

    /// A bare repository, for use as a remote.
    pub fn bare(&self, name: &str) -> PathBuf {
        let dir = self.path().join(name);
        self.git(self.path(), ["init", "-q", "--bare", "-b", "main", name]);
        dir
    }

    /// Runs `teammem` in `dir` with the sandbox's environment and the given stdin.
    pub fn teammem_with_input<I, S>(&self, dir: &Path, args: I, input: &str) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        invoke::teammem_with(self, dir, args, &[], Some(input))
    }

    /// Runs `teammem` in `dir` with an empty stdin.
    pub fn teammem<I, S>(&self, dir: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.teammem_with_input(dir, args, "")
    }
}

/// What a `teammem` run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    /// Exit status (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Panics with both streams unless the exit status is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "unexpected exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Writes a file, creating its folders.
pub fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Two team memories the delivery tests recall: "Use the real database in integration tests"
/// (feedback) and "Releases leave on Tuesdays" (project), written into `repo`'s team folder.
pub fn write_database_and_release_memories(repo: &Path) {
    write(
        &repo.join(".qwen/team-memory/feedback/real-database.md"),
        &memory_text(
            "Use the real database in integration tests",
            "Integration tests must hit a real Postgres, never a mock",
            "feedback",
            "Integration tests connect to a real Postgres instance.\n\nWhy: a mocked test passed while the real migration failed.\n",
        ),
    );
    write(
        &repo.join(".qwen/team-memory/project/release-train.md"),
        &memory_text(
            "Releases leave on Tuesdays",
            "The release train leaves every Tuesday at noon",
            "project",
            "Merge by Monday evening to make the train.\n",
        ),
    );
}

/// A valid memory file's text.
pub fn memory_text(name: &str, description: &str, kind: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}")
}

/// The context a hook's output adds, checked against the one shape every client takes
/// (Codex rejects any other key): `{"hookSpecificOutput": {"hookEventName": EVENT,
/// "additionalContext": …}}`; empty when nothing was printed.
pub fn hook_context(run: &Run, event: &str) -> String {
    if run.stdout.is_empty() {
        return String::new();
    }
    let value: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout));
    let object = value.as_object().unwrap();
    assert_eq!(object.keys().collect::<Vec<_>>(), ["hookSpecificOutput"]);
    let inner = value["hookSpecificOutput"].as_object().unwrap();
    let mut keys: Vec<&String> = inner.keys().collect();
    keys.sort();
    assert_eq!(keys, ["additionalContext", "hookEventName"]);
    assert_eq!(inner["hookEventName"], event);
    inner["additionalContext"].as_str().unwrap().to_string()
}

/// `chown -R 4242:4242 DIR`: gives a folder another owner, as a CI checkout made by someone
/// else has. Returns whether it was allowed (root only).
pub fn give_to_another_user(dir: &Path) -> bool {
    Command::new("chown")
        .args(["-R", "4242:4242"])
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

impl Sandbox {
    /// An SSH signing key for the sandbox's user (`ssh-keygen`), set as git's signing key in the
    /// global config (`gpg.format=ssh`) with an allowed-signers file trusting it for
    /// `test@example.com`, so `git verify-commit` checks what is signed. Returns the key's
    /// path; `None` (the reason printed) where ssh-keygen cannot make one.
    pub fn ssh_signing_key(&self) -> Option<PathBuf> {
        let key = self.home().join("signing-key");
        let made = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f"])
            .arg(&key)
            .stdin(Stdio::null())
            .output();
        if !made.as_ref().is_ok_and(|o| o.status.success()) {
            println!("skipped: ssh-keygen cannot make a key: {made:?}");
            return None;
        }
        let public = fs::read_to_string(key.with_extension("pub")).unwrap();
        let allowed = self.home().join("allowed-signers");
        write(&allowed, &format!("test@example.com {public}"));
        let global = |k: &str, v: &str| self.git(self.path(), ["config", "--global", k, v]);
        global("gpg.format", "ssh");
        global("user.signingkey", key.to_str().unwrap());
        global("gpg.ssh.allowedSignersFile", allowed.to_str().unwrap());
        Some(key)
    }
}

/// `teammem prompt-context --hook HOOK` (the UserPromptSubmit hook) in `repo`, given the hook's
/// JSON `input`, with the sandbox's environment changed by `env`; exit status 0 required. Its
/// budget is one no loaded machine reaches: what a turn says is tested, not how fast.
pub fn prompt_turn(
    sb: &Sandbox,
    repo: &Path,
    hook: &str,
    input: &str,
    env: &[invoke::EnvChange<'_>],
) -> Run {
    let args = ["prompt-context", "--hook", hook, "--timeout-ms", "600000"];
    let run = invoke::teammem_with(sb, repo, args, env, Some(input));
    run.expect_code(0);
    run
}
