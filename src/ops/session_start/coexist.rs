//! Living beside Qwen Code's own team memory: what session start leaves out or adds when Qwen
//! Code reads the same folder.
//!
//! With `memory.enableTeamMemory` on, Qwen Code rebuilds the team `MEMORY.md` and puts it in
//! the system prompt itself, so teammem's Qwen hook does not repeat it. With
//! `memory.enableTeamMemorySync` on, Qwen Code commits and pushes the team folder with none of
//! teammem's checks; teammem warns in its sync line (its pre-commit hook, when installed, still
//! refuses a commit that adds a secret, Qwen's included).

use crate::domain::scope::ScopeKind;
use crate::ops::Project;

/// The line that tells the agent how to share a memory with the team.
pub const SHARE_LINE: &str = "To share a private memory with the team, run `teammem share PATH-OR-ID` (it is checked for secrets and trust rules before it is written).";

/// The warning added to the sync line when Qwen Code's own sync is on.
pub const QWEN_SYNC_WARNING: &str = "warning: Qwen Code's own team memory sync is on (memory.enableTeamMemorySync or QWEN_CODE_MEMORY_TEAM_SYNC=1), which commits and pushes .qwen/team-memory/ without teammem's checks — set \"enableTeamMemorySync\": false in .qwen/settings.json; teammem's pre-commit hook (`teammem install-hooks`) still refuses a commit with a secret";

/// What session start shows to a client: the scopes whose indexes go into the context and
/// the notes that say what was left out.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The scopes whose indexes teammem renders.
    pub scopes: Vec<ScopeKind>,
    /// Lines saying what the client shows itself.
    pub notes: Vec<String>,
    /// Whether Qwen Code shows the team index itself (so teammem's gate cannot keep a
    /// withheld memory out of it).
    pub team_by_qwen: bool,
}

/// What session start shows, given who runs it. Qwen Code puts its own private and user
/// indexes in the system prompt (and recalls from them every turn), so its hook leaves them
/// out; with `memory.enableTeamMemory` on it shows the team index too, which is then left out
/// as well.
pub fn shown(project: &Project, qwen_hook: bool) -> Shown {
    let mut shown = Shown {
        scopes: project.default_scopes(),
        notes: Vec::new(),
        team_by_qwen: false,
    };
    if !qwen_hook {
        return shown;
    }
    shown
        .scopes
        .retain(|s| !matches!(s, ScopeKind::Private | ScopeKind::User));
    shown.notes.push(
        "Private and user memory: Qwen Code shows and recalls them itself, so they are not repeated here.".into(),
    );
    let team_dir = project
        .layout
        .memory_dir(ScopeKind::Team)
        .filter(|d| d.is_dir());
    if project.switches.team && project.switches.qwen_team && team_dir.is_some() {
        shown.scopes.retain(|s| *s != ScopeKind::Team);
        shown.team_by_qwen = true;
        shown.notes.push(
            "Team memory: Qwen Code shows the team index (.qwen/team-memory/MEMORY.md) itself, so it is not repeated here.".into(),
        );
    }
    shown
}

/// The line for team memories the gate withholds while Qwen Code shows the team index
/// itself: Qwen Code's index still lists them, which teammem cannot prevent on the current
/// branch; branch mode keeps them out of the folder Qwen Code reads.
pub fn qwen_withheld_line(
    count: usize,
    rules: &crate::domain::gate::BrokenRules,
) -> Option<String> {
    let line = crate::domain::gate::withheld_line(count, rules)?;
    Some(format!(
        "{line} Qwen Code's own team index (.qwen/team-memory/MEMORY.md) still lists {} — do \
         not read {} from there; branch mode (`teammem init --branch`) keeps withheld memories \
         out of the team folder.",
        if count == 1 {
            "that file"
        } else {
            "those files"
        },
        if count == 1 { "it" } else { "them" },
    ))
}

/// The sync line, with the warning when Qwen Code's own sync is on.
pub fn sync_line(project: &Project, line: String) -> String {
    if project.switches.qwen_sync {
        format!("{} — {QWEN_SYNC_WARNING}.", line.trim_end_matches('.'))
    } else {
        line
    }
}
