//! `teammem scan`

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::domain::secrets;
use crate::ops::scan::{FileFinding, ScanReport};
use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Scan files for secrets (API keys, tokens, private keys, passwords in URLs and assignments).
///
/// Without PATH: the team memory folder (.qwen/team-memory/). Folders are walked like ripgrep
/// walks them: .gitignore is honoured, hidden files are scanned, .git and binary files are
/// skipped. Secrets are never printed, only redacted (at most the first 4 and last 2 chars).
/// A line holding `teammem:allow`, or a fingerprint listed in .qwen/team-memory/.secretsignore,
/// silences a finding.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Files or folders to scan.
    paths: Vec<PathBuf>,
    /// Output format: human lines, JSON ({"findings": [{path, line, column, rule, redacted,
    /// fingerprint}], "files_scanned", "bytes_scanned"}) or SARIF 2.1.0.
    #[arg(long, value_enum, default_value = "human")]
    format: ScanFormat,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

/// How `scan` prints its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScanFormat {
    /// One line per finding, then a summary.
    Human,
    /// The JSON report.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

/// Runs `teammem scan`; returns its exit status.
pub fn run(project: &Project, cwd: &Path, args: ScanArgs) -> Result<u8, OpError> {
    let format = if args.json {
        ScanFormat::Json
    } else {
        args.format
    };
    let report = match ops::scan::scan(project, cwd, &args.paths) {
        Ok(report) => report,
        // An upload step that runs whatever happened still gets a valid log saying why.
        Err(err) if format == ScanFormat::Sarif => {
            super::print_json(&sarif_failure(&err.to_string()))?;
            return Err(err);
        }
        Err(err) => return Err(err),
    };
    match format {
        ScanFormat::Human => print_human(&report),
        ScanFormat::Json => super::print_json(&json_report(&report))?,
        ScanFormat::Sarif => super::print_json(&sarif_report(&report))?,
    }
    Ok(if report.findings.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

fn print_human(report: &ScanReport) {
    for f in &report.findings {
        let x = &f.finding;
        outln!(
            "{}:{}:{}: {} [{}] {} (fingerprint {})",
            f.path,
            x.line,
            x.column,
            x.label,
            x.rule,
            x.redacted(),
            x.fingerprint()
        );
    }
    let files = report
        .findings
        .iter()
        .map(|f| &f.path)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if report.findings.is_empty() {
        outln!(
            "No secrets found in {} file(s), {} bytes.",
            report.files_scanned,
            report.bytes_scanned
        );
    } else {
        outln!(
            "{} secret(s) in {files} of {} file(s) scanned. Remove them (and rotate them: they may \
             already be in git history); for a false positive put `teammem:allow` on the line or \
             add the fingerprint to .qwen/team-memory/.secretsignore.",
            report.findings.len(),
            report.files_scanned
        );
    }
}

/// The JSON report, with the field names DESIGN.md fixes.
pub fn json_report(report: &ScanReport) -> Value {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "path": f.path,
                "line": f.finding.line,
                "column": f.finding.column,
                "rule": f.finding.rule,
                "redacted": f.finding.redacted(),
                "fingerprint": f.finding.fingerprint(),
            })
        })
        .collect();
    json!({
        "findings": findings,
        "files_scanned": report.files_scanned,
        "bytes_scanned": report.bytes_scanned,
    })
}

/// A SARIF 2.1.0 log: every rule in `tool.driver.rules`, one result per finding with the file
/// relative to the repository root (or to the scanned root outside a repository).
pub fn sarif_report(report: &ScanReport) -> Value {
    let rules: Vec<(&str, &str)> = secrets::rules().collect();
    let rule_list: Vec<Value> = rules
        .iter()
        .map(|(id, label)| {
            json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": label},
                "fullDescription": {"text": format!("{label} detected. Team memory is shared with every collaborator and injected into their agents' prompts.")},
                "defaultConfiguration": {"level": "error"},
                // GitHub code scanning ranks security alerts by this score: a leaked secret
                // is critical.
                "properties": {"tags": ["security", "secret"], "security-severity": "9.0"},
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| sarif_result(f, &rules))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "teammem",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rule_list,
            }},
            "results": results,
        }],
    })
}

/// A SARIF 2.1.0 log for a scan that could not run (exit status 2): the rules, no results,
/// and the error as a tool execution notification.
pub fn sarif_failure(message: &str) -> Value {
    let mut log = sarif_report(&ScanReport::default());
    log["runs"][0]["invocations"] = json!([{
        "executionSuccessful": false,
        "exitCode": 2,
        "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}],
    }]);
    log
}

fn sarif_result(f: &FileFinding, rules: &[(&str, &str)]) -> Value {
    let x = &f.finding;
    let index = rules.iter().position(|(id, _)| *id == x.rule).unwrap_or(0);
    json!({
        "ruleId": x.rule,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": format!("{} ({}) — remove it and rotate it; team memory reaches every collaborator's agent.", x.label, x.redacted())},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": f.repo_path.as_deref().unwrap_or(&f.path)},
            "region": {"startLine": x.line, "startColumn": x.column},
        }}],
        "partialFingerprints": {"teammemSecret/v1": x.fingerprint()},
    })
}
