//! The engine's pieces composed as session-start sync composes them — fetch, classify,
//! fast-forward or replay, push with a lease, and again when the lease is refused — with
//! several clones pushing to one git daemon at once: every memory arrives, none twice.

use crate::common;
use crate::common::netsync;
use crate::common::servers;

use std::path::Path;
use std::time::Duration;

use common::{memory_text, write};
use git2::Repository;
use netsync::{SYNC_MESSAGE, Team};
use servers::GitDaemon;
use teammem::git::NetworkOptions;
use teammem::git::fetch;
use teammem::git::{BranchMove, CheckoutBudget, fast_forward, move_branch};
use teammem::git::{Divergence, classify, replay_sync_commits};
use teammem::git::{PushOutcome, push};
use teammem::git::{UpstreamLookup, resolve_upstream};

/// What one network round ended with.
#[derive(Debug, PartialEq, Eq)]
enum Round {
    UpToDate,
    Pulled,
    Pushed { attempts: usize },
    Stopped(String),
}

/// The network half of a sync, in the order `ops/sync/mod.rs` is meant to run it.
fn network_round(dir: &Path, options: &NetworkOptions) -> Round {
    let repo = Repository::open(dir).unwrap();
    let UpstreamLookup::Found(up) = resolve_upstream(&repo).unwrap() else {
        return Round::Stopped("no-upstream".into());
    };
    for attempt in 1..=20 {
        let fetched = match fetch(&repo, &up, options) {
            Ok(fetched) => fetched,
            Err(err) => return Round::Stopped(err.message),
        };
        let local = repo.refname_to_id(&up.local_ref).ok();
        let to_push = match classify(&repo, local, fetched.tip).unwrap() {
            Divergence::UpToDate => return Round::UpToDate,
            Divergence::Behind => {
                return match fast_forward(
                    &repo,
                    &up.local_ref,
                    fetched.tip.unwrap(),
                    &CheckoutBudget::unbounded(),
                )
                .unwrap()
                {
                    BranchMove::Moved { .. } => Round::Pulled,
                    other => Round::Stopped(format!("{other:?}")),
                };
            }
            Divergence::SyncAhead { .. } => local,
            Divergence::Replayable { .. } => {
                let (local, upstream) = (local.unwrap(), fetched.tip.unwrap());
                let replayed =
                    replay_sync_commits(&repo, local, upstream, &teammem::ops::TeamMemoryIndexGate)
                        .unwrap();
                match move_branch(
                    &repo,
                    &up.local_ref,
                    Some(local),
                    replayed.commit,
                    &CheckoutBudget::unbounded(),
                )
                .unwrap()
                {
                    BranchMove::Moved { .. } => Some(replayed.commit),
                    other => return Round::Stopped(format!("{other:?}")),
                }
            }
            other => return Round::Stopped(format!("{other:?}")),
        };
        assert!(to_push.is_some());
        match push(&repo, &up, fetched.tip, options) {
            Ok(PushOutcome::Pushed { .. }) => return Round::Pushed { attempts: attempt },
            Ok(PushOutcome::LeaseRefused) => continue,
            Ok(PushOutcome::Rejected { message }) => return Round::Stopped(message),
            Err(err) => return Round::Stopped(err.message),
        }
    }
    Round::Stopped("gave up".into())
}

#[test]
fn clones_pushing_at_once_all_land_every_memory() {
    const CLONES: usize = 4;
    const MEMORIES: usize = 5;
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let url = daemon.url("team.git");
    let mut clones = Vec::new();
    for c in 0..CLONES {
        let name = format!("clone{c}");
        team.sb.git(team.sb.path(), ["clone", "-q", &url, &name]);
        clones.push(team.sb.path().join(name));
    }
    std::thread::scope(|scope| {
        for (c, dir) in clones.iter().enumerate() {
            let team = &team;
            scope.spawn(move || {
                for m in 0..MEMORIES {
                    write(
                        &dir.join(format!(".qwen/team-memory/project/clone{c}-note{m}.md")),
                        &memory_text(
                            &format!("Clone {c} note {m}"),
                            &format!("Note {m} written in clone {c}"),
                            "project",
                            "Body.\n",
                        ),
                    );
                    team.sb
                        .teammem(dir, ["index", "--scope", "team"])
                        .expect_code(0);
                    team.sb.git(dir, ["add", "-A", "--", ".qwen/team-memory"]);
                    team.sb.git(
                        dir,
                        ["commit", "-q", "-m", SYNC_MESSAGE[0], "-m", SYNC_MESSAGE[1]],
                    );
                    let options =
                        team.options(teammem::git::Transport::Builtin, Duration::from_secs(30));
                    let round = network_round(dir, &options);
                    assert!(
                        matches!(round, Round::Pushed { .. }),
                        "clone {c} note {m}: {round:?}"
                    );
                }
            });
        }
    });

    team.sb.git(team.sb.path(), ["clone", "-q", &url, "fresh"]);
    let fresh = team.sb.path().join("fresh");
    let files = team
        .sb
        .git(&fresh, ["ls-files", ".qwen/team-memory/project"]);
    for c in 0..CLONES {
        for m in 0..MEMORIES {
            let name = format!("clone{c}-note{m}.md");
            assert_eq!(
                files.matches(&name).count(),
                1,
                "{name} missing or twice:\n{files}"
            );
        }
    }
    assert!(
        !files.contains(".conflict-"),
        "no memory conflicted: {files}"
    );
    team.sb
        .teammem(&fresh, ["index", "--scope", "team", "--check"])
        .expect_code(0);
    // Every commit on the remote since the seed is a sync commit; history is linear.
    let merges = team.sb.git(&fresh, ["rev-list", "--merges", "HEAD"]);
    assert_eq!(merges, "");

    // A clone that only pulls gets everything by fast-forward.
    let options = team.options(teammem::git::Transport::Builtin, Duration::from_secs(30));
    team.set_origin(&team.me, &url);
    assert_eq!(network_round(&team.me, &options), Round::Pulled);
    assert_eq!(network_round(&team.me, &options), Round::UpToDate);
    assert_eq!(team.rev(&team.me, "HEAD"), team.rev(&fresh, "HEAD"));
}
