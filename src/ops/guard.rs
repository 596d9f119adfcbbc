//! The team write guard: nothing with a detected secret is written into team memory, because
//! team memory is shared with every collaborator and injected into their agents' prompts.

use std::fmt::Write as _;

use crate::domain::scope::TEAM_DIR;
use crate::domain::secrets::{self, Finding, IGNORE_FILE, SecretsIgnore};

use super::OpError;

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
/// honour the team's `.secretsignore`.
pub fn refuse_secrets_in_team(
    writer: TeamWriter,
    shown_path: &str,
    text: &str,
) -> Result<(), OpError> {
    refuse_secrets_in_team_with(&SecretsIgnore::default(), writer, shown_path, text)
}

/// [`refuse_secrets_in_team`], silencing the findings whose fingerprints `ignore` lists.
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
pub fn team_refusal(writer: TeamWriter, shown_path: &str, findings: &[Finding]) -> String {
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
pub fn private_warning(shown_path: &str, findings: &[Finding]) -> String {
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

fn list_findings(msg: &mut String, findings: &[Finding]) {
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
