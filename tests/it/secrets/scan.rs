//! `teammem scan` and `teammem redact` on real repositories, as a user runs them.

use crate::common;

use std::path::Path;

use common::invoke::stdout_json;
use common::{Sandbox, memory_text, write};

/// Tokens of real shapes, built at run time so this file holds no token literal.
fn slack_token() -> String {
    format!(
        "xoxb-{}-{}-{}",
        "384920175563", "7201948836152", "Zq8vN3kL1pX7wR5tY2uI9oP4"
    )
}

fn aws_key_id() -> String {
    format!("AKIA{}", "Q3RZ7XJ2LMNPK4ST")
}

fn team_repo(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    repo
}

fn put_memory(repo: &Path, rel: &str, body: &str) {
    write(
        &repo.join(".qwen/team-memory").join(rel),
        &memory_text("Deploy", "How we deploy", "project", body),
    );
}

#[test]
fn json_report_has_exactly_the_designed_fields_and_no_secret() {
    let sb = Sandbox::new();
    let repo = team_repo(&sb);
    let token = slack_token();
    put_memory(
        &repo,
        "project/deploy.md",
        &format!("Ünïcode first.\r\nBot token: {token}\r\n"),
    );
    put_memory(&repo, "project/clean.md", "Nothing to see.\n");

    let run = sb.teammem(&repo, ["scan", "--format", "json"]);
    run.expect_code(1);
    assert!(!run.stdout.contains(&token) && !run.stderr.contains(&token));
    let report = stdout_json(&run);
    let mut top: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    top.sort();
    assert_eq!(top, ["bytes_scanned", "files_scanned", "findings"]);
    assert_eq!(report["files_scanned"], 3, "MEMORY.md and two memories");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1);
    let f = findings[0].as_object().unwrap();
    let mut keys: Vec<&str> = f.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["column", "fingerprint", "line", "path", "redacted", "rule"]
    );
    assert_eq!(f["path"], "project/deploy.md");
    assert_eq!(f["rule"], "slack-bot-token");
    assert_eq!(f["line"], 7);
    assert_eq!(f["column"], 12);
    assert_eq!(f["redacted"], "xoxb…P4");
    let fp = f["fingerprint"].as_str().unwrap();
    assert!(fp.len() == 64 && fp.bytes().all(|b| b.is_ascii_hexdigit()));
    let bytes: u64 = ["MEMORY.md", "project/deploy.md", "project/clean.md"]
        .iter()
        .map(|p| {
            std::fs::metadata(repo.join(".qwen/team-memory").join(p))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(report["bytes_scanned"], bytes);
}

#[test]
fn sarif_report_is_sarif_2_1_0_with_repo_relative_locations() {
    let sb = Sandbox::new();
    let repo = team_repo(&sb);
    put_memory(
        &repo,
        "reference/aws.md",
        &format!("Key id {}\n", aws_key_id()),
    );

    let run = sb.teammem(&repo, ["scan", "--format", "sarif"]);
    run.expect_code(1);
    let log = stdout_json(&run);
    assert_eq!(log["version"], "2.1.0");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "teammem");
    let rules = driver["rules"].as_array().unwrap();
    assert!(rules.len() >= 60);
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "aws-access-key-id");
    assert_eq!(
        rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "aws-access-key-id"
    );
    assert_eq!(result["level"], "error");
    assert!(
        result["message"]["text"]
            .as_str()
            .unwrap()
            .contains("AWS access key ID")
    );
    let location = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        ".qwen/team-memory/reference/aws.md"
    );
    assert_eq!(location["region"]["startLine"], 6);
    assert!(!run.stdout.contains(&aws_key_id()));
}

#[test]
fn human_output_names_file_line_and_rule_and_clean_scans_exit_zero() {
    let sb = Sandbox::new();
    let repo = team_repo(&sb);
    let clean = sb.teammem(&repo, ["scan"]);
    clean.expect_code(0);
    assert!(
        clean.stdout.contains("No secrets found"),
        "{}",
        clean.stdout
    );

    let token = slack_token();
    put_memory(&repo, "project/deploy.md", &format!("token {token}\n"));
    let run = sb.teammem(&repo, ["scan"]);
    run.expect_code(1);
    assert!(
        run.stdout
            .contains("project/deploy.md:6:7: Slack bot token [slack-bot-token] xoxb…P4"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(&token));
}

#[test]
fn paths_are_walked_with_gitignore_hidden_files_and_binaries_handled() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let token = slack_token();
    write(&repo.join("notes/.env"), &format!("SLACK={token}\n"));
    write(&repo.join("notes/ignored.log"), &format!("SLACK={token}\n"));
    write(&repo.join(".gitignore"), "*.log\n");
    std::fs::write(
        repo.join("notes/blob.bin"),
        [b"\x00\x01".as_slice(), token.as_bytes()].concat(),
    )
    .unwrap();
    write(&repo.join("single.md"), &format!("x {}\n", aws_key_id()));

    let run = sb.teammem(&repo, ["scan", "notes", "single.md", "--format", "json"]);
    run.expect_code(1);
    let report = stdout_json(&run);
    let paths: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [".env", "single.md"]);
    assert_eq!(
        report["files_scanned"], 2,
        "the binary is skipped, the .log ignored"
    );

    let missing = sb.teammem(&repo, ["scan", "no-such-dir"]);
    missing.expect_code(2);
    assert!(missing.stderr.contains("no-such-dir"), "{}", missing.stderr);
}

#[test]
fn allow_marker_and_secretsignore_silence_findings() {
    let sb = Sandbox::new();
    let repo = team_repo(&sb);
    let token = slack_token();
    put_memory(
        &repo,
        "project/a.md",
        &format!("fixture {token} <!-- teammem:allow -->\n"),
    );
    put_memory(&repo, "project/b.md", &format!("fixture {token}\n"));
    let run = sb.teammem(&repo, ["scan", "--format", "json"]);
    run.expect_code(1);
    let report = stdout_json(&run);
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);
    assert_eq!(report["findings"][0]["path"], "project/b.md");
    let fp = report["findings"][0]["fingerprint"]
        .as_str()
        .unwrap()
        .to_string();
    write(
        &repo.join(".qwen/team-memory/.secretsignore"),
        &format!("{fp} # revoked fixture\n"),
    );
    sb.teammem(&repo, ["scan"]).expect_code(0);
}

#[test]
fn redact_replaces_secrets_from_stdin() {
    let sb = Sandbox::new();
    let dir = sb.path().join("anywhere");
    std::fs::create_dir_all(&dir).unwrap();
    let input = format!(
        "keep this\nSLACK={}\nkey {} end\n",
        slack_token(),
        aws_key_id()
    );
    let run = sb.teammem_with_input(&dir, ["redact"], &input);
    run.expect_code(0);
    assert_eq!(
        run.stdout,
        "keep this\nSLACK=[REDACTED_SECRET]\nkey [REDACTED_SECRET] end\n"
    );
}

#[test]
fn a_folder_scanned_on_every_core_reports_in_path_order() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let token = slack_token();
    // Enough files in enough folders that every scanning thread takes some batches.
    let mut want = Vec::new();
    for dir in ["a", "b/c", "d", "e/f/g"] {
        for i in 0..25 {
            let rel = format!("{dir}/note-{i:02}.md");
            let secret = if i % 5 == 0 {
                want.push(rel.clone());
                format!("SLACK={token}\n")
            } else {
                "nothing here\n".to_string()
            };
            write(
                &repo.join("notes").join(&rel),
                &format!("# {rel}\n{secret}"),
            );
        }
    }
    want.sort();
    for _ in 0..3 {
        let run = sb.teammem(&repo, ["scan", "notes", "--format", "json"]);
        run.expect_code(1);
        let report = stdout_json(&run);
        let paths: Vec<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, want);
        assert_eq!(report["files_scanned"], 100);
    }
}
