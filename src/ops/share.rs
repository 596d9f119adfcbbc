//! Sharing a memory with the team: a memory from this project's private scope (Qwen Code's),
//! from Claude Code's memory folder, or one an agent saved to team scope and left pending
//! ([`super::pending`]) is copied into team scope through the write gate; a pending one is then
//! no longer pending.
//!
//! Claude Code keeps a project's memories in `<claude>/projects/<encoded git root>/memory/`,
//! where `<claude>` is `$CLAUDE_CONFIG_DIR` or `~/.claude` and the encoding turns every char
//! not `[a-zA-Z0-9]` into `-` (a name past 200 chars is cut and gets a hash of the path, as
//! Claude Code does). Its files nest `type` under `metadata:`; the team copy has it on a line of
//! its own, so Qwen Code indexes it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::check::{CheckConfig, Severity};
use crate::domain::gate::trust;
use crate::domain::memory::{self, MemoryFile};
use crate::domain::scope::ScopeKind;

use super::guard::TeamWriter;
use super::pending;
use super::scope_write::write_memory;
use super::{OpError, Project};

/// What `share` did.
#[derive(Debug, Clone, Serialize)]
pub struct Shared {
    /// The file shared.
    pub source: PathBuf,
    /// Where it came from: `private`, `claude`, `pending` or `file`.
    pub origin: &'static str,
    /// The team memory's id (its path in `.qwen/team-memory/`).
    pub id: String,
    /// The team file written.
    pub path: PathBuf,
    /// Whether the team's MEMORY.md changed.
    pub index_written: bool,
}

/// Claude Code's memory folder for a project (see the module docs).
pub fn claude_memory_dir(project: &Project) -> Option<PathBuf> {
    let root = project.layout.git_root.as_ref()?;
    let base = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => project.env.home.as_ref()?.join(".claude"),
    };
    Some(
        base.join("projects")
            .join(claude_project_name(root))
            .join("memory"),
    )
}

/// Claude Code's folder name for a project path: every char not `[a-zA-Z0-9]` becomes `-`;
/// past 200 chars, the first 200 and `-` and the path's hash in base 36.
pub fn claude_project_name(root: &Path) -> String {
    let path = root.to_string_lossy();
    let name: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if name.chars().count() <= 200 {
        return name;
    }
    // JavaScript's string hash: `h = (h << 5) - h + unit`, as a 32-bit integer, over UTF-16.
    let mut hash: i32 = 0;
    for unit in path.encode_utf16() {
        hash = hash
            .wrapping_shl(5)
            .wrapping_sub(hash)
            .wrapping_add(i32::from(unit));
    }
    let mut n = u64::from(hash.unsigned_abs());
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    let head: String = name.chars().take(200).collect();
    format!("{head}-{}", digits.iter().rev().collect::<String>())
}

/// Finds what `given` names: a pending memory (`pending:ID`), else a file (relative to the
/// working folder), else a memory id of the private scope, else one of Claude Code's memories
/// (`.md` may be left off).
fn find(project: &Project, given: &str) -> Result<(PathBuf, &'static str), OpError> {
    if given.starts_with(pending::PREFIX) {
        return pending::find(project, given)
            .map(|path| (path, "pending"))
            .ok_or_else(|| {
                OpError::Usage(format!(
                    "no pending memory `{}` — `teammem share` with no argument lists them",
                    crate::domain::secrets::redact_text(given)
                ))
            });
    }
    let as_path = project.cwd.join(given);
    if as_path.is_file() {
        return Ok((as_path, "file"));
    }
    let id = given.strip_prefix("private:").unwrap_or(given);
    let ids = [id.to_string(), format!("{id}.md")];
    let folders = [
        (project.layout.memory_dir(ScopeKind::Private), "private"),
        (claude_memory_dir(project), "claude"),
    ];
    for (dir, origin) in &folders {
        let Some(dir) = dir else { continue };
        for id in &ids {
            let path = dir.join(id);
            if !id.split('/').any(|p| p == "..") && path.is_file() {
                return Ok((path, origin));
            }
        }
    }
    let looked: Vec<String> = folders
        .iter()
        .filter_map(|(d, _)| d.as_ref().map(|d| d.display().to_string()))
        .collect();
    Err(OpError::Usage(format!(
        "no memory `{given}`: not a file, and not an id in {} — give the file's path, or an id as `teammem list --scope private` prints it",
        looked.join(" or ")
    )))
}

/// Copies a private memory into team scope. The team file is `<type>/<slug of its name>.md`,
/// with the frontmatter Qwen Code reads (top-level `type`, no quoting); the private file stays.
/// Refused, with nothing written, when the memory holds a secret or breaks a trust rule, when
/// a team memory already has its path, or when it cannot be read.
pub fn share(project: &Project, given: &str) -> Result<Shared, OpError> {
    project.git_root()?;
    let (source, origin) = find(project, given)?;
    let shown = source.display().to_string();
    let bytes = crate::domain::store::read_capped(&source)?;
    let file = MemoryFile::parse(&shown, &bytes).map_err(|problems| {
        let first = problems
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        OpError::Refused(format!("{shown} is not a memory teammem can read: {first}"))
    })?;
    // Qwen-style files keep their frontmatter as written (unknown keys too); Claude Code's get
    // fresh frontmatter with the type on a line of its own.
    let text = if file.in_qwen_index() {
        file.render()
    } else {
        MemoryFile::new(
            &file.name,
            &file.description,
            file.kind,
            file.keywords.clone(),
            &file.body,
        )
        .render()
    };
    let rel = format!("{}/{}.md", file.kind, memory::slugify(&file.name));
    let team_dir = project.check_scope_safe(ScopeKind::Team)?;
    let target = team_dir.join(&rel);
    if let Ok(existing) = std::fs::read(&target) {
        let why = if existing == text.as_bytes() {
            "it is already shared"
        } else {
            "another team memory has that path — rename one of them"
        };
        return Err(OpError::Refused(format!(
            "{}{rel} exists: {why}",
            project.shown_prefix(ScopeKind::Team)
        )));
    }
    // The trust rules at their default severities: what `teammem check` fails on.
    let config = CheckConfig::default();
    let risks: Vec<trust::Risk> = trust::scan(&text, &config.allowed_hosts())
        .into_iter()
        .filter(|r| config.severity(r.rule) == Some(Severity::Error))
        .collect();
    if let Some(first) = risks.first() {
        let rules: Vec<&str> = risks.iter().map(|r| r.rule).collect();
        return Err(OpError::Refused(format!(
            "{shown} is not shared: it breaks the team's trust rules ({}; first on line {}: {}) — edit the memory and share it again",
            rules.join(", "),
            first.line,
            first.message
        )));
    }
    // The team write gate refuses a secret before anything is written.
    let path = write_memory(project, ScopeKind::Team, TeamWriter::Rewrite, &rel, &text)?;
    let (index_written, _) = project.rebuild_index(ScopeKind::Team)?;
    if origin == "pending" {
        pending::published(project, &source)?;
    }
    Ok(Shared {
        source,
        origin,
        id: rel,
        path,
        index_written,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_names_projects_by_their_path() {
        assert_eq!(
            claude_project_name(Path::new("/home/ada/my.repo")),
            "-home-ada-my-repo"
        );
        let long = format!("/{}", "a".repeat(240));
        let name = claude_project_name(Path::new(&long));
        assert!(name.starts_with(&format!("-{}", "a".repeat(199))), "{name}");
        assert!(name.len() > 201 && name.len() < 210, "{name}");
    }
}
