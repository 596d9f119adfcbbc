//! Credentials for fetch and push, found where a git user keeps them, each tried once.
//!
//! Order: for SSH, the ssh-agent, then `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa` (keys with a
//! passphrase fail: nothing can prompt); for HTTP(S), a token from the environment, then the
//! user's git credential helpers through `git credential fill`. libgit2 calls the credentials
//! callback again after every refusal, so without a bound a wrong password loops forever; here
//! each source is offered once and the callback gives up after [`MAX_ATTEMPTS`].
//!
//! Unlike git, which also asks helpers configured in the repository's own `.git/config`,
//! `git credential fill` runs outside the repository: a helper planted in a cloned repository
//! never runs (invariant 7). teammem only reads credentials; it never stores or erases them
//! (`git credential approve` / `reject` are not called).

use std::path::PathBuf;
use std::time::Duration;

use git2::{Cred, CredentialType};
use secrecy::{ExposeSecret, SecretString};

use super::deadline::Deadline;
use super::git_cli::{GitProgram, run_git};

/// At most this many credentials are offered to one server in one operation.
pub const MAX_ATTEMPTS: usize = 6;

/// How long `git credential fill` may take at most (a helper that opens a dialog, say).
const HELPER_BUDGET: Duration = Duration::from_secs(5);

/// A token from the environment, for CI.
#[derive(Debug, Clone)]
pub struct EnvToken {
    /// The user name sent with it (`x-access-token` unless set).
    pub username: String,
    /// The token.
    pub secret: SecretString,
    /// Only sent to this host (with port, if any); `None` sends it to the upstream's host.
    pub host: Option<String>,
}

/// Where credentials may come from.
#[derive(Debug, Clone, Default)]
pub struct CredentialSources {
    /// The home folder whose `.ssh/` default keys are tried.
    pub home: Option<PathBuf>,
    /// Whether to ask the ssh-agent (`SSH_AUTH_SOCK`).
    pub ssh_agent: bool,
    /// The user name for SSH when the URL has none.
    pub ssh_user: Option<String>,
    /// A token from the environment.
    pub token: Option<EnvToken>,
    /// Whether to ask the user's git credential helpers (`git credential fill`).
    pub credential_helpers: bool,
}

impl CredentialSources {
    /// The sources of a real run: `$HOME/.ssh`, the agent when `SSH_AUTH_SOCK` is set, the
    /// credential helpers, and `TEAMMEM_GIT_TOKEN` (user `TEAMMEM_GIT_USERNAME`, any host) or
    /// else `GITHUB_TOKEN` (only ever sent to github.com).
    pub fn from_process() -> Self {
        let token = match std::env::var("TEAMMEM_GIT_TOKEN") {
            Ok(secret) if !secret.is_empty() => Some(EnvToken {
                username: std::env::var("TEAMMEM_GIT_USERNAME")
                    .ok()
                    .filter(|u| !u.is_empty())
                    .unwrap_or_else(|| "x-access-token".into()),
                secret: SecretString::from(secret),
                host: None,
            }),
            _ => match std::env::var("GITHUB_TOKEN") {
                Ok(secret) if !secret.is_empty() => Some(EnvToken {
                    username: "x-access-token".into(),
                    secret: SecretString::from(secret),
                    host: Some("github.com".into()),
                }),
                _ => None,
            },
        };
        CredentialSources {
            home: std::env::var_os("HOME").map(PathBuf::from),
            ssh_agent: std::env::var_os("SSH_AUTH_SOCK").is_some(),
            ssh_user: std::env::var("USER").ok(),
            token,
            credential_helpers: true,
        }
    }
}

/// The pieces of a remote URL that credential lookup needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlParts {
    /// `https`, `http`, `ssh`, `git`, `file`.
    pub protocol: String,
    /// The host, with its port when the URL has one.
    pub host: String,
    /// The path after the host, without the leading `/`.
    pub path: String,
}

/// Splits `scheme://[user[:pass]@]host[:port]/path`; scp-like `user@host:path` is ssh.
pub(crate) fn url_parts(url: &str) -> Option<UrlParts> {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit('@').next().unwrap_or(authority);
        return Some(UrlParts {
            protocol: scheme.to_ascii_lowercase(),
            host: host.to_string(),
            path: path.to_string(),
        });
    }
    let (authority, path) = url.split_once(':')?;
    let host = authority.rsplit('@').next().unwrap_or(authority);
    Some(UrlParts {
        protocol: "ssh".into(),
        host: host.to_string(),
        path: path.to_string(),
    })
}

/// Offers each credential source once, in order, for one network operation.
pub(crate) struct CredentialPicker<'a> {
    sources: &'a CredentialSources,
    git: &'a GitProgram,
    deadline: Deadline,
    attempts: usize,
    ssh_next: usize,
    token_tried: bool,
    helper_tried: bool,
    /// Set once every source has been offered, to explain the failure.
    pub exhausted: bool,
}

impl<'a> CredentialPicker<'a> {
    /// A picker for one operation.
    pub(crate) fn new(
        sources: &'a CredentialSources,
        git: &'a GitProgram,
        deadline: Deadline,
    ) -> Self {
        CredentialPicker {
            sources,
            git,
            deadline,
            attempts: 0,
            ssh_next: 0,
            token_tried: false,
            helper_tried: false,
            exhausted: false,
        }
    }

    /// The libgit2 credentials callback: the next untried credential that fits, or an error
    /// that ends the operation.
    pub(crate) fn next(
        &mut self,
        url: &str,
        username_from_url: Option<&str>,
        allowed: CredentialType,
    ) -> Result<Cred, git2::Error> {
        self.attempts += 1;
        if self.attempts > MAX_ATTEMPTS || self.deadline.passed() {
            self.exhausted = true;
            return Err(git2::Error::from_str("no more credentials to try"));
        }
        if allowed.contains(CredentialType::USERNAME) {
            let user = username_from_url
                .map(str::to_string)
                .or_else(|| self.sources.ssh_user.clone())
                .unwrap_or_else(|| "git".into());
            return Cred::username(&user);
        }
        if allowed.contains(CredentialType::SSH_KEY) {
            let user = username_from_url
                .map(str::to_string)
                .or_else(|| self.sources.ssh_user.clone())
                .unwrap_or_else(|| "git".into());
            if let Some(cred) = self.next_ssh(&user) {
                return Ok(cred);
            }
        }
        if allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
            if let Some(cred) = self.next_userpass(url, username_from_url) {
                return Ok(cred);
            }
        }
        self.exhausted = true;
        Err(git2::Error::from_str("no more credentials to try"))
    }

    fn next_ssh(&mut self, user: &str) -> Option<Cred> {
        loop {
            let step = self.ssh_next;
            self.ssh_next += 1;
            match step {
                0 if self.sources.ssh_agent => {
                    if let Ok(cred) = Cred::ssh_key_from_agent(user) {
                        return Some(cred);
                    }
                }
                0 => {}
                1..=3 => {
                    let name = ["id_ed25519", "id_ecdsa", "id_rsa"][step - 1];
                    let Some(home) = &self.sources.home else {
                        continue;
                    };
                    let key = home.join(".ssh").join(name);
                    if !key.is_file() {
                        continue;
                    }
                    let public = key.with_extension("pub");
                    let public = public.is_file().then_some(public);
                    if let Ok(cred) = Cred::ssh_key(user, public.as_deref(), &key, None) {
                        return Some(cred);
                    }
                }
                _ => return None,
            }
        }
    }

    fn next_userpass(&mut self, url: &str, username_from_url: Option<&str>) -> Option<Cred> {
        let parts = url_parts(url)?;
        if !self.token_tried {
            self.token_tried = true;
            if let Some(token) = &self.sources.token {
                let host_fits = token
                    .host
                    .as_deref()
                    .is_none_or(|h| h.eq_ignore_ascii_case(&parts.host));
                if host_fits {
                    if let Ok(cred) =
                        Cred::userpass_plaintext(&token.username, token.secret.expose_secret())
                    {
                        return Some(cred);
                    }
                }
            }
        }
        if !self.helper_tried {
            self.helper_tried = true;
            if self.sources.credential_helpers {
                if let Some((user, password)) = self.fill(&parts, username_from_url) {
                    if let Ok(cred) = Cred::userpass_plaintext(&user, password.expose_secret()) {
                        return Some(cred);
                    }
                }
            }
        }
        None
    }

    /// Asks `git credential fill`, run from the filesystem root so the repository's config is
    /// never read, with prompts and askpass programs off and a short budget.
    fn fill(&self, parts: &UrlParts, username: Option<&str>) -> Option<(String, SecretString)> {
        let budget = self.deadline.remaining().min(HELPER_BUDGET);
        let mut cmd = self.git.command();
        cmd.current_dir("/")
            .env("GIT_CEILING_DIRECTORIES", "/")
            .args([
                "-c",
                "credential.interactive=false",
                "-c",
                "core.askPass=",
                "credential",
                "fill",
            ]);
        let mut input = format!(
            "protocol={}\nhost={}\npath={}\n",
            parts.protocol, parts.host, parts.path
        );
        if let Some(user) = username {
            input.push_str(&format!("username={user}\n"));
        }
        input.push('\n');
        let run = run_git(
            cmd,
            input.as_bytes(),
            &Deadline::after(budget),
            "git credential fill",
        )
        .ok()?;
        if !run.success {
            return None;
        }
        let mut user = None;
        let mut password = None;
        for line in run.stdout.lines() {
            if let Some(value) = line.strip_prefix("username=") {
                user = Some(value.to_string());
            } else if let Some(value) = line.strip_prefix("password=") {
                password = Some(SecretString::from(value.to_string()));
            }
        }
        Some((user?, password?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parts_cover_the_usual_remote_spellings() {
        let parts = url_parts("https://me:pw@example.com:8443/team/repo.git").unwrap();
        assert_eq!(parts.protocol, "https");
        assert_eq!(parts.host, "example.com:8443");
        assert_eq!(parts.path, "team/repo.git");
        let scp = url_parts("git@github.com:team/repo.git").unwrap();
        assert_eq!(scp.protocol, "ssh");
        assert_eq!(scp.host, "github.com");
        assert_eq!(scp.path, "team/repo.git");
    }

    #[test]
    fn each_source_is_offered_once_then_the_picker_gives_up() {
        let sources = CredentialSources {
            token: Some(EnvToken {
                username: "ci".into(),
                secret: SecretString::from("t0ken".to_string()),
                host: None,
            }),
            ..CredentialSources::default()
        };
        let git = GitProgram::from_process();
        let mut picker =
            CredentialPicker::new(&sources, &git, Deadline::after(Duration::from_secs(5)));
        let url = "http://127.0.0.1:1/repo.git";
        assert!(
            picker
                .next(url, None, CredentialType::USER_PASS_PLAINTEXT)
                .is_ok()
        );
        assert!(
            picker
                .next(url, None, CredentialType::USER_PASS_PLAINTEXT)
                .is_err()
        );
        assert!(picker.exhausted);
    }

    #[test]
    fn a_github_token_is_never_offered_to_another_host() {
        let sources = CredentialSources {
            token: Some(EnvToken {
                username: "x-access-token".into(),
                secret: SecretString::from("ghs_x".to_string()),
                host: Some("github.com".into()),
            }),
            ..CredentialSources::default()
        };
        let git = GitProgram::from_process();
        let mut picker =
            CredentialPicker::new(&sources, &git, Deadline::after(Duration::from_secs(5)));
        assert!(
            picker
                .next(
                    "https://gitlab.example/repo.git",
                    None,
                    CredentialType::USER_PASS_PLAINTEXT
                )
                .is_err()
        );
    }

    #[test]
    fn the_attempt_bound_holds_even_when_a_server_keeps_asking() {
        let sources = CredentialSources::default();
        let git = GitProgram::from_process();
        let mut picker =
            CredentialPicker::new(&sources, &git, Deadline::after(Duration::from_secs(5)));
        let mut offered = 0;
        for _ in 0..100 {
            if picker
                .next("ssh://h/r", Some("git"), CredentialType::USERNAME)
                .is_ok()
            {
                offered += 1;
            }
        }
        assert_eq!(offered, MAX_ATTEMPTS);
    }
}
