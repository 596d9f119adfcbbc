//! Signing a sync commit the way git would when `commit.gpgsign` is on: OpenPGP through `gpg`,
//! SSH through `ssh-keygen -Y sign`, X.509 through `gpgsm`, with the user's own key.
//!
//! libgit2 never signs by itself. git would also run whatever `gpg.program` the repository's
//! `.git/config` names; teammem does not (invariant 7: no program planted in the repository runs),
//! so signing programs are read from the global and system configuration only.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git2::{Config, ConfigLevel, Repository};

use super::GitError;

/// How sync commits are signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signing {
    /// `commit.gpgsign` is off: commits are not signed.
    Off,
    /// Sign with `program` in `format`, using `key` (git's default key when `None`).
    With {
        /// `openpgp`, `ssh` or `x509`.
        format: SignFormat,
        /// The signing program, from the user's own configuration or the default.
        program: String,
        /// `user.signingkey`, when set.
        key: Option<String>,
    },
}

/// The signature formats git knows (`gpg.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignFormat {
    /// `gpg --status-fd=2 -bsau KEY`.
    OpenPgp,
    /// `ssh-keygen -Y sign -n git -f KEY`.
    Ssh,
    /// `gpgsm --status-fd=2 -bsau KEY`.
    X509,
}

/// The signing set-up and what the user should know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningPlan {
    /// How to sign.
    pub signing: Signing,
    /// A program named by the repository's own config that was ignored, when there is one.
    pub ignored_program: Option<String>,
}

/// Reads `commit.gpgsign`, `gpg.format` and `user.signingkey` from the full configuration, and
/// the signing program (`gpg.program`, `gpg.<format>.program`) from the global and system
/// configuration only.
pub fn signing_plan(repo: &Repository) -> Result<SigningPlan, GitError> {
    let config = repo
        .config()
        .map_err(|e| GitError::git("reading the git configuration", e))?;
    Ok(signing_plan_in(&config))
}

/// [`signing_plan`] from a configuration holding every level (a repository libgit2 cannot
/// open: `git/cli_repo/`).
pub fn signing_plan_in(config: &Config) -> SigningPlan {
    if !config.get_bool("commit.gpgsign").unwrap_or(false) {
        return SigningPlan {
            signing: Signing::Off,
            ignored_program: None,
        };
    }
    let format = match config.get_string("gpg.format").ok().as_deref() {
        Some("ssh") => SignFormat::Ssh,
        Some("x509") => SignFormat::X509,
        _ => SignFormat::OpenPgp,
    };
    let keys: &[&str] = match format {
        SignFormat::OpenPgp => &["gpg.openpgp.program", "gpg.program"],
        SignFormat::Ssh => &["gpg.ssh.program"],
        SignFormat::X509 => &["gpg.x509.program"],
    };
    let default = match format {
        SignFormat::OpenPgp => "gpg",
        SignFormat::Ssh => "ssh-keygen",
        SignFormat::X509 => "gpgsm",
    };
    let program = user_level_string(config, keys).unwrap_or_else(|| default.to_string());
    let ignored_program = repo_level_string(config, keys);
    let key = config
        .get_string("user.signingkey")
        .ok()
        .filter(|k| !k.is_empty());
    SigningPlan {
        signing: Signing::With {
            format,
            program,
            key,
        },
        ignored_program,
    }
}

const USER_LEVELS: [ConfigLevel; 4] = [
    ConfigLevel::Global,
    ConfigLevel::XDG,
    ConfigLevel::System,
    ConfigLevel::ProgramData,
];

fn user_level_string(config: &Config, keys: &[&str]) -> Option<String> {
    first_string_at(config, &USER_LEVELS, keys)
}

fn repo_level_string(config: &Config, keys: &[&str]) -> Option<String> {
    first_string_at(
        config,
        &[ConfigLevel::Worktree, ConfigLevel::Local, ConfigLevel::App],
        keys,
    )
}

/// The first of `keys` set at the first of `levels` that sets any of them.
fn first_string_at(config: &Config, levels: &[ConfigLevel], keys: &[&str]) -> Option<String> {
    for &level in levels {
        let Ok(at_level) = config.open_level(level) else {
            continue;
        };
        for key in keys {
            if let Ok(value) = at_level.get_string(key) {
                return Some(value);
            }
        }
    }
    None
}

/// Why a commit could not be signed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SignError(pub String);

/// Signs a commit buffer. `committer` is git's default key for OpenPGP ("Name <email>");
/// `scratch` is a folder of ours for the files `ssh-keygen` needs (removed afterwards). The
/// program is stopped after `budget`.
pub fn sign(
    signing: &Signing,
    payload: &str,
    committer: &str,
    scratch: &Path,
    budget: Duration,
) -> Result<Option<String>, SignError> {
    let Signing::With {
        format,
        program,
        key,
    } = signing
    else {
        return Ok(None);
    };
    match format {
        SignFormat::OpenPgp | SignFormat::X509 => {
            let key = key.clone().unwrap_or_else(|| committer.to_string());
            let mut cmd = Command::new(program);
            cmd.args(["--status-fd=2", "-bsau", &key]);
            let (stdout, stderr) = run(&mut cmd, payload.as_bytes(), budget, program)?;
            if !stderr.contains("[GNUPG:] SIG_CREATED ") {
                return Err(SignError(format!(
                    "{program} did not sign: {}",
                    last_line(&stderr)
                )));
            }
            Ok(Some(stdout))
        }
        SignFormat::Ssh => {
            let signed = sign_ssh(program, key.as_deref(), payload, scratch, budget);
            let _ = std::fs::remove_dir_all(scratch);
            signed.map(Some)
        }
    }
}

fn sign_ssh(
    program: &str,
    key: Option<&str>,
    payload: &str,
    scratch: &Path,
    budget: Duration,
) -> Result<String, SignError> {
    let Some(key) = key else {
        return Err(SignError(
            "gpg.format is ssh but user.signingkey is not set; set it to your SSH key file".into(),
        ));
    };
    std::fs::create_dir_all(scratch).map_err(|e| SignError(format!("temp folder: {e}")))?;
    let buffer = scratch.join("commit");
    std::fs::write(&buffer, payload).map_err(|e| SignError(format!("temp file: {e}")))?;
    let literal = key.strip_prefix("key::").or_else(|| {
        (key.starts_with("ssh-") || key.starts_with("ecdsa-") || key.starts_with("sk-"))
            .then_some(key)
    });
    let mut cmd = Command::new(program);
    cmd.args(["-Y", "sign", "-n", "git", "-f"]);
    match literal {
        Some(public) => {
            let key_file = scratch.join("key.pub");
            std::fs::write(&key_file, format!("{public}\n"))
                .map_err(|e| SignError(format!("temp file: {e}")))?;
            cmd.arg(&key_file).arg("-U");
        }
        None => {
            cmd.arg(expand_home(key));
        }
    }
    cmd.arg(&buffer);
    let (_, stderr) = run(&mut cmd, b"", budget, program)?;
    let sig = buffer.with_extension("sig");
    std::fs::read_to_string(&sig)
        .map_err(|_| SignError(format!("{program} did not sign: {}", last_line(&stderr))))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with("[GNUPG:]"))
        .unwrap_or("no output")
        .trim()
        .to_string()
}

/// Runs a signing program with `input` on stdin, killing it when `budget` runs out.
fn run(
    cmd: &mut Command,
    input: &[u8],
    budget: Duration,
    program: &str,
) -> Result<(String, String), SignError> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SignError(format!("cannot run {program}: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < budget => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SignError(format!(
                    "{program} did not finish within {} s (waiting for a passphrase?)",
                    budget.as_secs()
                )));
            }
            Err(e) => return Err(SignError(format!("waiting for {program}: {e}"))),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(SignError(format!(
            "{program} failed: {}",
            last_line(&stderr)
        )));
    }
    Ok((stdout, stderr))
}
