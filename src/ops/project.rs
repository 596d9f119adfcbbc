//! The project a command runs in: its repository (if any), its scopes and their switches.

use std::path::{Path, PathBuf};

use crate::domain::gate;
use crate::domain::scope::{Environment, Layout, ScopeKind, TEAM_DIR, TeamSettings, TeamSwitches};
use crate::domain::store::{self, Loaded};
use crate::git::repo::{self, RepoPaths};

use super::OpError;

/// Everything a command needs to know about where memories live.
#[derive(Debug, Clone)]
pub struct Project {
    /// The folder the command runs in (`-C DIR`, else the process's): relative paths a user
    /// gives are taken from here.
    pub cwd: PathBuf,
    /// The process environment that shaped the layout.
    pub env: Environment,
    /// The repository, when the command runs inside one.
    pub repo: Option<RepoPaths>,
    /// Each scope's folders.
    pub layout: Layout,
    /// Whether team memory and its sync are on.
    pub switches: TeamSwitches,
    /// Problems worth a warning (an unreadable settings file).
    pub warnings: Vec<String>,
}

impl Project {
    /// Resolves the project around `cwd` with the process environment.
    pub fn open(cwd: &Path) -> Result<Project, OpError> {
        Project::open_with(cwd, Environment::from_process())
    }

    /// [`Project::open`] for a command that reads files only (`scan`): a plain repository is
    /// found without starting libgit2 (see [`repo::discover_plain`]).
    pub fn open_plain(cwd: &Path) -> Result<Project, OpError> {
        let repo = match repo::discover_plain(cwd) {
            Some(found) => found,
            None => repo::discover(cwd)?,
        };
        Project::open_found(cwd, Environment::from_process(), repo)
    }

    /// Resolves the project around `cwd` with a given environment.
    pub fn open_with(cwd: &Path, env: Environment) -> Result<Project, OpError> {
        let repo = repo::discover(cwd)?;
        Project::open_found(cwd, env, repo)
    }

    /// The project around `cwd`, whose repository was found already.
    fn open_found(
        cwd: &Path,
        env: Environment,
        repo: Option<RepoPaths>,
    ) -> Result<Project, OpError> {
        let layout = Layout::new(&env, cwd, repo.as_ref().map(|r| r.workdir.clone()));
        let mut warnings = Vec::new();
        let mut settings = TeamSettings::default();
        // Qwen Code's user settings live in its own folder ($QWEN_HOME), not the memory base.
        let mut files = vec![env.qwen_dir(cwd).join("settings.json")];
        if let Some(r) = &repo {
            files.push(r.workdir.join(".qwen/settings.json"));
        }
        for file in files {
            match std::fs::read_to_string(&file) {
                Ok(text) => match TeamSettings::from_json(&text) {
                    Ok(read) => settings = settings.overlay(read),
                    Err(e) => warnings.push(format!(
                        "{}: not valid JSON ({e}); its memory settings are ignored",
                        file.display()
                    )),
                },
                Err(_) => continue,
            }
        }
        // A clone in branch mode may have no folder yet: its first sync materialises it.
        let team_exists = layout
            .memory_dir(ScopeKind::Team)
            .is_some_and(|d| d.is_dir())
            || repo
                .as_ref()
                .is_some_and(|r| crate::git::memory_branch::likely_in_use(&r.git_dir));
        let switches = settings.resolve(&env, team_exists);
        Ok(Project {
            cwd: cwd.to_path_buf(),
            env,
            repo,
            layout,
            switches,
            warnings,
        })
    }

    /// The repository's work-tree root, or a usage error naming the command's need for one.
    pub fn git_root(&self) -> Result<&Path, OpError> {
        self.repo
            .as_ref()
            .map(|r| r.workdir.as_path())
            .ok_or_else(|| OpError::Usage("not inside a git repository — run this in your project's work tree (or pass -C DIR)".into()))
    }

    /// Where the repository lives, or a usage error as [`Project::git_root`] gives.
    pub fn repo_paths(&self) -> Result<&RepoPaths, OpError> {
        self.git_root()?;
        self.repo
            .as_ref()
            .ok_or_else(|| OpError::Usage("not inside a git repository".into()))
    }

    /// Opens the project's repository (as [`repo::discover`] found it).
    pub fn open_repository(&self) -> Result<git2::Repository, OpError> {
        Ok(repo::open(self.repo_paths()?)?)
    }

    /// A scope's memory folder (which may not exist yet).
    pub fn scope_dir(&self, scope: ScopeKind) -> Result<PathBuf, OpError> {
        match self.layout.memory_dir(scope) {
            Some(dir) => Ok(dir),
            None => Err(OpError::Usage(format!(
                "the {scope} scope lives in a git repository — run this inside your project's work tree (or pass -C DIR)"
            ))),
        }
    }

    /// The scopes a command works on when none is named: user and private always (private only
    /// inside a repository), team when it is switched on.
    pub fn default_scopes(&self) -> Vec<ScopeKind> {
        ScopeKind::ALL
            .into_iter()
            .filter(|s| match s {
                ScopeKind::User => true,
                ScopeKind::Private => self.repo.is_some(),
                ScopeKind::Team => self.repo.is_some() && self.switches.team,
            })
            .collect()
    }

    /// How a scope's files are named in messages: relative to the repository for team memory,
    /// the full path otherwise.
    pub fn shown_prefix(&self, scope: ScopeKind) -> String {
        match scope {
            ScopeKind::Team => format!("{TEAM_DIR}/"),
            _ => self
                .layout
                .memory_dir(scope)
                .map(|d| format!("{}/", d.display()))
                .unwrap_or_default(),
        }
    }

    /// Refuses a scope folder reached through a symlink (team: `.qwen` or `.qwen/team-memory`
    /// below the git root; private with `QWEN_CODE_MEMORY_LOCAL=1` likewise).
    pub fn check_scope_safe(&self, scope: ScopeKind) -> Result<PathBuf, OpError> {
        let dir = self.scope_dir(scope)?;
        let anchor = match (scope, &self.repo) {
            (ScopeKind::Team, Some(r)) => r.workdir.clone(),
            (ScopeKind::Private, Some(r)) if self.layout.local_private => r.workdir.clone(),
            _ => dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| dir.clone()),
        };
        store::check_no_symlinked_parents(&anchor, &dir)?;
        Ok(dir)
    }

    /// Reads and validates a scope's memories after the safety check.
    pub fn load(&self, scope: ScopeKind) -> Result<Loaded, OpError> {
        let dir = self.check_scope_safe(scope)?;
        Ok(store::load(&dir, &self.shown_prefix(scope))?)
    }

    /// Regenerates a scope's `MEMORY.md` from its memories, as Qwen Code would, leaving out a line
    /// that would carry a secret in a gated scope. Returns whether it wrote and what was loaded
    /// (unreadable files are left out of the index).
    pub fn rebuild_index(&self, scope: ScopeKind) -> Result<(bool, Loaded), OpError> {
        let loaded = self.load(scope)?;
        let dir = self.scope_dir(scope)?;
        let policy = super::guard::index_policy(self, scope);
        let text = match scope {
            ScopeKind::Team => gate::team_index_md(
                loaded
                    .memories
                    .iter()
                    .filter_map(store::StoredMemory::index_entry),
                policy.as_ref(),
            ),
            _ => gate::dated_index_md(
                store::dated_entries(&dir, &loaded.memories),
                policy.as_ref(),
            ),
        };
        if !dir.exists() && text.is_empty() {
            return Ok((false, loaded));
        }
        let wrote = store::write_index(&dir, &text)?;
        Ok((wrote, loaded))
    }
}
