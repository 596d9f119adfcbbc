//! `teammem share`

use clap::Args;

use crate::ops::{self, EXIT_OK, OpError, Project};

/// Share a memory with the team: copy it into .qwen/team-memory/ through the team's checks (no
/// secrets, no trust-rule breaks).
///
/// PATH|ID is a memory file's path, an id of this project's private memory
/// (`feedback/use-real-db.md`, as `teammem list --scope private` prints it), the name of one of
/// Claude Code's memories for this project (~/.claude/projects/<project>/memory/, or under
/// $CLAUDE_CONFIG_DIR), or a team memory an agent saved and left pending
/// (`pending:feedback/use-real-db.md`). The team copy is <type>/<slug>.md with the frontmatter
/// Qwen Code reads; a private file stays, a pending one is no longer pending. The next sync
/// commits it.
///
/// With no PATH|ID, lists the pending memories: what agents saved to team memory on this
/// machine, waiting for you to publish (`teammem share pending:ID`) or drop
/// (`teammem forget pending:ID`) each.
#[derive(Debug, Args)]
pub struct ShareArgs {
    /// The memory to share; leave it out to list the pending ones.
    #[arg(value_name = "PATH|ID")]
    memory: Option<String>,
    /// Print JSON: {"source", "origin", "id", "path", "index_written"}, or with no PATH|ID
    /// {"pending": [{"id", "name", "description", "path"}]}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem share`; returns its exit status.
pub fn run(project: &Project, args: ShareArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let Some(memory) = &args.memory else {
        let pending = ops::pending::list(project)?;
        if json {
            super::print_json(&serde_json::json!({ "pending": pending }))?;
        } else if pending.is_empty() {
            outln!("No pending team memory: nothing an agent saved is waiting for you.");
        } else {
            outln!("Team memory that agents saved, waiting for you to publish or drop:");
            for p in &pending {
                outln!(
                    "  {}  {} — {}",
                    super::shown(&p.id),
                    super::shown(&p.name),
                    super::shown(&p.description)
                );
            }
            outln!(
                "Publish one with `teammem share pending:ID`, drop it with `teammem forget pending:ID`."
            );
        }
        return Ok(EXIT_OK);
    };
    let shared = ops::share::share(project, memory)?;
    if json {
        super::print_json(&shared)?;
    } else {
        outln!(
            "Shared {} as team memory {}; the next sync commits it.",
            super::shown(&shared.source.display().to_string()),
            super::shown(&shared.id)
        );
    }
    Ok(EXIT_OK)
}
