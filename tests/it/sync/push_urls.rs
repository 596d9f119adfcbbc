//! A remote with several push URLs (`git remote set-url --add --push`): sync pushes to every
//! one as `git push` does, reports one line per URL, and a mirror that refuses is reported —
//! never retried as a teammate's push (issue 41: a lagging mirror gave `remote-busy` after
//! 18 tries).

use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::path::Path;

use netsync::Team;
use servers::GitDaemon;
use syncrun::{files_at, mate_pushes_memory, reason, sync_json, write_memory};

/// A mirror of the team's remote beside it in `srv/`, and `me`'s origin pushing to both
/// (`fetch_url` first, then the mirror), fetching from `fetch_url`.
fn with_mirror(team: &Team, fetch_url: &str, mirror_url: &str) -> std::path::PathBuf {
    let srv = &team.srv;
    team.sb.git(
        srv,
        [
            "clone",
            "-q",
            "--bare",
            team.bare.to_str().unwrap(),
            "mirror.git",
        ],
    );
    team.set_origin(&team.me, fetch_url);
    for url in [fetch_url, mirror_url] {
        team.sb.git(
            &team.me,
            ["remote", "set-url", "--add", "--push", "origin", url],
        );
    }
    srv.join("mirror.git")
}

fn tip(team: &Team, bare: &Path) -> String {
    team.rev(bare, "main")
}

fn both_push_urls_take_the_memory(transport: &str) {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let mirror = with_mirror(&team, &daemon.url("team.git"), &daemon.url("mirror.git"));
    write_memory(&team.me, "project", "to-both", "Both remotes get it.\n");

    let report = sync_json(&team.sb, &team.me, &["--transport", transport], &[]);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    let urls = report["push_urls"].as_array().expect("push_urls");
    assert_eq!(urls.len(), 2, "{report:#}");
    assert!(urls.iter().all(|u| u["pushed"] == true), "{report:#}");
    assert_eq!(urls[0]["url"], daemon.url("team.git"));
    assert_eq!(urls[1]["url"], daemon.url("mirror.git"));
    assert_eq!(tip(&team, &team.bare), tip(&team, &mirror));
    assert!(files_at(&team.sb, &mirror, "main").contains("project/to-both.md"));
    assert_eq!(team.status(&team.me), "");
}

#[test]
fn every_push_url_takes_the_push_over_git_daemon() {
    both_push_urls_take_the_memory("builtin");
}

#[test]
fn every_push_url_takes_the_push_through_the_git_cli() {
    both_push_urls_take_the_memory("git-cli");
}

#[test]
fn a_lagging_mirror_is_reported_once_not_retried_as_contention() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let mirror = with_mirror(&team, &daemon.url("team.git"), &daemon.url("mirror.git"));
    // A teammate pushed to the main remote only: the mirror lags behind.
    mate_pushes_memory(&team.sb, &team.mate, "mate-only-on-main");
    let mirror_before = tip(&team, &mirror);
    write_memory(&team.me, "project", "mine", "Mine.\n");

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "push-partial", "{report:#}");
    assert_eq!(report["pushed"], false, "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    let urls = report["push_urls"].as_array().expect("push_urls");
    assert_eq!(urls[0]["pushed"], true, "{report:#}");
    assert_eq!(urls[1]["pushed"], false, "{report:#}");
    assert!(
        urls[1]["error"].as_str().unwrap().contains("mirror"),
        "{report:#}"
    );
    // The main remote has the memory; the mirror was left as it was; the warning names it.
    assert!(files_at(&team.sb, &team.bare, "main").contains("project/mine.md"));
    assert_eq!(tip(&team, &mirror), mirror_before);
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(warning.contains("mirror.git"), "{warning}");
    assert!(!warning.contains("busy"), "{warning}");
}

#[test]
fn credentials_in_a_push_url_are_redacted_in_the_report() {
    let team = Team::new();
    let daemon = GitDaemon::start(&team.sb, &team.srv);
    let url = daemon.url("team.git");
    team.set_origin(&team.me, &url);
    for push in [
        url.clone(),
        "http://bob:s3cr3t@127.0.0.1:9/x.git".to_string(),
    ] {
        team.sb.git(
            &team.me,
            ["remote", "set-url", "--add", "--push", "origin", &push],
        );
    }
    write_memory(&team.me, "project", "secretive", "Nothing secret.\n");
    let run = syncrun::teammem_env(
        &team.sb,
        &team.me,
        &["sync", "--json", "--timeout", "5"],
        &[],
    );
    assert!(!run.stdout.contains("s3cr3t"), "{}", run.stdout);
    assert!(
        run.stdout.contains("http://***@127.0.0.1:9/x.git"),
        "{}",
        run.stdout
    );
}
