//! The user's own git settings: global, XDG and system config, never the repository's. A
//! setting that loosens what teammem lets an agent do is read only here, so that no file a
//! repository carries (its `.git/config` included, which `git clone` never fills from the
//! remote, but also no committed `.qwen/settings.json`, `.mcp.json` or check config) can
//! switch it on for the people who clone it.
//!
//! Where the environment moves those files (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`,
//! `GIT_CONFIG_NOSYSTEM`), teammem reads the ones git reads ([`open_default`],
//! [`follow_environment`]). libgit2 follows these variables only for a repository opened with
//! `FROM_ENV`, which would also take the repository's layout from the environment
//! (`GIT_WORK_TREE`, `GIT_INDEX_FILE`, …) its own way. One difference is left: a conditional
//! include (`includeIf`) in the file `GIT_CONFIG_GLOBAL` names is not followed.

use std::path::Path;

use git2::{Config, ConfigLevel, Repository};

/// What a level reads when git reads no file there: libgit2 reads it as an empty file.
const NO_FILE: &str = "/dev/null";

/// The value of `key` in the user's own git config, when it is set and not empty.
pub fn user_setting(key: &str) -> Option<String> {
    let config = open_default().ok()?;
    config
        .get_string(key)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The user's and the system's git config, from the files git reads: the system file (none
/// under `GIT_CONFIG_NOSYSTEM`, the one `GIT_CONFIG_SYSTEM` names), the XDG file and
/// `~/.gitconfig` (only the one `GIT_CONFIG_GLOBAL` names, when set).
pub fn open_default() -> Result<Config, git2::Error> {
    let mut config = Config::open_default()?;
    follow_moved_files(&mut config)?;
    Ok(config)
}

/// Makes `repo` read the user's and the system's config from the files git reads where the
/// environment moves them (see [`open_default`]); nothing changes when it moves none.
pub fn follow_environment(repo: &Repository) -> Result<(), git2::Error> {
    let moved = [
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
    ];
    if !moved.iter().any(|v| std::env::var_os(v).is_some()) {
        return Ok(());
    }
    let mut config = repo.config()?;
    follow_moved_files(&mut config)?;
    repo.set_config(&config)
}

/// Replaces the levels of `config` whose file the environment moves.
fn follow_moved_files(config: &mut Config) -> Result<(), git2::Error> {
    let no_system = std::env::var("GIT_CONFIG_NOSYSTEM")
        .ok()
        .is_some_and(|v| Config::parse_bool(v).unwrap_or(false));
    if no_system {
        config.add_file(Path::new(NO_FILE), ConfigLevel::System, true)?;
    } else if let Some(system) = std::env::var_os("GIT_CONFIG_SYSTEM") {
        config.add_file(Path::new(&system), ConfigLevel::System, true)?;
    }
    if let Some(global) = std::env::var_os("GIT_CONFIG_GLOBAL") {
        // git then reads neither `~/.gitconfig` nor the XDG file.
        config.add_file(Path::new(&global), ConfigLevel::Global, true)?;
        config.add_file(Path::new(NO_FILE), ConfigLevel::XDG, true)?;
    }
    Ok(())
}
