//! The memory branch refused the push: the user's proposal branch instead.

use git2::{Oid, Repository};

use crate::git::fetch;
use crate::git::memory_branch::{self, MemoryBranch};
use crate::git::push::{self, PushOutcome};
use crate::git::remote::NetworkOptions;
use crate::git::upstream::Upstream;
use crate::ops::OpError;
use crate::ops::sync::{self, SkipReason, SyncOutcome};

/// The memory branch refused the push: the same commits go to the user's proposal branch
/// (`team-memory-proposals/<user>`), with a lease on what the remote holds there. A proposal
/// branch holding commits this clone lacks (someone else pushed there), or one the remote
/// refuses to create or move (a branch `<user>/x` someone made blocks `<user>`), is not adopted
/// and does not block: the commits go to the next free name (`<user>-2`, …, after two refusals
/// the name made from the tip), and the report says so.
pub(super) fn propose(
    repo: &Repository,
    memory: &MemoryBranch,
    up: &Upstream,
    tip: Oid,
    refusal: &str,
    net: &NetworkOptions,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let user = memory_branch::proposal_user(repo);
    let tip_hex = tip.to_string();
    let remote = &up.remote;
    let mut passed = memory_branch::PassedOver::default();
    let names: Vec<(String, String)> = memory_branch::proposal_names(&user, &tip_hex).collect();
    for (i, (branch, name)) in names.iter().enumerate() {
        if passed.skips(i, memory_branch::PROPOSAL_TRIES) {
            continue;
        }
        let Some(target) = memory.proposal(branch) else {
            return Ok(());
        };
        let seen = match fetch::fetch(repo, &target, net) {
            Ok(fetched) => fetched.tip,
            Err(failure) => {
                sync::network_skip(
                    outcome,
                    &failure,
                    SkipReason::PushRejected,
                    &format!(
                        " (after the remote refused the push to {}: {refusal})",
                        memory.name
                    ),
                );
                return Ok(());
            }
        };
        if seen == Some(tip) {
            outcome.proposed(&memory.name, remote, name, refusal, &passed.clauses());
            return Ok(());
        }
        if seen.is_some_and(|s| !crate::git::history::contains(repo, tip, s).unwrap_or(false)) {
            // Commits this clone lacks: not the user's to build on.
            passed.foreign(name);
            continue;
        }
        match push::push(repo, &target, seen, net) {
            Ok(PushOutcome::Pushed { .. }) => {
                outcome.proposed(&memory.name, remote, name, refusal, &passed.clauses())
            }
            Ok(PushOutcome::LeaseRefused) => outcome.skip(
                SkipReason::PushRejected,
                format!(
                    "the remote refused the push to {} ({refusal}), and {name} moved while \
                     sync ran, so nothing was proposed; the commits stay on the local memory \
                     branch and the next sync proposes them",
                    memory.name
                ),
            ),
            Ok(PushOutcome::Rejected { message }) => {
                passed.refused(name, &message);
                continue;
            }
            Err(failure) => {
                sync::network_skip(outcome, &failure, SkipReason::PushFailed, "");
            }
        }
        return Ok(());
    }
    outcome.nothing_proposed(&memory.name, refusal, &passed.clauses());
    Ok(())
}
