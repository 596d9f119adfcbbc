//! `teammem install-mcp`

use clap::{Args, ValueEnum};

use super::ui;
use crate::ops::install_mcp::{self, Client, ConfigChange, Places, ServerCommand};
use crate::ops::{EXIT_OK, OpError, Project};

/// Add `teammem mcp` to an MCP client's configuration.
///
/// Claude Code: .mcp.json in the project. Qwen Code: .qwen/settings.json in the project.
/// Cursor: .cursor/mcp.json in the project (started with -C ${workspaceFolder}). Codex:
/// $CODEX_HOME/config.toml (default ~/.codex/config.toml), as [mcp_servers.teammem].
///
/// Only the teammem entry's command and args are set: other servers, other keys, comments
/// and layout stay as they are, and a second run changes nothing. A file that cannot be
/// parsed is left untouched, with an error.
#[derive(Debug, Args)]
pub struct InstallMcpArgs {
    /// The client to configure.
    #[arg(long, value_enum)]
    client: ClientArg,
    /// Show what would change (the file and a diff) without writing it.
    #[arg(long)]
    dry_run: bool,
    /// The program the client starts (default: `teammem`, found on PATH; give a full path
    /// when it is not on the client's PATH).
    #[arg(long, value_name = "PROGRAM", default_value = "teammem")]
    command: String,
    /// Configure the server to publish team saves at once (`teammem mcp --publish`).
    #[arg(long)]
    publish: bool,
}

/// A client as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ClientArg {
    /// Claude Code (.mcp.json).
    Claude,
    /// Qwen Code (.qwen/settings.json).
    Qwen,
    /// Codex (~/.codex/config.toml).
    Codex,
    /// Cursor (.cursor/mcp.json).
    Cursor,
}

impl From<ClientArg> for Client {
    fn from(arg: ClientArg) -> Self {
        match arg {
            ClientArg::Claude => Client::Claude,
            ClientArg::Qwen => Client::Qwen,
            ClientArg::Codex => Client::Codex,
            ClientArg::Cursor => Client::Cursor,
        }
    }
}

/// Runs `teammem install-mcp`; returns its exit status.
pub fn run(project: &Project, args: InstallMcpArgs) -> Result<u8, OpError> {
    let client: Client = args.client.into();
    let root = match client {
        // Codex's file is the user's; the project need not be a repository.
        Client::Codex => project
            .repo
            .as_ref()
            .map(|r| r.workdir.clone())
            .unwrap_or_else(|| project.cwd.clone()),
        _ => project.git_root()?.to_path_buf(),
    };
    let command = ServerCommand {
        program: args.command,
        extra: if args.publish {
            vec!["--publish".into()]
        } else {
            Vec::new()
        },
    };
    let plan = install_mcp::plan(&Places::from_env(root), client, &command)?;
    let path = plan.path.display();
    let entry = serde_json::to_string(&plan.entry).unwrap_or_default();
    let kept = match plan.other_servers.len() {
        0 => String::new(),
        n => format!(
            "; kept {n} other server{}: {}",
            if n == 1 { "" } else { "s" },
            plan.other_servers.join(", ")
        ),
    };
    if plan.change == ConfigChange::Unchanged {
        ui::status(format_args!(
            "{path}: already configured, nothing to do (teammem: {entry}{kept})."
        ));
        return Ok(EXIT_OK);
    }
    let verb = match (args.dry_run, &plan.change) {
        (true, ConfigChange::Created) => "would create",
        (true, _) => "would update",
        (false, ConfigChange::Created) => "created",
        (false, _) => "updated",
    };
    if !args.dry_run {
        install_mcp::apply(&plan)?;
    }
    ui::status(format_args!(
        "{path}: {verb} the teammem server entry {entry}{kept}."
    ));
    if args.dry_run {
        let diff = similar::TextDiff::from_lines(&plan.before, &plan.after);
        ui::out(format_args!(
            "{}",
            diff.unified_diff()
                .context_radius(3)
                .header(&format!("{path} (now)"), &format!("{path} (after)"))
        ));
        ui::status(format_args!("Nothing was written (--dry-run)."));
    } else {
        ui::status(format_args!(
            "Restart the client (or reload its MCP servers) to connect."
        ));
    }
    Ok(EXIT_OK)
}
