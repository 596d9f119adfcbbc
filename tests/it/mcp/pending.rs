//! An agent's team save waits for a person: through the official MCP SDK, a `memory_save` to
//! team scope is kept on this machine, never committed or pushed, until `teammem share
//! pending:ID`; nothing a repository carries can switch that off.

use crate::common::mcp_sdk::{call, drive, drive_with, ok_text, refused_text, save};
use crate::common::netsync::Team;
use crate::common::syncrun::files_at;

use serde_json::json;

const ID: &str = "pending:project/deploy-window.md";

fn deploy_window() -> serde_json::Value {
    save(
        "team",
        "project",
        "Deploy window",
        "Deploys go out at 10:00 UTC, never on Fridays.",
    )
}

#[test]
fn a_team_save_stays_pending_until_a_person_shares_it() {
    let team = Team::new();
    let (sb, me) = (&team.sb, &team.me);
    let out = drive(sb, me, json!([deploy_window()]));
    let saved = ok_text(&out["steps"][0]);
    assert!(
        saved.starts_with(&format!("Saved {ID} — pending")),
        "{saved}"
    );
    assert!(saved.contains(&format!("`teammem share {ID}`")), "{saved}");

    // Not in the team folder, not committed, not on the remote after a sync.
    assert!(
        !me.join(".qwen/team-memory/project/deploy-window.md")
            .exists()
    );
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
    sb.teammem(me, ["sync"]).expect_code(0);
    assert!(!files_at(sb, &team.bare, "main").contains("deploy-window"));

    // The agent's next context says it is pending; the person's list shows it.
    let context = sb.teammem(me, ["context"]);
    context.expect_code(0);
    assert!(
        context
            .stdout
            .contains("Pending team memory: 1 memory saved by an agent"),
        "{}",
        context.stdout
    );
    assert!(context.stdout.contains(ID), "{}", context.stdout);
    let listed = sb.teammem(me, ["share"]);
    listed.expect_code(0);
    assert!(listed.stdout.contains(ID), "{}", listed.stdout);
    assert!(listed.stdout.contains("Deploy window"), "{}", listed.stdout);

    // A person publishes it: in the team folder, no longer pending, on the remote after sync.
    let shared = sb.teammem(me, ["share", ID, "--format", "json"]);
    shared.expect_code(0);
    let report: serde_json::Value = serde_json::from_str(&shared.stdout).unwrap();
    assert_eq!(report["origin"], json!("pending"));
    assert_eq!(report["id"], json!("project/deploy-window.md"));
    assert!(
        me.join(".qwen/team-memory/project/deploy-window.md")
            .is_file()
    );
    sb.teammem(me, ["sync"]).expect_code(0);
    assert!(
        files_at(sb, &team.bare, "main").contains(".qwen/team-memory/project/deploy-window.md")
    );
    let after = sb.teammem(me, ["share", "--json"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&after.stdout).unwrap(),
        json!({"pending": []})
    );
    let context = sb.teammem(me, ["context"]);
    assert!(
        !context.stdout.contains("Pending team memory"),
        "{}",
        context.stdout
    );
}

#[test]
fn a_pending_save_is_gated_and_an_agent_cannot_remove_team_memory_alone() {
    let team = Team::new();
    let (sb, me) = (&team.sb, &team.me);
    let token = format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5");
    let out = drive(
        sb,
        me,
        json!([
            save(
                "team",
                "reference",
                "Deploy token",
                &format!("The deploy token is {token}.")
            ),
            deploy_window(),
            deploy_window(),
            call(
                "memory_forget",
                json!({"id": "team:project/release-train.md"})
            ),
            call("memory_forget", json!({"id": ID})),
        ]),
    );
    let steps = &out["steps"];
    let secret = refused_text(&steps[0]);
    assert!(!secret.contains(&token), "{secret}");
    assert!(ok_text(&steps[1]).contains("pending"));
    let twice = refused_text(&steps[2]);
    assert!(twice.contains("already pending as"), "{twice}");
    let forget = refused_text(&steps[3]);
    assert!(forget.contains("needs a person"), "{forget}");
    assert!(
        forget.contains("teammem forget team:project/release-train.md"),
        "{forget}"
    );
    assert!(
        ok_text(&steps[4]).starts_with(&format!("Dropped {ID}")),
        "{}",
        steps[4]
    );
    // The team memory is still there, and nothing is pending.
    assert!(
        me.join(".qwen/team-memory/project/release-train.md")
            .is_file()
    );
    let listed = sb.teammem(me, ["share"]);
    assert!(
        listed.stdout.contains("No pending team memory"),
        "{}",
        listed.stdout
    );
    assert_eq!(sb.git(me, ["status", "--porcelain"]), "");
}

#[test]
fn nothing_in_the_repository_lets_an_agent_publish_without_a_person() {
    let team = Team::new();
    let (sb, me) = (&team.sb, &team.me);
    // The repository's own config and the server's arguments (a committed `.mcp.json` can set
    // both) ask for direct publishing; only the user's own config may grant it.
    sb.git(me, ["config", "teammem.agentTeamSaves", "publish"]);
    let out = drive_with(
        sb,
        me,
        &["mcp", "--publish", "--timeout", "5"],
        json!([deploy_window()]),
    );
    assert!(ok_text(&out["steps"][0]).contains("pending"));
    assert!(!files_at(sb, &team.bare, "main").contains("deploy-window"));

    // The user's own config does: the save is pushed at once.
    sb.allow_agent_team_saves("publish");
    let out = drive(
        sb,
        me,
        json!([save(
            "team",
            "project",
            "Freeze week",
            "No deploys in the week of 2026-12-21."
        )]),
    );
    let saved = ok_text(&out["steps"][0]);
    assert!(saved.contains("pushed"), "{saved}");
    assert!(files_at(sb, &team.bare, "main").contains("project/freeze-week.md"));
    // The one saved while pending is still waiting for a person, never published by sync.
    assert!(!files_at(sb, &team.bare, "main").contains("deploy-window"));
}

#[test]
fn a_person_drops_a_pending_memory_from_the_command_line() {
    let team = Team::new();
    let (sb, me) = (&team.sb, &team.me);
    drive(sb, me, json!([deploy_window()]));
    let dropped = sb.teammem(me, ["forget", ID]);
    dropped.expect_code(0);
    assert!(
        dropped.stdout.contains(&format!("Dropped {ID}")),
        "{}",
        dropped.stdout
    );
    let again = sb.teammem(me, ["share", ID]);
    again.expect_code(2);
    assert!(
        again.stderr.contains("no pending memory"),
        "{}",
        again.stderr
    );
}
