//! The proof that an index still holds for its folder: the stats of every memory compared with
//! the stamps the index records ([`StampProof`], taken on other threads while a query is
//! answered), and the whole proof at once for a watcher that then vouches for the index
//! ([`index_holds`]).

use std::path::Path;
use std::sync::Arc;

use super::super::index::{FileMeta, FolderMeta, RecallIndex, RecallIndexHead};
use crate::domain::store::{self, Stamp};

/// The stats that prove a gather wholly from the index ([`super::scan_indexed_unproven`]) still
/// holds, taken on other threads while the caller goes on with the answer. Each memory is
/// compared with the stamp in the index's bytes where the stats run: nothing is copied.
#[derive(Debug)]
pub struct StampProof {
    pub(super) run: store::StampRun,
    pub(super) known_from: Arc<Vec<u8>>,
}

/// The stamps a [`StampProof`] took (in its parts; a part whose memories all had their
/// indexed stamps keeps none), with the index bytes they were compared with.
#[derive(Debug)]
pub struct KnownStamps {
    pub(super) bytes: Arc<Vec<u8>>,
    parts: Vec<store::PartStamps>,
}

impl KnownStamps {
    /// Every memory's stamp, in the order of `files` (the index these stamps were compared
    /// with, decoded): a part that matched has the indexed stamps. `None` when the parts do
    /// not cover `files`.
    pub(super) fn all(&self, files: &[FileMeta<'_>]) -> Option<Vec<Option<Stamp>>> {
        let mut out = Vec::with_capacity(files.len());
        for part in &self.parts {
            match part {
                store::PartStamps::AsExpected(n) => {
                    let indexed = files.get(out.len()..out.len() + n)?;
                    out.extend(indexed.iter().map(|f| Some(f.stamp)));
                }
                store::PartStamps::Taken(stamps) => out.extend_from_slice(stamps),
            }
        }
        (out.len() == files.len()).then_some(out)
    }
}

impl StampProof {
    /// Waits for the stats: `Ok` when every memory still has the stamp it was indexed with
    /// (the gather holds), `Err` when one changed or could not be statted (the gather must be
    /// done again: [`super::scan_indexed_unproven`] with these stamps reads only what changed).
    pub fn check(self) -> Result<KnownStamps, KnownStamps> {
        let parts = self.run.finish_parts();
        let holds = parts
            .iter()
            .all(|p| matches!(p, store::PartStamps::AsExpected(_)));
        let known = KnownStamps {
            bytes: self.known_from,
            parts,
        };
        if holds { Ok(known) } else { Err(known) }
    }
}

/// The checksum of the index `bytes` when its folder `dir` holds exactly what it records,
/// every memory with the stamp it was indexed with and every stamp settled (what the stats of
/// a [`StampProof`] prove); `None` otherwise. A long-lived watcher proves this once, and from
/// then on vouches for the index until its folder changes
/// ([`super::scan_indexed_unproven`]'s `vouched`).
pub fn index_holds(dir: &Path, bytes: &Arc<Vec<u8>>) -> Option<u64> {
    let head = RecallIndexHead::read(bytes)?;
    let dir_text = dir.to_string_lossy();
    if head.dir != dir_text
        || !head.flags.iter().all(|f| f & 4 != 0)
        || !listing_unchanged(dir, head.symlinks, &head.folders)
    {
        return None;
    }
    // The checksum is checked here: what is vouched for is the whole of these bytes.
    RecallIndex::decode(bytes)?;
    let names = store::Names::within(bytes, head.names.clone(), head.count)?;
    let run = store::StampRun::start_expecting(dir, names, head.stamps_at);
    let proof = StampProof {
        run,
        known_from: Arc::clone(bytes),
    };
    proof.check().ok().map(|_| head.sum())
}

/// Whether a listing recorded in an index still holds: no symlink met, and every folder's
/// stamp settled and unchanged (so no name was added, removed or renamed).
pub(super) fn listing_unchanged(dir: &Path, symlinks: bool, folders: &[FolderMeta<'_>]) -> bool {
    !symlinks
        && !folders.is_empty()
        && folders.iter().all(|f| {
            f.settled && std::fs::metadata(dir.join(f.rel)).is_ok_and(|m| Stamp::of(&m) == f.stamp)
        })
}
