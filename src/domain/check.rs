//! What `teammem check` looks for in the team folder, file by file: the rule catalog, the
//! severity configuration, and the checks themselves over file bytes (however they were read).
//!
//! Paths here are relative to the team folder (`feedback/use-real-db.md`); findings carry the
//! path relative to the repository root, as git and code-scanning tools name files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::gate::Policy;
use super::gate::trust;
use super::memory::{self, MemoryFile, MemoryType};
use super::scope::{INDEX_FILE, TEAM_DIR};

/// The configuration file, relative to the team folder.
pub const CONFIG_FILE: &str = ".teammem-check.json";

/// How serious a finding is: errors fail the check (exit 1), warnings are reported only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Reported, does not fail the check.
    Warning,
}

impl Severity {
    /// The lowercase name used in output and configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One kind of finding, with a stable id (used in SARIF and in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, e.g. `secret`, `trust-hidden-character`.
    pub id: &'static str,
    /// What the rule finds, in one line.
    pub summary: &'static str,
    /// How to fix a finding.
    pub help: &'static str,
    /// Severity when the configuration does not say otherwise.
    pub default_severity: Severity,
}

/// A secret (API key, token, private key) in a file.
pub const SECRET: &str = "secret";
/// A memory file that does not parse or validate.
pub const MEMORY_INVALID: &str = "memory-invalid";
/// A memory file whose name is not a slug.
pub const MEMORY_FILE_NAME: &str = "memory-file-name";
/// `MEMORY.md` does not match the memories beside it.
pub const INDEX_STALE: &str = "index-stale";
/// A symlink in the team folder.
pub const PATH_SYMLINK: &str = "path-symlink";
/// A file that is not markdown (or a submodule) in the team folder.
pub const PATH_NOT_MARKDOWN: &str = "path-not-markdown";
/// A markdown file outside the `<type>/<slug>.md` layout.
pub const PATH_LAYOUT: &str = "path-layout";
/// A file over the size limit.
pub const SIZE_LIMIT: &str = "size-limit";
/// A merge conflict left in the index.
pub const UNMERGED: &str = "unmerged";
/// A memory kept in two versions by sync, not resolved yet.
pub const CONFLICT_COPY: &str = "conflict-copy";
/// A memory file that reads but breaks a style rule (lint, with its fix).
pub const MEMORY_STYLE: &str = "memory-style";
/// A team memory names a path that the checked change deletes or renames.
pub const MEMORY_REFERENCE: &str = "memory-reference";
/// The check configuration was changed inside the checked range.
pub const CONFIG_CHANGED: &str = "config-changed";
/// The check configuration cannot be read.
pub const CONFIG_INVALID: &str = "config-invalid";
/// A repository configuration setting that would loosen the gate, ignored.
pub const CONFIG_IGNORED: &str = "config-ignored";
/// git ignores the team folder in this clone, so a memory added here is never published.
pub const TEAM_FOLDER_IGNORED: &str = "team-folder-ignored";

/// The user's own configuration, in the memory base folder (`$QWEN_CODE_MEMORY_BASE_DIR` or
/// `~/.qwen`), outside every repository: the one place a rule can be loosened.
pub const USER_CONFIG_FILE: &str = "teammem-check.json";

/// Every rule, in the order they are documented.
pub const RULES: &[Rule] = &[
    Rule {
        id: SECRET,
        summary: "A secret (API key, token, password, private key) is in the team memory",
        help: "Remove the secret from the file (and from every commit that added it), then rotate it: once pushed, consider it leaked.",
        default_severity: Severity::Error,
    },
    Rule {
        id: MEMORY_INVALID,
        summary: "The memory file does not parse or misses a required field",
        help: "Fix the frontmatter as the message says (`name`, `description`, `type` are required).",
        default_severity: Severity::Error,
    },
    Rule {
        id: MEMORY_FILE_NAME,
        summary: "The memory file name is not a slug (clients still read it)",
        help: "Rename the file to lowercase letters, digits and hyphens ending in .md.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: MEMORY_STYLE,
        summary: "The memory file reads, but not in teammem's strict style (quoting, folder, YAML)",
        help: "Apply the fix the message gives; Qwen Code and teammem read the file either way.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: INDEX_STALE,
        summary: "MEMORY.md does not match the memories",
        help: "Run `teammem index --scope team` and commit the regenerated MEMORY.md.",
        default_severity: Severity::Error,
    },
    Rule {
        id: PATH_SYMLINK,
        summary: "A symlink in the team memory folder",
        help: "Replace the symlink with a regular file: a symlink can point agents at files outside the memory.",
        default_severity: Severity::Error,
    },
    Rule {
        id: PATH_NOT_MARKDOWN,
        summary: "A file that is not a markdown memory in the team memory folder",
        help: "Keep only <type>/<slug>.md memories and MEMORY.md in .qwen/team-memory/.",
        default_severity: Severity::Error,
    },
    Rule {
        id: PATH_LAYOUT,
        summary: "A memory outside the <type>/<slug>.md layout",
        help: "Move the memory into user/, feedback/, project/ or reference/.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: SIZE_LIMIT,
        summary: "A file over the size limit",
        help: "Split it into smaller memories or move the detail into the repository's docs.",
        default_severity: Severity::Error,
    },
    Rule {
        id: UNMERGED,
        summary: "A merge conflict is unresolved in the team memory",
        help: "Resolve the conflict (keep both versions as separate memories if unsure) and stage the result.",
        default_severity: Severity::Error,
    },
    Rule {
        id: CONFLICT_COPY,
        summary: "A memory is kept in two versions (sync's conflict copy), so agents read both",
        help: "Run `teammem resolve <memory> --theirs | --ours | --both | --edit`, then sync.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: MEMORY_REFERENCE,
        summary: "A team memory names a path that this change deletes or renames",
        help: "Update the memory to the new path (`teammem dream --scope team` rewrites a renamed one), or forget it: `teammem forget ID`.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: CONFIG_CHANGED,
        summary: "The check configuration changes in this range",
        help: "The range was checked with the base's configuration; review the configuration change itself.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: CONFIG_INVALID,
        summary: "A setting of the check configuration (or .secretsignore) cannot be read, or the file is a symlink or over its size limit",
        help: "Fix the line named (see docs/check-and-review.md); every other setting was kept, and what was left out never loosens the defaults.",
        default_severity: Severity::Error,
    },
    Rule {
        id: CONFIG_IGNORED,
        summary: "A setting of the repository's check configuration that would loosen the gate was ignored",
        help: "A file in the repository can only add rules or raise severities; loosen a rule in your own ~/.qwen/teammem-check.json, or accept one finding with `teammem:allow` or a .secretsignore fingerprint.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: TEAM_FOLDER_IGNORED,
        summary: "git ignores the team memory folder in this clone, so memories added here are never published",
        help: "Add the lines the message gives at the end of .gitignore and commit it (`teammem init --fix-gitignore` writes them).",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::HIDDEN_CHARACTER,
        summary: "Invisible characters (bidi controls, zero-width, Unicode tags) that can hide text from reviewers",
        help: "Delete the invisible characters; a memory should read the same to a human and to a model.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::INSTRUCTION_OVERRIDE,
        summary: "Text telling the model to ignore or override its instructions, or to hide things from the user",
        help: "Remove the text; memories record facts and preferences, they do not re-program the agent.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::ROLE_MARKER,
        summary: "A fake chat role marker (system/assistant) that can make text pass for a system message",
        help: "Remove the marker.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::HIDDEN_COMMENT,
        summary: "An HTML comment, invisible when rendered, that holds instructions",
        help: "Move the text out of the comment so reviewers see it, or delete it.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::COMMAND,
        summary: "A request to run a risky command (download piped to a shell, destructive, reverse shell, unattended)",
        help: "Remove the command, or describe the step so a human runs it knowingly.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::REMOTE_INSTRUCTIONS,
        summary: "A request to fetch a URL and follow what it says",
        help: "Write the instructions into the memory itself so they are reviewed.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::EXFILTRATION,
        summary: "A request to send secrets, code or the environment out of the machine",
        help: "Remove the request.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::BASE64_BLOB,
        summary: "A long base64 run that can hide a payload from review",
        help: "Remove the blob or replace it with a link to where the data is kept.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: trust::EXTERNAL_LINK,
        summary: "A link to a host outside the allow-list",
        help: "Check the link; add the host to allowed_hosts in your own ~/.qwen/teammem-check.json if it is trusted (a repository file can only shorten the list).",
        default_severity: Severity::Warning,
    },
    Rule {
        id: trust::JAILBREAK,
        summary: "A jailbreak framing: a banner of new instructions, a \"developer mode\" switched on, a forgotten instruction, a special case for summaries, a fake configuration or a role to play",
        help: "Remove the framing; memories record facts and preferences, they do not re-program the agent.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::ENCODED_PAYLOAD,
        summary: "Encoded text (base64, rot13, hex) with an order to decode it and obey",
        help: "Write the text in plain words so reviewers read what the agent would.",
        default_severity: Severity::Error,
    },
    Rule {
        id: trust::QUOTED_ATTACK,
        summary: "An injection or risky command quoted as an example (in code or quotes, in a memory about attacks); delivered to agents as inert data",
        help: "Nothing to do if the memory warns about it; otherwise remove it.",
        default_severity: Severity::Warning,
    },
    Rule {
        id: trust::KNOWN_INSTALLER,
        summary: "A download piped into a shell from a known installer's host, or from an allowed host in a fenced install step",
        help: "Check the installer is the one you mean; agents receive the command as data.",
        default_severity: Severity::Warning,
    },
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// What `.qwen/team-memory/.teammem-check.json` (the repository's) or the user's own
/// [`USER_CONFIG_FILE`] may say; every field is optional. How the two combine, and why the
/// repository's can only tighten, is [`CheckConfig::layered`].
///
/// ```json
/// {"severity": {"trust-external-link": "error", "trust-base64-blob": "off"},
///  "allowed_hosts": ["github.com", "*.example.com"], "max_file_bytes": 32768}
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
    /// Parses the configuration; the error says what is wrong.
    pub fn from_json(text: &str) -> Result<CheckConfig, String> {
        let config: CheckConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if let Some(id) = config.severity.keys().find(|id| rule(id).is_none()) {
            return Err(format!("unknown rule `{id}` in \"severity\""));
        }
        Ok(config)
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
    policy: &Policy,
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
/// a secret ([`Policy::index_line_safe`]).
pub fn expected_index(memories: &[(&str, &[u8])], policy: &Policy) -> String {
    let entries = memories
        .iter()
        .filter_map(|(rel, bytes)| memory::index_entry_of(rel, rel, bytes));
    super::gate::team_index_md(entries, Some(policy))
}

#[cfg(test)]
mod tests;
