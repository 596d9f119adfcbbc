//! `teammem install-agent`

use clap::{Args, ValueEnum};

use super::ui;
use crate::ops::install_agent::{self, AgentScope};
use crate::ops::install_mcp::{Client, ConfigChange, Places, ServerCommand};
use crate::ops::{EXIT_OK, OpError, Project};

/// Wire a coding agent to teammem: session hooks and the MCP server, in the client's own files.
///
/// Writes the SessionStart hook (`teammem session-start --hook CLIENT`: the team memory at
/// the start of every context), the UserPromptSubmit hook (`teammem prompt-context --hook
/// CLIENT`: the few memories relevant to each prompt) and the MCP server (`teammem mcp`).
///
/// Claude Code: .mcp.json and .claude/settings.json in the project (--user: ~/.claude.json
/// and ~/.claude/settings.json). Qwen Code: .qwen/settings.json in the project (--user:
/// ~/.qwen/settings.json). Codex: $CODEX_HOME/config.toml and $CODEX_HOME/hooks.json
/// (default ~/.codex; --project: .codex/ in the project).
///
/// Other settings, comments and layout stay as they are; a teammem hook already there is
/// corrected, never added twice, and a second run changes nothing. A file that cannot be
/// parsed is left untouched, with an error. Prints what the client still asks of a person
/// (Codex: trust the hooks in /hooks; Qwen Code: `qwen mcp approve teammem`).
#[derive(Debug, Args)]
pub struct InstallAgentArgs {
    /// The client to wire.
    #[arg(long, value_enum)]
    client: AgentArg,
    /// Write the user's own files (every project).
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// Write the project's files, to commit for the team (the default for Claude Code and
    /// Qwen Code; Codex reads them only in a project it trusts).
    #[arg(long)]
    project: bool,
    /// Show what would change (each file and a diff) without writing anything.
    #[arg(long)]
    dry_run: bool,
    /// The program the client runs (default: `teammem`, found on PATH; give a full path when
    /// it is not on the client's PATH).
    #[arg(long, value_name = "PROGRAM", default_value = "teammem")]
    command: String,
}

/// A client as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AgentArg {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// Qwen Code.
    Qwen,
}

impl From<AgentArg> for Client {
    fn from(arg: AgentArg) -> Self {
        match arg {
            AgentArg::Claude => Client::Claude,
            AgentArg::Codex => Client::Codex,
            AgentArg::Qwen => Client::Qwen,
        }
    }
}

/// Runs `teammem install-agent`; returns its exit status.
pub fn run(project: &Project, args: InstallAgentArgs) -> Result<u8, OpError> {
    let client: Client = args.client.into();
    let scope = if args.user {
        AgentScope::User
    } else if args.project {
        AgentScope::Project
    } else {
        AgentScope::default_for(client)
    };
    let root = match scope {
        AgentScope::Project => project.git_root()?.to_path_buf(),
        // The user's files need no repository.
        AgentScope::User => project
            .repo
            .as_ref()
            .map(|r| r.workdir.clone())
            .unwrap_or_else(|| project.cwd.clone()),
    };
    let command = ServerCommand {
        program: args.command,
        extra: Vec::new(),
    };
    let plan = install_agent::plan(&Places::from_env(root), client, scope, &command)?;
    if !args.dry_run {
        install_agent::apply(&plan)?;
    }
    for file in &plan.files {
        let path = file.path.display();
        let sets = file.sets.join(", ");
        let verb = match (args.dry_run, &file.change) {
            (_, ConfigChange::Unchanged) => {
                ui::status(format_args!("{path}: already has {sets}, nothing to do."));
                continue;
            }
            (true, ConfigChange::Created) => "would create",
            (true, ConfigChange::Updated) => "would update",
            (false, ConfigChange::Created) => "created",
            (false, ConfigChange::Updated) => "updated",
        };
        ui::status(format_args!("{path}: {verb} with {sets}."));
        if args.dry_run {
            let diff = similar::TextDiff::from_lines(&file.before, &file.after);
            ui::out(format_args!(
                "{}",
                diff.unified_diff()
                    .context_radius(3)
                    .header(&format!("{path} (now)"), &format!("{path} (after)"))
            ));
        }
    }
    if args.dry_run {
        ui::status(format_args!("Nothing was written (--dry-run)."));
    }
    match &plan.next_step {
        Some(step) => ui::status(format_args!("Next: {step}.")),
        None => ui::status(format_args!(
            "Restart the client to load the hooks and the MCP server."
        )),
    }
    Ok(EXIT_OK)
}
