//! `teammem scan`, `check` and the team write guard on passwords written the way people write
//! them in notes and build scripts: "the password for X is Y" in several languages, a value
//! before its key, in parentheses, compared in code, a passphrase of words, gradle's
//! `password '…'`; and a few vendors' tokens that need their own rule. Every family comes
//! with look-alikes that must stay clean.

use std::path::Path;

use crate::common;

use common::invoke::stdout_json;
use common::{Sandbox, memory_text, write};

/// A password of a real shape, built at run time so this file holds no secret literal.
fn value(seed: &str) -> String {
    format!("{seed}{}", "Q7vLm2Xk9RtB4wZp")
}

/// `(rule, line)` of every finding of a JSON report, lines counted from the body's first line.
fn found(report: &serde_json::Value, first_line: u64) -> Vec<(String, u64)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap() - first_line,
            )
        })
        .collect()
}

/// `teammem scan --format json` of `repo`, which must find something and print none of
/// `secrets`: its report.
fn scan_printing_none(sb: &Sandbox, repo: &Path, secrets: &[String]) -> serde_json::Value {
    let run = sb.teammem(repo, ["scan", "--format", "json"]);
    run.expect_code(1);
    for secret in secrets {
        assert!(
            !run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()),
            "a secret was printed"
        );
    }
    stdout_json(&run)
}

#[test]
fn scan_finds_passwords_in_prose_code_and_build_scripts_and_not_their_look_alikes() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let secrets: Vec<String> = ["en", "es", "fr", "pt", "de", "ja", "us", "pa", "cm", "gr"]
        .iter()
        .map(|s| value(s))
        .collect();
    let [en, es, fr, pt, de, ja, us, pa, cm, gr] = &secrets[..] else {
        unreachable!()
    };
    // Line 0 is a marker the report's line numbers are counted from.
    let body = format!(
        "MARKER_TOKEN=mk{marker}\n\
         The password for the staging db is {en} until Friday.\n\
         La contraseña de la base de datos es {es}\n\
         Le mot de passe de prod est : {fr}\n\
         A senha do banco é {pt}\n\
         Das Passwort für die Datenbank ist {de}\n\
         本番のパスワードは{ja}です\n\
         Use `{us}` as the password for the bastion.\n\
         The reporting db password ({pa}) rotates monthly.\n\
         if username == \"ops\" and password == \"{cm}\":\n\
         \x20   password '{gr}'\n\
         The password is stored in Vault.\n\
         The password for the staging db is in 1Password.\n\
         La contraseña es obligatoria.\n\
         Das Passwort ist falsch.\n\
         パスワードは必須です\n\
         Use the password manager for the bastion.\n\
         if password != confirm_password:\n\
         \x20   password 'changeme'\n\
         \x20   password System.getenv(\"REPO_PASSWORD\")\n\
         passwordLabel:\"Password:\",rememberMeLabel:\"Remember me:\"\n",
        marker = "Zq8vN3kL1pX7mW4tR6yB"
    );
    write(
        &repo.join(".qwen/team-memory/project/passwords.md"),
        &memory_text("Passwords", "Where the passwords are", "project", &body),
    );

    let report = scan_printing_none(&sb, &repo, &secrets);
    let first = report["findings"][0]["line"].as_u64().unwrap();
    let rows = found(&report, first);
    let want: Vec<(String, u64)> = [
        ("generic-secret", 0),
        ("prose-password", 1),
        ("prose-password", 2),
        ("prose-password", 3),
        ("prose-password", 4),
        ("prose-password", 5),
        ("prose-password", 6),
        ("prose-password", 7),
        ("prose-password", 8),
        ("generic-secret", 9),
        ("prose-password", 10),
    ]
    .iter()
    .map(|(r, l)| ((*r).to_owned(), *l))
    .collect();
    assert_eq!(rows, want, "the look-alike lines (11 on) are not findings");
}

#[test]
fn check_and_the_team_guard_refuse_a_passphrase_and_a_vendor_webhook() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let hook = format!(
        "https://hooks.zapier.com/hooks/catch/{}/{}/",
        "4817302", "b9xk2q1"
    );
    let body = format!(
        "db_password = 'correct horse battery staple'\nAlerts go to {hook}\n\
         password = 'Enter your password'\n"
    );
    // `check --staged` reads the team memory git is about to commit.
    write(
        &repo.join(".qwen/team-memory/reference/alerts-staged.md"),
        &memory_text("Alerts", "Where alerts go", "reference", &body),
    );
    sb.git(&repo, ["add", "-A"]);
    let check = sb.teammem(&repo, ["check", "--staged", "--format", "json"]);
    check.expect_code(1);
    assert!(!check.stdout.contains("battery staple") && !check.stdout.contains("b9xk2q1"));
    // `check` names every secret finding `secret`; its message names the rule.
    let secrets: Vec<String> = stdout_json(&check)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "secret")
        .map(|f| f["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(secrets.len(), 2, "{}", check.stdout);
    assert!(
        secrets[0].contains("Password given in prose or a build script"),
        "{secrets:?}"
    );
    assert!(secrets[1].contains("Zapier webhook URL"), "{secrets:?}");

    let add = sb.teammem(
        &repo,
        [
            "add",
            "--scope",
            "team",
            "--type",
            "reference",
            "--name",
            "Alert hooks",
            "--description",
            "Where alerts go",
            "--body",
            &body,
        ],
    );
    add.expect_code(1);
    assert!(add.stderr.contains("Zapier webhook URL"), "{}", add.stderr);
    assert!(!add.stderr.contains("b9xk2q1") && !add.stderr.contains("battery staple"));
    let written: Vec<_> = std::fs::read_dir(repo.join(".qwen/team-memory/reference"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(written, ["alerts-staged.md"], "nothing was written");
}

#[test]
fn scan_finds_other_secrets_in_prose_of_several_languages_and_not_their_look_alikes() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let secrets: Vec<String> = ["en", "es", "fr", "de", "us", "uf", "bi", "pa", "zh"]
        .iter()
        .map(|s| value(s))
        .collect();
    let [en, es, fr, de, us, uf, bi, pa, zh] = &secrets[..] else {
        unreachable!()
    };
    // Line 0 is a marker the report's line numbers are counted from.
    let body = format!(
        "MARKER_TOKEN=mk{marker}\n\
         The jwt secret for the staging cluster is {en} until Friday.\n\
         El api key de pruebas es {es}\n\
         La clé smtp pass de préproduction est {fr}\n\
         Der dd app key für Staging lautet: {de}\n\
         Use {us} as the codecov token until the rotation.\n\
         Utiliser {uf} comme redis password.\n\
         Bitte {bi} als dd app key verwenden.\n\
         FYI the cloudflare api token ({pa}) expires next month.\n\
         secret key base为 {zh}，下周轮换。\n\
         The token rotation policy for staging is 90d-2024Q1x.\n\
         The api key name for prod is deploy-key-v2-2024.\n\
         The secret for staging is stored in Vault under ops/db.\n\
         El token de pruebas es obligatorio desde 2024.\n\
         the commit for the token fix is 3f9a2c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b\n\
         the public key for staging is {marker}\n\
         Use the deploy key as the fallback.\n\
         password = 'super$ecret'\n\
         IAMUserChangePassword = \"arn:aws:iam::aws:policy/IAMUserChangePassword\"\n",
        marker = "Zq8vN3kL1pX7mW4tR6yB"
    );
    write(
        &repo.join(".qwen/team-memory/project/keys.md"),
        &memory_text("Keys", "Where the keys are", "project", &body),
    );

    let report = scan_printing_none(&sb, &repo, &secrets);
    let first = report["findings"][0]["line"].as_u64().unwrap();
    let lines: Vec<u64> = found(&report, first).iter().map(|(_, l)| *l).collect();
    assert_eq!(
        lines,
        (0..=9).collect::<Vec<u64>>(),
        "each secret line is one finding; the look-alike lines (10 on) are none"
    );
}
