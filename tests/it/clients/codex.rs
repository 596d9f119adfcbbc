//! Codex in headless sessions (`codex exec`, then `codex exec resume --last`), wired by
//! `teammem install-agent --client codex`, against a mock Responses API on 127.0.0.1
//! (tests/mock_openai_responses.py) that records every request: each team memory reaches the
//! model once per context (after startup, after a resume and after an automatic compaction),
//! per-prompt recall brings the relevant one once and never again in that session, and the
//! memory holding a token never reaches it. Run on the oldest and the newest Codex that
//! `.ci/clients` pins; `codex exec fork` (a new session with its parent's history) on the
//! newest.
//!
//! Codex runs no hook a person has not trusted in `/hooks` (a hash per hook, kept in
//! config.toml); a headless test cannot open `/hooks`, so it passes Codex's own
//! `--dangerously-bypass-hook-trust`, which skips exactly that review and nothing else.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common;
use crate::common::agents::{
    DEPLOY_BODY_MARKER, DEPLOY_INDEX_LINE, DEPLOY_PROMPT, MockServer, ONCALL_DESCRIPTION,
    UNRELATED_PROMPT, WITHHELD_DESCRIPTION, agent_team, bounded, count, install_agent, places,
    withheld_token,
};
use crate::common::clients::{self, PinnedClient};
use crate::common::netsync::Team;

/// The user's own Codex settings before teammem is installed: the mock model provider, no
/// update checks, no analytics. `install-agent` must keep all of it.
const USER_CONFIG: &str = "# my Codex\nmodel = \"mock-model\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n\n[analytics]\nenabled = false\n";

/// One `codex exec ARGS` in my clone against the mock; asserts it succeeded.
fn codex(
    team: &Team,
    codex: &PinnedClient,
    home: &Path,
    mock: &MockServer,
    args: &[&str],
) -> common::Run {
    let mut cmd = bounded(240, &codex.bin());
    team.sb
        .isolate(&mut cmd)
        .current_dir(&team.me)
        .env("CODEX_HOME", home)
        .env("MOCK_API_KEY", "mock-key")
        .args(["exec", "--dangerously-bypass-hook-trust", "-c"])
        .arg(format!(
            "model_providers.mock.base_url=\"http://127.0.0.1:{}/v1\"",
            mock.port
        ))
        .args(args);
    let run = common::Run::from(cmd.output().expect("run codex"));
    assert_eq!(
        run.code, 0,
        "codex {} {args:?} failed:\n{}\n{}",
        codex.version, run.stdout, run.stderr
    );
    run
}

/// The model input of the last Responses request among `requests`, as text.
fn last_input(run: &common::Run, requests: &[Value]) -> String {
    let last = requests
        .iter()
        .rev()
        .find(|r| r["method"] == "POST" && r["path"].as_str().unwrap_or("").ends_with("/responses"))
        .unwrap_or_else(|| panic!("Codex sent the model nothing: {requests:?}\n{run:?}"));
    last["body"]["input"].to_string()
}

fn each_memory_once_per_context(version: PinnedClient) {
    let team = agent_team();
    let sb = &team.sb;
    let home = sb.path().join("codex-home");
    common::write(&home.join("config.toml"), USER_CONFIG);
    let home_str = home.to_str().unwrap();
    let out = install_agent(&team, "codex", &[], &[("CODEX_HOME", home_str)]);
    assert!(
        out.contains("Next: start `codex`, open `/hooks` and trust the two teammem hooks"),
        "{out}"
    );
    let config = fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(config.starts_with(USER_CONFIG), "{config}");
    let mut mock = MockServer::start("mock_openai_responses.py", sb.path());
    let mut everything = String::new();

    // One `codex exec ARGS`: the model input of its last request, and how many requests it
    // made; every request is kept in `everything`.
    let mut turn = |args: &[&str]| -> (String, usize) {
        let run = codex(&team, &version, &home, &mock, args);
        let requests = mock.take();
        everything.push_str(&serde_json::to_string(&requests).unwrap());
        let asked = requests
            .iter()
            .filter(|r| {
                r["method"] == "POST" && r["path"].as_str().unwrap_or("").ends_with("/responses")
            })
            .count();
        (last_input(&run, &requests), asked)
    };

    // A new session: the index of the team memory, each line once; the withheld one never.
    let (input, _) = turn(&[UNRELATED_PROMPT]);
    assert_eq!(count(&input, DEPLOY_INDEX_LINE), 1, "startup: {input}");
    assert_eq!(count(&input, ONCALL_DESCRIPTION), 1, "startup: {input}");
    assert_eq!(count(&input, DEPLOY_BODY_MARKER), 0, "startup: {input}");

    // Resumed, with a question the deploy memory answers: nothing from session start is
    // repeated, and the deploy memory's body arrives once, through per-prompt recall. The
    // same question again: recall does not repeat what this session already has.
    for round in ["resume", "repeat"] {
        let (input, _) = turn(&["resume", "--last", DEPLOY_PROMPT]);
        assert_eq!(count(&input, ONCALL_DESCRIPTION), 1, "{round}: {input}");
        assert_eq!(count(&input, DEPLOY_BODY_MARKER), 1, "{round}: {input}");
    }

    // Codex compacts the conversation when its tokens pass `model_auto_compact_token_limit`
    // (a PreCompact hook, a summary request, then SessionStart with `"source": "compact"`):
    // the summary replaced the history, so the team index comes back, once. A plain resumed
    // turn asks the model once; a compaction asks it for the summary first.
    let (input, asked) = turn(&[
        "-c",
        "model_auto_compact_token_limit=5",
        "resume",
        "--last",
        UNRELATED_PROMPT,
    ]);
    assert!(asked >= 2, "Codex did not compact ({asked} requests)");
    assert_eq!(count(&input, DEPLOY_INDEX_LINE), 1, "compact: {input}");
    assert_eq!(count(&input, ONCALL_DESCRIPTION), 1, "compact: {input}");

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
fn codex_newest_gets_each_team_memory_once_per_context_and_never_the_withheld_one() {
    each_memory_once_per_context(clients::newest("codex"));
}

#[test]
fn codex_oldest_gets_each_team_memory_once_per_context_and_never_the_withheld_one() {
    each_memory_once_per_context(clients::oldest("codex"));
}

/// The id of the one session Codex recorded under `home` (its rollout file's name ends with it).
fn only_session(home: &Path) -> String {
    let mut found = Vec::new();
    let mut todo = vec![home.join("sessions")];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && name.starts_with("rollout-")
                && name.ends_with(".jsonl")
            {
                let stem = name.trim_end_matches(".jsonl");
                found.push(stem[stem.len() - 36..].to_string());
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

#[test]
fn codex_newest_fork_gets_nothing_its_parent_was_given_again() {
    let version = clients::newest("codex");
    let team = agent_team();
    let sb = &team.sb;
    let home = sb.path().join("codex-home");
    common::write(&home.join("config.toml"), USER_CONFIG);
    install_agent(
        &team,
        "codex",
        &[],
        &[("CODEX_HOME", home.to_str().unwrap())],
    );
    let mut mock = MockServer::start("mock_openai_responses.py", sb.path());
    let mut turn = |args: &[&str]| -> String {
        let run = codex(&team, &version, &home, &mock, args);
        last_input(&run, &mock.take())
    };
    turn(&[UNRELATED_PROMPT]);
    let input = turn(&["resume", "--last", DEPLOY_PROMPT]);
    assert_eq!(count(&input, DEPLOY_BODY_MARKER), 1, "parent: {input}");
    let parent = only_session(&home);

    // The fork's model input holds the parent's history: its team index and the deploy body,
    // each once, though the same question is asked again.
    let input = turn(&["fork", &parent, DEPLOY_PROMPT]);
    assert_eq!(
        count(&input, DEPLOY_PROMPT),
        2,
        "the parent's turn is there: {input}"
    );
    assert_eq!(
        count(&input, ONCALL_DESCRIPTION),
        1,
        "fork: {:#?}",
        places(&input, ONCALL_DESCRIPTION)
    );
    assert_eq!(
        count(&input, DEPLOY_BODY_MARKER),
        1,
        "fork: {:#?}",
        places(&input, DEPLOY_BODY_MARKER)
    );
}
