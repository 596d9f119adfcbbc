//! Everything teammem may leave in a repository's git folder, in one list ([`LEFT_IN_GIT`]),
//! and the notes a killed sync is recovered from.
//!
//! A sync can be killed at any point (a hook's timeout, the deadline, a user's Ctrl-C). Before
//! each step a kill would leave half-done, it writes a note naming what it is about to do; the
//! next sync, holding the [sync lock](lock), finds the note and finishes or undoes the step
//! ([`ref_move`], [`checkout`], [`transfer`]). The list below is the only place the names of
//! teammem's files in `.git` are spelled: every module that writes one takes its name from
//! here, so a reader (or a user cleaning up by hand) sees them all at once.

pub(crate) mod checkout;
pub(crate) mod lock;
pub(crate) mod ref_move;
pub(crate) mod transfer;

/// Which git folder a file is in: linked worktrees share the common one and each has its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitFolder {
    /// The common git folder (`git rev-parse --git-common-dir`), shared by every worktree.
    Common,
    /// The worktree's own git folder (`git rev-parse --git-dir`).
    Worktree,
}

/// One file (or folder) teammem may leave in the git folder.
#[derive(Debug, Clone, Copy)]
pub struct LeftInGit {
    /// Its name in the folder.
    pub name: &'static str,
    /// The folder.
    pub folder: GitFolder,
    /// What it is, and what removes it.
    pub what: &'static str,
    /// Whether it is state teammem keeps on purpose between runs, not something a killed run
    /// left behind.
    pub kept: bool,
}

/// The sync lock: one sync at a time per repository ([`lock`]).
pub const SYNC_LOCK: &str = "teammem-sync.lock";
/// A ref about to be moved ([`ref_move`]).
pub const REF_MOVE_NOTE: &str = "teammem-ref-move";
/// A fast-forward's checkout under way ([`checkout`]).
pub const CHECKOUT_NOTE: &str = "teammem-checkout";
/// A git step of the git-CLI sync under way, naming the locks it takes
/// ([`cli_repo::interrupted`](super::cli_repo::interrupted)).
pub const GIT_STEP_NOTE: &str = "teammem-git-step";
/// A fetch or push under way, for its temp pack files ([`transfer`]).
pub const TRANSFER_NOTE: &str = "teammem-transfer";
/// The index's team entries still to be written after a commit
/// ([`commit`](super::commit)).
pub const INDEX_PENDING: &str = "teammem-index-pending";
/// The staging index being rewritten beside git's own
/// ([`staging_index::update`](super::staging_index::update)).
pub const SIDE_INDEX: &str = "teammem-index.next";
/// The scratch folder a commit is signed in ([`sign`](super::sign)).
pub const SIGN_SCRATCH: &str = "teammem-sign";
/// What a branch-mode sync last found when nothing was left to do
/// ([`noop_record`](super::noop_record)).
pub const NOOP_RECORD: &str = "teammem-noop";
/// When the remote was last out of reach ([`offline`](super::offline)).
pub const OFFLINE_NOTE: &str = "teammem-offline";
/// The MCP server's memory ages, kept between its runs.
pub const MCP_AGES: &str = "teammem-mcp-ages";
/// The suffix of a user's own hook that teammem's hook runs first (`hooks/<hook><suffix>`).
pub const CHAINED_HOOK_SUFFIX: &str = ".teammem-chained";
/// The refs a worktree's materialised memory-branch base is kept under.
pub const MATERIALISED_REFS: &str = "refs/teammem/materialised/";
/// The team scope's baseline snapshot.
pub const TEAM_BASELINE_REF: &str = "refs/teammem/baseline";

/// Every file and folder teammem may leave in the git folder. (Refs are under `refs/teammem/`
/// and the memory branch; settings are `teammem.*` and `merge.teammem-index.*` in the
/// repository's config, with one line each in `info/exclude` and `info/attributes`.)
pub const LEFT_IN_GIT: &[LeftInGit] = &[
    LeftInGit {
        name: SYNC_LOCK,
        folder: GitFolder::Common,
        what: "held while a sync runs; taken over when its process is gone or it is ten minutes old",
        kept: false,
    },
    LeftInGit {
        name: "teammem-sync.lock.<pid>.tmp",
        folder: GitFolder::Common,
        what: "the lock's content before it is linked in place; removed by the next sync once <pid> is gone",
        kept: false,
    },
    LeftInGit {
        name: REF_MOVE_NOTE,
        folder: GitFolder::Common,
        what: "a ref about to move; the next sync removes a lock the killed move left",
        kept: false,
    },
    LeftInGit {
        name: CHECKOUT_NOTE,
        folder: GitFolder::Common,
        what: "a fast-forward's checkout under way; the next sync finishes or rolls it back",
        kept: false,
    },
    LeftInGit {
        name: GIT_STEP_NOTE,
        folder: GitFolder::Common,
        what: "a git step of a sync through git under way; the next sync removes the locks a killed one left",
        kept: false,
    },
    LeftInGit {
        name: TRANSFER_NOTE,
        folder: GitFolder::Common,
        what: "a fetch or push under way; the next sync removes the temp packs a killed one left",
        kept: false,
    },
    LeftInGit {
        name: INDEX_PENDING,
        folder: GitFolder::Worktree,
        what: "a commit whose team entries are not yet in git's index; the next sync writes them",
        kept: false,
    },
    LeftInGit {
        name: SIDE_INDEX,
        folder: GitFolder::Worktree,
        what: "git's index being rewritten; renamed over the index, or removed when abandoned",
        kept: false,
    },
    LeftInGit {
        name: SIGN_SCRATCH,
        folder: GitFolder::Worktree,
        what: "a folder a commit is signed in; emptied after each signature",
        kept: true,
    },
    LeftInGit {
        name: NOOP_RECORD,
        folder: GitFolder::Worktree,
        what: "what the last branch-mode sync found, so a sync with nothing to do skips libgit2",
        kept: true,
    },
    LeftInGit {
        name: OFFLINE_NOTE,
        folder: GitFolder::Common,
        what: "when the remote was last out of reach; session starts skip the network for a while",
        kept: true,
    },
    LeftInGit {
        name: MCP_AGES,
        folder: GitFolder::Worktree,
        what: "the MCP server's memory ages, so a restart does not walk history again",
        kept: true,
    },
    LeftInGit {
        name: ".teammem-<file>.<pid>-<n>.tmp",
        folder: GitFolder::Worktree,
        what: "a write of one of the files above, killed before its rename; the next sync removes it once <pid> is gone",
        kept: false,
    },
    LeftInGit {
        name: "hooks/<hook>.teammem-chained",
        folder: GitFolder::Common,
        what: "the user's own hook, kept by install-hooks and run first; put back by uninstall-hooks",
        kept: true,
    },
];

/// Removes the temp files of writes that were killed before their rename
/// (`.<file>.<pid>-<n>.tmp`, as `store::write_atomic` names them), for teammem's own files in
/// both git folders, once their process is gone. Called by a sync holding the lock.
pub fn remove_dead_writes(repo: &git2::Repository) {
    for dir in [repo.commondir(), repo.path()] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(dead_write_pid) else {
                continue;
            };
            if pid != std::process::id() && !lock::process_alive(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The writer's PID when `name` is the temp file of a write of one of teammem's files.
fn dead_write_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (file, writer) = rest.rsplit_once('.')?;
    let (pid, attempt) = writer.split_once('-')?;
    let ours = LEFT_IN_GIT
        .iter()
        .any(|left| left.name == file && !left.name.contains('<'));
    (ours && attempt.bytes().all(|b| b.is_ascii_digit())).then(|| pid.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_listed_once_and_is_teammems_own() {
        let mut names: Vec<_> = LEFT_IN_GIT.iter().map(|f| f.name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "a file is listed twice");
        assert!(names.iter().all(|n| n.contains("teammem")), "{names:?}");
        for spelled in [
            SYNC_LOCK,
            REF_MOVE_NOTE,
            CHECKOUT_NOTE,
            GIT_STEP_NOTE,
            TRANSFER_NOTE,
            INDEX_PENDING,
            SIDE_INDEX,
            SIGN_SCRATCH,
            NOOP_RECORD,
            OFFLINE_NOTE,
            MCP_AGES,
        ] {
            assert!(names.contains(&spelled), "{spelled} is not in the list");
        }
    }

    #[test]
    fn only_temp_files_of_teammems_own_writes_are_recognised() {
        assert_eq!(dead_write_pid(".teammem-noop.4242-0.tmp"), Some(4242));
        assert_eq!(dead_write_pid(".teammem-sync.lock.17-3.tmp"), Some(17));
        assert_eq!(dead_write_pid(".index.4242-0.tmp"), None);
        assert_eq!(dead_write_pid("teammem-noop.4242-0.tmp"), None);
        assert_eq!(dead_write_pid(".teammem-noop.x-0.tmp"), None);
    }

    #[test]
    fn a_dead_writers_temp_file_is_removed_and_a_live_ones_kept() {
        let (_dir, repo) = crate::git::scratch_repo();
        let dead = repo.path().join(".teammem-offline.999999999-0.tmp");
        let live = repo
            .path()
            .join(format!(".teammem-offline.{}-0.tmp", std::process::id()));
        let other = repo.path().join(".ORIG_HEAD.999999999-0.tmp");
        for file in [&dead, &live, &other] {
            std::fs::write(file, "x").unwrap();
        }
        remove_dead_writes(&repo);
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
    }
}
