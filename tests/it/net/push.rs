//! Pushing the one branch: accepted over file, git:// and authenticated http://; refused by
//! a server hook with its message; refused by the lease when the remote moved; nothing
//! planted in the repository runs.

use crate::common;
use crate::common::netsync;
use crate::common::servers;

use std::fs;
use std::path::Path;
use std::time::Duration;

use common::write;
use netsync::{Team, oid};
use servers::{GitDaemon, HttpGit};
use teammem::git::fetch;
use teammem::git::{NetFailureKind, NetworkOptions, Transport};
use teammem::git::{PushOutcome, push};

const BOTH: [Transport; 2] = [Transport::Builtin, Transport::GitCli];

/// A new sync commit in `me`, then fetch; returns (my tip, the fetched remote tip).
fn commit_and_fetch(team: &Team, options: &NetworkOptions, text: &str) -> (String, git2::Oid) {
    write(
        &team.me.join(".qwen/team-memory/project/release-train.md"),
        &common::memory_text(
            "Release train",
            "Releases leave every Tuesday",
            "project",
            text,
        ),
    );
    let local = team.sync_commit(&team.me);
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    let fetched = fetch(&repo, &up, options).unwrap();
    (local, fetched.tip.unwrap())
}

fn push_is_accepted(team: &Team, options: impl Fn(Transport) -> NetworkOptions) {
    for transport in BOTH {
        let options = options(transport);
        let (local, remote_tip) = commit_and_fetch(team, &options, &format!("{transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let outcome = push(&repo, &up, Some(remote_tip), &options)
            .unwrap_or_else(|e| panic!("{transport:?}: {e}"));
        assert_eq!(outcome, PushOutcome::Pushed { tip: oid(&local) });
        assert_eq!(team.rev(&team.bare, "main"), local, "{transport:?}");
        assert_eq!(team.rev(&team.me, "origin/main"), local, "{transport:?}");
        // Nothing else was pushed: no tags, no other branches.
        assert_eq!(
            team.sb
                .git(&team.bare, ["for-each-ref", "--format=%(refname)"]),
            "refs/heads/main\n"
        );
    }
}

#[test]
fn push_over_a_path_is_accepted() {
    let team = Team::new();
    team.sb.git(&team.me, ["branch", "-q", "unrelated"]);
    team.sb.git(&team.me, ["tag", "v1"]);
    push_is_accepted(&team, |t| team.options(t, Duration::from_secs(20)));
}

#[test]
fn push_over_git_daemon_is_accepted() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    push_is_accepted(&team, |t| team.options(t, Duration::from_secs(20)));
}

#[test]
fn push_over_http_with_basic_auth_is_accepted() {
    let team = Team::new();
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "s3cret");
    team.set_origin(&team.me, &http.url("team.git"));
    push_is_accepted(&team, |t| team.options_with_token(t, "alice", "s3cret"));
}

fn install_hook(bare: &Path, name: &str, script: &str) {
    let hook = bare.join("hooks").join(name);
    fs::write(&hook, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_pre_receive_hook_rejection_is_reported_with_the_servers_message() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    install_hook(
        &team.bare,
        "pre-receive",
        "#!/bin/sh\necho 'memory pushes are frozen until Monday' >&2\nexit 1\n",
    );
    let before = team.rev(&team.bare, "main");
    for transport in BOTH {
        let options = team.options(transport, Duration::from_secs(20));
        let (local, remote_tip) = commit_and_fetch(&team, &options, &format!("{transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let outcome = push(&repo, &up, Some(remote_tip), &options).unwrap();
        let PushOutcome::Rejected { message } = outcome else {
            panic!("{transport:?}: {outcome:?}");
        };
        assert!(message.contains("pre-receive hook declined"), "{message}");
        assert!(message.contains("frozen until Monday"), "{message}");
        assert_eq!(team.rev(&team.bare, "main"), before);
        // The sync commit stays, for the next sync to push.
        assert_eq!(team.rev(&team.me, "HEAD"), local);
    }
}

#[test]
fn the_lease_refuses_when_the_remote_moved_after_the_fetch() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    team.set_origin(&team.me, &daemon.url("team.git"));
    for transport in BOTH {
        let options = team.options(transport, Duration::from_secs(20));
        let (_, fetched) = commit_and_fetch(&team, &options, &format!("{transport:?}\n"));
        let theirs = team.mate_pushes("a.txt", &format!("{transport:?}\n"));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let outcome = push(&repo, &up, Some(fetched), &options).unwrap();
        assert_eq!(outcome, PushOutcome::LeaseRefused, "{transport:?}");
        assert_eq!(team.rev(&team.bare, "main"), theirs, "{transport:?}");
        // Catch up for the next round: take the teammate's commit under mine.
        team.sb
            .git(&team.me, ["pull", "-q", "--rebase", "origin", "main"]);
    }
}

#[test]
fn the_lease_refuses_when_the_remote_is_ahead_of_a_stale_expectation() {
    // The remote moved forward (a teammate pushed) and my branch already contains it, but the
    // caller's expectation is older: still refused, the push is only ever from what was seen.
    let team = Team::new();
    let old = oid(&team.rev(&team.me, "HEAD"));
    team.mate_pushes("a.txt", "a\n");
    team.sb.git(&team.me, ["pull", "-q", "--ff-only"]);
    let options = team.options(Transport::Builtin, Duration::from_secs(20));
    let (local, _) = commit_and_fetch(&team, &options, "x\n");
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    for transport in BOTH {
        let options = team.options(transport, Duration::from_secs(20));
        assert_eq!(
            push(&repo, &up, Some(old), &options).unwrap(),
            PushOutcome::LeaseRefused,
            "{transport:?}"
        );
    }
    assert_ne!(team.rev(&team.bare, "main"), local);
}

#[test]
fn a_branch_the_remote_does_not_have_yet_is_created() {
    let team = Team::new();
    team.sb.git(
        &team.srv,
        ["init", "-q", "--bare", "-b", "main", "empty.git"],
    );
    let empty = team.srv.join("empty.git");
    for transport in BOTH {
        let remote = format!("fresh-{}", transport.as_str());
        team.sb.git(
            &team.me,
            ["remote", "add", &remote, empty.to_str().unwrap()],
        );
        team.sb
            .git(&team.me, ["config", "branch.main.remote", &remote]);
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let options = team.options(transport, Duration::from_secs(20));
        let expected = fetch(&repo, &up, &options).unwrap().tip;
        let local = team.rev(&team.me, "HEAD");
        let outcome = push(&repo, &up, expected, &options).unwrap();
        if expected.is_none() {
            assert_eq!(outcome, PushOutcome::Pushed { tip: oid(&local) });
        }
        assert_eq!(team.rev(&empty, "main"), local);
    }
}

#[test]
fn nothing_planted_in_the_repository_runs_on_push() {
    let team = Team::new();
    let marker = team.sb.path().join("planted-ran");
    let script = format!("#!/bin/sh\ntouch {}\n", marker.display());
    let hooks = team.me.join(".git/hooks");
    for name in ["pre-push", "reference-transaction", "post-checkout"] {
        install_hook(&team.me.join(".git"), name, &script);
    }
    let fsmonitor = team.sb.path().join("fsmonitor.sh");
    fs::write(&fsmonitor, &script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&fsmonitor, fs::Permissions::from_mode(0o755)).unwrap();
    // The sync commit is made before the planted settings, so only push and fetch can trip them.
    let options = team.options(Transport::GitCli, Duration::from_secs(20));
    let (_, remote_tip) = commit_and_fetch(&team, &options, "planted\n");
    fs::remove_file(&marker).ok();
    team.sb.git(
        &team.me,
        ["config", "core.fsmonitor", fsmonitor.to_str().unwrap()],
    );
    team.sb.git(
        &team.me,
        ["config", "core.sshCommand", fsmonitor.to_str().unwrap()],
    );
    team.sb.git(&team.me, ["config", "push.gpgSign", "true"]);
    team.sb.git(
        &team.me,
        ["config", "gpg.program", fsmonitor.to_str().unwrap()],
    );
    assert!(hooks.join("pre-push").is_file());
    for transport in BOTH {
        let options = team.options(transport, Duration::from_secs(20));
        let repo = team.open(&team.me);
        let up = team.upstream(&repo);
        let expected = fetch(&repo, &up, &options).unwrap().tip;
        let outcome = push(&repo, &up, expected, &options).unwrap();
        assert!(
            matches!(outcome, PushOutcome::Pushed { .. }),
            "{transport:?}: {outcome:?}"
        );
        assert!(!marker.exists(), "{transport:?}: a planted program ran");
    }
    let _ = remote_tip;
}

#[test]
fn the_git_cli_transport_refuses_a_planted_url_credential_helper() {
    let team = Team::new();
    team.sb.git(
        &team.me,
        [
            "config",
            "credential.https://example.com.helper",
            "!echo planted",
        ],
    );
    let repo = team.open(&team.me);
    let up = team.upstream(&repo);
    let err = fetch(
        &repo,
        &up,
        &team.options(Transport::GitCli, Duration::from_secs(20)),
    )
    .unwrap_err();
    assert_eq!(err.kind, NetFailureKind::Failed);
    assert!(
        err.message
            .contains("credential.https://example.com.helper"),
        "{err}"
    );
}

#[test]
fn a_push_to_a_silent_server_times_out_and_a_wrong_password_fails_fast() {
    let team = Team::new();
    let options = team.options(Transport::Builtin, Duration::from_secs(20));
    let (local, remote_tip) = commit_and_fetch(&team, &options, "silent\n");
    let hole = servers::BlackHole::start();
    let http = HttpGit::start(&team.sb, &team.srv, "alice", "right");
    let cases = [
        (
            format!("git://127.0.0.1:{}/team.git", hole.port()),
            None,
            NetFailureKind::Timeout,
        ),
        (http.url("team.git"), Some("wrong"), NetFailureKind::Failed),
    ];
    for (url, password, expected) in cases {
        team.set_origin(&team.me, &url);
        for transport in BOTH {
            let options = match password {
                Some(password) => team.options_with_token(transport, "alice", password),
                None => team.options(transport, Duration::from_millis(1500)),
            };
            let me = team.me.clone();
            let err = netsync::without_hanging(Duration::from_secs(120), move || {
                let repo = git2::Repository::open(&me).unwrap();
                let up = match teammem::git::resolve_upstream(&repo).unwrap() {
                    teammem::git::UpstreamLookup::Found(up) => up,
                    other => panic!("{other:?}"),
                };
                push(&repo, &up, Some(remote_tip), &options).unwrap_err()
            });
            assert_eq!(err.kind, expected, "{url} {transport:?}: {err}");
        }
    }
    assert_ne!(team.rev(&team.bare, "main"), local);
    assert_eq!(team.rev(&team.me, "HEAD"), local);
}
