//! The current branch's upstream, read as `git rev-parse @{u}` reads it: `branch.<b>.remote`
//! (any remote name) and `branch.<b>.merge`, mapped to a remote-tracking ref through the
//! remote's fetch refspecs.

use git2::{Direction, Repository};

use super::GitError;

/// Where the current branch is pulled from and pushed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The local branch, `refs/heads/<b>`.
    pub local_ref: String,
    /// The remote's name (`branch.<b>.remote`), or a URL when the config holds one.
    pub remote: String,
    /// The branch on the remote (`branch.<b>.merge`), e.g. `refs/heads/main`.
    pub merge_ref: String,
    /// Where fetch stores the remote's tip: the remote-tracking ref the fetch refspecs map
    /// `merge_ref` to (`refs/remotes/origin/main`), or `refs/teammem/upstream/<b>` when
    /// none does (a custom refspec), so the fetched commits always have a ref.
    pub tracking_ref: String,
}

/// What `resolve` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamLookup {
    /// The branch has an upstream.
    Found(Upstream),
    /// The branch has none, or tracks a local branch (`branch.<b>.remote = .`):
    /// the report says `no-upstream`.
    NoUpstream {
        /// The local branch, `refs/heads/<b>`.
        local_ref: String,
    },
    /// HEAD is detached: there is no current branch.
    Detached,
}

/// Resolves the current branch's upstream. An unborn branch (no commit yet) may have one.
pub fn resolve(repo: &Repository) -> Result<UpstreamLookup, GitError> {
    let head = repo
        .find_reference("HEAD")
        .map_err(|e| GitError::git("reading HEAD", e))?;
    let Ok(Some(local_ref)) = head.symbolic_target().map(|t| t.map(str::to_string)) else {
        return Ok(UpstreamLookup::Detached);
    };
    let Some(branch) = local_ref.strip_prefix("refs/heads/") else {
        return Ok(UpstreamLookup::Detached);
    };
    let config = repo
        .config()
        .map_err(|e| GitError::git("reading the repository config", e))?;
    let remote = config.get_string(&format!("branch.{branch}.remote")).ok();
    let merge = config.get_string(&format!("branch.{branch}.merge")).ok();
    let (Some(remote), Some(merge_ref)) = (remote, merge) else {
        return Ok(UpstreamLookup::NoUpstream { local_ref });
    };
    if remote == "." || remote.is_empty() {
        return Ok(UpstreamLookup::NoUpstream { local_ref });
    }
    let merge_ref = if merge_ref.starts_with("refs/") {
        merge_ref
    } else {
        format!("refs/heads/{merge_ref}")
    };
    let tracking_ref = match repo.find_remote(&remote) {
        Ok(found) => tracking_ref_for(&found, &merge_ref),
        Err(_) => None,
    }
    .unwrap_or_else(|| format!("refs/teammem/upstream/{branch}"));
    Ok(UpstreamLookup::Found(Upstream {
        local_ref,
        remote,
        merge_ref,
        tracking_ref,
    }))
}

/// The first fetch refspec that maps `merge_ref` gives the remote-tracking ref.
fn tracking_ref_for(remote: &git2::Remote<'_>, merge_ref: &str) -> Option<String> {
    remote
        .refspecs()
        .filter(|spec| spec.direction() == Direction::Fetch)
        .find(|spec| spec.src_matches(merge_ref))
        .and_then(|spec| spec.transform(merge_ref).ok())
        .and_then(|buf| buf.as_str().ok().map(str::to_string))
}

/// Opens the upstream's remote: the configured remote, or an anonymous one when
/// `branch.<b>.remote` holds a URL.
pub(crate) fn open_remote<'r>(
    repo: &'r Repository,
    upstream: &Upstream,
) -> Result<git2::Remote<'r>, git2::Error> {
    match repo.find_remote(&upstream.remote) {
        Ok(remote) => Ok(remote),
        Err(err) if upstream.remote.contains(['/', ':']) => {
            repo.remote_anonymous(&upstream.remote).or(Err(err))
        }
        Err(err) => Err(err),
    }
}
