//! `teammem session-start`

use std::path::Path;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::sync::TransportArg;
use crate::ops::EXIT_OK;
use crate::ops::context::{self, HookFormat};
use crate::ops::session_start::{self, SessionStartOptions};

/// Sync the team memory, then print the memory context for the agent (a SessionStart hook).
///
/// Runs `teammem sync` when team memory sync is switched on (memory.enableTeamMemorySync,
/// QWEN_CODE_MEMORY_TEAM_SYNC), then prints what `teammem context` prints — the user, private
/// and team indexes rendered from the memories that pass the memory gate, the point-in-time
/// reminder and the line on what was withheld — plus one line saying what sync did.
///
/// Always exits 0, whatever happened (outside a repository, offline, any error): the line says
/// what went wrong and the session starts anyway.
#[derive(Debug, Args)]
pub struct SessionStartArgs {
    /// Output shape: qwen and claude print SessionStart hook JSON
    /// ({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}),
    /// plain prints the text.
    #[arg(long, value_enum, default_value = "plain")]
    hook: HookArg,
    /// The sync's time budget, network included, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    timeout: u64,
    /// How fetch and push reach the remote (see `teammem sync --help`).
    #[arg(long, value_enum, default_value = "builtin")]
    transport: TransportArg,
    /// Print JSON instead of a hook's shape: {context, sync_line, sync (the `teammem sync
    /// --json` report, or null when sync is switched off; a project that cannot be read gives a
    /// report with skipped_reason error), warnings}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// The hook format as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HookArg {
    /// Qwen Code hook JSON.
    Qwen,
    /// Claude Code hook JSON.
    Claude,
    /// Plain text.
    Plain,
}

/// Runs session start in `cwd`; the exit status is always 0.
pub fn run(cwd: &Path, args: SessionStartArgs) -> u8 {
    let options = SessionStartOptions {
        timeout: Duration::from_secs(args.timeout),
        transport: args.transport.into(),
        qwen_hook: matches!(args.hook, HookArg::Qwen),
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
    let format = match args.hook {
        HookArg::Qwen => HookFormat::Qwen,
        HookArg::Claude => HookFormat::Claude,
        HookArg::Plain => HookFormat::Plain,
    };
    out!("{}", context::render(&started.context, format));
    EXIT_OK
}
