//! `teammem mcp`

use std::time::Duration;

use clap::Args;

use crate::ops::mcp::{self, MemoryDoor, Publish};
use crate::ops::{EXIT_OK, OpError, Project};

/// Serve the memory to an agent over the Model Context Protocol, on stdin and stdout.
///
/// Tools: memory_search, memory_read, memory_save, memory_forget, memory_list. Everything they
/// return passes the same secret and trust checks as session start (a memory that fails is
/// withheld, named in one line); every save passes the same checks as `teammem add`, and an
/// instruction-like sentence is refused too.
///
/// A team save is kept pending on this machine (never committed or pushed) until a person
/// publishes it with `teammem share pending:ID`; a team forget is refused with the command a
/// person runs. Only your own git config lets an agent write team memory directly:
/// `git config --global teammem.agentTeamSaves commit` (committed now, published by the next
/// sync) or `publish` (pushed at once, within --timeout).
///
/// Set it up for a client with `teammem install-mcp --client claude|qwen|codex|cursor`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Push each team save or forget at once (fetch, merge, push), within --timeout, when your
    /// git config allows agents' team writes (teammem.agentTeamSaves=commit); also switched on
    /// by TEAMMEM_MCP_PUBLISH=1. It never skips the person: with saves pending, it does nothing.
    #[arg(long)]
    publish: bool,
    /// The time budget of a publishing sync, network included, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    timeout: u64,
}

impl McpArgs {
    /// Whether team changes are pushed from inside a tool call.
    pub fn publishes(&self) -> bool {
        self.publish || std::env::var("TEAMMEM_MCP_PUBLISH").is_ok_and(|v| v == "1")
    }
}

/// Runs `teammem mcp` until the client disconnects; returns its exit status.
pub fn run(project: Project, args: McpArgs) -> Result<u8, OpError> {
    let publish = Publish::choose(args.publishes(), Duration::from_secs(args.timeout.max(1)));
    mcp::serve(MemoryDoor::new(project, publish))?;
    Ok(EXIT_OK)
}
