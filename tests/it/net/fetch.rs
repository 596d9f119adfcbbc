//! Fetching the upstream over file://, git:// and authenticated http://, with both
//! transports; bounded credentials; unreachable and silent servers within the budget.

use crate::common::netsync;
use crate::common::servers;

use std::time::Duration;

use netsync::{Team, oid, without_hanging};
use servers::{BlackHole, GitDaemon, HttpGit, free_port};
use teammem::git::{Fetched, fetch};
use teammem::git::{NetFailureKind, Transport};
use teammem::git::{UpstreamLookup, resolve_upstream};

const BOTH: [Transport; 2] = [Transport::Builtin, Transport::GitCli];

fn fetch_sees_the_teammates_push(team: &Team, transport: Transport) {
    let pushed = team.mate_pushes("notes.txt", &format!("{transport:?}\n"));
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    let fetched = fetch(
        &repo,
        &up,
        &team.options(transport, Duration::from_secs(20)),
    )
    .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
    assert_eq!(fetched.tip, Some(oid(&pushed)), "{transport:?}");
    assert_eq!(team.rev(&team.me, "origin/main"), pushed, "{transport:?}");
    // Fetching again with nothing new still reports the tip.
    let again = fetch(
        &repo,
        &up,
        &team.options(transport, Duration::from_secs(20)),
    )
    .unwrap();
    assert_eq!(again.tip, Some(oid(&pushed)), "{transport:?}");
    // Fetch never touches the branch or the work tree.
    assert_ne!(team.rev(&team.me, "HEAD"), pushed);
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn fetch_over_a_file_url_updates_only_the_remote_tracking_ref() {
    let team = Team::new();
    team.set_origin(&team.me, &format!("file://{}", team.bare.display()));
    for transport in BOTH {
        fetch_sees_the_teammates_push(&team, transport);
    }
}

#[test]
fn fetch_over_git_daemon() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    for transport in BOTH {
        fetch_sees_the_teammates_push(&team, transport);
    }
}

#[test]
fn fetch_over_http_with_a_token_from_the_environment() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "s3cret");
    team.set_origin(&team.me, &http.url("team.git"));
    for transport in BOTH {
        let pushed = team.mate_pushes("notes.txt", &format!("{transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let fetched = fetch(
            &repo,
            &up,
            &team.options_with_token(transport, "alice", "s3cret"),
        )
        .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(fetched.tip, Some(oid(&pushed)));
    }
}

#[test]
fn fetch_over_http_with_the_users_git_credential_helper() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "bob", "from-helper");
    team.set_origin(&team.me, &http.url("team.git"));
    let home = team.sb.home();
    std::fs::write(
        home.join(".git-credentials"),
        format!("http://bob:from-helper@127.0.0.1:{}\n", http.port()),
    )
    .unwrap();
    let config = home.join(".gitconfig");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[credential]\n\thelper = store\n");
    std::fs::write(&config, text).unwrap();
    for transport in BOTH {
        let pushed = team.mate_pushes("notes.txt", &format!("helper {transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let fetched = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(20)),
        )
        .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(fetched.tip, Some(oid(&pushed)));
    }
}

#[test]
fn a_credential_helper_planted_in_the_repository_is_never_asked() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "bob", "pw");
    team.set_origin(&team.me, &http.url("team.git"));
    let marker = team.sb.path().join("planted-ran");
    team.sb.git(
        &team.me,
        [
            "config",
            "credential.helper",
            &format!(
                "!touch {} && echo username=bob && echo password=pw",
                marker.display()
            ),
        ],
    );
    for transport in BOTH {
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let err = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(20)),
        )
        .unwrap_err();
        assert_eq!(err.kind, NetFailureKind::Failed, "{transport:?}");
        assert!(
            !marker.exists(),
            "{transport:?}: a helper from .git/config ran"
        );
    }
}

#[test]
fn a_wrong_password_fails_after_a_bounded_number_of_attempts() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "right");
    team.set_origin(&team.me, &http.url("team.git"));
    for transport in BOTH {
        let options = team.options_with_token(transport, "alice", "wrong");
        let me = team.me.clone();
        let err = without_hanging(Duration::from_secs(120), move || {
            let repo = git2::Repository::open(&me).unwrap();
            let up = match resolve_upstream(&repo).unwrap() {
                UpstreamLookup::Found(up) => up,
                other => panic!("{other:?}"),
            };
            fetch(&repo, &up, &options).unwrap_err()
        });
        assert_eq!(err.kind, NetFailureKind::Failed, "{transport:?}: {err}");
        assert!(!err.message.contains("wrong"), "the password leaked: {err}");
    }
}

#[test]
fn an_unreachable_remote_is_a_fetch_failure() {
    let team = Team::new();
    team.set_origin(
        &team.me,
        &format!("git://127.0.0.1:{}/team.git", free_port()),
    );
    for transport in BOTH {
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let err = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(10)),
        )
        .unwrap_err();
        assert_eq!(err.kind, NetFailureKind::Failed, "{transport:?}: {err}");
    }
}

#[test]
fn a_server_that_never_answers_is_reported_as_a_timeout() {
    let team = Team::new();
    let hole = BlackHole::start();
    for url in [
        format!("git://127.0.0.1:{}/team.git", hole.port()),
        format!("http://127.0.0.1:{}/team.git", hole.port()),
    ] {
        team.set_origin(&team.me, &url);
        for transport in BOTH {
            let options = team.options(transport, Duration::from_millis(1500));
            let me = team.me.clone();
            let err = without_hanging(Duration::from_secs(120), move || {
                let repo = git2::Repository::open(&me).unwrap();
                let up = match resolve_upstream(&repo).unwrap() {
                    UpstreamLookup::Found(up) => up,
                    other => panic!("{other:?}"),
                };
                fetch(&repo, &up, &options).unwrap_err()
            });
            assert_eq!(
                err.kind,
                NetFailureKind::Timeout,
                "{url} {transport:?}: {err}"
            );
        }
    }
}

#[test]
fn a_remote_without_the_branch_yet_fetches_nothing() {
    let team = Team::new();
    team.sb.git(
        &team.srv,
        ["init", "-q", "--bare", "-b", "main", "empty.git"],
    );
    team.sb.git(
        &team.me,
        [
            "remote",
            "add",
            "fresh",
            team.srv.join("empty.git").to_str().unwrap(),
        ],
    );
    team.sb
        .git(&team.me, ["config", "branch.main.remote", "fresh"]);
    for transport in BOTH {
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        assert_eq!(up.tracking_ref, "refs/remotes/fresh/main");
        let fetched = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(20)),
        )
        .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(fetched, Fetched { tip: None }, "{transport:?}");
    }
}

#[test]
fn upstream_lookup_reads_any_remote_name_and_says_when_there_is_none() {
    let team = Team::new();
    team.sb
        .git(&team.me, ["remote", "rename", "origin", "company"]);
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    assert_eq!(up.remote, "company");
    assert_eq!(up.merge_ref, "refs/heads/main");
    assert_eq!(up.tracking_ref, "refs/remotes/company/main");
    assert_eq!(up.local_ref, "refs/heads/main");

    team.sb.git(&team.me, ["switch", "-q", "-c", "topic"]);
    assert_eq!(
        resolve_upstream(&repo).unwrap(),
        UpstreamLookup::NoUpstream {
            local_ref: "refs/heads/topic".into()
        }
    );
    team.sb.git(&team.me, ["switch", "-q", "--detach"]);
    assert_eq!(resolve_upstream(&repo).unwrap(), UpstreamLookup::Detached);
}

#[test]
fn a_shallow_clone_fetches() {
    let team = Team::new();
    let shallow = team.shallow_clone();
    for transport in BOTH {
        let pushed = team.mate_pushes("notes.txt", &format!("{transport:?}\n"));
        let repo = team.open(&shallow);
        let up = team.upstream(&repo);
        let fetched = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(20)),
        )
        .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(fetched.tip, Some(oid(&pushed)));
        // Still shallow: the history below the clone's depth was not fetched.
        assert!(shallow.join(".git/shallow").is_file(), "{transport:?}");
    }
    let fsck = team.sb.git_output(&shallow, ["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn an_upstream_given_as_a_url_or_an_unmapped_refspec_fetches_into_a_private_ref() {
    let team = Team::new();
    let url = format!("file://{}", team.bare.display());
    team.sb
        .git(&team.me, ["config", "branch.main.remote", &url]);
    for transport in BOTH {
        let pushed = team.mate_pushes("notes.txt", &format!("url {transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        assert_eq!(up.tracking_ref, "refs/teammem/upstream/main");
        let fetched = fetch(
            &repo,
            &up,
            &team.options(transport, Duration::from_secs(20)),
        )
        .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(fetched.tip, Some(oid(&pushed)));
        assert_eq!(team.rev(&team.me, "refs/teammem/upstream/main"), pushed);
    }

    team.sb
        .git(&team.me, ["config", "branch.main.remote", "origin"]);
    team.sb.git(
        &team.me,
        [
            "config",
            "remote.origin.fetch",
            "+refs/heads/release:refs/remotes/origin/release",
        ],
    );
    let repo = team.open(&team.me);
    assert_eq!(
        team.upstream(&repo).tracking_ref,
        "refs/teammem/upstream/main"
    );
}
