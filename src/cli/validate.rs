//! `teammem validate`

use std::path::PathBuf;

use clap::Args;

use crate::domain::scope::ScopeKind;
use crate::ops::{self, EXIT_FINDINGS, EXIT_OK, OpError, Project};

/// Check memory files and report every problem as path:line:col: what — fix: what makes a
/// file unreadable, and style lint (slug names, quoting, folder = type, one-line values).
///
/// Without PATH: every scope folder in use. A relative PATH is taken from -C DIR when given. A
/// folder is read as a scope is (as Qwen Code reads it): every .md file below it, hidden ones
/// too, except files named MEMORY.md.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Files or folders to check.
    paths: Vec<PathBuf>,
    /// Print JSON: {"files_checked": N, "problems": [{path, line, column, message, fix}]}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem validate`; returns its exit status.
pub fn run(project: &Project, args: ValidateArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    let paths: Vec<PathBuf> = if args.paths.is_empty() {
        project
            .default_scopes()
            .into_iter()
            .filter_map(|s| project.layout.memory_dir(s))
            .filter(|d| d.is_dir())
            .collect()
    } else {
        args.paths
    };
    for scope in ScopeKind::ALL {
        if let Some(dir) = project.layout.memory_dir(scope) {
            let inside = |p: &PathBuf| {
                let at = project.cwd.join(p);
                std::path::absolute(&at).unwrap_or(at).starts_with(&dir)
            };
            if paths.iter().any(inside) {
                project.check_scope_safe(scope)?;
            }
        }
    }
    let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    let result = ops::validate::validate(&project.cwd, &refs)?;
    // A memory in two versions is valid twice over, but agents read both: say so.
    for c in ops::resolve::conflicts(project).unwrap_or_default() {
        warning!(
            "{}:{} is kept in two versions ({} is the other) — run `teammem resolve {}`",
            c.scope,
            c.original,
            c.copy,
            c.original
        );
    }
    if json {
        super::print_json(&result)?;
    } else {
        for problem in &result.problems {
            outln!("{}", super::shown(&problem.to_string()));
        }
        outln!(
            "{} file(s) checked, {} problem(s)",
            result.files_checked,
            result.problems.len()
        );
    }
    Ok(if result.problems.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}
