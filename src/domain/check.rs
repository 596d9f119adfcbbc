//! What `teammem check` looks for in the team folder, file by file: the rule catalog, the
//! severity configuration, and the checks themselves over file bytes (however they were read).
//!
//! Paths here are relative to the team folder (`feedback/use-real-db.md`); findings carry the
//! path relative to the repository root, as git and code-scanning tools name files.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::domain::gate::Gate;
use crate::domain::gate::trust;
use crate::domain::memory::{self, MemoryFile, MemoryType};
use crate::domain::scope::{INDEX_FILE, TEAM_DIR};

mod config;
mod rules;

pub use config::{CONFIG_FILE, CheckConfig, SeverityChoice, USER_CONFIG_FILE};
pub use rules::{
    CONFIG_CHANGED, CONFIG_IGNORED, CONFIG_INVALID, CONFLICT_COPY, INDEX_STALE, MEMORY_FILE_NAME,
    MEMORY_INVALID, MEMORY_REFERENCE, MEMORY_STYLE, PATH_LAYOUT, PATH_NOT_MARKDOWN, PATH_SYMLINK,
    RULES, Rule, SECRET, SIZE_LIMIT, Severity, TEAM_FOLDER_IGNORED, UNMERGED, rule,
};

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule id.
    pub rule: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// The file, relative to the repository root.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong (a secret appears only redacted).
    pub message: String,
    /// The commit that introduced the content (`check --range`), full hex id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// A stable SHA-256 hex id of the finding that holds no secret: rule, path and what matched.
    pub fingerprint: String,
}

/// A secret found by the scanner, already redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// The scanner's rule id (`github-pat`).
    pub rule: String,
    /// A readable name for the kind of secret.
    pub label: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The secret shown redacted.
    pub redacted: String,
    /// SHA-256 hex of rule and secret, from the scanner.
    pub fingerprint: String,
}

/// What a team-folder entry is, as git records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular (possibly executable) file.
    File,
    /// A symlink; its bytes are the target path.
    Symlink,
    /// A submodule (gitlink); it has no bytes.
    Submodule,
}

/// How much to check of one file version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Everything: layout, size, validation, content.
    Full,
    /// Content only (secrets and trust risks): a version that a later commit replaced.
    Content,
}

/// Collects findings, applying the configured severities.
pub struct Findings<'a> {
    config: &'a CheckConfig,
    /// Findings so far.
    pub list: Vec<Finding>,
}

impl<'a> Findings<'a> {
    /// An empty list under a configuration.
    pub fn new(config: &'a CheckConfig) -> Self {
        Findings {
            config,
            list: Vec::new(),
        }
    }

    /// The configuration the findings are collected under.
    pub fn config(&self) -> &CheckConfig {
        self.config
    }

    /// Adds a finding unless its rule is switched off. `matched` feeds the fingerprint only.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        rule: &'static str,
        path: &str,
        line: usize,
        column: usize,
        message: String,
        matched: &str,
        commit: Option<&str>,
    ) {
        let Some(severity) = self.config.severity(rule) else {
            return;
        };
        // A message may quote the file (a trust risk's excerpt): never with a secret in it.
        let message = super::secrets::redact_text(&message);
        self.list.push(Finding {
            rule,
            severity,
            path: path.to_string(),
            line,
            column,
            message,
            commit: commit.map(str::to_string),
            fingerprint: fingerprint(&[rule, path, matched]),
        });
    }
}

/// SHA-256 hex over parts separated by NUL.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The path of a team-folder file relative to the repository root.
pub fn repo_path(rel: &str) -> String {
    format!("{TEAM_DIR}/{rel}")
}

/// Checks one file of the team folder. `secrets` holds the scanner's findings for `bytes`.
pub fn check_file(
    out: &mut Findings<'_>,
    rel: &str,
    kind: EntryKind,
    bytes: &[u8],
    secrets: &[SecretHit],
    depth: Depth,
    commit: Option<&str>,
) {
    let path = repo_path(rel);
    for hit in secrets {
        let Some(severity) = out.config.severity(SECRET) else {
            break;
        };
        out.list.push(Finding {
            rule: SECRET,
            severity,
            path: path.clone(),
            line: hit.line,
            column: hit.column,
            message: format!("{} ({}): {}", hit.label, hit.rule, hit.redacted),
            commit: commit.map(str::to_string),
            fingerprint: fingerprint(&[SECRET, &path, &hit.fingerprint]),
        });
    }
    if depth == Depth::Full {
        check_path(out, rel, kind, bytes, commit);
    }
    if kind != EntryKind::File || rel == INDEX_FILE || !rel.ends_with(".md") {
        return;
    }
    if bytes.len() > out.config.max_file_bytes() {
        if depth == Depth::Full {
            out.push(
                SIZE_LIMIT,
                &path,
                1,
                1,
                format!(
                    "file is {} bytes, over the {} byte limit",
                    bytes.len(),
                    out.config.max_file_bytes()
                ),
                "",
                commit,
            );
        }
        return;
    }
    if let (Depth::Full, Some(copy)) = (depth, super::conflict::parse_copy(rel)) {
        out.push(
            CONFLICT_COPY,
            &path,
            1,
            1,
            format!(
                "a second version of {} that sync kept when two people changed it differently — \
                 run `teammem resolve {}`",
                repo_path(&copy.original),
                copy.original
            ),
            "",
            commit,
        );
    }
    let text = String::from_utf8_lossy(bytes);
    if depth == Depth::Full {
        if let Some(bad) = memory::check_file_name(&path) {
            out.push(
                MEMORY_INVALID,
                &path,
                1,
                1,
                format!("{} — {}", bad.message, bad.fix),
                "",
                commit,
            );
        }
        match MemoryFile::parse(&path, bytes) {
            Ok(file) => {
                for lint in file.lints() {
                    let rule = match memory::lint_file_name(&path) {
                        Some(name) if name.message == lint.message => MEMORY_FILE_NAME,
                        _ => MEMORY_STYLE,
                    };
                    out.push(
                        rule,
                        &path,
                        lint.line,
                        lint.column,
                        format!("{} — {}", lint.message, lint.fix),
                        "",
                        commit,
                    );
                }
            }
            Err(problems) => {
                for p in problems {
                    out.push(
                        MEMORY_INVALID,
                        &path,
                        p.line,
                        p.column,
                        format!("{} — {}", p.message, p.fix),
                        &p.message,
                        commit,
                    );
                }
            }
        }
    }
    for risk in trust::scan(&text, &out.config.allowed_hosts()) {
        out.push(
            risk.rule,
            &path,
            risk.line,
            risk.column,
            risk.message,
            &risk.matched,
            commit,
        );
    }
}

/// Checks a team-folder file's path as text a person and an agent read: each secret in a
/// file or folder name (not accepted in `.secretsignore`) and each trust risk the name
/// spells. Run once per path of a check, whatever the depth: a name stays in the history.
pub fn check_name(
    out: &mut Findings<'_>,
    rel: &str,
    accepted: &super::secrets::SecretsIgnore,
    commit: Option<&str>,
) {
    let path = repo_path(rel);
    for hit in super::gate::path_secrets(rel, accepted) {
        let Some(severity) = out.config.severity(SECRET) else {
            break;
        };
        out.list.push(Finding {
            rule: SECRET,
            severity,
            path: path.clone(),
            line: 1,
            column: 1,
            message: format!(
                "the file or folder name holds a {} ({}): {} — rename the file and revoke the \
                 secret; a pushed name stays in the history",
                hit.label,
                hit.rule,
                hit.redacted()
            ),
            commit: commit.map(str::to_string),
            fingerprint: fingerprint(&[SECRET, &path, &hit.fingerprint()]),
        });
    }
    for risk in super::gate::name_risks(rel, &out.config.allowed_hosts()) {
        out.push(
            risk.rule,
            &path,
            1,
            1,
            format!(
                "the file name reads as: {} — rename the file to say what the memory is about",
                risk.message
            ),
            &risk.matched,
            commit,
        );
    }
}

fn check_path(
    out: &mut Findings<'_>,
    rel: &str,
    kind: EntryKind,
    bytes: &[u8],
    commit: Option<&str>,
) {
    let path = repo_path(rel);
    match kind {
        EntryKind::Symlink => {
            let target = String::from_utf8_lossy(bytes);
            out.push(
                PATH_SYMLINK,
                &path,
                1,
                1,
                format!("symlink to `{target}`"),
                &target,
                commit,
            );
            return;
        }
        EntryKind::Submodule => {
            out.push(
                PATH_NOT_MARKDOWN,
                &path,
                1,
                1,
                "a submodule inside the team memory folder".into(),
                "",
                commit,
            );
            return;
        }
        EntryKind::File => {}
    }
    if rel == INDEX_FILE || rel == CONFIG_FILE || rel == super::secrets::IGNORE_FILE {
        return;
    }
    if !rel.ends_with(".md") {
        out.push(
            PATH_NOT_MARKDOWN,
            &path,
            1,
            1,
            "not a markdown memory; agents do not read it and reviewers may not either".into(),
            "",
            commit,
        );
        return;
    }
    if !memory::is_memory_path(rel) {
        out.push(
            PATH_LAYOUT,
            &path,
            1,
            1,
            "a MEMORY.md below the top level, or a file inside a .git folder: agents and the \
             index skip it"
                .into(),
            "",
            commit,
        );
        return;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let in_layout = parts.len() == 2 && MemoryType::parse(parts[0]).is_some();
    if !in_layout {
        out.push(
            PATH_LAYOUT,
            &path,
            1,
            1,
            "not at <type>/<slug>.md (type: user, feedback, project or reference)".into(),
            "",
            commit,
        );
    }
}

/// Compares `MEMORY.md` with the index the memories give. `memories` holds every file of the
/// folder read as a memory (see [`memory::is_memory_path`]); invalid ones stay out, as in the store.
pub fn check_index(
    out: &mut Findings<'_>,
    memories: &[(&str, &[u8])],
    current: Option<&[u8]>,
    commit: Option<&str>,
    policy: &Gate,
) {
    let expected = expected_index(memories, policy);
    let path = repo_path(INDEX_FILE);
    let fix = "run `teammem index --scope team` and commit MEMORY.md";
    match current {
        None if expected.is_empty() => {}
        None => out.push(
            INDEX_STALE,
            &path,
            1,
            1,
            format!("MEMORY.md is missing — {fix}"),
            "",
            commit,
        ),
        Some(current) if current == expected.as_bytes() => {}
        Some(current) => {
            let current = String::from_utf8_lossy(current);
            let line = current
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| current.lines().count().min(expected.lines().count()))
                + 1;
            out.push(
                INDEX_STALE,
                &path,
                line,
                1,
                format!("MEMORY.md does not match the memories from line {line} on — {fix}"),
                "",
                commit,
            );
        }
    }
}

/// The index `memories` give: every memory Qwen Code would list, less a line that would carry
/// a secret ([`Gate::index_line_safe`]).
pub fn expected_index(memories: &[(&str, &[u8])], policy: &Gate) -> String {
    let entries = memories
        .iter()
        .filter_map(|(rel, bytes)| memory::index_entry_of(rel, rel, bytes));
    super::gate::team_index_md(entries, Some(policy))
}

#[cfg(test)]
mod tests;
