//! Each scope's block of a session's memory context (its index as the agent sees it, the line
//! on the paths its memories name, what the gate withheld) kept between runs: while no memory
//! file changed (the same names with the same stamps, every stamp settled), under the same
//! rule set ([`gate_cache::rules_version`]) and at the same `HEAD`, the block is the one
//! rendered last time, and no memory is read, judged or rendered again. With 1,000 team
//! memories that was half of a session start beyond its sync (the gate cache's verdicts parsed,
//! the index rendered and made safe, the references checked).
//!
//! The block lives beside the scope's recall index and gate cache, in its state folder outside
//! the work tree (`<folder>-context.json`); one that cannot be read is ignored and rewritten.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::check::RULES;
use crate::domain::gate::{BrokenRules, Gate};
use crate::domain::recall::refresh::now_ns;
use crate::domain::scope::ScopeKind;
use crate::domain::store::{self, Stamp};
use crate::git::plain::{self, PlainHead};

use super::recall::SETTLE;
use super::{Project, gate_cache};

/// The block file's format version.
const VERSION: u32 = 1;

/// A scope's part of the context, as rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeBlock {
    /// The index and the line on the paths its memories name, made safe; empty when the
    /// scope has nothing to show.
    pub text: String,
    /// The memories its index lists: path, hash of the file, title as shown.
    pub delivered: Vec<(String, String, String)>,
    /// Each file the gate withheld, with the rules it broke.
    pub withheld: Vec<(String, Vec<String>)>,
}

impl ScopeBlock {
    /// The withheld files with their rules as the gate names them; `None` when a rule is not
    /// one this build knows (a block from another build is not used).
    pub fn withheld_rules(&self) -> Option<Vec<(String, BrokenRules)>> {
        self.withheld
            .iter()
            .map(|(rel, rules)| {
                let broken = rules
                    .iter()
                    .map(|r| RULES.iter().find(|known| known.id == r).map(|k| k.id))
                    .collect::<Option<BrokenRules>>()?;
                Some((rel.clone(), broken))
            })
            .collect()
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct BlockFile {
    version: u32,
    key: String,
    block: ScopeBlock,
}

/// Where a scope's block is kept: beside its recall index, outside the work tree.
fn block_file(project: &Project, scope: ScopeKind, dir: &Path) -> Option<PathBuf> {
    if !cfg!(unix) {
        // Without inode numbers and ctime a stamp cannot see every edit.
        return None;
    }
    let folder = dir.file_name()?.to_string_lossy();
    let local = scope == ScopeKind::Private && project.layout.local_private;
    let name = format!("{}{folder}-context.json", if local { "local-" } else { "" });
    Some(project.layout.outside_state_dir(scope)?.join(name))
}

/// What the block of `scope` (folder `dir`) depends on, as it now stands: the rule set, `HEAD`,
/// git's staging index (a staged path holds), and every memory file's name and stamp. `None`
/// when a block cannot be kept: a stamp too young to trust, a symlink (its target changes
/// without it), a `HEAD` not read from git's files.
pub fn key(project: &Project, scope: ScopeKind, dir: &Path, policy: &Gate) -> Option<String> {
    let head = match &project.repo {
        Some(paths) => match plain::head_commit(&paths.git_dir)? {
            PlainHead::At(id) => id,
            PlainHead::Unborn => "unborn".to_string(),
        },
        None => "no repository".to_string(),
    };
    let (now, settle) = (now_ns(), SETTLE.as_nanos() as i64);
    // The line on the paths the memories name counts a path staged in git's index as present:
    // a staged or unstaged path changes the block as a memory edit does.
    let staging = match &project.repo {
        Some(paths) => match std::fs::metadata(paths.git_dir.join("index")) {
            Ok(meta) => Some(Stamp::of(&meta)).filter(|s| s.settled(now, settle))?,
            Err(_) => Stamp::default(),
        },
        None => Stamp::default(),
    };
    let listing = store::memory_listing(dir).ok()?;
    if listing.symlinks {
        return None;
    }
    let rels: Vec<&str> = listing.paths.iter().map(String::as_str).collect();
    let stamps = store::stamps(dir, &rels);
    let mut hasher = Sha256::new();
    let shown = project.shown_prefix(scope);
    let rules = gate_cache::rules_version(policy);
    let dir_text = dir.to_string_lossy();
    let scope_text = scope.to_string();
    for part in [
        &shown[..],
        &rules[..],
        &head[..],
        &dir_text[..],
        &scope_text[..],
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.update(staging.to_le_bytes());
    for (rel, stamp) in rels.iter().zip(stamps) {
        let stamp = stamp.filter(|s| s.settled(now, settle))?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update(stamp.to_le_bytes());
    }
    for bad in &listing.withheld {
        hasher.update(format!("{}\0{}\0", bad.rel, bad.rule).as_bytes());
    }
    Some(
        hasher.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// The block kept for `key`, if any.
pub fn load(project: &Project, scope: ScopeKind, dir: &Path, key: &str) -> Option<ScopeBlock> {
    let bytes = std::fs::read(block_file(project, scope, dir)?).ok()?;
    let file: BlockFile = serde_json::from_slice(&bytes).ok()?;
    (file.version == VERSION && file.key == key).then_some(file.block)
}

/// Keeps `block` for `key`. A block that cannot be written only costs the next run its speed.
pub fn keep(project: &Project, scope: ScopeKind, dir: &Path, key: String, block: &ScopeBlock) {
    let Some(path) = block_file(project, scope, dir) else {
        return;
    };
    let file = BlockFile {
        version: VERSION,
        key,
        block: block.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&file) {
        let _ = store::write_cache(&path, &bytes);
    }
}
