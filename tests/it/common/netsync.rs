//! A team for network tests: a bare remote, a clone for "me" (driven through the library) and
//! one for a teammate (driven through the git CLI), with libgit2 kept away from the developer's
//! own git config.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Duration;

use git2::{Oid, Repository};
use teammem::git::{CredentialSources, EnvToken};
use teammem::git::{Deadline, GitProgram, NetworkOptions, Transport};
use teammem::git::{Upstream, UpstreamLookup, resolve_upstream};

use crate::common::{Sandbox, memory_text, write};

/// The sync commit message, as part 1 writes it.
pub const SYNC_MESSAGE: [&str; 2] = ["chore(memory): sync team memory", "Teammem-Sync: 1"];

/// Points libgit2's global, XDG and system config at an empty folder, once per test binary,
/// so tests never read the developer's own settings.
pub fn isolate_libgit2() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // One fixed, always-empty folder: nothing is ever written there.
        let empty = std::env::temp_dir().join("teammem-tests-empty-git-config");
        fs::create_dir_all(&empty).unwrap();
        for level in [
            git2::ConfigLevel::Global,
            git2::ConfigLevel::XDG,
            git2::ConfigLevel::System,
        ] {
            // SAFETY: runs once, before any test opens a repository in this binary.
            unsafe { git2::opts::set_search_path(level, &empty).unwrap() };
        }
    });
}

/// A bare remote below `srv/`, and two clones of it.
pub struct Team {
    /// The sandbox everything lives in.
    pub sb: Sandbox,
    /// The folder a server serves (`srv/`).
    pub srv: PathBuf,
    /// The bare remote, `srv/team.git`.
    pub bare: PathBuf,
    /// My clone, driven through the library.
    pub me: PathBuf,
    /// The teammate's clone, driven through the git CLI.
    pub mate: PathBuf,
}

impl Team {
    /// A team whose remote holds a README and two team memories.
    pub fn new() -> Team {
        isolate_libgit2();
        let sb = Sandbox::new();
        let srv = sb.path().join("srv");
        fs::create_dir_all(&srv).unwrap();
        sb.git(&srv, ["init", "-q", "--bare", "-b", "main", "team.git"]);
        let bare = srv.join("team.git");
        let seed = sb.repo("seed");
        write(
            &seed.join(".qwen/team-memory/feedback/use-postgres.md"),
            &memory_text(
                "Use the real database",
                "Integration tests hit a real Postgres",
                "feedback",
                "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n",
            ),
        );
        write(
            &seed.join(".qwen/team-memory/project/release-train.md"),
            &memory_text(
                "Release train",
                "Releases leave every Tuesday",
                "project",
                "Tuesday.\n",
            ),
        );
        sb.teammem(&seed, ["index", "--scope", "team"])
            .expect_code(0);
        sb.git(&seed, ["add", "-A"]);
        sb.git(&seed, ["commit", "-q", "-m", "team memory"]);
        sb.git(&seed, ["push", "-q", bare.to_str().unwrap(), "main"]);
        let me = sb.path().join("me");
        let mate = sb.path().join("mate");
        sb.git(sb.path(), ["clone", "-q", bare.to_str().unwrap(), "me"]);
        sb.git(sb.path(), ["clone", "-q", bare.to_str().unwrap(), "mate"]);
        Team {
            sb,
            srv,
            bare,
            me,
            mate,
        }
    }

    /// Network options for the library: the sandbox's git, no agent, a `budget`.
    pub fn options(&self, transport: Transport, budget: Duration) -> NetworkOptions {
        let home = self.sb.home();
        NetworkOptions {
            deadline: Deadline::after(budget),
            transport,
            credentials: CredentialSources {
                home: Some(home.clone()),
                ssh_agent: false,
                ssh_user: None,
                token: None,
                credential_helpers: true,
            },
            git: GitProgram {
                program: "git".into(),
                env: vec![
                    ("HOME".into(), Some(home.clone().into_os_string())),
                    (
                        "XDG_CONFIG_HOME".into(),
                        Some(home.join(".config").into_os_string()),
                    ),
                    ("GIT_CONFIG_NOSYSTEM".into(), Some("1".into())),
                    (
                        "GIT_CONFIG_GLOBAL".into(),
                        Some(home.join(".gitconfig").into_os_string()),
                    ),
                    ("LC_ALL".into(), Some("C".into())),
                ],
            },
            helper: None,
        }
    }

    /// The same options with a token for `user`.
    pub fn options_with_token(
        &self,
        transport: Transport,
        user: &str,
        token: &str,
    ) -> NetworkOptions {
        let mut options = self.options(transport, Duration::from_secs(20));
        options.credentials.token = Some(EnvToken {
            username: user.into(),
            secret: token.to_string().into(),
            host: None,
        });
        options
    }

    /// Opens a clone with libgit2.
    /// A `--depth 1` clone of the remote in the sandbox folder `shallow`.
    pub fn shallow_clone(&self) -> PathBuf {
        let url = format!("file://{}", self.bare.display());
        self.sb.git(
            self.sb.path(),
            ["clone", "-q", "--depth", "1", &url, "shallow"],
        );
        self.sb.path().join("shallow")
    }

    pub fn open(&self, dir: &Path) -> Repository {
        Repository::open(dir).unwrap()
    }

    /// The clone's upstream, which must exist.
    pub fn upstream(&self, repo: &Repository) -> Upstream {
        match resolve_upstream(repo).unwrap() {
            UpstreamLookup::Found(found) => found,
            other => panic!("expected an upstream, got {other:?}"),
        }
    }

    /// Points a clone's `origin` at `url`.
    pub fn set_origin(&self, dir: &Path, url: &str) {
        self.sb.git(dir, ["remote", "set-url", "origin", url]);
    }

    /// The teammate writes a file, commits and pushes it with the git CLI.
    pub fn mate_pushes(&self, path: &str, text: &str) -> String {
        write(&self.mate.join(path), text);
        self.sb.git(&self.mate, ["add", "-A"]);
        self.sb
            .git(&self.mate, ["commit", "-q", "-m", &format!("mate: {path}")]);
        self.sb.git(&self.mate, ["push", "-q", "origin", "main"]);
        self.rev(&self.mate, "HEAD")
    }

    /// A sync commit in `dir` (as part 1 would make it) of the team folder's changes.
    pub fn sync_commit(&self, dir: &Path) -> String {
        self.sb.git(dir, ["add", "-A", "--", ".qwen/team-memory"]);
        self.sb.git(
            dir,
            ["commit", "-q", "-m", SYNC_MESSAGE[0], "-m", SYNC_MESSAGE[1]],
        );
        self.rev(dir, "HEAD")
    }

    /// `git rev-parse` in `dir`.
    pub fn rev(&self, dir: &Path, what: &str) -> String {
        self.sb.git(dir, ["rev-parse", what]).trim().to_string()
    }

    /// `git status --porcelain` in `dir`.
    pub fn status(&self, dir: &Path) -> String {
        self.sb.git(dir, ["status", "--porcelain"])
    }
}

/// An oid from its hex.
pub fn oid(hex: &str) -> Oid {
    Oid::from_str(hex).unwrap()
}

/// Runs `work` on a thread and fails the test if it has not finished after `guard`, so a
/// hang shows up as a failure instead of a stuck test run. Not a speed assertion.
pub fn without_hanging<T: Send + 'static>(
    guard: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(guard).expect("the operation hung")
}
