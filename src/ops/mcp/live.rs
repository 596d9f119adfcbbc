//! The server's recall: recall's indexes held in memory ([`LiveRecall`]) and, for each scope
//! folder, a [`FolderWatch`] that says what changed there since the last search. Before each
//! search the watches' queues are drained and every change is noted on the indexes, so a search
//! answers from memory exactly as a fresh `teammem recall` would, and looks again only at the
//! files that changed.

use std::path::Path;

use crate::domain::scope::ScopeKind;
use crate::ops::recall::{self, LiveRecall, Recalled};
use crate::ops::{OpError, Project};

use super::watch::{Changes, FolderWatch};

/// Recall's indexes in memory, and the watches on their folders.
pub struct LiveRecallIndex {
    recall: LiveRecall,
    /// One watch per scope folder, laid before the scope's index is read.
    watches: Vec<(ScopeKind, FolderWatch)>,
}

impl LiveRecallIndex {
    /// Watches the folders of `scopes`, then opens their indexes (reading each index file and
    /// checking every memory once): a change made while they are read is in the watches'
    /// first answer.
    pub fn open(project: &Project, scopes: &[ScopeKind]) -> Result<LiveRecallIndex, OpError> {
        let mut index = LiveRecallIndex {
            recall: LiveRecall::default(),
            watches: Vec::new(),
        };
        index.watch(project, scopes)?;
        index.recall = LiveRecall::open(project, scopes)?;
        Ok(index)
    }

    /// Lays a watch on each folder of `scopes` not watched yet (a scope switched on since).
    fn watch(&mut self, project: &Project, scopes: &[ScopeKind]) -> Result<(), OpError> {
        for &scope in scopes {
            if self.watches.iter().all(|(s, _)| *s != scope) {
                let dir = project.check_scope_safe(scope)?;
                self.watches.push((scope, FolderWatch::new(&dir)));
            }
        }
        Ok(())
    }

    /// Notes on the indexes what the watches saw change since the last call.
    fn catch_up(&mut self) {
        for (_, watch) in &mut self.watches {
            match watch.changes() {
                Changes::Paths(paths) => {
                    for rel in paths {
                        self.recall.note_changed(&watch.root().join(rel));
                    }
                }
                // The scope folder itself: every memory below it is looked at again.
                Changes::Everything => {
                    let root: &Path = watch.root();
                    self.recall.note_changed(root);
                }
            }
        }
    }

    /// What [`recall::recall_unaged`] answers for `query` over `scopes` now, from memory.
    pub fn recall(
        &mut self,
        project: &Project,
        scopes: &[ScopeKind],
        query: &str,
        max: usize,
        chars: usize,
    ) -> Result<Recalled, OpError> {
        self.watch(project, scopes)?;
        self.catch_up();
        recall::recall_live(project, &mut self.recall, scopes, query, max, chars)
    }
}
