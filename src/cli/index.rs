//! `teammem index`

use clap::Args;

use super::ScopeArg;
use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Regenerate MEMORY.md from the memories (written only when its bytes change).
///
/// With --check nothing is written: exit status 1 and a diff when MEMORY.md is stale.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Only this scope (default: every scope in use).
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,
    /// Report a stale index instead of rewriting it.
    #[arg(long)]
    check: bool,
    /// Print JSON: [{scope, path, stale, written, diff, invalid}].
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem index`; returns its exit status.
pub fn run(project: &Project, args: IndexArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let mut states = Vec::new();
    for scope in super::scopes(project, args.scope) {
        states.push(ops::memory_index::index(project, scope, !args.check)?);
    }
    if json {
        super::print_json(&states)?;
    } else {
        for state in &states {
            for problem in &state.invalid {
                errln!(
                    "left out of the index: {}",
                    super::shown(&problem.to_string())
                );
            }
            match (state.stale, args.check) {
                (true, true) => {
                    outln!(
                        "{} is stale — run `teammem index --scope {}`",
                        state.path.display(),
                        state.scope
                    );
                    if let Some(diff) = &state.diff {
                        out!("{diff}");
                    }
                }
                (true, false) => status!("Wrote {}", state.path.display()),
                (false, _) if !state.path.parent().is_some_and(|d| d.is_dir()) => {
                    status!(
                        "{}: no memories yet (no {})",
                        state.scope,
                        state.path.display()
                    )
                }
                (false, _) => status!("{} is up to date", state.path.display()),
            }
        }
    }
    let stale = args.check && states.iter().any(|s| s.stale);
    Ok(if stale { EXIT_FINDINGS } else { EXIT_OK })
}
