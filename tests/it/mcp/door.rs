//! `teammem mcp` through the official MCP Python SDK: `memory_list` pages, freshness that
//! follows `HEAD` on a long-lived server, arguments out of shape, and when a team save leaves
//! the machine (the next sync, or at once within the budget).

use crate::common;
use crate::common::mcp_sdk;
use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::time::Duration;

use serde_json::{Value, json};

use common::{memory_text, write};
use mcp_sdk::{call, drive, drive_with, ok_text, protocol_error, save};
use netsync::Team;
use servers::BlackHole;
use syncrun::files_at;

fn list(arguments: Value) -> Value {
    call("memory_list", arguments)
}

#[test]
fn memory_list_leaves_out_a_symlink_to_outside_and_lists_the_rest() {
    let team = Team::new();
    write(
        &team.me.join(".qwen/team-memory/project/note-1.md"),
        &memory_text("Note 1", "A note", "project", "Noted.\n"),
    );
    std::os::unix::fs::symlink(
        "/etc/passwd",
        team.me.join(".qwen/team-memory/project/passwd.md"),
    )
    .unwrap();
    let out = drive(&team.sb, &team.me, json!([list(json!({"scope": "team"}))]));
    let text = ok_text(&out["steps"][0]);
    assert!(text.contains("team:project/note-1.md"), "{text}");
    assert!(!text.contains("passwd"), "{text}");
    assert!(!text.contains("root:"), "{text}");
}

#[test]
fn memory_list_pages_through_every_memory_once_in_a_stable_order() {
    let team = Team::new();
    for n in 1..=5 {
        write(
            &team
                .me
                .join(format!(".qwen/team-memory/project/note-{n}.md")),
            &memory_text(&format!("Note {n}"), "A note", "project", "Noted.\n"),
        );
    }
    let out = drive(
        &team.sb,
        &team.me,
        json!([
            list(json!({"scope": "team", "limit": 3})),
            list(json!({"scope": "team", "limit": 3, "cursor": "team:project/note-2.md"})),
            list(json!({"scope": "team", "limit": 3, "cursor": "team:project/note-5.md"})),
            // A cursor whose memory is gone still starts just after its place.
            list(json!({"scope": "team", "limit": 2, "cursor": "team:project/note-25.md"})),
            list(json!({"scope": "team"})),
            list(json!({"scope": "team", "limit": 201})),
            list(json!({"scope": "team", "limit": 0})),
            list(json!({"scope": "team", "cursor": "project/note-2.md"})),
            list(json!({"scope": "team", "cursor": "private:project/note-2.md"})),
            list(json!({"scope": "team", "cursor": 7})),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let ids = |step: &Value| -> Vec<String> {
        ok_text(step)
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect()
    };
    let first = ok_text(&steps[0]);
    assert!(first.starts_with("Memories 1–3 of 7."), "{first}");
    assert!(
        first.ends_with(
            "4 more: call memory_list again with \"cursor\": \"team:project/note-2.md\" (and \
             the same scope) for the next page, or use memory_search."
        ),
        "{first}"
    );
    let second = ok_text(&steps[1]);
    assert!(second.starts_with("Memories 4–6 of 7."), "{second}");
    assert!(
        second.contains("\"cursor\": \"team:project/note-5.md\""),
        "{second}"
    );
    let third = ok_text(&steps[2]);
    assert!(third.starts_with("Memories 7–7 of 7."), "{third}");
    assert!(!third.contains("more:"), "{third}");

    let paged: Vec<String> = steps[..3].iter().flat_map(ids).collect();
    let whole = ids(&steps[4]);
    assert_eq!(paged, whole, "pages and the whole list disagree");
    let mut sorted = whole.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(whole, sorted, "not in a stable order, or listed twice");
    assert_eq!(
        whole,
        [
            "team:feedback/use-postgres.md",
            "team:project/note-1.md",
            "team:project/note-2.md",
            "team:project/note-3.md",
            "team:project/note-4.md",
            "team:project/note-5.md",
            "team:project/release-train.md",
        ]
    );
    assert_eq!(
        ids(&steps[3]),
        ["team:project/note-3.md", "team:project/note-4.md"]
    );
    assert!(protocol_error(&steps[5]).contains("from 1 to 200"));
    assert!(protocol_error(&steps[6]).contains("from 1 to 200"));
    assert!(protocol_error(&steps[7]).contains("`cursor` is not one memory_list gave"));
    assert!(protocol_error(&steps[8]).contains("the private scope, which this list does not show"));
    assert!(protocol_error(&steps[9]).contains("`cursor` must be a string"));
}

#[test]
fn freshness_follows_head_and_the_work_tree_on_a_long_lived_server() {
    let team = Team::new();
    // The user let agents write team memory directly (not pending for a person).
    team.sb.allow_agent_team_saves("commit");
    // Written by hand, not committed: its age is its file time until a commit holds it.
    write(
        &team.me.join(".qwen/team-memory/project/staging-host.md"),
        &memory_text(
            "Staging host",
            "Where staging runs",
            "project",
            "Staging runs on db-staging port 5433.\n",
        ),
    );
    // Committed, then edited in the work tree: git no longer knows this version.
    let train = team.me.join(".qwen/team-memory/project/release-train.md");
    write(
        &train,
        &memory_text(
            "Release train",
            "Releases leave every Tuesday",
            "project",
            "Tuesday, 10:00.\n",
        ),
    );
    let read = |id: &str| call("memory_read", json!({ "id": id }));
    let out = drive(
        &team.sb,
        &team.me,
        json!([
            read("team:project/staging-host.md"),
            read("team:feedback/use-postgres.md"),
            read("team:project/release-train.md"),
            call("memory_search", json!({"query": "staging port"})),
            // This save's sync commit holds the hand-written memory too: HEAD moves.
            save(
                "team",
                "project",
                "Deploy window",
                "Deploys go out at 10:00 UTC."
            ),
            read("team:project/staging-host.md"),
            call("memory_search", json!({"query": "staging port"})),
            read("team:feedback/use-postgres.md"),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let tag = |step: &Value| -> String {
        let text = ok_text(step);
        let at = text.find("<memory id=").unwrap_or_else(|| panic!("{text}"));
        text[at..].lines().next().unwrap().to_string()
    };
    let before = tag(&steps[0]);
    assert!(before.contains("from=\"file-time\""), "{before}");
    assert!(!before.contains("changed_by"), "{before}");
    let committed = tag(&steps[1]);
    assert!(
        committed.contains("from=\"commit\" changed_by=\"Test User\""),
        "{committed}"
    );
    let edited = tag(&steps[2]);
    assert!(edited.contains("from=\"file-time\""), "{edited}");
    assert!(tag(&steps[3]).contains("from=\"file-time\""));
    assert!(ok_text(&steps[4]).contains("Saved team:project/deploy-window.md."));
    for after in [&steps[5], &steps[6]] {
        let after = tag(after);
        assert!(
            after.contains("id=\"team:project/staging-host.md\"")
                && after.contains("from=\"commit\" changed_by=\"Test User\""),
            "the server kept the age it found before HEAD moved: {after}"
        );
    }
    assert_eq!(tag(&steps[7]), committed);
    let head = team
        .sb
        .git(&team.me, ["log", "-1", "--name-only", "--format=%s"]);
    assert!(
        head.contains(".qwen/team-memory/project/staging-host.md"),
        "{head}"
    );
}

#[test]
fn arguments_out_of_shape_are_mcp_errors_that_name_the_argument() {
    let team = Team::new();
    let good = json!({"scope": "team", "type": "project", "name": "n",
                      "description": "d", "body": "b"});
    let with = |key: &str, value: Value| {
        let mut args = good.clone();
        args[key] = value;
        call("memory_save", args)
    };
    let out = drive(
        &team.sb,
        &team.me,
        json!([
            with("type", json!("opinion")),
            with("name", json!("two\nlines")),
            with("name", json!("x".repeat(201))),
            with("description", json!("x".repeat(501))),
            with("keywords", json!(vec!["k"; 21])),
            with("keywords", json!(["fine", ""])),
            with("redact", json!("yes")),
            with("scope", json!(3)),
            call("memory_search", json!({"query": "   "})),
            call("memory_search", json!({"query": "x", "scope": "everyone"})),
            call("memory_search", json!({"query": "x", "limit": "5"})),
            call("memory_read", json!({"id": "team:feedback/a\u{7}.md"})),
            call("memory_read", json!({})),
            call("memory_forget", json!({"id": "team:../../etc/passwd.md"})),
            list(json!({"scope": "team", "page": 2})),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let expected = [
        "unknown type `opinion`",
        "`name`",
        "`name`",
        "`description`",
        "21 keywords; the limit is 20",
        "each keyword must be a non-empty one-line string",
        "`redact` must be true or false",
        "`scope`",
        "`query`",
        "unknown scope `everyone`",
        "`limit` must be a number",
        "`id` holds control characters",
        "`id` is required",
        "not a memory id",
        "unknown argument `page`",
    ];
    assert_eq!(steps.len(), expected.len());
    for (step, want) in steps.iter().zip(expected) {
        let message = protocol_error(step);
        assert!(message.contains(want), "{want:?} not in {message:?}");
    }
    // Nothing was written.
    assert_eq!(team.sb.git(&team.me, ["status", "--porcelain"]), "");
}

#[test]
fn a_team_save_stays_local_until_the_next_sync_publishes_it() {
    let team = Team::new();
    // The user let agents write team memory directly (not pending for a person).
    team.sb.allow_agent_team_saves("commit");
    let out = drive(
        &team.sb,
        &team.me,
        json!([save(
            "team",
            "project",
            "Deploy window",
            "Deploys go out at 10:00 UTC."
        )]),
    );
    let saved = ok_text(&out["steps"][0]);
    assert!(saved.contains("the next sync"), "{saved}");
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(
        !remote.contains("deploy-window.md"),
        "pushed mid-call: {remote}"
    );
    team.sb.teammem(&team.me, ["sync"]).expect_code(0);
    let remote = files_at(&team.sb, &team.bare, "main");
    assert!(
        remote.contains(".qwen/team-memory/project/deploy-window.md"),
        "{remote}"
    );
}

#[test]
fn a_publishing_save_to_a_silent_remote_answers_within_its_budget() {
    let team = Team::new();
    // The user let agents write team memory directly (not pending for a person).
    team.sb.allow_agent_team_saves("commit");
    let hole = BlackHole::start();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", hole.port()),
    );
    let out = drive_with(
        &team.sb,
        &team.me,
        &["mcp", "--publish", "--timeout", "2"],
        json!([save(
            "team",
            "project",
            "Deploy window",
            "Deploys go out at 10:00 UTC."
        )]),
    );
    let saved = ok_text(&out["steps"][0]);
    assert!(
        saved.starts_with("Saved team:project/deploy-window.md."),
        "{saved}"
    );
    assert!(
        saved.contains("skipped (timeout)") && saved.contains("the time budget ran out"),
        "{saved}"
    );
    // The budget is 2 s, network included; the rest is the commit and index work of a save
    // on a loaded machine.
    let took = Duration::from_secs_f64(out["steps"][0]["ms"].as_f64().unwrap() / 1000.0);
    assert!(
        took < Duration::from_secs(2) + Duration::from_secs(4),
        "the call outran its budget: {took:?}"
    );
    // The save is committed locally whatever the network did.
    let log = team
        .sb
        .git(&team.me, ["log", "-1", "--name-only", "--format=%s"]);
    assert!(log.contains("project/deploy-window.md"), "{log}");
}

#[test]
fn a_policy_file_changed_while_the_server_runs_decides_the_next_call() {
    let team = Team::new();
    let secret = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    let memory = team.me.join(".qwen/team-memory/reference/ci-token.md");
    write(
        &memory,
        &memory_text(
            "CI token",
            "The token the CI smoke job uses",
            "reference",
            &format!("The smoke job's token is {secret}, scoped to a sandbox org.\n"),
        ),
    );
    let scan = team.sb.teammem(
        &team.me,
        ["scan", memory.to_str().unwrap(), "--format", "json"],
    );
    let findings: Value = serde_json::from_str(&scan.stdout).unwrap();
    let fingerprint = findings["findings"][0]["fingerprint"].as_str().unwrap();
    let ignore = team.me.join(".qwen/team-memory/.secretsignore");
    let search = || call("memory_search", json!({"query": "smoke job token"}));
    let out = drive(
        &team.sb,
        &team.me,
        json!([
            search(),
            {"write": {"path": ignore, "text": format!("{fingerprint}\n")}},
            search(),
            // Old enough that the server trusts the file's stamp and keeps the policy.
            {"sleep": 2.5},
            search(),
            {"write": {"path": ignore, "text": "# accepted fingerprints: none any more\n"}},
            search(),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let withheld = "withheld team:reference/ci-token.md: secret (GitHub personal access token)";
    assert!(ok_text(&steps[0]).contains(withheld), "{}", steps[0]);
    for accepted in [&steps[2], &steps[4]] {
        let text = ok_text(accepted);
        assert!(
            text.contains("<memory id=\"team:reference/ci-token.md\""),
            "the team's accepted fingerprint was not honoured: {text}"
        );
    }
    assert!(ok_text(&steps[6]).contains(withheld), "{}", steps[6]);
}

#[test]
fn mcp_results_make_links_inert_under_the_projects_own_allow_list() {
    let team = Team::new();
    // The user's own file allows the team wiki; the repository's shortens the list to it, so
    // github.com is no longer allowed in this project.
    write(
        &team.sb.base().join("teammem-check.json"),
        r#"{"allowed_hosts": ["github.com", "wiki.corp.example"]}"#,
    );
    write(
        &team.me.join(".qwen/team-memory/.teammem-check.json"),
        r#"{"allowed_hosts": ["wiki.corp.example"]}"#,
    );
    write(
        &team.me.join(".qwen/team-memory/project/tracker.md"),
        &memory_text(
            "Tracker",
            "Where the tracker and the wiki live",
            "project",
            "Tracker: https://github.com/o/r/issues?auth=qq7 and wiki: \
             https://wiki.corp.example/runbook?page=2\n",
        ),
    );
    let out = drive(
        &team.sb,
        &team.me,
        json!([
            call("memory_read", json!({"id": "team:project/tracker.md"})),
            call("memory_search", json!({"query": "tracker wiki"})),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    for step in &steps[..2] {
        let text = ok_text(step);
        assert!(
            text.contains("<memory id=\"team:project/tracker.md\""),
            "{text}"
        );
        assert!(
            !text.contains("auth=qq7"),
            "a link off the project's list stayed live: {text}"
        );
        assert!(
            text.contains("https://wiki.corp.example/runbook?page=2"),
            "a link on the project's list was made inert: {text}"
        );
    }
}
