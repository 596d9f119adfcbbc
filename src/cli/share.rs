//! `teammem share`

use clap::Args;

use crate::ops::{self, EXIT_OK, OpError, Project};

/// Share a private memory with the team: copy it into .qwen/team-memory/ through the team's
/// checks (no secrets, no trust-rule breaks).
///
/// PATH|ID is a memory file's path, an id of this project's private memory
/// (`feedback/use-real-db.md`, as `teammem list --scope private` prints it), or the name of one
/// of Claude Code's memories for this project (~/.claude/projects/<project>/memory/, or under
/// $CLAUDE_CONFIG_DIR). The team copy is <type>/<slug>.md with the frontmatter Qwen Code reads;
/// the private file stays. The next sync commits it.
#[derive(Debug, Args)]
pub struct ShareArgs {
    /// The memory to share.
    #[arg(value_name = "PATH|ID")]
    memory: String,
    /// Print JSON: {"source", "origin", "id", "path", "index_written"}.
    #[arg(long)]
    json: bool,
}

/// Runs `teammem share`; returns its exit status.
pub fn run(project: &Project, args: ShareArgs) -> Result<u8, OpError> {
    let shared = ops::share::share(project, &args.memory)?;
    if args.json {
        super::print_json(&shared)?;
    } else {
        println!(
            "Shared {} as team memory {}; the next sync commits it.",
            shared.source.display(),
            shared.id
        );
    }
    Ok(EXIT_OK)
}
