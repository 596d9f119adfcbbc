//! The severity configuration: the repository's and the user's own `teammem-check.json`, and
//! how they combine (the repository's can only tighten the gate).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::rules::{SECRET, Severity, rule};
use crate::domain::gate::trust;
use crate::domain::memory;

/// The configuration file, relative to the team folder.
pub const CONFIG_FILE: &str = ".teammem-check.json";

/// The user's own configuration, in the memory base folder (`$QWEN_CODE_MEMORY_BASE_DIR` or
/// `~/.qwen`), outside every repository: the one place a rule can be loosened.
pub const USER_CONFIG_FILE: &str = "teammem-check.json";

/// What `.qwen/team-memory/.teammem-check.json` (the repository's) or the user's own
/// [`USER_CONFIG_FILE`] may say; every field is optional. How the two combine, and why the
/// repository's can only tighten, is [`CheckConfig::layered`].
///
/// ```json
/// {"severity": {"trust-external-link": "error", "trust-base64-blob": "off"},
///  "allowed_hosts": ["github.com", "*.example.com"], "max_file_bytes": 32768,
///  "max_memories": 2000, "max_total_bytes": 8000000}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Severity per rule id: `error`, `warning` or `off`.
    #[serde(default)]
    pub severity: BTreeMap<String, SeverityChoice>,
    /// Hosts links may point to (the user's replaces the default list; the repository's
    /// can only remove hosts from it).
    pub allowed_hosts: Option<Vec<String>>,
    /// The size limit per file, at most the memory format's own limit.
    pub max_file_bytes: Option<usize>,
    /// Branch mode: at most this many memories of the memory branch are written into the
    /// folder. Only lowers the user's `teammem.maxMemories` (git config), from any file.
    pub max_memories: Option<usize>,
    /// Branch mode: at most this many bytes of memories of the memory branch are written into
    /// the folder. Only lowers the user's `teammem.maxBytes` (git config), from any file.
    pub max_total_bytes: Option<u64>,
}

/// A configured severity, or `off` to drop a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeverityChoice {
    /// Fails the check.
    Error,
    /// Reported only.
    Warning,
    /// Not reported.
    Off,
}

impl CheckConfig {
    /// Parses the configuration strictly: the lenient reader's result
    /// ([`crate::domain::check_config::read_lenient`], the one parser of this file), or its
    /// first note when anything had to be left out.
    pub fn from_json(text: &str) -> Result<CheckConfig, String> {
        let (config, notes) = crate::domain::check_config::read_lenient(text);
        match notes.into_iter().next() {
            Some(note) => Err(note),
            None => Ok(config),
        }
    }

    /// The severity of a rule, or `None` when it is switched off. A secret is always an error
    /// (invariant 4): accepting one takes a `teammem:allow` line or a `.secretsignore`
    /// fingerprint, never a configuration.
    pub fn severity(&self, id: &str) -> Option<Severity> {
        if id == SECRET {
            return Some(Severity::Error);
        }
        match self.severity.get(id) {
            Some(SeverityChoice::Error) => Some(Severity::Error),
            Some(SeverityChoice::Warning) => Some(Severity::Warning),
            Some(SeverityChoice::Off) => None,
            None => Some(rule(id).map_or(Severity::Error, |r| r.default_severity)),
        }
    }

    /// Whether the configuration names a severity for the rule (a rule some checks run only
    /// when asked to, as `memory-reference` in the pre-commit hook).
    pub fn configured(&self, id: &str) -> bool {
        self.severity.contains_key(id)
    }

    /// The configuration in force when the user's own file (outside the repository) says
    /// `user` and the repository's file says `repo`. The user's file may set anything but a
    /// secret's severity; the repository's may only add: raise a severity, shorten the link
    /// allow-list, lower the size limit. Each repository setting that would loosen the gate is
    /// ignored and named in the returned notes.
    pub fn layered(
        user: Option<&CheckConfig>,
        repo: Option<&CheckConfig>,
    ) -> (CheckConfig, Vec<String>) {
        let mut out = user.cloned().unwrap_or_default();
        let mut notes = Vec::new();
        let Some(repo) = repo else {
            return (out, notes);
        };
        for (id, &choice) in &repo.severity {
            let now = out.severity(id);
            if rank(Some(choice)) > rank_of(now) {
                out.severity.insert(id.clone(), choice);
            } else if rank(Some(choice)) < rank_of(now) {
                notes.push(format!(
                    "`{id}` set to `{}` was ignored: a file in the repository can raise a \
                     severity, never lower it",
                    choice_name(choice)
                ));
            }
        }
        if let Some(hosts) = &repo.allowed_hosts {
            let base = out.allowed_hosts();
            let kept: Vec<String> = base
                .iter()
                .filter(|entry| {
                    let host = entry.trim_start_matches("*.");
                    trust::host_allowed(host, hosts)
                })
                .cloned()
                .collect();
            let added: Vec<&String> = hosts
                .iter()
                .filter(|h| {
                    !base.iter().any(|b| {
                        b.eq_ignore_ascii_case(h)
                            || trust::host_allowed(h.trim_start_matches("*."), &base)
                    })
                })
                .collect();
            if !added.is_empty() {
                notes.push(format!(
                    "allowed_hosts {} were ignored: a file in the repository can shorten the \
                     link allow-list, never extend it",
                    added
                        .iter()
                        .map(|h| format!("`{h}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            out.allowed_hosts = Some(kept);
        }
        if let Some(max) = repo.max_file_bytes {
            out.max_file_bytes = Some(out.max_file_bytes().min(max));
        }
        (out, notes)
    }

    /// The link allow-list.
    pub fn allowed_hosts(&self) -> Vec<String> {
        match &self.allowed_hosts {
            Some(hosts) => hosts.clone(),
            None => trust::DEFAULT_ALLOWED_HOSTS
                .iter()
                .map(|h| h.to_string())
                .collect(),
        }
    }

    /// The size limit per file.
    pub fn max_file_bytes(&self) -> usize {
        self.max_file_bytes
            .unwrap_or(memory::MAX_FILE_BYTES)
            .min(memory::MAX_FILE_BYTES)
    }
}

/// How strict a severity is: off, then warning, then error.
fn rank(choice: Option<SeverityChoice>) -> u8 {
    match choice {
        None | Some(SeverityChoice::Off) => 0,
        Some(SeverityChoice::Warning) => 1,
        Some(SeverityChoice::Error) => 2,
    }
}

fn rank_of(severity: Option<Severity>) -> u8 {
    rank(severity.map(|s| match s {
        Severity::Error => SeverityChoice::Error,
        Severity::Warning => SeverityChoice::Warning,
    }))
}

fn choice_name(choice: SeverityChoice) -> &'static str {
    match choice {
        SeverityChoice::Error => "error",
        SeverityChoice::Warning => "warning",
        SeverityChoice::Off => "off",
    }
}
