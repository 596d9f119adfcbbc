//! What a network operation is given besides the repository: the deadline, the transport,
//! where credentials may come from, the git CLI and the helper process.

use std::time::Duration;

use super::credentials::CredentialSources;
use super::deadline::Deadline;
use super::git_cli::GitProgram;

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
            helper: crate::git::helper::registered_program(),
        }
    }
}
