//! `teammem context`

use clap::Args;

use crate::ops::context;
use crate::ops::delivery::HookFormat;
use crate::ops::{EXIT_OK, OpError, Project};

/// Print the memory context an agent injects at session start.
///
/// The user, private and team indexes (within MEMORY.md's limits), a line reminding the agent
/// that memories are point-in-time observations to verify, and, with --query, the most relevant
/// memories. Each index is rendered from the memories that pass the memory gate, never read
/// from a MEMORY.md as it is; what fails (a secret, a trust error, an unreadable file) is
/// counted in one line. Hidden characters are removed, markup is escaped and bodies are
/// wrapped as data. Each run counts as one session for `teammem dream`'s gate.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Also include the memories most relevant to this query.
    #[arg(long)]
    query: Option<String>,
    /// Output shape: qwen, claude and codex print SessionStart hook JSON
    /// ({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}),
    /// plain prints the text.
    #[arg(long, value_enum, default_value = "plain")]
    hook: HookFormat,
    /// Print JSON: {context, scopes, recalled, warnings} (instead of a hook's shape).
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem context`; returns its exit status.
pub fn run(project: &Project, args: ContextArgs) -> Result<u8, OpError> {
    let built = context::build(project, args.query.as_deref())?;
    if super::json_wanted(args.json, args.format) {
        super::print_json(&serde_json::json!({
            "context": built.text,
            "scopes": built.scopes,
            "recalled": built.recalled,
            "warnings": built.warnings,
        }))?;
        return Ok(EXIT_OK);
    }
    for warning in &built.warnings {
        warning!("{}", super::shown(warning));
    }
    out!("{}", context::render(&built, args.hook));
    Ok(EXIT_OK)
}
