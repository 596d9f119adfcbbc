//! The four ways a check report is written: for people (`human`), for programs (`json`), for
//! code scanning (`sarif`, SARIF 2.1.0) and for GitHub Actions annotations (`github`).

use serde_json::{Value, json};

use crate::domain::check::{self, Finding, RULES, Severity};
use crate::domain::memory_index::percent_encode;

use super::CheckReport;

/// Grouped by file, one line per finding with its line and column.
pub fn human(report: &CheckReport) -> String {
    let mut out = String::new();
    let mut current: Option<&str> = None;
    for f in &report.findings {
        if current != Some(f.path.as_str()) {
            if current.is_some() {
                out.push('\n');
            }
            out.push_str(&f.path);
            out.push('\n');
            current = Some(&f.path);
        }
        let place = format!("{}:{}", f.line, f.column);
        out.push_str(&format!(
            "  {place:<7} {:<7} {}  {}",
            f.severity.as_str(),
            f.rule,
            one_line(&f.message)
        ));
        if let Some(commit) = &f.commit {
            out.push_str(&format!("  (commit {})", short(commit)));
        }
        out.push('\n');
    }
    if !report.findings.is_empty() {
        out.push('\n');
    }
    let files = report
        .findings
        .iter()
        .map(|f| f.path.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let commits = if report.commits_checked > 0 {
        format!(", {} commit(s)", report.commits_checked)
    } else {
        String::new()
    };
    out.push_str(&format!(
        "teammem check ({}): {} error(s), {} warning(s) in {} file(s); {} file version(s) checked{commits}\n",
        report.source, report.errors, report.warnings, files, report.files_checked
    ));
    out
}

/// The report as JSON: `{source, files_checked, commits_checked, errors, warnings, findings}`.
pub fn json(report: &CheckReport) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(report)
}

/// SARIF 2.1.0: one run, every rule of the catalog, one result per finding. Fingerprints are
/// hashes that hold no secret; paths are relative to the repository root (`%SRCROOT%`).
pub fn sarif(report: &CheckReport) -> Result<String, serde_json::Error> {
    let rules = sarif_rules();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let rule_index = RULES.iter().position(|r| r.id == f.rule).unwrap_or(0);
            let mut result = json!({
                "ruleId": f.rule,
                "ruleIndex": rule_index,
                "level": level(f.severity),
                "message": {"text": message_with_commit(f)},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": percent_encode(&f.path), "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }],
                "partialFingerprints": {"teammemFinding/v1": f.fingerprint},
            });
            if let Some(commit) = &f.commit {
                result["properties"] = json!({"commit": commit});
            }
            result
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "teammem",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root"}}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&doc)
}

/// Every rule of the catalog as SARIF `reportingDescriptor`s. Security rules carry GitHub's
/// `security-severity` (a CVSS-like score: 9 and up critical, 7 high, 4 medium), which code
/// scanning needs to rank them as security alerts.
fn sarif_rules() -> Vec<Value> {
    RULES
        .iter()
        .map(|r| {
            let mut properties = json!({"tags": tags(r.id)});
            if let Some(score) = security_severity(r) {
                properties["security-severity"] = json!(score);
            }
            json!({
                "id": r.id,
                "name": rule_name(r.id),
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.help},
                "defaultConfiguration": {"level": level(r.default_severity)},
                "properties": properties,
            })
        })
        .collect()
}

/// A leaked secret is critical; a trust error (an injected instruction) high; a trust warning
/// (a base64 blob, an unknown link) medium; other rules are not security alerts.
fn security_severity(rule: &check::Rule) -> Option<&'static str> {
    if rule.id == check::SECRET {
        Some("9.0")
    } else if rule.id.starts_with("trust-") {
        Some(match rule.default_severity {
            Severity::Error => "7.5",
            Severity::Warning => "4.0",
        })
    } else {
        None
    }
}

/// A SARIF 2.1.0 log for a check that could not run (exit status 2): no results, the error as
/// a tool execution notification, so an upload step that runs `if: always()` still gets a
/// valid file that says what went wrong.
pub fn sarif_failure(message: &str) -> Result<String, serde_json::Error> {
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "teammem",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": sarif_rules(),
            }},
            "invocations": [{
                "executionSuccessful": false,
                "exitCode": 2,
                "toolExecutionNotifications": [{
                    "level": "error",
                    "message": {"text": message},
                }],
            }],
            "results": [],
        }],
    });
    serde_json::to_string_pretty(&doc)
}

/// GitHub Actions workflow commands: `::error file=…,line=…,col=…,title=…::message`.
pub fn github(report: &CheckReport) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!(
            "::{command} file={},line={},col={},title={}::{}\n",
            escape_property(&f.path),
            f.line,
            f.column,
            escape_property(&format!("teammem {}", f.rule)),
            escape_data(&message_with_commit(f)),
        ));
    }
    out
}

fn message_with_commit(f: &Finding) -> String {
    match &f.commit {
        // Its message names the commit that removed the path; nothing was introduced.
        Some(_) if f.rule == check::MEMORY_REFERENCE => f.message.clone(),
        Some(commit) => format!("{} (introduced in commit {})", f.message, short(commit)),
        None => f.message.clone(),
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `trust-hidden-character` becomes `TrustHiddenCharacter`, as SARIF rule names are written.
fn rule_name(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

fn tags(id: &str) -> Vec<&'static str> {
    if id == check::SECRET || id.starts_with("trust-") {
        vec!["security"]
    } else {
        vec!["correctness"]
    }
}

fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// Escapes a workflow-command message (`%`, CR and LF).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property (also `:` and `,`).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}
