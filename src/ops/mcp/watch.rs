//! Which memory files of a scope folder changed since a long-lived server last asked.
//!
//! Every folder below the scope folder carries an inotify watch (new folders get theirs as they
//! appear, and a folder that arrives with files already in it is scanned). The kernel queues an
//! event for every change; [`FolderWatch::changes`] drains that queue at query time, with a
//! non-blocking read, rather than in a background thread: a write that another process finished
//! before the query already has its event queued, so the next search is fresh without a sleep
//! or a race. What a queue of events cannot tell exactly — the kernel dropped events (queue
//! overflow), a folder moved or removed, the scope folder replaced, a watch limit reached, no
//! inotify on this system — is [`Changes::Everything`]: the caller looks at every file again,
//! as it would without a watch.
//!
//! The contract: create the watch *before* reading the folder the first time, so that any
//! change made while it is read is reported by the next [`FolderWatch::changes`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What changed in a scope folder since the last [`FolderWatch::changes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// These memory files (paths relative to the scope folder, `/`-separated, each a
    /// [`crate::domain::memory::is_memory_path`]) may have been written, created or removed;
    /// every other memory file is as it was. Empty: nothing changed.
    Paths(BTreeSet<String>),
    /// Anything may have changed: look at every file again.
    Everything,
}

/// The watch on one scope folder.
pub struct FolderWatch {
    root: PathBuf,
    state: State,
}

enum State {
    /// Every folder below the root has a watch.
    #[cfg(target_os = "linux")]
    Armed(linux::Armed),
    /// The root is not there (yet); each call looks for it, and arms the watch once it is.
    Absent,
    /// Watching is not possible here (no inotify, the watch limit reached): every call says
    /// everything may have changed.
    Blind,
}

impl FolderWatch {
    /// Starts watching the scope folder `root` and every folder below it. A root that does not
    /// exist yet is looked for at each call.
    pub fn new(root: &Path) -> FolderWatch {
        let mut watch = FolderWatch {
            root: root.to_path_buf(),
            state: State::Absent,
        };
        watch.state = watch.arm();
        watch
    }

    /// The scope folder watched.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What changed since the last call (or since the watch was created), from the events the
    /// kernel has queued by now; never waits.
    pub fn changes(&mut self) -> Changes {
        match &mut self.state {
            #[cfg(target_os = "linux")]
            State::Armed(armed) => match armed.drain(&self.root) {
                Some(paths) => Changes::Paths(paths),
                None => {
                    // Watches are laid anew before the caller looks at every file, so a change
                    // made from here on is in the next answer.
                    self.state = self.arm();
                    Changes::Everything
                }
            },
            State::Absent => {
                if !self.root.is_dir() {
                    return Changes::Paths(BTreeSet::new());
                }
                self.state = self.arm();
                Changes::Everything
            }
            State::Blind => Changes::Everything,
        }
    }

    /// Whether the kernel tells this watch about changes (false: every call says
    /// [`Changes::Everything`], or the root is not there yet).
    #[cfg(test)]
    pub fn is_watching(&self) -> bool {
        match self.state {
            #[cfg(target_os = "linux")]
            State::Armed(_) => true,
            _ => false,
        }
    }

    #[cfg(target_os = "linux")]
    fn arm(&self) -> State {
        match linux::Armed::new(&self.root) {
            Ok(armed) => State::Armed(armed),
            Err(linux::ArmError::Absent) => State::Absent,
            Err(linux::ArmError::Unavailable) => State::Blind,
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn arm(&self) -> State {
        // No inotify: the caller looks at every file on every call, as without a watch.
        if self.root.is_dir() {
            State::Blind
        } else {
            State::Absent
        }
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{BTreeSet, HashMap};
    use std::fs;
    use std::io::ErrorKind;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

    use crate::domain::memory::is_memory_path;

    /// What each folder's watch reports: every way a file's content or presence changes, and
    /// the folder itself going away. `EXCL_UNLINK`: no events for names already unlinked.
    fn mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::CLOSE_WRITE
            | WatchMask::ATTRIB
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR
            | WatchMask::DONT_FOLLOW
            | WatchMask::EXCL_UNLINK
    }

    /// Room for many events per read (each is 16 bytes and its name).
    const BUFFER_BYTES: usize = 64 * 1024;

    pub(super) enum ArmError {
        /// The root is not a folder (yet).
        Absent,
        /// No inotify instance, or a watch could not be added (the user's watch limit).
        Unavailable,
    }

    /// An inotify instance with a watch on every folder below the root.
    pub(super) struct Armed {
        inotify: Inotify,
        /// Each watch's folder, as a prefix of the paths below it: `""` for the root, `"a/b/"`.
        folders: HashMap<WatchDescriptor, String>,
        /// The root folder's identity (device, inode): a root replaced by another folder of the
        /// same name is seen at the next call even when no event of its own says so.
        root_id: (u64, u64),
        /// Memory paths that are symlinks: their target's change is reported under the
        /// target's name, so they are reported with every change.
        symlinks: BTreeSet<String>,
        buffer: Vec<u8>,
    }

    fn identity(path: &Path) -> Option<(u64, u64)> {
        let meta = fs::symlink_metadata(path).ok()?;
        meta.is_dir().then(|| (meta.dev(), meta.ino()))
    }

    impl Armed {
        pub(super) fn new(root: &Path) -> Result<Armed, ArmError> {
            let Some(root_id) = identity(root) else {
                return Err(ArmError::Absent);
            };
            let inotify = Inotify::init().map_err(|_| ArmError::Unavailable)?;
            let mut armed = Armed {
                inotify,
                folders: HashMap::new(),
                root_id,
                symlinks: BTreeSet::new(),
                buffer: vec![0; BUFFER_BYTES],
            };
            // What is there now is read by the caller after this: no file is reported.
            match armed.watch_tree(root, "", None) {
                Ok(()) => Ok(armed),
                Err(Lost::Root) => Err(ArmError::Absent),
                Err(Lost::Watching) => Err(ArmError::Unavailable),
            }
        }

        /// The memory paths changed since the last drain; `None` when that cannot be told
        /// exactly (the caller looks at everything, and the watch is armed anew).
        pub(super) fn drain(&mut self, root: &Path) -> Option<BTreeSet<String>> {
            if identity(root) != Some(self.root_id) {
                return None;
            }
            let mut paths = BTreeSet::new();
            let mut new_folders: Vec<String> = Vec::new();
            loop {
                let events = match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => return None,
                };
                for event in events {
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        // The kernel dropped events: what they said is unknown.
                        return None;
                    }
                    let Some(prefix) = self.folders.get(&event.wd) else {
                        // A watch already removed; its folder's loss was handled.
                        continue;
                    };
                    if event.mask.intersects(
                        EventMask::DELETE_SELF | EventMask::MOVE_SELF | EventMask::IGNORED,
                    ) {
                        // A watched folder went away or moved: the paths of what it held are
                        // not known here (the folder's own files were reported one by one only
                        // when they were removed first).
                        return None;
                    }
                    let Some(name) = event.name else {
                        continue;
                    };
                    let rel = format!("{prefix}{}", name.to_string_lossy());
                    if event.mask.contains(EventMask::ISDIR) {
                        if event
                            .mask
                            .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        {
                            // Git's own folder is never a memory folder, nor watched.
                            if name != ".git" {
                                new_folders.push(rel);
                            }
                        } else if event
                            .mask
                            .intersects(EventMask::DELETE | EventMask::MOVED_FROM)
                        {
                            return None;
                        }
                        continue;
                    }
                    if !is_memory_path(&rel) {
                        continue;
                    }
                    if event
                        .mask
                        .intersects(EventMask::DELETE | EventMask::MOVED_FROM)
                    {
                        self.symlinks.remove(&rel);
                    } else if event
                        .mask
                        .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        && fs::symlink_metadata(root.join(&rel))
                            .is_ok_and(|m| m.file_type().is_symlink())
                    {
                        self.symlinks.insert(rel.clone());
                    }
                    paths.insert(rel);
                }
            }
            // A folder that arrived (made, or moved in with its files) is watched, then read:
            // a file written before its watch is found by the read, one after by an event.
            for folder in new_folders {
                match self.watch_tree(&root.join(&folder), &format!("{folder}/"), Some(&mut paths))
                {
                    Ok(()) => {}
                    // Gone again: its removal was or will be an event of the folder above.
                    Err(Lost::Root) => {}
                    Err(Lost::Watching) => return None,
                }
            }
            if !paths.is_empty() {
                paths.extend(self.symlinks.iter().cloned());
            }
            Some(paths)
        }

        /// Watches `dir` (whose paths start with `prefix`) and every folder below it, and adds
        /// the memory paths found there to `found` (when given). The watch comes before the
        /// read, so a name added meanwhile is either read or reported.
        fn watch_tree(
            &mut self,
            dir: &Path,
            prefix: &str,
            mut found: Option<&mut BTreeSet<String>>,
        ) -> Result<(), Lost> {
            let wd = match self.inotify.watches().add(dir, mask()) {
                Ok(wd) => wd,
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                    return Err(Lost::Root);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Err(Lost::Root),
                Err(_) => return Err(Lost::Watching),
            };
            self.folders.insert(wd, prefix.to_string());
            let Ok(entries) = fs::read_dir(dir) else {
                return Err(Lost::Root);
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if !kind.is_dir() && !kind.is_symlink() && found.is_none() {
                    // Arming: a plain file needs nothing (the common case, 10,000 times).
                    continue;
                }
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let rel = format!("{prefix}{name}");
                if kind.is_dir() {
                    // Git's own folder is never a memory folder (`is_memory_path`).
                    if name == ".git" {
                        continue;
                    }
                    match self.watch_tree(&entry.path(), &format!("{rel}/"), found.as_deref_mut()) {
                        Ok(()) | Err(Lost::Root) => {}
                        Err(Lost::Watching) => return Err(Lost::Watching),
                    }
                } else if is_memory_path(&rel) {
                    if kind.is_symlink() {
                        self.symlinks.insert(rel.clone());
                    }
                    if let Some(found) = found.as_deref_mut() {
                        found.insert(rel);
                    }
                }
            }
            Ok(())
        }
    }

    /// Why a folder could not be watched.
    enum Lost {
        /// It is not there (any more).
        Root,
        /// The kernel refused the watch (the user's limit of watches).
        Watching,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::Command;

    fn sh(dir: &Path, script: &str) {
        let status = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .status()
            .expect("sh runs");
        assert!(status.success(), "sh -c {script:?} failed");
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=Teammate", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn paths(list: &[&str]) -> Changes {
        Changes::Paths(list.iter().map(|s| s.to_string()).collect())
    }

    fn memory(name: &str) -> String {
        format!("---\nname: {name}\ndescription: d\ntype: project\n---\nbody of {name}\n")
    }

    #[test]
    fn writes_by_another_process_are_in_the_next_answer_and_only_once() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        sh(root, "mkdir project && printf 'old' > project/a.md");
        let mut watch = FolderWatch::new(root);
        assert!(watch.is_watching());
        assert_eq!(watch.changes(), paths(&[]));
        sh(
            root,
            "printf 'new' > project/a.md; printf 'x' > project/b.md; printf 'i' > MEMORY.md; \
             printf 'n' > project/notes.txt",
        );
        assert_eq!(watch.changes(), paths(&["project/a.md", "project/b.md"]));
        assert_eq!(watch.changes(), paths(&[]));
        sh(root, "rm project/b.md; touch project/a.md");
        assert_eq!(watch.changes(), paths(&["project/a.md", "project/b.md"]));
    }

    #[test]
    fn moves_and_an_editors_rename_over_report_both_names() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = tmp.path();
        sh(root, "mkdir project user && printf 'a' > project/a.md");
        let mut watch = FolderWatch::new(root);
        sh(root, "mv project/a.md user/a.md");
        assert_eq!(watch.changes(), paths(&["project/a.md", "user/a.md"]));
        // An editor writes a hidden temporary file and renames it over the memory.
        sh(
            root,
            "printf 'edited' > user/.a.md.tmp && mv user/.a.md.tmp user/a.md",
        );
        assert_eq!(watch.changes(), paths(&["user/a.md"]));
        let from = outside.path().join("c.md");
        std::fs::write(&from, memory("c")).unwrap();
        sh(root, &format!("mv {} project/c.md", from.display()));
        assert_eq!(watch.changes(), paths(&["project/c.md"]));
    }

    #[test]
    fn a_new_folder_is_read_and_watched_at_any_depth() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let mut watch = FolderWatch::new(root);
        sh(
            root,
            "mkdir -p deep/er/still && printf 'x' > deep/er/still/x.md && printf 'y' > deep/y.md",
        );
        assert_eq!(watch.changes(), paths(&["deep/er/still/x.md", "deep/y.md"]));
        sh(root, "printf 'z' > deep/er/still/z.md");
        assert_eq!(watch.changes(), paths(&["deep/er/still/z.md"]));
        // A folder made elsewhere, files already in it, moved in whole.
        sh(
            outside.path(),
            "mkdir -p moved/inner && printf 'm' > moved/m.md && printf 'n' > moved/inner/n.md",
        );
        sh(
            root,
            &format!("mv {}/moved reference", outside.path().display()),
        );
        assert_eq!(
            watch.changes(),
            paths(&["reference/inner/n.md", "reference/m.md"])
        );
        sh(root, "printf 'again' > reference/inner/n.md");
        assert_eq!(watch.changes(), paths(&["reference/inner/n.md"]));
        // Git's own folder is not a memory folder: nothing below it is reported.
        sh(root, "mkdir .git && printf 'g' > .git/g.md");
        assert_eq!(watch.changes(), paths(&[]));
        sh(root, "mkdir .git/objects && printf 'o' > .git/objects/o.md");
        assert_eq!(watch.changes(), paths(&[]));
    }

    #[test]
    fn a_folder_removed_or_moved_or_the_root_replaced_means_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("team-memory");
        sh(
            tmp.path(),
            "mkdir -p team-memory/project team-memory/user && printf 'a' > team-memory/project/a.md",
        );
        let mut watch = FolderWatch::new(&root);
        sh(&root, "rm -r project");
        assert_eq!(watch.changes(), Changes::Everything);
        // Watching goes on after it.
        sh(&root, "printf 'b' > user/b.md");
        assert_eq!(watch.changes(), paths(&["user/b.md"]));
        sh(&root, "mv user people");
        assert_eq!(watch.changes(), Changes::Everything);
        sh(&root, "printf 'c' > people/c.md");
        assert_eq!(watch.changes(), paths(&["people/c.md"]));
        // The whole folder replaced by another of the same name.
        sh(
            tmp.path(),
            "mkdir -p next/project && printf 'n' > next/project/n.md && \
             mv team-memory old && mv next team-memory",
        );
        assert_eq!(watch.changes(), Changes::Everything);
        sh(&root, "printf 'd' > project/d.md");
        assert_eq!(watch.changes(), paths(&["project/d.md"]));
        sh(tmp.path(), "rm -r team-memory");
        assert_eq!(watch.changes(), Changes::Everything);
        assert_eq!(watch.changes(), paths(&[]));
        assert!(!watch.is_watching());
        sh(
            tmp.path(),
            "mkdir -p team-memory/project && printf 'e' > team-memory/project/e.md",
        );
        assert_eq!(watch.changes(), Changes::Everything);
        sh(&root, "printf 'f' > project/f.md");
        assert_eq!(watch.changes(), paths(&["project/f.md"]));
    }

    #[test]
    fn a_teammates_commits_checked_out_by_git_are_exactly_the_paths_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let ours = tmp.path().join("ours");
        let theirs = tmp.path().join("theirs");
        std::fs::create_dir_all(ours.join(".qwen/team-memory/project")).unwrap();
        for n in ["a", "b", "c"] {
            std::fs::write(
                ours.join(format!(".qwen/team-memory/project/{n}.md")),
                memory(n),
            )
            .unwrap();
        }
        git(&ours, &["init", "-q"]);
        git(&ours, &["add", "-A"]);
        git(&ours, &["commit", "-qm", "memories"]);
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                ours.to_str().unwrap(),
                theirs.to_str().unwrap(),
            ],
        );
        let team = theirs.join(".qwen/team-memory");
        sh(
            &team,
            "printf 'changed' >> project/a.md && rm project/b.md && mkdir feedback && \
             printf -- '---\\nname: F\\ndescription: d\\ntype: feedback\\n---\\nf\\n' > feedback/f.md",
        );
        git(&theirs, &["add", "-A"]);
        git(&theirs, &["commit", "-qm", "teammate"]);

        let mut watch = FolderWatch::new(&ours.join(".qwen/team-memory"));
        git(
            &ours,
            &["pull", "-q", "--ff-only", theirs.to_str().unwrap(), "main"],
        );
        assert_eq!(
            watch.changes(),
            paths(&["feedback/f.md", "project/a.md", "project/b.md"])
        );
        git(&ours, &["checkout", "-q", "HEAD~1"]);
        let back = watch.changes();
        // Going back removes the folder the teammate added: its files are not known one by one.
        assert_eq!(back, Changes::Everything);
        git(&ours, &["checkout", "-q", "main"]);
        assert_eq!(
            watch.changes(),
            paths(&["feedback/f.md", "project/a.md", "project/b.md"])
        );
    }

    #[test]
    fn a_queue_overflow_means_everything_and_watching_goes_on() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        sh(root, "mkdir project");
        let mut watch = FolderWatch::new(root);
        // More distinct events than the kernel queues for one instance: each new file is at
        // least a create, a modify and a close.
        let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let files = queued / 3 + 100;
        sh(
            root,
            &format!("i=0; while [ $i -lt {files} ]; do echo x > project/f$i.md; i=$((i+1)); done"),
        );
        assert_eq!(watch.changes(), Changes::Everything);
        assert_eq!(watch.changes(), paths(&[]));
        sh(root, "echo y > project/f0.md");
        assert_eq!(watch.changes(), paths(&["project/f0.md"]));
    }

    #[test]
    fn a_root_that_appears_later_is_watched_from_then_on() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("memory");
        let mut watch = FolderWatch::new(&root);
        assert!(!watch.is_watching());
        assert_eq!(watch.changes(), paths(&[]));
        sh(
            tmp.path(),
            "mkdir -p memory/user && printf 'u' > memory/user/u.md",
        );
        assert_eq!(watch.changes(), Changes::Everything);
        assert!(watch.is_watching());
        sh(&root, "printf 'v' > user/v.md");
        assert_eq!(watch.changes(), paths(&["user/v.md"]));
    }

    #[test]
    fn a_symlinked_memory_is_reported_with_every_change() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        sh(
            root,
            "mkdir project && printf 'a' > project/a.md && ln -s a.md project/link.md",
        );
        let mut watch = FolderWatch::new(root);
        sh(root, "printf 'b' > project/a.md");
        assert_eq!(watch.changes(), paths(&["project/a.md", "project/link.md"]));
        assert_eq!(watch.changes(), paths(&[]));
    }
}
