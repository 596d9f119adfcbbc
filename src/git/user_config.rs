//! The user's own git settings: global, XDG and system config, never the repository's. A
//! setting that loosens what teammem lets an agent do is read only here, so that no file a
//! repository carries (its `.git/config` included, which `git clone` never fills from the
//! remote, but also no committed `.qwen/settings.json`, `.mcp.json` or check config) can
//! switch it on for the people who clone it.

/// The value of `key` in the user's own git config, when it is set and not empty.
///
/// libgit2 reads `$HOME/.gitconfig`, `$XDG_CONFIG_HOME/git/config` and the system file; unlike
/// the git CLI it does not follow `GIT_CONFIG_GLOBAL`.
pub fn user_setting(key: &str) -> Option<String> {
    let config = git2::Config::open_default().ok()?;
    config
        .get_string(key)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}
