//! Real coding-agent clients in headless sessions, wired by `teammem install-agent`, against
//! mock model servers on 127.0.0.1 that record every request: the project they work in, the
//! memories in it and how often each reaches the model.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::mcp_sdk::{python, script};
use crate::common::netsync::Team;
use crate::common::{memory_text, syncrun, write};

/// What the index line of the deploy memory says (session start delivers it).
pub const DEPLOY_DESCRIPTION: &str = "Deploys happen on Thursday afternoons";
/// The deploy memory's line in the team index session start delivers (recall's block also
/// names the description, so the index is counted by its line).
pub const DEPLOY_INDEX_LINE: &str =
    "(project/deploy-window.md) — Deploys happen on Thursday afternoons";
/// A word only the deploy memory's body holds (per-prompt recall delivers it).
pub const DEPLOY_BODY_MARKER: &str = "freeze-window-7731";
/// What the index line of the on-call memory says.
pub const ONCALL_DESCRIPTION: &str = "Pager rotation changes every Monday";
/// What the withheld memory's index line would say, were it ever delivered.
pub const WITHHELD_DESCRIPTION: &str = "Deploy bot credentials for the staging cluster";

/// A prompt about nothing in the team memory.
pub const UNRELATED_PROMPT: &str = "Say OK.";
/// A prompt the deploy memory answers.
pub const DEPLOY_PROMPT: &str = "When is the deploy window? Is Thursday a deploy freeze?";

/// A GitHub token (`ghp_` and 36 characters) made at run time, so no token sits in this file.
pub fn withheld_token() -> String {
    format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5")
}

/// A team (bare remote, my clone with upstream set) whose team memory holds a deploy memory,
/// an on-call memory and — committed by a teammate with the git CLI, past every check — a
/// memory holding a GitHub token, which the gate must withhold at every door.
pub fn agent_team() -> Team {
    let team = Team::new();
    let sb = &team.sb;
    let mate = &team.mate;
    sb.git(mate, ["pull", "-q"]);
    let dir = mate.join(".qwen/team-memory");
    write(
        &dir.join("project/deploy-window.md"),
        &memory_text(
            "Deploy window",
            DEPLOY_DESCRIPTION,
            "project",
            &format!(
                "Deploys to production run on Thursday from 14:00 UTC; the deploy window \
                 closes at 17:00 ({DEPLOY_BODY_MARKER}).\n\nWhy: the support desk is staffed \
                 then.\n"
            ),
        ),
    );
    write(
        &dir.join("project/on-call.md"),
        &memory_text(
            "On-call rotation",
            ONCALL_DESCRIPTION,
            "project",
            "The pager passes to the next person every Monday at 09:00.\n",
        ),
    );
    write(
        &dir.join("reference/deploy-bot.md"),
        &memory_text(
            "Deploy bot token",
            WITHHELD_DESCRIPTION,
            "reference",
            &format!(
                "The deploy window bot uses {} on Thursday.\n",
                withheld_token()
            ),
        ),
    );
    sb.git(mate, ["add", "-A"]);
    sb.git(
        mate,
        ["commit", "-q", "-m", "team memory: deploys, on-call, bot"],
    );
    sb.git(mate, ["push", "-q"]);
    team
}

/// `teammem install-agent --client CLIENT ARGS --command <the binary under test>` in `dir`,
/// with `env`; asserts it succeeded and returns its output.
pub fn install_agent(team: &Team, client: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut all = vec![
        "install-agent",
        "--client",
        client,
        "--command",
        env!("CARGO_BIN_EXE_teammem"),
    ];
    all.extend_from_slice(args);
    let run = syncrun::teammem_env(&team.sb, &team.me, &all, env);
    run.expect_code(0);
    run.stdout
}

/// How often `needle` occurs in `haystack`.
pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// A recording mock model server (one of `tests/mock_*.py`), stopped when dropped.
pub struct MockServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    log: PathBuf,
    seen: usize,
}

impl MockServer {
    /// Starts `tests/SCRIPT LOG PORT_FILE` in `dir` and waits (bounded) for its port.
    pub fn start(script_name: &str, dir: &Path) -> MockServer {
        MockServer::start_with(script_name, &[], dir)
    }

    /// Starts `tests/SCRIPT LEADING… LOG PORT_FILE` in `dir` and waits (bounded) for its port.
    pub fn start_with(script_name: &str, leading: &[&Path], dir: &Path) -> MockServer {
        let log = dir.join(format!("{script_name}.requests.jsonl"));
        let port_file = dir.join(format!("{script_name}.port"));
        let child = Command::new(python())
            .arg(script(script_name))
            .args(leading)
            .arg(&log)
            .arg(&port_file)
            .stdin(Stdio::null())
            .spawn()
            .expect("start the mock model server");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            if let Ok(text) = fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                break port;
            }
            assert!(
                Instant::now() < deadline,
                "{script_name} wrote no port within 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        MockServer {
            child,
            port,
            log,
            seen: 0,
        }
    }

    /// The requests received since the last call, in order.
    pub fn take(&mut self) -> Vec<Value> {
        let all: Vec<Value> = fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let new = all[self.seen.min(all.len())..].to_vec();
        self.seen = all.len();
        new
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command running `program` under coreutils `timeout`: it and everything it started are
/// killed after `secs`, so a client that hangs fails the test instead of stalling it.
pub fn bounded(secs: u64, program: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", &secs.to_string()]).arg(program);
    cmd.stdin(Stdio::null());
    cmd
}

/// Each place `needle` occurs in `haystack`, with 300 characters either side, for a failure
/// message.
pub fn places(haystack: &str, needle: &str) -> Vec<String> {
    haystack
        .match_indices(needle)
        .map(|(at, _)| {
            let mut start = at.saturating_sub(300);
            while !haystack.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (at + needle.len() + 300).min(haystack.len());
            while !haystack.is_char_boundary(end) {
                end += 1;
            }
            haystack[start..end].to_string()
        })
        .collect()
}
