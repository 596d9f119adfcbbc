//! `teammem demo`

use clap::Args;

use crate::ops::demo;
use crate::ops::{EXIT_OK, OpError};

/// Show the team memory at work in a throwaway team (nothing of yours is touched).
///
/// Shows the setup commands it stands for (init, committing .gitignore, install-hooks,
/// install-agent), then builds a bare remote and two clones, Alice's and Bob's, in a temp
/// folder; writes memories as both and shows a memory file as written, syncs both ways, shows a secret refused, a
/// memory both edited kept in two versions, the context Bob's agent receives, the review of
/// what Bob's sync brought, and the conflict resolved with `teammem resolve`; ends with the
/// commands that do the same in your repository. Needs no git program. The temp folder is
/// removed at the end unless --keep.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the temp folder and print where it is, to look around with git.
    #[arg(long)]
    keep: bool,
    /// Print each step as JSON instead of the story: the memory as written, each sync, the
    /// refused secret (redacted), the memory kept in two versions, the context each agent
    /// receives, the review and the resolved conflict.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

pub fn run(args: DemoArgs) -> Result<u8, OpError> {
    if super::json_wanted(args.json, args.format) {
        let done = demo::run(args.keep, &mut std::io::sink())?;
        super::print_json(&done)?;
        return Ok(EXIT_OK);
    }
    let mut stdout = super::ui::Stdout;
    let done = demo::run(args.keep, &mut stdout)?;
    outln!("\nDone in {} ms.", done.elapsed.as_millis());
    if let Some(dir) = done.kept {
        outln!("Kept: {} (alice/, bob/, team.git)", dir.display());
    }
    Ok(EXIT_OK)
}
