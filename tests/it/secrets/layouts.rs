//! `teammem scan` and the team write guard on secrets laid out the way team notes hold them:
//! keys in backticks and tables, a CJK full-width colon, client command lines, `.pgpass`.

use crate::common;

use common::invoke::stdout_json;
use common::{Sandbox, memory_text, write};

/// Values of real shapes, built at run time so this file holds no secret literal.
fn value(seed: &str) -> String {
    format!("{seed}{}", "Q7vLm2Xk9RtB4wZp8NcY")
}

#[test]
fn scan_reports_each_layout_on_its_line_and_prints_no_secret() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let (a, b, c, d, e) = (
        value("dd"),
        value("ab"),
        value("zh"),
        value("my"),
        value("pg"),
    );
    let body = format!(
        "Set `DD_API_KEY` to `{a}` before the job.\n\
         | env | variable | value |\n| --- | --- | --- |\n| prod | `CONFLUENT_API_SECRET` | `{b}` |\n\
         预发环境的 smtp password 是：{c}\n\
         mysql -h db -u root -p'{d}' shop\n\
         db.internal:5432:app:app_rw:{e}\n\
         Set `LOG_LEVEL` to `debug` and `API_TOKEN` to `${{API_TOKEN}}`.\n\
         POSTGRES_PASSWORD=postgres\n"
    );
    write(
        &repo.join(".qwen/team-memory/project/notes.md"),
        &memory_text("Notes", "Where things are", "project", &body),
    );

    let run = sb.teammem(&repo, ["scan", "--format", "json"]);
    run.expect_code(1);
    for secret in [&a, &b, &c, &d, &e] {
        assert!(!run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()));
    }
    let report = stdout_json(&run);
    let found: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Lines are counted from the first finding, so the frontmatter does not matter.
    let first = found.iter().map(|(_, l)| *l).min().unwrap();
    let rel: Vec<(&str, u64)> = found.iter().map(|(r, l)| (r.as_str(), l - first)).collect();
    assert_eq!(
        rel,
        [
            ("prose-assignment", 0),
            ("generic-secret", 3),
            ("cjk-assignment", 4),
            ("cli-password-argument", 5),
            ("pgpass-password", 6),
        ],
        "the placeholder line and the image default are not findings"
    );
}

#[test]
fn the_team_guard_refuses_a_secret_in_a_table_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let secret = value("tw");
    let body = format!("| prod | `TWILIO_AUTH_TOKEN` | `{secret}` |");
    let run = sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "reference",
            "--name",
            "Twilio",
            "--description",
            "Where the Twilio token lives",
            "--body",
            &body,
        ],
    );
    run.expect_code(1);
    assert!(
        run.stderr.contains("Generic secret assignment"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains(&secret) && !run.stderr.contains(&secret));
    assert!(!repo.join(".qwen/team-memory/reference/twilio.md").exists());
}
