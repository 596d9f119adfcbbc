//! Claude Code in headless sessions (`claude -p`, then `--continue`, then `/compact`), wired
//! by `teammem install-agent --client claude`, against the recording mock Messages API on
//! 127.0.0.1 (tests/mock_anthropic.py): each team memory reaches the model once per context —
//! after startup, after resume and after compaction — per-prompt recall brings the relevant
//! memory once and never again in that session, and the memory holding a token never reaches
//! it. Run on the oldest and the newest Claude Code that `.ci/clients` pins.

use serde_json::{Value, json};

use crate::common;
use crate::common::agents::{
    DEPLOY_BODY_MARKER, DEPLOY_DESCRIPTION, DEPLOY_INDEX_LINE, DEPLOY_PROMPT, MockServer,
    ONCALL_DESCRIPTION, UNRELATED_PROMPT, WITHHELD_DESCRIPTION, agent_team, bounded, count,
    install_agent, places, withheld_token,
};
use crate::common::clients::{self, PinnedClient};
use crate::common::netsync::Team;

/// One `claude -p ARGS` in my clone against the mock; asserts it succeeded. Telemetry, error
/// reporting, updates and other non-essential traffic are off by Claude Code's documented
/// variables, and HTTP(S)_PROXY point at the mock, which refuses and logs anything proxied.
fn claude(team: &Team, claude: &PinnedClient, mock: &MockServer, args: &[&str]) {
    let url = format!("http://127.0.0.1:{}", mock.port);
    let mut cmd = bounded(240, &claude.bin());
    team.sb
        .isolate(&mut cmd)
        .current_dir(&team.me)
        .args(["-p", "--output-format", "json"])
        .args(args)
        .env("ANTHROPIC_BASE_URL", &url)
        .env("HTTPS_PROXY", &url)
        .env("HTTP_PROXY", &url)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("ANTHROPIC_API_KEY", "sk-ant-mock-key-for-tests")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_BUG_COMMAND", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let run = common::Run::from(cmd.output().expect("run claude"));
    assert_eq!(
        run.code, 0,
        "claude {} {args:?} failed:\n{}\n{}",
        claude.version, run.stdout, run.stderr
    );
}

/// The body of the last main-loop request (the one that offers tools) among `requests`, as
/// text; side requests (titles, summaries) carry no tools.
fn last_turn(requests: &[Value]) -> String {
    for request in requests {
        assert_eq!(
            request["refused"],
            Value::Null,
            "a request left for elsewhere: {request}"
        );
    }
    let last = requests
        .iter()
        .rev()
        .find(|r| r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("Claude Code sent the model no turn: {requests:?}"));
    last["body"].to_string()
}

fn each_memory_once_per_context(version: PinnedClient) {
    let team = agent_team();
    let sb = &team.sb;
    let out = install_agent(&team, "claude", &[], &[]);
    assert!(
        out.contains(
            ".claude/settings.json: created with the SessionStart hook, the UserPromptSubmit hook."
        ),
        "{out}"
    );
    let turns = sb.path().join("model-turns.json");
    common::write(&turns, &json!({"turns": [{"text": "OK."}]}).to_string());
    let mut mock = MockServer::start_with("mock_anthropic.py", &[&turns], sb.path());
    let mut everything = String::new();

    // A new session: the index of the team memory, each line once; the withheld one never.
    claude(&team, &version, &mock, &[UNRELATED_PROMPT]);
    let requests = mock.take();
    everything.push_str(&serde_json::to_string(&requests).unwrap());
    let turn = last_turn(&requests);
    assert_eq!(count(&turn, DEPLOY_INDEX_LINE), 1, "startup: {turn}");
    assert_eq!(count(&turn, ONCALL_DESCRIPTION), 1, "startup: {turn}");
    assert_eq!(count(&turn, DEPLOY_BODY_MARKER), 0, "startup: {turn}");

    // Resumed, with a question the deploy memory answers: nothing from session start is
    // repeated, and the deploy memory's body arrives once, through per-prompt recall.
    claude(&team, &version, &mock, &["--continue", DEPLOY_PROMPT]);
    let requests = mock.take();
    everything.push_str(&serde_json::to_string(&requests).unwrap());
    let turn = last_turn(&requests);
    assert_eq!(count(&turn, ONCALL_DESCRIPTION), 1, "resume: {turn}");
    assert_eq!(count(&turn, DEPLOY_BODY_MARKER), 1, "resume: {turn}");

    // The same question again: recall does not repeat what this session already has.
    claude(&team, &version, &mock, &["--continue", DEPLOY_PROMPT]);
    let requests = mock.take();
    everything.push_str(&serde_json::to_string(&requests).unwrap());
    let turn = last_turn(&requests);
    assert_eq!(count(&turn, ONCALL_DESCRIPTION), 1, "repeat: {turn}");
    assert_eq!(count(&turn, DEPLOY_BODY_MARKER), 1, "repeat: {turn}");

    // Compacted: the summary replaces the transcript, session start delivers the index again,
    // once.
    claude(&team, &version, &mock, &["--continue", "/compact"]);
    claude(&team, &version, &mock, &["--continue", UNRELATED_PROMPT]);
    let requests = mock.take();
    everything.push_str(&serde_json::to_string(&requests).unwrap());
    let turn = last_turn(&requests);
    assert_eq!(
        count(&turn, ONCALL_DESCRIPTION),
        1,
        "compact: {:#?}",
        places(&turn, ONCALL_DESCRIPTION)
    );
    assert_eq!(
        count(&turn, DEPLOY_INDEX_LINE),
        1,
        "compact: {:#?}",
        places(&turn, DEPLOY_DESCRIPTION)
    );

    let token = withheld_token();
    assert_eq!(
        count(&everything, WITHHELD_DESCRIPTION),
        0,
        "{:#?}",
        places(&everything, WITHHELD_DESCRIPTION)
    );
    assert_eq!(
        count(&everything, &token[4..]),
        0,
        "{:#?}",
        places(&everything, &token[4..])
    );
}

#[test]
fn claude_code_newest_gets_each_team_memory_once_per_context_and_never_the_withheld_one() {
    each_memory_once_per_context(clients::newest("claude"));
}

#[test]
fn claude_code_oldest_gets_each_team_memory_once_per_context_and_never_the_withheld_one() {
    each_memory_once_per_context(clients::oldest("claude"));
}
