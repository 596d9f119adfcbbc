//! Where each scope's memories live, laid out as Qwen Code lays them out.
//!
//! - team: `<git-root>/.qwen/team-memory/`
//! - private: `<base>/projects/<sanitized-git-root>/memory/` (or `<git-root>/.qwen/memory/` when
//!   `QWEN_CODE_MEMORY_LOCAL=1`), with `meta.json` and `consolidation.lock` beside `memory/`
//! - user: `<base>/memories/`
//!
//! `<base>` is `$QWEN_CODE_MEMORY_BASE_DIR` or `~/.qwen`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The team folder, relative to the git root.
pub const TEAM_DIR: &str = ".qwen/team-memory";
/// The generated index's file name in every scope folder.
pub const INDEX_FILE: &str = "MEMORY.md";

/// Which memory a command works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeKind {
    /// Shared with the team through the repository.
    Team,
    /// This project, this machine only.
    Private,
    /// Across all projects, this machine only.
    User,
}

impl ScopeKind {
    /// All scopes in the order their context is shown.
    pub const ALL: [ScopeKind; 3] = [ScopeKind::User, ScopeKind::Private, ScopeKind::Team];

    /// Parses a scope name as written on the command line.
    pub fn parse(text: &str) -> Option<ScopeKind> {
        ScopeKind::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The scope's name as written on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Team => "team",
            ScopeKind::Private => "private",
            ScopeKind::User => "user",
        }
    }
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The environment that decides where memories live; read once, passed down.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// `$QWEN_CODE_MEMORY_BASE_DIR`.
    pub base_dir: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$QWEN_CODE_MEMORY_LOCAL`.
    pub memory_local: Option<String>,
    /// `$QWEN_CODE_MEMORY_TEAM`.
    pub team: Option<String>,
    /// `$QWEN_CODE_MEMORY_TEAM_SYNC`.
    pub team_sync: Option<String>,
}

impl Environment {
    /// Reads the variables from the process environment.
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Environment {
            base_dir: var("QWEN_CODE_MEMORY_BASE_DIR").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
            memory_local: var("QWEN_CODE_MEMORY_LOCAL").map(|v| v.to_string_lossy().into_owned()),
            team: var("QWEN_CODE_MEMORY_TEAM").map(|v| v.to_string_lossy().into_owned()),
            team_sync: var("QWEN_CODE_MEMORY_TEAM_SYNC").map(|v| v.to_string_lossy().into_owned()),
        }
    }

    /// `<base>`: `$QWEN_CODE_MEMORY_BASE_DIR`, else `~/.qwen`, else `.qwen` in the current folder.
    pub fn base(&self) -> PathBuf {
        match (&self.base_dir, &self.home) {
            (Some(base), _) => base.clone(),
            (None, Some(home)) => home.join(".qwen"),
            (None, None) => PathBuf::from(".qwen"),
        }
    }
}

/// Every char not `[a-zA-Z0-9]` becomes `-`, as Qwen Code names per-project folders.
pub fn sanitize_git_root(root: &Path) -> String {
    root.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The resolved folders of every scope for one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The repository's work-tree root, when there is one.
    pub git_root: Option<PathBuf>,
    /// `<base>`.
    pub base: PathBuf,
    /// Private memory goes to `<git-root>/.qwen/memory/`.
    pub local_private: bool,
}

impl Layout {
    /// Resolves the layout from the environment and the git root (if any).
    pub fn new(env: &Environment, git_root: Option<PathBuf>) -> Self {
        Layout {
            local_private: env.memory_local.as_deref() == Some("1") && git_root.is_some(),
            git_root,
            base: env.base(),
        }
    }

    /// The memory folder of a scope; `None` for team and private scopes outside a repository.
    pub fn memory_dir(&self, scope: ScopeKind) -> Option<PathBuf> {
        match scope {
            ScopeKind::Team => Some(self.git_root.as_ref()?.join(TEAM_DIR)),
            ScopeKind::Private => Some(self.state_dir(scope)?.join("memory")),
            ScopeKind::User => Some(self.base.join("memories")),
        }
    }

    /// Where a scope keeps its machine-local state (`meta.json`, `consolidation.lock`,
    /// baselines): beside the memory folder, never inside it.
    pub fn state_dir(&self, scope: ScopeKind) -> Option<PathBuf> {
        match scope {
            ScopeKind::Private if self.local_private => Some(self.git_root.as_ref()?.join(".qwen")),
            ScopeKind::Private | ScopeKind::Team => {
                let root = self.git_root.as_ref()?;
                let project = self.base.join("projects").join(sanitize_git_root(root));
                Some(match scope {
                    ScopeKind::Team => project.join("team"),
                    _ => project,
                })
            }
            ScopeKind::User => Some(self.base.clone()),
        }
    }

    /// The folder that a scope's files must stay inside (its symlink boundary).
    pub fn boundary(&self, scope: ScopeKind) -> Option<PathBuf> {
        self.memory_dir(scope)
    }
}

/// The two switches that turn team memory and its sync on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TeamSwitches {
    /// Team memory is read and shown to agents.
    pub team: bool,
    /// Session start syncs team memory through git.
    pub sync: bool,
}

/// `memory.enableTeamMemory` and `memory.enableTeamMemorySync`, as read from settings files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamSettings {
    /// `memory.enableTeamMemory`.
    pub enable_team_memory: Option<bool>,
    /// `memory.enableTeamMemorySync`.
    pub enable_team_memory_sync: Option<bool>,
}

impl TeamSettings {
    /// Reads the switches from a Qwen Code `settings.json`. A missing or unreadable file, or a
    /// file without the keys, leaves them unset; the error text is returned for a warning.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let memory = value.get("memory");
        let flag = |key: &str| memory.and_then(|m| m.get(key)).and_then(|v| v.as_bool());
        Ok(TeamSettings {
            enable_team_memory: flag("enableTeamMemory"),
            enable_team_memory_sync: flag("enableTeamMemorySync"),
        })
    }

    /// Layers `over` on top of `self` (project settings over user settings).
    pub fn overlay(self, over: TeamSettings) -> TeamSettings {
        TeamSettings {
            enable_team_memory: over.enable_team_memory.or(self.enable_team_memory),
            enable_team_memory_sync: over
                .enable_team_memory_sync
                .or(self.enable_team_memory_sync),
        }
    }

    /// Applies the environment overrides (`1` on, `0` off, anything else: the setting). With no
    /// setting at all, team memory is on when the team folder exists, and sync follows it.
    pub fn resolve(self, env: &Environment, team_dir_exists: bool) -> TeamSwitches {
        let over = |v: &Option<String>| match v.as_deref() {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        let team = over(&env.team)
            .or(self.enable_team_memory)
            .unwrap_or(team_dir_exists);
        let sync = over(&env.team_sync)
            .or(self.enable_team_memory_sync)
            .unwrap_or(team);
        TeamSwitches {
            team,
            sync: team && sync,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitized_root() {
        assert_eq!(
            sanitize_git_root(Path::new("/home/a b/repo.x")),
            "-home-a-b-repo-x"
        );
    }

    #[test]
    fn layout_paths() {
        let env = Environment {
            base_dir: Some("/base".into()),
            ..Default::default()
        };
        let layout = Layout::new(&env, Some("/w/r".into()));
        assert_eq!(
            layout.memory_dir(ScopeKind::Team).unwrap(),
            Path::new("/w/r/.qwen/team-memory")
        );
        assert_eq!(
            layout.memory_dir(ScopeKind::Private).unwrap(),
            Path::new("/base/projects/-w-r/memory")
        );
        assert_eq!(
            layout.memory_dir(ScopeKind::User).unwrap(),
            Path::new("/base/memories")
        );
        let local = Layout::new(
            &Environment {
                memory_local: Some("1".into()),
                ..env.clone()
            },
            Some("/w/r".into()),
        );
        assert_eq!(
            local.memory_dir(ScopeKind::Private).unwrap(),
            Path::new("/w/r/.qwen/memory")
        );
    }

    #[test]
    fn switches() {
        let settings = TeamSettings::from_json(
            r#"{"memory":{"enableTeamMemory":true,"enableTeamMemorySync":false}}"#,
        )
        .unwrap();
        let env = Environment::default();
        assert_eq!(
            settings.resolve(&env, false),
            TeamSwitches {
                team: true,
                sync: false
            }
        );
        let env = Environment {
            team_sync: Some("1".into()),
            ..Default::default()
        };
        assert_eq!(
            settings.resolve(&env, false),
            TeamSwitches {
                team: true,
                sync: true
            }
        );
        let env = Environment {
            team: Some("0".into()),
            ..Default::default()
        };
        assert!(!settings.resolve(&env, true).team);
        let env = Environment {
            team: Some("yes".into()),
            ..Default::default()
        };
        assert!(TeamSettings::default().resolve(&env, true).team);
    }
}
