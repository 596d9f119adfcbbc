//! `teammem resolve`

use clap::{ArgGroup, Args};

use crate::ops::resolve::{self, Keep};
use crate::ops::{EXIT_OK, OpError, Project};

/// Resolve a memory that sync kept in two versions.
///
/// When a teammate and you changed one memory differently, sync keeps theirs at the memory's
/// path and yours beside it as <slug>.md.conflict-<sha>.md; agents see both until you choose.
/// ID is the memory's path or its copy's (`feedback/use-postgres.md`). --theirs keeps the
/// version at the memory's path (the one sync pulled), --ours the copy's (the one sync kept
/// aside: yours, on the machine whose sync made the copy), --both keeps the two as separate
/// memories (the copy's at <slug>-2.md, titled "(second version)" when the titles are equal),
/// --edit opens both merged
/// in $VISUAL or $EDITOR (else vi) with each difference between <<<<<<< / ======= / >>>>>>>
/// markers and keeps what you save. The index is rebuilt; the next sync commits the result.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("keep").args(["theirs", "ours", "both", "edit"])))]
pub struct ResolveArgs {
    /// The memory in two versions (its path, or its conflict copy's).
    #[arg(required_unless_present = "list")]
    id: Option<String>,
    /// Keep the version at the memory's path (the one sync pulled); delete the copy.
    #[arg(long)]
    theirs: bool,
    /// Keep the conflict copy's version (yours, when your sync made it), at the memory's path.
    #[arg(long, alias = "mine", alias = "yours")]
    ours: bool,
    /// Keep both, as two separate memories.
    #[arg(long)]
    both: bool,
    /// Edit both merged in $VISUAL / $EDITOR and keep the result.
    #[arg(long)]
    edit: bool,
    /// List the memories kept in two versions.
    #[arg(long, conflicts_with_all = ["theirs", "ours", "both", "edit"])]
    list: bool,
    /// Print JSON: with --list [{scope, original, copy, commit, original_exists}], else
    /// {scope, memory, copy, kept, written, index_written}.
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem resolve`; returns its exit status.
pub fn run(project: &Project, args: ResolveArgs) -> Result<u8, OpError> {
    let json = super::json_wanted(args.json, args.format);
    if args.list {
        let found = resolve::conflicts(project)?;
        if json {
            super::print_json(&found)?;
        } else if found.is_empty() {
            outln!("No memory is kept in two versions.");
        } else {
            for c in &found {
                outln!("{}:{}  other version: {}", c.scope, c.original, c.copy);
            }
        }
        return Ok(EXIT_OK);
    }
    let Some(id) = args.id.as_deref() else {
        return Err(OpError::Usage("name the memory to resolve".into()));
    };
    let conflict = resolve::find(project, id)?;
    let keep = if args.theirs {
        Keep::Theirs
    } else if args.ours {
        Keep::Ours
    } else if args.both {
        Keep::Both
    } else if args.edit {
        Keep::Edited(resolve::edit_in_editor(project, &conflict)?)
    } else {
        return Err(OpError::Usage(format!(
            "say which version to keep: `teammem resolve {id} --theirs` (the teammate's, at \
             {}), `--ours` (yours, in {}), `--both` (two memories) or `--edit` (merge them in \
             your editor)",
            conflict.original, conflict.copy
        )));
    };
    let done = resolve::resolve(project, &conflict, keep)?;
    if json {
        super::print_json(&done)?;
    } else {
        let what = match done.kept {
            "theirs" => format!("kept the version at {}", done.memory),
            "ours" => format!("kept the other version (from {})", done.copy),
            "both" => format!(
                "kept both; the other version is now {}",
                done.written.join(", ")
            ),
            _ => "kept your edit".to_string(),
        };
        status!(
            "Resolved {}:{}: {what}; removed {}.",
            done.scope,
            done.memory,
            done.copy
        );
        if done.scope == crate::domain::scope::ScopeKind::Team {
            hint!("`teammem sync` shares the resolution with the team.");
        }
    }
    Ok(EXIT_OK)
}
