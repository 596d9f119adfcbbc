//! The index's team entries brought in line with a commit by `git update-index --index-info`,
//! for the index forms libgit2 cannot read — a split index (`core.splitIndex`, extension
//! `link`) and a sparse index (`sparse-checkout --sparse-index`, extension `sdir`). git keeps
//! the form as it is and touches no entry outside the folder (invariant 2). The entries it
//! writes carry no stat data, so `git status` compares their contents once and sees them clean.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use git2::Repository;

use super::update::StagingUpdate;
use crate::git::GitError;
use crate::git::cli::{local_command, run_local};
use crate::git::remote::Deadline;
use crate::git::status::TreeFile;

/// The object id git uses to say "remove this path" in `--index-info`.
const REMOVE: &str = "0000000000000000000000000000000000000000";

/// Whether libgit2 refused to read the index for a form it does not know (a mandatory
/// extension), so the git CLI must do the job.
pub fn libgit2_cannot_read(err: &GitError) -> bool {
    matches!(err, GitError::Git { source, .. }
        if source.message().contains("unsupported mandatory extension"))
}

/// Makes the index entries under `dir` match `desired` through git; `patience` bounds the run
/// (git waits for no lock: a held `index.lock` is [`StagingUpdate::Locked`]).
pub fn update_team_entries(
    repo: &Repository,
    dir: &str,
    desired: &BTreeMap<String, TreeFile>,
    patience: Duration,
) -> Result<StagingUpdate, GitError> {
    let deadline = Deadline::after(patience.max(Duration::from_secs(5)));
    let mut list = local_command(repo);
    list.args([
        "ls-files",
        "--stage",
        "-z",
        "--",
        &format!(":(literal){dir}/"),
    ]);
    let listed = run_local(
        list,
        b"",
        &deadline,
        "listing the index's team entries (git)",
    )?;
    if !listed.success {
        return Err(GitError::Cli {
            context: "listing the index's team entries (git ls-files)".into(),
            message: listed.stderr.trim().to_string(),
        });
    }
    let mut current: HashMap<String, (String, String, String)> = HashMap::new();
    for record in listed.stdout.split('\0').filter(|r| !r.is_empty()) {
        let Some((meta, path)) = record.split_once('\t') else {
            continue;
        };
        let mut fields = meta.split(' ');
        let (Some(mode), Some(id), Some(stage)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        current.insert(
            path.to_string(),
            (mode.to_string(), id.to_string(), stage.to_string()),
        );
    }
    let mut input = String::new();
    for (path, (mode, id, stage)) in &current {
        let wanted = desired
            .get(path)
            .is_some_and(|f| stage == "0" && *id == f.id.to_string() && *mode == octal(f));
        if !wanted && !desired.contains_key(path) {
            input.push_str(&format!("0 {REMOVE}\t{path}\0"));
        }
    }
    for (path, file) in desired {
        let same = current.get(path).is_some_and(|(mode, id, stage)| {
            stage == "0" && *id == file.id.to_string() && *mode == octal(file)
        });
        if !same {
            input.push_str(&format!("{} {}\t{path}\0", octal(file), file.id));
        }
    }
    if input.is_empty() {
        return Ok(StagingUpdate::Unchanged);
    }
    index_info(repo, &input, &deadline, "the index's team entries")
}

/// Feeds `input` (NUL-separated `<mode> <id>\t<path>` records) to `git update-index -z
/// --index-info`, which writes every index form git knows; `what` names the entries in
/// messages. `Locked` when another git process holds `index.lock`.
pub(crate) fn index_info(
    repo: &Repository,
    input: &str,
    deadline: &Deadline,
    what: &str,
) -> Result<StagingUpdate, GitError> {
    let mut update = local_command(repo);
    update.args(["update-index", "-z", "--index-info"]);
    let run = run_local(
        update,
        input.as_bytes(),
        deadline,
        &format!("updating {what} (git)"),
    )?;
    if run.success {
        return Ok(StagingUpdate::Written);
    }
    if run.stderr.contains("index.lock") {
        return Ok(StagingUpdate::Locked);
    }
    Err(GitError::Cli {
        context: format!("updating {what} (git update-index)"),
        message: run.stderr.trim().to_string(),
    })
}

/// The file's mode as git prints it (`100644`).
fn octal(file: &TreeFile) -> String {
    format!("{:o}", u32::from(file.mode))
}
