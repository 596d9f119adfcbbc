//! Living beside Qwen Code's own team memory: what session start leaves out or adds when Qwen
//! Code reads the same folder.
//!
//! With `memory.enableTeamMemory` on, Qwen Code rebuilds the team `MEMORY.md` and puts it in
//! the system prompt itself, so teammem's Qwen hook does not repeat it. With
//! `memory.enableTeamMemorySync` on, Qwen Code commits and pushes the team folder with none of
//! teammem's checks; teammem warns in its sync line (its pre-commit hook, when installed, still
//! refuses a commit that adds a secret, Qwen's included).

use crate::ops::Project;

/// The line that tells the agent how to share a memory with the team.
pub const SHARE_LINE: &str = "To share a private memory with the team, run `teammem share PATH-OR-ID` (it is checked for secrets and trust rules before it is written).";

/// The warning added to the sync line when Qwen Code's own sync is on.
pub const QWEN_SYNC_WARNING: &str = "warning: Qwen Code's own team memory sync is on (memory.enableTeamMemorySync or QWEN_CODE_MEMORY_TEAM_SYNC=1), which commits and pushes .qwen/team-memory/ without teammem's checks — set \"enableTeamMemorySync\": false in .qwen/settings.json; teammem's pre-commit hook (`teammem install-hooks`) still refuses a commit with a secret";

/// What session start shows, given who runs it: the project whose scopes go into the context
/// (without team scope when Qwen Code injects the team index itself) and a note saying so.
pub fn context_project(project: &Project, qwen_hook: bool) -> (Project, Option<String>) {
    let mut shown = project.clone();
    let team_dir = project
        .layout
        .memory_dir(crate::domain::scope::ScopeKind::Team)
        .filter(|d| d.is_dir());
    if qwen_hook && project.switches.team && project.switches.qwen_team && team_dir.is_some() {
        shown.switches.team = false;
        return (
            shown,
            Some("Team memory: Qwen Code shows the team index (.qwen/team-memory/MEMORY.md) itself, so it is not repeated here.".into()),
        );
    }
    (shown, None)
}

/// The sync line, with the warning when Qwen Code's own sync is on.
pub fn sync_line(project: &Project, line: String) -> String {
    if project.switches.qwen_sync {
        format!("{} — {QWEN_SYNC_WARNING}.", line.trim_end_matches('.'))
    } else {
        line
    }
}
