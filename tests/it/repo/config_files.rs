//! The config files git's environment moves (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`,
//! `GIT_CONFIG_NOSYSTEM`): teammem reads the ones git reads — the identity its commits carry
//! included — in both modes. libgit2 alone reads `~/.gitconfig` whatever they say.

use std::path::Path;

use crate::common::branch_team::BranchTeam;
use crate::common::netsync::Team;
use crate::common::syncrun::{reason, sync_json, write_memory};
use crate::common::{Sandbox, write};

/// A global config file elsewhere than `~/.gitconfig` (which names "Test User").
fn moved_config(sb: &Sandbox) -> String {
    let path = sb.path().join("elsewhere/gitconfig");
    write(
        &path,
        "[user]\n\tname = Moved Person\n\temail = moved@example.com\n[init]\n\tdefaultBranch = main\n\
         [protocol \"file\"]\n\tallow = always\n",
    );
    path.to_str().unwrap().to_string()
}

/// Author and committer of `rev` in `dir`.
fn people(sb: &Sandbox, dir: &Path, rev: &str) -> String {
    sb.git(dir, ["log", "-1", "--format=%an <%ae> / %cn <%ce>", rev])
        .trim()
        .to_string()
}

#[test]
fn current_branch_mode_commits_as_the_identity_in_the_file_git_config_global_names() {
    let team = Team::new();
    let global = moved_config(&team.sb);
    let env = [("GIT_CONFIG_GLOBAL", global.as_str())];
    write_memory(
        &team.me,
        "project",
        "moved",
        "Written under a moved config.\n",
    );
    let report = sync_json(&team.sb, &team.me, &[], &env);
    assert_eq!(reason(&report), "", "{report:#}");
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(
        people(&team.sb, &team.me, "HEAD"),
        "Moved Person <moved@example.com> / Moved Person <moved@example.com>",
        "git itself would commit as the person GIT_CONFIG_GLOBAL names"
    );
    let warnings = report["warnings"].to_string();
    assert!(!warnings.contains("no user.name"), "{report:#}");
}

#[test]
fn branch_mode_records_as_the_identity_in_the_file_git_config_global_names() {
    let team = BranchTeam::new();
    team.sb
        .git(team.sb.path(), ["clone", "-q", &team.url, "moved"]);
    let me = team.sb.path().join("moved");
    let global = moved_config(&team.sb);
    let env = [("GIT_CONFIG_GLOBAL", global.as_str())];
    crate::common::branch_team::write_memory(&me, "project", "moved", "Recorded moved.\n");
    let report = team.sync_env(&me, &env);
    assert_eq!(report["pushed"], true, "{report:#}");
    assert_eq!(
        people(&team.sb, &team.remote, "team-memory"),
        "Moved Person <moved@example.com> / Moved Person <moved@example.com>"
    );
}

#[test]
fn git_config_global_naming_dev_null_hides_the_home_config_as_it_does_from_git() {
    let team = Team::new();
    let env = [("GIT_CONFIG_GLOBAL", "/dev/null")];
    // git has no identity here either: `git commit` would refuse.
    write_memory(&team.me, "project", "nobody", "Written with no identity.\n");
    let report = sync_json(&team.sb, &team.me, &[], &env);
    assert_eq!(report["committed"], true, "{report:#}");
    assert_eq!(
        people(&team.sb, &team.me, "HEAD"),
        "teammem <teammem@localhost> / teammem <teammem@localhost>",
        "~/.gitconfig's Test User was read though GIT_CONFIG_GLOBAL hides it"
    );
    assert!(
        report["warnings"]
            .to_string()
            .contains("no user.name/user.email configured"),
        "{report:#}"
    );
}
