//! The team write guard and `add --redact`, end to end on a real repository.

use crate::common;

use common::Sandbox;

/// A token of GitHub's shape, built at run time so this file holds no token literal.
fn github_token() -> String {
    format!("ghp_{}", "Zq8vN3kL1pX7wR5tY2uI9oP4aS6dF0gH1jK3")
}

fn add_args<'a>(scope: &'a str, name: &'a str, body: &'a str) -> Vec<&'a str> {
    vec![
        "add",
        "--scope",
        scope,
        "--type",
        "reference",
        "--name",
        name,
        "--description",
        "Where the deploy token lives",
        "--body",
        body,
    ]
}

#[test]
fn team_add_with_a_secret_is_refused_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let status_before = sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]);
    let token = github_token();
    let body = format!("Deploy with GITHUB_TOKEN={token} from CI.\n");

    let run = sb.teammem(&repo, add_args("team", "Deploy token", &body));
    run.expect_code(1);
    assert!(
        run.stderr.contains("GitHub personal access token"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("line "), "{}", run.stderr);
    assert!(
        run.stderr.contains("shared with every collaborator"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains(&token) && !run.stdout.contains(&token));
    assert!(!run.stderr.contains(&token[4..24]), "{}", run.stderr);
    assert!(
        !repo
            .join(".qwen/team-memory/reference/deploy-token.md")
            .exists()
    );
    assert_eq!(
        sb.git(&repo, ["status", "--porcelain", "--untracked-files=all"]),
        status_before
    );
}

#[test]
fn team_add_accepts_a_finding_listed_in_secretsignore() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    let token = github_token();
    let body = format!("Fixture token {token} (revoked).\n");
    let refused = sb.teammem(&repo, add_args("team", "Fixture", &body));
    refused.expect_code(1);
    let fingerprint = refused
        .stderr
        .split("fingerprint ")
        .nth(1)
        .and_then(|rest| rest.get(..64))
        .expect("the refusal names the fingerprint")
        .to_string();
    common::write(
        &repo.join(".qwen/team-memory/.secretsignore"),
        &format!("# revoked test fixture\n{fingerprint}\n"),
    );
    sb.teammem(&repo, add_args("team", "Fixture", &body))
        .expect_code(0);
    let written =
        std::fs::read_to_string(repo.join(".qwen/team-memory/reference/fixture.md")).unwrap();
    assert!(written.contains(&token));
}

#[test]
fn private_add_warns_and_redact_stores_the_placeholder() {
    let sb = Sandbox::new();
    let repo = sb.repo("project");
    let token = github_token();
    let body = format!("My token is {token}.\n");

    let warned = sb.teammem(&repo, add_args("private", "Mine", &body));
    warned.expect_code(0);
    assert!(warned.stderr.contains("warning"), "{}", warned.stderr);
    assert!(warned.stderr.contains("--redact"), "{}", warned.stderr);
    assert!(!warned.stderr.contains(&token));

    let mut args = add_args("team", "Redacted", &body);
    args.push("--redact");
    sb.teammem(&repo, ["init", "--current-branch"])
        .expect_code(0);
    sb.teammem(&repo, args).expect_code(0);
    let written =
        std::fs::read_to_string(repo.join(".qwen/team-memory/reference/redacted.md")).unwrap();
    assert!(
        written.contains("My token is [REDACTED_SECRET].\n"),
        "{written}"
    );
    assert!(!written.contains(&token));
}
