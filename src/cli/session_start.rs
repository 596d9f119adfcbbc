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
    };
    let started = session_start::session_start(cwd, &options);
    for warning in &started.warnings {
        eprintln!("teammem: warning: {}", super::shown(warning));
    }
    let format = match args.hook {
        HookArg::Qwen => HookFormat::Qwen,
        HookArg::Claude => HookFormat::Claude,
        HookArg::Plain => HookFormat::Plain,
    };
    print!("{}", context::render(&started.context, format));
    EXIT_OK
}
