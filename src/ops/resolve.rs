//! Conflicts as a state of their own. A memory sync kept in two versions (theirs at the path,
//! yours in a conflict copy beside it, see [`crate::domain::conflict`]) is listed here, named in
//! the context agents receive, and made one again by `teammem resolve`: keep theirs, keep
//! yours, keep both as separate memories, or an edited merge of the two.

use std::path::PathBuf;

use serde::Serialize;

use crate::domain::conflict;
use crate::domain::memory::MemoryFile;
use crate::domain::scope::ScopeKind;
use crate::domain::store;

use super::guard::TeamWriter;
use super::scope_write::{remove_memory, write_memory};
use super::{OpError, Project};

/// A memory kept in two versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The scope both files live in.
    pub scope: ScopeKind,
    /// The memory's path (the teammate's version), relative to the scope folder.
    pub original: String,
    /// The conflict copy's path (your version).
    pub copy: String,
    /// The commit id the copy's name carries (your sync commit).
    pub commit: String,
    /// Whether the memory's own path still holds a file.
    pub original_exists: bool,
}

/// Every unresolved conflict in the scopes in use, by path.
pub fn conflicts(project: &Project) -> Result<Vec<Conflict>, OpError> {
    let mut found = Vec::new();
    for scope in project.default_scopes() {
        let Some(dir) = project.layout.memory_dir(scope) else {
            continue;
        };
        if !dir.is_dir() {
            continue;
        }
        let paths = store::memory_paths(&dir)?;
        for path in &paths {
            if let Some(copy) = conflict::parse_copy(path) {
                found.push(Conflict {
                    scope,
                    original_exists: paths.contains(&copy.original),
                    original: copy.original,
                    copy: path.clone(),
                    commit: copy.commit,
                });
            }
        }
    }
    Ok(found)
}

/// The line agents and their users see at session start when memories are in two versions:
/// which ones, and the command that resolves them. `None` when there is no conflict (or the
/// folders cannot be read: the context's own errors say that).
pub fn conflict_line(project: &Project) -> Option<String> {
    let found = conflicts(project).ok()?;
    let first = found.first()?;
    let shown: Vec<String> = found
        .iter()
        .take(5)
        .map(|c| format!("{} (other version: {})", c.original, c.copy))
        .collect();
    let more = if found.len() > 5 {
        format!(" and {} more", found.len() - 5)
    } else {
        String::new()
    };
    Some(format!(
        "Team memory conflict: {} kept in two versions that may contradict each other: {}{more}. \
         Treat both as unconfirmed until resolved; resolve with `teammem resolve {} --theirs | \
         --ours | --both | --edit` (`teammem resolve --list` shows every one).",
        if found.len() == 1 {
            "1 memory is".to_string()
        } else {
            format!("{} memories are", found.len())
        },
        shown.join(", "),
        first.original,
    ))
}

/// Finds the conflict an id names: the memory's path or its copy's, with an optional scope
/// prefix (`team:`). A memory with several copies must be named by the copy.
pub fn find(project: &Project, id: &str) -> Result<Conflict, OpError> {
    let (scope, path) = match id.split_once(':') {
        Some((s, rest)) => match ScopeKind::parse(s) {
            Some(scope) => (Some(scope), rest),
            None => (None, id),
        },
        None => (None, id),
    };
    let path = path.trim_start_matches("./");
    let all = conflicts(project)?;
    let matching: Vec<&Conflict> = all
        .iter()
        .filter(|c| scope.is_none_or(|s| s == c.scope))
        .filter(|c| c.copy == path || c.original == path)
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(OpError::Usage(if all.is_empty() {
            format!("`{id}` has no conflict to resolve: no memory is kept in two versions")
        } else {
            format!(
                "`{id}` has no conflict to resolve; the memories in two versions are: {}",
                all.iter()
                    .map(|c| c.original.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })),
        several => Err(OpError::Usage(format!(
            "`{id}` has {} other versions; name the one to resolve: {}",
            several.len(),
            several
                .iter()
                .map(|c| c.copy.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// How a conflict is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// The teammate's version, at the memory's path; your copy is deleted.
    Theirs,
    /// Your version, moved to the memory's path.
    Ours,
    /// Both, as two memories: yours gets a path and, when the titles are equal, a title of its
    /// own.
    Both,
    /// This text (an edited merge of the two) at the memory's path.
    Edited(String),
}

/// What `resolve` did.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// The scope.
    pub scope: ScopeKind,
    /// The memory's path.
    pub memory: String,
    /// The copy that is gone.
    pub copy: String,
    /// `theirs`, `ours`, `both` or `edited`.
    pub kept: &'static str,
    /// Files written (relative to the scope folder).
    pub written: Vec<String>,
    /// Whether MEMORY.md changed.
    pub index_written: bool,
}

/// Both versions of a conflict, as they are on disk: (theirs, yours). Theirs is empty when
/// the memory's own path holds no file any more.
pub fn versions(project: &Project, conflict: &Conflict) -> Result<(String, String), OpError> {
    let dir = project.check_scope_safe(conflict.scope)?;
    let read = |rel: &str| -> Result<String, OpError> {
        let bytes = store::read_capped(&dir.join(rel))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let theirs = if conflict.original_exists {
        read(&conflict.original)?
    } else {
        String::new()
    };
    Ok((theirs, read(&conflict.copy)?))
}

/// The two versions merged line by line for an editor: lines both hold once, each difference
/// between git-style markers (`<<<<<<< theirs`, `=======`, `>>>>>>> yours`).
pub fn merged_for_editing(conflict: &Conflict, theirs: &str, yours: &str) -> String {
    let diff = similar::TextDiff::from_lines(theirs, yours);
    let mut out = String::new();
    let mut ours_part = String::new();
    let mut theirs_part = String::new();
    let flush = |out: &mut String, t: &mut String, o: &mut String| {
        if t.is_empty() && o.is_empty() {
            return;
        }
        out.push_str(&format!("<<<<<<< theirs ({})\n", conflict.original));
        out.push_str(t);
        ensure_newline(out);
        out.push_str("=======\n");
        out.push_str(o);
        ensure_newline(out);
        out.push_str(&format!(">>>>>>> yours ({})\n", conflict.copy));
        t.clear();
        o.clear();
    };
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Equal => {
                flush(&mut out, &mut theirs_part, &mut ours_part);
                out.push_str(change.value());
            }
            similar::ChangeTag::Delete => theirs_part.push_str(change.value()),
            similar::ChangeTag::Insert => ours_part.push_str(change.value()),
        }
    }
    flush(&mut out, &mut theirs_part, &mut ours_part);
    out
}

fn ensure_newline(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

/// Whether edited text still holds a conflict marker line.
pub fn has_markers(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with("<<<<<<< ") || l == "=======" || l.starts_with(">>>>>>> "))
        .map(|n| n + 1)
}

/// Resolves `conflict` as `keep` says; the scope's index is rebuilt. A team-scope result is
/// committed by the next sync, like any other change, and passes the secret guard first.
pub fn resolve(project: &Project, conflict: &Conflict, keep: Keep) -> Result<Resolved, OpError> {
    let scope = conflict.scope;
    let dir = project.check_scope_safe(scope)?;
    let (_, yours) = versions(project, conflict)?;
    let mut written = Vec::new();
    let kept = match &keep {
        Keep::Theirs => "theirs",
        Keep::Ours => "ours",
        Keep::Both => "both",
        Keep::Edited(_) => "edited",
    };
    match keep {
        // With nothing at the memory's path, "theirs" would delete the last version there is.
        Keep::Theirs if !conflict.original_exists => {
            return Err(OpError::Refused(format!(
                "{} holds no file any more, so keeping that side would delete the only version \
                 left; keep it with `teammem resolve {} --ours`, or delete it with `teammem \
                 forget {}`",
                conflict.original, conflict.copy, conflict.copy
            )));
        }
        Keep::Theirs => {}
        Keep::Ours => {
            write_memory(
                project,
                scope,
                TeamWriter::Rewrite,
                &conflict.original,
                &yours,
            )?;
            written.push(conflict.original.clone());
        }
        Keep::Edited(text) => {
            if let Some(line) = has_markers(&text) {
                return Err(OpError::Refused(format!(
                    "line {line} of the edited memory is still a conflict marker — keep the \
                     lines you want, delete the markers, and run `teammem resolve {} --edit` \
                     again; nothing was changed",
                    conflict.original
                )));
            }
            let shown = format!("{}{}", project.shown_prefix(scope), conflict.original);
            if let Err(problems) = MemoryFile::parse(&shown, text.as_bytes()) {
                let saved = save_rejected(project, scope, &text)?;
                return Err(OpError::Refused(format!(
                    "the edited memory is not valid: {}; nothing was changed (your edit is saved \
                     in {})",
                    problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                    saved.display()
                )));
            }
            write_memory(
                project,
                scope,
                TeamWriter::Rewrite,
                &conflict.original,
                &text,
            )?;
            written.push(conflict.original.clone());
        }
        Keep::Both => {
            let (theirs, _) = versions(project, conflict)?;
            let theirs_name = MemoryFile::parse(&conflict.original, theirs.as_bytes())
                .ok()
                .map(|f| f.name);
            let target = free_path(&dir, &conflict.original);
            let text = match MemoryFile::parse(&target, yours.as_bytes()) {
                Ok(mut file) if Some(&file.name) == theirs_name.as_ref() => {
                    file.name = format!("{} (second version)", file.name);
                    file.render()
                }
                _ => yours.clone(),
            };
            write_memory(project, scope, TeamWriter::Rewrite, &target, &text)?;
            written.push(target);
        }
    }
    remove_memory(project, scope, &conflict.copy)?;
    let index_written = project.rebuild_index(scope)?.0;
    Ok(Resolved {
        scope,
        memory: conflict.original.clone(),
        copy: conflict.copy.clone(),
        kept,
        written,
        index_written,
    })
}

/// `type/slug-2.md`, `-3`, … : the first path beside `original` that holds no file.
fn free_path(dir: &std::path::Path, original: &str) -> String {
    let stem = original.strip_suffix(".md").unwrap_or(original);
    (2..)
        .map(|n| format!("{stem}-{n}.md"))
        .find(|p| !dir.join(p).exists())
        .unwrap_or_else(|| format!("{stem}-copy.md"))
}

/// Keeps text a command refused (an edit that is not a valid memory, a body refused for a
/// secret) in the scope's state folder, outside the memory folder and the repository, readable
/// by its owner only, so nothing typed or piped in is lost.
pub fn save_rejected(project: &Project, scope: ScopeKind, text: &str) -> Result<PathBuf, OpError> {
    let dir = super::scope_write::state_dir(project, scope)?.join("rejected");
    std::fs::create_dir_all(&dir).map_err(|e| OpError::io(&dir, e))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let path = dir.join(format!("{stamp}-{}.md", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path).map_err(|e| OpError::io(&path, e))?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|e| OpError::io(&path, e))?;
    Ok(path)
}

/// Writes both versions merged into a file in the scope's state folder, opens the user's
/// editor on it and returns what was saved.
pub fn edit_in_editor(project: &Project, conflict: &Conflict) -> Result<String, OpError> {
    let (theirs, yours) = versions(project, conflict)?;
    let merged = merged_for_editing(conflict, &theirs, &yours);
    let dir = super::scope_write::state_dir(project, conflict.scope)?;
    let file = dir.join(format!("RESOLVE-{}.md", std::process::id()));
    crate::domain::store::write_atomic(&file, merged.as_bytes())?;
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    // Through the shell, as git runs core.editor: EDITOR may hold arguments ("code --wait").
    let mut sh = std::process::Command::new("sh");
    // The user's own OpenSSL settings, not those teammem's libgit2 runs with.
    crate::sys::user_openssl_environment(&mut sh);
    let status = sh
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg(&editor)
        .arg(&file)
        .status()
        .map_err(|e| OpError::Usage(format!("cannot start the editor `{editor}`: {e}")))?;
    let text = std::fs::read_to_string(&file).map_err(|e| OpError::io(&file, e))?;
    if !status.success() {
        return Err(OpError::Refused(format!(
            "the editor `{editor}` exited with {status}; nothing was changed (the merge is in {})",
            file.display()
        )));
    }
    let _ = std::fs::remove_file(&file);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> Conflict {
        Conflict {
            scope: ScopeKind::Team,
            original: "project/deploys.md".into(),
            copy: "project/deploys.md.conflict-abc1234.md".into(),
            commit: "abc1234".into(),
            original_exists: true,
        }
    }

    #[test]
    fn the_editor_sees_shared_lines_once_and_each_difference_between_markers() {
        let theirs = "---\nname: Deploys\n---\nTuesdays at 10:00.\nAsk Ops.\n";
        let yours = "---\nname: Deploys\n---\nThursdays at 14:00.\nAsk Ops.\n";
        let merged = merged_for_editing(&pair(), theirs, yours);
        assert_eq!(
            merged,
            "---\nname: Deploys\n---\n<<<<<<< theirs (project/deploys.md)\nTuesdays at 10:00.\n\
             =======\nThursdays at 14:00.\n>>>>>>> yours (project/deploys.md.conflict-abc1234.md)\n\
             Ask Ops.\n"
        );
        assert_eq!(has_markers(&merged), Some(4));
        assert_eq!(has_markers(theirs), None);
    }
}
