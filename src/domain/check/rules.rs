//! The rule catalog: every kind of finding with its stable id, its severity by default and
//! what it means.

use serde::{Deserialize, Serialize};

use crate::domain::gate::trust;

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
        help: "Add the lines the message gives at the end of .gitignore and commit it (`teammem init --fix-gitignore` writes and commits them).",
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
