//! `install-hooks` / `uninstall-hooks`: the `pre-commit` and `pre-merge-commit` hooks that run
//! `teammem check --staged`, and the `reference-transaction` hook that runs `teammem check
//! --ref-updates`, installed into the hooks folder git really uses, each chaining any hook that
//! was already there. `pre-merge-commit` covers what `pre-commit` cannot see: a merge that git
//! commits by itself (no conflict) bringing a secret in from another branch.
//! `reference-transaction` covers the commits no commit hook sees: `git cherry-pick`, `git
//! revert` and `git am` run neither `pre-commit` nor `commit-msg` for their commits, but every
//! ref update passes through it, and in its `prepared` state a non-zero exit aborts the update.
//! With the hooks comes the merge driver that regenerates the team `MEMORY.md` in a rebase,
//! merge or cherry-pick instead of merging it line by line ([`merge_driver`]). In a repository
//! libgit2 cannot open (reftable refs, SHA-256 objects) every hook is installed too: each check
//! reads the repository through git there.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::domain::store;
use crate::git::cli_repo::CliRepo;
use crate::git::hooks_dir;
use crate::git::merge_driver::{self, DriverChange};

use super::{OpError, Project};

/// The hooks teammem installs: one for commits, one for merges git commits without an editor,
/// one for the ref updates of commits made without either (cherry-pick, revert, am).
pub const HOOKS: [&str; 3] = ["pre-commit", "pre-merge-commit", REFERENCE_TRANSACTION];

/// The hook every ref update runs.
pub const REFERENCE_TRANSACTION: &str = "reference-transaction";

/// Where an existing `hook` is kept and run from.
pub fn chained_name(hook: &str) -> String {
    format!("{hook}{}", crate::git::recovery::CHAINED_HOOK_SUFFIX)
}

/// The line that marks `hook` as teammem's own.
pub fn marker(hook: &str) -> String {
    format!("# teammem {hook} hook")
}

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

/// The outcome of `install-hooks` or `uninstall-hooks` for one hook.
#[derive(Debug, Clone, Serialize)]
pub struct HookOutcome {
    /// The hook's name (`pre-commit`, `pre-merge-commit`, `reference-transaction`), or
    /// `merge-driver` for the `MEMORY.md` merge driver.
    pub name: &'static str,
    /// What happened.
    pub action: HookAction,
    /// The hook file (for the merge driver, the local attributes file naming it).
    pub hook: PathBuf,
    /// The user's own hook, run first by teammem's hook (install) or put back (uninstall).
    pub chained: Option<PathBuf>,
}

/// Where the hooks and the merge driver go.
struct HookPlace {
    /// The hooks folder git uses.
    hooks: PathBuf,
    /// The common git folder (local attributes, `.git/config`).
    common_dir: PathBuf,
}

fn hook_place(project: &Project) -> Result<HookPlace, OpError> {
    let paths = project.repo_paths()?;
    let place = match CliRepo::needing_git(paths) {
        Some(cli) => HookPlace {
            hooks: hooks_dir::hooks_dir_in(&cli.common_dir, &cli.paths.workdir)?,
            common_dir: cli.common_dir,
        },
        None => {
            let repo = project.open_repository()?;
            HookPlace {
                hooks: hooks_dir::hooks_dir(&repo)?,
                common_dir: repo.commondir().to_path_buf(),
            }
        }
    };
    std::fs::create_dir_all(&place.hooks).map_err(|e| OpError::io(&place.hooks, e))?;
    Ok(place)
}

/// The script of `hook` (one of `HOOKS`). `binary` is tried first, then `teammem` on PATH.
pub fn hook_script(binary: &Path, hook: &str) -> String {
    if hook == REFERENCE_TRANSACTION {
        return reference_transaction_script(binary);
    }
    let binary = shell_quote(&binary.display().to_string());
    let marker = marker(hook);
    let chained = chained_name(hook);
    let (refused, fix) = if hook == "pre-merge-commit" {
        (
            "merge refused: the merged team memory (.qwen/team-memory/)",
            "fix the files (the merge is still in progress), 'git add' them and 'git commit'; \
             a secret must also be rotated if it was ever pushed.",
        )
    } else {
        (
            "commit refused: the staged team memory (.qwen/team-memory/)",
            "fix the files, 'git add' them again and commit; a secret must also be rotated if \
             it was ever pushed.",
        )
    };
    format!(
        r#"#!/bin/sh
{marker} — installed by `teammem install-hooks`, removed by `teammem uninstall-hooks`.
# Refuses a {what} that stages a secret, an invalid memory, a stale MEMORY.md or a risky memory.
# The hook that was here before runs first, from {chained}.
hooks_dir=$(dirname "$0")
if [ -x "$hooks_dir/{chained}" ]; then
  "$hooks_dir/{chained}" "$@" || exit $?
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
  echo "teammem: {refused} has the problems listed above." >&2
  echo "teammem: {fix}" >&2
fi
exit "$status"
"#,
        what = if hook == "pre-merge-commit" {
            "merge commit"
        } else {
            "commit"
        },
    )
}

/// The `reference-transaction` script. Git runs it for every ref transaction (fetches,
/// checkouts, tags), so it starts teammem only in the `prepared` state and only when a branch
/// or HEAD gets a new commit; the chained hook gets the same input in every state. A teammem
/// that fails to run (exit 2) warns and lets the update through: refusing every ref update
/// would lock the user out of their repository.
fn reference_transaction_script(binary: &Path) -> String {
    let binary = shell_quote(&binary.display().to_string());
    let hook = REFERENCE_TRANSACTION;
    let marker = marker(hook);
    let chained = chained_name(hook);
    format!(
        r#"#!/bin/sh
{marker} — installed by `teammem install-hooks`, removed by `teammem uninstall-hooks`.
# Refuses a ref update that brings in a commit (cherry-pick, revert, am) whose team memory change
# adds a secret, an invalid memory, a stale MEMORY.md or a risky memory.
# The hook that was here before runs first, from {chained}.
input=$(cat)
hooks_dir=$(dirname "$0")
if [ -x "$hooks_dir/{chained}" ]; then
  printf '%s
' "$input" | "$hooks_dir/{chained}" "$@" || exit $?
fi
[ "$1" = prepared ] || exit 0
[ "${{TEAMMEM_NO_VERIFY:-}}" = 1 ] && exit 0
needed=
while read -r old new ref; do
  case "$ref" in HEAD|refs/heads/*) ;; *) continue ;; esac
  case "$new" in ref:*|"") continue ;; esac
  case "$new" in *[!0]*) ;; *) continue ;; esac
  [ "$old" = "$new" ] && continue
  needed=1
done <<TEAMMEM_INPUT
$input
TEAMMEM_INPUT
[ -n "$needed" ] || exit 0
teammem={binary}
if [ ! -x "$teammem" ]; then
  teammem=teammem
fi
if ! command -v "$teammem" >/dev/null 2>&1; then
  echo "teammem: not found, so the team memory was not checked (install it, or run 'teammem uninstall-hooks')" >&2
  exit 0
fi
printf '%s
' "$input" | "$teammem" check --ref-updates
status=$?
if [ "$status" -eq 1 ]; then
  echo "teammem: ref update refused: a new commit's team memory (.qwen/team-memory/) has the problems listed above." >&2
  echo "teammem: nothing was committed; the commit's changes are left in the index and work tree: fix the files and commit, or drop them with 'git reset --merge' (then 'git am --abort' for am). A secret must also be rotated if it was ever pushed." >&2
  echo "teammem: to let one ref update through anyway, run the command again with TEAMMEM_NO_VERIFY=1." >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "teammem: could not check the new commits (exit $status); the ref update was let through" >&2
fi
exit 0
"#
    )
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Installs both hooks. Idempotent; a foreign hook is moved to its [`chained_name`] and run
/// first. Nothing is written unless every hook can be installed.
pub fn install(project: &Project, binary: &Path) -> Result<Vec<HookOutcome>, OpError> {
    let place = hook_place(project)?;
    let dir = &place.hooks;
    let mut plan = Vec::new();
    let mut outcomes = Vec::new();
    for name in HOOKS {
        let hook = dir.join(name);
        let chained = dir.join(chained_name(name));
        let script = hook_script(binary, name);
        let existing = read_if_file(&hook)?;
        let action = match &existing {
            Some(text) if text.contains(&marker(name)) => {
                if *text == script {
                    HookAction::Unchanged
                } else {
                    HookAction::Updated
                }
            }
            Some(_) if std::fs::symlink_metadata(&chained).is_ok() => {
                return Err(OpError::Refused(format!(
                    "{} is not teammem's hook, and {} already exists — merge them by hand, then \
                     run install-hooks again",
                    hook.display(),
                    chained.display()
                )));
            }
            Some(_) => HookAction::Installed,
            None => HookAction::Installed,
        };
        plan.push((name, hook, chained, script, existing.is_some(), action));
    }
    for (name, hook, chained, script, existed, action) in plan {
        if action == HookAction::Installed && existed {
            std::fs::rename(&hook, &chained).map_err(|e| OpError::io(&hook, e))?;
        }
        if action != HookAction::Unchanged {
            store::write_atomic(&hook, script.as_bytes())?;
            make_executable(&hook)?;
        }
        outcomes.push(HookOutcome {
            name,
            action,
            chained: std::fs::symlink_metadata(&chained)
                .is_ok()
                .then_some(chained),
            hook,
        });
    }
    outcomes.push(install_merge_driver(&place.common_dir, binary)?);
    Ok(outcomes)
}

/// The name the merge driver's outcome carries in `install-hooks --json`.
pub const MERGE_DRIVER: &str = "merge-driver";

/// Sets up the `MEMORY.md` merge driver (see [`merge_driver`]); its outcome names the local
/// attributes file.
fn install_merge_driver(common_dir: &Path, binary: &Path) -> Result<HookOutcome, OpError> {
    let action = match merge_driver::install(common_dir, binary)? {
        DriverChange::Written => HookAction::Installed,
        _ => HookAction::Unchanged,
    };
    Ok(HookOutcome {
        name: MERGE_DRIVER,
        action,
        hook: merge_driver::attributes_file(common_dir),
        chained: None,
    })
}

/// Removes teammem's hooks and puts chained hooks back in their place.
pub fn uninstall(project: &Project) -> Result<Vec<HookOutcome>, OpError> {
    let place = hook_place(project)?;
    let mut outcomes = Vec::new();
    for name in HOOKS {
        outcomes.push(uninstall_hook(&place.hooks, name)?);
    }
    let action = match merge_driver::uninstall(&place.common_dir)? {
        DriverChange::Removed => HookAction::Removed,
        _ => HookAction::NotInstalled,
    };
    outcomes.push(HookOutcome {
        name: MERGE_DRIVER,
        action,
        hook: merge_driver::attributes_file(&place.common_dir),
        chained: None,
    });
    Ok(outcomes)
}

/// Removes teammem's `name` hook from `dir`, putting back the hook it chained.
fn uninstall_hook(dir: &Path, name: &'static str) -> Result<HookOutcome, OpError> {
    let hook = dir.join(name);
    let chained = dir.join(chained_name(name));
    let ours = read_if_file(&hook)?.is_some_and(|t| t.contains(&marker(name)));
    if !ours {
        return Ok(HookOutcome {
            name,
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
        name,
        action: HookAction::Removed,
        hook,
        chained: restored,
    })
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
