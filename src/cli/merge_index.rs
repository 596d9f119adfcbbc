//! `teammem merge-index` (hidden): git's merge driver for the team `MEMORY.md`, which
//! `teammem install-hooks` sets up (`merge.teammem-index.driver` in `.git/config`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::domain::memory::MemoryFile;
use crate::domain::memory_index::IndexLine;
use crate::domain::memory_index::merge;
use crate::domain::store;
use crate::ops::{EXIT_OK, OpError};

/// Merge three versions of the team MEMORY.md into the index of the merged memories (git's
/// merge driver: `teammem merge-index %O %A %B %P`). Writes the result over OURS; never
/// conflicts. The next `teammem sync` or `teammem index` regenerates the index from the files.
#[derive(Debug, Args)]
pub struct MergeIndexArgs {
    /// The merge base's version (git's %O).
    base: PathBuf,
    /// Our version (%A); the merged index is written here.
    ours: PathBuf,
    /// Their version (%B).
    theirs: PathBuf,
    /// The index's path in the repository (%P), relative to the work tree git runs the driver
    /// in: memories a version lists only in a group are read from its folder.
    path: Option<PathBuf>,
}

/// Runs the merge driver in `cwd` (git runs it at the top of the work tree).
pub fn run(cwd: &Path, args: MergeIndexArgs) -> Result<u8, OpError> {
    let read = |path: &Path| -> Result<String, OpError> {
        match std::fs::read(cwd.join(path)) {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            // An add/add merge has no base.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(OpError::io(cwd.join(path), e)),
        }
    };
    let (base, ours, theirs) = (read(&args.base)?, read(&args.ours)?, read(&args.theirs)?);
    let folder = args
        .path
        .as_deref()
        .and_then(Path::parent)
        .map(|p| cwd.join(p));
    let lookup = |rel: &str| -> Option<IndexLine> {
        let file = folder.as_ref()?.join(rel);
        let bytes = std::fs::read(&file).ok()?;
        MemoryFile::parse(rel, &bytes).ok()?.index_entry(rel)
    };
    let merged = merge::merge(&base, &ours, &theirs, &lookup);
    store::write_atomic(&cwd.join(&args.ours), merged.as_bytes())?;
    Ok(EXIT_OK)
}
