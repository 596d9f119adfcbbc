//! Where each scope's memories live, laid out as Qwen Code lays them out.
//!
//! - team: `<git-root>/.qwen/team-memory/`
//! - private: `<base>/projects/<sanitized-git-root>/memory/` (or `<git-root>/.qwen/memory/` when
//!   `QWEN_CODE_MEMORY_LOCAL=1`), with `meta.json` and `consolidation.lock` beside `memory/`
//! - user: `<base>/memories/`
//!
//! `<base>` is resolved as Qwen Code 0.24 resolves it: `$QWEN_CODE_MEMORY_BASE_DIR`, else
//! `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen` (a leading `~` is the home folder, a
//! relative path is taken from the folder the command runs in). `<sanitized-git-root>` is the
//! working folder instead with `QWEN_CODE_MEMORY_PROJECT_SCOPE=workspace`, and the local
//! private folder (`QWEN_CODE_MEMORY_LOCAL=1`) sits in the working folder, as in Qwen Code.
//! User settings are read from `$QWEN_HOME/settings.json` (else `~/.qwen/settings.json`).

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
    /// `$QWEN_HOME`: Qwen Code's own folder (user settings, and the memory base by default).
    pub qwen_home: Option<PathBuf>,
    /// `$QWEN_RUNTIME_DIR`: where Qwen Code keeps runtime output, memory included.
    pub runtime_dir: Option<PathBuf>,
    /// `$QWEN_CODE_MEMORY_PROJECT_SCOPE`: `workspace` keys private memory by the working folder.
    pub project_scope: Option<String>,
}

impl Environment {
    /// Reads the variables from the process environment.
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let text = |k: &str| var(k).map(|v| v.to_string_lossy().into_owned());
        Environment {
            base_dir: var("QWEN_CODE_MEMORY_BASE_DIR").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
            memory_local: text("QWEN_CODE_MEMORY_LOCAL"),
            team: text("QWEN_CODE_MEMORY_TEAM"),
            team_sync: text("QWEN_CODE_MEMORY_TEAM_SYNC"),
            qwen_home: var("QWEN_HOME").map(PathBuf::from),
            runtime_dir: var("QWEN_RUNTIME_DIR").map(PathBuf::from),
            project_scope: var("QWEN_CODE_MEMORY_PROJECT_SCOPE")
                .map(|v| v.to_string_lossy().into_owned()),
        }
    }

    /// A path as Qwen Code resolves one from the environment: `~` and `~/…` are the home
    /// folder, a relative path is taken from `cwd`.
    fn resolve(&self, path: &Path, cwd: &Path) -> PathBuf {
        let text = path.to_string_lossy();
        let expanded = match (&self.home, text.as_ref()) {
            (Some(home), "~") => home.clone(),
            (Some(home), t) if t.starts_with("~/") => home.join(&t[2..]),
            _ => path.to_path_buf(),
        };
        if expanded.is_absolute() {
            expanded
        } else {
            cwd.join(expanded)
        }
    }

    /// Qwen Code's own folder: `$QWEN_HOME`, else `~/.qwen`, else `.qwen` in `cwd`.
    pub fn qwen_dir(&self, cwd: &Path) -> PathBuf {
        match (&self.qwen_home, &self.home) {
            (Some(dir), _) => self.resolve(dir, cwd),
            (None, Some(home)) => home.join(".qwen"),
            (None, None) => cwd.join(".qwen"),
        }
    }

    /// `<base>`: `$QWEN_CODE_MEMORY_BASE_DIR`, else `$QWEN_RUNTIME_DIR`, else Qwen Code's own
    /// folder ([`qwen_dir`](Self::qwen_dir)). Relative values are taken from `cwd`.
    pub fn base_in(&self, cwd: &Path) -> PathBuf {
        match (&self.base_dir, &self.runtime_dir) {
            (Some(base), _) => self.resolve(base, cwd),
            (None, Some(runtime)) => self.resolve(runtime, cwd),
            (None, None) => self.qwen_dir(cwd),
        }
    }

    /// [`base_in`](Self::base_in) for the process's folder.
    pub fn base(&self) -> PathBuf {
        self.base_in(&std::env::current_dir().unwrap_or_default())
    }

    /// Whether private memory is keyed by the working folder rather than the git root.
    pub fn workspace_scope(&self) -> bool {
        self.project_scope
            .as_deref()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("workspace"))
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
    /// Private memory goes to `<project-key>/.qwen/memory/`.
    pub local_private: bool,
    /// What names the project's private folder: the git root, or the working folder with
    /// `QWEN_CODE_MEMORY_PROJECT_SCOPE=workspace` or outside a repository.
    pub project_key: Option<PathBuf>,
}

impl Layout {
    /// Resolves the layout from the environment, the working folder and the git root (if any).
    pub fn new(env: &Environment, cwd: &Path, git_root: Option<PathBuf>) -> Self {
        let local = env.memory_local.as_deref() == Some("1");
        // Qwen keys private memory by the git root, or the working folder when asked; the local
        // folder always sits in the working folder. teammem keeps private memory to
        // repositories, as before.
        let project_key = match (&git_root, local || env.workspace_scope()) {
            (Some(_), true) => Some(cwd.to_path_buf()),
            (Some(root), false) => Some(root.clone()),
            (None, _) => None,
        };
        Layout {
            local_private: local && git_root.is_some(),
            git_root,
            base: env.base_in(cwd),
            project_key,
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

    /// [`Layout::state_dir`] under teammem's base folder even for a private scope kept in the
    /// work tree: where caches and records live that must never sit in the repository's folder.
    pub fn outside_state_dir(&self, scope: ScopeKind) -> Option<PathBuf> {
        Layout {
            local_private: false,
            ..self.clone()
        }
        .state_dir(scope)
    }

    /// Where a scope keeps its machine-local state (`meta.json`, `consolidation.lock`,
    /// baselines): beside the memory folder, never inside it.
    pub fn state_dir(&self, scope: ScopeKind) -> Option<PathBuf> {
        match scope {
            ScopeKind::Private if self.local_private => {
                Some(self.project_key.as_ref()?.join(".qwen"))
            }
            ScopeKind::Private | ScopeKind::Team => {
                let root = self.project_key.as_ref()?;
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

/// The switches that turn team memory and its syncs on or off, teammem's and Qwen Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TeamSwitches {
    /// Team memory is read and shown to agents.
    pub team: bool,
    /// teammem's session start syncs team memory through git (through the gate).
    pub sync: bool,
    /// Qwen Code itself reads team memory and injects its index (`memory.enableTeamMemory`, and
    /// no folder trust that could keep it from this folder).
    pub qwen_team: bool,
    /// Qwen Code's own team sync runs (`memory.enableTeamMemorySync`): it commits and pushes
    /// without teammem's gate, so teammem warns.
    pub qwen_sync: bool,
}

/// `memory.enableTeamMemory` and `memory.enableTeamMemorySync`, as read from settings files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamSettings {
    /// `memory.enableTeamMemory`.
    pub enable_team_memory: Option<bool>,
    /// `memory.enableTeamMemorySync`.
    pub enable_team_memory_sync: Option<bool>,
    /// `security.folderTrust.enabled`: Qwen Code reads team memory only in folders it trusts.
    pub folder_trust: Option<bool>,
}

impl TeamSettings {
    /// Reads the switches from a Qwen Code `settings.json`. A missing or unreadable file, or a
    /// file without the keys, leaves them unset; the error text is returned for a warning.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let memory = value.get("memory");
        let flag = |key: &str| memory.and_then(|m| m.get(key)).and_then(|v| v.as_bool());
        let folder_trust = value
            .pointer("/security/folderTrust/enabled")
            .and_then(|v| v.as_bool());
        Ok(TeamSettings {
            enable_team_memory: flag("enableTeamMemory"),
            enable_team_memory_sync: flag("enableTeamMemorySync"),
            folder_trust,
        })
    }

    /// Layers `over` on top of `self` (project settings over user settings).
    pub fn overlay(self, over: TeamSettings) -> TeamSettings {
        TeamSettings {
            enable_team_memory: over.enable_team_memory.or(self.enable_team_memory),
            enable_team_memory_sync: over
                .enable_team_memory_sync
                .or(self.enable_team_memory_sync),
            folder_trust: over.folder_trust.or(self.folder_trust),
        }
    }

    /// Applies the environment overrides (`1` on, `0` off, anything else: the setting).
    ///
    /// Qwen Code's switches are Qwen's rule exactly: off unless set. teammem's team memory is on
    /// when set, or with no setting when the team folder exists; teammem syncs whenever team
    /// memory is on — `memory.enableTeamMemorySync` is Qwen's own sync, which should stay off
    /// with teammem — unless `QWEN_CODE_MEMORY_TEAM_SYNC=0` switches every team sync off.
    pub fn resolve(self, env: &Environment, team_dir_exists: bool) -> TeamSwitches {
        let over = |v: &Option<String>| match v.as_deref() {
            Some("1") => Some(true),
            Some("0") => Some(false),
            _ => None,
        };
        // With folder trust on, Qwen Code reads team memory only in a folder it trusts, which
        // teammem cannot tell: it counts Qwen's team memory as off, so the index is shown
        // (perhaps twice), never left out.
        let trusting = self.folder_trust != Some(true);
        let qwen_reads = over(&env.team).or(self.enable_team_memory).unwrap_or(false);
        let qwen_sync = over(&env.team_sync)
            .or(self.enable_team_memory_sync)
            .unwrap_or(false);
        let team = over(&env.team)
            .or(self.enable_team_memory)
            .unwrap_or(team_dir_exists);
        let sync = over(&env.team_sync).unwrap_or(true);
        TeamSwitches {
            team,
            sync: team && sync,
            qwen_team: qwen_reads && trusting,
            // Warned about even when Qwen may not trust the folder: it might.
            qwen_sync: qwen_reads && qwen_sync,
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
        let cwd = Path::new("/w/r/sub");
        let layout = Layout::new(&env, cwd, Some("/w/r".into()));
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
            cwd,
            Some("/w/r".into()),
        );
        assert_eq!(
            local.memory_dir(ScopeKind::Private).unwrap(),
            Path::new("/w/r/sub/.qwen/memory")
        );
        let workspace = Layout::new(
            &Environment {
                project_scope: Some(" Workspace ".into()),
                ..env.clone()
            },
            cwd,
            Some("/w/r".into()),
        );
        assert_eq!(
            workspace.memory_dir(ScopeKind::Private).unwrap(),
            Path::new("/base/projects/-w-r-sub/memory")
        );
    }

    #[test]
    fn the_base_is_resolved_as_qwen_code_resolves_it() {
        let cwd = Path::new("/w");
        let env =
            |base: Option<&str>, runtime: Option<&str>, qwen_home: Option<&str>| Environment {
                base_dir: base.map(PathBuf::from),
                runtime_dir: runtime.map(PathBuf::from),
                qwen_home: qwen_home.map(PathBuf::from),
                home: Some("/home/ada".into()),
                ..Default::default()
            };
        assert_eq!(
            env(None, None, None).base_in(cwd),
            Path::new("/home/ada/.qwen")
        );
        assert_eq!(
            env(None, None, Some("~/q")).base_in(cwd),
            Path::new("/home/ada/q")
        );
        assert_eq!(
            env(None, Some("rt"), Some("/q")).base_in(cwd),
            Path::new("/w/rt")
        );
        assert_eq!(
            env(Some("/m"), Some("/rt"), Some("/q")).base_in(cwd),
            Path::new("/m")
        );
        assert_eq!(
            env(Some("/m"), None, Some("/q")).qwen_dir(cwd),
            Path::new("/q")
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
                sync: true,
                qwen_team: true,
                qwen_sync: false,
            }
        );
        let env = Environment {
            team_sync: Some("1".into()),
            ..Default::default()
        };
        assert!(settings.resolve(&env, false).qwen_sync);
        let env = Environment {
            team_sync: Some("0".into()),
            ..Default::default()
        };
        assert!(!settings.resolve(&env, true).sync);
        let env = Environment {
            team: Some("0".into()),
            ..Default::default()
        };
        assert!(!settings.resolve(&env, true).team);
        let env = Environment {
            team: Some("yes".into()),
            ..Default::default()
        };
        let default = TeamSettings::default().resolve(&env, true);
        assert!(default.team && default.sync && !default.qwen_team && !default.qwen_sync);
    }
}
