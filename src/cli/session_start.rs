//! `teammem session-start`

use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::hook;
use super::sync::TransportArg;
use crate::ops::EXIT_OK;
use crate::ops::context;
use crate::ops::delivery::HookFormat;
use crate::ops::session_start::{self, SessionStartOptions};

/// How long session start waits for the hook's JSON on stdin (clients write it at once).
const INPUT_WAIT: Duration = Duration::from_millis(500);

/// Sync the team memory, then print the memory context for the agent (a SessionStart hook).
///
/// Runs `teammem sync` when team memory sync is switched on (memory.enableTeamMemorySync,
/// QWEN_CODE_MEMORY_TEAM_SYNC), then prints what `teammem context` prints — the user, private
/// and team indexes rendered from the memories that pass the memory gate, the point-in-time
/// reminder and the line on what was withheld — plus one line saying what sync did.
///
/// Reads the hook's JSON on stdin (Claude Code, Codex and Qwen Code send `session_id` and
/// `source`): a new, cleared or compacted context gets the whole context; a resumed one gets
/// nothing already in its transcript — at most one line naming the memories added, changed or
/// removed since — and a forked one (a copy of its parent's transcript) nothing its transcript
/// holds. Without input (a terminal, nothing, not JSON) it prints the whole context. What each
/// session was given is kept on this machine for 7 days.
///
/// Always exits 0, whatever happened (outside a repository, offline, any error): the line says
/// what went wrong and the session starts anyway.
#[derive(Debug, Args)]
pub struct SessionStartArgs {
    /// Output shape: qwen, claude and codex print SessionStart hook JSON
    /// ({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}),
    /// plain prints the text. With qwen the private and user indexes are left out (Qwen Code
    /// shows them itself), and the team index too when Qwen Code's team memory is on.
    #[arg(long, value_enum, default_value = "plain")]
    hook: HookFormat,
    /// The sync's time budget, network included, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    timeout: u64,
    /// How fetch and push reach the remote (see `teammem sync --help`).
    #[arg(long, value_enum, default_value = "builtin")]
    transport: TransportArg,
    /// Print JSON instead of a hook's shape: {context, sync_line, sync (the `teammem sync
    /// --json` report, or null when sync is switched off; a project that cannot be read gives a
    /// report with skipped_reason error), warnings, delivery (full, changes or nothing)}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs session start in `cwd`; the exit status is always 0.
pub fn run(cwd: &Path, args: SessionStartArgs) -> u8 {
    let options = SessionStartOptions {
        timeout: Duration::from_secs(args.timeout),
        transport: args.transport.into(),
        qwen_hook: matches!(args.hook, HookFormat::Qwen),
        input: hook::read_input(INPUT_WAIT),
    };
    let progress = super::ui::progress("Syncing team memory");
    let started = session_start::session_start(cwd, &options);
    drop(progress);
    if super::json_wanted(args.json, args.format) {
        let report = serde_json::json!({
            "context": started.context.text,
            "sync_line": started.sync_line,
            "sync": started.outcome,
            "warnings": started.warnings,
            "delivery": started.delivery,
        });
        // Session start never fails: a report that cannot be written is said on stderr.
        if let Err(err) = super::print_json(&report) {
            warning!("{err}");
        }
        return EXIT_OK;
    }
    for warning in &started.warnings {
        warning!("{}", super::shown(warning));
    }
    out!("{}", context::render(&started.context, args.hook));
    EXIT_OK
}
