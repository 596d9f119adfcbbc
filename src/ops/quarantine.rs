//! The gate before a sync commit: every changed file of the team folder is scanned for
//! secrets (in its path and its bytes) and, when it is a memory, validated and checked for
//! trust errors. A file that fails is quarantined: it stays on disk untouched, is not
//! committed, and is left out of the generated index.

use std::path::Path;

use serde::Serialize;

use crate::domain::gate::{self, Gate};
use crate::domain::memory::{self, MAX_FILE_BYTES, MemoryFile};
use crate::domain::memory_index::IndexLine;
use crate::domain::secrets::{self, SecretsIgnore};
use crate::domain::store;

use crate::git::replay;

use super::OpError;

/// A file kept out of a sync commit, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Quarantined {
    /// The file, relative to the work tree, with any secret in it redacted.
    pub path: String,
    /// Why: `secret: <rule>` labels (never the secret itself), `trust: <rule>` risks or
    /// `invalid: …` problems.
    pub reasons: Vec<String>,
}

/// A changed file of the team folder after the guard looked at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// Why it must stay out of the commit; empty when it may be committed.
    pub reasons: Vec<String>,
    /// The bytes that were checked (`None` for a symlink): commit these, not a later read.
    pub bytes: Option<Vec<u8>>,
}

impl Quarantined {
    /// A quarantined file; its path is redacted here, so no report can print a secret in it.
    pub fn new(path: &str, reasons: Vec<String>) -> Quarantined {
        Quarantined {
            path: gate::redact_path(path),
            reasons,
        }
    }
}

/// Checks one changed file of the team folder. `path` is relative to the work tree (shown in
/// messages), `rel` relative to the team folder, `abs` where it is on disk; `policy` is the
/// gate in force (with the team's accepted findings, `.secretsignore`).
pub fn check_team_file(
    path: &str,
    rel: &str,
    abs: &Path,
    policy: &Gate,
) -> Result<CheckedFile, OpError> {
    let mut path_reasons = Vec::new();
    if policy.path_has_secret(path) {
        path_reasons.push("secret: in the file path".to_string());
    }
    let meta = std::fs::symlink_metadata(abs).map_err(|e| OpError::io(abs, e))?;
    if meta.file_type().is_symlink() {
        // A symlink is committed as its target's path; the file it points at (inside the team
        // folder, or sync refuses to run) is checked on its own.
        return Ok(CheckedFile {
            reasons: path_reasons,
            bytes: None,
        });
    }
    let bytes = store::read_capped(abs)?;
    let mut reasons = path_reasons;
    reasons.extend(reasons_for(path, rel, &bytes, policy));
    Ok(CheckedFile {
        reasons,
        bytes: Some(bytes),
    })
}

/// The gate's reasons to keep `bytes` (a teammate's version of `path`, `rel` inside the team
/// folder) out of the work tree: the same rules as [`check_team_file`], path included.
pub fn check_team_bytes(path: &str, rel: &str, bytes: &[u8], policy: &Gate) -> Vec<String> {
    let mut reasons = Vec::new();
    if policy.path_has_secret(path) {
        reasons.push("secret: in the file path".to_string());
    }
    reasons.extend(reasons_for(path, rel, bytes, policy));
    reasons
}

fn reasons_for(path: &str, rel: &str, bytes: &[u8], policy: &Gate) -> Vec<String> {
    let mut reasons = secret_reasons(bytes, &policy.ignore);
    if !reasons.is_empty() {
        // Parse errors could quote the text around a secret: report the secret alone.
        return reasons;
    }
    if memory::is_memory_path(rel) {
        if let Some(text) = secrets::decode_text(bytes) {
            let (errors, _) = policy.text_problems(&text);
            reasons.extend(errors.iter().map(|rule| format!("trust: {rule}")));
        }
        if let Some(bad) = memory::check_file_name(path) {
            reasons.push(invalid_reason(&bad));
        }
        if let Err(problems) = MemoryFile::parse(path, bytes) {
            reasons.extend(problems.iter().map(invalid_reason));
        }
    } else if bytes.len() > MAX_FILE_BYTES {
        reasons.push(format!(
            "invalid: file is over the {MAX_FILE_BYTES} byte limit for team memory"
        ));
    }
    reasons
}

fn invalid_reason(problem: &memory::Invalid) -> String {
    let reason = format!(
        "invalid: {}:{}: {} — {}",
        problem.line, problem.column, problem.message, problem.fix
    );
    // A problem can quote the file name or a value, either of which may hold a secret.
    gate::redact_path(&reason)
}

/// The reasons to keep a regenerated `MEMORY.md` out of a commit: any secret in it. The index
/// is rendered from memories that passed the gate, so this is the last line of defence.
pub fn index_reasons(bytes: &[u8], policy: &Gate) -> Vec<String> {
    secret_reasons(bytes, &policy.ignore)
}

/// One `secret: <rule> on line N` per finding in `bytes` (never the secret), or a refusal of
/// bytes that cannot be scanned because they look binary.
fn secret_reasons(bytes: &[u8], ignore: &SecretsIgnore) -> Vec<String> {
    match secrets::scan_bytes(bytes) {
        Some(findings) => ignore
            .filter(findings)
            .iter()
            .map(|f| format!("secret: {} on line {}", f.rule, f.line))
            .collect(),
        None => vec![
            "binary file: it cannot be scanned for secrets — keep it out of team memory".into(),
        ],
    }
}

/// The memory gate as the git engine asks it about a folder it merged or recorded: which lines
/// `MEMORY.md` may hold under the folder's own check file and `.secretsignore`, and how it is
/// rendered — the engine holds no policy of its own.
pub struct TeamMemoryIndexGate;

impl replay::MemoryIndexGate for TeamMemoryIndexGate {
    fn config_files(&self) -> [&'static str; 2] {
        [crate::domain::check::CONFIG_FILE, secrets::IGNORE_FILE]
    }

    fn judge<'f>(
        &self,
        [config, ignore]: [Option<(&'f [u8], bool)>; 2],
    ) -> Box<dyn Fn(&IndexLine) -> bool + 'f> {
        let file = |found: Option<(&'f [u8], bool)>| {
            found.map(|(bytes, symlink)| crate::domain::check_config::TeamFile { bytes, symlink })
        };
        let policy = Gate::from_team_files(file(config), file(ignore));
        Box::new(move |line| policy.index_line_safe(line))
    }

    fn render(&self, kept: Vec<IndexLine>) -> String {
        gate::team_index_md(kept, None)
    }
}
