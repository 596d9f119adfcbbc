//! A bad file withholds itself (issue #40): a teammate with push access commits, with the git
//! CLI, a check configuration with a bad line, a `.secretsignore` that is a symlink or huge.
//! What can still be read is kept, nothing is loosened, and the file is named with its fix.

use crate::common;
use crate::common::netsync::Team;

use common::{memory_text, write};

/// A GitHub token planted in a memory body.
const GHP: &str = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5";

/// The teammate commits everything (no hook of theirs runs) and pushes with the git CLI; the
/// victim pulls it.
fn mate_pushes_and_me_pulls(team: &Team, message: &str) {
    team.sb.git(&team.mate, ["add", "-A"]);
    team.sb
        .git(&team.mate, ["commit", "-q", "--no-verify", "-m", message]);
    team.sb.git(&team.mate, ["push", "-q", "origin", "main"]);
    team.sb.git(&team.me, ["pull", "-q", "origin", "main"]);
}

fn team_file(team: &Team, rel: &str) -> std::path::PathBuf {
    team.mate.join(".qwen/team-memory").join(rel)
}

#[test]
fn a_config_with_a_bad_line_keeps_every_tightening_it_can_read() {
    let team = Team::new();
    // The team made external links an error; later someone added an unknown rule id and a
    // second "severity" key. Neither may cost the tightening.
    write(
        &team_file(&team, ".teammem-check.json"),
        "{\n  \"severity\": {\n    \"trust-external-link\": \"error\",\n    \"no-such-rule\": \"error\"\n  },\n  \"severity\": {\"trust-base64-blob\": \"warning\"}\n}\n",
    );
    write(
        &team_file(&team, "project/links.md"),
        &memory_text(
            "Links",
            "Where the runbook lives",
            "project",
            "See https://unknown.example/runbook for the steps.\n",
        ),
    );
    mate_pushes_and_me_pulls(&team, "config");

    let check = team.sb.teammem(&team.me, ["check", "--all"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check.stdout.contains("error   trust-external-link"),
        "{}",
        check.stdout
    );
    assert!(
        check
            .stdout
            .contains("line 4: unknown rule `no-such-rule` in \"severity\""),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("line 6: `severity` is given twice"),
        "{}",
        check.stdout
    );
    assert!(
        !check.stdout.contains("defaults were used"),
        "{}",
        check.stdout
    );

    // The agent's context keeps the tightening too: the link memory is withheld, the rest flows.
    let start = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "qwen"]);
    let context = common::hook_context(&start, "SessionStart");
    assert!(
        context.contains("Withheld by the memory gate: 1 memory (trust-external-link)"),
        "{context}"
    );
    assert!(context.contains("Release train"), "{context}");
    assert!(!context.contains("unknown.example"), "{context}");
    assert!(
        start.stderr.contains("line 4: unknown rule"),
        "{}",
        start.stderr
    );
}

#[test]
fn a_symlinked_secretsignore_is_not_followed_and_the_rest_flows() {
    let team = Team::new();
    write(
        &team_file(&team, "reference/bot.md"),
        &memory_text("Bot", "The CI bot", "reference", &format!("token {GHP}\n")),
    );
    // The fingerprint that would accept the token, kept outside the team folder and reached
    // through a symlink.
    let scan = team.sb.teammem(
        &team.mate,
        [
            "scan",
            ".qwen/team-memory/reference/bot.md",
            "--format",
            "json",
        ],
    );
    let found: serde_json::Value = serde_json::from_str(&scan.stdout).unwrap();
    let fingerprint = found["findings"][0]["fingerprint"].as_str().unwrap();
    write(&team.mate.join("accepted.txt"), &format!("{fingerprint}\n"));
    std::os::unix::fs::symlink("../../accepted.txt", team_file(&team, ".secretsignore")).unwrap();
    mate_pushes_and_me_pulls(&team, "accept through a symlink");

    let check = team.sb.teammem(&team.me, ["check", "--all"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(check.stdout.contains("error   secret"), "{}", check.stdout);
    assert!(
        check
            .stdout
            .contains(".secretsignore is a symlink; it was not followed"),
        "{}",
        check.stdout
    );
    let start = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "qwen"]);
    let context = common::hook_context(&start, "SessionStart");
    assert!(context.contains("Release train"), "{context}");
    assert!(context.contains("Use the real database"), "{context}");
    assert!(!context.contains(GHP), "{context}");
    assert!(
        start
            .stderr
            .contains(".secretsignore is a symlink; it was not followed"),
        "{}",
        start.stderr
    );
    let list = team.sb.teammem(&team.me, ["list"]);
    assert!(
        list.stdout.contains("project/release-train.md"),
        "{}",
        list.stdout
    );
}

#[test]
fn an_oversized_secretsignore_is_refused_naming_its_limit() {
    let team = Team::new();
    let line = format!("{}\n", "ab".repeat(32));
    write(
        &team_file(&team, ".secretsignore"),
        &line.repeat(2 * 1024 * 1024 / line.len()),
    );
    team.sb.git(&team.mate, ["add", "-A"]);
    let check = team.sb.teammem(&team.mate, ["check", "--staged"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check
            .stdout
            .contains(".secretsignore is over the 1048576-byte limit; it was not read"),
        "{}",
        check.stdout
    );
}

#[test]
fn an_oversized_or_dangling_memory_withholds_only_itself() {
    let team = Team::new();
    write(
        &team_file(&team, "project/huge.md"),
        &memory_text("Huge", "Too big", "project", &"x".repeat(200_000)),
    );
    std::os::unix::fs::symlink("gone.md", team_file(&team, "project/dangling.md")).unwrap();
    mate_pushes_and_me_pulls(&team, "bad files");

    let start = team
        .sb
        .teammem(&team.me, ["session-start", "--hook", "qwen"]);
    start.expect_code(0);
    let context = common::hook_context(&start, "SessionStart");
    assert!(context.contains("Release train"), "{context}");
    assert!(context.contains("Use the real database"), "{context}");
    assert!(
        context.contains("Withheld by the memory gate: 2 memories (memory-invalid, path-symlink)"),
        "{context}"
    );
    let list = team.sb.teammem(&team.me, ["list"]);
    assert_eq!(list.code, 1, "{}{}", list.stdout, list.stderr);
    assert!(
        list.stdout.contains("project/release-train.md"),
        "{}",
        list.stdout
    );
    for (name, why) in [
        ("project/huge.md", "over the 65536 byte limit"),
        ("project/dangling.md", "is a symlink that points nowhere"),
    ] {
        let lines: Vec<&str> = list.stderr.lines().filter(|l| l.contains(name)).collect();
        assert_eq!(lines.len(), 1, "{}", list.stderr);
        assert!(lines[0].contains(why), "{}", lines[0]);
    }
    let recall = team.sb.teammem(&team.me, ["recall", "release"]);
    recall.expect_code(0);
    assert!(recall.stdout.contains("Release train"), "{}", recall.stdout);
}
