//! `teammem init`

use clap::Args;

use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Create .qwen/team-memory/ and its index in this repository.
///
/// If git would ignore the team folder, init says so and prints the exact .gitignore lines that
/// fix it; with --fix-gitignore it appends them. When .qwen/ itself is ignored, only the team
/// folder is let back in, so settings and local memory stay private.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Append the lines that stop .gitignore from hiding the team folder.
    #[arg(long)]
    fix_gitignore: bool,
    /// Print JSON: {team_dir, created, index_written, ignored, fix_lines, gitignore_fixed}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem init`; returns its exit status.
pub fn run(project: &Project, args: InitArgs) -> Result<u8, OpError> {
    let done = ops::init::init(project, args.fix_gitignore)?;
    if super::json_wanted(args.json, args.format) {
        super::print_json(&done)?;
        return Ok(if done.ignored { EXIT_FINDINGS } else { EXIT_OK });
    }
    if done.created {
        status!("Created {}", done.team_dir.display());
    } else {
        status!("Team memory already at {}", done.team_dir.display());
    }
    if done.gitignore_fixed {
        status!("Added to .gitignore:\n  {}", done.fix_lines.join("\n  "));
    }
    if done.ignored {
        errln!(
            "teammem: git ignores .qwen/team-memory/, so team memories would never be shared.\n\
             Add these lines to .gitignore (or run `teammem init --fix-gitignore`):\n  {}",
            done.fix_lines.join("\n  ")
        );
        return Ok(EXIT_FINDINGS);
    }
    Ok(EXIT_OK)
}
