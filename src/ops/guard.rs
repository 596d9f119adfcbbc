//! The gate at every door of a project: the policy in force (the user's configuration, the
//! repository's that can only tighten it, the team's accepted fingerprints), a scope's
//! memories split into those that pass and those withheld, the one entry point that hands a
//! memory to an agent, and the refusal of team writes that would not pass.
//!
//! The rules themselves are [`crate::domain::gate`]; this module reads the files they need.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::domain::check::{CONFIG_FILE, CheckConfig, USER_CONFIG_FILE};
use crate::domain::check_config::{self, MAX_CONFIG_BYTES, MAX_SECRETSIGNORE_BYTES, TeamFile};
use crate::domain::gate::{self, BrokenRules, Gate, Verdict};
use crate::domain::scope::{ScopeKind, TEAM_DIR};
use crate::domain::secrets::{self, IGNORE_FILE, SecretFinding, SecretsIgnore};
use crate::domain::store;

use super::{OpError, Project};

/// The policy in force for a project's work tree, with notes on every repository setting
/// that was ignored because it would loosen the gate (and on a configuration that does not
/// parse, whose file is then left out).
pub fn policy(project: &Project) -> (Gate, Vec<String>) {
    let mut notes = Vec::new();
    let user = read_config(&user_config_path(&project.env.base()), &mut notes);
    let team_dir = project.layout.memory_dir(ScopeKind::Team);
    let repo = team_dir.as_ref().and_then(|d| {
        let (bytes, symlink) = read_team_file(&d.join(CONFIG_FILE), MAX_CONFIG_BYTES)?;
        let (config, problems) = check_config::repo_config(TeamFile {
            bytes: &bytes,
            symlink,
        });
        notes.extend(problems.into_iter().map(|n| format!("{TEAM_DIR}/{n}")));
        config
    });
    let (config, ignored) = CheckConfig::layered(user.as_ref(), repo.as_ref());
    notes.extend(
        ignored
            .into_iter()
            .map(|n| format!("{TEAM_DIR}/{CONFIG_FILE}: {n}")),
    );
    let ignore = team_dir
        .and_then(|d| read_team_file(&d.join(IGNORE_FILE), MAX_SECRETSIGNORE_BYTES))
        .map(|(bytes, symlink)| {
            let (ignore, problem) = check_config::secrets_ignore(TeamFile {
                bytes: &bytes,
                symlink,
            });
            notes.extend(problem.map(|n| format!("{TEAM_DIR}/{n}")));
            ignore
        })
        .unwrap_or_default();
    (Gate::new(config, ignore), notes)
}

/// A configuration file of the team folder as the work tree holds it: at most one byte past
/// `limit`, and whether it is a symlink (then not followed: its target's path is returned,
/// which no reader takes as settings). `None` when there is none, or it cannot be read.
fn read_team_file(path: &Path, limit: usize) -> Option<(Vec<u8>, bool)> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some((target.to_string_lossy().into_owned().into_bytes(), true));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some((bytes, false))
}

/// Where the user's own check configuration lives, below the memory base folder.
pub fn user_config_path(base: &Path) -> PathBuf {
    base.join(USER_CONFIG_FILE)
}

/// The user's own configuration (`None` when there is none or it does not parse).
pub fn user_config(base: &Path) -> (Option<CheckConfig>, Vec<String>) {
    let mut notes = Vec::new();
    let config = read_config(&user_config_path(base), &mut notes);
    (config, notes)
}

/// The user's own configuration file: every setting that can be read, each one that cannot
/// named in `notes` (it lives outside the repository, so a symlink is the user's own choice).
fn read_config(path: &Path, notes: &mut Vec<String>) -> Option<CheckConfig> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() > MAX_CONFIG_BYTES {
        notes.push(format!(
            "{}: over the {MAX_CONFIG_BYTES}-byte limit; it was left out — shorten it",
            path.display()
        ));
        return None;
    }
    let (config, problems) = check_config::read_lenient(&String::from_utf8_lossy(&bytes));
    notes.extend(
        problems
            .into_iter()
            .map(|n| format!("{}: {}", path.display(), secrets::redact_text(&n))),
    );
    Some(config)
}

// A scope's memories through the gate, for an index: `super::gate_cache::gate_scope`, which
// keeps the verdicts of unchanged files.

/// Whether a scope's memories are gated like team memory when its index is written: team
/// memory, and a private memory folder that git tracks.
pub fn gates_index(project: &Project, scope: ScopeKind) -> bool {
    scope == ScopeKind::Team || (scope == ScopeKind::Private && private_is_tracked(project))
}

/// The policy a scope's generated `MEMORY.md` is written under ([`Gate::index_line_safe`]):
/// for a gated scope ([`gates_index`]) a line that would carry a secret is left out; `None`
/// (every memory Qwen Code would list) otherwise.
pub fn index_policy(project: &Project, scope: ScopeKind) -> Option<Gate> {
    gates_index(project, scope).then(|| policy(project).0)
}

/// A memory as an agent may read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentMemory {
    /// Its title, made safe ([`Gate::for_agent`]).
    pub name: String,
    /// Its description, made safe.
    pub description: String,
    /// Its type.
    pub kind: crate::domain::memory::MemoryType,
    /// Its body wrapped as data ([`Gate::data_block`]).
    pub body: String,
}

/// Why a memory was not handed to an agent: the rules it broke, never its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withheld {
    /// The rule ids.
    pub rules: BrokenRules,
}

impl Withheld {
    /// The one line to show in its place.
    pub fn line(&self) -> String {
        gate::withheld_line(1, &self.rules).unwrap_or_default()
    }
}

/// The entry point for every door that hands one memory to an agent (recall results, MCP
/// reads): the file `rel` of `scope`'s folder, gated with the project's policy. `Ok(Err(_))`
/// is a memory that failed the gate; `Err` a file that could not be read at all.
pub fn memory_for_agent(
    project: &Project,
    scope: ScopeKind,
    rel: &str,
) -> Result<Result<AgentMemory, Withheld>, OpError> {
    let (policy, _) = policy(project);
    let dir = project.check_scope_safe(scope)?;
    let bytes = store::read_capped(&dir.join(rel))?;
    let shown = format!("{}{rel}", project.shown_prefix(scope));
    Ok(agent_view(
        &policy,
        &format!("{scope}:{rel}"),
        &shown,
        rel,
        &bytes,
    ))
}

/// [`memory_for_agent`] over bytes already read: `source` names the memory in its data block.
pub fn agent_view(
    policy: &Gate,
    source: &str,
    shown: &str,
    rel: &str,
    bytes: &[u8],
) -> Result<AgentMemory, Withheld> {
    match policy.judge(shown, rel, bytes) {
        Verdict::Pass { file, .. } => Ok(AgentMemory {
            name: policy.for_agent(&file.name),
            description: policy.for_agent(&file.description),
            kind: file.kind,
            body: policy.data_block(source, &file.body),
        }),
        Verdict::Withheld(rules) => Err(Withheld { rules }),
    }
}

/// The warning when private memory sits in the work tree and git tracks it: teammates can
/// write it, so it is not trusted as the user's own.
pub const TRACKED_PRIVATE_WARNING: &str = "private memory .qwen/memory/ is tracked by git, so \
     teammates can write it: it is gated like team memory, not trusted as private (untrack it \
     with `git rm -r --cached .qwen/memory` and add it to .gitignore)";

/// Whether the private scope lives in the work tree (`QWEN_CODE_MEMORY_LOCAL=1`) and git
/// tracks any file of it.
pub fn private_is_tracked(project: &Project) -> bool {
    let (Some(repo), true) = (&project.repo, project.layout.local_private) else {
        return false;
    };
    let Some(dir) = project.layout.memory_dir(ScopeKind::Private) else {
        return false;
    };
    let Ok(rel) = dir.strip_prefix(&repo.workdir) else {
        return false;
    };
    let prefix = format!("{}/", rel.to_string_lossy().replace('\\', "/"));
    let Ok(git) = crate::git::repo::open(repo) else {
        return false;
    };
    let Ok(index) = git.index() else {
        return false;
    };
    index.iter().any(|e| e.path.starts_with(prefix.as_bytes()))
}

/// Gates recall results in place: a hit whose file fails the gate (read again from disk, as
/// a whole) is dropped, the others have every field made safe for an agent. Returns each
/// withheld hit (`scope:rel`) with the rules it broke.
pub fn gate_recalled(
    policy: &Gate,
    found: &mut super::recall::Recalled,
) -> BTreeMap<String, BrokenRules> {
    let mut withheld = BTreeMap::new();
    found.hits.retain_mut(|hit| {
        let rel = hit.id.split(':').next().unwrap_or(&hit.id).to_string();
        let verdict = match store::read_capped(Path::new(&hit.path)) {
            Ok(bytes) => policy.judge(&hit.path, &rel, &bytes),
            Err(_) => Verdict::Withheld([crate::domain::check::MEMORY_INVALID].into()),
        };
        match verdict {
            Verdict::Pass { .. } => {
                hit.name = policy.for_agent(&hit.name);
                hit.description = policy.for_agent(&hit.description);
                hit.body = policy.for_agent(&hit.body);
                hit.path = secrets::redact_text(&hit.path);
                true
            }
            Verdict::Withheld(broken) => {
                withheld.insert(format!("{}:{rel}", hit.scope), broken);
                false
            }
        }
    });
    withheld
}

/// Refuses a team write that would not pass the gate: a secret (as
/// [`refuse_secrets_in_team_with`]), then a secret in its path, a trust risk at error
/// severity, under the project's policy.
pub fn refuse_in_team(
    project: &Project,
    writer: TeamWriter,
    rel: &str,
    text: &str,
) -> Result<(), OpError> {
    let (policy, _) = policy(project);
    let shown = format!("{}{rel}", project.shown_prefix(ScopeKind::Team));
    let shown = secrets::redact_text(&shown);
    refuse_secrets_in_team_with(&policy.ignore, writer, &shown, text)?;
    if policy.path_has_secret(rel) {
        return Err(OpError::Refused(format!(
            "refusing to write {shown}: its path holds a secret, and a path is pushed to every \
             collaborator like a file's text. Fix: name the memory after what it is about."
        )));
    }
    let (errors, _) = policy.text_problems(text);
    if !errors.is_empty() {
        let names: Vec<&str> = errors.iter().copied().collect();
        return Err(OpError::Refused(format!(
            "refusing to write {shown}: it breaks the memory gate ({}).\nTeam memory is \
             injected into every collaborator's agent, so nothing was written.\nFix: run \
             `teammem check --staged` after writing it by hand to see each problem, or remove \
             the text that addresses the agent, hides text or sends data out.",
            names.join(", ")
        )));
    }
    Ok(())
}

/// The command writing to team memory, so that a refusal's fix is one its user can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamWriter {
    /// `teammem add`, which can store `[REDACTED_SECRET]` instead (`--redact`).
    Add,
    /// `teammem remember`, writing a patch from a memory extractor.
    Remember,
    /// `dream` or `forget` rewriting a memory file that already holds the secret.
    Rewrite,
}

impl TeamWriter {
    fn fix(self) -> &'static str {
        match self {
            TeamWriter::Add => {
                "remove the secret (keep it in your secret manager and name where it lives), or \
                 add with --redact to store [REDACTED_SECRET] in its place."
            }
            TeamWriter::Remember => {
                "remove the secret from the patch (keep it in your secret manager and name where \
                 it lives), or pipe the patches through `teammem redact` to store \
                 [REDACTED_SECRET] in its place."
            }
            TeamWriter::Rewrite => {
                "the file already holds the secret: remove it from the file by hand (`teammem \
                 redact < FILE` prints the file with [REDACTED_SECRET] in its place), then run \
                 the command again."
            }
        }
    }
}

/// Refuses `text` (about to be written to `shown_path` in team scope by `writer`) when it holds
/// a secret. The message names each finding's rule label and line, never the secret. Findings
/// on lines marked `teammem:allow` are accepted; use [`refuse_secrets_in_team_with`] to also
/// honour the team's `.secretsignore`. The tests' shorthand.
#[cfg(test)]
pub fn refuse_secrets_in_team(
    writer: TeamWriter,
    shown_path: &str,
    text: &str,
) -> Result<(), OpError> {
    refuse_secrets_in_team_with(&SecretsIgnore::default(), writer, shown_path, text)
}

/// Refuses `text` when it holds a secret (see [`team_refusal`]), silencing the findings whose fingerprints `ignore` lists.
pub fn refuse_secrets_in_team_with(
    ignore: &SecretsIgnore,
    writer: TeamWriter,
    shown_path: &str,
    text: &str,
) -> Result<(), OpError> {
    let findings = ignore.filter(secrets::scan_text(text));
    if findings.is_empty() {
        return Ok(());
    }
    Err(OpError::Refused(team_refusal(
        writer, shown_path, &findings,
    )))
}

/// The refusal message for findings in a text that `writer` meant for team memory.
pub fn team_refusal(writer: TeamWriter, shown_path: &str, findings: &[SecretFinding]) -> String {
    let mut msg = format!(
        "refusing to write {shown_path}: it contains {}:\n",
        count(findings.len())
    );
    list_findings(&mut msg, findings);
    let _ = write!(
        msg,
        "Team memory is shared with every collaborator through git and injected into their \
         agents' prompts, so nothing was written.\n\
         Fix: {}\n\
         A false positive? Put `teammem:allow` on that line, or add its fingerprint to \
         {TEAM_DIR}/{IGNORE_FILE}.",
        writer.fix()
    );
    msg
}

/// The warning for findings in a text written to private or user memory.
pub fn private_warning(shown_path: &str, findings: &[SecretFinding]) -> String {
    let mut msg = format!("{shown_path} contains {}:\n", count(findings.len()));
    list_findings(&mut msg, findings);
    msg.push_str(
        "It stays on this machine, but agents read it into their prompts; add with --redact to \
         store [REDACTED_SECRET] instead.",
    );
    msg
}

fn count(n: usize) -> String {
    if n == 1 {
        "a secret".into()
    } else {
        format!("{n} secrets")
    }
}

fn list_findings(msg: &mut String, findings: &[SecretFinding]) {
    for f in findings {
        let _ = writeln!(
            msg,
            "  line {}: {} ({}, fingerprint {})",
            f.line,
            f.label,
            f.redacted(),
            f.fingerprint()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_label_and_line_and_never_the_secret() {
        let secret = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";
        let text = format!("---\nname: x\n---\nUse {secret} for the API.\n");
        let err = refuse_secrets_in_team(TeamWriter::Add, ".qwen/team-memory/project/x.md", &text)
            .unwrap_err();
        assert_eq!(err.exit_code(), crate::ops::EXIT_FINDINGS);
        let msg = err.to_string();
        assert!(msg.contains("GitHub personal access token"), "{msg}");
        assert!(msg.contains("line 4"), "{msg}");
        assert!(msg.contains("shared with every collaborator"), "{msg}");
        assert!(msg.contains("teammem:allow"), "{msg}");
        assert!(!msg.contains(secret), "{msg}");
        assert!(!msg.contains(&secret[4..20]), "{msg}");
        assert!(msg.contains("add with --redact"), "{msg}");
    }

    #[test]
    fn the_fix_fits_the_command_that_writes() {
        let text = "token ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5\n";
        let refusal = |writer| match refuse_secrets_in_team(writer, "a.md", text) {
            Err(e) => e.to_string(),
            Ok(()) => String::new(),
        };
        let remember = refusal(TeamWriter::Remember);
        assert!(remember.contains("from the patch"), "{remember}");
        assert!(remember.contains("teammem redact"), "{remember}");
        let rewrite = refusal(TeamWriter::Rewrite);
        assert!(rewrite.contains("already holds the secret"), "{rewrite}");
        for msg in [remember, rewrite] {
            assert!(!msg.contains("--redact"), "{msg}");
        }
    }

    #[test]
    fn clean_text_and_ignored_fingerprints_pass() {
        assert!(refuse_secrets_in_team(TeamWriter::Add, "a.md", "no secrets here\n").is_ok());
        let text = "token ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5\n";
        let fp = secrets::scan_text(text)[0].fingerprint();
        let ignore = SecretsIgnore::parse(&fp);
        assert!(refuse_secrets_in_team_with(&ignore, TeamWriter::Add, "a.md", text).is_ok());
    }
}
