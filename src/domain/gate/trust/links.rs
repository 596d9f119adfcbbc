//! Links: hosts off the allow-list, and links that run a script or embed data.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::patterns::ascii;
use super::{EXTERNAL_LINK, Risk, risk};
use crate::domain::memory::line_col;

pub(super) static URL: LazyLock<Option<Regex>> =
    LazyLock::new(|| ascii(r#"\b(?:https?|ftp)://([^\s/?#<>()\[\]"'`]+)"#));

pub(super) static SCRIPT_LINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| ascii(r"\]\(\s*<?\s*(?:javascript|data|vbscript):"));

pub(super) fn links(text: &str, allowed_hosts: &[String], risks: &mut Vec<Risk>) {
    // Every match of [`URL`] holds `://`, every match of [`SCRIPT_LINK`] `](`: without them,
    // neither pattern is built.
    if let (true, Some(url)) = (text.contains("://"), &*URL) {
        for caps in url.captures_iter(text.as_bytes()) {
            let (Some(whole), Some(authority)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let host = host_of(&String::from_utf8_lossy(authority.as_bytes()));
            if host.is_empty() || host_allowed(&host, allowed_hosts) {
                continue;
            }
            let (line, column) = line_col(text.as_bytes(), whole.start());
            risks.push(Risk {
                rule: EXTERNAL_LINK,
                line,
                column,
                message: format!("link to host `{host}`, which is not in the allow-list"),
                matched: host,
            });
        }
    }
    if let (true, Some(script)) = (text.contains("]("), &*SCRIPT_LINK) {
        for m in script.find_iter(text.as_bytes()) {
            risks.push(risk(
                text,
                EXTERNAL_LINK,
                m.start(),
                &String::from_utf8_lossy(m.as_bytes()),
                "link runs script or embeds data",
            ));
        }
    }
}

/// The lowercase host of a URL authority (`user@host:port`), trailing dots dropped.
pub fn host_of(authority: &str) -> String {
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host.starts_with('[') {
        host.split(']')
            .next()
            .map_or(host, |h| h.trim_start_matches('['))
    } else {
        host.split(':').next().unwrap_or(host)
    };
    host.trim_end_matches(['.', ',', ';', '!']).to_lowercase()
}

/// Whether `host` is allowed: equal to an entry, or below an entry written `*.domain`.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    allowed.iter().any(|entry| {
        let entry = entry.to_lowercase();
        match entry.strip_prefix("*.") {
            Some(domain) => host == domain || host.ends_with(&format!(".{domain}")),
            None => host == entry,
        }
    })
}
