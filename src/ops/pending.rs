//! Team memory an agent wrote, waiting for a person. A team save through a door an agent drives
//! (MCP `memory_save`) is gated like any team write, then kept on this machine, outside the
//! repository (`<memory base>/projects/<project>/team/pending/<type>/<slug>.md`), where no
//! commit or push can reach it. A person publishes it with `teammem share pending:ID` (which
//! moves it into `.qwen/team-memory/` through the same gate) or drops it with
//! `teammem forget pending:ID`.
//!
//! Only the user's own git config (`git config --global teammem.agentTeamSaves commit`) lets
//! agents write team memory directly; no file in a repository can.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::gate;
use crate::domain::memory::MemoryFile;
use crate::domain::scope::ScopeKind;
use crate::domain::store;
use crate::git::user_config;

use super::add::{self, NewMemory};
use super::guard::{self, TeamWriter};
use super::scope_write::state_dir;
use super::{OpError, Project};

/// How a pending memory's id is written wherever a person or an agent names it.
pub const PREFIX: &str = "pending:";

/// The user's git config key that decides what an agent's team save does.
pub const SETTING: &str = "teammem.agentTeamSaves";

/// What an agent's team save does, as the user's own git config says ([`SETTING`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentTeamSaves {
    /// Kept pending until a person publishes it (the default).
    Pending,
    /// Written to the team folder and committed; sync publishes it (`commit`, or `publish` to
    /// let `teammem mcp --publish` push it at once).
    Direct {
        /// Whether `--publish` may push it from inside the tool call.
        at_once_allowed: bool,
    },
}

impl AgentTeamSaves {
    /// The user's choice; anything but `commit` or `publish` keeps saves pending.
    pub fn from_user_config() -> AgentTeamSaves {
        match user_config::user_setting(SETTING).as_deref() {
            Some("commit") => AgentTeamSaves::Direct {
                at_once_allowed: false,
            },
            Some("publish") => AgentTeamSaves::Direct {
                at_once_allowed: true,
            },
            _ => AgentTeamSaves::Pending,
        }
    }
}

/// One pending memory.
#[derive(Debug, Clone, Serialize)]
pub struct PendingMemory {
    /// Its id, `pending:<type>/<slug>.md`.
    pub id: String,
    /// Its name (made safe to show).
    pub name: String,
    /// Its description (made safe to show).
    pub description: String,
    /// The file.
    pub path: PathBuf,
}

/// The folder pending memories are kept in, created when missing.
pub fn folder(project: &Project) -> Result<PathBuf, OpError> {
    Ok(state_dir(project, ScopeKind::Team)?.join("pending"))
}

/// Keeps `new` (a team memory an agent saved) pending: refused, with nothing written, when it
/// breaks the team's gate (a secret in its text or path, a trust error), when the team or the
/// pending memories already have one of its name, or when its file exists.
pub fn save(project: &Project, new: &NewMemory) -> Result<PendingMemory, OpError> {
    let (rel, text) = add::render(new)?;
    project.check_scope_safe(ScopeKind::Team)?;
    let wanted = new.name.trim().to_lowercase();
    let team = project.load(ScopeKind::Team)?;
    if let Some(existing) = team
        .memories
        .iter()
        .find(|m| m.file.name.trim().to_lowercase() == wanted)
    {
        return Err(OpError::Refused(format!(
            "the team scope already has a memory named `{}`: team:{} — choose another name",
            existing.file.name, existing.rel
        )));
    }
    if let Some(existing) = list(project)?
        .into_iter()
        .find(|p| p.name.trim().to_lowercase() == wanted)
    {
        return Err(OpError::Refused(format!(
            "a memory named `{}` is already pending as {} — a person publishes it with \
             `teammem share {}`",
            existing.name, existing.id, existing.id
        )));
    }
    guard::refuse_in_team(project, TeamWriter::Add, &rel, &text)?;
    let path = folder(project)?.join(&rel);
    if fs::symlink_metadata(&path).is_ok() {
        return Err(OpError::Refused(format!(
            "{PREFIX}{rel} already exists (a memory with the same slug) — choose another name"
        )));
    }
    store::write_atomic(&path, text.as_bytes())?;
    Ok(PendingMemory {
        id: format!("{PREFIX}{rel}"),
        name: gate::for_agent(new.name.trim()),
        description: gate::for_agent(new.description.trim()),
        path,
    })
}

/// The pending memories, by id. A file that no longer reads as a memory is listed by its id
/// with an empty name, so that a person can still publish or drop it.
pub fn list(project: &Project) -> Result<Vec<PendingMemory>, OpError> {
    let Some(dir) = project.layout.state_dir(ScopeKind::Team) else {
        return Ok(Vec::new());
    };
    let dir = dir.join("pending");
    let mut pending = Vec::new();
    for rel in store::memory_paths(&dir)? {
        let path = dir.join(&rel);
        let (name, description) = store::read_capped(&path)
            .ok()
            .and_then(|bytes| MemoryFile::parse(&rel, &bytes).ok())
            .map(|f| (gate::for_agent(&f.name), gate::for_agent(&f.description)))
            .unwrap_or_default();
        pending.push(PendingMemory {
            id: format!("{PREFIX}{rel}"),
            name,
            description,
            path,
        });
    }
    Ok(pending)
}

/// The file of the pending memory `id` (with or without [`PREFIX`]; `.md` may be left off).
pub fn find(project: &Project, id: &str) -> Option<PathBuf> {
    let rel = id.strip_prefix(PREFIX).unwrap_or(id);
    if rel.split('/').any(|part| part == ".." || part.is_empty()) {
        return None;
    }
    let dir = project.layout.state_dir(ScopeKind::Team)?.join("pending");
    [rel.to_string(), format!("{rel}.md")]
        .into_iter()
        .map(|rel| dir.join(rel))
        .find(|path| path.is_file())
}

/// Drops the pending memory `id`; its id as removed.
pub fn drop_pending(project: &Project, id: &str) -> Result<String, OpError> {
    let path = find(project, id).ok_or_else(|| {
        OpError::Usage(format!(
            "no pending memory `{}` — `teammem share` with no argument lists them",
            crate::domain::secrets::redact_text(id)
        ))
    })?;
    let dir = folder(project)?;
    remove(&dir, &path)?;
    let rel = path
        .strip_prefix(&dir)
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(format!("{PREFIX}{rel}"))
}

/// The line that tells the agent (and whoever reads its context) which team memories it saved
/// are still waiting for a person; none when nothing is pending.
pub fn context_line(project: &Project) -> Option<String> {
    let pending = list(project).ok()?;
    if pending.is_empty() {
        return None;
    }
    const SHOWN: usize = 5;
    let mut ids: Vec<String> = pending
        .iter()
        .take(SHOWN)
        .map(|p| gate::for_agent(&p.id))
        .collect();
    if pending.len() > SHOWN {
        ids.push(format!("and {} more", pending.len() - SHOWN));
    }
    Some(format!(
        "Pending team memory: {} saved by an agent on this machine and not published — teammates \
         do not see {} until a person runs `teammem share pending:ID`: {}.",
        if pending.len() == 1 {
            "1 memory".to_string()
        } else {
            format!("{} memories", pending.len())
        },
        if pending.len() == 1 { "it" } else { "them" },
        ids.join(", ")
    ))
}

/// Removes the pending copy of a memory a person just published (nothing when `path` is not
/// a pending memory).
pub fn published(project: &Project, path: &Path) -> Result<(), OpError> {
    let dir = folder(project)?;
    if path.starts_with(&dir) {
        remove(&dir, path)?;
    }
    Ok(())
}

/// Removes a pending memory's file, and its type folder when that is left empty.
fn remove(dir: &Path, path: &Path) -> Result<(), OpError> {
    fs::remove_file(path).map_err(|e| OpError::io(path, e))?;
    if let Some(parent) = path.parent().filter(|p| *p != dir) {
        // Only succeeds when empty, which is the point.
        let _ = fs::remove_dir(parent);
    }
    Ok(())
}
