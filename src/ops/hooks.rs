//! `install-hooks` / `uninstall-hooks`: the pre-commit hook that runs `teammem check --staged`,
//! installed into the hooks folder git really uses, chaining any hook that was already there.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::store;
use crate::git::{hooks_dir, repo};

use super::{OpError, Project};

/// The hook file name.
pub const HOOK: &str = "pre-commit";
/// Where an existing hook is kept and run from.
pub const CHAINED: &str = "pre-commit.teammem-chained";
/// The line that marks a hook as teammem's own.
pub const MARKER: &str = "# teammem pre-commit hook";

/// What installing or uninstalling did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookAction {
    /// The hook was written.
    Installed,
    /// teammem's hook was there; it was rewritten because it differed.
    Updated,
    /// teammem's hook was there and up to date.
    Unchanged,
    /// teammem's hook was removed (and a chained hook put back).
    Removed,
    /// teammem's hook was not installed.
    NotInstalled,
}

/// The outcome of `install-hooks` or `uninstall-hooks`.
#[derive(Debug, Clone, Serialize)]
pub struct HookOutcome {
    /// What happened.
    pub action: HookAction,
    /// The hook file.
    pub hook: PathBuf,
    /// The user's own hook, run first by teammem's hook (install) or put back (uninstall).
    pub chained: Option<PathBuf>,
}

/// The hook script. `binary` is tried first, then `teammem` on PATH.
pub fn hook_script(binary: &Path) -> String {
    let binary = shell_quote(&binary.display().to_string());
    format!(
        r#"#!/bin/sh
{MARKER} — installed by `teammem install-hooks`, removed by `teammem uninstall-hooks`.
# Refuses a commit that stages a secret, an invalid memory, a stale MEMORY.md or a risky memory.
# The hook that was here before runs first, from {CHAINED}.
hooks_dir=$(dirname "$0")
if [ -x "$hooks_dir/{CHAINED}" ]; then
  "$hooks_dir/{CHAINED}" "$@" || exit $?
fi
teammem={binary}
if [ ! -x "$teammem" ]; then
  teammem=teammem
fi
if ! command -v "$teammem" >/dev/null 2>&1; then
  echo "teammem: not found, so the team memory was not checked (install it, or run 'teammem uninstall-hooks')" >&2
  exit 0
fi
"$teammem" check --staged
status=$?
if [ "$status" -ne 0 ]; then
  echo "teammem: commit refused: the staged team memory (.qwen/team-memory/) has the problems listed above." >&2
  echo "teammem: fix the files, 'git add' them again and commit; a secret must also be rotated if it was ever pushed." >&2
fi
exit "$status"
"#
    )
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Installs the hook. Idempotent; a foreign hook is moved to [`CHAINED`] and run first.
pub fn install(project: &Project, binary: &Path) -> Result<HookOutcome, OpError> {
    let dir = hooks_folder(project)?;
    let hook = dir.join(HOOK);
    let chained = dir.join(CHAINED);
    let script = hook_script(binary);
    let existing = read_if_file(&hook)?;
    let action = match &existing {
        Some(text) if text.contains(MARKER) => {
            if *text == script {
                HookAction::Unchanged
            } else {
                HookAction::Updated
            }
        }
        Some(_) => {
            if std::fs::symlink_metadata(&chained).is_ok() {
                return Err(OpError::Refused(format!(
                    "{} is not teammem's hook, and {} already exists — merge them by hand, then run install-hooks again",
                    hook.display(),
                    chained.display()
                )));
            }
            std::fs::rename(&hook, &chained).map_err(|e| OpError::io(&hook, e))?;
            HookAction::Installed
        }
        None => HookAction::Installed,
    };
    if action != HookAction::Unchanged {
        store::write_atomic(&hook, script.as_bytes())?;
        make_executable(&hook)?;
    }
    Ok(HookOutcome {
        action,
        chained: std::fs::symlink_metadata(&chained)
            .is_ok()
            .then_some(chained),
        hook,
    })
}

/// Removes teammem's hook and puts a chained hook back in its place.
pub fn uninstall(project: &Project) -> Result<HookOutcome, OpError> {
    let dir = hooks_folder(project)?;
    let hook = dir.join(HOOK);
    let chained = dir.join(CHAINED);
    let ours = read_if_file(&hook)?.is_some_and(|t| t.contains(MARKER));
    if !ours {
        return Ok(HookOutcome {
            action: HookAction::NotInstalled,
            hook,
            chained: None,
        });
    }
    std::fs::remove_file(&hook).map_err(|e| OpError::io(&hook, e))?;
    let restored = if std::fs::symlink_metadata(&chained).is_ok() {
        std::fs::rename(&chained, &hook).map_err(|e| OpError::io(&chained, e))?;
        Some(hook.clone())
    } else {
        None
    };
    Ok(HookOutcome {
        action: HookAction::Removed,
        hook,
        chained: restored,
    })
}

fn hooks_folder(project: &Project) -> Result<PathBuf, OpError> {
    let repo = repo::open(project.git_root()?)?;
    let dir = hooks_dir::hooks_dir(&repo)?;
    std::fs::create_dir_all(&dir).map_err(|e| OpError::io(&dir, e))?;
    Ok(dir)
}

/// The text of a regular file (following a symlink, as git does when it runs a hook).
fn read_if_file(path: &Path) -> Result<Option<String>, OpError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OpError::io(path, e)),
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), OpError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| OpError::io(path, e))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), OpError> {
    Ok(())
}
