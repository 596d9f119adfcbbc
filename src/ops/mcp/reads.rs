//! Reads counted off the answer's path: `memory_search` and `memory_read` hand the memories
//! they showed to one writer thread, which adds them to the usage books on disk
//! ([`cite::record_use`](crate::ops::cite::record_use)) while the answer goes out. Reads that
//! arrive while it writes are written together next. The server flushes it when the client
//! closes the connection, so no count is lost on a normal end; a kill loses at most the reads
//! of the write under way (usage is advice for `stale` and recall's tie-breaks).

use std::sync::Mutex;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use crate::domain::recall::usage::UseKind;
use crate::domain::scope::ScopeKind;
use crate::ops::Project;

/// The memories one answer showed: scope and path in the scope's folder.
type ShownReads = Vec<(ScopeKind, String)>;

/// The writer thread and the way to it; started by the first read.
pub(super) struct ReadCounter {
    project: Project,
    writer: Mutex<Option<(Sender<ShownReads>, JoinHandle<()>)>>,
}

impl ReadCounter {
    pub(super) fn new(project: Project) -> ReadCounter {
        ReadCounter {
            project,
            writer: Mutex::new(None),
        }
    }

    /// Counts `shown` as read, on the writer thread (written here if the thread cannot start).
    pub(super) fn count(&self, shown: &[(ScopeKind, String)]) {
        if shown.is_empty() {
            return;
        }
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if writer.is_none() {
            let (send, receive) = mpsc::channel::<ShownReads>();
            let project = self.project.clone();
            let started = std::thread::Builder::new()
                .name("teammem-reads".into())
                .spawn(move || {
                    while let Ok(mut batch) = receive.recv() {
                        while let Ok(more) = receive.try_recv() {
                            batch.extend(more);
                        }
                        let _ = crate::ops::cite::record_use(&project, &batch, UseKind::Read);
                    }
                });
            match started {
                Ok(thread) => *writer = Some((send, thread)),
                Err(_) => {
                    let _ = crate::ops::cite::record_use(&self.project, shown, UseKind::Read);
                    return;
                }
            }
        }
        if let Some((send, _)) = writer.as_ref() {
            let _ = send.send(shown.to_vec());
        }
    }

    /// Writes every count still waiting and stops the writer thread.
    pub(super) fn flush(&self) {
        let taken = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((send, thread)) = taken {
            drop(send);
            let _ = thread.join();
        }
    }
}
