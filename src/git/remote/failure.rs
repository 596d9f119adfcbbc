//! Why a network operation gave up, in words fit for the report, never with a credential.

use super::deadline::Deadline;

/// Why a network operation gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetFailureKind {
    /// The remote could not be reached, refused us, or the transfer failed
    /// (`fetch-failed` / `push-failed`).
    Failed,
    /// The time budget ran out (`timeout`).
    Timeout,
    /// The fetch grew past `git::fetch::MAX_FETCH_BYTES` and was stopped (`too-large`).
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
