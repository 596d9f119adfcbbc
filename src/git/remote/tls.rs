//! Where OpenSSL finds its certificates, decided once before libgit2 starts.
//!
//! libgit2 parses the whole CA bundle (`SSL_CERT_FILE`) when it starts — tens of milliseconds,
//! most of a local sync — though only fetch and push over HTTPS need it. A command that never
//! talks to a remote, or whose remotes cannot be HTTPS as far as the config shows, points
//! OpenSSL at an empty bundle; any other lets OpenSSL look certificates up one at a time in the
//! hashed CA folder instead of parsing the bundle. The user's own `SSL_CERT_FILE` and
//! `SSL_CERT_DIR` are given back to the programs teammem starts (`sys::point_openssl_at`).

use std::path::{Path, PathBuf};

use crate::git::plain::{self, Config, PlainRepo};

/// What a command may need of TLS.
#[derive(Debug, Clone, Copy)]
pub enum TlsUse<'a> {
    /// It never talks to a remote.
    Never,
    /// It talks to the remotes of the repository around this folder (default: the current one).
    RemotesOf(Option<&'a Path>),
    /// It may talk to any remote.
    Any,
}

/// Folders where distributions keep CA certificates as hashed links (`<hash>.0`), which
/// OpenSSL can search one certificate at a time.
const HASHED_CA_FOLDERS: &[&str] = &[
    "/etc/ssl/certs",
    "/usr/lib/ssl/certs",
    "/usr/local/share/certs",
];

/// Sets OpenSSL up for what the command needs; called before any thread and before libgit2.
pub fn set_up(tls: TlsUse<'_>) {
    let needed = match tls {
        TlsUse::Never => false,
        TlsUse::RemotesOf(dir) => !remotes_need_no_tls(dir),
        TlsUse::Any => true,
    };
    if needed {
        prefer_hashed_ca_folder();
    } else {
        crate::sys::point_openssl_at("/dev/null".as_ref(), None);
    }
}

/// Unless the user chose a bundle (`SSL_CERT_FILE`), lets OpenSSL look up the certificates a
/// server's chain needs in the hashed CA folder (`SSL_CERT_DIR`, or the distribution's)
/// instead of parsing the whole bundle at start — about 15 ms a run on Debian. The folder and
/// the bundle hold the same certificates (`update-ca-certificates` writes both); with no
/// hashed folder nothing changes.
fn prefer_hashed_ca_folder() {
    if std::env::var_os("SSL_CERT_FILE").is_some() {
        return;
    }
    let folder = match std::env::var_os("SSL_CERT_DIR") {
        Some(dir) => Some(PathBuf::from(dir)).filter(|d| has_hashed_certificates(d)),
        None => HASHED_CA_FOLDERS
            .iter()
            .map(PathBuf::from)
            .find(|d| has_hashed_certificates(d)),
    };
    if let Some(folder) = folder {
        crate::sys::point_openssl_at("/dev/null".as_ref(), Some(folder.as_os_str()));
    }
}

/// Whether `dir` holds at least one `<8 hex digits>.<n>` link, as `openssl rehash` makes them.
fn has_hashed_certificates(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.split_once('.').is_some_and(|(hash, n)| {
            hash.len() == 8
                && hash.bytes().all(|b| b.is_ascii_hexdigit())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// Whether every remote of the repository around `dir` is reached without TLS. Conservative:
/// the repository and the user's config files are read by [`plain`]'s reader, which answers
/// nothing for what it does not fully understand (an `include`, a URL rewrite, config or a
/// repository named by the environment, a layout other than the plain one); then, and when
/// `http` appears anywhere in the repository's config, the answer is `false`.
fn remotes_need_no_tls(dir: Option<&Path>) -> bool {
    // A system config elsewhere is one the plain reader does not read.
    if std::env::var_os("GIT_CONFIG_SYSTEM").is_some() {
        return false;
    }
    let start = match dir {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(_) => return false,
        },
    };
    let Some(Some(found)) = crate::git::repo::discover_plain(&start) else {
        return false;
    };
    let Some(repo) = PlainRepo::of(&found) else {
        return false;
    };
    // The user's files hold no include or URL rewrite (else they are not read).
    plain::user_configs().is_some() && !mentions_http(&repo.config)
}

/// Whether `http` appears in any section, subsection, key or value (any case).
fn mentions_http(config: &Config) -> bool {
    let http = |text: &str| text.to_ascii_lowercase().contains("http");
    config.entries.iter().any(|e| {
        http(&e.section)
            || e.subsection.as_deref().is_some_and(http)
            || e.value.as_deref().is_some_and(http)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_is_skipped_only_when_no_remote_can_be_https() {
        let cases = [
            (
                "[remote \"origin\"]\n\turl = git://127.0.0.1/team.git\n",
                Some(false),
            ),
            ("[remote \"origin\"]\n\turl = /srv/team.git\n", Some(false)),
            (
                "[remote \"origin\"]\n\turl = ssh://git@host/team.git\n",
                Some(false),
            ),
            (
                "[remote \"origin\"]\n\turl = https://example.com/team.git\n",
                Some(true),
            ),
            (
                "[remote \"origin\"]\n\tpushurl = HTTP://example.com/t.git\n",
                Some(true),
            ),
            ("[http]\n\tsslVerify = false\n", Some(true)),
            // Not read at all: TLS stays on.
            ("[include]\n\tpath = other\n", None),
            (
                "[url \"https://x/\"]\n\tinsteadOf = git://127.0.0.1/\n",
                None,
            ),
        ];
        for (text, expected) in cases {
            let http = plain::parse_config(text.as_bytes()).map(|c| mentions_http(&c));
            assert_eq!(http, expected, "{text}");
        }
    }
}
