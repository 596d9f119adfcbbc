//! `teammem sync` over SSH against a real OpenSSH server on 127.0.0.1: libssh2 (the built-in
//! transport) with the key in `~/.ssh` and the host checked against `~/.ssh/known_hosts`, and
//! the git CLI transport with the user's own ssh command. The teammate is the git CLI over the
//! same server.

use crate::common::netsync;
use crate::common::servers;
use crate::common::syncrun;

use std::time::{Duration, Instant};

use netsync::Team;
use servers::Sshd;
use syncrun::{files_at, mate_pushes_memory, reason, subjects, sync_json, write_memory};

const TEAM: &str = ".qwen/team-memory";

/// My clone and the teammate's both talk to the remote over SSH.
fn over_ssh(team: &Team, sshd: &Sshd) {
    let url = sshd.url(&team.bare);
    team.set_origin(&team.me, &url);
    team.set_origin(&team.mate, &url);
    team.sb.git(
        &team.mate,
        ["config", "core.sshCommand", &sshd.ssh_command()],
    );
}

fn both_ways(transport: &str, env: &[(&str, &str)]) {
    let team = Team::new();
    let sshd = Sshd::start(&team.sb);
    over_ssh(&team, &sshd);
    mate_pushes_memory(&team.sb, &team.mate, "deploys-need-two-approvals");
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");

    let report = sync_json(&team.sb, &team.me, &["--transport", transport], env);
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(report["pulled"], true, "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(reason(&report), "");
    assert_eq!(team.status(&team.me), "");
    assert_eq!(team.rev(&team.me, "HEAD"), team.rev(&team.bare, "main"));
    let subjects = subjects(&team.sb, &team.bare, "main");
    assert!(
        subjects.starts_with("chore(memory): sync team memory\nmate: deploys-need-two-approvals\n"),
        "{subjects}"
    );

    // The teammate pulls over SSH and has my memory.
    team.sb.git(&team.mate, ["pull", "-q", "--ff-only"]);
    assert!(
        team.mate
            .join(TEAM)
            .join("feedback/prefer-small-prs.md")
            .exists()
    );
    let files = files_at(&team.sb, &team.bare, "main");
    assert!(
        files.contains(&format!("{TEAM}/project/deploys-need-two-approvals.md")),
        "{files:?}"
    );
}

#[test]
fn over_ssh_the_key_in_home_pulls_and_pushes() {
    both_ways("builtin", &[]);
}

#[test]
fn over_ssh_the_git_cli_transport_uses_my_ssh_command() {
    // The git CLI's ssh takes its home from the password database, so the test's key and
    // known hosts come through GIT_SSH_COMMAND, as a user's own setup would.
    let team = Team::new();
    let sshd = Sshd::start(&team.sb);
    over_ssh(&team, &sshd);
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");
    let command = sshd.ssh_command();
    let report = sync_json(
        &team.sb,
        &team.me,
        &["--transport", "git-cli"],
        &[("GIT_SSH_COMMAND", command.as_str())],
    );
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(team.rev(&team.me, "HEAD"), team.rev(&team.bare, "main"));
}

#[test]
fn over_ssh_a_host_key_that_does_not_match_known_hosts_is_refused() {
    let team = Team::new();
    let sshd = Sshd::start(&team.sb);
    over_ssh(&team, &sshd);
    // Another server's key for this host and port: a man in the middle, as ssh sees it.
    let other = team.sb.path().join("other_host_key");
    std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other)
        .status()
        .unwrap();
    let other_public = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let other_public: Vec<&str> = other_public.split_whitespace().take(2).collect();
    std::fs::write(
        &sshd.known_hosts,
        format!(
            "[127.0.0.1]:{} {} {}\n",
            sshd.port, other_public[0], other_public[1]
        ),
    )
    .unwrap();
    let before = team.rev(&team.bare, "main");
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");

    let started = Instant::now();
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert_eq!(
        report["committed"], true,
        "the memory is committed here all the same"
    );
    assert_eq!(report["pushed"], false);
    let said = report["warnings"].to_string().to_lowercase();
    assert!(said.contains("known_hosts"), "{report:#}");
    assert_eq!(
        team.rev(&team.bare, "main"),
        before,
        "nothing reached the remote"
    );
}

#[test]
fn over_ssh_a_key_the_server_does_not_know_fails_fast_and_says_so() {
    let team = Team::new();
    let sshd = Sshd::start(&team.sb);
    over_ssh(&team, &sshd);
    std::fs::write(team.sb.path().join("sshd/authorized_keys"), "").unwrap();
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");

    let started = Instant::now();
    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    let said = report["warnings"].to_string();
    assert!(said.contains("authentication"), "{report:#}");
    assert_eq!(report["committed"], true);
}

#[test]
fn over_ssh_a_host_missing_from_known_hosts_is_not_trusted_on_first_use() {
    let team = Team::new();
    let sshd = Sshd::start(&team.sb);
    over_ssh(&team, &sshd);
    std::fs::remove_file(&sshd.known_hosts).unwrap();
    let before = team.rev(&team.bare, "main");
    write_memory(&team.me, "feedback", "prefer-small-prs", "Small PRs.\n");

    let report = sync_json(&team.sb, &team.me, &[], &[]);
    assert_eq!(reason(&report), "fetch-failed", "{report:#}");
    assert!(
        report["warnings"].to_string().contains("known_hosts"),
        "{report:#}"
    );
    assert!(
        !sshd.known_hosts.exists(),
        "nothing was added to known_hosts"
    );
    assert_eq!(team.rev(&team.bare, "main"), before);
}
