//! Running the installed git: for `git credential fill` and the `git-cli` transport, never
//! prompting, killed at the deadline with everything it started, and with nothing planted in
//! the repository allowed to run.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Command, Stdio};

use git2::{ConfigLevel, Repository};

use super::child::{self, Stopped};
use super::deadline::Deadline;
use super::failure::NetFailure;
use super::options::NetworkOptions;

/// `git fetch` as teammem runs it: quiet, no tags, no submodules, no `FETCH_HEAD`, and the
/// remote's own `git-upload-pack` whatever the config names (then `--` and what to fetch).
pub(crate) const QUIET_FETCH: [&str; 6] = [
    "fetch",
    "--quiet",
    "--no-tags",
    "--no-recurse-submodules",
    "--no-write-fetch-head",
    "--upload-pack=git-upload-pack",
];

/// How to run the git CLI (for `git credential fill` and the `git-cli` transport).
#[derive(Debug, Clone)]
pub struct GitProgram {
    /// The program to run, `git` by default.
    pub program: OsString,
    /// Environment changes for every run: `Some` sets, `None` removes.
    pub env: Vec<(OsString, Option<OsString>)>,
}

impl GitProgram {
    /// `git` from `PATH`, with the process's own environment.
    pub fn from_process() -> Self {
        GitProgram {
            program: OsString::from("git"),
            env: Vec::new(),
        }
    }

    /// A command for this git with the non-interactive environment every run gets: no
    /// terminal prompt, no askpass program, no pager, and none of the variables a hook sets
    /// that would point git at another repository.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
        ] {
            cmd.env_remove(var);
        }
        // teammem points OpenSSL at an empty bundle for its own libgit2 (the CA folder is used
        // instead, or no TLS is needed); git and its curl keep the user's settings.
        crate::sys::user_openssl_environment(&mut cmd);
        cmd.env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never")
            .env("GIT_PAGER", "cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }
}

/// What a git CLI run printed.
#[derive(Debug)]
pub(crate) struct GitRun {
    /// Whether git exited with status 0.
    pub success: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs git with `input` on stdin, killing it (and what it started) at the deadline.
pub(crate) fn run_git(
    mut cmd: Command,
    input: &[u8],
    deadline: &Deadline,
    what: &str,
) -> Result<GitRun, NetFailure> {
    // The kernel kills git when teammem dies (a hook timeout's SIGKILL), so no transfer
    // outlives the budget.
    crate::sys::kill_with_parent(&mut cmd);
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    match child::run_within(cmd, input, deadline) {
        Ok(done) => Ok(GitRun {
            success: done.status.success(),
            stdout: text(done.stdout),
            stderr: text(done.stderr),
        }),
        Err(Stopped::Spawn(e)) => Err(NetFailure::failed(format!("{what}: cannot run git: {e}"))),
        Err(Stopped::Wait { error, .. }) => Err(NetFailure::failed(format!("{what}: {error}"))),
        Err(Stopped::Deadline { .. }) => Err(NetFailure::timeout(format!(
            "{what}: the time budget ran out; git was stopped"
        ))),
    }
}

/// Options given to every git CLI network run so that nothing planted in the repository runs
/// (invariant 7): no hooks, no fsmonitor, no askpass, no signed push, no `ext::` transport,
/// no automatic gc, and credential helpers reset to the user's own (global and system) ones.
pub(crate) fn git_cli_network_command(
    repo: &Repository,
    options: &NetworkOptions,
) -> Result<Command, NetFailure> {
    let config = repo.config().ok();
    network_command_at(repo.path(), repo.workdir(), config.as_ref(), options)
}

/// [`git_cli_network_command`] for the repository whose git folder is `git_dir` and whose
/// config (all levels, or just its own files) is `config`: for a repository libgit2 cannot
/// open (`git/cli_repo/`).
pub(crate) fn network_command_at(
    git_dir: &Path,
    workdir: Option<&Path>,
    config: Option<&git2::Config>,
    options: &NetworkOptions,
) -> Result<Command, NetFailure> {
    refuse_planted_programs(config)?;
    let mut cmd = options.git.command();
    cmd.current_dir(workdir.unwrap_or(git_dir));
    // The repository as teammem found it (`GIT_DIR`, a separate git folder): git's own walk up
    // from the work tree could find another one, or none.
    cmd.env("GIT_DIR", git_dir);
    if let Some(workdir) = workdir {
        cmd.env("GIT_WORK_TREE", workdir);
    }
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "core.askPass=",
        "credential.interactive=false",
        "push.gpgSign=false",
        "protocol.ext.allow=never",
        "gc.auto=0",
        "maintenance.auto=false",
        "fetch.recurseSubmodules=false",
    ] {
        cmd.arg("-c").arg(setting);
    }
    let user = user_config();
    if sets_local_credential_helper(config) {
        // An empty value empties the helper list read so far (system, global, local); the
        // user's own helpers are then given again, so only the repository's are dropped.
        cmd.arg("-c").arg("credential.helper=");
        for helper in &user.helpers {
            cmd.arg("-c").arg(format!("credential.helper={helper}"));
        }
    }
    if let Some(token) = &options.credentials.token {
        // The token reaches git through the environment, never the command line.
        let key = match &token.host {
            Some(host) => format!("credential.https://{host}.helper"),
            None => "credential.helper".to_string(),
        };
        cmd.arg("-c").arg(format!(
            "{key}=!f() {{ test \"$1\" = get && echo username=\"$TEAMMEM_CLI_USERNAME\" && echo password=\"$TEAMMEM_CLI_TOKEN\"; }}; f"
        ));
        cmd.env("TEAMMEM_CLI_USERNAME", &token.username);
        cmd.env(
            "TEAMMEM_CLI_TOKEN",
            secrecy::ExposeSecret::expose_secret(&token.secret),
        );
    }
    // GIT_SSH_COMMAND outranks core.sshCommand, so the repository's value never runs: the
    // user's own environment or global setting wins, else plain ssh (or $GIT_SSH).
    if std::env::var_os("GIT_SSH_COMMAND").is_none()
        && !options
            .git
            .env
            .iter()
            .any(|(k, _)| k == OsStr::new("GIT_SSH_COMMAND"))
    {
        let ssh = user
            .ssh_command
            .or_else(|| {
                std::env::var("GIT_SSH")
                    .ok()
                    .map(|p| format!("'{}'", p.replace('\'', "'\\''")))
            })
            .unwrap_or_else(|| "ssh".to_string());
        cmd.env("GIT_SSH_COMMAND", ssh);
    }
    Ok(cmd)
}

/// The user's own settings (global, XDG and system config; never the repository's).
struct UserConfig {
    helpers: Vec<String>,
    ssh_command: Option<String>,
}

fn user_config() -> UserConfig {
    let mut user = UserConfig {
        helpers: Vec::new(),
        ssh_command: None,
    };
    let Ok(config) = crate::git::user_config::open_default() else {
        return user;
    };
    if let Ok(mut entries) = config.multivar("credential.helper", None) {
        while let Some(Ok(entry)) = entries.next() {
            match entry.value() {
                Ok("") => user.helpers.clear(),
                Ok(value) => user.helpers.push(value.to_string()),
                Err(_) => {}
            }
        }
    }
    user.ssh_command = config
        .get_string("core.sshCommand")
        .ok()
        .filter(|s| !s.is_empty());
    user
}

/// Whether the repository's own config (or its worktree config) sets `credential.helper`.
fn sets_local_credential_helper(config: Option<&git2::Config>) -> bool {
    let Some(config) = config else {
        return false;
    };
    [ConfigLevel::Local, ConfigLevel::Worktree]
        .into_iter()
        .any(|level| {
            config
                .open_level(level)
                .map(|local| local.get_entry("credential.helper").is_ok())
                .unwrap_or(false)
        })
}

/// Settings in the repository's own config that make the git CLI run a program and that `-c`
/// cannot switch off: refuse rather than run them.
fn refuse_planted_programs(config: Option<&git2::Config>) -> Result<(), NetFailure> {
    let Some(config) = config else {
        return Ok(());
    };
    for level in [ConfigLevel::Local, ConfigLevel::Worktree] {
        let Ok(local) = config.open_level(level) else {
            continue;
        };
        let Ok(mut entries) = local.entries(None) else {
            continue;
        };
        while let Some(Ok(entry)) = entries.next() {
            let Ok(name) = entry.name() else { continue };
            let name = name.to_ascii_lowercase();
            let planted = name.starts_with("include.")
                || name.starts_with("includeif.")
                || name == "core.gitproxy"
                || (name.starts_with("credential.")
                    && name.ends_with(".helper")
                    && name != "credential.helper");
            if planted {
                return Err(NetFailure::failed(format!(
                    "the repository's own config sets `{name}`, which would make the git CLI run a program from the repository; remove it or use `--transport builtin`"
                )));
            }
        }
    }
    Ok(())
}

/// The URL a remote is reached at for `direction`, as the git CLI transport passes it
/// (the URL rather than the remote's name, so `remote.<name>.uploadpack`, `.receivepack`
/// and `.vcs` from the repository's config never run).
pub(crate) fn remote_url(remote: &git2::Remote<'_>, push: bool) -> Result<String, NetFailure> {
    let url = if push {
        remote
            .pushurl()
            .ok()
            .flatten()
            .or_else(|| remote.url().ok())
    } else {
        remote.url().ok()
    };
    url.map(str::to_string)
        .ok_or_else(|| NetFailure::failed("the remote has no URL (or it is not UTF-8)"))
}
