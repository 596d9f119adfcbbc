//! The context built from what is on disk while the sync runs, on a second thread: a no-op
//! sync (most session starts) then costs the session start no more than the sync itself. It is
//! used only when the sync can have changed nothing the context depends on ([`DiskState`]);
//! otherwise the context is built again after the sync, as before.

use crate::domain::recall::refresh::now_ns;
use crate::domain::scope::ScopeKind;
use crate::domain::store::Stamp;
use crate::git::plain::{self, PlainHead};
use crate::ops::Project;
use crate::ops::recall::SETTLE;
use crate::ops::sync::SyncOutcome;

/// What a context read from disk depends on beyond its memory files' contents, taken before
/// the sync and again after it: `HEAD` (each memory's line on the paths it names is checked
/// at `HEAD`) and the stamps of every folder of the scopes shown (a file added, removed or
/// renamed — which is how teammem and git put a new version of a file in place — changes its
/// folder's times). The rule set lives in the team folder (its check file) and in the user's
/// configuration, which no sync touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskState {
    head: Option<PlainHead>,
    folders: Vec<(ScopeKind, Option<FolderStamps>)>,
}

/// Each folder of a scope (relative, `""` for the scope folder) with its stamp, by name.
type FolderStamps = Vec<(String, Stamp)>;

impl DiskState {
    /// The state of `scopes` now; `None` when it cannot prove a later change: a `HEAD` not read
    /// from git's files, a folder that cannot be listed or holds a symlink (its target changes
    /// without it), or a folder stamp too young to trust (a second change within the same
    /// clock tick could leave it as it is).
    pub fn of(project: &Project, scopes: &[ScopeKind]) -> Option<DiskState> {
        let head = match &project.repo {
            Some(paths) => Some(plain::head_commit(&paths.git_dir)?),
            None => None,
        };
        let (now, settle) = (now_ns(), SETTLE.as_nanos() as i64);
        let mut folders = Vec::with_capacity(scopes.len());
        for &scope in scopes {
            let Some(dir) = project.layout.memory_dir(scope) else {
                continue;
            };
            let stamps = match std::fs::symlink_metadata(&dir) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                _ => Some(folder_stamps(&dir, now, settle)?),
            };
            folders.push((scope, stamps));
        }
        Some(DiskState { head, folders })
    }
}

/// The stamps of `dir` and of every folder below it, each taken before the folder is read (as
/// [`crate::domain::store::memory_listing`] takes them, without a stat of each file: the entries' types come
/// with the listing); `None` when a folder cannot be read, holds a symlink, or has a stamp too
/// young to trust.
fn folder_stamps(dir: &std::path::Path, now: i64, settle: i64) -> Option<FolderStamps> {
    let mut out = Vec::new();
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let stamp = Stamp::of(&meta);
        if !meta.is_dir() || !stamp.settled(now, settle) {
            return None;
        }
        out.push((rel.clone(), stamp));
        for entry in std::fs::read_dir(&path).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            if kind.is_symlink() {
                return None;
            }
            if kind.is_dir() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let below = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                todo.push((entry.path(), below));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Some(out)
}

/// Whether a context built before the sync, when the disk stood at `before`, is the one that
/// would be built now that it stands at `after`, the sync having reported `outcome` (`None`:
/// it did not run): nothing committed, pulled or quarantined by the sync, the same `HEAD`
/// and the same folder stamps. A sync that failed or crashed (`ran` false) may have stopped
/// half-way: the context is built again.
pub fn still_holds(
    before: Option<&DiskState>,
    after: Option<&DiskState>,
    ran: bool,
    outcome: Option<&SyncOutcome>,
) -> bool {
    let quiet = outcome.is_none_or(|o| !o.committed && !o.pulled && o.quarantined.is_empty());
    ran && quiet && before.is_some() && before == after
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::time::Duration;

    fn state(dir: &Path) -> Option<DiskState> {
        Some(DiskState {
            head: None,
            folders: vec![(
                ScopeKind::Team,
                Some(folder_stamps(dir, now_ns(), SETTLE.as_nanos() as i64)?),
            )],
        })
    }

    /// Past the window within which a stamp is not trusted (ctime cannot be put back: a
    /// folder's stamp settles only with time).
    fn settle() {
        std::thread::sleep(SETTLE + Duration::from_millis(300));
    }

    #[test]
    fn a_name_added_or_renamed_changes_the_state_and_a_young_folder_proves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("team-memory");
        std::fs::create_dir_all(dir.join("project")).unwrap();
        std::fs::write(dir.join("project/a.md"), "a").unwrap();
        assert_eq!(state(&dir), None, "folders changed just now prove nothing");

        settle();
        let settled = state(&dir).expect("settled folders");
        let quiet = SyncOutcome::default();
        assert!(still_holds(
            Some(&settled),
            state(&dir).as_ref(),
            true,
            Some(&quiet)
        ));

        // A new version put in place as a pull or a materialised memory branch does: written
        // beside, then renamed over the file. Its folder changed, seen at once and later.
        std::fs::write(dir.join("project/.a.tmp"), "a, edited").unwrap();
        std::fs::rename(dir.join("project/.a.tmp"), dir.join("project/a.md")).unwrap();
        assert!(!still_holds(
            Some(&settled),
            state(&dir).as_ref(),
            true,
            None
        ));
        settle();
        let renamed = state(&dir).expect("settled again");
        assert_ne!(renamed, settled);
        assert!(!still_holds(Some(&settled), Some(&renamed), true, None));

        // A sync that reports a pull or a commit is never trusted, nor one that failed.
        let same = Some(&renamed);
        for outcome in [
            SyncOutcome {
                pulled: true,
                ..SyncOutcome::default()
            },
            SyncOutcome {
                committed: true,
                ..SyncOutcome::default()
            },
        ] {
            assert!(!still_holds(same, same, true, Some(&outcome)));
        }
        assert!(!still_holds(same, same, false, None));
        assert!(still_holds(same, same, true, None), "no sync ran");
        assert!(!still_holds(None, None, true, None), "nothing proven");

        // A symlink's target changes without its folder: nothing is proven.
        std::os::unix::fs::symlink(dir.join("project/a.md"), dir.join("project/b.md")).unwrap();
        settle();
        assert_eq!(state(&dir), None);
    }
}
