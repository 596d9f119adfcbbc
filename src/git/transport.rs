//! How sync reaches a remote: one time budget, no prompts, and either libgit2's own transports
//! or the git CLI (`--transport git-cli`), with the same guarantees on both.
//!
//! libgit2 has no per-operation timeout: its connect and read timeouts are process-wide
//! settings (`GIT_OPT_SET_SERVER_CONNECT_TIMEOUT` / `GIT_OPT_SET_SERVER_TIMEOUT`). They are set
//! from the remaining budget under one lock, held for the whole network operation, so two
//! operations in one process never see each other's values. Progress callbacks abort a
//! transfer that is still running when the deadline passes.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use git2::{ConfigLevel, Repository};

use super::credentials::CredentialSources;

/// When a sync must be over, network included (invariant 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
}

impl Deadline {
    /// A deadline `budget` from now (a budget too large for the clock means about a century).
    pub fn after(budget: Duration) -> Self {
        let now = Instant::now();
        Deadline {
            at: now
                .checked_add(budget)
                .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
                .unwrap_or(now),
        }
    }

    /// A deadline at `at`.
    pub fn at(at: Instant) -> Self {
        Deadline { at }
    }

    /// Time left, zero once passed.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// Which implementation talks to the remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// libgit2's own transports (file, git, http(s), ssh through libssh2).
    #[default]
    Builtin,
    /// The installed git CLI, for SSH setups libssh2 cannot read (`~/.ssh/config` aliases,
    /// `ProxyCommand`).
    GitCli,
}

impl Transport {
    /// Parses the `--transport` value: `builtin` or `git-cli`.
    pub fn parse(text: &str) -> Option<Transport> {
        match text {
            "builtin" | "libgit2" => Some(Transport::Builtin),
            "git-cli" => Some(Transport::GitCli),
            _ => None,
        }
    }

    /// The name as written on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Builtin => "builtin",
            Transport::GitCli => "git-cli",
        }
    }
}

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
        // instead, or no TLS is needed); git and its curl keep their own defaults.
        if std::env::var_os("SSL_CERT_FILE").is_some_and(|f| f == "/dev/null") {
            cmd.env_remove("SSL_CERT_FILE");
        }
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

/// Everything a network operation needs besides the repository.
#[derive(Debug, Clone)]
pub struct NetworkOptions {
    /// When the whole sync must be over.
    pub deadline: Deadline,
    /// libgit2 or the git CLI.
    pub transport: Transport,
    /// Where credentials may come from.
    pub credentials: CredentialSources,
    /// The git CLI, for credential helpers and the `git-cli` transport.
    pub git: GitProgram,
    /// The teammem binary, to run libgit2's transfers in a helper process that is killed at
    /// the deadline; `None` runs them in this process, bounded by libgit2's own timeouts only.
    pub helper: Option<std::path::PathBuf>,
}

impl NetworkOptions {
    /// Options for a real run: the process's git, credentials from the usual places.
    pub fn from_process(budget: Duration, transport: Transport) -> Self {
        NetworkOptions {
            deadline: Deadline::after(budget),
            transport,
            credentials: CredentialSources::from_process(),
            git: GitProgram::from_process(),
            helper: super::helper::registered_program(),
        }
    }
}

/// Why a network operation gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetFailureKind {
    /// The remote could not be reached, refused us, or the transfer failed
    /// (`fetch-failed` / `push-failed`).
    Failed,
    /// The time budget ran out (`timeout`).
    Timeout,
    /// The fetch grew past [`super::fetch::MAX_FETCH_BYTES`] and was stopped (`too-large`).
    TooLarge,
}

/// A network operation that did not complete, with a message fit for the report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NetFailure {
    /// Failed or timed out.
    pub kind: NetFailureKind,
    /// What happened, naming the remote; never a credential.
    pub message: String,
}

impl NetFailure {
    /// A failure that is not a timeout.
    pub fn failed(message: impl Into<String>) -> Self {
        NetFailure {
            kind: NetFailureKind::Failed,
            message: redact_url_credentials(&message.into()),
        }
    }

    /// The budget ran out.
    pub fn timeout(message: impl Into<String>) -> Self {
        NetFailure {
            kind: NetFailureKind::Timeout,
            message: redact_url_credentials(&message.into()),
        }
    }

    /// Classifies a libgit2 error: past the deadline (or a socket timeout) it is a timeout.
    pub(crate) fn from_git(what: &str, err: &git2::Error, deadline: &Deadline) -> Self {
        let timed_out = deadline.passed() || err.message().contains("timed out");
        let mut message = format!("{what}: {}", err.message());
        if err.class() == git2::ErrorClass::Ssh && err.message().contains("hostkey") {
            // libssh2 checks the server's key against ~/.ssh/known_hosts, as ssh does, and
            // teammem never accepts an unknown one on its own.
            message.push_str(
                " — the server's key is not the one ~/.ssh/known_hosts lists for it, or the \
                 host is not listed; check the key, then add it (connect once with ssh, or \
                 ssh-keyscan)",
            );
        }
        if err.code() == git2::ErrorCode::Certificate || err.message().contains("certificate is") {
            message.push_str(
                " — the server's certificate is not signed by an authority this machine trusts; \
                 for a private one, point SSL_CERT_FILE at its certificate (or use \
                 --transport git-cli with http.sslCAInfo)",
            );
        }
        if timed_out {
            NetFailure::timeout(message)
        } else {
            NetFailure::failed(message)
        }
    }
}

/// Replaces the user-info of every URL in `text` (`https://user:token@host` becomes
/// `https://***@host`), so a token written into a remote URL never reaches a report.
pub fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(after.len());
        match after[..authority_end].rfind('@') {
            Some(userinfo_end) => {
                out.push_str("***");
                rest = &after[userinfo_end..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Serialises libgit2 network operations so the process-wide timeouts belong to one of them.
static NETWORK: Mutex<()> = Mutex::new(());

/// Runs a libgit2 network operation with connect and read timeouts set from the budget.
pub(crate) fn with_timeouts<T>(deadline: &Deadline, operation: impl FnOnce() -> T) -> T {
    let _only_one = NETWORK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let millis = deadline.remaining().as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: these write two C ints read by libgit2 when it opens or reads a socket. Every
    // write happens under NETWORK, which is held for the whole operation that reads them.
    unsafe {
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(millis);
        let _ = git2::opts::set_server_timeout_in_milliseconds(millis);
    }
    operation()
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
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so ssh or a credential helper it started dies with it.
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe; it makes the kernel kill git when teammem dies
        // (a hook timeout's SIGKILL), so no transfer outlives the budget.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| NetFailure::failed(format!("{what}: cannot run git: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let stdout = child.stdout.take().map(read_in_background);
    let stderr = child.stderr.take().map(read_in_background);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if deadline.passed() => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(NetFailure::failed(format!("{what}: {e}"))),
        }
    };
    let Some(status) = status else {
        kill_group(&mut child);
        return Err(NetFailure::timeout(format!(
            "{what}: the time budget ran out; git was stopped"
        )));
    };
    let collect = |handle: Option<std::thread::JoinHandle<Vec<u8>>>| {
        handle
            .and_then(|h| h.join().ok())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    Ok(GitRun {
        success: status.success(),
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) on the process group this function's caller created for git.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Options given to every git CLI network run so that nothing planted in the repository runs
/// (invariant 7): no hooks, no fsmonitor, no askpass, no signed push, no `ext::` transport,
/// no automatic gc, and credential helpers reset to the user's own (global and system) ones.
pub(crate) fn git_cli_network_command(
    repo: &Repository,
    options: &NetworkOptions,
) -> Result<Command, NetFailure> {
    refuse_planted_programs(repo)?;
    let workdir = repo.workdir().unwrap_or(repo.path());
    let mut cmd = options.git.command();
    cmd.current_dir(workdir);
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
    if sets_local_credential_helper(repo) {
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
    let Ok(config) = git2::Config::open_default() else {
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
fn sets_local_credential_helper(repo: &Repository) -> bool {
    let Ok(config) = repo.config() else {
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
fn refuse_planted_programs(repo: &Repository) -> Result<(), NetFailure> {
    let Ok(config) = repo.config() else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_never_reach_a_message() {
        assert_eq!(
            redact_url_credentials(
                "fatal: unable to access 'https://bob:t0ken@example.com/r.git/': 403"
            ),
            "fatal: unable to access 'https://***@example.com/r.git/': 403"
        );
        assert_eq!(
            redact_url_credentials("git://127.0.0.1:9/r and http://h/x"),
            "git://127.0.0.1:9/r and http://h/x"
        );
    }
}
