//! `teammem check --range` over a range large enough that its blobs are scanned on every
//! core: each secret is still reported once, with the commit that introduced it, and the
//! report is the same on every run.

use crate::common;

use crate::common::team;

use common::{Sandbox, write};
use serde_json::Value;
use team::{TEAM, put, reindex};

fn commit(sb: &Sandbox, repo: &std::path::Path, message: &str) -> String {
    sb.git(repo, ["add", "-A"]);
    sb.git(repo, ["commit", "-q", "--no-verify", "-m", message]);
    sb.git(repo, ["rev-parse", "HEAD"]).trim().to_string()
}

/// Secrets built at run time, so this file holds no secret-shaped text.
fn secrets() -> [(&'static str, String); 3] {
    [
        (
            "github-pat",
            format!("Token: ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"),
        ),
        (
            "slack-bot-token",
            format!(
                "Bot: xoxb-{}-{}-{}",
                "384729104856", "2948571038462", "aB3dE5fG7hJ9kL1mN3pQ5rS7"
            ),
        ),
        (
            "generic-secret",
            format!("db_password = \"{}\"", "Qz7pLm2Vx9rT4wK8"),
        ),
    ]
}

/// About 3 KB of prose, different for each commit.
fn prose(n: usize) -> String {
    (0..40)
        .map(|i| format!("Revision {n}, note {i}: the queue worker retries three times.\n"))
        .collect()
}

#[test]
fn a_long_range_reports_each_secret_once_with_its_commit_in_a_stable_order() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    put(
        &repo,
        "project/base.md",
        "Base",
        "The base memory",
        "Base.\n",
    );
    reindex(&sb, &repo);
    commit(&sb, &repo, "base");
    sb.git(&repo, ["checkout", "-q", "-b", "pr"]);
    // 40 commits of ~3 KB each (120 KB of blobs, past the size below which one thread
    // scans); secrets come in at commits 5, 17 and 33, each in a file of its own, and a
    // later commit removes each one again.
    let secrets = secrets();
    let mut introduced = Vec::new();
    let mut config_commit = String::new();
    for n in 0..40 {
        let file = format!("project/memory-{}.md", n % 7);
        let mut body = prose(n);
        if let Some(k) = [5, 17, 33].iter().position(|&c| c == n) {
            body.push_str(&secrets[k].1);
            body.push('\n');
        }
        put(&repo, &file, &format!("Memory {n}"), "A memory", &body);
        if n == 20 {
            write(
                &repo.join(TEAM).join(".secretsignore"),
                "# nothing accepted\n",
            );
        }
        let id = commit(&sb, &repo, &format!("revision {n}"));
        if [5, 17, 33].contains(&n) {
            introduced.push((file, id.clone()));
        }
        if n == 20 {
            config_commit = id;
        }
    }
    // The final state is clean, so only the range's history holds the secrets.
    for m in 0..7 {
        put(
            &repo,
            &format!("project/memory-{m}.md"),
            &format!("Memory {m}"),
            "A memory",
            "Clean.\n",
        );
    }
    reindex(&sb, &repo);
    commit(&sb, &repo, "clean up");

    let first = sb.teammem(&repo, ["check", "--range", "main..pr", "--format", "json"]);
    first.expect_code(1);
    for _ in 0..3 {
        let again = sb.teammem(&repo, ["check", "--range", "main..pr", "--format", "json"]);
        assert_eq!(
            again.stdout, first.stdout,
            "the report changed between runs"
        );
    }
    let doc: Value = serde_json::from_str(&first.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let found: Vec<(String, String, String)> = findings
        .iter()
        .filter(|f| f["rule"] == "secret")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["commit"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(found.len(), 3, "{}", first.stdout);
    for (k, (file, id)) in introduced.iter().enumerate() {
        let rule = secrets[k].0;
        let hit = found
            .iter()
            .find(|(_, _, message)| message.contains(&format!("({rule})")))
            .unwrap_or_else(|| panic!("no {rule} finding: {}", first.stdout));
        assert_eq!(hit.0, format!("{TEAM}/{file}"));
        assert_eq!(&hit.1, id, "{rule} names the wrong commit");
    }
    // Sorted by path, whatever thread scanned which blob.
    let paths: Vec<&str> = findings
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    let changed = findings
        .iter()
        .find(|f| f["rule"] == "config-changed")
        .unwrap_or_else(|| panic!("no config-changed warning: {}", first.stdout));
    assert_eq!(changed["commit"], config_commit.as_str());
    assert!(!first.stdout.contains("aB3dE5fG7hJ9kL1mN3pQ5rS7"));
}
